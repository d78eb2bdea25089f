#!/bin/bash
# The cached arm64 Debian root of `make check-arm64` (tests/arm64/check-arm64.sh):
# made once with debootstrap --foreign --arch=arm64 and finished
# (--second-stage) under qemu-user-static through binfmt_misc; kept under
# $NG_CHROOT_CACHE/bookworm-arm64 like the roots of tests/releases/.
#
# binfmt_misc: this file mounts /proc/sys/fs/binfmt_misc and registers
# qemu-aarch64 only where they are absent, writes what it added to
# $ARM64_ADDED, and arm64_binfmt_undo removes exactly that (nothing a
# machine had before).
ARM64_CACHE=${NG_CHROOT_CACHE:-/var/cache/numaguard-chroots}
ARM64_REL=${NG_ARM64_RELEASE:-bookworm}
ARM64_ROOT=$ARM64_CACHE/$ARM64_REL-arm64
ARM64_MIRROR=${NG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
BINFMT=/proc/sys/fs/binfmt_misc
ARM64_ADDED=()   # "mount" and/or "qemu-aarch64": what arm64_binfmt added
# What the root holds (make, the C toolchains, hwloc's and Slurm's headers,
# LLVM's OpenMP runtime, python3 for the CLI suites, binutils' objdump):
# installed with apt-get inside once the base system is there (debootstrap's
# own --include resolves no alternatives: libhwloc-dev's libltdl-dev needs
# "automake | automaken" and the second stage fails on it).
ARM64_PKGS="make gcc libc6-dev libhwloc-dev libslurm-dev pkg-config clang libomp-dev python3 hwloc-nox binutils"

alog() { printf '# arm64: %s\n' "$*" >&2; }

# The qemu-aarch64 binfmt entry of Debian's qemu-user-static, its flags
# too: P (the -binfmt-P interpreter expects argv[0] preserved), F (the
# interpreter is opened at registration, so the root needs no copy of it).
arm64_binfmt() {
    local qemu=/usr/libexec/qemu-binfmt/aarch64-binfmt-P
    [ -x /usr/bin/qemu-aarch64-static ] || {
        alog "installing qemu-user-static"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            qemu-user-static >/dev/null || return 1
    }
    if [ ! -e "$BINFMT/register" ]; then
        mount -t binfmt_misc binfmt_misc "$BINFMT" || { alog "cannot mount binfmt_misc"; return 1; }
        ARM64_ADDED+=(mount)
    fi
    # A machine's own aarch64 entry (any name whose magic is aarch64 ELF) is used as it is.
    if grep -lqs 'magic 7f454c460201010000000000000000000200b700' "$BINFMT"/*; then
        return 0
    fi
    printf '%s\n' ':qemu-aarch64:M::\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'"$qemu"':OPF' \
        >"$BINFMT/register" || { alog "cannot register qemu-aarch64"; return 1; }
    ARM64_ADDED+=(qemu-aarch64)
}

arm64_binfmt_undo() {
    local a
    for a in "${ARM64_ADDED[@]}"; do
        [ "$a" = qemu-aarch64 ] && echo -1 >"$BINFMT/qemu-aarch64" 2>/dev/null
    done
    for a in "${ARM64_ADDED[@]}"; do
        [ "$a" = mount ] && umount "$BINFMT" 2>/dev/null
    done
    ARM64_ADDED=()
}

# Make the root once (cold: debootstrap's two stages); a later call finds
# .ng-bootstrap-done and returns at once (warm).
arm64_bootstrap() {
    local d=$ARM64_ROOT
    if [ "${NG_CHROOT_REFRESH:-0}" = 1 ] && [ -d "$d" ]; then
        rm -rf --one-file-system "$d"
    fi
    [ -f "$d/.ng-bootstrap-done" ] && return 0
    command -v debootstrap >/dev/null 2>&1 || {
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            debootstrap >/dev/null || return 1
    }
    alog "debootstrap --foreign --arch=arm64 $ARM64_REL into $d (once; later runs reuse it)"
    mkdir -p "$ARM64_CACHE"
    local t0=$SECONDS log=$ARM64_CACHE/$ARM64_REL-arm64.debootstrap.log
    # The first stage (downloads, host tools) is kept when only the second
    # (dpkg under emulation) failed.
    if [ ! -f "$d.part/.ng-first-stage-done" ]; then
        rm -rf --one-file-system "$d.part"
        nice -n 10 debootstrap --foreign --arch=arm64 --variant=minbase --include=ca-certificates \
            "$ARM64_REL" "$d.part" "$ARM64_MIRROR" >"$log" 2>&1 &&
            touch "$d.part/.ng-first-stage-done" || {
            alog "debootstrap failed, see $log"
            return 1
        }
    fi
    nice -n 10 chroot "$d.part" /debootstrap/debootstrap --second-stage \
            >>"$ARM64_CACHE/$ARM64_REL-arm64.debootstrap.log" 2>&1 || {
        alog "debootstrap failed, see $ARM64_CACHE/$ARM64_REL-arm64.debootstrap.log"
        return 1
    }
    printf '127.0.0.1\tlocalhost\n127.0.0.1\t%s\n' "$(hostname)" >"$d.part/etc/hosts"
    mv "$d.part" "$d" && touch "$d/.ng-bootstrap-done"
    alog "root made in $((SECONDS - t0)) s"
}
