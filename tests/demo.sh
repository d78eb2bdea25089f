#!/bin/sh
# `make demo`: a private one-node Slurm with the numaguard plugin, real srun
# jobs, and a table of what each task got (the Makefile has installed the
# packages and built numaguard: phases 1 and 2).
#   3. The node is this machine (task/affinity): the plugin really binds
#      each task; the table shows what the kernel says inside the task
#      (Cpus_allowed_list, the memory policy from /proc/self/numa_maps).
#   4. The node pretends to be an AWS g4dn.metal (2x24 cores, SMT2, 2 NUMA
#      nodes, 8 T4 GPUs): slurmd reads that machine's hwloc XML and the GPUs
#      are fake NVIDIA device files (see docs/testing.md). The plugin
#      computes each task's placement for that machine and reports it in
#      NUMAGUARD_* variables; binding syscalls are skipped because the
#      topology is not this host's (plan only).
# Needs root (it starts slurmctld, slurmd and munged under a temp dir).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) bdir=$BUILD ;; *) bdir=$top/$BUILD ;; esac
plugin=$bdir/numaguard.so
topo=$top/tests/topologies/g4dn-metal-8xt4.xml
t_start=$(date +%s)
if [ "$(id -u)" -ne 0 ]; then
    echo "numaguard demo: run as root (it starts a private slurmctld/slurmd)" >&2; exit 1
fi
[ -f "$plugin" ] || { echo "numaguard demo: $plugin not built (make)" >&2; exit 1; }

phase() { echo "numaguard demo [$1/4] $2"; }

. "$top/tests/slurm/cluster.sh"
NGC_LOG_PREFIX="numaguard demo: "
# No srun of the demo waits more than this for its job (a node that cannot
# take jobs ends the demo with a message instead of a hang).
NGC_SRUN_TIMEOUT=${NGC_SRUN_TIMEOUT:-60}
# ngc_init says in one line what is missing (root, the cgroup tree, a
# Slurm binary) before it starts anything.
ngc_init "${TMPDIR:-/tmp}/numaguard-demo.$$" || exit 1

# Align tab-separated columns (two passes; no dependency on column(1)).
table() {
    awk -F'\t' '{ row[NR] = $0; for (i = 1; i <= NF; i++) if (length($i) > w[i]) w[i] = length($i) }
        END { for (r = 1; r <= NR; r++) { n = split(row[r], f, "\t"); line = " "
                  for (i = 1; i <= n; i++) line = line sprintf(" %-" w[i] "s", f[i]); print line } }'
}

failed=0
# run HEADER TASK-LINE SRUN-ARGS...: srun the task line (one tab-separated
# line per task), the plugin's verbose lines (stderr), then the table. A
# step that fails or prints no task line counts as a failed step (the demo
# exits 1 at the end).
run() {
    local header=$1 line=$2 out rc
    shift 2
    echo "\$ srun $*"
    ngc_wait_idle 10
    out=$(cd "$NGC_DIR" && ngc_srun "$@" sh -c "$line" 2>"$NGC_DIR/demo.err")
    rc=$?
    sed 's/^/  | /' "$NGC_DIR/demo.err"
    { printf '%s\n' "$header"
      printf '%s\n' "$out" | grep -v '^$' | sort -n; } | table
    if [ $rc -eq 124 ]; then
        echo "  (srun gave up after ${NGC_SRUN_TIMEOUT}s: node $(ngc_node_states))"
    elif [ $rc -ne 0 ]; then
        echo "  (srun exit status $rc)"
    fi
    [ $rc -eq 0 ] && [ -n "$out" ] || failed=$((failed + 1))
    echo
}

