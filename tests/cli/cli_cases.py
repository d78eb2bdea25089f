"""Golden cases for `numaguard topo` and `numaguard plan` on real topologies.

Expected CPU sets were cross-checked with hwloc-calc, e.g.
`hwloc-calc --input xe8640-4xh100-spr8480-snc4.xml -p node:3 --intersect pu`.
Prints TAP.
"""
import json
import shutil
import os
import re
import subprocess
import sys
import tempfile

BUILD = os.environ.get("BUILD", "build")
CLI = os.path.join(BUILD, "numaguard")
TOPO = "tests/topologies"
n = 0
failed = 0


def ok(cond, desc, diag=None):
    global n, failed
    n += 1
    if not cond:
        failed += 1
        if diag:
            for line in str(diag).splitlines()[:20]:
                print("# " + line)
    print(("ok %d - " if cond else "not ok %d - ") % n + desc)
    sys.stdout.flush()


def run(*args):
    p = subprocess.run([CLI] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# The hwloc this CLI runs with: 3.x under make check-hwloc-next.
HWLOC3 = "\nhwloc 3." in "\n" + run("--version")[1]


def plan(topo, *args):
    rc, out, err = run("plan", "--topology", f"{TOPO}/{topo}", "--json", *args)
    if rc != 0:
        return None, err
    return json.loads(out), err


def check_plan(name, topo, args, cpus=None, mems=None, mode=None, threads=None,
               gpus=None, warn=None, env=None):
    p, err = plan(topo, *args)
    if p is None:
        ok(False, name, err)
        return
    tasks = p["tasks"]
    diag = json.dumps(p, indent=None)[:1500]
    if cpus is not None:
        ok([t["cpus"] for t in tasks] == cpus, f"{name}: cpus", diag)
    if mems is not None:
        ok([t["mem_nodes"] for t in tasks] == mems, f"{name}: memory nodes", diag)
    if mode is not None:
        ok(all(t["mem_policy"] == mode for t in tasks), f"{name}: memory mode {mode}", diag)
    if threads is not None:
        ok([t["threads"] for t in tasks] == threads, f"{name}: threads", diag)
    if gpus is not None:
        ok([t["gpus"] for t in tasks] == gpus, f"{name}: gpus", diag)
    if warn is not None:
        has = any(warn in w for w in p["warnings"])
        ok(has if warn else not p["warnings"], f"{name}: warnings {warn!r}", diag)
    if env is not None:
        ok(all(t["env"] == env(t) for t in tasks), f"{name}: env", diag)


XE = "xe8640-4xh100-spr8480-snc4.xml"
W = "witherspoon-p9-6xv100-gpumem-numa.xml"
XE_NODE = {1: "14-27,126-139", 3: "42-55,154-167", 5: "70-83,182-195", 7: "98-111,210-223"}
JUWELS = "juwels-booster-4xa100-epyc7402-nps4.xml"


def omp_env(t, smt=False, force=False):
    v = str(t["threads"])
    e = {k: v for k in ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                        "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                        "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS"]}
    return e  # OMP_PLACES/OMP_PROC_BIND only with --omp-guard=...,bind (and in apply)


# 4 H100 on a 2-socket SNC4 node, whole node: each task gets 28 cores, its
# GPU's NUMA node plus the neighbouring node of the same socket (the whole
# allocation is used; planner v1 left 56 of 112 cores idle).
check_plan("xe8640 4 tasks x 1 GPU local", XE, ["--tasks", "4", "--gpus-per-task", "1", "--omp-guard"],
           cpus=["28-55,140-167", "0-27,112-139", "84-111,196-223", "56-83,168-195"],
           mems=[[2, 3], [0, 1], [6, 7], [4, 5]],
           mode="bind", threads=[28] * 4,
           gpus=[["0000:4e:00.0"], ["0000:5f:00.0"], ["0000:cb:00.0"], ["0000:db:00.0"]],
           warn="", env=omp_env)
check_plan("xe8640 smt threads", XE, ["--tasks", "4", "--gpus-per-task", "1", "--numa-policy", "local,smt",
                                      "--omp-guard"], threads=[56] * 4,
           env=lambda t: omp_env(t, smt=True))
# 2 GPUs per task: the two GPUs' socket (both their nodes and the two others).
check_plan("xe8640 2 tasks x 2 GPUs", XE, ["--tasks", "2", "--gpus-per-task", "2"],
           cpus=["0-55,112-167", "56-111,168-223"],
           mems=[[0, 1, 2, 3], [4, 5, 6, 7]], threads=[56, 56])
# 8 tasks on 4 GPUs: two tasks per GPU, 14 cores each: one on its GPU's node,
# the other on the neighbouring node of the same socket (no task straddles).
check_plan("xe8640 8 tasks on 4 GPUs (--task-gpus)", XE,
           ["--tasks", "8", "--task-gpus", "0;0;1;1;2;2;3;3"],
           cpus=["28-41,140-153", "42-55,154-167", "0-13,112-125", "14-27,126-139",
                 "84-97,196-209", "98-111,210-223", "56-69,168-181", "70-83,182-195"],
           mems=[[2], [3], [0], [1], [6], [7], [4], [5]], threads=[14] * 8)
# Tasks of two GPUs that share a 4-core socket: both stay on it, 2 cores
# each (the planner v2 gave each 2 cores on each socket, memory on both).
check_plan("witherspoon 2 GPUs of one socket: both stay on it", W,
           ["--tasks", "2", "--gpus-per-task", "1"],
           cpus=["0-7", "8-15"], mems=[[0], [0]])
# The user guide's GH200-class recipe (issue 21): no task on two sockets,
# memory on its GPU's socket and its GPU's own memory node.
check_plan("witherspoon 2 GPU tasks local,cpuless", W,
           ["--tasks", "2", "--gpus-per-task", "1", "--numa-policy", "local,cpuless"],
           cpus=["0-7", "8-15"], mems=[[0, 255], [0, 254]])
# With wide (or -c 16): 4 cores each, both sockets, as the planner v2 did;
# with -c 16 each task's 4 cores are 2 on each socket (every GPU keeps a
# task on its home).
check_plan("witherspoon 2 GPU tasks local,cpuless,wide", W,
           ["--tasks", "2", "--gpus-per-task", "1", "--numa-policy", "local,cpuless,wide"],
           cpus=["0-7,88-95", "8-15,96-103"], mems=[[0, 8, 255], [0, 8, 254]])
check_plan("witherspoon 2 GPU tasks -c 16", W,
           ["--tasks", "2", "--gpus-per-task", "1", "--cpus-per-task", "16"],
           cpus=["0-7,88-95", "8-15,96-103"])
check_plan("xe8640 bus ids in --task-gpus", XE, ["--tasks", "2", "--task-gpus", "0000:db:00.0;5f:00.0"],
           cpus=["56-111,168-223", "0-55,112-167"], gpus=[["0000:db:00.0"], ["0000:5f:00.0"]])
# Slurm -c 4 on SMT2 = 2 whole cores per task.
check_plan("xe8640 -c 4 caps slices", XE, ["--tasks", "4", "--gpus-per-task", "1", "--cpus-per-task", "4"],
           cpus=["42-43,154-155", "14-15,126-127", "98-99,210-211", "70-71,182-183"],
           threads=[2] * 4)
# Step restricted to socket 0: GPUs cb/db (socket 1) have no allowed local core ->
# nearest node(s) by SLIT distance among the free socket-0 nodes, with a warning.
p, err = plan(XE, "--tasks", "4", "--gpus-per-task", "1", "--cpus", "0-55,112-167")
ok(p is not None and p["tasks"][0]["cpus"] == XE_NODE[3] and p["tasks"][1]["cpus"] == XE_NODE[1]
   and not p["tasks"][0]["gpu_remote"] and p["tasks"][2]["gpu_remote"] and p["tasks"][3]["gpu_remote"]
   and any("no allowed core is local" in w for w in p["warnings"]),
   "xe8640 socket-0 step: local GPUs keep their node, remote ones warned", json.dumps(p)[:1500])
if p:
    used = set()
    for t in p["tasks"][2:]:
        for part in t["cpus"].split(","):
            a, _, b = part.partition("-")
            used.update(range(int(a), int(b or a) + 1))
    ok(used <= set(range(0, 14)) | set(range(28, 42)) | set(range(112, 126)) | set(range(140, 154)),
       "xe8640 socket-0 step: remote GPU tasks use the free socket-0 nodes 0 and 2", json.dumps(p)[:800])

JUWELS4 = ["12-23,60-71", "0-11,48-59", "36-47,84-95", "24-35,72-83"]
check_plan("juwels NPS4 4 tasks x 1 A100", JUWELS, ["--tasks", "4", "--gpus-per-task", "1"],
           cpus=JUWELS4, mems=[[2, 3], [0, 1], [6, 7], [4, 5]])
check_plan("juwels hwloc1 XML gives the same plan", "juwels-booster-4xa100-epyc7402-nps4-hwloc1.xml",
           ["--tasks", "4", "--gpus-per-task", "1"], cpus=JUWELS4)
# CPU-only tasks spread evenly: 8 tasks = one per NUMA node; 2 tasks = one per socket.
check_plan("juwels 8 CPU-only tasks, one per NUMA node", JUWELS, ["--tasks", "8"],
           mems=[[i] for i in range(8)], threads=[6] * 8)
check_plan("juwels 2 CPU-only tasks, one per socket", JUWELS, ["--tasks", "2"],
           cpus=["0-23,48-71", "24-47,72-95"], mems=[[0, 1, 2, 3], [4, 5, 6, 7]])
# 8 T4 on 2 sockets: 4 GPUs per socket, 24 cores each -> 6 cores per task.
check_plan("g4dn 8 tasks x 1 T4", "g4dn-metal-8xt4.xml", ["--tasks", "8", "--gpus-per-task", "1"],
           cpus=[f"{6*i}-{6*i+5},{48+6*i}-{48+6*i+5}" for i in range(8)],
           mems=[[0]] * 4 + [[1]] * 4)
# AMD: 8 MI50 (rsmi) on 2 NUMA nodes.
check_plan("corona-rome 8 tasks x 1 MI50", "corona-rome-8xmi50-rsmi.xml", ["--tasks", "8", "--gpus-per-task", "1"],
           mems=[[0]] * 4 + [[1]] * 4, threads=[6] * 8)
# Memory-only nodes: only when asked (cpuless), and a GPU's own GPU-memory node.
W = "witherspoon-p9-6xv100-gpumem-numa.xml"
check_plan("witherspoon local without cpuless", W, ["--tasks", "6", "--gpus-per-task", "1"],
           mems=[[0]] * 3 + [[8]] * 3)
check_plan("witherspoon local,cpuless adds the GPU's own memory node", W,
           ["--tasks", "6", "--gpus-per-task", "1", "--numa-policy", "local,cpuless"],
           mems=[[0, 255], [0, 254], [0, 253], [8, 252], [8, 251], [8, 250]])
Q = "qemu-heteromem-dram-hbm-nvm.xml"
check_plan("heteromem interleave: CPU nodes only", Q, ["--tasks", "1", "--numa-policy", "interleave"],
           mems=[[0, 1]], mode="interleave")
check_plan("heteromem interleave,cpuless: all nodes", Q, ["--tasks", "1", "--numa-policy", "interleave,cpuless"],
           mems=[[0, 1, 2, 4, 6, 8, 9]])
check_plan("heteromem weighted:0,2 names nodes", Q, ["--tasks", "1", "--numa-policy", "weighted:0,2"],
           mems=[[0, 2]], mode="weighted_interleave")
check_plan("heteromem prefer", Q, ["--tasks", "2", "--numa-policy", "prefer"], mode="preferred_many")
check_plan("none leaves CPUs and memory alone", XE, ["--tasks", "4", "--gpus-per-task", "1", "--numa-policy", "none"],
           cpus=[""] * 4, mode="none", threads=[28] * 4)
check_plan("KNL flat: MCDRAM never bound without cpuless", "knl-7250-quad-flat-hwloc1.xml",
           ["--tasks", "4"], mems=[[0]] * 4)
check_plan("KNL flat: local,cpuless adds MCDRAM", "knl-7250-quad-flat-hwloc1.xml",
           ["--tasks", "1", "--numa-policy", "local,cpuless"], mems=[[0, 1]])
check_plan("more tasks than cores share, with a warning", "xeon-4s-offline-pus.xml", ["--tasks", "9"],
           warn="share")
# Fewer cores than tasks: shared evenly (2 per core), inside the GPUs' home
# (core 0, socket 0) up to that load before the other socket's core 24.
check_plan("4 tasks on 2 cores share them evenly, home first", "g4dn-metal-8xt4.xml",
           ["--tasks", "4", "--task-gpus", "0,1;0,1;0,1;0,1", "--cpus", "0,24"],
           cpus=["0", "0", "24", "24"], warn="share")

# ---- Planner v2 regression cases (issue 10), pinned exactly ----------------
# -c is a size: 8 cores (16 PUs) asked, 16 allocated, 6 local to the GPU ->
# the 6 local ones plus 2 of the same socket's node 2 (v1 gave 6).
check_plan("xe8640 -c 16 on a partial allocation gets 8 cores", XE,
           ["--tasks", "1", "--gpus-per-task", "1", "--cpus-per-task", "16",
            "--cpus", "40-47,56-63,152-159,168-175"],
           cpus=["40-47,152-159"], mems=[[2, 3]], threads=[8])
# corona-naples: -c 24 (12 cores) on 12 allocated cores, 1 of them GPU-local (v1 gave 1).
check_plan("corona-naples -c 24 on 12 cores gets all 12", "corona-naples-4xmi50-opencl.xml",
           ["--tasks", "1", "--gpus-per-task", "1", "--cpus-per-task", "24",
            "--cpus", "0-6,18-22,48-54,66-70"],
           cpus=["0-6,18-22,48-54,66-70"], threads=[12])
# +1s on node boundaries: 4 nodes of 7 cores on 2 sockets, 8 tasks: same sizes
# as v1 (4,4,4,4,3,3,3,3) but no task straddles.
check_plan("8 CPU-only tasks on 4 nodes of 7 cores: no straddle", XE,
           ["--tasks", "8", "--cpus", "0-6,14-20,56-62,70-76,112-118,126-132,168-174,182-188"],
           cpus=["0-3,112-115", "4-6,116-118", "14-17,126-129", "18-20,130-132",
                 "56-59,168-171", "60-62,172-174", "70-73,182-185", "74-76,186-188"],
           mems=[[0], [0], [1], [1], [4], [4], [5], [5]])
# XE8640 10 cores over the socket boundary (7 on node 3, 3 on node 4): 3,2,2,3
# cut at 55/56 (v1: 3,3,2,2 with a 2-core task across sockets).
check_plan("xe8640 4 tasks over the socket boundary: cut at 55/56", XE,
           ["--tasks", "4", "--cpus", "49-58,161-170"],
           cpus=["49-51,161-163", "52-53,164-165", "54-55,166-167", "56-58,168-170"],
           mems=[[3], [3], [3], [4]])
# g4dn: 12 cores on socket 0, 6 on socket 1: 4/4/4/6 aligned (v1: 5,5,4,4 with
# a 2+2 cross-socket task).
check_plan("g4dn 4 tasks on 12+6 cores: NUMA-aligned 4/4/4/6", "g4dn-metal-8xt4.xml",
           ["--tasks", "4", "--cpus", "12-29,60-77"],
           cpus=["12-15,60-63", "16-19,64-67", "20-23,68-71", "24-29,72-77"],
           mems=[[0], [0], [0], [1]])
# GPU crowding: 16 tasks on DGX-2's 4 cores share inside their GPU's socket
# (v1 put 8 on the wrong socket).
check_plan("dgx2 16 tasks x 1 GPU share inside their socket", "dgx2-16xv100.xml",
           ["--tasks", "16", "--gpus-per-task", "1"],
           cpus=["0", "1"] * 4 + ["24", "25"] * 4, mems=[[0]] * 8 + [[1]] * 8, warn="share")
# Remote GPUs whose nearest nodes tie (socket-0 step, GPUs on socket 1): one
# node each, spread over the free nodes (v1 bound both to nodes 0 and 2).
check_plan("xe8640 remote GPUs with tied nearest nodes bind one node each", XE,
           ["--tasks", "4", "--gpus-per-task", "1", "--cpus", "0-55,112-167"],
           cpus=[XE_NODE[3], XE_NODE[1], "0-13,112-125", "28-41,140-153"],
           mems=[[3], [1], [0], [2]])
# NPS4 EPYC + 4 A100, whole node: 16 of 64 cores per task, GPU's node + neighbour.
check_plan("meluxina 4 tasks x 1 A100 use all 64 cores", "meluxina-4xa100-epyc7452-nps4-hwloc1.xml",
           ["--tasks", "4", "--gpus-per-task", "1"],
           cpus=["16-31,80-95", "0-15,64-79", "48-63,112-127", "32-47,96-111"],
           mems=[[2, 3], [0, 1], [6, 7], [4, 5]], threads=[16] * 4)
# One GPU task on a whole node uses its GPU's socket (v1: its 16 local
# cores of 128; v2: the whole node, half of it across the socket link);
# wide gives it the whole node.
check_plan("jusuf 1 GPU task uses its GPU's socket", "jusuf-1xv100-epyc7742-nps4-hwloc1.xml",
           ["--tasks", "1", "--gpus-per-task", "1"], cpus=["0-63,128-191"], threads=[64],
           mems=[[0, 1, 2, 3]])
check_plan("jusuf 1 GPU task, wide: the whole node", "jusuf-1xv100-epyc7742-nps4-hwloc1.xml",
           ["--tasks", "1", "--gpus-per-task", "1", "--numa-policy", "local,wide"],
           cpus=["0-255"], threads=[128])
# Memoryless CPUs (node 0 offline): attached to node 1, memory bound there;
# each task inside one CPU group (node 1's 8 cores | package 0's 9; v2 gave
# task 0 one core of package 0 as its +1).
check_plan("offline node 0: memoryless CPUs bind the one attached node",
           "r630-offline-cpus-offline-node0.xml", ["--tasks", "2"],
           cpus=["5,7,9,11,13,15,17,19", "4,6,8,10,12,14,16,18,20"], mems=[[1], [1]])
# GH200 model: one task per superchip, its 72 Grace cores; GPU memory only with cpuless.
GH = "gh200-4superchip-synthetic.xml"
check_plan("gh200 4 tasks x 1 GPU: one Grace each", GH, ["--tasks", "4", "--gpus-per-task", "1"],
           cpus=["0-71", "72-143", "144-215", "216-287"], mems=[[0], [1], [2], [3]])
check_plan("gh200 local,cpuless adds the GPU's 8 memory nodes", GH,
           ["--tasks", "2", "--task-gpus", "1;3", "--cpus-per-task", "72", "--numa-policy", "local,cpuless"],
           mems=[[1] + list(range(12, 20)), [3] + list(range(28, 36))])
# prefer: the task's domains plus its GPU's node (here a remote GPU: the step
# has only node 2; local binds node 2 alone, prefer names node 3 as well).
check_plan("xe8640 remote GPU, local: the task's node only", XE,
           ["--tasks", "1", "--gpus-per-task", "1", "--cpus", "28-41,140-153"], mems=[[2]])
check_plan("xe8640 remote GPU, prefer: the task's node and the GPU's", XE,
           ["--tasks", "1", "--gpus-per-task", "1", "--cpus", "28-41,140-153",
            "--numa-policy", "prefer"], mems=[[2, 3]], mode="preferred_many")
check_plan("offline node 0: memory falls back to the node that exists",
           "r630-offline-cpus-offline-node0.xml", ["--tasks", "2"], mems=[[1], [1]])
check_plan("--omp-guard=3,force", XE, ["--tasks", "1", "--gpus-per-task", "1", "--omp-guard=3,force"],
           env=lambda t: {k: "3" for k in omp_env(t)})
check_plan("--omp-guard=4: threads is the count exported, cores what is owned", XE,
           ["--tasks", "4", "--gpus-per-task", "1", "--omp-guard=4"], threads=[4] * 4)
check_plan("--omp-guard=3,bind", XE, ["--tasks", "1", "--gpus-per-task", "1", "--omp-guard=3,bind"],
           env=lambda t: {**{k: "3" for k in omp_env(t)}, "OMP_PROC_BIND": "spread"})

# JSON shape of topo.
rc, out, err = run("topo", "--topology", f"{TOPO}/{XE}", "--json")
t = json.loads(out) if rc == 0 else {}
ok(rc == 0 and sorted(t) == ["gpus", "nics", "numa_nodes"], "topo --json: top-level keys", err)
if t:
    ok(all(sorted(x) == ["cpus", "has_cpus", "kind", "memory_bytes", "os_index"] for x in t["numa_nodes"]),
       "topo --json: NUMA node keys")
    ok(all(sorted(x) == ["cpus", "memory_nodes", "nearest_nics", "nic_distances", "numa_nodes",
                         "os_devices", "pci_bus_id", "vendor"]
           for x in t["gpus"]), "topo --json: GPU keys")
    ok(all(sorted(x) == ["active_ports", "cpus", "default_candidate", "kind", "name", "netdev",
                         "numa_nodes", "pci_bus_id", "ports", "rdma"] for x in t["nics"]),
       "topo --json: NIC keys")
    ok([(n["name"], n["kind"], n["rdma"], n["numa_nodes"]) for n in t["nics"]] ==
       [("eno8303", "Ethernet", False, [0]), ("eno8403", "Ethernet", False, [0]),
        ("mlx5_0", "IB", True, [3]), ("mlx5_1", "IB", True, [3]), ("mlx5_2", "IB", True, [1]),
        ("mlx5_3", "IB", True, [5])], "topo --json: XE8640 NICs, kinds and NUMA nodes")
    ok([g["nearest_nics"] for g in t["gpus"]] == [["mlx5_0", "mlx5_1"], ["mlx5_2"], ["mlx5_3"], ["mlx5_3"]],
       "topo --json: GPU <-> nearest NICs on the XE8640")
    ok(t["gpus"][0]["nic_distances"][0] == {"nic": "mlx5_0", "distance": "switch"} and
       t["gpus"][2]["nic_distances"][0] == {"nic": "mlx5_3", "distance": "package"},
       "topo --json: PCI distances, nearest first")
    ok([g["pci_bus_id"] for g in t["gpus"]] == ["0000:4e:00.0", "0000:5f:00.0", "0000:cb:00.0", "0000:db:00.0"],
       "topo --json: GPUs in bus order")
    ok([g["numa_nodes"] for g in t["gpus"]] == [[3], [1], [7], [5]], "topo --json: GPU NUMA nodes")
    ok(t["numa_nodes"][3]["cpus"] == XE_NODE[3] and t["numa_nodes"][3]["kind"] == "DRAM",
       "topo --json: node 3 cpulist and kind")
    ok(all(g["vendor"] == "nvidia" for g in t["gpus"]), "topo --json: vendor")
rc, out, err = run("topo", "--json")
ok(rc == 0 and json.loads(out)["numa_nodes"], "topo --json on this machine", err)
rc, out, err = run("plan", "--tasks", "2", "--json")
ok(rc == 0 and len(json.loads(out)["tasks"]) == 2, "plan on this machine", err)

# --net-affinity: each task's nearest HCA, the node's NCCL_IB_HCA (docs/network.md).
JW = "juwels-booster-4xa100-epyc7402-nps4.xml"
NCCL = "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"
p, err = plan(JW, "--tasks", "4", "--gpus-per-task", "1", "--net-affinity")
ok(p and [t["nics"] for t in p["tasks"]] == [["mlx5_0"], ["mlx5_1"], ["mlx5_2"], ["mlx5_3"]],
   "plan --net-affinity: JUWELS Booster GPU i -> its own HCA", err)
ok(p and all(t["env"]["UCX_NET_DEVICES"] == f"mlx5_{i}:1" and t["env"]["NVSHMEM_HCA_LIST"] == f"mlx5_{i}:1"
             and t["env"]["OMPI_MCA_btl_openib_if_include"] == f"mlx5_{i}:1"
             for i, t in enumerate(p["tasks"])), "plan --net-affinity: per-task variables in env")
ok(p and {t["env"]["NCCL_IB_HCA"] for t in p["tasks"]} == {NCCL}, "plan --net-affinity: one NCCL_IB_HCA per node")
p, err = plan(JW, "--tasks", "2", "--gpus-per-task", "1", "--net-affinity=2", "--net-deny", "mlx5_0")
ok(p and [t["nics"] for t in p["tasks"]] == [["mlx5_1", "mlx5_2"], ["mlx5_1", "mlx5_2"]],
   "plan --net-affinity=2 --net-deny mlx5_0: nearest first, the denied HCA never", err)
p, err = plan(JW, "--tasks", "4", "--gpus-per-task", "1")
ok(p and all(t["nics"] == [] and "UCX_NET_DEVICES" not in t["env"] for t in p["tasks"]),
   "plan without --net-affinity: no NIC, no variable", err)
p, err = plan("dgx2-16xv100.xml", "--tasks", "2", "--gpus-per-task", "1", "--net-affinity")
ok(p and all(t["nics"] == [] and t["env"] == {} for t in p["tasks"]),
   "plan --net-affinity on a node without NICs: nothing, no error", err)
rc, out, err = run("plan", "--topology", f"{TOPO}/{JW}", "--tasks", "4", "--gpus-per-task", "1",
                   "--net-affinity")
ok(rc == 0 and out.splitlines()[1].split()[-1] == "mlx5_0" and f"env 3 NCCL_IB_HCA={NCCL}" in out,
   "plan --net-affinity text: a nics column and env lines", out + err)
env = dict(os.environ, UCX_NET_DEVICES="mlx5_3:1")
for k in ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "CUDA_VISIBLE_DEVICES", "OMPI_COMM_WORLD_LOCAL_RANK"):
    env.pop(k, None)
pr = subprocess.run([CLI, "exec", "--topology", f"{TOPO}/{JW}", "--local-rank", "1", "--local-size", "4",
                     "--gpus", "all", "--net-affinity", "--dry-run", "--json"],
                    capture_output=True, text=True, env=env)
x = json.loads(pr.stdout) if pr.returncode == 0 else {}
ok(x.get("nics") == ["mlx5_1"] and x.get("net_kept") == "UCX_NET_DEVICES" and "UCX_NET_DEVICES" not in x["env"]
   and x["env"].get("NVSHMEM_HCA_LIST") == "mlx5_1:1" and x["env"].get("NCCL_IB_HCA") == NCCL,
   "exec --net-affinity --dry-run: rank 1's HCA, the user's UCX_NET_DEVICES kept", pr.stdout + pr.stderr)
pr = subprocess.run([CLI, "exec", "--topology", f"{TOPO}/{JW}", "--local-rank", "1", "--local-size", "4",
                     "--gpus", "all", "--net-affinity=auto,force", "--dry-run", "--json"],
                    capture_output=True, text=True, env=env)
x = json.loads(pr.stdout) if pr.returncode == 0 else {}
ok(x.get("env", {}).get("UCX_NET_DEVICES") == "mlx5_1:1" and x.get("net_kept") == "",
   "exec --net-affinity=auto,force overwrites UCX_NET_DEVICES", pr.stdout + pr.stderr)
rc, out, err = run("exec", "--net-affinity", "2", "true")
ok(rc == 2 and "did you mean --net-affinity=2?" in err, "exec --net-affinity 2: the value must follow '='", err)

# --- issue 21: GPU tasks on their GPU's package, L3-aligned cuts, no mixed
# groups, memoryless dies spread, --explain -----------------------------------
# 32 CPU-only tasks on 48 cores in 3-core L3s (JUWELS Booster NPS4; Corona
# Rome NPS1): a 2- and a 1-core task per L3, none over two (v2: 5 did,
# 2-3 / 8-9 / ...).
L3_32 = [c for k in range(8) for c in (f"{6*k}-{6*k+1},{48+6*k}-{48+6*k+1}", f"{6*k+2},{48+6*k+2}",
                                        f"{6*k+3}-{6*k+4},{48+6*k+3}-{48+6*k+4}", f"{6*k+5},{48+6*k+5}")]
for topo in (JUWELS, "corona-rome-8xmi50-rsmi.xml"):
    check_plan(f"{topo}: 32 CPU-only tasks L3-aligned", topo, ["--tasks", "32"], cpus=L3_32)
    p, err = plan(topo, "--tasks", "32", "--explain")
    ok(p and all(t["groups"] == 1 for t in p["explain"]["tasks"]),
       f"{topo}: 32 tasks, --explain: every task in one CPU group", err)
# r630 (node 0 offline), 4 tasks: the +1 where it mixes no groups (v2:
# 5,7,9,11,13 | 4,15,17,19 | ..., task 1 over both groups).
check_plan("r630 4 tasks: no task mixes the two groups", "r630-offline-cpus-offline-node0.xml",
           ["--tasks", "4"], cpus=["5,7,9,11", "13,15,17,19", "4,6,8,10,12", "14,16,18,20"],
           mems=[[1]] * 4)
# A 2990WX as hwloc 2 sees it (memoryless dies under no node, all distances
# equal): each die attaches on its own, ties spread (v2: 3 + 1 and 0,2).
TR = "threadripper-2990wx-4die-2memless-hwloc2.xml"
check_plan("2990WX 4 tasks: each memory node bound twice", TR, ["--tasks", "4"],
           mems=[[0], [0], [2], [2]])
check_plan("2990WX 2 tasks: one memory node each", TR, ["--tasks", "2"],
           cpus=["0-15,32-47", "16-31,48-63"], mems=[[0], [2]])
# GH200 model on 48 + 72 + 24 cores, 3 tasks: the 24 cores v2 left idle go
# to a task (the same smallest slice).
check_plan("gh200 3 tasks on a partial allocation: no idle core", GH,
           ["--tasks", "3", "--cpus", "0-47,72-143,216-239"],
           cpus=["0-47", "72-107", "108-143,216-239"])


def explain(topo, *args):
    p, err = plan(topo, "--explain", *args)
    return (p["explain"] if p else None), err


# --explain: the lines name alternatives only after planning them.
x, err = explain(XE, "--tasks", "4", "--gpus-per-task", "1")
ok(x and all("--cpus-per-task 28 would keep it on its GPU's node: 28 CPUs" in t["why"] and
             t["why"].startswith("28 cores: its GPU's socket has 56 allocated cores for 2 GPU tasks\n") and
             t["cores"] == 28 and t["off_cores"] == 14 and t["off_distance"] == 12 and
             t["packages"] == 1 and t["note"] == "" and
             {"args": ["--cpus-per-task", "28"]}.items() <= t["alternatives"][0].items()
             for t in x["tasks"]),
   "xe8640 4 GPU tasks --explain: 14 cores off the GPU's node at distance 12; -c 28 keeps them on it",
   err)
check_plan("... and -c 28 does keep each on its GPU's node", XE,
           ["--tasks", "4", "--gpus-per-task", "1", "--cpus-per-task", "28"],
           cpus=[XE_NODE[3], XE_NODE[1], XE_NODE[7], XE_NODE[5]])
x, err = explain(W, "--tasks", "2", "--gpus-per-task", "1", "--numa-policy", "local,cpuless")
ok(x and all("4 allocated cores on other sockets stay idle (the plan warns)\n--cpus-per-task 16 "
             "would use them: 16 CPUs for it, over 2 sockets\n--numa-policy local,cpuless,wide would "
             "use them: 4 cores for it, over 2 sockets" in t["why"] and
             t["note"] == "kept on its GPU's socket: 4 allocated cores idle on other sockets" and
             [a["args"] for a in t["alternatives"]] == [["--cpus-per-task", "16"],
                                                        ["--numa-policy", "local,cpuless,wide"]]
             for t in x["tasks"]),
   "witherspoon --explain: the idle socket, and the -c or modifier that would use it", err)
x, err = explain(GH, "--tasks", "3", "--cpus", "0-47,72-143,216-239")
cut = x and x["cuts"][0]
ok(cut and cut["chosen"] == "numa-aligned" and cut["what"] == "CPU-only tasks" and
   "a larger smallest task: 36.0 effective cores, 30.0 split in task order" in cut["decided"]
   and {c["family"] for c in cut["candidates"]} >= {"consecutive", "moved", "numa-aligned"},
   "gh200 partial --explain: the candidates and what decided", err)
ok(x and "--cpus-per-task 36 would keep every task inside one NUMA node: 36 CPUs each" in x["tasks"][2]["why"],
   "gh200 partial --explain: the -c that keeps every task inside one node", err)
p, err = plan(GH, "--tasks", "3", "--cpus", "0-47,72-143,216-239", "--cpus-per-task", "36")
ok(p and all(len(t["mem_nodes"]) == 1 and t["cores"] == 36 for t in p["tasks"]),
   "... and -c 36 does", err)
rc, out, err = run("plan", "--topology", f"{TOPO}/{XE}", "--tasks", "4", "--gpus-per-task", "1", "--explain")
ok(rc == 0 and "\nwhy (terms: docs/planner.md, \"Glossary\"):\n" in out and
   "\ntasks 0-3: 28 cores: its GPU's socket has 56 allocated cores for 2 GPU tasks\n" in out and
   "\nsplit " not in out and all(len(l) <= 100 for l in out.splitlines()[5:]),
   "plan --explain text: alike tasks once, lines of at most 100 characters, no one-task split", out + err)
# The idle-core warning: once, on stderr; quiet silences it; JSON lists it.
for policy, want in (("local", True), ("local,quiet", False)):
    rc, out, err = run("plan", "--topology", f"{TOPO}/jusuf-1xv100-epyc7742-nps4-hwloc1.xml", "--tasks",
                       "1", "--gpus-per-task", "1", "--numa-policy", policy)
    line = "numaguard: warning: 64 allocated cores stay idle: --cpus-per-task 256 or the modifier wide would use them"
    ok(rc == 0 and (err.splitlines() == [line]) == want and "warning" not in out,
       f"jusuf, 1 GPU task, {policy}: the idle-core warning {'on stderr once' if want else 'silenced'}", err)
p, err = plan("jusuf-1xv100-epyc7742-nps4-hwloc1.xml", "--tasks", "1", "--gpus-per-task", "1",
              "--numa-policy", "local,quiet")
ok(p and p["warnings"] == ["64 allocated cores stay idle: --cpus-per-task 256 or the modifier wide would use them"],
   "... and plan --json lists it in warnings[] (quiet or not)", err)
env = {k: v for k, v in os.environ.items() if k not in ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "CUDA_VISIBLE_DEVICES")}
pr = subprocess.run([CLI, "exec", "--topology", f"{TOPO}/{XE}", "--local-rank", "1", "--local-size", "2",
                     "--gpus", "0,1", "--explain", "--", "true"], capture_output=True, text=True, env=env)
