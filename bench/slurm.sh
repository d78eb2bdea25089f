#!/bin/bash
# Benchmarks through a real Slurm (tests/slurm/cluster.sh, private daemons on
# localhost): a. launch overhead of the plugin, d. the OpenMP
# oversubscription problem. Writes a Markdown fragment to $1.
# Needs: $BENCH_BIN (omp_barrier), $BENCH_WORK, $BUILD (numaguard.so).
set -u
out=$1
top=$PWD
so=$top/$BUILD/numaguard.so
bin=$BENCH_BIN
RUNS=${BENCH_RUNS:-30}
OMP_RUNS=${BENCH_OMP_RUNS:-5}
LAUNCH_TOPO=${BENCH_LAUNCH_TOPOLOGY:-tests/topologies/xe8640-4xh100-spr8480-snc4.xml}
med() { python3 bench/stats.py "$@"; }
unset OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND OMP_WAIT_POLICY GOMP_SPINCOUNT
. tests/slurm/cluster.sh
ngc_init "$BENCH_WORK/cluster" || exit 1

now_ms() { local t=$EPOCHREALTIME; echo "${t/./}" | sed 's/...$//'; }
# Wall time of one command in ms (microsecond clock).
time_ms() {
    local a b
    a=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || return 1
    b=$EPOCHREALTIME
    python3 -c "print('%.2f' % ((float('$b') - float('$a')) * 1000))"
}

# ---------------------------------------------------------------- a.
# slurmstepd and srun read plugstack.conf per step/command, so switching
# configurations is a rewrite of that file (no daemon restart); each
# configuration is verified once before timing.
NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$LAUNCH_TOPO NGC_GPUS=0 NGC_PLUGSTACK="" \
    ngc_start || exit 1
declare -A conf args
conf[none]=""
conf[unused]="required $so"
conf[used]="required $so"
args[none]=""
args[unused]=""
args[used]="--numa-policy=local --omp-guard"
order="none unused used"
set_conf() { printf '%s\n' "${conf[$1]}" >"$NGC_PLUGSTACK_CONF"; }

verify=""
for c in $order; do
    set_conf "$c"
    ngc_wait_idle 20
    v=$(srun -n 1 ${args[$c]} sh -c 'echo NUMAGUARD_POLICY=${NUMAGUARD_POLICY:-unset} OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}' 2>&1 | tr '\n' ' ')
    verify="$verify| $c | \`${v:-(no NUMAGUARD_* variables)}\` |
"
done
for c in $order; do : >"$BENCH_WORK/launch.$c"; done
fails=0
for i in $(seq "$RUNS"); do
    for c in $order; do
        set_conf "$c"
        ngc_wait_idle 20
        ms=$(time_ms srun -n 8 ${args[$c]} true) || { fails=$((fails + 1)); continue; }
        echo "$ms" >>"$BENCH_WORK/launch.$c"
    done
done
ncpu=$(sinfo -h -N -o %c | head -1)
ngc_stop
# Phase 2: slurmd (hence slurmstepd) runs with the lean hwloc plugin set,
# which is what the plugin's slurm_spank_init sets in slurmd when
# plugstack.conf lists it at slurmd's start (ng_topology_lean_hwloc);
# "none" is re-measured interleaved as this phase's baseline.
lean=$(sed -n 's/^ *"\(hwloc_gl[^"]*\)".*/\1/p' lib/include/numaguard/topology.h | head -1)
HWLOC_PLUGINS_BLACKLIST=$lean NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$LAUNCH_TOPO \
    NGC_GPUS=0 NGC_PLUGSTACK="" ngc_start || exit 1
: >"$BENCH_WORK/launch.none2"
: >"$BENCH_WORK/launch.lean"
for i in $(seq "$RUNS"); do
    set_conf none
    ngc_wait_idle 20
    ms=$(time_ms srun -n 8 true) && echo "$ms" >>"$BENCH_WORK/launch.none2" || fails=$((fails + 1))
    set_conf used
    ngc_wait_idle 20
    ms=$(time_ms srun -n 8 ${args[used]} true) && echo "$ms" >>"$BENCH_WORK/launch.lean" ||
        fails=$((fails + 1))
done
ngc_stop
m_none=$(med <"$BENCH_WORK/launch.none")
{
echo "### a. Launch overhead through a real srun"
echo
echo "\`srun -n 8 true\` on one inflated node (task/none, slurmd with"
echo "\`HWLOC_XMLFILE=$(basename "$LAUNCH_TOPO")\`, $ncpu CPUs), $RUNS interleaved runs"
echo "per configuration (plugstack.conf rewritten between runs; slurmstepd and srun"
echo "read it per step), medians; failed sruns: $fails."
echo
echo "| configuration | srun arguments | median ms | runs | added vs no plugin |"
echo "|---|---|---|---|---|"
for c in $order; do
    read -r m n < <(med -n <"$BENCH_WORK/launch.$c")
    d=$(python3 -c "print('-' if '$c' == 'none' else '%+.1f ms (x%.3f)' % ($m - $m_none, $m / $m_none))")
    echo "| $c: ${conf[$c]:-(empty plugstack.conf)} | ${args[$c]:--} | $m | $n | $d |"
done
read -r m2 n2 < <(med -n <"$BENCH_WORK/launch.none2")
read -r ml nl < <(med -n <"$BENCH_WORK/launch.lean")
echo "| phase 2, none (baseline of this phase) | - | $m2 | $n2 | - |"
echo "| phase 2, used, slurmstepd with \`HWLOC_PLUGINS_BLACKLIST=<NG_HWLOC_LEAN_PLUGINS>\` | ${args[used]} | $ml | $nl | $(python3 -c "print('%+.1f ms (x%.3f)' % ($ml - $m2, $ml / $m2))") |"
echo
echo "What one task saw in each configuration (\`srun -n 1 [args] sh -c 'echo NUMAGUARD_POLICY=... OMP_NUM_THREADS=...'\`):"
echo
echo "| configuration | output |"
echo "|---|---|"
printf '%s' "$verify"
echo
} >"$out"

