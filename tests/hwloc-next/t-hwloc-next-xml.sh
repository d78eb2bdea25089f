#!/bin/sh
# make check-hwloc-next: which hwloc XML versions each build reads, and
# hwloc's own test XMLs planned by the hwloc 3.0 build ($BUILD).
#   - the 2.x conversions of tests/topologies' 1.x XMLs are faithful: the
#     2.x build ($NG_HWLOC_BASE) sees the same topology in both;
#   - the 2.x build given a version-3.0 XML (the snapshot's tests/hwloc/xml)
#     says so in one line naming both versions; the 3.0 build given a 1.x
#     XML likewise;
#   - the 3.0 build loads every XML of the snapshot's tests/hwloc/xml and
#     test_plan's grid holds over them (NG_TOPOLOGY_DIR).
# Run by tests/hwloc-next/check-hwloc-next.sh; elsewhere it skips.
if [ -z "${NG_HWLOC_BASE:-}" ] || [ -z "${NG_HWLOC_SNAPSHOT_XML:-}" ]; then
    echo "1..0 # SKIP make check-hwloc-next runs it"
    exit 0
fi
repo=${NG_HWLOC_REPO:-$(cd "$(dirname "$0")/../.." && pwd)}
new=$BUILD/numaguard
old=$NG_HWLOC_BASE
n=0
failed=0
ok() { # COND-STATUS DESCRIPTION [DETAILS]
    n=$((n + 1))
    if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
    [ -z "${3:-}" ] || printf '%s\n' "$3" | head -n 10 | sed 's/^/#   /'
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
old_hw=$("$old" --version | sed -n 's/^hwloc \([^ ]*\) running.*/\1/p')
new_hw=$("$new" --version | sed -n 's/^hwloc \([^ ]*\) running.*/\1/p')

# One-line refusal: exit 1, stderr one line containing every word given.
refusal() { # CLI FILE WORD...
    cli=$1 f=$2
    shift 2
    "$cli" topo --topology "$f" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "$f: exit $rc, $(cat "$tmp/err")"; return; }
    for w in "$@"; do
        grep -qF -- "$w" "$tmp/err" || { echo "$f: no '$w' in: $(cat "$tmp/err")"; return; }
    done
}

bad="" k=0
for f in "$NG_HWLOC_V2DIR"/*.xml; do
    name=$(basename "$f")
    k=$((k + 1))
    "$old" topo --json --topology "$repo/tests/topologies/$name" >"$tmp/a" 2>&1
    "$old" topo --json --topology "$f" >"$tmp/b" 2>&1
    cmp -s "$tmp/a" "$tmp/b" || bad="$bad $name"
done
[ -z "$bad" ]; ok $? "hwloc $old_hw's 2.x conversions of the $k hwloc 1.x XMLs: the hwloc $old_hw build sees the same topology (topo --json)" "$bad"

bad="" k=0
for f in "$NG_HWLOC_SNAPSHOT_XML"/*.xml; do
    grep -q '<topology version="3\.' "$f" || continue
    k=$((k + 1))
    bad="$bad$(refusal "$old" "$f" "is an hwloc 3.0 XML topology" "runs hwloc $old_hw")"
done
[ $k -gt 0 ] && [ -z "$bad" ]; ok $? "the hwloc $old_hw build refuses each of the snapshot's $k version-3.0 XMLs in one line naming 3.0 and $old_hw" "$bad"

bad="" k=0
for f in "$repo"/tests/topologies/*.xml; do
    grep -q '<topology version=' "$f" && continue
    k=$((k + 1))
    bad="$bad$(refusal "$new" "$f" "is an hwloc 1.x XML topology" "runs hwloc $new_hw")"
done
[ $k -gt 0 ] && [ -z "$bad" ]; ok $? "the hwloc $new_hw build refuses each of the corpus' $k hwloc 1.x XMLs in one line naming 1.x and $new_hw" "$bad"

NG_TOPOLOGY_DIR=$NG_HWLOC_SNAPSHOT_XML "$BUILD/tests/test_plan" >"$tmp/plan" 2>&1
rc=$?
sum=$(sed -n 's/^# \([0-9]* topologies ([0-9]* refused), [0-9]* plan cases\) checked$/\1/p' "$tmp/plan" | tail -n 1)
[ $rc -eq 0 ] && ! grep -q '^not ok' "$tmp/plan" && case $sum in *"(0 refused)"*) true ;; *) false ;; esac
ok $? "hwloc's own test XMLs (the snapshot's tests/hwloc/xml) with the hwloc $new_hw build: $sum, every property of test_plan holds" \
    "$(grep -E '^not ok|refused in one line' "$tmp/plan")"

echo "1..$n"
[ $failed -eq 0 ]