ok(pr.returncode == 0 and "\nwhy        28 cores: its GPU's socket has 56 allocated cores" in pr.stdout and
   "\n           --numa-policy local,wide would use them: 56 cores for it, over 2 sockets\n" in pr.stdout and
   "\nnote       kept on its GPU's socket: 56 allocated cores idle on other sockets" in pr.stdout,
   "exec --explain: this rank's terms, why and note", pr.stdout + pr.stderr)
pr = subprocess.run([CLI, "exec", "--topology", f"{TOPO}/{XE}", "--local-rank", "1", "--local-size", "2",
                     "--gpus", "0,1", "--dry-run", "--", "true"], capture_output=True, text=True, env=env)
ok(pr.returncode == 0 and "\nwhy " not in pr.stdout, "exec --dry-run alone: no why line", pr.stdout)


# --- the plans shown in README.md and the user guide are what plan prints ---
def doc_topology(cmd):
    """A doc's --topology NAME.xml: the corpus file it abbreviates; none:
    the XE8640 the user guide's quick start names."""
    words = cmd.split()
    if "--topology" not in words:
        return f"{TOPO}/{XE}"
    name = words[words.index("--topology") + 1]
    if os.path.exists(name):
        return name
    stem = os.path.basename(name)[:-4]
    hits = sorted(f for f in os.listdir(TOPO) if f.startswith(stem))
    return f"{TOPO}/{hits[0]}" if hits else name


