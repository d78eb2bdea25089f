#!/bin/sh
# --net-affinity through a real srun on an inflated JUWELS Booster node
# (task/none; slurmd sees the real machine's XML: 4 A100 and 4 HDR HCAs,
# each behind its GPU's PCIe switch; fake NVIDIA GPUs in bus order).
# Each task's UCX_NET_DEVICES / NVSHMEM_HCA_LIST / OMPI_MCA_btl_openib_if_include
# must be its own GPU's HCA and NCCL_IB_HCA the node's list, exactly as the
# planner CLI says; user values stay unless force; the env form and the
# plugstack defaults and deny list work; bad values are refused by srun
# before any job exists, with one line.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-net plugin

VARS=("NUMAGUARD_*" "UCX_*" "NCCL_*" "NVSHMEM_*" "OMPI_MCA_*" SLURM_STEP_GPUS)
topo=$NGT_TOPO/juwels-booster-4xa100-epyc7402-nps4.xml
NCCL="=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"
ENVNET=SLURM_SPANK__SLURM_SPANK_OPTION_numaguard_net_affinity
F=$NGT_OUT/net

NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$topo NGC_GPUS=auto
NGC_PLUGSTACK=$(ngt_plugstack "topology=$topo")
ngt_cluster

# probe LABEL SRUN-ARGS...: 4 tasks, one GPU each, the whole node (-c 24).
probe() {
    local label=$1
    shift
    ngt_srun "$F" --exclusive -n 4 -c 24 --gpus-per-task=1 "$@" -- "${VARS[@]}"
    local rc=$?
    ok $rc "$label: srun exits 0"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$F.err" | head -5
}

# --- GPU i -> its own HCA; NCCL_IB_HCA node-wide ------------------------
probe "net-affinity=auto" --numa-policy=local --net-affinity=auto
ngt_check expect "$F" "net-affinity=auto" \
    0:UCX_NET_DEVICES=mlx5_0:1 1:UCX_NET_DEVICES=mlx5_1:1 2:UCX_NET_DEVICES=mlx5_2:1 \
    3:UCX_NET_DEVICES=mlx5_3:1 0:NVSHMEM_HCA_LIST=mlx5_0:1 3:NVSHMEM_HCA_LIST=mlx5_3:1 \
    2:OMPI_MCA_btl_openib_if_include=mlx5_2:1 "all:NCCL_IB_HCA=$NCCL" \
    "0:NUMAGUARD_GPUS=0000:03:00.0" "3:NUMAGUARD_GPUS=0000:c4:00.0"
ngt_check plan "$F" "net-affinity=auto" "$NGT_CLI" "$topo" -- \
    --task-gpus "0;1;2;3" --cpus-per-task 24 --numa-policy local --net-affinity=auto

probe "verbose" --numa-policy=local,verbose --net-affinity=auto
like "$(cat "$F.err")" "rank 1 \(local 1\): gpus 0000:44:00.0 .* nics mlx5_1( |$)" \
    "the verbose line names the task's NIC"

# --- alone: NICs without binding (policy none) ---------------------------
probe "net-affinity alone" --net-affinity
ngt_check expect "$F" "bare --net-affinity = auto, placement left to Slurm" \
    1:UCX_NET_DEVICES=mlx5_1:1 "all:NCCL_IB_HCA=$NCCL" all:NUMAGUARD_POLICY=none
probe "net-affinity=2" --numa-policy=local --net-affinity=2
ngt_check expect "$F" "net-affinity=2: own HCA, then its package's other" \
    0:UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1 3:UCX_NET_DEVICES=mlx5_3:1,mlx5_2:1 "all:NCCL_IB_HCA=$NCCL"
ngt_check plan "$F" "net-affinity=2" "$NGT_CLI" "$topo" -- \
    --task-gpus "0;1;2;3" --cpus-per-task 24 --numa-policy local --net-affinity=2

# --- nothing asked: nothing exported -------------------------------------
probe "no option" --numa-policy=local
ngt_check expect "$F" "no --net-affinity" "all:UCX_NET_DEVICES=<unset>" "all:NCCL_IB_HCA=<unset>" \
    "all:NVSHMEM_HCA_LIST=<unset>"

