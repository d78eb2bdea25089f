# make check-releases: the plugin built and tested against Debian 13's
# Slurm 24.11 / hwloc 2.12 and sid's Slurm 26.05 / hwloc 2.15, in cached
# debootstrap chroots (tests/releases/check-releases.sh; needs root and
# network for the first run). NG_RELEASES="trixie" picks releases.
.PHONY: check-releases
check-releases:
	bash tests/releases/check-releases.sh
