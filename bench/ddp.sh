#!/bin/bash
# g. A real PyTorch DDP run (Debian's python3-torch, gloo) with DataLoader
# workers under --omp-guard=adaptive against auto (issue 27): 2 ranks on
# this node, each started by `numaguard exec` with LOCAL_RANK /
# LOCAL_WORLD_SIZE (torchrun's variables; Debian 12's torchrun itself fails
# under Python 3.11, so the ranks are started here), tests/omp/ddp.py
# training a small MLP with 2 DataLoader workers per rank. Checks that each
# rank and its workers keep the rank's CPUs and that the governor is loaded
# in both (adaptive), and compares the time per run, BENCH_OMP_RUNS (5)
# interleaved rounds. Writes a Markdown fragment to $1; exits 1 when a
# check or the target (adaptive >= 0.95x auto's speed) is missed.
set -u
out=$1
ng=$PWD/$BUILD/numaguard
RUNS=${BENCH_OMP_RUNS:-5}
EPOCHS=${BENCH_DDP_EPOCHS:-3}
PY=/usr/bin/python3
W=$BENCH_WORK/ddp
mkdir -p "$W"
unset OMP_NUM_THREADS LD_PRELOAD NUMAGUARD_OMP_CORES NUMAGUARD_OMP_DEBUG
if ! $PY -c 'import torch, torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
    echo "(g. DDP did not run: Debian's python3-torch with gloo is not installed.)" >"$out"
    exit 1
fi
# run GUARD ROUND: both ranks; their lines in $W/GUARD.ROUND
run() {
    local d=$W/run.$1.$2
    mkdir -p "$d"
    for r in 0 1; do
        MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29600 + $2)) WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r \
            LOCAL_WORLD_SIZE=2 timeout -k 5 600 "$ng" exec --omp-guard="$1" -- \
            $PY tests/omp/ddp.py "$EPOCHS" "$d" >"$d/rank.$r" 2>"$d/err.$r" &
    done
    wait
    cat "$d/rank.0" "$d/rank.1" >"$W/$1.$2"
}
for i in $(seq "$RUNS"); do
    o="auto adaptive"
    [ $((i % 2)) -eq 0 ] && o="adaptive auto"
    for g in $o; do run "$g" "$i"; done
done
# slowest rank's seconds per round
secs() { for i in $(seq "$RUNS"); do sed -n 's/.* secs \([0-9.]*\) .*/\1/p' "$W/$1.$i" | sort -g | tail -1; done; }
secs auto >"$W/auto.secs"
secs adaptive >"$W/adaptive.secs"
ratio=$(python3 -c 'import statistics, sys
a = [float(x) for x in open(sys.argv[1]).read().split()]
b = [float(x) for x in open(sys.argv[2]).read().split()]
r = [y / x for x, y in zip(a, b) if x > 0]
print("%.2f" % (statistics.median(r) if r else 0))' "$W/adaptive.secs" "$W/auto.secs")
rc=0
ok=PASS
python3 -c "import sys; sys.exit(0 if float('$ratio') >= 0.95 else 1)" || { ok=FAIL; rc=1; }
# Placement: rank r on its own CPUs, its workers on the same, governor in both.
place=PASS
for i in $(seq "$RUNS"); do
    for r in 0 1; do
        l=$(grep "^rank $r " "$W/adaptive.$i")
        c=$(echo "$l" | sed -n 's/.* cpus \([^ ]*\) .*/\1/p')
        w=$(echo "$l" | sed -n 's/.* workers \([^ ]*\) .*/\1/p')
        [ -n "$c" ] && [ "$w" = "$c/1;$c/1" ] && echo "$l" | grep -q ' governed 1 ' || place=FAIL
    done
done
[ $place = PASS ] || rc=1
{
echo "### g. PyTorch DDP with DataLoader workers under \`--omp-guard=adaptive\` (issue 27)"
echo
echo "Debian's python3-torch $($PY -c 'import torch; print(torch.__version__)'), gloo, 2 ranks started by"
echo "\`numaguard exec --omp-guard=auto|adaptive\` (LOCAL_RANK/LOCAL_WORLD_SIZE), each training"
echo "tests/omp/ddp.py ($EPOCHS epochs, 2 DataLoader workers); seconds of the slower rank, $RUNS interleaved rounds:"
echo
echo "| --omp-guard | median s | rank lines (last round) |"
echo "|---|---|---|"
for g in auto adaptive; do
    echo "| $g | $(python3 bench/stats.py <"$W/$g.secs") | \`$(tr '\n' ' ' <"$W/$g.$RUNS" | sed 's/ *$//')\` |"
done
echo
echo "Ranks and workers keep the rank's CPUs, governor loaded in both: **$place**."
echo "Target (median of per-round ratios): adaptive's speed >= 0.95x auto's: **$ratio ($ok)**."
echo
} >"$out"
exit $rc
