#!/bin/bash
# make check-arm64: numaguard built and tested for aarch64 (NVIDIA Grace:
# GH200, GB200, GB300; DGX Spark) on an amd64 machine, in a cached arm64
# Debian root run through qemu-user-static and binfmt_misc
# (tests/arm64/root.sh). In order, each part with its counts and time:
#
#   1. root     the cached root (cold: debootstrap --foreign and its
#               second stage under emulation; warm: nothing), the packages
#               of ARM64_PKGS, the working tree copied in
#   2. build    make all tests for aarch64, -Werror as everywhere: by
#               default with Debian's cross gcc 12 (the root's own gcc
#               release) and clang --target=aarch64-linux-gnu, the root as
#               sysroot (its libc, hwloc, Slurm headers, libomp), about a
#               minute; NG_ARM64_BUILD=native builds inside the root with
#               its own gcc under emulation instead (about an hour on 2
#               busy cores: a nightly's choice)
#   3. suites   the unit suites and t-cli (NG_ARM64_TESTS), with
#               NG_EMULATED=qemu-user: what qemu-user cannot do
#               (set_mempolicy is ENOSYS, /proc/PID/exe names qemu) is a
#               skip that says so
#   4. compat   the amd64 CLI (this tree, built here) against the arm64
#               one, byte for byte (tests/compat/compat.py) over the
#               aarch64 topologies: GH200, DGX Spark, Arm XA320, ThunderX2
#   5. governor tests/arm64/governor.sh inside: gcc and clang programs'
#               team sizes, libomp's aarch64 entry stub (argument counts,
#               unwinding)
#
# Closing line "N passed, N failed" as make check prints it. Settings:
#   NG_CHROOT_CACHE      where the root lives (default /var/cache/numaguard-chroots)
#   NG_CHROOT_REFRESH=1  make the root again
#   NG_ARM64_BUILD       cross (default) or native
#   NG_ARM64_PARTS       parts to run after the build (default "suites compat governor")
#   NG_ARM64_TESTS       run-all.sh patterns of part 3 (default "test_ t-cli")
#   NG_ARM64_TOPOLOGIES  topology stems of part 4
# Needs root (debootstrap, chroot, mounts, binfmt_misc) and, for the first
# run, the network. Mounts and the binfmt entry it added are removed on
# exit, also on failure or interrupt.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
# The chroot helpers of make check-releases (mounts, tree copy, in_chroot).
NG_RELEASES="" . tests/releases/check-releases.sh
. tests/arm64/root.sh
PARTS=${NG_ARM64_PARTS:-suites compat governor}
TESTS=${NG_ARM64_TESTS:-test_ t-cli}
TOPOS=${NG_ARM64_TOPOLOGIES:-gh200-4superchip-synthetic dgx-spark-gb10-arm-hybrid arm-xa320-2s-128c-4numa apollo70-thunderx2-smt4-2xamdgpu-hwloc1}
BUILD_ARM=/root/build-arm64   # outside the copied tree: warm runs rebuild only what changed
D=$ARM64_ROOT
RESULT=()
TP=0 TF=0
WRAP=""

arm64_cleanup() {
    [ -d "$D" ] && kill_chroot_procs "$D"
    unmount_all
    arm64_binfmt_undo
    [ -n "$WRAP" ] && rm -f "$WRAP"
}
trap arm64_cleanup EXIT
trap 'arm64_cleanup; exit 130' INT TERM HUP

# result NAME PASSED FAILED SECONDS: one "== ..." line, added to the total.
result() {
    RESULT+=("$1: $2 passed, $3 failed ($4s)")
    TP=$((TP + $2)) TF=$((TF + $3))
}
# tap_counts FILE: "PASSED FAILED" of a TAP stream (a skip passes).
tap_counts() {
    printf '%s %s\n' "$(grep -c '^ok ' "$1")" "$(grep -c '^not ok ' "$1")"
}

