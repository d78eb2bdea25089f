#!/bin/sh
# Every libFuzzer target in tests/fuzz/ (fuzz_*.c), briefly: builds them
# with clang (-fsanitize=fuzzer,address,undefined) into $FUZZ_BUILD (default
# $BUILD-fuzz), replays the seed corpora and saved reproducers, then fuzzes
# each for FUZZ_CHECK_SECONDS (default 15) two at a time. One TAP line per
# target with its exec count; any crash, sanitizer report, leak or broken
# invariant fails it (reproducer under $FUZZ_BUILD/crashes/). The long run
# is `make fuzz` (docs/hardening.md).
BUILD=${BUILD:-build}
FUZZ_BUILD=${FUZZ_BUILD:-$BUILD-fuzz}
secs=${FUZZ_CHECK_SECONDS:-60}   # a bound for slow machines; check-runs.tsv sets the work
cd "$(dirname "$0")/../.." || exit 2
. tests/lib/tap.sh
targets=$(ls tests/fuzz/fuzz_*.c | sed 's|.*/||; s|\.c$||')
count=$(echo "$targets" | wc -w)
cc=$(command -v clang || command -v clang-14 || command -v clang-15 || command -v clang-16)
if [ -z "$cc" ] || ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' |
        "$cc" -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
    skip 1 "clang with the libFuzzer runtime is not installed (Debian: clang libclang-rt-dev)"
    done_testing
    exit 0
fi
# The plan first: run-fuzzers.sh numbers its lines after ours (FUZZ_TAP_OFFSET).
echo "1..$((count + 1))"
log=$(mktemp)
if make --no-print-directory -s FUZZ_BUILD="$FUZZ_BUILD" FUZZ_CC="$cc" -j2 fuzz-build >"$log" 2>&1; then
    ok 0 "$count fuzzers built with $("$cc" --version | head -1)"
else
    ok 1 "fuzzers do not build"
    tail -20 "$log" | sed 's/^/# /'
    rm -f "$log"
    exit 1
fi
rm -f "$log"
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 2 ] && jobs=2
# A fixed seed and fixed execution counts keep `make check` repeatable: the
# same inputs on every machine. `make fuzz` explores with random seeds.
# Start from the seed corpora alone, as a clean CI checkout does.
rm -rf "$FUZZ_BUILD/corpus"
# shellcheck disable=SC2086
FUZZ_RUNS_FILE=${FUZZ_RUNS_FILE-tests/fuzz/check-runs.tsv} \
FUZZ_SEED=${FUZZ_SEED:-20261121} FUZZ_BUILD=$FUZZ_BUILD FUZZ_TAP_OFFSET=$tap_n sh tests/fuzz/run-fuzzers.sh "$secs" "$jobs" $targets
