#!/bin/sh
# numaguard binding for real: a task/affinity node with this machine's own
# topology (live discovery). From inside each task, ng_probe asks the kernel
# (sched_getaffinity, get_mempolicy) and the answers must equal the plan.
# Then failures: broken topology file, a GPU the topology does not know, a
# syscall the kernel refuses -> the task runs with a warning; with strict it
# fails; the node stays idle (never drained).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-bind plugin

VARS=("NUMAGUARD_*" OMP_NUM_THREADS)
this_xml=$NGC_DIR/this-machine.xml
lstopo-no-graphics --of xml "$this_xml" 2>/dev/null
ncpu=$(slurmd -C | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p')
allcpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)

NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0
NGC_PLUGSTACK=$(ngt_plugstack)
ngt_cluster

# bind LABEL SRUN-ARGS... : run the probe, check srun's status.
bind() {
    local label=$1
    shift
    F=$NGT_OUT/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
    ngt_srun "$F" "$@" -- "${VARS[@]}"
    local rc=$?
    ok $rc "$label: srun exits 0"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$F.err" | head -5
}

bind "-n $ncpu local" -n "$ncpu" --numa-policy=local
ngt_check applied "$F" "-n $ncpu local"
ngt_check plan "$F" "-n $ncpu local" "$NGT_CLI" "$this_xml" -- --numa-policy=local
ngt_check expect "$F" "-n $ncpu local" all:mempolicy=bind all:memnodes=0
[ "$ncpu" -ge 2 ] && ngt_check expect "$F" "-n $ncpu local" 0:affinity=0 1:affinity=1

bind "-n 1 -c $ncpu interleave" -n 1 -c "$ncpu" --numa-policy=interleave
ngt_check applied "$F" "-n 1 -c $ncpu interleave"
ngt_check expect "$F" "interleave" "0:affinity=$allcpus" 0:mempolicy=interleave 0:memnodes=0
ngt_check plan "$F" "-n 1 -c $ncpu interleave" "$NGT_CLI" "$this_xml" -- --cpus-per-task "$ncpu" --numa-policy=interleave

bind "-n 1 -c $ncpu prefer" -n 1 -c "$ncpu" --numa-policy=prefer
ngt_check applied "$F" "prefer"
# MPOL_PREFERRED_MANY exists from Linux 5.15; older kernels fall back to MPOL_PREFERRED.
kv=$(uname -r | awk -F. '{print $1 * 1000 + $2}')
if [ "$kv" -ge 5015 ]; then
    ngt_check expect "$F" "prefer (Linux >= 5.15)" 0:mempolicy=preferred_many 0:NUMAGUARD_MEM_MODE=preferred_many
fi
bind "-n 1 weighted" -n 1 -c "$ncpu" --numa-policy=weighted
ngt_check applied "$F" "weighted"
if [ -d /sys/kernel/mm/mempolicy/weighted_interleave ]; then
    ngt_check expect "$F" "weighted (kernel has it)" 0:mempolicy=weighted_interleave
else
    ngt_check expect "$F" "weighted falls back to interleave" 0:mempolicy=interleave
fi
# A user --cpu-bind keeps Slurm's CPUs; numaguard sets memory and threads
# consistent with that mask (one CPU each, reversed by the map).
if [ "$ncpu" -ge 2 ]; then
    bind "--cpu-bind=map_cpu:1,0 local" -n 2 --cpu-bind=map_cpu:1,0 --numa-policy=local --omp-guard
    ngt_check expect "$F" "--cpu-bind=map_cpu:1,0 kept" 0:affinity=1 1:affinity=0 \
        0:NUMAGUARD_CPUS=1 1:NUMAGUARD_CPUS=0 all:mempolicy=bind all:memnodes=0 all:OMP_NUM_THREADS=1
fi

# A batch step is left alone: the batch script gets no placement even with
# #SBATCH --numa-policy; the srun inside it does.
cat >"$NGT_OUT/batch.sh" <<JOB
#!/bin/sh
#SBATCH -D $NGT_OUT
#SBATCH --numa-policy=local --omp-guard -n 1 -o $NGT_OUT/batch.out
echo "batch NUMAGUARD_POLICY=\${NUMAGUARD_POLICY:-unset} OMP_NUM_THREADS=\${OMP_NUM_THREADS:-unset}"
srun sh -c 'echo "step NUMAGUARD_POLICY=\$NUMAGUARD_POLICY"'
JOB
ngc_bounded sbatch --wait -t 2 "$NGT_OUT/batch.sh" >/dev/null 2>&1
like "$(cat "$NGT_OUT/batch.out")" "batch NUMAGUARD_POLICY=unset OMP_NUM_THREADS=unset" \
    "the batch step itself is left alone"
like "$(cat "$NGT_OUT/batch.out")" "step NUMAGUARD_POLICY=local" "the srun step inside the batch job is placed"

# The topology cache: slurmd wrote it when it started; steps read it. It
# lives under /run: a cache below /tmp (world-writable) is never trusted.
cache=$(mktemp -d /run/ng-bind-cache.XXXXXX)
NGC_PLUGSTACK=$(ngt_plugstack "topology_cache=$cache/topocache verbose")
ngc_restart
ok $(test -s "$cache/topocache/topology.xml" && test -s "$cache/topocache/topology.stamp"; echo $?) \
    "slurmd start wrote the topology cache"
bind "-n $ncpu local, cache" -n "$ncpu" --numa-policy=local
like "$(cat "$F.err")" "topology from cache" "the step loaded the topology from the cache"
ngt_check expect "$F" "-n $ncpu local from the cache" all:mempolicy=bind all:memnodes=0
echo garbage >"$cache/topocache/topology.xml"
bind "-n $ncpu local, damaged cache" -n "$ncpu" --numa-policy=local
like "$(cat "$F.err")" "topology discovered live" "a damaged cache means live discovery"
ngt_check expect "$F" "-n $ncpu local after a damaged cache" all:mempolicy=bind all:memnodes=0
NGC_PLUGSTACK=$(ngt_plugstack)
ngc_restart
rm -rf "$cache"

