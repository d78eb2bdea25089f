#!/bin/bash
# make check-releases: build numaguard and run its unit and Slurm suites
# against other Debian releases' Slurm and hwloc, each in a debootstrap
# chroot made from Debian's own packages (docs/admin-guide.md, "Supported
# Slurm releases"):
#
#   trixie  (Debian 13)  Slurm 24.11, hwloc 2.12
#   sid     (unstable)   Slurm 26.05, hwloc 2.15
#
# A chroot is made once and kept under $NG_CHROOT_CACHE (outside the
# repository); later runs reuse it and only install what
# tests/install-deps.sh finds missing. The working tree (tracked and
# untracked, not ignored files) is copied in and built there with that
# release's compiler, Slurm headers and hwloc. Per release it prints the
# Slurm and hwloc versions and "N passed, N failed".
#
# Settings:
#   NG_RELEASES        releases to test (default "trixie sid")
#   NG_CHROOT_CACHE    where chroots live (default /var/cache/numaguard-chroots)
#   NG_DEBIAN_MIRROR   default http://deb.debian.org/debian
#   NG_RELEASE_TESTS   run-all.sh patterns (default: unit suites, the Slurm
#                      suites, the fault matrix and valgrind)
#   NG_CHROOT_REFRESH=1  make the chroots again from scratch
#   NG_RELEASE_TREE    worktree (default: the working tree as git sees it,
#                      untracked files included) or a git revision (HEAD)
#
# Needs root (debootstrap, mounts). Mounts made for a run (proc, sysfs,
# the cgroup tree, /dev, tmpfs for /dev/shm, /run, /tmp) are private to
# the chroot and removed on exit, also on failure or interrupt; processes
# still running inside a chroot at the end are ours and are killed first.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${NG_CHROOT_CACHE:-/var/cache/numaguard-chroots}
RELEASES=${NG_RELEASES:-trixie sid}
MIRROR=${NG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
TESTS=${NG_RELEASE_TESTS:-test_ t-slurm- t-faults t-valgrind}
BUILD_IN=build-release   # build dir inside the chroot's copy

log() { printf '# %s\n' "$*" >&2; }

MOUNTS=()   # mount points made by this run, in mount order

# Kill what still runs with its root inside chroot $1 (slurmd, munged, a
# hung test), by pid: only processes this script's chroot can hold.
kill_chroot_procs() {
    local root=$1 d p
    for d in /proc/[0-9]*; do
        [ "$(readlink "$d/root" 2>/dev/null)" = "$root" ] || continue
        p=${d#/proc/}
        kill -KILL "$p" 2>/dev/null
    done
}

unmount_all() {
    local i m
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        m=${MOUNTS[i]}
        umount -R "$m" 2>/dev/null || umount -lR "$m" 2>/dev/null ||
            log "could not unmount $m"
    done
    MOUNTS=()
}

cleanup() {
    local r
    for r in $RELEASES; do
        [ -d "$CACHE/$r" ] && kill_chroot_procs "$CACHE/$r"
    done
    unmount_all
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM HUP

# do_mount TARGET MOUNT-ARGS...: mount, make it private (no propagation
# back to the host's /dev or cgroup tree), remember it.
do_mount() {
    local target=$1
    shift
    mkdir -p "$target"
    mount "$@" "$target" || { log "mount $* $target failed"; return 1; }
    MOUNTS+=("$target")
    mount --make-rprivate "$target"
}

mount_chroot() {
    local d=$1
    do_mount "$d/proc" -t proc proc &&
        do_mount "$d/sys" -t sysfs sysfs &&
        do_mount "$d/sys/fs/cgroup" --rbind /sys/fs/cgroup &&
        do_mount "$d/dev" --bind /dev &&
        do_mount "$d/dev/pts" --bind /dev/pts &&
        do_mount "$d/dev/shm" -t tmpfs -o mode=1777 shm &&
        do_mount "$d/run" -t tmpfs -o mode=755 run &&
        do_mount "$d/tmp" -t tmpfs -o mode=1777 tmp
}

# Files a minbase chroot lacks for our tests and for apt.
configure_chroot() {
    local d=$1
    # slurmd resolves localhost and this host's name (minbase has no hosts file).
    printf '127.0.0.1\tlocalhost\n127.0.0.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
        "$(hostname)" >"$d/etc/hosts"
    cp -L /etc/resolv.conf "$d/etc/resolv.conf" 2>/dev/null || true
    printf '#!/bin/sh\nexit 101\n' >"$d/usr/sbin/policy-rc.d"   # no daemon starts at install
    chmod 755 "$d/usr/sbin/policy-rc.d"
    # sid's Release file on the mirror can be past its Valid-Until date.
    printf 'Acquire::Check-Valid-Until "false";\nAPT::Install-Recommends "false";\n' \
        >"$d/etc/apt/apt.conf.d/99numaguard"
}

bootstrap() {
    local rel=$1 d=$CACHE/$1
    if [ "${NG_CHROOT_REFRESH:-0}" = 1 ] && [ -d "$d" ]; then
        log "$rel: removing the cached chroot (NG_CHROOT_REFRESH=1)"
        rm -rf --one-file-system "$d"
    fi
    [ -f "$d/.ng-bootstrap-done" ] && return 0
    command -v debootstrap >/dev/null 2>&1 || {
        log "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            debootstrap >/dev/null || return 1
    }
    log "$rel: debootstrap into $d (once; later runs reuse it)"
    mkdir -p "$CACHE"
    rm -rf --one-file-system "$d.part"
    debootstrap --variant=minbase --include=ca-certificates,make "$rel" "$d.part" "$MIRROR" \
        >"$CACHE/$rel.debootstrap.log" 2>&1 || {
        log "$rel: debootstrap failed, see $CACHE/$rel.debootstrap.log"
        return 1
    }
    rm -rf --one-file-system "$d"
    mv "$d.part" "$d" && touch "$d/.ng-bootstrap-done"
}

# Copy the sources: the working tree (what git would see, ignored files
# left out) or, with NG_RELEASE_TREE=<revision>, that commit.
copy_tree() {
    local dst=$1/root/numaguard rev=${NG_RELEASE_TREE:-worktree}
    rm -rf --one-file-system "$dst"
    mkdir -p "$dst"
    if [ "$rev" = worktree ]; then
        (cd "$top" && git ls-files -z -c -o --exclude-standard | tar --null -T - -cf -) |
            tar -xf - -C "$dst"
    else
        (cd "$top" && git archive "$rev") | tar -xf - -C "$dst"
    fi
}

# Run a command inside the chroot with a clean environment.
in_chroot() {
    local d=$1
    shift
    chroot "$d" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 TERM=dumb "$@"
}

# The suites inside: one run-all.sh per pattern; prints its lines, then
# "TOTAL <passed> <failed>".
SUITE_SCRIPT='
cd /root/numaguard || exit 2
passed=0; failed=0
for pat in $NG_PATTERNS; do
    out=$(BUILD=$NG_BUILD NG_TESTS=$pat sh tests/run-all.sh 2>&1)
    printf "%s\n" "$out" | grep -v "^[0-9]* passed, [0-9]* failed$"
    last=$(printf "%s\n" "$out" | tail -1)
    p=$(printf "%s\n" "$last" | sed -n "s/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p")
    f=$(printf "%s\n" "$last" | sed -n "s/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p")
    [ -n "$p" ] || { p=0; f=$((f + 1)); echo "not ok - $pat: no summary line"; }
    passed=$((passed + p)); failed=$((failed + f))
done
echo "TOTAL $passed $failed"
'

check_release() {
    local rel=$1 d=$CACHE/$1 t0 out total
    t0=$(date +%s)
    bootstrap "$rel" || { RESULT+=("$rel: chroot could not be made"); return 1; }
    configure_chroot "$d"
    mount_chroot "$d" || { unmount_all; RESULT+=("$rel: mounts failed"); return 1; }
    copy_tree "$d"
    log "$rel: installing missing packages (tests/install-deps.sh)"
    if ! in_chroot "$d" sh -c 'apt-get update -q >/dev/null 2>&1; cd /root/numaguard && sh tests/install-deps.sh'; then
        log "$rel: tests/install-deps.sh failed"
        RESULT+=("$rel: package installation failed")
        kill_chroot_procs "$d"; unmount_all
        return 1
    fi
    local slurm hwloc
    slurm=$(in_chroot "$d" dpkg-query -W -f '${Version}' slurmd 2>/dev/null)
    hwloc=$(in_chroot "$d" pkg-config --modversion hwloc 2>/dev/null)
    log "$rel: building against Slurm $slurm, hwloc $hwloc"
    if ! in_chroot "$d" make -C /root/numaguard BUILD=$BUILD_IN all tests >"$CACHE/$rel.build.log" 2>&1; then
        tail -20 "$CACHE/$rel.build.log" | sed 's/^/#   /' >&2
        log "$rel: build failed (full log $CACHE/$rel.build.log)"
        kill_chroot_procs "$d"; unmount_all
        RESULT+=("$rel: Slurm $slurm, hwloc $hwloc: build failed")
        return 1
    fi
    # Ports of its own: a `make check` on the host may start clusters too.
    out=$(in_chroot "$d" env NG_PATTERNS="$TESTS" NG_BUILD=$BUILD_IN \
        NG_SLURM_PORT_SEARCH=$((38017 + 400 * RELNO)) sh -c "$SUITE_SCRIPT")
    printf '%s\n' "$out" | grep -v '^TOTAL ' | sed "s/^/[$rel] /"
    total=$(printf '%s\n' "$out" | sed -n 's/^TOTAL //p')
    kill_chroot_procs "$d"
    unmount_all
    local p=${total% *} f=${total#* }
    [ -n "$total" ] || { p=0; f=1; }
    RESULT+=("$rel: Slurm $slurm, hwloc $hwloc: $p passed, $f failed ($(( $(date +%s) - t0 ))s)")
    [ "$f" = 0 ] && [ "$p" -gt 0 ]
}

# Sourced for its chroot helpers (tests/arm64/check-arm64.sh, with
# NG_RELEASES=""): no release is checked.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
[ "$(id -u)" = 0 ] || { log "make check-releases needs root (debootstrap, chroot, mounts)"; exit 2; }
RESULT=()
rc=0
T0=$(date +%s)
RELNO=0
for rel in $RELEASES; do
    check_release "$rel" || rc=1
    RELNO=$((RELNO + 1))
done
echo "== check-releases ($(( $(date +%s) - T0 ))s):"
for r in "${RESULT[@]}"; do echo "== $r"; done
# The closing line, as make check prints it: every release added up (a
# release that did not build or install counts one failure).
tp=0; tf=0
for r in "${RESULT[@]}"; do
    case "$r" in
        *" passed, "*" failed "*) n=${r%% passed,*}; n=${n##* }; m=${r##*passed, }; m=${m%% failed*}
                                  tp=$((tp + n)); tf=$((tf + m)) ;;
        *) tf=$((tf + 1)) ;;
    esac
done
echo "$tp passed, $tf failed"
exit $rc