def doc_blocks(path):
    """Every '$ numaguard plan ...' (with '\\' continuations) and the lines
    printed after it, up to a blank line or a fence; '...' stands for lines
    left out."""
    lines = [l.rstrip() for l in open(path)]
    i = 0
    while i < len(lines):
        l = lines[i].strip()
        if not l.startswith("$ numaguard plan"):
            i += 1
            continue
        cmd = l[2:]
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd[:-1] + " " + lines[i].strip()
        shown = []
        i += 1
        while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith(("```", "$")):
            shown.append(" ".join(lines[i].split()))
            i += 1
        yield cmd, shown


def shown_in(shown, got):
    """The doc's lines appear in order, the first anywhere (a doc may leave
    out a header), the others next to each other; '...' skips lines."""
    j, skip = 0, True
    for line in shown:
        if line == "...":
            skip = True
            continue
        while skip and j < len(got) and got[j] != line:
            j += 1
        if j >= len(got) or got[j] != line:
            return False
        j, skip = j + 1, False
    return True


docs_checked = 0
for path in ("README.md", "docs/user-guide.md", "docs/network.md", "docs/planner.md"):
    for cmd, shown in doc_blocks(path):
        words = cmd.split()[2:]
        if "--topology" in words:
            k = words.index("--topology")
            del words[k:k + 2]
        rc, out, err = run("plan", "--topology", doc_topology(cmd), *words)
        got = [" ".join(l.split()) for l in out.splitlines()]
        if shown and not shown[0].startswith("task") and got and got[0].startswith("task"):
            got = got[1:]
        ok(rc == 0 and shown_in(shown, got), f"{path}: '{cmd[:70]}' prints what the doc shows",
           "\n".join(shown) + "\n--- plan prints:\n" + out + err)
        docs_checked += 1
