#!/bin/sh
# Run every test suite and print the closing line "N passed, N failed".
# Suites: compiled C tests ($BUILD/tests/test_*) and shell tests
# (tests/*/t-*.sh), all printing TAP ("ok N - ..." / "not ok N - ...").
# A suite that exits non-zero without a "not ok" line counts as one failure.
# NG_TESTS="pattern ..." runs only suites whose name contains one of the
# (space-separated) patterns.
# Progress: a line when each suite starts ("[k/N] name"), one when it ends
# with its counts, and every NG_PROGRESS_SECS seconds (default 30) while a
# suite runs, how long it has run, its counts so far and its last line.
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
logdir=$BUILD/test-logs
mkdir -p "$logdir"
every=${NG_PROGRESS_SECS:-30}
passed=0
failed=0
all=""
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] && all="$all $t"
done
for t in tests/*/t-*.sh; do
    [ -f "$t" ] && all="$all $t"
done
suites=""
for t in $all; do
    name=$(basename "$t")
    if [ -n "${NG_TESTS:-}" ]; then
        hit=0
        for pat in $NG_TESTS; do
            case "$name" in *"$pat"*) hit=1 ;; esac
        done
        [ $hit = 1 ] || continue
    fi
    suites="$suites $t"
done
total=$(echo $suites | wc -w)

# heartbeat NAME LOG START: while the suite runs (killed after it). Its
# sleep writes nowhere, so a pipe reading this output (tee) is not held
# open by a sleep left behind.
heartbeat() {
    while sleep "$every" >/dev/null 2>&1 </dev/null; do
        hp=$(grep -c '^ok ' "$2")
        hf=$(grep -c '^not ok ' "$2")
        last=$(grep -E '^(ok|not ok|#) ' "$2" | tail -1 | cut -c1-100)
        echo "   .. $1: $(( $(date +%s) - $3 ))s, $hp ok, $hf not ok so far${last:+; last: $last}"
    done
}

k=0
for t in $suites; do
    k=$((k + 1))
    name=$(basename "$t")
    log="$logdir/$name.log"
    start=$(date +%s)
    echo "-- [$k/$total] $name"
    : >"$log"
    heartbeat "$name" "$log" "$start" &
    hb=$!
    case "$t" in
        *.sh) BUILD="$BUILD" sh "$t" >"$log" 2>&1 ;;
        *) "$t" >"$log" 2>&1 ;;
    esac
    rc=$?
    kill "$hb" 2>/dev/null
    wait "$hb" 2>/dev/null
    secs=$(( $(date +%s) - start ))
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^not ok ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "not ok - $name exited with status $rc" >>"$log"
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    echo "== $name: $p passed, $f failed (${secs}s)"
    if [ "$f" -ne 0 ]; then
        # The failures and details, then the log's last lines not shown yet.
        grep -E '^not ok |^# |^Bail out!' "$log" | head -40 >"$log.shown"
        sed 's/^/   /' "$log.shown"
        tail -5 "$log" | grep -vxF -f "$log.shown" | sed 's/^/   | /'
        rm -f "$log.shown"
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
