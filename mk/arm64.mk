# make check-arm64: numaguard built and tested for aarch64 (Grace) in a
# cached arm64 Debian root under qemu-user-static (tests/arm64/check-arm64.sh:
# the -Werror build, the unit suites and t-cli, the amd64-vs-arm64 compat
# comparison over the aarch64 topologies, the governor's team sizes and
# libomp's aarch64 entry stub). Needs root, and the network the first time
# (the root is then kept under /var/cache/numaguard-chroots). The cheap
# native stand-in, in make check: tests/compat/t-unsigned-char.sh.
#
# make check-arm64-short: the same without the unit suites and t-cli under
# emulation (what CI runs: the root, the build, compat, the governor).
.PHONY: check-arm64 check-arm64-short
check-arm64:
	bash tests/arm64/check-arm64.sh

check-arm64-short:
	NG_ARM64_PARTS="compat governor" bash tests/arm64/check-arm64.sh
