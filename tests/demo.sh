#!/bin/sh
# `make demo`: a private one-node Slurm with the numaguard plugin, real srun
# jobs, and a table of what each task got. The node pretends to be an AWS
# g4dn.metal (2x24 cores, SMT2, 2 NUMA nodes, 8 T4 GPUs): slurmd reads that
# machine's hwloc XML and the GPUs are fake NVIDIA device files (see
# docs/testing.md). The plugin computes each task's placement for that
# machine and reports it in NUMAGUARD_* variables; binding syscalls are
# skipped because the topology is not this host's.
# Needs root (it starts slurmctld, slurmd and munged under a temp dir).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) bdir=$BUILD ;; *) bdir=$top/$BUILD ;; esac
plugin=$bdir/numaguard.so
topo=$top/tests/topologies/g4dn-metal-8xt4.xml
if [ "$(id -u)" -ne 0 ]; then
    echo "demo: run as root (it starts a private slurmctld/slurmd)" >&2; exit 1
fi
[ -f "$plugin" ] || { echo "demo: $plugin not built (make)" >&2; exit 1; }

. "$top/tests/slurm/cluster.sh"
ngc_init "${TMPDIR:-/tmp}/numaguard-demo.$$" || exit 1
NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$topo NGC_GPUS=auto
NGC_PLUGSTACK="optional $plugin topology=$topo fsroot=$NGC_FSROOT gres_conf=$NGC_PLUGIN_GRES_CONF"
ngc_start || { echo "demo: the private Slurm did not start" >&2; exit 1; }

echo "numaguard demo: private Slurm on localhost:$NGC_PORT (work dir $NGC_DIR)"
echo "node ng1 = g4dn.metal: $(scontrol show node ng1 | grep -o 'CPUTot=[0-9]*') $(scontrol show node ng1 | grep -o 'Gres=[^ ]*')"
echo "GPUs (bus order = Slurm gres index):"
ngc_topology_nvidia_gpus "$topo" | cut -d' ' -f1 | awk '{ printf "  gpu %d  %s\n", NR - 1, $1 }'
echo

# What each task prints: one tab-separated line.
task_line='printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$SLURM_PROCID" "${CUDA_VISIBLE_DEVICES:--}" "${NUMAGUARD_GPUS:--}" "${NUMAGUARD_CPUS:--}" "${NUMAGUARD_MEMS:--}" "${NUMAGUARD_MEM_MODE:--}" "${OMP_NUM_THREADS:--}" "${MKL_NUM_THREADS:--}" "${OMP_PLACES:--}"'

# Align tab-separated columns (two passes; no dependency on column(1)).
table() {
    awk -F'\t' '{ row[NR] = $0; for (i = 1; i <= NF; i++) if (length($i) > w[i]) w[i] = length($i) }
        END { for (r = 1; r <= NR; r++) { n = split(row[r], f, "\t"); line = " "
                  for (i = 1; i <= n; i++) line = line sprintf(" %-" w[i] "s", f[i]); print line } }'
}

run() {
    echo "\$ srun $*"
    ngc_wait_idle 10
    out=$(cd "$NGC_DIR" && srun "$@" sh -c "$task_line" 2>"$NGC_DIR/demo.err")
    rc=$?
    # The plugin's verbose lines (stderr), then the table.
    sed 's/^/  | /' "$NGC_DIR/demo.err"
    { printf 'rank\tCUDA\tNUMAGUARD_GPUS\tNUMAGUARD_CPUS\tMEMS\tMEM_MODE\tOMP\tMKL\tOMP_PLACES\n'
      printf '%s\n' "$out" | grep -v '^$' | sort -n; } | table
    [ $rc -eq 0 ] || echo "  (srun exit status $rc)"
    echo
}

# A step only gets the CPUs it asks for (tasks x -c): numaguard places each
# task inside what Slurm gave the step, so these jobs ask for the whole node.
echo "# 8 tasks, one T4 each, 12 CPUs each: each task on 6 cores of its GPU's socket"
run -n 8 -c 12 --gpus-per-task=1 --numa-policy=local,verbose --omp-guard
echo "# 2 GPUs per task, memory interleaved over both sockets, 4 threads forced"
run -n 4 -c 24 --gpus-per-task=2 --numa-policy=interleave,verbose --omp-guard=4
echo "# Slurm's --gpu-bind=map_gpu reorders the GPUs: numaguard follows the real binding"
run -n 4 -c 24 --gres=gpu:8 --gpu-bind=map_gpu:7,0,5,2 --numa-policy=prefer,verbose --omp-guard
echo "# the same job without numaguard's options: Slurm's placement only"
run -n 4 -c 24 --gpus-per-task=1
echo "# an invalid value is refused before any job exists:"
echo "\$ srun --numa-policy=nearest true"
srun --numa-policy=nearest true 2>&1 | sed 's/^/  | /'
echo
ngc_stop
echo "demo done; daemons stopped."
