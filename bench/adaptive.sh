#!/bin/bash
# f. --omp-guard=adaptive (issue 27): the pool probe (tests/helpers/omp_pool.c,
# 16 pthread workers each running small OpenMP regions, after the main
# thread started OpenMP and forked 2 children) and a single caller (the
# same probe with 1 worker), each built with gcc (libgomp) and clang
# (LLVM libomp), under: no variables (all cores), plain OMP_NUM_THREADS=1,
# numaguard exec --omp-guard (auto), --omp-guard=1 and --omp-guard=adaptive.
# Every configuration runs once per round, rounds interleaved (every other
# one reversed), BENCH_OMP_RUNS (5) rounds; the ratios are the median of
# the per-round ratios. Then the same pool through srun with the plugin
# (the test build, test_omp_preload= naming this build's governor).
# Writes a Markdown fragment to $1; exits 1 when a target is missed.
# Needs: $BENCH_BIN (omp_pool, omp_pool_clang), $BUILD (numaguard,
# libnumaguard-omp.so, numaguard-faults.so).
set -u
out=$1
bin=$BENCH_BIN
ng=$PWD/$BUILD/numaguard
RUNS=${BENCH_OMP_RUNS:-5}
SECS=${BENCH_POOL_SECONDS:-1.0}
unset OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND OMP_WAIT_POLICY GOMP_SPINCOUNT MKL_NUM_THREADS \
    LD_PRELOAD NUMAGUARD_OMP_CORES NUMAGUARD_OMP_DEBUG
med() { python3 bench/stats.py "$@" | sed 's/\.[0-9]*$//'; }
paired() {
    python3 -c 'import statistics, sys
a = [float(x) for x in open(sys.argv[1]).read().split()]
b = [float(x) for x in open(sys.argv[2]).read().split()]
r = [x / y for x, y in zip(a, b) if y > 0]
print("%.2f" % (statistics.median(r) if r else 0))' "$1" "$2"
}
atleast() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$1" "$2"; }
W=$BENCH_WORK/adaptive
mkdir -p "$W"
rc=0

declare -A cmd
cmd[all]=""
cmd[omp1]="env OMP_NUM_THREADS=1"
cmd[auto]="$ng exec --numa-policy=none --omp-guard --"
cmd[guard1]="$ng exec --numa-policy=none --omp-guard=1 --"
cmd[adaptive]="$ng exec --numa-policy=none --omp-guard=adaptive --"
order="omp1 adaptive guard1 auto all"
rate() { sed -n 's/^steps=.* rate=\([0-9]*\).*/\1/p'; }
for rt in gcc clang; do
    p=$bin/omp_pool
    [ $rt = clang ] && p=$bin/omp_pool_clang
    for w in 16 1; do
        for c in $order; do : >"$W/$rt.$w.$c"; done
    done
    for i in $(seq "$RUNS"); do
        [ $((i % 2)) -eq 0 ] && o=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ') || o=$order
        for w in 16 1; do
            for c in $o; do
                # shellcheck disable=SC2086
                ${cmd[$c]} "$p" "$w" "$SECS" 2 2>/dev/null | rate >>"$W/$rt.$w.$c"
            done
        done
    done
done

{
echo "### f. \`--omp-guard=adaptive\`: the pool and a single caller (issue 27)"
echo
echo "\`tests/helpers/omp_pool.c\` built with gcc (libgomp) and clang (LLVM libomp):"
echo "16 pthread workers (the pool), or 1 (a single caller), each running small"
echo "OpenMP regions for $SECS s after the main thread started OpenMP and forked 2"
echo "children; steps/s summed over the workers, median of $RUNS interleaved rounds."
echo "\`exec\` is \`numaguard exec --numa-policy=none\`."
echo
echo "| runtime | workers | no variables (all $(nproc) cores) | OMP_NUM_THREADS=1 | exec --omp-guard (auto) | exec --omp-guard=1 | exec --omp-guard=adaptive |"
echo "|---|---|---|---|---|---|---|"
for rt in gcc clang; do
    for w in 16 1; do
        echo "| $rt | $w | $(med <"$W/$rt.$w.all") | $(med <"$W/$rt.$w.omp1") | $(med <"$W/$rt.$w.auto") | $(med <"$W/$rt.$w.guard1") | $(med <"$W/$rt.$w.adaptive") |"
    done
done
echo
echo "Targets (median of the per-round ratios):"
echo
echo "| runtime | pool: adaptive / OMP_NUM_THREADS=1 (>= 0.90) | pool: auto / OMP_NUM_THREADS=1 | single caller: adaptive / all cores (>= 0.95) | single caller: =1 / all cores |"
echo "|---|---|---|---|---|"
for rt in gcc clang; do
    rp=$(paired "$W/$rt.16.adaptive" "$W/$rt.16.omp1")
    ra=$(paired "$W/$rt.16.auto" "$W/$rt.16.omp1")
    rs=$(paired "$W/$rt.1.adaptive" "$W/$rt.1.all")
    r1=$(paired "$W/$rt.1.guard1" "$W/$rt.1.all")
    okp=PASS oks=PASS
    atleast "$rp" 0.90 || { okp=FAIL; rc=1; }
    atleast "$rs" 0.95 || { oks=FAIL; rc=1; }
    echo "| $rt | **$rp ($okp)** | $ra | **$rs ($oks)** | $r1 |"
done
echo
} >"$out"

# ---- the same pool through srun with the plugin ----
so=$PWD/$BUILD/numaguard-faults.so
if [ ! -f "$so" ] || ! command -v slurmctld >/dev/null 2>&1; then
    echo "(The srun rows did not run: $so or Slurm missing.)" >>"$out"
    exit $rc
fi
. tests/slurm/cluster.sh
ngc_init "$BENCH_WORK/adaptive-cluster" || exit 1
NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY= NGC_GPUS=0 \
    NGC_PLUGSTACK="required $so test_omp_preload=$PWD/$BUILD/libnumaguard-omp.so" ngc_start || {
    echo "(The srun rows did not run: the private Slurm did not start.)" >>"$out"
    exit $rc
}
declare -A sargs
sargs[omp1]="--export=ALL,OMP_NUM_THREADS=1"
sargs[guard1]="--omp-guard=1"
sargs[adaptive]="--omp-guard=adaptive"
sorder="omp1 adaptive guard1"
for c in $sorder; do : >"$W/srun.$c"; done
n=$(nproc)
for i in $(seq "$RUNS"); do
    for c in $sorder; do
        ngc_wait_idle 20
        # shellcheck disable=SC2086
        srun -n 1 -c "$n" ${sargs[$c]} "$bin/omp_pool" 16 "$SECS" 2 2>/dev/null | rate >>"$W/srun.$c"
    done
done
ngc_teardown
rs=$(paired "$W/srun.adaptive" "$W/srun.omp1")
ok=PASS
atleast "$rs" 0.90 || { ok=FAIL; rc=1; }
{
echo "The same pool (gcc) through \`srun -n 1 -c $n\` with the plugin, $RUNS interleaved rounds:"
echo
echo "| srun | steps/s |"
echo "|---|---|"
echo "| \`--export=ALL,OMP_NUM_THREADS=1\` | $(med <"$W/srun.omp1") |"
echo "| \`--omp-guard=1\` | $(med <"$W/srun.guard1") |"
echo "| \`--omp-guard=adaptive\` | $(med <"$W/srun.adaptive") |"
echo
echo "Target: srun --omp-guard=adaptive >= 0.90x srun with OMP_NUM_THREADS=1: **$rs ($ok)**."
echo
} >>"$out"
exit $rc
