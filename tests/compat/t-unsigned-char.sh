#!/bin/sh
# The cheap native stand-in for make check-arm64: char is unsigned on
# aarch64 (and ppc64le, s390x), signed on x86-64. This tree's CLI built
# with -funsigned-char (into $BUILD/uchar, kept: later runs rebuild only
# what changed) must answer every case of tests/compat/compat.py exactly
# as the default build does: exit status, stdout and stderr, byte for
# byte, over every topology, the live machine and the error cases. A char
# compared with a negative value or used as an index would show here
# first. TAP on stdout; about 35 s for the comparison, the build once.
# BUILD, top, build (absolute); a skip without the CLI or python3.
. "$(dirname "$0")/lib.sh"
u=$build/uchar
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
if ! make -s BUILD="$u" CFLAGS="${CFLAGS:--O2 -g} -funsigned-char" "$u/numaguard" >"$log" 2>&1; then
    echo "not ok 1 - the CLI builds with -funsigned-char (-Werror)"
    tail -n 20 "$log" | sed 's/^/# /'
    echo "1..1"
    exit 1
fi
echo "ok 1 - the CLI builds with -funsigned-char (-Werror)"
# Numbered after the build's line; the explanation file is not used (the
# same tree on both sides: no difference is expected).
python3 tests/compat/compat.py --base "$build/numaguard" --new "$u/numaguard" \
    --base-name "the default (signed char) build" --differences /dev/null \
    --jobs "${NG_COMPAT_JOBS:-2}" | awk '
    /^(not )?ok [0-9]+ / {n++; sub(/ok [0-9]+ /, "ok " n + 1 " "); print; next}
    /^1\.\.[0-9]+$/ {next}
    {print}
    END {print "1.." n + 1}'
