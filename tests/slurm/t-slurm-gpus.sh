#!/bin/sh
# numaguard in a real slurmd on "inflated" GPU nodes (task/none; slurmd sees
# a real machine's topology XML; fake NVIDIA GPUs in bus order). For each
# srun, every task's NUMAGUARD_CPUS / _MEMS / _GPUS and thread variables
# must equal the planner CLI's answer for the same job shape.
# Jobs are --exclusive with -c = node CPUs / tasks, so the step owns the
# whole node (the plan's CPU set is then the whole topology, as `numaguard
# plan` without --cpus assumes).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-gpus plugin

VARS=("NUMAGUARD_*" "OMP_*" "MKL_*" "OPENBLAS_*" "BLIS_*" "NUMEXPR_*" "NUMBA_*" "VECLIB_*" SLURM_STEP_GPUS)

# run_case LABEL TOPO "SRUN ARGS" "CLI ARGS" [expect specs...]
# The step must own the whole node for the plan to be GPU-local: srun's
# step gets only the CPUs it asks for, so -c = node CPUs / tasks per node
# (the CLI gets the same --cpus-per-task).
run_case() {
    local label=$1 topo=$2 sargs=$3 cargs=$4 f n c
    shift 4
    f=$NGT_OUT/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
    n=$(printf '%s\n' "$sargs" | sed -n 's/.*-n \([0-9]*\).*/\1/p')
    c=$((NODE_CPUS / n))
    sargs="$sargs -c $c"
    cargs="$cargs --cpus-per-task $c"
    # shellcheck disable=SC2086
    ngt_srun "$f" --exclusive $sargs -- "${VARS[@]}"
    local rc=$?
    ok $rc "$label: srun exits 0"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$f.err" | head -5
    # shellcheck disable=SC2086
    ngt_check plan "$f" "$label" "$NGT_CLI" "$topo" -- $cargs
    [ $# -gt 0 ] && ngt_check expect "$f" "$label" "$@"
}

# One cluster per topology; many sruns against each.
for xml in g4dn-metal-8xt4.xml xe8640-4xh100-spr8480-snc4.xml \
           juwels-booster-4xa100-epyc7402-nps4.xml dgx2-16xv100.xml; do
    topo=$NGT_TOPO/$xml
    NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$topo NGC_GPUS=auto
    NGC_PLUGSTACK=$(ngt_plugstack "topology=$topo")
    ngt_cluster
    NODE_CPUS=$(scontrol show node ng1 | sed -n 's/.*CPUTot=\([0-9]*\).*/\1/p')
    mapfile -t bus < <(ngc_topology_nvidia_gpus "$topo" | cut -d' ' -f1)
    ngpu=${#bus[@]}
    t=${xml%%-*}
    case $ngpu in
    8)
        run_case "$t -n 8 gpus-per-task=1 local" "$topo" \
            "-n 8 --gpus-per-task=1 --numa-policy=local" \
            "--task-gpus 0;1;2;3;4;5;6;7 --numa-policy local" \
            "0:NUMAGUARD_GPUS=${bus[0]}" "5:NUMAGUARD_GPUS=${bus[5]}" "7:NUMAGUARD_GPUS=${bus[7]}" \
            "all:NUMAGUARD_MEM_MODE=bind"
        run_case "$t -n 4 gpus-per-task=2" "$topo" \
            "-n 4 --gpus-per-task=2 --numa-policy=local" \
            "--task-gpus 0,1;2,3;4,5;6,7 --numa-policy local" \
            "1:NUMAGUARD_GPUS=${bus[2]},${bus[3]}"
        run_case "$t -n 4 gres=gpu:8 shared" "$topo" \
            "-n 4 --gres=gpu:8 --numa-policy=local" \
            "--task-gpus 0,1,2,3,4,5,6,7;0,1,2,3,4,5,6,7;0,1,2,3,4,5,6,7;0,1,2,3,4,5,6,7 --numa-policy local"
        run_case "$t -n 4 map_gpu:7,0,5,2" "$topo" \
            "-n 4 --gres=gpu:8 --gpu-bind=map_gpu:7,0,5,2 --numa-policy=local" \
            "--task-gpus 7;0;5;2 --numa-policy local" \
            "0:NUMAGUARD_GPUS=${bus[7]}" "1:NUMAGUARD_GPUS=${bus[0]}"
        run_case "$t -n 8 interleave omp-guard=2" "$topo" \
            "-n 8 --gpus-per-task=1 --numa-policy=interleave --omp-guard=2" \
            "--task-gpus 0;1;2;3;4;5;6;7 --numa-policy interleave --omp-guard=2" \
            "all:OMP_NUM_THREADS=2" "all:NUMAGUARD_MEM_MODE=interleave"
        ;;
    4)
        # XE8640: srun -n 4 -c 56 --gpus-per-task=1 gives each task 28 cores,
        # its GPU's node and the neighbouring node of the same socket.
        extra=()
        [ "$t" = xe8640 ] && extra=(
            "0:NUMAGUARD_CPUS=28-55,140-167" "1:NUMAGUARD_CPUS=0-27,112-139"
            "2:NUMAGUARD_CPUS=84-111,196-223" "3:NUMAGUARD_CPUS=56-83,168-195"
            "0:NUMAGUARD_MEMS=2-3" "1:NUMAGUARD_MEMS=0-1" "2:NUMAGUARD_MEMS=6-7" "3:NUMAGUARD_MEMS=4-5")
        run_case "$t -n 4 gpus-per-task=1 local" "$topo" \
            "-n 4 --gpus-per-task=1 --numa-policy=local" \
            "--task-gpus 0;1;2;3 --numa-policy local" \
            "0:NUMAGUARD_GPUS=${bus[0]}" "3:NUMAGUARD_GPUS=${bus[3]}" "${extra[@]}"
        run_case "$t -n 8 map_gpu:0,1,2,3 (2 tasks/GPU)" "$topo" \
            "-n 8 --gres=gpu:4 --gpu-bind=map_gpu:0,1,2,3 --numa-policy=local" \
            "--task-gpus 0;1;2;3;0;1;2;3 --numa-policy local" \
            "4:NUMAGUARD_GPUS=${bus[0]}" "7:NUMAGUARD_GPUS=${bus[3]}"
        run_case "$t -n 4 map_gpu:3,2,1,0 prefer" "$topo" \
            "-n 4 --gres=gpu:4 --gpu-bind=map_gpu:3,2,1,0 --numa-policy=prefer" \
            "--task-gpus 3;2;1;0 --numa-policy prefer" \
            "0:NUMAGUARD_GPUS=${bus[3]}" "all:NUMAGUARD_MEM_MODE=preferred_many"
        run_case "$t -n 2 gpus-per-task=2" "$topo" \
            "-n 2 --gpus-per-task=2 --numa-policy=local" \
            "--task-gpus 0,1;2,3 --numa-policy local" \
            "1:NUMAGUARD_GPUS=${bus[2]},${bus[3]}"
        ;;
    16)
        # DGX-2: 16 GPUs but the XML keeps only 4 cores.
        run_case "$t -n 4 gpus-per-task=4" "$topo" \
            "-n 4 --gpus-per-task=4 --numa-policy=local" \
            "--task-gpus 0,1,2,3;4,5,6,7;8,9,10,11;12,13,14,15 --numa-policy local" \
            "3:NUMAGUARD_GPUS=${bus[12]},${bus[13]},${bus[14]},${bus[15]}"
        run_case "$t -n 2 gres=gpu:16 shared" "$topo" \
            "-n 2 --gres=gpu:16 --numa-policy=local" \
            "--task-gpus 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15;0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 --numa-policy local"
        ;;
    esac
    is "$(ngc_node_states)" idle "$t: node idle after the jobs"
