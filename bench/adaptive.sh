#!/bin/bash
# f. --omp-guard=adaptive (issue 27), two probes, both tests/helpers/omp_pool.c
# (the main thread starts OpenMP and forks 2 children, then pthread workers
# run OpenMP regions), each built with gcc (libgomp) and clang (LLVM libomp),
# under: no variables (all cores), plain OMP_NUM_THREADS=1, numaguard exec
# --omp-guard (auto), --omp-guard=1 and --omp-guard=adaptive.
#
#  - The pool: 16 workers, small regions (256 doubles: the field report's
#    case, where a team costs more than it saves). Target: adaptive >= 0.90x
#    of OMP_NUM_THREADS=1.
#  - A single caller: 1 worker, regions of BENCH_SINGLE_ELEMS doubles
#    (4194304, 32 MiB), big enough that a team of all the cores clearly
#    beats one thread. With the pool's 256-double regions a 2-thread team
#    is 2-100x SLOWER than 1 thread here (gcc 0.01-0.15x, clang 0.3-0.6x),
#    so those rows compared nothing (and adaptive "won" 11x with gcc only
#    through its start-up window, below).
#    libgomp needs the big size in this probe: the main thread's team
#    keeps its thread, so a worker's team makes 3 libgomp threads on 2
#    CPUs, libgomp then spins only 100 rounds before sleeping, and every
#    region pays a futex wake-up of its team (measured on the 2-vCPU VM,
#    plain OpenMP, 2 threads / 1 thread: 0.5x at 65536 doubles, 0.8-0.9x
#    at 131072, 1.2-1.5x at 524288, 1.6-1.9x at 2-4 Mi; clang's libomp
#    keeps spinning: 1.7x at 16384). The worker first runs BENCH_SINGLE_WARMUP
#    (0.3) s of regions uncounted: the main thread's start-up region counts
#    it as a caller for the governor's 100 ms window (the worker gets half
#    the cores meanwhile), and libomp's team of the main thread spins for
#    its 200 ms blocktime; both are start-up, not the steady state the
#    target is about. Target: adaptive >= 0.95x of all cores. The probe is
#    checked too: all cores must be >= 1.5x of OMP_NUM_THREADS=1, else the
#    single-caller verdict is "probe not meaningful" (and the script fails).
#  - The start-up window itself, reported, not a target: the single caller
#    counted from its first region (no warm-up), all cores and adaptive.
#
# Every configuration runs once per round, rounds interleaved (every other
# one reversed), BENCH_OMP_RUNS (5) rounds; the ratios are the median of the
# per-round ratios. Then the same pool through srun with the plugin (the
# test build, test_omp_preload= naming this build's governor).
# Writes a Markdown fragment to $1; exits 1 when a target is missed.
# Needs: $BENCH_BIN (omp_pool, omp_pool_clang), $BUILD (numaguard,
# libnumaguard-omp.so, numaguard-faults.so).
set -u
out=$1
bin=$BENCH_BIN
ng=$PWD/$BUILD/numaguard
RUNS=${BENCH_OMP_RUNS:-5}
SECS=${BENCH_POOL_SECONDS:-1.0}
ELEMS=${BENCH_SINGLE_ELEMS:-4194304}
WARM=${BENCH_SINGLE_WARMUP:-0.3}
load_start=$(cut -d' ' -f1 /proc/loadavg)
unset OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND OMP_WAIT_POLICY GOMP_SPINCOUNT MKL_NUM_THREADS \
    LD_PRELOAD NUMAGUARD_OMP_CORES NUMAGUARD_OMP_DEBUG
. bench/ratios.sh
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
    for w in 16 1 cold; do
        for c in $order; do : >"$W/$rt.$w.$c"; done
    done
    for i in $(seq "$RUNS"); do
        [ $((i % 2)) -eq 0 ] && o=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ') || o=$order
        for w in 16 1 cold; do
            args="16 $SECS 2"                   # the pool: small regions (the default 256)
            [ $w = 1 ] && args="1 $SECS 2 $ELEMS $WARM"
            [ $w = cold ] && args="1 $SECS 2 $ELEMS"
            for c in $o; do
                [ $w = cold ] && [ "$c" != all ] && [ "$c" != adaptive ] && continue
                # shellcheck disable=SC2086
                ${cmd[$c]} "$p" $args 2>/dev/null | rate >>"$W/$rt.$w.$c"
            done
        done
    done
