#!/bin/sh
# The Makefile's promises about dependencies (README, docs/testing.md):
#   - a plain `make` on a machine without the build dependencies stops with
#     one line naming what is missing and `make deps`, and builds nothing
#     (the header list pointed at a missing header; as root also for real,
#     /usr/include hidden by an empty tmpfs in a mount namespace);
#   - the apt step is `make deps` alone: `make check` and `make demo` run it
#     first (check's set, the demo's smaller one), `make test-fast` never;
#   - nothing leaves a picture at the repository root (plan.svg was).
# Needs no root (the namespace case skips without it). TAP on stdout.
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
. tests/lib/tap.sh
command -v make >/dev/null 2>&1 || skip_all "make is missing"
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL

# one_line_stop DESC ARGS...: make ARGS stops with one line naming
# ng-missing.h or hwloc.h and 'make deps', exit 2, $tmp/b left unbuilt.
one_line_stop() {
    desc=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    is "$rc $(cat "$tmp/out" "$tmp/err" | wc -l)" "2 1" "$desc: exit 2, one line"
    like "$(cat "$tmp/err")" "numaguard cannot build: ($NEED) not found by .*; run 'make deps' as root" \
        "$desc: the line names $NEED and make deps"
    [ ! -e "$tmp/b" ]
    ok $? "$desc: nothing built"
}
NEED=ng-missing.h one_line_stop "make with a missing header" \
    make --no-print-directory BUILD="$tmp/b" NG_NEEDS="hwloc.h ng-missing.h"
NEED=ng-missing.h one_line_stop "make test-fast with a missing header" \
    make --no-print-directory BUILD="$tmp/b" NG_NEEDS="ng-missing.h" test-fast
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 &&
    unshare -m true 2>/dev/null; then
    NEED=hwloc.h one_line_stop "make with no /usr/include (mount namespace)" \
        unshare -m sh -c 'mount -t tmpfs none /usr/include && exec make --no-print-directory BUILD="$1"' \
        sh "$tmp/b"
else
    skip 3 "not root, or no mount namespace: the real missing-headers case"
fi

# The apt step: what make would run, without running it (-n; the
# recursive makes print their commands too).
make -n --no-print-directory check BUILD="$tmp/b" >"$tmp/check" 2>&1
like "$(head -n 3 "$tmp/check")" "^sh tests/install-deps.sh check$" "make check runs 'make deps' first (check's set)"
make -n --no-print-directory demo BUILD="$tmp/b" >"$tmp/demo" 2>&1
like "$(cat "$tmp/demo")" "^sh tests/install-deps.sh demo$" "make demo runs 'make deps' with the demo's set"
make -n --no-print-directory test-fast BUILD="$tmp/b" >"$tmp/fast" 2>&1
unlike "$(cat "$tmp/fast")" "install-deps|apt-get" "make test-fast installs nothing"
grep -q 'cc .*-c lib/base/strings.c' "$tmp/fast"
ok $? "make test-fast builds (it would compile lib/base/strings.c)"

set -- ./*.svg
[ ! -e "$1" ]
ok $? "no picture at the repository root"
[ -e "$1" ] && diag "found: $*"
grep -qx '/\*.svg' .gitignore
ok $? ".gitignore keeps pictures drawn at the root out of git (/*.svg)"
done_testing
