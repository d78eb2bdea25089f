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
# pid in PID_NAME and added to PIDS, which the suite's cleanup kills),
# wait up to 20 s (while it runs) for it to print "ready", then up to 5 s
# more for its main thread to sleep: ng_threads without a spinning thread says "ready"
# from its main thread, runnable until it reaches pause() (a check at that
# moment, on a loaded CPU, would count one runnable thread too many).
start() {
    name=$1
    shift
    "$@" >"$T/$name.out" 2>&1 &
    sp=$!
    eval "PID_$name=$sp"
    PIDS="$PIDS $sp"
    i=0
    while ! grep -q ready "$T/$name.out" 2>/dev/null && [ $i -lt 400 ]; do
        case $(main_state "$sp") in ''|Z) break ;; esac   # it ended (a launcher that refused)
        sleep 0.05
        i=$((i + 1))
    done
    i=0
    while [ "$(main_state "$sp")" = R ] && [ $i -lt 100 ]; do
        sleep 0.05
        i=$((i + 1))
    done
}

# main_state PID: the state letter (R, S, ...) of PID's main thread.
main_state() {
    sed -n 's/^.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null
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