bind "-n $ncpu none omp-guard" -n "$ncpu" --numa-policy=none --omp-guard=2
ngt_check expect "$F" "policy none: Slurm's binding, default memory, threads capped" \
    all:mempolicy=default all:OMP_NUM_THREADS=2
[ "$ncpu" -ge 2 ] && ngt_check expect "$F" "policy none keeps task/affinity's CPUs" 0:affinity=0 1:affinity=1
bind "-n $ncpu no option" -n "$ncpu"
ngt_check expect "$F" "no option: untouched" all:mempolicy=default "all:NUMAGUARD_CPUS=<unset>"

# --- failure handling ----------------------------------------------------
# fails LABEL PLUGSTACK-ARGS -- SRUN-ARGS: non-strict run (exit 0, a warning,
# task ran) then the same with ,strict (srun fails); node idle after both.
fails() {
    local label=$1 args=$2 f
    shift 2
    NGC_PLUGSTACK=$(ngt_plugstack "$args")
    ngt_cluster
    f=$NGT_OUT/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
    ngt_srun "$f" -n "$ncpu" "$@" --numa-policy=local -- "${VARS[@]}"
    ok $? "$label: non-strict srun exits 0"
    ngt_check count "$f" "$label: tasks still ran" "$ncpu"
    like "$(cat "$f.err")" "numaguard" "$label: a warning on stderr"
    ngt_srun "$f.strict" -n "$ncpu" "$@" --numa-policy=local,strict -- "${VARS[@]}"
    local rc=$?
    ok $((rc == 0)) "$label: with strict srun fails (status $rc)"
    like "$(cat "$f.strict.err")" "numaguard" "$label, strict: the reason on stderr"
    ngc_wait_for 10 ngc_no_comp
    is "$(ngc_node_states)" idle "$label: node idle, not drained"
}

# Broken topology: a truncated XML.
head -c 2000 "$this_xml" >"$NGC_DIR/broken.xml"
fails "broken topology" "topology=$NGC_DIR/broken.xml"

# A GPU the topology does not know: Slurm hands out fake GPUs whose bus ids
# this (GPU-less) machine's topology lacks.
NGC_GPUS=2
fails "unknown GPU" "" --gpus-per-task=1
NGC_GPUS=0

# A syscall the kernel refuses: the topology claims a NUMA node 1 (CPU 1
# local to it) and the fake sysfs agrees, so the plan is applied for real;
# set_mempolicy(MPOL_BIND, {1}) then fails with EINVAL on this 1-node host.
if [ "$ncpu" -ge 2 ] && [ "$(cat /sys/devices/system/node/online 2>/dev/null)" = 0 ]; then
    two=$NGC_DIR/two-numa.xml
    lstopo-no-graphics -i "numa:2 core:1 pu:1" --of xml "$two" 2>/dev/null
    fs2=$NGC_DIR/fsroot-2numa
    mkdir -p "$fs2/sys/devices/system/cpu" "$fs2/sys/devices/system/node"
    echo 0-1 >"$fs2/sys/devices/system/cpu/online"
    echo 0-1 >"$fs2/sys/devices/system/node/online"
    echo 0-1 >"$fs2/sys/devices/system/node/has_cpu"
    echo 0-1 >"$fs2/sys/devices/system/node/has_memory"
    NGC_PLUGSTACK="${NGT_PLUGSTACK_KIND:-optional} $NGT_PLUGIN fsroot=$fs2 topology=$two"
    ngt_cluster
    f=$NGT_OUT/refused
    ngt_srun "$f" -n 2 --numa-policy=local -- "${VARS[@]}"
    ok $? "refused set_mempolicy: srun exits 0"
    ngt_check count "$f" "refused set_mempolicy: tasks ran" 2
    like "$(cat "$f.err")" "numaguard.*(mempolicy|memory)" "refused set_mempolicy: warning names it"
    ngt_srun "$f.strict" -n 2 --numa-policy=local,strict -- "${VARS[@]}"
    rc=$?
    ok $((rc == 0)) "refused set_mempolicy, strict: srun fails (status $rc)"
    ngc_wait_for 10 ngc_no_comp
    is "$(ngc_node_states)" idle "refused set_mempolicy: node idle, not drained"
else
    echo "# skipped the refused-syscall case: needs 2 CPUs and 1 NUMA node"
fi

# strict from plugstack.conf and a batch job: the batch step itself is
# left alone, so a broken node config must not drain the node.
NGC_PLUGSTACK=$(ngt_plugstack "topology=$NGC_DIR/broken.xml strict")
ngt_cluster
cat >"$NGT_OUT/job.sh" <<EOF
#!/bin/sh
#SBATCH -D $NGT_OUT
#SBATCH --numa-policy=local -n 1 -o $NGT_OUT/job.out
srun $NGT_PROBE NUMAGUARD_CPUS
echo "batch script ran"
EOF
ngc_bounded sbatch --wait -t 2 "$NGT_OUT/job.sh" >/dev/null 2>&1
like "$(cat "$NGT_OUT/job.out")" "batch script ran" "plugstack strict + broken topology: batch script still runs"
unlike "$(cat "$NGT_OUT/job.out")" "^rank=" "plugstack strict + broken topology: its srun step fails"
ngc_wait_for 10 ngc_no_comp
is "$(ngc_node_states)" idle "batch job: node idle, not drained"
ngt_done