part_root() {
    local t0=$SECONDS missing
    arm64_binfmt || return 1
    arm64_bootstrap || return 1
    configure_chroot "$D"
    mount_chroot "$D" || return 1
    missing=$(in_chroot "$D" sh -c 'for p in $0; do
        dpkg-query -W -f="\${Status}" "$p" 2>/dev/null | grep -q "ok installed" || printf "%s " "$p"; done' \
        "$ARM64_PKGS")
    if [ -n "$missing" ]; then
        log "arm64: installing $missing"
        in_chroot "$D" sh -c "apt-get update -q >/dev/null 2>&1 &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing" \
            >"$ARM64_CACHE/$ARM64_REL-arm64.apt.log" 2>&1 || { log "arm64: apt-get failed"; return 1; }
    fi
    copy_tree "$D"
    log "arm64: root ready in $((SECONDS - t0)) s ($(in_chroot "$D" uname -m), gcc $(in_chroot "$D" gcc -dumpversion), hwloc $(in_chroot "$D" pkg-config --modversion hwloc))"
}

# The cross toolchain on this machine: Debian's gcc-aarch64-linux-gnu, the
# same gcc release as the root's (bookworm: 12), and clang for the libomp
# probes (the host's clang 14 is the root's too).
cross_make() {
    local llvm
    command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || {
        log "arm64: installing gcc-aarch64-linux-gnu (the cross build)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            gcc-aarch64-linux-gnu libc6-dev-arm64-cross >/dev/null || return 1
    }
    llvm=$(ls -d "$D"/usr/lib/llvm-*/lib 2>/dev/null | tail -1)
    make -j"$(nproc)" CC="aarch64-linux-gnu-gcc --sysroot=$D" SLURM_INCLUDE="$D/usr/include" \
        OMP_CLANG="clang --target=aarch64-linux-gnu --sysroot=$D -L$llvm" BUILD="$D$BUILD_ARM" all tests
}

part_build() {
    local t0=$SECONDS log=$ARM64_CACHE/$ARM64_REL-arm64.build.log how=${NG_ARM64_BUILD:-cross} rc
    if [ "$how" = native ]; then
        in_chroot "$D" make -C /root/numaguard -j"$(nproc)" BUILD=$BUILD_ARM all tests >"$log" 2>&1
    else
        cross_make >"$log" 2>&1
    fi
    rc=$?
    if [ $rc = 0 ] && readelf -h "$D$BUILD_ARM/numaguard" 2>/dev/null | grep -q AArch64; then
        result "build ($how, aarch64, -Werror)" 1 0 $((SECONDS - t0))
        return 0
    fi
    tail -20 "$log" | sed 's/^/#   /' >&2
    result "build ($how, aarch64, -Werror; log $log)" 0 1 $((SECONDS - t0))
    return 1
}

part_suites() {
    local t0=$SECONDS out total
    out=$(in_chroot "$D" env NG_PATTERNS="$TESTS" NG_BUILD=$BUILD_ARM NG_EMULATED=qemu-user \
        sh -c "$SUITE_SCRIPT")
    printf '%s\n' "$out" | grep -v '^TOTAL ' | sed 's/^/[arm64] /'
    total=$(printf '%s\n' "$out" | sed -n 's/^TOTAL //p')
    [ -n "$total" ] || total="0 1"
    result "suites ($TESTS) under qemu-user" "${total% *}" "${total#* }" $((SECONDS - t0))
}

# The arm64 CLI as compat.py runs a CLI: in the same working directory as
# the amd64 one (the copy inside is bind-mounted at this tree's own path,
# so the exec cases' shells see the same PWD), started by env(1), which
# adds no variable of its own (a shell would add SHLVL, OLDPWD, _).
# chroot by its path: compat.py gives the CLI a PATH without sbin.
part_compat() {
    local t0=$SECONDS stem out p=0 f=0 c same=0 all=0
    if ! make -j"$(nproc)" all >/dev/null 2>&1; then
        result "compat amd64-arm64 (the amd64 build failed)" 0 1 $((SECONDS - t0))
        return
    fi
    do_mount "$D$top" --bind "$D/root/numaguard" || {
        result "compat amd64-arm64 (bind mount failed)" 0 1 $((SECONDS - t0))
        return
    }
    WRAP=$(mktemp /tmp/numaguard-arm64.XXXXXX)
    printf '#!/bin/sh\nexec %s %s /usr/bin/env --chdir=%s %s/numaguard "$@"\n' \
        "$(command -v chroot)" "$D" "$top" "$BUILD_ARM" >"$WRAP"
    chmod 755 "$WRAP"
    out=$(mktemp)
    for stem in $TOPOS; do
        python3 tests/compat/compat.py --base "$top/build/numaguard" --new "$WRAP" \
            --base-name amd64 --differences /dev/null --only "$stem/*" >"$out" 2>&1
        # the topology's line (not the explanation file's, unused here)
        grep -E '^(not )?ok [0-9]+ - compat ' "$out" >"$out.tap"
        sed 's/^/[compat] /' "$out.tap"
        grep '^#' "$out" | head -30 | sed 's/^/[compat] /'
        c=$(sed -n 's/^# compat against amd64: \([0-9]*\) cases, \([0-9]*\) identical.*/\2 \1/p' "$out")
        set -- ${c:-0 0}
        same=$((same + $1)) all=$((all + $2))
        set -- $(tap_counts "$out.tap")
        rm -f "$out.tap"
        p=$((p + $1)) f=$((f + $2))
        log "compat $stem: ${c% *} of ${c#* } cases identical"
    done
    rm -f "$out"
    result "compat amd64 vs arm64 ($(echo $TOPOS | wc -w) topologies, $same of $all cases identical)" \
        $p $f $((SECONDS - t0))
}

part_governor() {
    local t0=$SECONDS out
    out=$(mktemp)
    in_chroot "$D" env BUILD=$BUILD_ARM NG_EMULATED=qemu-user sh /root/numaguard/tests/arm64/governor.sh \
        >"$out" 2>&1
    sed 's/^/[governor] /' "$out"
    set -- $(tap_counts "$out")
    rm -f "$out"
    result "governor under qemu-user (gcc, clang)" "$1" "$2" $((SECONDS - t0))
}

[ "$(id -u)" = 0 ] || { log "make check-arm64 needs root (debootstrap, chroot, mounts, binfmt_misc)"; exit 2; }
T0=$SECONDS
if part_root; then
    RESULT+=("root: ready ($((SECONDS - T0))s)")
    if part_build; then
        for part in $PARTS; do "part_$part"; done
    fi
else
    result "root (see the lines above)" 0 1 $((SECONDS - T0))
fi
echo "== check-arm64 ($((SECONDS - T0))s):"
for r in "${RESULT[@]}"; do echo "== $r"; done
echo "$TP passed, $TF failed"
[ "$TF" = 0 ] && [ "$TP" -gt 0 ]