ok(docs_checked >= 5, f"found the plan blocks of README.md, the user guide, network.md, planner.md ({docs_checked})")
# The quick start's srun verbose lines: what exec prints for the same ranks.
guide = open("docs/user-guide.md").read()
quick = guide[guide.index("## Quick start"):].split("\n## ")[0]
for line in [l.strip() for l in quick.splitlines() if l.strip().startswith("numaguard: rank ")]:
    r = line.split()[2]
    pr = subprocess.run([CLI, "exec", "--verbose", "--topology", f"{TOPO}/{XE}", "--gpus", "all",
                         "--local-rank", r, "--local-size", "4", "--omp-guard", "--", "true"],
                        capture_output=True, text=True, env=env)
    want = line.split(":", 2)[2].strip()
    got = [l.split(":", 2)[2].strip() for l in pr.stderr.splitlines() if l.startswith(f"numaguard: task {r}:")]
    ok(got and got[0].replace(" (plan only)", "") == want,
       f"user guide quick start: rank {r}'s verbose line is what exec prints", pr.stderr)

# Errors: one line naming the option, the value and the valid forms.
for args, needle in [
    (["plan", "--tasks", "2", "--net-affinity=0"], "--net-affinity: invalid value '0'"),
    (["plan", "--tasks", "2", "--net-affinity=off,force"], "--net-affinity: invalid value 'off,force'"),
    (["plan", "--tasks", "2", "--net-affinity", "--net-deny", "mlx 5"], "net_deny: invalid NIC name 'mlx 5'"),
    (["exec", "--net-affinity=near", "--", "true"], "--net-affinity: invalid value 'near'"),
    (["plan", "--tasks", "2", "--numa-policy", "locl"], "--numa-policy: invalid value 'locl'"),
    (["plan", "--tasks", "2", "--omp-guard=0"], "--omp-guard: invalid value '0'"),
    (["plan", "--tasks", "x"], "invalid value 'x' for --tasks"),
    (["plan", "--tasks", "5", "--gpus-per-task", "1", "--topology", f"{TOPO}/{XE}"],
     "need 5 GPUs; this topology has 4: use --tasks 4, or --task-gpus to share them"),
    (["plan", "--tasks", "1", "--gpus-per-task", "5", "--topology", f"{TOPO}/{XE}"],
     "this topology has 4: use --gpus-per-task 4 or less, or --task-gpus"),
    (["plan", "--tasks", "2", "--gpus-per-task", "1", "--topology",
      f"{TOPO}/knl-7250-quad-flat-hwloc24.xml"],
     "this topology has none: leave out --gpus-per-task for CPU-only tasks"),
    (["version"], "unknown command 'version': the versions are 'numaguard --version'"),
    (["plan", "--tasks", "1", "--task-gpus", "9", "--topology", f"{TOPO}/{XE}"], "not a GPU index"),
    (["plan", "--tasks", "1", "--cpus", "3-1"], "--cpus"),
    (["topo", "--topology", "/nonexistent.xml"], "cannot load topology /nonexistent.xml"),
    (["frobnicate"], "unknown command"),
    # hwloc 2.x loads it and numaguard's own check refuses it; hwloc 3.0
    # refuses it itself (make check-hwloc-next).
    (["topo", "--topology", "tests/fuzz/crashes/fuzz_topology_xml-duplicate-numa-os-index.xml"],
     "is not a valid hwloc XML topology" if HWLOC3 else "two NUMA nodes are numbered 2"),
]:
    rc, out, err = run(*args)
    lines = err.strip().splitlines()
    ok(rc != 0 and lines and needle in lines[-1], f"error for {' '.join(args[:4])}: {needle}", err)