done
load_end=$(cut -d' ' -f1 /proc/loadavg)

{
echo "### f. \`--omp-guard=adaptive\`: the pool and a single caller (issue 27)"
echo
echo "\`tests/helpers/omp_pool.c\` built with gcc (libgomp) and clang (LLVM libomp); the"
echo "main thread starts OpenMP and forks 2 children, then pthread workers run OpenMP"
echo "regions for $SECS s; steps/s summed over the workers, median of $RUNS interleaved"
echo "rounds. \`exec\` is \`numaguard exec --numa-policy=none\`. 1-minute load average"
echo "$load_start before these rows, $load_end after them (the pool rows themselves keep"
echo "16-32 threads runnable: that figure is mostly the bench's own)."
echo
echo "- **pool**: 16 workers, regions of 256 doubles (the field report's case: a"
echo "  team costs more than such a region saves);"
echo "- **single caller**: 1 worker, regions of $ELEMS doubles, big enough that a"
echo "  team of all the cores beats one thread (checked below: >= 1.5x, else the"
echo "  probe measures nothing). With the pool's small regions a 2-thread team is"
echo "  far slower than 1 thread on this machine, and with libgomp a worker's team"
echo "  sleeps between regions (the main thread's team keeps its thread: 3 libgomp"
echo "  threads on 2 CPUs, so libgomp barely spins), which is why the regions are"
echo "  this big. The worker runs $WARM s of regions uncounted first: the main"
echo "  thread's start-up region counts as a second caller for the governor's"
echo "  100 ms window, and libomp's team of the main thread spins for 200 ms."
echo "  That start-up is shown on its own in the last table."
echo
echo "| runtime | probe | no variables (all $(nproc) cores) | OMP_NUM_THREADS=1 | exec --omp-guard (auto) | exec --omp-guard=1 | exec --omp-guard=adaptive |"
echo "|---|---|---|---|---|---|---|"
for rt in gcc clang; do
    echo "| $rt | pool | $(med <"$W/$rt.16.all") | $(med <"$W/$rt.16.omp1") | $(med <"$W/$rt.16.auto") | $(med <"$W/$rt.16.guard1") | $(med <"$W/$rt.16.adaptive") |"
    echo "| $rt | single caller | $(med <"$W/$rt.1.all") | $(med <"$W/$rt.1.omp1") | $(med <"$W/$rt.1.auto") | $(med <"$W/$rt.1.guard1") | $(med <"$W/$rt.1.adaptive") |"
done
echo
echo "Targets (median of the per-round ratios):"
echo
echo "| runtime | pool: adaptive / OMP_NUM_THREADS=1 (>= 0.90) | pool: auto / OMP_NUM_THREADS=1 | single caller: all cores / OMP_NUM_THREADS=1 (probe, >= 1.5) | single caller: adaptive / all cores (>= 0.95) | single caller: =1 / all cores |"
echo "|---|---|---|---|---|---|"
for rt in gcc clang; do
    rp=$(paired "$W/$rt.16.adaptive" "$W/$rt.16.omp1")
    ra=$(paired "$W/$rt.16.auto" "$W/$rt.16.omp1")
    rw=$(paired "$W/$rt.1.all" "$W/$rt.1.omp1")
    rs=$(paired "$W/$rt.1.adaptive" "$W/$rt.1.all")
    r1=$(paired "$W/$rt.1.guard1" "$W/$rt.1.all")
    okp=PASS oks=PASS okw=ok
    atleast "$rp" 0.90 || { okp=FAIL; rc=1; }
    atleast "$rs" 0.95 || { oks=FAIL; rc=1; }
    atleast "$rw" 1.5 || { okw="too small"; oks="probe not meaningful"; rc=1; }
    echo "| $rt | **$rp ($okp)** | $ra | $rw ($okw) | **$rs ($oks)** | $r1 |"
done
echo
echo "The start-up window (not a target): the single caller counted from its first"
echo "region, no warm-up, $SECS s."
echo
echo "| runtime | all cores | adaptive | adaptive / all cores |"
echo "|---|---|---|---|"
for rt in gcc clang; do
    echo "| $rt | $(med <"$W/$rt.cold.all") | $(med <"$W/$rt.cold.adaptive") | $(paired "$W/$rt.cold.adaptive" "$W/$rt.cold.all") |"
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
