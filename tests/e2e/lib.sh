# tests/e2e/lib.sh - paths and helpers of tests/e2e/t-*.sh (POSIX sh),
# with the TAP helpers of tests/lib/tap.sh (ok, is, like, skip, ...).
# Source it after cd to the repository root; BUILD names the build dir.
. tests/lib/tap.sh
# NG_MA (the multiarch triplet), ng_kmpc_argcs: what differs per architecture.
. tests/lib/multiarch.sh
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
NG=$BUILD/numaguard
TOPO=$(pwd)/tests/topologies
XE=$TOPO/xe8640-4xh100-spr8480-snc4.xml
# Value of KEY=VALUE or "Key:<tab>value" lines in a block of text.
val() {  # val TEXT KEY
    printf '%s\n' "$1" | sed -n "s/^$2[=:][[:space:]]*//p" | head -1
}

# start NAME CMD...: run CMD in the background (output in $T/NAME.out,
# pid in PID_NAME and added to PIDS, which the suite's cleanup kills) and
# wait up to 5 s for it to print "ready".
start() {
    name=$1
    shift
    "$@" >"$T/$name.out" 2>&1 &
    eval "PID_$name=$!"
    PIDS="$PIDS $!"
    i=0
    while ! grep -q ready "$T/$name.out" 2>/dev/null && [ $i -lt 100 ]; do
        sleep 0.05
        i=$((i + 1))
    done
}

# doctor_prereqs: what the doctor suites (t-doctor, t-doctor-sites) need
# before they start: the CLI, root (mknod for the fake device files), the
# plugin and the real slurmd; sets PLUGIN and adds /usr/sbin to PATH.
# tagged_left TAG: the processes with NG_TEST_TAG=TAG in their environment
# (set only on what the suite itself starts; inherited by everything those
# start, a setsid() child included): what the suite left running, never
# another suite's processes of the same name.
tagged_left() {
    grep -lzxF "NG_TEST_TAG=$1" /proc/[0-9]*/environ 2>/dev/null | grep -vc "^/proc/$$/"
}

doctor_prereqs() {
    [ -x "$NG" ] || skip_all "$NG not built"
    [ "$(id -u)" -eq 0 ] || skip_all "needs root (mknod for the fake device files)"
    PLUGIN=$BUILD/numaguard.so
    [ -f "$PLUGIN" ] || skip_all "$PLUGIN not built (needs the Slurm headers)"
    command -v slurmd >/dev/null 2>&1 || [ -x /usr/sbin/slurmd ] ||
        skip_all "slurmd not installed (tests/install-deps.sh)"
    PATH=$PATH:/usr/sbin
}
