#!/bin/sh
# Install the Debian packages numaguard needs to build and test, if missing.
# Used by `make check`, `make demo` and inside the chroots of
# `make check-releases`; safe to run again. Works on Debian 12 (bookworm),
# 13 (trixie) and sid: every name below exists in all three. The sanitizer
# runtime is llvm-defaults' libclang-rt-dev, which pulls the version that
# matches the release's default clang (14, 19, 21); libclang-rt-14-dev
# exists only in bookworm. The pictures' tests (tests/draw) read SVG with
# xmllint (libxml2-utils) and render it with rsvg-convert (librsvg2-bin)
# and headless Chromium (chromium: ~120 MB to download, ~15 s to install
# on a Debian 12 machine with a near mirror).
set -e
pkgs="build-essential pkg-config libhwloc-dev hwloc-nox libnuma-dev numactl
libhwloc-plugins libslurm-dev slurmctld slurmd slurm-client munge python3
debhelper dpkg-dev groff-base lintian devscripts rpm
qemu-system-x86 busybox-static zstd xz-utils iproute2
clang libclang-rt-dev valgrind
openmpi-bin mpich
libxml2-utils librsvg2-bin chromium"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "numaguard: missing packages:$missing (run as root, or install them)" >&2
    exit 1
fi
echo "numaguard: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends $missing >/dev/null
