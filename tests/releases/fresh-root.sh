#!/bin/bash
# make check-fresh: the README's two commands as a new user runs them on a
# fresh Debian machine, in a debootstrap root of each release:
#
#   - the root is Debian's minbase plus what a user adds to clone the
#     project (ca-certificates, git, make), made once under
#     $NG_CHROOT_CACHE/fresh-<release>/base and never changed: every run
#     works in an overlay on top of it (a fresh machine each time), thrown
#     away at the end. Only the downloaded .debs are kept between runs
#     ($NG_CHROOT_CACHE/fresh-<release>/archives; NG_FRESH_APT_CACHE=0
#     downloads everything again, for a timing).
#   - /etc/hosts as debian-installer and cloud-init write it: this host's
#     name on 127.0.1.1.
#   - the working tree (as git sees it) in /root/numaguard, /root being
#     mode 0700 as on every Debian: root's natural place for a clone.
#   - `make demo` (its packages are counted and timed), then `make check`
#     with NG_TESTS=$NG_FRESH_TESTS: what a fresh machine can break. The
#     other suites do not care where the clone is or what the name maps to
#     and already run in `make check` on the host and in check-releases.
#
# Per release it prints the Slurm version, the demo's package count and
# time, the suites' lines, and "<release>: N passed, N failed"; then each
# release's failed tests again ("<release>: <suite>: not ok ...", at most
# 10: a CI log is often read from its tail); the closing line adds them up
# (`make demo` counts as one test).
#
# Settings:
#   NG_FRESH_RELEASES   releases (default "bookworm trixie": Debian 12, 13)
#   NG_FRESH_TESTS      run-all.sh patterns for `make check` (default below;
#                       "test_ t-" runs every suite; NG_VM_TIMEOUT is passed)
#   NG_CHROOT_CACHE     default /var/cache/numaguard-chroots (shared with
#                       make check-releases, which keeps its own chroots)
#   NG_DEBIAN_MIRROR    default http://deb.debian.org/debian
#   NG_FRESH_TREE       worktree (default) or a git revision to test
#   NG_FRESH_APT_CACHE  1 (default): keep the downloaded .debs between runs
#   NG_FRESH_NAME_ADDR  the address of this host's name (default 127.0.1.1)
#   NG_FRESH_CHECK=0    `make demo` only (to time it)
#
# Needs root (debootstrap, overlayfs, chroot). Everything is mounted in a
# private mount namespace: nothing is left mounted, whatever happens.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${NG_CHROOT_CACHE:-/var/cache/numaguard-chroots}
RELEASES=${NG_FRESH_RELEASES:-bookworm trixie}
MIRROR=${NG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The cluster's start and its address (t-slurm-cluster), real binding
# (t-slurm-bind), an unprivileged user's srun from a clone in /root
# (t-attacks, t-check-job, t-check's uid 65534 cases), the .deb a fresh
# machine builds and installs (t-srun), Open MPI and MPICH as root on that
# release (t-launchers), the docs against the binary (t-docs).
TESTS=${NG_FRESH_TESTS:-t-slurm-cluster t-slurm-bind t-attacks t-check t-srun t-launchers t-docs}

log() { printf '# %s\n' "$*" >&2; }

# bootstrap REL: the pristine base root, made once.
bootstrap() {
    local rel=$1 d=$CACHE/fresh-$1/base
    [ -f "$d/.ng-bootstrap-done" ] && return 0
    command -v debootstrap >/dev/null 2>&1 || {
        log "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            debootstrap >/dev/null || return 1
    }
    log "$rel: debootstrap --variant=minbase into $d (once; later runs reuse it)"
    mkdir -p "$CACHE/fresh-$rel"
    rm -rf --one-file-system "$d.part"
    debootstrap --variant=minbase --include=ca-certificates,git,make "$rel" "$d.part" "$MIRROR" \
        >"$CACHE/fresh-$rel/debootstrap.log" 2>&1 || {
        log "$rel: debootstrap failed, see $CACHE/fresh-$rel/debootstrap.log"
        return 1
    }
    rm -rf --one-file-system "$d"
    mv "$d.part" "$d" && touch "$d/.ng-bootstrap-done"
}

# The tree to test, as a tar stream: the working tree (tracked and
# untracked files, ignored ones left out) or NG_FRESH_TREE=<revision>.
tree_tar() {
    local rev=${NG_FRESH_TREE:-worktree}
    if [ "$rev" = worktree ]; then
        (cd "$top" && git ls-files -z -c -o --exclude-standard | tar --null -T - -cf -)
    else
        (cd "$top" && git archive "$rev")
    fi
}

# --- inside the private mount namespace: one release -------------------
# inside REL NO: overlay, mounts, configure, make demo, make check.
inside() {
    local rel=$1 no=$2 w=$CACHE/fresh-$1/run r rc t0 secs n0 n1 slurm
    r=$w/root
    mount --make-rprivate / 2>/dev/null
    rm -rf --one-file-system "$w"
    mkdir -p "$w/upper" "$w/work" "$r" "$CACHE/fresh-$rel/archives/partial"
    mount -t overlay overlay -o "lowerdir=$CACHE/fresh-$rel/base,upperdir=$w/upper,workdir=$w/work" "$r" ||
        { log "$rel: overlay mount failed"; return 1; }
    mount -t proc proc "$r/proc" && mount -t sysfs sysfs "$r/sys" &&
        mount --rbind /sys/fs/cgroup "$r/sys/fs/cgroup" &&
        mount --bind /dev "$r/dev" && mount --bind /dev/pts "$r/dev/pts" &&
        mount -t tmpfs -o mode=1777 shm "$r/dev/shm" &&
        mount -t tmpfs -o mode=755 run "$r/run" &&
        mount -t tmpfs -o mode=1777 tmp "$r/tmp" || { log "$rel: mounts failed"; return 1; }
    if [ "${NG_FRESH_APT_CACHE:-1}" = 1 ]; then
        mount --bind "$CACHE/fresh-$rel/archives" "$r/var/cache/apt/archives" || return 1
    fi
    # debian-installer's and cloud-init's hosts file: the name on 127.0.1.1.
    printf '127.0.0.1\tlocalhost\n%s\t%s\n\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
        "${NG_FRESH_NAME_ADDR:-127.0.1.1}" "$(uname -n)" >"$r/etc/hosts"
    cp -L /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null
    # No daemon starts at package installation (a chroot has no init).
    printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
    chmod 755 "$r/usr/sbin/policy-rc.d"
    # sid's Release file on the mirror can be past its Valid-Until date.
    printf 'Acquire::Check-Valid-Until "false";\n' >"$r/etc/apt/apt.conf.d/99numaguard"
    mkdir -p "$r/root/numaguard"
    tree_tar | tar -xf - -C "$r/root/numaguard"
    echo "# $rel: /root is mode $(stat -c %a "$r/root"); $(uname -n) is $(chroot "$r" getent hosts "$(uname -n)" | awk '{print $1}') in its /etc/hosts"

    n0=$(chroot "$r" dpkg-query -W -f '${Status}\n' | grep -c 'install ok installed')
    t0=$(date +%s)
    in_root "$r" timeout 1800 make -C /root/numaguard demo >"$CACHE/fresh-$rel.demo.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - t0 ))
    n1=$(chroot "$r" dpkg-query -W -f '${Status}\n' | grep -c 'install ok installed')
    slurm=$(chroot "$r" dpkg-query -W -f '${Version}' slurmd 2>/dev/null)
    if [ $rc -eq 0 ] && grep -Eq '^(numaguard )?demo done' "$CACHE/fresh-$rel.demo.log"; then
        echo "ok - $rel: make demo: $((n1 - n0)) packages installed, ${secs}s in all (Slurm $slurm)"
    else
        echo "not ok - $rel: make demo (exit $rc after ${secs}s; log $CACHE/fresh-$rel.demo.log)"
        grep -E '^numaguard demo|srun exit|gave up|error' "$CACHE/fresh-$rel.demo.log" | head -20 | sed 's/^/#   /'
        tail -5 "$CACHE/fresh-$rel.demo.log" | sed 's/^/#   | /'
    fi
    grep -E '^numaguard demo \[' "$CACHE/fresh-$rel.demo.log" | sed 's/^/#   /'

    if [ "${NG_FRESH_CHECK:-1}" = 0 ]; then
        kill_root_procs "$r"
        return
    fi
    n0=$n1
    t0=$(date +%s)
    in_root "$r" env NG_TESTS="$TESTS" NG_SLURM_PORT_SEARCH=$((39617 + 400 * no)) \
        ${NG_VM_TIMEOUT:+NG_VM_TIMEOUT=$NG_VM_TIMEOUT} \
        timeout 3600 make -C /root/numaguard check >"$CACHE/fresh-$rel.check.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - t0 ))
    n1=$(chroot "$r" dpkg-query -W -f '${Status}\n' | grep -c 'install ok installed')
    echo "# $rel: make check: $((n1 - n0)) more packages, exit $rc, ${secs}s in all (log $CACHE/fresh-$rel.check.log)"
    grep -E '^== |^   (not ok|#|Bail)' "$CACHE/fresh-$rel.check.log" | sed 's/^/#   /'
    # Its closing line; none (it did not get that far) is one failure.
    grep -E '^[0-9]+ passed, [0-9]+ failed$' "$CACHE/fresh-$rel.check.log" | tail -1 | sed 's/^/CHECK /'
    [ $rc -eq 0 ] || tail -5 "$CACHE/fresh-$rel.check.log" | sed 's/^/#   | /'
    kill_root_procs "$r"
}

# in_root ROOT CMD...: run CMD in the root with a clean environment.
in_root() {
    local r=$1
    shift
    chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 TERM=dumb "$@"
}

# What still runs in the root (a daemon a failed test left): ours, by pid.
kill_root_procs() {
    local d
    for d in /proc/[0-9]*; do
        [ "$(readlink "$d/root" 2>/dev/null)" = "$1" ] && kill -KILL "${d#/proc/}" 2>/dev/null
    done
}

if [ "${1:-}" = --inside ]; then
    inside "$2" "$3"
    exit
fi

[ "$(id -u)" = 0 ] || { log "make check-fresh needs root (debootstrap, overlayfs, chroot)"; exit 2; }
T0=$(date +%s)
tp=0 tf=0 no=0
summary=() failures=()
for rel in $RELEASES; do
    t0=$(date +%s)
    if ! bootstrap "$rel"; then
        summary+=("$rel: the base root could not be made: 0 passed, 1 failed")
        failures+=("$rel: not ok - the base root could not be made (debootstrap)")
        tf=$((tf + 1)); no=$((no + 1)); continue
    fi
    out=$(unshare -m --propagation private bash "$0" --inside "$rel" "$no" 2>&1)
    rm -rf --one-file-system "$CACHE/fresh-$rel/run"
    printf '%s\n' "$out" | grep -v '^CHECK ' | sed "s/^/[$rel] /"
    p=$(printf '%s\n' "$out" | grep -c '^ok - ')
    f=$(printf '%s\n' "$out" | grep -c '^not ok - ')
    check=$(printf '%s\n' "$out" | sed -n 's/^CHECK //p')
    if [ -n "$check" ]; then
        p=$((p + ${check%% passed*})); f=$((f + $(echo "$check" | sed 's/.*passed, \([0-9]*\) failed/\1/')))
    elif [ "${NG_FRESH_CHECK:-1}" != 0 ]; then
        f=$((f + 1))
    fi
    summary+=("$rel: $p passed, $f failed ($(( $(date +%s) - t0 ))s)")
    # Its failed tests again for the closing summary, each with its suite
    # (the "== t-x.sh: ..." line above it), at most 10.
    if [ "$f" -gt 0 ]; then
        fl=$(printf '%s\n' "$out" | awk -v rel="$rel" '
            /^#   == [^ ]+: [0-9]+ passed/ { suite = $3; sub(/:$/, "", suite); next }
            /^not ok - / { print rel ": " $0; next }
            /^#      not ok / { l = $0; sub(/^#      /, "", l); print rel ": " suite ": " l }' | head -10)
        [ -n "$check" ] || [ "${NG_FRESH_CHECK:-1}" = 0 ] || fl=${fl:+$fl$'\n'}"$rel: not ok - make check ended without its closing line (log $CACHE/fresh-$rel.check.log)"
        failures+=("$fl")
    fi
    tp=$((tp + p)); tf=$((tf + f)); no=$((no + 1))
done
echo "== check-fresh ($(( $(date +%s) - T0 ))s; make check there: NG_TESTS=\"$TESTS\"):"
for s in "${summary[@]}"; do echo "== $s"; done
# What failed, named here too: a CI log is often read from its tail only.
for s in "${failures[@]}"; do printf '%s\n' "$s" | sed 's/^/==   /'; done
echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ] && [ "$tp" -gt 0 ]
