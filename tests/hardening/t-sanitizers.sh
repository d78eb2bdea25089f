#!/bin/sh
# The library, the CLI and the unit tests built with ASan+UBSan (`make SAN=1`
# into $SAN_BUILD, default build-san), then every unit test and the CLI
# golden cases (tests/cli/cli_cases.py) run under them. One TAP line per
# suite. ASan/LSan reports are written to files (log_path), so a report
# fails its suite even where the suite itself expects a non-zero exit;
# UBSan (built with -fno-sanitize-recover) ends the process with exit 87
# and prints to stderr, which the suite output is also searched for.
BUILD=${BUILD:-build}
SAN_BUILD=${SAN_BUILD:-build-san}
cd "$(dirname "$0")/../.." || exit 2
. tests/lib/tap.sh
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
# Leaks count; one report ends the process; the exit status says which.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87:log_path=$reports/ubsan"
export LSAN_OPTIONS="exitcode=88"

log=$reports/build.log
# BUILD is passed explicitly: run-all.sh exports BUILD, which would
# otherwise win over the Makefile's "build-san" default for SAN=1.
if make --no-print-directory -s SAN=1 BUILD="$SAN_BUILD" -j2 all tests >"$log" 2>&1; then
    ok 0 "make SAN=1 BUILD=$SAN_BUILD (library, CLI, unit tests)"
else
    ok 1 "make SAN=1 BUILD=$SAN_BUILD failed"
    tail -20 "$log" | sed 's/^/# /'
    done_testing
    exit 1
fi

# "ok N - NAME: P passed under ASan+UBSan" unless the suite failed, exited
# non-zero or left a sanitizer report.
verdict() {
    name=$1 rc=$2 out=$3
    p=$(grep -c '^ok ' "$out")
    f=$(grep -c '^not ok ' "$out")
    rep=$(ls "$reports" | grep -E '^(asan|ubsan)\.' | head -1)
    grep -qE 'runtime error:|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer' "$out" &&
        rep="in the output"
    if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && [ "$p" -gt 0 ] && [ -z "$rep" ]; then
        ok 0 "$name: $p passed under ASan+UBSan"
    else
        ok 1 "$name: exit $rc, $p passed, $f failed${rep:+, sanitizer report}"
        grep '^not ok ' "$out" | head -10 | sed 's/^/# /'
        for r in "$reports"/asan.* "$reports"/ubsan.*; do
            [ -f "$r" ] && head -30 "$r" | sed 's/^/# /'
        done
        grep -E -A12 'runtime error:|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer' "$out" |
            head -30 | sed 's/^/# /'
    fi
    rm -f "$reports"/asan.* "$reports"/ubsan.*
}

for t in "$SAN_BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    out=$reports/$(basename "$t").out
    "$t" >"$out" 2>&1
    verdict "$(basename "$t")" $? "$out"
done

out=$reports/cli.out
BUILD=$SAN_BUILD python3 tests/cli/cli_cases.py >"$out" 2>&1
verdict "tests/cli/cli_cases.py (numaguard CLI)" $? "$out"
done_testing
