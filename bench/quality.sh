#!/bin/sh
# make plan-quality: the planner's placement quality over tests/topologies,
# this tree against the previous release's planner (bench/quality.c).
# The previous release is taken from git at run time (NG_QUALITY_BASE,
# default 7c74009, the last commit of planner v1) and built with its own
# Makefile into $BUILD/quality/prev-<base>; bench/quality.c uses only the
# public API, so it links against either library. Nothing old is committed.
set -eu
BUILD=${BUILD:-build}
BASE=${NG_QUALITY_BASE:-7c74009}
CC=${CC:-cc}
FLAGS="-O2 -std=c11 -Wall -Wextra -D_GNU_SOURCE"
LIBS="-lhwloc -lnuma -ldl"
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
make --no-print-directory BUILD="$BUILD" "$BUILD/libnumaguard.a" >/dev/null
q=$BUILD/quality
prev=$q/prev-$BASE
mkdir -p "$q"
if [ ! -f "$prev/build/libnumaguard.a" ]; then
    rm -rf "$prev" && mkdir -p "$prev"
    git archive "$BASE" | tar -x -C "$prev"
    make -C "$prev" --no-print-directory BUILD=build build/libnumaguard.a >/dev/null
fi
# The previous release's public header is lib/include/numaguard.h (lib/include/ since 0.1's
# restructure); whichever it has.
pinc=$prev/lib/include
[ -d "$pinc" ] || pinc=$prev/lib
$CC $FLAGS -Ilib/include -o "$q/quality-now" bench/quality.c "$BUILD/libnumaguard.a" $LIBS
$CC $FLAGS -I"$pinc" -o "$q/quality-prev" bench/quality.c "$prev/build/libnumaguard.a" $LIBS
"$q/quality-prev" tests/topologies >"$q/prev.tsv"
"$q/quality-now" tests/topologies >"$q/now.tsv"
python3 - "$q/prev.tsv" "$q/now.tsv" "$BASE" <<'PY'
import sys
def load(p):
    rows = [l.rstrip("\n").split("\t") for l in open(p)]
    head = rows[0]
    return {r[0]: dict(zip(head, r)) for r in rows[1:]}
prev, now, base = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
print(f"Placement quality over tests/topologies: previous planner ({base}) -> this tree")
print("| family | plans | straddling tasks | cross-socket straddles | idle allocated cores | GPU tasks off their GPU's socket | smallest effective slice (mean / worst, share of cores/tasks) |")
print("|---|---|---|---|---|---|---|")
tot = {}
for fam in now:
    a, b = prev[fam], now[fam]
    def pair(k):
        return f"{a[k]} -> {b[k]}"
    idle = f"{a['idle_cores']} -> {b['idle_cores']} of {b['alloc_cores']}"
    off = (f"{a['off_gpu_socket']} -> {b['off_gpu_socket']} of {b['gpu_tasks']} "
           f"({a['off_gpu_socket_free']} -> {b['off_gpu_socket_free']} while it had idle cores)")
    eff = (f"{float(a['mean_min_eff_share']):.2f} / {float(a['worst_min_eff_share']):.2f} -> "
           f"{float(b['mean_min_eff_share']):.2f} / {float(b['worst_min_eff_share']):.2f}")
    print(f"| {fam} | {b['plans']} | {pair('straddling')} | {pair('cross_socket')} | {idle} | {off} | {eff} |")
    for k in ("plans", "straddling", "cross_socket", "idle_cores", "alloc_cores", "off_gpu_socket",
              "off_gpu_socket_free", "gpu_tasks"):
        tot.setdefault(k, [0, 0])
        tot[k][0] += int(a[k]); tot[k][1] += int(b[k])
t = tot
print(f"| all | {t['plans'][1]} | {t['straddling'][0]} -> {t['straddling'][1]} | "
      f"{t['cross_socket'][0]} -> {t['cross_socket'][1]} | {t['idle_cores'][0]} -> {t['idle_cores'][1]} of "
      f"{t['alloc_cores'][1]} | {t['off_gpu_socket'][0]} -> {t['off_gpu_socket'][1]} of {t['gpu_tasks'][1]} "
      f"({t['off_gpu_socket_free'][0]} -> {t['off_gpu_socket_free'][1]} while it had idle cores) | |")
PY
largest=tests/topologies/gh200-4superchip-synthetic.xml
for xml in $largest tests/topologies/power7-8numa-smt4.xml tests/topologies/xe8640-4xh100-spr8480-snc4.xml; do
    printf 'plan time, 64 tasks, %s: %s us now, %s us previous (median of 200)\n' "$(basename "$xml")" \
        "$("$q/quality-now" --time "$xml" 64 200)" "$("$q/quality-prev" --time "$xml" 64 200)"
done
