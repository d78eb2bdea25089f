#!/bin/sh
# One gres.conf for the whole cluster (issue 12): two slurmd on this host
# (ng1, ng2) read a gres.conf whose FIRST records belong to other nodes
# (other[01-04], File= order reversed), then one record per node, each in
# its own File= order. Every task's NUMAGUARD_GPUS must be the bus id of
# the device Slurm gave it: SLURM_STEP_GPUS index i on node ngK is the
# i-th file of ngK's record (no AutoDetect: Slurm keeps File= order, see
# docs/gpu-order.md), /dev/nvidiaM is the M-th GPU of the topology in bus
# order (tests/slurm/cluster.sh). A user-exported SLURMD_NODENAME must
# change nothing: the plugin reads slurmstepd's own node name.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-sharedgres plugin

TOPO=$NGT_TOPO/g4dn-metal-8xt4.xml
mapfile -t BUS < <(ngc_topology_nvidia_gpus "$TOPO" | cut -d' ' -f1)
[ "${#BUS[@]}" = 8 ] || { echo "Bail out! $TOPO: expected 8 NVIDIA GPUs"; exit 1; }

# Device minors of each node's record, in File= order.
ORDER_ng1="0 1 2 3 4 5 6 7"
ORDER_ng2="5 4 7 6 1 0 3 2"
NGC_GRES_TEMPLATE="# one file for every node group
NodeName=other[01-04] Name=gpu File=@DEV@/nvidia[7,6,5,4,3,2,1,0]
NodeName=other05,other[10-11] Name=gpu File=@DEV@/nvidia[3,2,1,0]
NodeName=ng1 Name=gpu File=@DEV@/nvidia[${ORDER_ng1// /,}]
NodeName=ng[2-2] Name=gpu File=@DEV@/nvidia[${ORDER_ng2// /,}]"
NGC_NODES=2 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$TOPO NGC_GPUS=auto
NGC_PLUGSTACK=$(ngt_plugstack "topology=$TOPO")
ngt_cluster

# check_gpus FILE LABEL NTASKS: for every task, NUMAGUARD_GPUS (a set of
# bus ids) = the bus ids of SLURM_STEP_GPUS through its node's record.
check_gpus() {
    local f=$1 label=$2 n=$3
    emit < <(python3 - "$f" "$label" "$n" "$ORDER_ng1" "$ORDER_ng2" "${BUS[@]}" <<'EOF'
import sys
path, label, n, o1, o2, *bus = sys.argv[1:]
order = {"ng1": [int(x) for x in o1.split()], "ng2": [int(x) for x in o2.split()]}
tasks = []
for line in open(path, encoding="utf-8", errors="replace"):
    if line.startswith("rank="):
        tasks.append(dict(p.partition("=")[::2] for p in line.rstrip("\n").split("\t")))
errs, nodes = [], set()
for t in tasks:
    node = t.get("node")
    nodes.add(node)
    try:
        want = {bus[order[node][int(i)]] for i in t["SLURM_STEP_GPUS"].split(",")}
    except (KeyError, ValueError, IndexError) as e:
        errs.append(f"rank {t.get('rank')}: cannot compute ({e!r}) from {t}")
        continue
    got = set((t.get("NUMAGUARD_GPUS") or "").split(","))
    if got != want:
        errs.append(f"rank {t['rank']} on {node} SLURM_STEP_GPUS={t['SLURM_STEP_GPUS']}: "
                    f"NUMAGUARD_GPUS={t.get('NUMAGUARD_GPUS')} want {','.join(sorted(want))}")
ok = len(tasks) == int(n) and nodes == {"ng1", "ng2"} and not errs
print(("ok - " if ok else "not ok - ") +
      f"{label}: {len(tasks)}/{n} tasks on {','.join(sorted(nodes))} name the bus ids of their gres devices")
for e in errs[:8]:
    print("#   " + e)
EOF
)
}

# run LABEL NTASKS SRUN-ARGS...: srun across both nodes, then check.
run() {
    local label=$1 n=$2 f
    shift 2
    f=$NGT_OUT/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
    ngt_srun "$f" -N 2 -n "$n" --ntasks-per-node=$((n / 2)) "$@" -- NUMAGUARD_GPUS SLURM_STEP_GPUS
    local rc=$?
    ok $rc "$label: srun exits 0"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$f.err" | head -5
    check_gpus "$f" "$label" "$n"
    unlike "$(cat "$f.err")" "numaguard: .*(gres|identify|differ|prediction)" \
        "$label: no numaguard warning about GPU identity"
}

run "4 tasks gpus-per-task=1" 4 --gpus-per-task=1 --numa-policy=local
run "8 tasks gpus-per-task=2" 8 --gpus-per-task=2 --numa-policy=local
run "16 tasks gpus-per-task=1" 16 --gpus-per-task=1 --numa-policy=local
run "4 tasks map_gpu:6,1" 4 --gres=gpu:8 --gpu-bind=map_gpu:6,1 --numa-policy=local
# A user's SLURMD_NODENAME reaches the job environment; the plugin must
# not pick gres.conf records with it.
SLURMD_NODENAME=other01 run "SLURMD_NODENAME=other01 exported" 4 --gpus-per-task=1 \
    --numa-policy=local
SLURMD_NODENAME=ng2 run "SLURMD_NODENAME=ng2 exported" 4 --gpus-per-task=1 --numa-policy=local

# The plugin's gres.conf without a record for these nodes: one clear
# warning naming the node (task 0 of each node; slurmd log), no wrong bus
# ids silently (indices are then read in bus order: ng1's record is in
# bus order, so ng1's tasks stay right).
cp "$NGC_PLUGIN_GRES_CONF" "$NGC_DIR/gres.saved"
grep -v '^NodeName=ng' "$NGC_DIR/gres.saved" >"$NGC_PLUGIN_GRES_CONF"
f=$NGT_OUT/nomatch
ngt_srun "$f" -N 2 -n 2 --gpus-per-task=1 --numa-policy=local -- NUMAGUARD_GPUS SLURM_STEP_GPUS
ok $? "no record for this node: srun exits 0"
warn=$(grep -c "numaguard: warning: gres.conf '$NGC_PLUGIN_GRES_CONF': none of its 2 Name=gpu records names node 'ng[12]'" "$f.err")
is "$warn" 2 "no record for this node: one warning per node naming the node"
like "$(cat "$NGC_DIR"/log/slurmd.ng1.log)" "numaguard: node ng1: gres.conf .*none of its 2 Name=gpu records names node 'ng1'" \
    "no record for this node: the slurmd log names the node and the file"
cp "$NGC_DIR/gres.saved" "$NGC_PLUGIN_GRES_CONF"
ngt_done
