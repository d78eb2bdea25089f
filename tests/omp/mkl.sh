#!/bin/bash
# make check-mkl: the governor with Intel MKL for real. MKL is in Debian's
# non-free section, which neither CI nor make check enables; this fetches
# Debian 12's MKL packages (libmkl-rt and the libraries mkl_rt loads:
# core, the GNU and Intel threading layers, the LP64 interfaces, the
# def/avx2/avx512 kernels; about 63 MB) with a private apt list into a
# cache, unpacks them there (dpkg -x: nothing is installed, the machine's
# apt sources are untouched), then runs t-omp-adaptive with NG_MKL_LIB
# naming that libmkl_rt.so (its MKL cases: tests/e2e/t-omp-adaptive.sh).
# Needs the network the first time. Closing line as make check prints it.
#   NG_MKL_CACHE  where the packages are kept (default /var/cache/numaguard-mkl)
set -u
cd "$(dirname "$0")/../.." || exit 2
C=${NG_MKL_CACHE:-/var/cache/numaguard-mkl}
BUILD=${BUILD:-build}
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
LIB=$C/root/usr/lib/$MA/libmkl_rt.so
PKGS="libmkl-rt libmkl-core libmkl-gnu-thread libmkl-intel-thread libmkl-gf-lp64
      libmkl-intel-lp64 libmkl-def libmkl-avx2 libmkl-avx512 libmkl-locale"
[ "$(dpkg --print-architecture)" = amd64 ] || { echo "check-mkl: MKL is built for amd64 only"; echo "0 passed, 0 failed"; exit 0; }

fetch() {
    mkdir -p "$C/apt/lists/partial" "$C/apt/cache/archives/partial" "$C/debs" || return 1
    . /etc/os-release
    echo "deb http://deb.debian.org/debian ${VERSION_CODENAME:-bookworm} non-free" >"$C/sources.list"
    local a=(-o Dir::Etc::SourceList="$C/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o Dir::State::Lists="$C/apt/lists" -o Dir::Cache="$C/apt/cache"
             -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
    apt-get "${a[@]}" update -qq || return 1
    # shellcheck disable=SC2086
    (cd "$C/debs" && apt-get "${a[@]}" download $PKGS) || return 1
    for d in "$C"/debs/*.deb; do dpkg -x "$d" "$C/root" || return 1; done
}

if [ ! -e "$LIB" ]; then
    echo "check-mkl: fetching Debian's MKL into $C"
    fetch || { echo "check-mkl: could not fetch MKL (network, or no non-free section for this release)"; echo "0 passed, 1 failed"; exit 1; }
fi
[ -e "$LIB" ] || { echo "check-mkl: $LIB missing after the fetch"; echo "0 passed, 1 failed"; exit 1; }
NG_MKL_LIB=$LIB NG_TESTS=t-omp-adaptive BUILD=$BUILD sh tests/run-all.sh
