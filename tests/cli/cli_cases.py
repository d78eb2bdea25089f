"""Golden cases for `numaguard topo` and `numaguard plan` on real topologies.

Expected CPU sets were cross-checked with hwloc-calc, e.g.
`hwloc-calc --input xe8640-4xh100-spr8480-snc4.xml -p node:3 --intersect pu`.
Prints TAP.
"""
import json
import os
import subprocess
import sys

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
XE_NODE = {1: "14-27,126-139", 3: "42-55,154-167", 5: "70-83,182-195", 7: "98-111,210-223"}
JUWELS = "juwels-booster-4xa100-epyc7402-nps4.xml"


def omp_env(t, smt=False, force=False):
    v = str(t["threads"])
    e = {k: v for k in ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                        "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                        "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS"]}
    e["OMP_PLACES"] = "threads" if smt else "cores"
    e["OMP_PROC_BIND"] = "close"
    return e


# 4 H100 on a 2-socket SNC4 node: each task gets its GPU's NUMA node (14 cores, SMT2).
check_plan("xe8640 4 tasks x 1 GPU local", XE, ["--tasks", "4", "--gpus-per-task", "1", "--omp-guard"],
           cpus=[XE_NODE[3], XE_NODE[1], XE_NODE[7], XE_NODE[5]], mems=[[3], [1], [7], [5]],
           mode="bind", threads=[14] * 4,
           gpus=[["0000:4e:00.0"], ["0000:5f:00.0"], ["0000:cb:00.0"], ["0000:db:00.0"]],
           warn="", env=omp_env)
check_plan("xe8640 smt threads", XE, ["--tasks", "4", "--gpus-per-task", "1", "--numa-policy", "local,smt",
                                      "--omp-guard"], threads=[28] * 4,
           env=lambda t: omp_env(t, smt=True))
# 2 GPUs per task: the union of the two GPUs' nodes, bound memory on both.
check_plan("xe8640 2 tasks x 2 GPUs", XE, ["--tasks", "2", "--gpus-per-task", "2"],
           cpus=["14-27,42-55,126-139,154-167", "70-83,98-111,182-195,210-223"],
           mems=[[1, 3], [5, 7]], threads=[28, 28])
# 8 tasks on 4 GPUs' nodes: two tasks per GPU split its node 7+7 cores.
check_plan("xe8640 8 tasks on 4 GPUs (--task-gpus)", XE,
           ["--tasks", "8", "--task-gpus", "0;0;1;1;2;2;3;3"],
           cpus=["42-48,154-160", "49-55,161-167", "14-20,126-132", "21-27,133-139",
                 "98-104,210-216", "105-111,217-223", "70-76,182-188", "77-83,189-195"],
           threads=[7] * 8)
check_plan("xe8640 bus ids in --task-gpus", XE, ["--tasks", "2", "--task-gpus", "0000:db:00.0;5f:00.0"],
           cpus=[XE_NODE[5], XE_NODE[1]], gpus=[["0000:db:00.0"], ["0000:5f:00.0"]])
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

check_plan("juwels NPS4 4 tasks x 1 A100", JUWELS, ["--tasks", "4", "--gpus-per-task", "1"],
           cpus=["18-23,66-71", "6-11,54-59", "42-47,90-95", "30-35,78-83"], mems=[[3], [1], [7], [5]])
check_plan("juwels hwloc1 XML gives the same plan", "juwels-booster-4xa100-epyc7402-nps4-hwloc1.xml",
           ["--tasks", "4", "--gpus-per-task", "1"],
           cpus=["18-23,66-71", "6-11,54-59", "42-47,90-95", "30-35,78-83"])
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
check_plan("witherspoon local without cpuless", W, ["--tasks", "2", "--gpus-per-task", "1"],
           mems=[[0], [0]])
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
           cpus=[""] * 4, mode="none", threads=[14] * 4)
check_plan("KNL flat: MCDRAM never bound without cpuless", "knl-7250-quad-flat-hwloc1.xml",
           ["--tasks", "4"], mems=[[0]] * 4)
check_plan("KNL flat: local,cpuless adds MCDRAM", "knl-7250-quad-flat-hwloc1.xml",
           ["--tasks", "1", "--numa-policy", "local,cpuless"], mems=[[0, 1]])
check_plan("more tasks than cores share, with a warning", "xeon-4s-offline-pus.xml", ["--tasks", "9"],
           warn="share")
# Fewer cores than tasks: shared cores are spread evenly, home first.
check_plan("4 tasks on 2 cores share them evenly", "g4dn-metal-8xt4.xml",
           ["--tasks", "4", "--task-gpus", "0,1;0,1;0,1;0,1", "--cpus", "0,24"],
           cpus=["0", "24", "0", "24"], warn="share")
check_plan("offline node 0: memory falls back to the node that exists",
           "r630-offline-cpus-offline-node0.xml", ["--tasks", "2"], mems=[[1], [1]])
check_plan("--omp-guard=3,force", XE, ["--tasks", "1", "--gpus-per-task", "1", "--omp-guard=3,force"],
           env=lambda t: {**{k: "3" for k in omp_env(t)}, "OMP_PLACES": "cores", "OMP_PROC_BIND": "spread"})

# JSON shape of topo.
rc, out, err = run("topo", "--topology", f"{TOPO}/{XE}", "--json")
t = json.loads(out) if rc == 0 else {}
ok(rc == 0 and sorted(t) == ["gpus", "numa_nodes"], "topo --json: top-level keys", err)
if t:
    ok(all(sorted(x) == ["cpus", "has_cpus", "kind", "memory_bytes", "os_index"] for x in t["numa_nodes"]),
       "topo --json: NUMA node keys")
    ok(all(sorted(x) == ["cpus", "memory_nodes", "numa_nodes", "os_devices", "pci_bus_id", "vendor"]
           for x in t["gpus"]), "topo --json: GPU keys")
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

# Errors: one line naming the option, the value and the valid forms.
for args, needle in [
    (["plan", "--tasks", "2", "--numa-policy", "locl"], "--numa-policy: invalid value 'locl'"),
    (["plan", "--tasks", "2", "--omp-guard=0"], "--omp-guard: invalid value '0'"),
    (["plan", "--tasks", "x"], "invalid value 'x' for --tasks"),
    (["plan", "--tasks", "5", "--gpus-per-task", "1", "--topology", f"{TOPO}/{XE}"], "need 5 GPUs"),
    (["plan", "--tasks", "1", "--task-gpus", "9", "--topology", f"{TOPO}/{XE}"], "not a GPU index"),
    (["plan", "--tasks", "1", "--cpus", "3-1"], "--cpus"),
    (["topo", "--topology", "/nonexistent.xml"], "cannot load topology /nonexistent.xml"),
    (["frobnicate"], "unknown command"),
    (["topo", "--topology", "tests/fuzz/crashes/fuzz_topology_xml-duplicate-numa-os-index.xml"],
     "two NUMA nodes are numbered 2"),
]:
    rc, out, err = run(*args)
    lines = err.strip().splitlines()
    ok(rc != 0 and lines and needle in lines[-1], f"error for {' '.join(args[:4])}: {needle}", err)

print(f"1..{n}")
sys.exit(1 if failed else 0)
