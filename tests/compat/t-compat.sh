#!/bin/sh
# The numaguard CLI against the reference release (tests/compat/base):
# exit status, stdout and stderr of topo, plan, exec --dry-run and error
# cases over every topology of tests/topologies, byte for byte
# (tests/compat/compat.py; docs/testing.md). TAP on stdout.
#   NG_COMPAT_BASE=REV          another reference (any revision git knows)
#   NG_COMPAT_REPORT=FILE       every case id with identical/explained/different
#   NG_COMPAT_ONLY=GLOB         only the cases whose id matches
#   NG_COMPAT_JOBS=N            parallel runs (default 2)
#   NG_COMPAT_DIFFERENCES=FILE  explanations instead of tests/compat/differences.tsv
# BUILD, top, build (absolute); a skip without the CLI or python3.
. "$(dirname "$0")/lib.sh"
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
ref=$(BUILD=$BUILD sh tests/compat/build-base.sh 2>"$err")
rc=$?
if [ $rc -eq 77 ]; then
    echo "ok 1 # SKIP $(tail -n 1 "$err" | sed 's/^compat: //')"
    echo "1..1"
    exit 0
fi
sed 's/^/# /' "$err"
if [ $rc -ne 0 ]; then
    echo "not ok 1 - compat: the reference release did not build"
    echo "1..1"
    exit 1
fi
name=$(git -C "$top" rev-parse --short=7 "$(sed -n 's/ .*//p' "$ref/../stamp")" 2>/dev/null) ||
    name=reference
set -- --base "$ref/build/numaguard" --new "$build/numaguard" --base-name "$name" \
    --jobs "${NG_COMPAT_JOBS:-2}"
[ -n "${NG_COMPAT_DIFFERENCES:-}" ] && set -- "$@" --differences "$NG_COMPAT_DIFFERENCES"
[ -n "${NG_COMPAT_REPORT:-}" ] && set -- "$@" --report "$NG_COMPAT_REPORT"
[ -n "${NG_COMPAT_ONLY:-}" ] && set -- "$@" --only "$NG_COMPAT_ONLY"
exec python3 tests/compat/compat.py "$@"