# An XML of a newer format than the running hwloc reads: one line naming
# both versions (hwloc 2.x reads no 3.0 XML; under hwloc 3 t-hwloc-next-xml
# checks 1.x XMLs the same way).
if not HWLOC3:
    with tempfile.TemporaryDirectory() as d:
        with open(f"{TOPO}/laptop-hp-elitebook-i7-1370p.xml") as f:
            xml = f.read().replace('<topology version="2.0">', '<topology version="3.0">', 1)
        with open(os.path.join(d, "v3.xml"), "w") as f:
            f.write(xml)
        rc, out, err = run("topo", "--topology", os.path.join(d, "v3.xml"))
        hw = run("--version")[1].split("\nhwloc ")[1].split()[0]
        ok(rc == 1 and len(err.splitlines()) == 1 and "is an hwloc 3.0 XML topology" in err
           and f"runs hwloc {hw}, which reads hwloc XML 1.x and 2.x only" in err
           and "--export-xml-flags v2" in err,
           f"a version-3.0 XML under hwloc {hw}: one line naming both versions", err)

# --numa-policy=help says what interleave/weighted use without NODES: every
# node with CPUs (the planner's rule, docs/grammar.md), not the GPU's nodes.
rc, out, err = run("exec", "--numa-policy=help", "--dry-run")
ok("Without NODES\n    (or with 'all') every node with CPUs is used; with cpuless every node." in err + out
   and "near the task's GPU(s) are used" not in err + out,
   "--numa-policy=help: without NODES every node with CPUs", err)

