#!/bin/sh
# make plan-quality: the planner's placement quality over tests/topologies,
# this tree against the previous release's planner (bench/quality.c, with
# the oracles of bench/quality_oracle.c).
# The releases compared are taken from git at run time (NG_QUALITY_BASES,
# default "b181f95 b89b623": planner v3 and planner v4, the last two
# releases; 0ecd89c is planner v2, 7c74009 planner v1) and each built with
# its own Makefile into
# $BUILD/quality/prev-<base>; bench/quality.c uses only the public API, so
# it links against any of them. Nothing old is committed. The table:
# bench/quality_table.py.
set -eu
BUILD=${BUILD:-build}
BASES=${NG_QUALITY_BASES:-${NG_QUALITY_BASE:-b181f95 b89b623}}
CC=${CC:-cc}
FLAGS="-O2 -std=c11 -Wall -Wextra -D_GNU_SOURCE"
LIBS="-lhwloc -lnuma -ldl"
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
make --no-print-directory BUILD="$BUILD" "$BUILD/libnumaguard.a" >/dev/null
q=$BUILD/quality
mkdir -p "$q"
$CC $FLAGS -Ilib/include -o "$q/quality-now" bench/quality.c bench/quality_oracle.c \
    "$BUILD/libnumaguard.a" $LIBS
# The plans where a GPU task is widened (rule 3) are taken from every
# planner compared: each run writes the plans it widens (NG_QUALITY_R2_OUT),
# and the measuring runs read their union (NG_QUALITY_R2_IN), so the
# "outside widened plans" columns count the same plans for every planner
# (a plan b89b623 widened at exactly half and this tree does not is
# outside neither).
for BASE in $BASES; do
    prev=$q/prev-$BASE
    if [ ! -f "$prev/build/libnumaguard.a" ]; then
        rm -rf "$prev" && mkdir -p "$prev"
        git archive "$BASE" | tar -x -C "$prev"
        make -C "$prev" --no-print-directory BUILD=build build/libnumaguard.a >/dev/null
    fi
    # The release's public header: lib/include/numaguard.h, or lib/numaguard.h
    # before 0.1's restructure; whichever it has.
    pinc=$prev/lib/include
    [ -d "$pinc" ] || pinc=$prev/lib
    $CC $FLAGS -I"$pinc" -o "$q/quality-$BASE" bench/quality.c bench/quality_oracle.c \
        "$prev/build/libnumaguard.a" $LIBS
done
: >"$q/r2.txt"
for run in now $BASES; do
    NG_QUALITY_R2_OUT=$q/r2-$run.txt "$q/quality-$run" tests/topologies >/dev/null
    cat "$q/r2-$run.txt" >>"$q/r2.txt"
done
# NG_QUALITY_PLANS: each planner's per-plan figures into $q/NAME.plans, for
# bench/quality_diff.py (which plans make a column differ).
NG_QUALITY_PLANS=$q/now.plans NG_QUALITY_R2_IN=$q/r2.txt "$q/quality-now" tests/topologies >"$q/now.tsv"
tsvs=""
for BASE in $BASES; do
    NG_QUALITY_PLANS=$q/$BASE.plans NG_QUALITY_R2_IN=$q/r2.txt "$q/quality-$BASE" tests/topologies >"$q/$BASE.tsv"
    tsvs="$tsvs $q/$BASE.tsv $BASE"
done
# shellcheck disable=SC2086
python3 bench/quality_table.py $tsvs "$q/now.tsv" "this tree"
# Plan time, the goal <= 1 ms for 64 tasks on the largest topology (the
# GH200 model: 288 cores, 36 NUMA nodes): one GPU per task round robin,
# and CPU-only.
largest=tests/topologies/gh200-4superchip-synthetic.xml
for xml in $largest tests/topologies/power7-8numa-smt4.xml tests/topologies/xe8640-4xh100-spr8480-snc4.xml; do
    for kind in gpu cpu; do
        line="plan time, 64 $kind tasks, $(basename "$xml"): $("$q/quality-now" --time "$xml" 64 200 $kind) us now"
        for BASE in $BASES; do
            line="$line, $("$q/quality-$BASE" --time "$xml" 64 200 $kind) us $BASE"
        done
        echo "$line (median of 200)"
    done
done
