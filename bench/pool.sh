#!/bin/bash
# e. The field reports' worker pool and two ranks under --omp-guard (no
# Slurm): throughput of tests/helpers/omp_pool.c (16 pthread workers, each
# running small OpenMP regions, after the main thread started OpenMP and
# forked 2 children) and of 2 Open MPI ranks of omp_barrier with policy none.
# Every configuration runs once per round, rounds interleaved, median of
# BENCH_OMP_RUNS (5) rounds. Writes a Markdown fragment to $1 and exits 1
# when a target is missed.
# Needs: $BENCH_BIN (omp_pool, omp_barrier), $BUILD (numaguard).
set -u
out=$1
bin=$BENCH_BIN
ng=$PWD/$BUILD/numaguard
RUNS=${BENCH_OMP_RUNS:-5}
SECS=${BENCH_POOL_SECONDS:-1.0}
. bench/ratios.sh
unset OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND OMP_WAIT_POLICY GOMP_SPINCOUNT MKL_NUM_THREADS
W=$BENCH_WORK/pool
mkdir -p "$W"
rc=0

# ---- the pool ----
declare -A pcmd
pcmd[default]=""
pcmd[omp1]="env OMP_NUM_THREADS=1"
pcmd[oldbind]="env OMP_NUM_THREADS=1 OMP_PROC_BIND=close OMP_PLACES=cores"
pcmd[guard1]="$ng exec --omp-guard=1 --"
pcmd[guard]="$ng exec --omp-guard --"
pcmd[guard1bind]="$ng exec --omp-guard=1,bind --"
# omp1 and guard1 (and default) next to each other: their ratios are the targets
porder="omp1 guard1 default oldbind guard guard1bind"
for c in $porder; do : >"$W/pool.$c"; done
for i in $(seq "$RUNS"); do
    # every other round in reverse order: no configuration always runs first
    [ $((i % 2)) -eq 0 ] && o=$(echo $porder | tr ' ' '\n' | tac | tr '\n' ' ') || o=$porder
    for c in $o; do
        # shellcheck disable=SC2086
        ${pcmd[$c]} "$bin/omp_pool" 16 "$SECS" 2 | sed -n 's/^steps=.* rate=\([0-9]*\).*/\1/p' >>"$W/pool.$c"
    done
done
declare -A pm
for c in $porder; do pm[$c]=$(med <"$W/pool.$c"); done
r_plain=$(paired "$W/pool.guard1" "$W/pool.omp1")
r_default=$(paired "$W/pool.guard1" "$W/pool.default")
ok_plain=PASS ok_default=PASS
atleast "$r_plain" 0.95 || { ok_plain=FAIL; rc=1; }
atleast "$r_default" 2.5 || { ok_default=FAIL; rc=1; }

# ---- two ranks, policy none ----
MPIRUN=$(command -v mpirun.openmpi)
[ "$(id -u)" -eq 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
declare -A rcmd
rcmd[omp1]="env OMP_NUM_THREADS=1"
rcmd[oldbind]="env OMP_NUM_THREADS=1 OMP_PROC_BIND=close OMP_PLACES=cores"
rcmd[none]="$ng exec --numa-policy=none --omp-guard --"
rorder="omp1 none oldbind"
# Sum of the two ranks' regions/s (each rank prints rate=...).
ranks() {
    # shellcheck disable=SC2086
    $MPIRUN --bind-to none -np 2 $1 "$bin/omp_barrier" 100000000 64 2 </dev/null 2>/dev/null |
        sed -n 's/^rate=\([0-9.]*\).*/\1/p' | awk '{s += $1; n++} END {if (n == 2) printf "%.0f\n", s}'
}
declare -A rk
if [ -n "$MPIRUN" ]; then
    for c in $rorder; do : >"$W/ranks.$c"; done
    for i in $(seq "$RUNS"); do
        [ $((i % 2)) -eq 0 ] && o=$(echo $rorder | tr ' ' '\n' | tac | tr '\n' ' ') || o=$rorder
        for c in $o; do ranks "${rcmd[$c]}" >>"$W/ranks.$c"; done
    done
    for c in $rorder; do rk[$c]=$(med <"$W/ranks.$c"); done
    r_ranks=$(paired "$W/ranks.none" "$W/ranks.omp1")
    ok_ranks=PASS
    atleast "$r_ranks" 0.95 || { ok_ranks=FAIL; rc=1; }
fi

{
echo "### e. Worker pool and ranks under \`--omp-guard\` (issue 11)"
echo
echo "The field reports' workload, \`tests/helpers/omp_pool.c\`: the main thread"
echo "starts OpenMP and forks 2 children, then 16 pthread workers each run small"
echo "OpenMP regions (a parallel-for over 256 doubles) for $SECS s; steps/s"
echo "summed over the workers, median of $RUNS interleaved rounds:"
echo
echo "| configuration | steps/s | vs default | vs plain OMP_NUM_THREADS=1 |"
echo "|---|---|---|---|"
for c in default omp1 oldbind guard1 guard guard1bind; do
    case $c in
        default) what="default (no variables: a team of $(nproc) per worker)" ;;
        omp1) what="plain \`OMP_NUM_THREADS=1\`" ;;
        oldbind) what="\`OMP_NUM_THREADS=1 OMP_PROC_BIND=close OMP_PLACES=cores\` (what --omp-guard exported before)" ;;
        guard1) what="\`numaguard exec --omp-guard=1\`" ;;
        guard) what="\`numaguard exec --omp-guard\` (auto)" ;;
        guard1bind) what="\`numaguard exec --omp-guard=1,bind\` (opt-in binding)" ;;
    esac
    echo "| $what | ${pm[$c]} | $(ratio "${pm[$c]}" "${pm[default]}")x | $(ratio "${pm[$c]}" "${pm[omp1]}")x |"
done
echo
echo "Targets (median over the rounds of the ratio within each round):"
echo "\`--omp-guard=1\` >= 0.95x plain OMP_NUM_THREADS=1: **$r_plain ($ok_plain)**;"
echo ">= 2.5x the default: **$r_default ($ok_default)**."
echo
if [ -n "$MPIRUN" ]; then
    echo "Two ranks, \`mpirun.openmpi --bind-to none -np 2\`, each running"
    echo "\`omp_barrier\` (barrier-heavy parallel-for over 64 doubles) for 2 s;"
    echo "regions/s summed over both ranks, median of $RUNS interleaved rounds:"
    echo
    echo "| configuration | regions/s (2 ranks) | vs plain OMP_NUM_THREADS=1 |"
    echo "|---|---|---|"
    for c in omp1 oldbind none; do
        case $c in
            omp1) what="plain \`OMP_NUM_THREADS=1\`" ;;
            oldbind) what="\`OMP_NUM_THREADS=1 OMP_PROC_BIND=close OMP_PLACES=cores\` (before)" ;;
            none) what="\`numaguard exec --numa-policy=none --omp-guard\`" ;;
        esac
        echo "| $what | ${rk[$c]} | $(ratio "${rk[$c]}" "${rk[omp1]}")x |"
    done
    echo
    echo "Target (median of the per-round ratios): policy none + \`--omp-guard\` >= 0.95x"
    echo "plain: **$r_ranks ($ok_ranks)**."
else
    echo "(Two-rank benchmark skipped: mpirun.openmpi not installed.)"
fi
echo
} >"$out"
exit $rc