done

# --- srun -N 2 across two slurmd: each node plans its own tasks ----------
topo=$NGT_TOPO/juwels-booster-4xa100-epyc7402-nps4.xml
NGC_NODES=2 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$topo
NGC_PLUGSTACK=$(ngt_plugstack "topology=$topo")
ngt_cluster
f=$NGT_OUT/two-nodes
# 96 CPUs per node, 4 tasks per node: -c 24 gives each step the whole node.
ngt_srun "$f" --exclusive -N 2 -n 8 -c 24 --gpus-per-task=1 --numa-policy=local -- "${VARS[@]}"
ok $? "-N 2 -n 8: srun exits 0"
for n in ng1 ng2; do
    ngt_check plan "$f" "-N 2 -n 8" "$NGT_CLI" "$topo" --node $n -- \
        --task-gpus "0;1;2;3" --numa-policy local --cpus-per-task 24
done
ngt_check expect "$f" "-N 2 -n 8" 0:node=ng1 4:node=ng2 4:local=0 \
    "4:NUMAGUARD_GPUS=0000:03:00.0" "7:NUMAGUARD_GPUS=0000:c4:00.0"
# --- a CPU-only step inside a GPU job (issue 19) --------------------------
# sbatch --gres=gpu:2, then srun --gres=none and srun --gpus=0: Slurm keeps
# SLURM_JOB_GPUS in those steps, but they have no GPU: CPU slices of the
# whole step, NUMAGUARD_GPUS empty, no warning. The GPU steps of the same
# job keep their GPU-local slices. The node is named with several digits
# (gpu0001) and the shared gres.conf's first record names its neighbours
# gpu0000 and gpu0002-gpu0099 with the GPUs in reverse order: only the
# node's own record gives GPU index i = the i-th GPU in bus order.
topo=$NGT_TOPO/xe8640-4xh100-spr8480-snc4.xml
mapfile -t bus < <(ngc_topology_nvidia_gpus "$topo" | cut -d' ' -f1)
NGC_NODES=1 NGC_NODE_FMT=gpu%04d NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$topo NGC_GPUS=auto
NGC_GRES_TEMPLATE="NodeName=gpu[0000,0002-0099] Name=gpu File=@DEV@/nvidia[3,2,1,0]
NodeName=gpu00[01] Name=gpu File=@DEV@/nvidia[0-3]"
NGC_PLUGSTACK=$(ngt_plugstack "topology=$topo")
ngt_cluster
is "$(sinfo -h -N -o %N)" gpu0001 "the node is named gpu0001"
NODE_CPUS=$(scontrol show node gpu0001 | sed -n 's/.*CPUTot=\([0-9]*\).*/\1/p')
c=$((NODE_CPUS / 2))
job=$NGT_OUT/cpu-step-in-gpu-job
run_step() {   # run_step NAME SRUN-ARGS...: in the batch script
    local name=$1
    shift
    printf 'srun -n 2 -c %s %s --numa-policy=local %s %s >%s 2>%s\n' "$c" "$*" "$NGT_PROBE" \
        "${VARS[*]} SLURM_JOB_GPUS CUDA_VISIBLE_DEVICES" "$job.$name" "$job.$name.err"
}
{
    echo '#!/bin/sh'
    run_step none --gres=none
    run_step gpus0 --gpus=0
    run_step gres2 --gres=gpu:2
    run_step pertask --gpus-per-task=1
} >"$job.sh"
ngc_wait_idle 10
sbatch --wait -n 2 -c "$c" --gres=gpu:2 -o "$job.out" "$job.sh" >/dev/null 2>&1
ok $? "sbatch --gres=gpu:2 with four steps: exit 0"
for s in none gpus0; do
    label="srun --${s/gpus0/gpus=0} in a GPU job"
    label=${label/--none/--gres=none}
    ngt_check expect "$job.$s" "$label: no GPU, the job's still listed" \
        all:NUMAGUARD_GPUS= all:SLURM_JOB_GPUS=0,1 "all:SLURM_STEP_GPUS=<unset>" \
        "all:CUDA_VISIBLE_DEVICES=<unset>"
    # The CLI's plan for the whole step without GPUs: CPU slices of it.
    ngt_check plan "$job.$s" "$label: CPUs from the whole step" "$NGT_CLI" "$topo" -- \
        --cpus-per-task "$c" --numa-policy local
    is "$(grep -c 'numaguard' "$job.$s.err")" 0 "$label: no numaguard line (no warning)"
