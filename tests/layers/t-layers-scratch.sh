#!/bin/sh
# The layer check cannot be bypassed through a folder it does not know: in
# a scratch copy of lib/ (the objects of $BUILD reused), a new folder
# lib/zzz relays a call from lib/gpu up to lib/plan (gpu -> zzz -> plan).
#   1. layers.py fails, naming lib/zzz as in no layer;
#   2. with lib/zzz given a rank in the scratch copy's table (2, like gpu:
#      base and topo below it), it fails on the upward call zzz -> plan.
# The real tree is not touched. `make check-layers` runs it after t-layers.sh.
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
. tests/lib/tap.sh
case $BUILD in /*) build=$BUILD ;; *) build=$top/$BUILD ;; esac
[ -f "$build/lib/plan/plan.o" ] || skip_all "$BUILD/lib is not built (make all)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is missing"
CC=${CC:-cc}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/layers" "$tmp/docs" "$tmp/build"
cp -R lib spank tools "$tmp/"
cp tests/layers/layers.py "$tmp/tests/layers/"
cp docs/api.md "$tmp/docs/"
cp -R "$build/lib" "$build/tools" "$tmp/build/"
[ -d "$build/spank" ] && cp -R "$build/spank" "$tmp/build/"

# The relay: a GPU file calls lib/zzz, which calls the planner.
mkdir -p "$tmp/lib/zzz" "$tmp/build/lib/zzz"
# relay FILE FN CALLEE: FILE defines FN, which calls CALLEE (an ngi_*
# function of another folder, declared by hand: nm sees the call).
relay() {
    cat >"$tmp/$1" <<C
/* Scratch: a call from $(dirname "$1") to $3, for t-layers-scratch.sh. */
struct ngi_planner;
void $3(struct ngi_planner *p);
void $2(struct ngi_planner *p);
void $2(struct ngi_planner *p)
{
    $3(p);
}
C
}
relay lib/zzz/relay.c ngi_zzz_relay ngi_plan_free_domains
relay lib/gpu/zzz_user.c ngi_gpu_zzz_user ngi_zzz_relay
nm "$build/lib/plan/"*.o | grep -q ' T ngi_plan_free_domains$'
ok $? "lib/plan defines ngi_plan_free_domains (the call the relay makes)"
$CC -std=c11 -Wall -Wextra -Werror -fPIC -c "$tmp/lib/zzz/relay.c" -o "$tmp/build/lib/zzz/relay.o" &&
    $CC -std=c11 -Wall -Wextra -Werror -fPIC -c "$tmp/lib/gpu/zzz_user.c" -o "$tmp/build/lib/gpu/zzz_user.o"
ok $? "the scratch files lib/zzz/relay.c and lib/gpu/zzz_user.c compile"

# layers_fail WHAT: run the scratch copy's layers.py into $out; it must fail.
layers_fail() {
    out=$(cd "$tmp" && BUILD=build python3 tests/layers/layers.py 2>&1)
    rc=$?
    [ $rc -ne 0 ]
    ok $? "layers.py fails with $1 (exit $rc)"
}
layers_fail "lib/zzz relaying gpu -> zzz -> plan"
like "$out" "not ok [0-9]+ - every folder of lib/ is in the layer table" "it names the check that fails"
like "$out" "lib/zzz is in no layer" "and the folder"
is "$(printf '%s\n' "$out" | grep -c '^not ok')" 1 "that check alone fails (the scratch copy is the tree plus the relay)"

# Ranked like lib/gpu, the relay is an upward call.
sed 's|^    "lib/gpu":     (2, \["lib/base", "lib/topo"\]),$|&\n    "lib/zzz":     (2, ["lib/base", "lib/topo"]),|' \
    tests/layers/layers.py >"$tmp/tests/layers/layers.py"
grep -q '"lib/zzz"' "$tmp/tests/layers/layers.py"
ok $? "the scratch table ranks lib/zzz at 2 (base and topo below it)"
layers_fail "lib/zzz ranked"
like "$out" "^ok [0-9]+ - every folder of lib/ is in the layer table" "every folder is ranked now"
like "$out" "lib/zzz/relay.c -> lib/plan/[a-z_]+\.c \(upward\): ngi_plan_free_domains" \
    "the upward call zzz -> plan is named"
like "$out" "lib/gpu/zzz_user.c -> lib/zzz/relay.c \(upward\)" \
    "and gpu -> zzz (a folder of the same rank)"
is "$(printf '%s\n' "$out" | grep '^not ok' | sed 's/^not ok [0-9]* - //')" \
    "no library file calls a higher layer or a folder of its own rank" "that check alone fails"
done_testing
