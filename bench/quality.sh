#!/bin/sh
# make plan-quality: the planner's placement quality over tests/topologies,
# this tree against the previous release's planner (bench/quality.c, with
# the oracles of bench/quality_oracle.c).
# The previous release is taken from git at run time (NG_QUALITY_BASE,
# default 0ecd89c, the last release: planner v2; 7c74009 is planner v1) and
# built with its own Makefile into $BUILD/quality/prev-<base>; bench/quality.c
# uses only the public API, so it links against either library. Nothing old
# is committed.
set -eu
BUILD=${BUILD:-build}
BASE=${NG_QUALITY_BASE:-0ecd89c}
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
$CC $FLAGS -Ilib/include -o "$q/quality-now" bench/quality.c bench/quality_oracle.c \
    "$BUILD/libnumaguard.a" $LIBS
$CC $FLAGS -I"$pinc" -o "$q/quality-prev" bench/quality.c bench/quality_oracle.c \
    "$prev/build/libnumaguard.a" $LIBS
"$q/quality-prev" tests/topologies >"$q/prev.tsv"
"$q/quality-now" tests/topologies >"$q/now.tsv"
python3 - "$q/prev.tsv" "$q/now.tsv" "$BASE" <<'PY'
import sys
def load(p):
    rows = [l.rstrip("\n").split("\t") for l in open(p)]
    head = rows[0]
    return {r[0]: dict(zip(head, r)) for r in rows[1:]}
prev, now, base = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
fams = list(now) + ["all"]
for d in (prev, now):
    d["all"] = {k: str(sum(int(d[f][k]) for f in now)) for k in now["cpu-only"]
                if k not in ("family", "mean_min_eff_share", "worst_min_eff_share")}
def pair(f, k):
    return f"{prev[f].get(k, '?')} -> {now[f][k]}"
print(f"Placement quality over tests/topologies: previous release ({base}) -> this tree")
print("| family | plans | straddling tasks | cross-socket straddles | idle allocated cores | "
      "GPU tasks off their GPU's socket (while it had idle cores) | GPU tasks over two packages | "
      "smallest effective slice, share of cores/tasks (mean / worst) |")
print("|---|---|---|---|---|---|---|---|")
for f in fams:
    a, b = prev[f], now[f]
    eff = "" if f == "all" else (f"{float(a['mean_min_eff_share']):.2f} / {float(a['worst_min_eff_share']):.2f} -> "
                                 f"{float(b['mean_min_eff_share']):.2f} / {float(b['worst_min_eff_share']):.2f}")
    print(f"| {f} | {b['plans']} | {pair(f, 'straddling')} | {pair(f, 'cross_socket')} | "
          f"{pair(f, 'idle_cores')} of {b['alloc_cores']} | {pair(f, 'off_gpu_socket')} "
          f"({pair(f, 'off_gpu_socket_free')}) of {b['gpu_tasks']} | {pair(f, 'gpu_two_packages')} | {eff} |")
print()
print("Checked against exact oracles (bench/quality_oracle.c), CPU-only plans: a cut as good on")
print("the objective (smallest effective slice, smallest slice) and its first tie-breaks (idle")
print("cores, tasks over two NUMA nodes)")
print("| family | tasks over two L3s (held in part) | ... where an L3-aligned cut as good exists | "
      "plans mixing CPU groups | ... where an aligned cut with the plan's own sizes exists | "
      "idle cores | ... where a cut as good leaves fewer | GPU tasks over two L3s |")
print("|---|---|---|---|---|---|---|---|")
for f in fams:
    print(f"| {f} | {pair(f, 'l3_straddles')} | {pair(f, 'l3_avoidable')} | {pair(f, 'mixed_plans')} | "
          f"{pair(f, 'mixed_avoidable')} | {pair(f, 'cpu_only_idle')} | {pair(f, 'idle_equal_objective')} | "
          f"{pair(f, 'gpu_l3_straddles')} |")
PY
# Plan time, the goal <= 1 ms for 64 tasks on the largest topology (the
# GH200 model: 288 cores, 36 NUMA nodes): one GPU per task round robin,
# and CPU-only.
largest=tests/topologies/gh200-4superchip-synthetic.xml
for xml in $largest tests/topologies/power7-8numa-smt4.xml tests/topologies/xe8640-4xh100-spr8480-snc4.xml; do
    for kind in gpu cpu; do
        printf 'plan time, 64 %s tasks, %s: %s us now, %s us previous (median of 200)\n' "$kind" \
            "$(basename "$xml")" "$("$q/quality-now" --time "$xml" 64 200 $kind)" \
            "$("$q/quality-prev" --time "$xml" 64 200 $kind)"
    done
done