done
# Shared GPUs: each task sees both, is placed near its share (as with
# --gpus-per-task=1 below).
ngt_check expect "$job.gres2" "srun --gres=gpu:2: both GPUs, gres order = bus order on gpu0001" \
    "all:NUMAGUARD_GPUS=${bus[0]},${bus[1]}"
ngt_check plan "$job.pertask" "srun --gpus-per-task=1 in the same job" "$NGT_CLI" "$topo" -- \
    --cpus-per-task "$c" --task-gpus "0;1" --numa-policy local
ngt_check expect "$job.pertask" "srun --gpus-per-task=1: its own GPU each" \
    "0:NUMAGUARD_GPUS=${bus[0]}" "1:NUMAGUARD_GPUS=${bus[1]}"
cpus_of() { sed -n "s/^rank=$2\t.*NUMAGUARD_CPUS=\([^\t]*\).*/\1/p" "$1"; }
is "$(cpus_of "$job.gres2" 0) $(cpus_of "$job.gres2" 1)" \
    "$(cpus_of "$job.pertask" 0) $(cpus_of "$job.pertask" 1)" \
    "srun --gres=gpu:2: each task on its GPU's share, the slices of --gpus-per-task=1"
is "$(cat "$job.gres2.err" "$job.pertask.err" | grep -c numaguard)" 0 "GPU steps: no numaguard line"
ngc_wait_idle 20
is "$(ngc_node_states)" idle "node gpu0001 idle after the job"
ngt_done