# --- 3. this machine: real binding ------------------------------------
phase 3 "a private Slurm on this machine (slurmctld, slurmd, munged in $NGC_DIR)"
NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0
NGC_PLUGSTACK="optional $plugin"
ngc_start || exit 1
cpus=$(scontrol show node ng1 | grep -o 'CPUTot=[0-9]*')
echo "node ng1 = this machine ($cpus), task/affinity: numaguard binds for real"
echo
ntasks=2
[ "${cpus#CPUTot=}" -ge 2 ] 2>/dev/null || ntasks=1
# What the kernel says inside each task: its CPUs and its memory policy
# (the policy column of /proc/self/numa_maps: the task's own, inherited by
# sed; "default" when nothing was set).
real_line='printf "%s\t%s\t%s\t%s\n" "$SLURM_PROCID" "$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)" "$(sed -n "1s/^[0-9a-f]* \([^ ]*\).*/\1/p" /proc/self/numa_maps)" "${OMP_NUM_THREADS:--}"'
real_header=$(printf 'rank\tCpus_allowed_list\tmemory policy\tOMP_NUM_THREADS')
echo "# $ntasks task(s) placed by numaguard: each its own CPUs (near its GPU where there is one), memory bound to its NUMA node"
run "$real_header" "$real_line" -n $ntasks --numa-policy=local,verbose --omp-guard
echo "# the same job without numaguard's options: Slurm's own binding, the default memory policy"
run "$real_header" "$real_line" -n $ntasks

# --- 4. an inflated node: the plan for a real 8-GPU machine ------------
phase 4 "the node now pretends to be an AWS g4dn.metal with 8 GPUs (plan only)"
NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$topo NGC_GPUS=auto
NGC_PLUGSTACK="optional $plugin topology=$topo fsroot=$NGC_FSROOT gres_conf=$NGC_PLUGIN_GRES_CONF"
ngc_start || exit 1
echo "node ng1 = g4dn.metal: $(scontrol show node ng1 | grep -o 'CPUTot=[0-9]*') $(scontrol show node ng1 | grep -o 'Gres=[^ ]*')"
echo "GPUs (bus order = Slurm gres index):"
ngc_topology_nvidia_gpus "$topo" | cut -d' ' -f1 | awk '{ printf "  gpu %d  %s\n", NR - 1, $1 }'
echo

# What each task prints: one tab-separated line.
plan_line='printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$SLURM_PROCID" "${CUDA_VISIBLE_DEVICES:--}" "${NUMAGUARD_GPUS:--}" "${NUMAGUARD_CPUS:--}" "${NUMAGUARD_MEMS:--}" "${NUMAGUARD_MEM_MODE:--}" "${OMP_NUM_THREADS:--}" "${MKL_NUM_THREADS:--}" "${OMP_PLACES:--}"'
plan_header=$(printf 'rank\tCUDA\tNUMAGUARD_GPUS\tNUMAGUARD_CPUS\tMEMS\tMEM_MODE\tOMP\tMKL\tOMP_PLACES')

# A step only gets the CPUs it asks for (tasks x -c): numaguard places each
# task inside what Slurm gave the step, so these jobs ask for the whole node.
echo "# 8 tasks, one T4 each, 12 CPUs each: each task on 6 cores of its GPU's socket"
run "$plan_header" "$plan_line" -n 8 -c 12 --gpus-per-task=1 --numa-policy=local,verbose --omp-guard
echo "# 2 GPUs per task, memory interleaved over both sockets, 4 threads forced"
run "$plan_header" "$plan_line" -n 4 -c 24 --gpus-per-task=2 --numa-policy=interleave,verbose --omp-guard=4
echo "# Slurm's --gpu-bind=map_gpu reorders the GPUs: numaguard follows the real binding"
run "$plan_header" "$plan_line" -n 4 -c 24 --gres=gpu:8 --gpu-bind=map_gpu:7,0,5,2 --numa-policy=prefer,verbose --omp-guard
echo "# the same job without numaguard's options: Slurm's placement only"
run "$plan_header" "$plan_line" -n 4 -c 24 --gpus-per-task=1
echo "# an invalid value is refused before any job exists:"
echo "\$ srun --numa-policy=nearest true"
out=$(ngc_srun --numa-policy=nearest true 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
case $rc:$out in 0:*|124:*|*:) failed=$((failed + 1)) ;; esac
echo
ngc_stop
if [ $failed -ne 0 ]; then
    echo "numaguard demo: $failed step(s) did not do what the line above them says; daemons stopped" >&2
    exit 1
fi
echo "numaguard demo done in $(( $(date +%s) - t_start ))s; daemons stopped."