# --version names the hwloc release it runs with (the root's hwlocVersion),
# not the API number (2.8 for every later 2.x).
rc, out, err = run("--version")
lst = subprocess.run(["lstopo-no-graphics", "--version"], capture_output=True, text=True)
want = lst.stdout.split()[-1] if lst.returncode == 0 and lst.stdout.split() else None
ok(rc == 0 and want and f"hwloc {want} running" in out,
   f"--version names the running hwloc release ({want})", out)

# check --all-mine with nothing to show says so, as a user with no other
# process: a uid no process has now (not 65534: other jobs on a shared
# machine run as nobody), without a passwd entry. A build whose libraries
# that user cannot read (check-hwloc-next's rpath under a clone in /root)
# cannot run as that user: a skip, said.
def unused_uid():
    used = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                used.add(os.stat("/proc/" + d).st_uid)
            except OSError:
                pass
    return next(u for u in range(2000000000, 2000010000) if u not in used)


if os.geteuid() == 0 and shutil.which("setpriv"):
    uid = unused_uid()
    pr = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                         os.path.abspath(CLI), "check", "--all-mine"], capture_output=True, text=True)
    desc = "check --all-mine with nothing to show says so"
    if pr.returncode in (126, 127) and ("error while loading shared libraries" in pr.stderr or
                                        "Permission denied" in pr.stderr):
        ok(True, desc + " # skip uid %d cannot run this build: %s" % (uid, pr.stderr.strip()[:100]))
    else:
        ok(pr.returncode == 0 and pr.stdout.strip() == "no process of uid %d but this check is running" % uid,
           desc, pr.stdout + pr.stderr)


# Mistakes that name their fix (issue 30): each one line, exactly, exit 2.
KNL = "knl-7250-quad-flat-hwloc24.xml"
P5 = "p5-48xlarge-8xh100-32efa-synthetic.xml"
FORMS = ("expected local|prefer|interleave[:NODES]|weighted[:NODES]|none with optional modifiers "
         "verbose,quiet,strict,help,smt,cpuless,wide (NODES = all or a nodelist like 0-3,8)")
