#!/bin/sh
# A new memory mode cannot go without its rows: in a scratch copy of lib/,
# a mode NG_MEM_MODE_SCRATCH added before NG_MEM_MODE_COUNT makes every
# file with a table indexed by ng_mem_mode fail to compile, each naming
# its table (the _Static_asserts of lib/options/policy.c, lib/task/
# mempolicy.c, lib/draw/draw_model.c); the real tree compiles them. The
# rows themselves are checked by test_mem_modes. docs/design.md.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
. tests/lib/tap.sh
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || skip_all "no C compiler ($CC)"
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
cp -R lib "$tmp/"
flags="-std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -fsyntax-only -I$tmp/lib/include -I$tmp/lib"
tables="lib/options/policy.c:mem_mode_names lib/task/mempolicy.c:kernel_modes lib/draw/draw_model.c:draw_modes"
for t in $tables; do
    f=${t%%:*}
    $CC $flags "$tmp/$f" 2>"$tmp/err"
    ok $? "$f compiles as it is"
done
h=$tmp/lib/include/numaguard/options.h
sed -i 's|^    NG_MEM_MODE_COUNT |    NG_MEM_MODE_SCRATCH,\n&|' "$h"
grep -q 'NG_MEM_MODE_SCRATCH,' "$h"
ok $? "the scratch copy has a new mode before NG_MEM_MODE_COUNT"
for t in $tables; do
    f=${t%%:*} table=${t#*:}
    $CC $flags "$tmp/$f" 2>"$tmp/err"
    rc=$?
    [ $rc -ne 0 ] && grep -q "$table: one" "$tmp/err"
    ok $? "$f no longer compiles: its table $table has no row for the new mode"
    [ $rc -ne 0 ] || diag "$(head -n 3 "$tmp/err")"
done
done_testing