# --- user values kept unless force; the env form --------------------------
export UCX_NET_DEVICES=mlx5_3:1 NCCL_IB_HCA=mlx5
probe "user values, auto" --numa-policy=local --net-affinity=auto
ngt_check expect "$F" "user UCX_NET_DEVICES and NCCL_IB_HCA kept" all:UCX_NET_DEVICES=mlx5_3:1 \
    all:NCCL_IB_HCA=mlx5 1:NVSHMEM_HCA_LIST=mlx5_1:1
probe "user values, verbose" --numa-policy=local,verbose --net-affinity=auto
like "$(cat "$F.err")" "nics mlx5_2 \(kept UCX_NET_DEVICES NCCL_IB_HCA\)" \
    "the verbose line names the variables kept"
probe "user values, force" --numa-policy=local --net-affinity=auto,force
ngt_check expect "$F" "force overwrites" 1:UCX_NET_DEVICES=mlx5_1:1 "all:NCCL_IB_HCA=$NCCL"
unset UCX_NET_DEVICES NCCL_IB_HCA
export $ENVNET=auto,nccl-per-rank
probe "env net-affinity=auto,nccl-per-rank" --numa-policy=local
ngt_check expect "$F" "option from the environment; nccl-per-rank" 0:NCCL_IB_HCA==mlx5_0:1 \
    2:NCCL_IB_HCA==mlx5_2:1 2:UCX_NET_DEVICES=mlx5_2:1
unset $ENVNET

# --- bad values: refused by srun, one line, no job ------------------------
bad_value() {
    local label=$1 pattern=$2 before after err
    shift 2
    ngc_wait_idle 10
    before=$(ngc_next_job_id)
    env ${BAD_ENV:-} timeout -k 5 "$NGC_SRUN_TIMEOUT" srun -n 1 "$@" true >"$NGT_OUT/bad.out" 2>"$NGT_OUT/bad.err"
    local rc=$?
    err=$(cat "$NGT_OUT/bad.err")
    ok $((rc == 0)) "$label: srun fails (status $rc)"
    is "$(grep -c '^srun: error: numaguard:' "$NGT_OUT/bad.err")" 1 "$label: exactly one numaguard line"
    like "$err" "$pattern" "$label: the line names option, value and valid forms"
    after=$(ngc_next_job_id)
    is "$after" $((before + 1)) "$label: no job was created (job ids $before -> $after)"
}
bad_value "--net-affinity=0" "net-affinity: invalid value '0'.*expected auto, off, or a NIC count" --net-affinity=0
bad_value "--net-affinity=nearest" "net-affinity: invalid value 'nearest'.*expected auto" --net-affinity=nearest
bad_value "--net-affinity=off,force" "net-affinity: invalid value 'off,force'" --net-affinity=off,force
BAD_ENV=$ENVNET=auto,bind bad_value "env net-affinity=auto,bind" "net-affinity: invalid value 'auto,bind'"

# --- plugstack.conf: default_net_affinity, net_deny -----------------------
NGC_PLUGSTACK=$(ngt_plugstack "topology=$topo default_net_affinity=auto net_deny=mlx5_0")
ngt_cluster
probe "default_net_affinity=auto net_deny=mlx5_0" --numa-policy=local
ngt_check expect "$F" "admin default and deny list" 0:UCX_NET_DEVICES=mlx5_1:1 \
    1:UCX_NET_DEVICES=mlx5_1:1 2:UCX_NET_DEVICES=mlx5_2:1 "all:NCCL_IB_HCA==mlx5_1:1,mlx5_2:1,mlx5_3:1"
ngt_check plan "$F" "net_deny=mlx5_0" "$NGT_CLI" "$topo" -- --task-gpus "0;1;2;3" --cpus-per-task 24 \
    --numa-policy local --net-affinity=auto --net-deny mlx5_0
probe "default overridden by --net-affinity=off" --numa-policy=local --net-affinity=off
ngt_check expect "$F" "--net-affinity=off beats the default" "all:UCX_NET_DEVICES=<unset>"
ngc_wait_idle 20
is "$(ngc_node_states)" idle "node idle at the end"
ngt_done