for args, want in [
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "2", "--cpus", "0-300"],
     "numaguard: plan: --cpus 0-300: CPUs 224-300 are not on this machine (its CPUs: 0-223)"),
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "1", "--cpus", "0-3,500"],
     "numaguard: plan: --cpus 0-3,500: CPU 500 is not on this machine (its CPUs: 0-223)"),
    (["plan", "--topology", f"{TOPO}/opteron-8s-cgroup-cpuset-disallowed.xml", "--tasks", "2",
      "--cpus", "0-7"],
     "numaguard: plan: --cpus 0-7: CPUs 4,7 are not on this machine (its CPUs: 0-3,5-6,12-15)"),
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "2", "--omp-guard", "8"],
     "numaguard: plan: did you mean --omp-guard=8? (its value follows '=': '--omp-guard 8' is "
     "the bare --omp-guard and a stray argument)"),
    (["plan", "--omp-guard", "auto,bind", "--tasks", "2", "--topology", f"{TOPO}/{XE}"],
     "numaguard: plan: did you mean --omp-guard=auto,bind? (its value follows '=': '--omp-guard "
     "auto,bind' is the bare --omp-guard and a stray argument)"),
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "2", "--net-affinity", "2"],
     "numaguard: plan: did you mean --net-affinity=2? (its value follows '=': '--net-affinity 2' "
     "is the bare --net-affinity and a stray argument)"),
    (["exec", "--topology", f"{TOPO}/{XE}", "--omp-guard", "8", "./app"],
     "numaguard: exec: did you mean --omp-guard=8? (its value follows '=': '--omp-guard 8' is the "
     "bare --omp-guard and a command to run)"),
    (["exec", "--topology", f"{TOPO}/{KNL}", "--gpus", "0", "--dry-run"],
     "numaguard: exec: --gpus: '0': this machine has no GPUs (none in its topology): leave out "
     "--gpus, or give --gpus none"),
    (["plan", "--topology", f"{TOPO}/{KNL}", "--tasks", "1", "--task-gpus", "0"],
     "numaguard: plan: --task-gpus: '0': this topology has no GPUs: leave out --task-gpus for "
     "CPU-only tasks"),
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "1", "--numa-policy", "locl"],
     "numaguard: --numa-policy: invalid value 'locl': unknown item 'locl' (did you mean "
     "'local'?); " + FORMS),
    (["exec", "--topology", f"{TOPO}/{XE}", "--numa-policy=prefered,smt", "--dry-run"],
     "numaguard: exec: --numa-policy: invalid value 'prefered,smt': unknown item 'prefered' (did "
     "you mean 'prefer'?); " + FORMS),
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "1", "--numa-policy", "interleav:0-3"],
     "numaguard: --numa-policy: invalid value 'interleav:0-3': unknown item 'interleav:0-3' (did "
     "you mean 'interleave:0-3'?); " + FORMS),
    # Planner v5 (issue 37): what srun refuses, and every refused value named.
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "4", "--cpus-per-task", "100"],
     "numaguard: plan: --tasks 4 x --cpus-per-task 100 need 200 cores (50 each, 2 CPUs per core), "
     "but the step has 112 cores, 224 CPUs (this machine's CPUs): srun refuses it; use "
     "--cpus-per-task 56 or --tasks 2"),
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "4", "--cpus", "0-7", "--cpus-per-task", "4"],
     "numaguard: plan: --tasks 4 x --cpus-per-task 4 need 16 cores (4 each, 1 CPU per core), but "
     "the step has 8 cores, 8 CPUs (the CPUs --cpus gives): srun refuses it; use --cpus-per-task 2 "
     "or --tasks 2"),
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "1", "--cpus-per-task", "300"],
     "numaguard: plan: --cpus-per-task 300 is more than the 224 CPUs of the step (this machine's "
     "CPUs): srun refuses it; at most --cpus-per-task 224"),
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "2", "--numa-policy", "interleave:9"],
     "numaguard: plan: --numa-policy=interleave:9: NUMA node 9 does not exist on this machine (its "
     "nodes: 0-7)"),
    (["plan", "--topology", f"{TOPO}/{XE}", "--tasks", "3", "--task-gpus", "0,1,2"],
     "numaguard: plan: --task-gpus \"0,1,2\" is one group (one task with all of those GPUs) but "
     "--tasks is 3: ';' separates tasks, ',' one task's GPUs (\"0;1;2\": a GPU each)"),
]:
    rc, out, err = run(*args)
    ok(rc == 2 and err == want + "\n" and out == "",
       f"mistake {' '.join(a for a in args if not a.startswith(TOPO))}: exit 2, exactly one line "
       "naming the fix", f"rc {rc}\ngot  {err!r}\nwant {want!r}")

# A NIC filter that leaves every task without a NIC is said (the p5 model's
# NICs are EFA rdmap*, none mlx5_0), and the plan still runs.
rc, out, err = run("plan", "--topology", f"{TOPO}/{P5}", "--tasks", "2", "--gpus-per-task", "1",
                   "--net-affinity", "--net-allow", "mlx5_0")
ok(rc == 0 and "warning: the NIC filter (net_allow/net_deny) leaves every task without a NIC: this "
   "node's RDMA NICs are rdmap" in err, "p5 --net-allow mlx5_0: a warning that no task gets a NIC", err)


# Planner v5 rule 4 (docs/planner.md): once the slices are cut, a remote
# task moves to the equally near node with the most cores to spare. Corona,
# cores 18-35,66-83 (nodes 3-5), 16 tasks -c 2, GPUs round robin: GPU 3
# (node 7, as near nodes 4 and 5) had all its tasks on node 4 with 1 core
# to spare there and 2 on node 5; its first task now takes node 5's (34,82)
# and the warning names both nodes.
check_plan("corona 16 tasks -c 2, cpus 18-35,66-83: GPU 3's first task on node 5",
           "corona-naples-4xmi50-opencl.xml",
           ["--tasks", "16", "--cpus-per-task", "2", "--cpus", "18-35,66-83",
            "--task-gpus", ";".join(str(t % 4) for t in range(16))],
           cpus=["18,66", "19,67", "30,78", "34,82", "20,68", "21,69", "31,79", "25,73",
                 "22,70", "23,71", "32,80", "26,74", "28,76", "29,77", "33,81", "27,75"],
           mems=[[3], [3], [5], [5], [3], [3], [5], [4], [3], [3], [5], [4], [4], [4], [5], [4]],
           warn="GPU 0000:73:00.0 (on NUMA node 7): no allowed core is local to it; its tasks "
                "use NUMA nodes 4-5, the nearest with the most cores to spare")

# Over the corpus: plan refuses exactly the -c shapes srun refuses (tasks x
# ceil(C / CPUs per core) beyond the step's cores), exit 2 naming them, and
# plans the largest that fits; on the whole node and on its first half.
def corpus_topologies():
    """Each corpus file numaguard reads: its name and its `topo --json`."""
    for f in sorted(os.listdir(TOPO)):
        if not f.endswith(".xml"):
            continue
        rc, out, _ = run("topo", "--topology", f"{TOPO}/{f}", "--json")
        if rc == 0:
            yield f, json.loads(out)


