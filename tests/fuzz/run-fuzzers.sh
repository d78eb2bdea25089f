#!/bin/sh
# Run libFuzzer targets built in $FUZZ_BUILD, JOBS at a time, SECONDS each.
#   FUZZ_BUILD=build-fuzz sh tests/fuzz/run-fuzzers.sh SECONDS JOBS fuzz_a fuzz_b ...
# Prints one TAP line per target: "ok N - fuzz_x: E execs in S s (limit L s; per input T s;
# working corpus C)".
# A target fails on any crash, sanitizer report, leak, timeout (an input
# slower than its per-input limit, tests/fuzz/timeouts.tsv) or broken
# invariant (all of which make libFuzzer exit non-zero); its log tail is
# shown and the reproducer is kept in $FUZZ_BUILD/crashes/.
# Before fuzzing, each target replays its seeds (tests/fuzz/corpus/<t>) and
# the saved reproducers (tests/fuzz/crashes/<t>-*), so a fixed crash stays
# fixed. Run from the repository root.
# Optional: FUZZ_SEED (libFuzzer -seed, default random) for a repeatable run;
# FUZZ_TAP_OFFSET numbers the TAP lines after that many earlier ones (no plan
# line is printed then: the caller prints it).
set -u
secs=${1:?seconds}
jobs=${2:?jobs}
shift 2
B=${FUZZ_BUILD:-build-fuzz}
top=$(pwd)
logs=$B/fuzz-logs
mkdir -p "$logs" "$B/crashes" "$B/tmp"
export NG_FUZZ_REPO="$top" NG_FUZZ_TMP="$top/$B/tmp" NG_FUZZ_HWLOC_DIR="$top/$B/hwloc-crashes"
# Leaks are findings; hwloc prints XML parse complaints on stderr (noise).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export HWLOC_XML_VERBOSE=0 HWLOC_HIDE_ERRORS=2
# hwloc dlopen()s its gl/opencl/pci plugins at every topology init; none of
# them is used by XML import, and live loads blacklist those components.
export HWLOC_PLUGINS_BLACKLIST=hwloc_gl,hwloc_opencl,hwloc_pci

# One target: replay seeds + reproducers, then fuzz. Writes $logs/<t>.rc.
run_one() {
    t=$1
    t0=$(date +%s)
    log=$logs/$t.log
    work=$B/corpus/$t
    mkdir -p "$work"
    dict=""
    [ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
    seed=""
    [ -n "${FUZZ_SEED:-}" ] && seed="-seed=$FUZZ_SEED"
    # FUZZ_RUNS_FILE: "target<TAB>runs" lines cap the executions (the time
    # limit stays as a bound for slow machines).
    runs=""
    if [ -n "${FUZZ_RUNS_FILE:-}" ]; then
        n=$(awk -v t="$t" '$1 == t { print $2 }' "$FUZZ_RUNS_FILE")
        [ -n "$n" ] && runs="-runs=$n"
    fi
    # tests/fuzz/timeouts.tsv: "target<TAB>seconds" per-input time limits
    # (replay included: a slow seed is a finding too); 20 s otherwise.
    tmo=$(awk -v t="$t" '$1 == t { print $2 }' tests/fuzz/timeouts.tsv 2>/dev/null)
    tmo=${tmo:-20}
    repro=$(ls tests/fuzz/crashes/"$t"-* 2>/dev/null)
    {
        # shellcheck disable=SC2086
        # libFuzzer takes either directories (corpus) or files (replay).
        "$B/$t" -runs=0 -timeout="$tmo" $dict "tests/fuzz/corpus/$t" &&
        { [ -z "$repro" ] || "$B/$t" -timeout="$tmo" $repro; } &&
        "$B/$t" -max_total_time="$secs" -timeout="$tmo" -rss_limit_mb=2048 -max_len=32768 \
            -print_final_stats=1 -artifact_prefix="$B/crashes/$t-" $dict $seed $runs \
            "$work" "tests/fuzz/corpus/$t"
    } >"$log" 2>&1
    echo $? >"$logs/$t.rc"
    echo $(( $(date +%s) - t0 )) >"$logs/$t.secs"
    # Progress (make check shows a suite's last line while it runs).
    echo "# $t: done in $(cat "$logs/$t.secs") s (exit $(cat "$logs/$t.rc"))"
}

# Run the targets JOBS at a time (plain sh: background batches).
set -- "$@"
pending="$*"
while [ -n "$pending" ]; do
    batch=""
    i=0
    for t in $pending; do
        [ "$i" -ge "$jobs" ] && break
        batch="$batch $t"
        i=$((i + 1))
    done
    for t in $batch; do
        run_one "$t" &
    done
    wait
    rest=""
    for t in $pending; do
        case " $batch " in *" $t "*) ;; *) rest="$rest $t" ;; esac
    done
    pending=$(echo $rest)
done

n=${FUZZ_TAP_OFFSET:-0}
fail=0
for t in "$@"; do
    n=$((n + 1))
    log=$logs/$t.log
    rc=$(cat "$logs/$t.rc" 2>/dev/null || echo 99)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    corp=$(ls "$B/corpus/$t" | wc -l)
    if [ "$rc" -eq 0 ] && [ -n "$execs" ]; then
        tmo=$(awk -v t="$t" '$1 == t { print $2 }' tests/fuzz/timeouts.tsv 2>/dev/null)
        echo "ok $n - $t: ${execs} execs in $(cat "$logs/$t.secs") s (limit ${secs} s; per input ${tmo:-20} s; working corpus $corp)"
    else
        fail=1
        art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        why=$(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|INVARIANT FAILED|deadly signal' "$log")
        echo "not ok $n - $t: exit $rc${why:+: $why}${art:+ (reproducer $art)}"
        grep -E -A3 'INVARIANT FAILED|runtime error|ERROR: |#[0-9]+ 0x' "$log" | head -30 | sed 's/^/# /'
    fi
done
[ -z "${FUZZ_TAP_OFFSET:-}" ] && echo "1..$n"
exit $fail
