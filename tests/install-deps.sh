#!/bin/sh
# Install the Debian packages numaguard needs, if missing; safe to run again.
#
#   sh tests/install-deps.sh demo    what `make demo` needs: a C compiler,
#                                    hwloc's and Slurm's headers, Slurm's
#                                    daemons and client, munge, python3
#   sh tests/install-deps.sh bench   what `make bench` needs: the check set
#                                    and Debian's PyTorch (python3-torch,
#                                    the DDP run of bench/ddp.sh: 158
#                                    packages, 139 MB to download, 601 MB
#                                    installed, ~50 s on Debian 12),
#                                    scikit-learn and ImageMagick (the real
#                                    programs of bench/real.sh)
#   sh tests/install-deps.sh check   what `make check` needs (the default):
#                                    the demo's set and the test toolchain
#                                    (QEMU, clang, valgrind, packaging tools,
#                                    Open MPI, MPICH, ...)
#
# Used by `make demo`, `make check` and inside the chroots of
# `make check-releases` / `make check-fresh`. Works on Debian 12 (bookworm),
# 13 (trixie) and sid: every name below exists in all three. The sanitizer
# runtime is llvm-defaults' libclang-rt-dev, which pulls the version that
# matches the release's default clang (14, 19, 21); libclang-rt-14-dev
# exists only in bookworm. apt's own output is shown (its progress, one
# line per package); -q where it is not a terminal (CI logs).
# --omp-guard=adaptive's tests (tests/e2e/t-omp-adaptive.sh) build OpenMP
# probes with clang against LLVM's runtime (libomp-dev) and run Debian's
# numpy on OpenBLAS's pthreads and OpenMP builds (python3-numpy,
# libopenblas0-pthread, libopenblas0-openmp: ~40 MB, ~15 s to install),
# and a C probe linked against BLIS's pthreads and OpenMP builds
# (libblis4-pthread, libblis4-openmp: ~9 MB to download, ~50 MB installed;
# the probe links libblis.so.4 itself, no -dev package).
# The pictures' tests (tests/draw) read SVG with xmllint (libxml2-utils)
# and render it with rsvg-convert (librsvg2-bin) and headless Chromium
# (chromium: ~120 MB to download, ~15 s to install on a Debian 12 machine
# with a near mirror): in the check set only.
# The container suite (tests/slurm/t-slurm-containers.sh) runs bubblewrap,
# Charliecloud's ch-run (charliecloud-runtime) and rootless Podman (podman,
# runc, uidmap's newuidmap) on an image debootstrap makes (cached): in the
# check set only (podman brings conmon, slirp4netns and the CNI/netavark
# plugins with it).
# tests/layers/t-complexity.sh measures each function's complexity with
# pmccabe (~100 kB).
# tests/e2e/t-check-wide.sh forges a node's answer the way a job's owner
# can, with gdb (~10 MB).
set -e
demo="gcc libc6-dev make libhwloc-dev libslurm-dev slurmctld slurmd slurm-client munge python3"
check="$demo build-essential pkg-config hwloc-nox libnuma-dev numactl libhwloc-plugins pmccabe
autoconf automake libtool
debhelper dpkg-dev groff-base lintian devscripts rpm
qemu-system-x86 busybox-static zstd xz-utils iproute2
clang libclang-rt-dev valgrind libomp-dev
python3-numpy libopenblas0-pthread libopenblas0-openmp libblis4-pthread libblis4-openmp
openmpi-bin mpich
libxml2-utils librsvg2-bin chromium
bubblewrap charliecloud-runtime podman runc uidmap debootstrap gdb"
case ${1:-check} in
    demo) set_name=demo pkgs=$demo ;;
    check) set_name=check pkgs=$check ;;
    bench) set_name=bench pkgs="$check python3-torch python3-sklearn imagemagick" ;;
    *) echo "usage: sh tests/install-deps.sh [demo|check|bench]" >&2; exit 2 ;;
esac
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "numaguard: the packages of 'make $set_name' are installed"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "numaguard: missing packages:$missing (run as root, or install them)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
q=""
[ -t 1 ] || q=-q
echo "numaguard: 'make $set_name' needs$missing; apt-get update, then install (with their dependencies):"
# shellcheck disable=SC2086
apt-get update $q
# shellcheck disable=SC2086
apt-get install -y $q --no-install-recommends $missing
