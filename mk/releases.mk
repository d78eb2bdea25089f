# make check-releases: the plugin built and tested against Debian 13's
# Slurm 24.11 / hwloc 2.12 and sid's Slurm 26.05 / hwloc 2.15, in cached
# debootstrap chroots (tests/releases/check-releases.sh; needs root and
# network for the first run). NG_RELEASES="trixie" picks releases.
.PHONY: check-releases
check-releases:
	bash tests/releases/check-releases.sh

# make check-fresh: the README's two commands in a fresh debootstrap root
# of Debian 12 and 13 (overlay over a cached minbase root, this host's name
# on 127.0.1.1, the clone in /root): make demo, then make check with the
# suites a fresh machine can break (tests/releases/fresh-root.sh).
.PHONY: check-fresh
check-fresh:
	bash tests/releases/fresh-root.sh