def corpus_cpt():
    bad = []
    cases = 0
    for f, topo in corpus_topologies():
        pus = sorted({c for nd in topo["numa_nodes"] for c in _cpulist(nd.get("cpus", ""))})
        for cpus in (pus, pus[:len(pus) // 2]):
            if len(cpus) < 2:
                continue
            lst = _ranges(cpus)
            # 2 tasks of all the CPUs each: beyond any step of 2+ CPUs
            rc, out, err = run("plan", "--topology", f"{TOPO}/{f}", "--cpus", lst, "--tasks", "2",
                               "--cpus-per-task", str(len(cpus)))
            cases += 1
            if rc != 2 or "srun refuses it" not in err or out:
                bad.append(f"{f} {len(cpus)} CPUs, 2 x -c {len(cpus)}: rc {rc} {err.strip()[:120]}")
            # 1 task of one CPU always fits
            rc, out, err = run("plan", "--topology", f"{TOPO}/{f}", "--cpus", lst, "--tasks", "1",
                               "--cpus-per-task", "1")
            cases += 1
            if rc != 0:
                bad.append(f"{f} {len(cpus)} CPUs, 1 x -c 1: rc {rc} {err.strip()[:120]}")
    return cases, bad


def _ranges(cpus):
    out, start = [], None
    for i, c in enumerate(cpus):
        if start is None:
            start = c
        if i + 1 == len(cpus) or cpus[i + 1] != c + 1:
            out.append(str(start) if start == c else f"{start}-{c}")
            start = None
    return ",".join(out)


def _cpulist(text):
    for part in filter(None, str(text).split(",")):
        a, _, b = part.partition("-")
        yield from range(int(a), int(b or a) + 1)


# Over the corpus: --explain says what the final plan is. After the cuts,
# passes re-lay tasks (a remote task moved to an equally near node, a GPU's
# remote tasks whole per node, a local spill swapped for them, a node's GPU
# tasks on whole L3s): every task
# a split lists holds cores among the split's `cpus`, no core is in two
# splits, no task in two, a task's `cut` is the split that lists it, its
# sentence "the N cores were split among K tasks" / "were re-laid" matches
# that split, and "its cores are on node X" names the node holding most of
# its cores. Shapes: CPU-only, 1-7 tasks per GPU round robin, on the whole
# node and four ranges of its PUs (where remote GPUs are), plus the four
# plans those passes change (tests/unit/plan/test_plan_seat.c).
def explain_corpus():
    bad, plans, relaid, listed = [], 0, 0, 0
    for f, topo in corpus_topologies():
        node_cpus = _node_cpus(topo)
        pus = sorted(set().union(*node_cpus.values()))
        ngpu = len(topo.get("gpus", []))
        n = len(pus)
        allocs = [None, pus[:n // 2], pus[n // 3:], pus[n // 6:n // 2], pus[n // 3:5 * n // 6]]
        shapes = [["--tasks", "3"]]
        for per in ((1, 2, 3, 5, 7) if ngpu else ()):
            nt = ngpu * per
            shapes.append(["--tasks", str(nt), "--task-gpus", ";".join(str(t % ngpu) for t in range(nt))])
        for cpus in allocs:
            for shape in shapes:
                args = shape + (["--cpus", _ranges(cpus)] if cpus else [])
                rc, out, err = run("plan", "--topology", f"{TOPO}/{f}", "--json", "--explain", *args)
                if rc != 0:
                    continue
                plans += 1
                why = " ".join([f] + args)
                p = json.loads(out)
                for problem in _explain_false(p, node_cpus):
                    bad.append(f"{why}: {problem}")
                relaid += sum("re-laid" in c["what"] or "moved" in c["what"] for c in p["explain"]["cuts"])
                listed += sum(len(c["tasks"]) for c in p["explain"]["cuts"])
    for f, args in (("xe8640-4xh100-spr8480-snc4.xml", ["--tasks", "28", "--cpus", "37-92,149-204",
                     "--task-gpus", ";".join(str(t % 4) for t in range(28))]),
                    ("corona-rome-8xmi50-rsmi.xml", ["--tasks", "16", "--cpus", "0-23,48-71",
                     "--task-gpus", ";".join(str(t % 8) for t in range(16))]),
                    ("corona-naples-4xmi50-opencl.xml", ["--tasks", "12", "--cpus", "16-39,64-87",
                     "--task-gpus", ";".join(str(t % 4) for t in range(12))]),
                    ("corona-naples-4xmi50-opencl.xml", ["--tasks", "16", "--cpus-per-task", "2",
                     "--cpus", "18-35,66-83", "--task-gpus", ";".join(str(t % 4) for t in range(16))])):
        node_cpus = _node_cpus(json.loads(run("topo", "--topology", f"{TOPO}/{f}", "--json")[1]))
        rc, out, err = run("plan", "--topology", f"{TOPO}/{f}", "--json", "--explain", *args)
        plans += 1
        if rc != 0:
            bad.append(f"{f} {' '.join(args)}: rc {rc} {err.strip()[:120]}")
            continue
        p = json.loads(out)
        bad += [f"{f} {' '.join(args)}: {problem}" for problem in _explain_false(p, node_cpus)]
        relaid += sum("re-laid" in c["what"] or "moved" in c["what"] for c in p["explain"]["cuts"])
        listed += sum(len(c["tasks"]) for c in p["explain"]["cuts"])
    return plans, relaid, listed, bad


def _node_cpus(topo):
    return {nd["os_index"]: set(_cpulist(nd.get("cpus", ""))) for nd in topo["numa_nodes"]}


def _explain_false(p, node_cpus):
    tasks, x = p["tasks"], p["explain"]
    cpus = [set(_cpulist(t["cpus"])) for t in tasks]
    seen_core, seen_task = set(), {}
    for i, c in enumerate(x["cuts"]):
        if "cpus" not in c:
            yield f"split {i} names no cpus"
            continue
        cc = set(_cpulist(c["cpus"]))
        if cc & seen_core:
            yield f"split {i}: cpus {sorted(cc & seen_core)[:4]} in an earlier split too"
        seen_core |= cc
        for t in c["tasks"]:
            if not cpus[t] & cc:
                yield f"split {i} lists task {t} ({tasks[t]['cpus']}), not on its cpus {c['cpus']}"
            if t in seen_task:
                yield f"task {t} in splits {seen_task[t]} and {i}"
            seen_task[t] = i
            if x["tasks"][t]["cut"] != i:
                yield f"split {i} lists task {t}, whose cut is {x['tasks'][t]['cut']}"
    for t, xt in enumerate(x["tasks"]):
        if xt["cut"] >= 0 and seen_task.get(t) != xt["cut"]:
            yield f"task {t}: cut {xt['cut']} does not list it"
        text = xt["why"].replace("\n  ", " ").replace("\n", " | ")
        for m in re.finditer(r"the (\d+) cores (?:of (\d+) tasks were re-laid|were split among (\d+) tasks)"
                             r"(?:[^|]*then (\d+) of them (?:was|were) re-laid)?", text):
            c = x["cuts"][xt["cut"]] if xt["cut"] >= 0 else None
            k = int(m.group(2) or m.group(3))
            moved = int(m.group(4) or 0)
            if c is None or k != len(c["tasks"]) + moved or moved != c.get("moved", 0) or \
               (not moved and int(m.group(1)) != c["cores"]):
                yield f"task {t} says '{m.group(0)}', its split has {c and len(c['tasks'])} tasks, " \
                      f"{c and c['cores']} cores"
        for m in re.finditer(r"its cores are on node (\d+)", text):
            on = {n: len(cpus[t] & node_cpus.get(n, set())) for n in node_cpus}
            if on.get(int(m.group(1)), 0) == 0 or on[int(m.group(1))] < max(on.values()):
                yield f"task {t} ({tasks[t]['cpus']}) says '{m.group(0)}'"


cases, bad = corpus_cpt()
ok(cases > 80 and not bad, f"corpus: -c beyond the step refused with exit 2 ('srun refuses it'), "
   f"-c 1 planned ({cases} cases)", "\n".join(bad[:10]))
plans, relaid, listed, bad = explain_corpus()
ok(plans > 700 and relaid >= 5 and not bad,
   f"corpus --explain: every split's tasks hold cores on its cpus, each task and core in one split, "
   f"its sentences match its split and name its main node ({plans} plans, {listed} tasks listed, "
   f"{relaid} splits re-laid after the cut; {len(bad)} false)", "\n".join(bad[:12]))
print(f"1..{n}")
sys.exit(1 if failed else 0)