# ---------------------------------------------------------------- d.
NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY="" NGC_GPUS=0 \
    NGC_PLUGSTACK="required $so" ngc_start || exit 1
cores=$(nproc)
ITERS=${BENCH_OMP_ITERS:-20000}
MAXS=${BENCH_OMP_MAX_SECONDS:-3}
# One run: the slowest task's rate (regions/s).
omp_run() { # ntasks cpus-per-task elems env... -- srun-args...
    local n=$1 c=$2 e=$3; shift 3
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    ngc_wait_idle 20
    env "${envs[@]}" srun -n "$n" -c "$c" "$@" "$bin/omp_barrier" "$ITERS" "$e" "$MAXS" 2>/dev/null |
        sed -n 's/^rate=\([0-9]*\) threads=\([0-9]*\).*/\1 \2/p' | sort -n | head -1
}
declare -A ocmd
ocmd[default]="NG_BENCH=1 -- --cpu-bind=none"
ocmd[omp1]="OMP_NUM_THREADS=1 -- --cpu-bind=none"
ocmd[guard]="NG_BENCH=1 -- --omp-guard"
ocmd[guard_unbound]="NG_BENCH=1 -- --cpu-bind=none --omp-guard"
ocmd[policy_guard]="NG_BENCH=1 -- --numa-policy=local --omp-guard"
label_default="unbound (\`--cpu-bind=none\`), OMP_NUM_THREADS unset"
label_omp1="unbound, OMP_NUM_THREADS=1"
label_guard="\`--omp-guard\` (Slurm's binding)"
label_guard_unbound="\`--cpu-bind=none --omp-guard\` (thread cap only)"
label_policy_guard="\`--numa-policy=local --omp-guard\`"
omp_shape() { # title ntasks cpus-per-task elems configs...
    local title=$1 n=$2 c=$3 e=$4; shift 4
    local cfgs="$*" k r
    for k in $cfgs; do : >"$BENCH_WORK/omp.$k"; done
    for _ in $(seq "$OMP_RUNS"); do
        for k in $cfgs; do
            # shellcheck disable=SC2086
            r=$(omp_run "$n" "$c" "$e" ${ocmd[$k]})
            [ -n "$r" ] && echo "$r" >>"$BENCH_WORK/omp.$k"
        done
    done
    echo "**$title** ($n task(s) x $c CPU(s), $e elements per region; rate of the slowest task, median of $OMP_RUNS):"
    echo
    echo "| configuration | threads/task | regions/s | vs default | vs OMP_NUM_THREADS=1 |"
    echo "|---|---|---|---|---|"
    local d o
    d=$(awk '{print $1}' "$BENCH_WORK/omp.default" | med)
    o=$(awk '{print $1}' "$BENCH_WORK/omp.omp1" | med)
    for k in $cfgs; do
        local m t lab
        m=$(awk '{print $1}' "$BENCH_WORK/omp.$k" | med)
        t=$(awk '{print $2}' "$BENCH_WORK/omp.$k" | sort -u | tr '\n' ' ')
        lab=label_$k
        echo "| ${!lab} | $t | $(printf '%.0f' "$m") | $(python3 -c "print('%.2fx' % ($m / $d))") | $(python3 -c "print('%.2fx' % ($m / $o))") |"
    done
    echo
}
EL=${BENCH_OMP_ELEMS:-2048}
EL2=${BENCH_OMP_ELEMS_COARSE:-65536}
{
echo "### d. The oversubscription problem (bench/omp_barrier.c, libgomp)"
echo
echo "Real node ($cores cores, task/affinity), \`omp_barrier $ITERS ELEMS $MAXS\`: $ITERS"
echo "\`parallel for\` regions over ELEMS doubles, each ending in a barrier; a run"
echo "stops after $MAXS s (collapsed runs) and reports regions/s."
echo
omp_shape "One task per core (tasks = cores)" "$cores" 1 "$EL" default omp1 guard guard_unbound policy_guard
omp_shape "One task owning all cores, barrier-heavy" 1 "$cores" "$EL" default omp1 guard policy_guard
omp_shape "One task owning all cores, coarser regions" 1 "$cores" "$EL2" default omp1 guard policy_guard
} >>"$out"
ngc_stop
