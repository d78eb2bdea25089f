#!/bin/sh
# Run every test suite and print the closing line "N passed, N failed".
# Suites: compiled C tests ($BUILD/tests/test_*) and shell tests
# (tests/*/t-*.sh), all printing TAP ("ok N - ..." / "not ok N - ...").
# A suite that exits non-zero without a "not ok" line counts as one failure.
# NG_TESTS="pattern" runs only suites whose name contains the pattern.
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
logdir=$BUILD/test-logs
mkdir -p "$logdir"
passed=0
failed=0
suites=""
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] && suites="$suites $t"
done
for t in tests/*/t-*.sh; do
    [ -f "$t" ] && suites="$suites $t"
done
for t in $suites; do
    name=$(basename "$t")
    if [ -n "${NG_TESTS:-}" ]; then
        case "$name" in *"$NG_TESTS"*) ;; *) continue ;; esac
    fi
    log="$logdir/$name.log"
    start=$(date +%s)
    case "$t" in
        *.sh) BUILD="$BUILD" sh "$t" >"$log" 2>&1 ;;
        *) "$t" >"$log" 2>&1 ;;
    esac
    rc=$?
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
        grep -E '^not ok |^# ' "$log" | head -40 | sed 's/^/   /'
        tail -5 "$log" | sed 's/^/   | /'
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
