"""numaguard CLI compatibility: this tree against a reference release.

Runs the reference CLI and this tree's CLI over every topology of
tests/topologies/ and a fixed, deterministic list of cases per topology
(topo, plan, exec --dry-run, errors, the live machine) and compares exit
status, stdout and stderr byte for byte. Prints TAP: one line per topology,
one for the live machine, one for the error cases, one for the explanation
file; a differing case shows the start of a unified diff as "# " lines.

Case ids are "<topology-stem>/<command>/<shape>" ("live/...", "errors/...").
A differing case whose id matches a glob of the explanation file
(tests/compat/differences.tsv: "glob<TAB>reason") counts as explained; a
row that matches no differing case is stale and fails.

    python3 tests/compat/compat.py --base REF/build/numaguard \
        --new build/numaguard [--base-name 0ecd89c] [--jobs 2] \
        [--differences FILE] [--report FILE] [--only GLOB]
        [--new-topologies DIR]

--new-topologies DIR: the new CLI reads DIR/<stem>.xml where DIR has it,
instead of tests/topologies/<stem>.xml (make check-hwloc-next: hwloc 3.0
reads no 1.x XML, so it gets their 2.x conversions).

The shapes are computed from the reference's own `topo --json`, so both
CLIs get the same arguments whatever they answer.
"""
import argparse
import concurrent.futures
import difflib
import fnmatch
import json
import math
import os
import shlex
import subprocess
import sys
import time

TOPO_DIR = "tests/topologies"
# The clean environment of every run: exec reads launcher variables, and
# nothing of the caller's (CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS, SLURM_*)
# may reach either CLI.
PATH = "/usr/local/bin:/usr/bin:/bin"
TIMEOUT = 60
NEW_TOPOLOGIES = None  # --new-topologies
DIFF_LINES = 24       # diff lines shown per differing case
CASES_SHOWN = 4       # differing cases shown with a diff per TAP line
DIFFS_TOTAL = 12      # ... and in all
EXPLAINED_SHOWN = 8   # explained cases named per TAP line

# The command of the exec cases that really run: what it was given.
SHOW_ENV = ["sh", "-c", "env | LC_ALL=C sort"]
# ... and on the live machine, also where it runs (affinity, the memory
# policy of its mappings; addresses left out).
SHOW_PLACE = ["sh", "-c", "env | LC_ALL=C sort; grep -E '^(Cpus|Mems)_allowed_list' /proc/self/status; "
              "awk '{print $2}' /proc/self/numa_maps | LC_ALL=C sort -u"]

POLICIES = ["local", "prefer", "interleave", "weighted", "none",
            "interleave:all,cpuless", "prefer,smt", "local,cpuless"]


class Case:
    """One CLI invocation: argv after the program name, extra environment."""

    def __init__(self, group, cid, args, env=None):
        self.group = group
        self.id = cid
        self.args = list(args)
        self.env = dict(env or {})
        self.status = None        # identical / explained / different
        self.reason = ""
        self.diff = []
        self.rc = None            # the reference's exit status


# --- cpulists ---------------------------------------------------------------

def cpulist_expand(s):
    out = []
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def cpulist_compress(cpus):
    parts, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(parts)


# --- the case list ----------------------------------------------------------

def topology_cases(stem, xml, info):
    """Every case of one topology; info is the reference's topo --json
    (None when it failed: then only the shapes that need nothing from it)."""
    cases = []
    T = ["--topology", xml]

    def add(cmd, shape, args, env=None):
        cases.append(Case(stem, "%s/%s/%s" % (stem, cmd, shape), args, env))

    add("topo", "text", ["topo"] + T)
    add("topo", "json", ["topo", "--json"] + T)

    # .get: an older reference may lack a field (nics came with
    # --net-affinity); the shapes then simply use what it has.
    info = info or {}
    gpus = len(info.get("gpus", []))
    nics = [n.get("name", "") for n in info.get("nics", [])]
    pus = sorted({c for n in info.get("numa_nodes", []) for c in cpulist_expand(n.get("cpus", ""))})
    # The first ~40% of the allowed PUs in OS order: a partial allocation
    # that cuts through NUMA nodes (and often through cores).
    part = cpulist_compress(pus[:max(3, math.ceil(len(pus) * 0.4))]) if pus else ""
    small = cpulist_compress(pus[:max(2, len(pus) // 10)]) if pus else ""

    cpu_shapes = [("cpu-t1", ["--tasks", "1"]), ("cpu-t2", ["--tasks", "2"]),
                  ("cpu-t4", ["--tasks", "4"]), ("cpu-t7", ["--tasks", "7"])]
    if part:
        cpu_shapes += [("cpu-part-t2", ["--tasks", "2", "--cpus", part]),
                       ("cpu-part-t3", ["--tasks", "3", "--cpus", part])]
    cpu_shapes += [("cpu-t2-c4", ["--tasks", "2", "--cpus-per-task", "4"]),
                   ("cpu-t2-c8", ["--tasks", "2", "--cpus-per-task", "8"])]
    gpu_shapes = []
    if gpus:
        gpu_shapes.append(("gpu-1pt", ["--tasks", str(gpus), "--gpus-per-task", "1"]))
        if gpus >= 2:
            gpu_shapes.append(("gpu-2pt", ["--tasks", str(gpus // 2), "--gpus-per-task", "2"]))
        gpu_shapes.append(("gpu-shared0", ["--tasks", "2", "--task-gpus", "0;0"]))
        if gpus >= 2:
            gpu_shapes.append(("gpu-mixed", ["--tasks", "3", "--task-gpus", "0;;1"]))
        for c in ("4", "8"):
            gpu_shapes.append(("gpu-1pt-c" + c, ["--tasks", str(gpus), "--gpus-per-task", "1",
                                                 "--cpus-per-task", c]))
        if part:
            gpu_shapes.append(("gpu-part-t2", ["--tasks", "2", "--task-gpus", "0;%d" % (gpus - 1),
                                               "--cpus", part]))
            # Every task sees every GPU (srun --gres=gpu:N) on part of the node.
            every = ",".join(str(i) for i in range(gpus))
            gpu_shapes.append(("gpu-part-every-t8", ["--tasks", "8", "--task-gpus", ";".join([every] * 8),
                                                     "--cpus", part]))
        if small:
            # Few CPUs, one GPU each: most GPUs have no local core (remote
            # tasks, nearest node by distance, shared cores).
            gpu_shapes.append(("gpu-small-1pt", ["--tasks", str(gpus), "--gpus-per-task", "1",
                                                 "--cpus", small]))
    for shape, a in gpu_shapes + cpu_shapes:
        add("plan", shape, ["plan", "--json"] + a + T)

    # Options on one shape: the first GPU shape, else 4 CPU tasks.
    oname, oargs = gpu_shapes[0] if gpu_shapes else cpu_shapes[2]
    for p in POLICIES:
        add("plan", "%s+policy=%s" % (oname, p), ["plan", "--json"] + oargs + ["--numa-policy", p] + T)
    for g in ("--omp-guard", "--omp-guard=4,bind", "--omp-guard=off"):
        add("plan", "%s+%s" % (oname, g.lstrip("-")), ["plan", "--json"] + oargs + [g] + T)
    # On a node without NICs these must change nothing: worth comparing too.
    allow = nics[0] if nics else "mlx5_0"
    net = [("net", ["--net-affinity"]), ("net=2", ["--net-affinity=2"]),
           ("net=auto,nccl-per-rank", ["--net-affinity=auto,nccl-per-rank"]),
           ("net+allow=" + allow, ["--net-affinity", "--net-allow", allow]),
           ("net=2+deny=" + allow, ["--net-affinity=2", "--net-deny", allow]),
           ("net+allow=mlx5_*,eth*+deny=mlx5_1",
            ["--net-affinity", "--net-allow", "mlx5_*,eth*", "--net-deny", "mlx5_1"])]
    for shape, a in net:
        add("plan", "%s+%s" % (oname, shape), ["plan", "--json"] + oargs + a + T)
    add("plan", "%s+omp+net+prefer" % oname, ["plan", "--json"] + oargs +
        ["--omp-guard", "--net-affinity", "--numa-policy", "prefer"] + T)

    # Text output: the first GPU shape and the first CPU shape; the option shape
    # with the env lines.
    text = ([gpu_shapes[0]] if gpu_shapes else []) + [cpu_shapes[0]]
    for shape, a in text:
        add("plan", shape + ".text", ["plan"] + a + T)
    add("plan", "%s+omp+net.text" % oname, ["plan"] + oargs + ["--omp-guard", "--net-affinity"] + T)

    # More GPUs than the topology has (on a CPU-only node: any GPU).
    add("plan", "gpus-per-task=%d" % (gpus + 1),
        ["plan", "--json", "--tasks", "1", "--gpus-per-task", str(gpus + 1)] + T)

    # exec reads CUDA_VISIBLE_DEVICES, else ROCR_VISIBLE_DEVICES (AMD).
    amd = bool(info.get("gpus") and info["gpus"][0].get("vendor") == "amd")
    cases.extend(exec_cases(stem, T, gpus, "ROCR_VISIBLE_DEVICES" if amd else "CUDA_VISIBLE_DEVICES"))
    return cases


def exec_cases(stem, T, gpus, visible):
    """numaguard exec --dry-run under launcher variables (clean environment);
    visible: the variable that lists the GPUs the ranks see."""
    torch4 = {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}
    torch2 = {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
    ompi = {"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
            "OMPI_COMM_WORLD_RANK": "3"}
    slurm = {"SLURM_LOCALID": "1", "SLURM_NODEID": "0", "SLURM_PROCID": "1",
             "SLURM_STEP_TASKS_PER_NODE": "2"}
    slurm_x2 = {"SLURM_LOCALID": "3", "SLURM_NODEID": "1", "SLURM_PROCID": "7",
                "SLURM_STEP_TASKS_PER_NODE": "4(x2)"}
    runs = [  # shape, env, options
        ("torchrun-1of4", torch4, []),
        ("torchrun-1of2", torch2, []),
        ("ompi-1of2", ompi, []),
        ("slurm-1of2", slurm, []),
        ("slurm-3of4x2", slurm_x2, []),
        ("flags-2of3", {}, ["--local-rank", "2", "--local-size", "3"]),
        ("torchrun-1of4+prefer", torch4, ["--numa-policy", "prefer"]),
        ("torchrun-1of4+none", torch4, ["--numa-policy", "none"]),
        ("torchrun-1of4+local,smt", torch4, ["--numa-policy=local,smt"]),
        ("torchrun-1of4+omp", torch4, ["--omp-guard"]),
        ("torchrun-1of4+omp=2,force", dict(torch4, OMP_NUM_THREADS="9"), ["--omp-guard=2,force"]),
        ("torchrun-1of4+omp,kept", dict(torch4, OMP_NUM_THREADS="9"), ["--omp-guard"]),
        ("torchrun-1of4+net", torch4, ["--net-affinity"]),
    ]
    if gpus:
        runs += [
            ("torchrun-1of2+visible=0", dict(torch2, **{visible: "0"}), []),
            ("torchrun-1of2+visible=1,0", dict(torch2, **{visible: "1,0"}), []),
            ("torchrun-1of4+visible=1,0", dict(torch4, **{visible: "1,0"}), []),
            ("torchrun-1of2+gpus=all", torch2, ["--gpus", "all"]),
            ("slurm-1of2+visible=0+omp+net", dict(slurm, **{visible: "0"}),
             ["--omp-guard", "--net-affinity"]),
            ("ompi-1of2+gpus=all+prefer", ompi, ["--gpus", "all", "--numa-policy", "prefer"]),
            ("torchrun-1of2+gpus=all+none", torch2, ["--gpus", "all", "--numa-policy", "none"]),
        ]
    cases = []
    for shape, env, opts in runs:
        cases.append(Case(stem, "%s/exec/%s.json" % (stem, shape),
                          ["exec", "--dry-run", "--json"] + opts + T + ["--", "true"], env))
    # Text for a few: the explanation lines. And the same really run (plan
    # only on a topology file: no syscalls), --verbose, the command printing
    # the environment it got, sorted.
    for shape, env, opts in runs:
        if shape in ("torchrun-1of4", "slurm-3of4x2", "torchrun-1of4+omp,kept",
                     "torchrun-1of2+visible=1,0", "slurm-1of2+visible=0+omp+net"):
            cases.append(Case(stem, "%s/exec/%s.text" % (stem, shape),
                              ["exec", "--dry-run"] + opts + T + ["--", "true"], env))
            cases.append(Case(stem, "%s/exec/%s.run" % (stem, shape),
                              ["exec", "--verbose"] + opts + T + ["--"] + SHOW_ENV, env))
    return cases


def error_cases(xml):
    T = ["--topology", xml]
    c = [
        ("plan/policy=bogus", ["plan", "--tasks", "2", "--numa-policy", "bogus"] + T),
        ("plan/policy=local,bogus", ["plan", "--tasks", "2", "--numa-policy=local,bogus"] + T),
        ("plan/policy=interleave:9-3", ["plan", "--tasks", "2", "--numa-policy=interleave:9-3"] + T),
        ("plan/policy=help", ["plan", "--tasks", "1", "--numa-policy=help"] + T),
        ("exec/policy=bogus", ["exec", "--dry-run", "--numa-policy=bogus"] + T + ["--", "true"]),
        ("exec/policy=help", ["exec", "--dry-run", "--numa-policy=help"] + T + ["--", "true"]),
        ("plan/tasks=0", ["plan", "--tasks", "0"] + T),
        ("plan/tasks=missing", ["plan", "--json"] + T),
        ("plan/tasks=abc", ["plan", "--tasks", "abc"] + T),
        # Number syntax at the edges: signs, spaces, junk, leading zeros, overflow.
        ("plan/tasks=-1", ["plan", "--tasks", "-1"] + T),
        ("plan/tasks=+2", ["plan", "--tasks", "+2"] + T),
        ("plan/tasks= 2", ["plan", "--tasks", " 2"] + T),
        ("plan/tasks=2x", ["plan", "--tasks", "2x"] + T),
        ("plan/tasks=0000000002", ["plan", "--json", "--tasks", "0000000002"] + T),
        ("plan/tasks=00000000002", ["plan", "--json", "--tasks", "00000000002"] + T),
        ("plan/tasks=4294967298", ["plan", "--tasks", "4294967298"] + T),
        ("plan/cpus-per-task=99999999999", ["plan", "--tasks", "1", "--cpus-per-task", "99999999999"] + T),
        ("plan/gpus-per-task=-0", ["plan", "--tasks", "1", "--gpus-per-task", "-0"] + T),
        ("exec/local-rank=00000000001", ["exec", "--dry-run", "--json", "--local-rank", "00000000001",
                                         "--local-size", "2"] + T),
        ("exec/local-size=65537", ["exec", "--dry-run", "--local-rank", "0", "--local-size", "65537"] + T),
        ("exec/local-size=0", ["exec", "--dry-run", "--local-rank", "0", "--local-size", "0"] + T),
        ("exec/local-rank=1x", ["exec", "--dry-run", "--local-rank", "1x", "--local-size", "2"] + T),
        ("plan/gpus-per-task=5", ["plan", "--tasks", "1", "--gpus-per-task", "5"] + T),
        ("plan/tasks=3,gpus-per-task=2", ["plan", "--tasks", "3", "--gpus-per-task", "2"] + T),
        ("plan/task-gpus=9", ["plan", "--tasks", "1", "--task-gpus", "9"] + T),
        ("plan/task-gpus=count", ["plan", "--tasks", "3", "--task-gpus", "0;1"] + T),
        ("plan/cpus=5-2", ["plan", "--tasks", "1", "--cpus", "5-2"] + T),
        ("plan/cpus=abc", ["plan", "--tasks", "1", "--cpus", "abc"] + T),
        ("plan/cpus=9999", ["plan", "--tasks", "1", "--cpus", "9999"] + T),
        ("plan/omp-guard=bogus", ["plan", "--tasks", "1", "--omp-guard=bogus"] + T),
        ("plan/net-affinity=0", ["plan", "--tasks", "1", "--net-affinity=0"] + T),
        ("plan/topology=missing", ["plan", "--tasks", "1", "--topology", "tests/topologies/absent.xml"]),
        ("topo/topology=missing", ["topo", "--topology", "tests/topologies/absent.xml"]),
        ("topo/topology=not-xml", ["topo", "--topology", "tests/compat/base"]),
        ("cli/unknown-command", ["bogus"]),
        ("cli/no-command", []),
        ("cli/unknown-option", ["plan", "--bogus"] + T),
        ("exec/no-command", ["exec"] + T),
        ("exec/rank-without-size", ["exec", "--dry-run", "--local-rank", "1"] + T),
        ("exec/rank>=size", ["exec", "--dry-run", "--local-rank", "2", "--local-size", "2"] + T),
        ("exec/json-without-dry-run", ["exec", "--json"] + T + ["--", "true"]),
        ("exec/omp-guard-space-value", ["exec", "--omp-guard", "4"] + T),
        ("exec/gpus=bogus", ["exec", "--dry-run", "--gpus", "zz"] + T),
    ]
    return [Case("errors", "errors/" + cid, args) for cid, args in c]


def live_cases():
    c = [("topo/json", ["topo", "--json"], {}),
         ("plan/tasks=2.json", ["plan", "--json", "--tasks", "2"], {}),
         ("exec/dry-run.json", ["exec", "--dry-run", "--json", "--", "true"], {}),
         ("exec/torchrun-1of2.json", ["exec", "--dry-run", "--json", "--", "true"],
          {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}),
         # Really placed: binding and memory policy on this machine.
         ("exec/torchrun-1of2+omp.run", ["exec", "--verbose", "--omp-guard", "--"] + SHOW_PLACE,
          {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}),
         ("exec/interleave.run", ["exec", "--verbose", "--numa-policy=interleave", "--"] + SHOW_PLACE, {}),
         ("exec/none+omp=2.run", ["exec", "--verbose", "--numa-policy=none", "--omp-guard=2", "--"]
          + SHOW_PLACE, {})]
    return [Case("live", "live/" + cid, args, env) for cid, args, env in c]


# --- running and comparing --------------------------------------------------

def new_args(args):
    """The new CLI's arguments: a corpus file replaced by its twin in
    --new-topologies DIR where that has one."""
    if not NEW_TOPOLOGIES:
        return args
    out = []
    for a in args:
        twin = os.path.join(NEW_TOPOLOGIES, os.path.basename(a))
        if a.startswith(TOPO_DIR + "/") and os.path.exists(twin):
            a = twin
        out.append(a)
    return out


def run_one(cli, case, args=None):
    env = {"PATH": PATH, "LC_ALL": "C"}
    env.update(case.env)
    try:
        # argv[0] is "numaguard" for both, whatever their paths.
        argv = ["numaguard"] + (case.args if args is None else args)
        p = subprocess.run(argv, executable=cli, env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout after %ds" % TIMEOUT, e.stdout or b"", e.stderr or b""


def pretty(stream):
    """A JSON document one key per line (for the diff only), else the text."""
    text = stream.decode("utf-8", "replace")
    try:
        return json.dumps(json.loads(text), indent=1).splitlines()
    except ValueError:
        return text.splitlines()


def transcript(result, as_json):
    rc, out, err = result
    # The exit status and messages first: they say most in the fewest lines.
    lines = ["exit %s" % rc, "--- stderr"] + err.decode("utf-8", "replace").splitlines()
    lines += ["--- stdout"] + (pretty(out) if as_json else out.decode("utf-8", "replace").splitlines())
    return lines


def compare(base, new, case):
    b, n = run_one(base, case), run_one(new, case, new_args(case.args))
    case.rc = b[0]
    if b == n and not isinstance(b[0], str):
        return "identical", []
    diff = []
    for as_json in (True, False):
        diff = list(difflib.unified_diff(transcript(b, as_json), transcript(n, as_json),
                                         "reference", "this tree", n=2, lineterm=""))
        if len(diff) > 2:
            break  # the pretty form shows the difference; else the raw bytes
    if len(diff) <= 2:
        diff = ["(byte difference in whitespace or encoding only)"]
    return "different", diff


def load_explanations(path):
    rows = []
    if not path or not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            glob, _, reason = line.partition("\t")
            if glob.startswith("slurm/"):
                continue  # the plugin's cases: tests/slurm/t-slurm-compat.sh
            rows.append({"glob": glob.strip(), "reason": reason.strip() or "(no reason given)",
                         "line": lineno, "used": 0})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--base-name", default="the reference")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--differences", default="tests/compat/differences.tsv")
    ap.add_argument("--report")
    ap.add_argument("--only", help="run only the cases whose id matches this glob")
    ap.add_argument("--new-topologies", help="the new CLI reads corpus files from here where present")
    a = ap.parse_args()
    global NEW_TOPOLOGIES
    NEW_TOPOLOGIES = a.new_topologies
    t0 = time.time()

    stems, infos = [], {}
    for name in sorted(os.listdir(TOPO_DIR)):
        if name.endswith(".xml"):
            stems.append(name[:-4])
    for stem in stems:
        rc, out, _ = run_one(a.base, Case(stem, "", ["topo", "--json", "--topology",
                                                    "%s/%s.xml" % (TOPO_DIR, stem)]))
        try:
            infos[stem] = json.loads(out) if rc == 0 else None
        except ValueError:
            infos[stem] = None

    cases = []
    for stem in stems:
        cases += topology_cases(stem, "%s/%s.xml" % (TOPO_DIR, stem), infos[stem])
    cases += live_cases()
    cases += error_cases("%s/xe8640-4xh100-spr8480-snc4.xml" % TOPO_DIR)
    ids = [c.id for c in cases]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        print("Bail out! duplicate case ids: " + " ".join(dup[:5]))
        return 1
    if a.only:
        cases = [c for c in cases if fnmatch.fnmatchcase(c.id, a.only)]

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futs = {pool.submit(compare, a.base, a.new, c): c for c in cases}
        for f in concurrent.futures.as_completed(futs):
            c = futs[f]
            c.status, c.diff = f.result()

    rows = load_explanations(a.differences)
    for c in cases:
        if c.status != "different":
            continue
        for r in rows:
            if fnmatch.fnmatchcase(c.id, r["glob"]):
                c.status, c.reason = "explained", r["reason"]
                r["used"] += 1
                break

    n = failed = 0

    def tap(good, desc, comments=()):
        nonlocal n, failed
        n += 1
        failed += not good
        print("%s %d - %s" % ("ok" if good else "not ok", n, desc))
        for line in comments:
            print("# " + line)

    diffs_shown = 0
    groups = []
    for c in cases:
        if c.group not in groups:
            groups.append(c.group)
    for g in groups:
        gc = [c for c in cases if c.group == g]
        bad = [c for c in gc if c.status == "different"]
        expl = [c for c in gc if c.status == "explained"]
        comments = ["explained: %s: %s" % (c.id, c.reason) for c in expl[:EXPLAINED_SHOWN]]
        if len(expl) > EXPLAINED_SHOWN:
            comments.append("explained: ... and %d more in %s (NG_COMPAT_REPORT=FILE lists them)"
                            % (len(expl) - EXPLAINED_SHOWN, g))
        # Diffs for the first few cases of a group, and for at most
        # DIFFS_TOTAL cases in all (a change everywhere: ids only after that).
        shown_here = min(CASES_SHOWN, max(0, DIFFS_TOTAL - diffs_shown))
        diffs_shown += shown_here
        for c in bad[:shown_here]:
            comments.append("differs: %s" % c.id)
            env = ["PATH=" + PATH] + ["%s=%s" % kv for kv in sorted(c.env.items())]
            comments.append("  run: env -i %s numaguard %s" % (
                " ".join(shlex.quote(x) for x in env), " ".join(shlex.quote(x) for x in c.args)))
            shown = c.diff[:DIFF_LINES]
            comments += ["  " + line for line in shown]
            if len(c.diff) > len(shown):
                comments.append("  ... (%d more diff lines)" % (len(c.diff) - len(shown)))
        if len(bad) > shown_here:
            rest = bad[shown_here:]
            comments.append("%s%d differing cases in %s: %s%s" % (
                "... and " if shown_here else "", len(rest), g,
                " ".join(c.id.split("/", 1)[1] for c in rest[:12]), " ..." if len(rest) > 12 else ""))
        what = {"live": "the live machine", "errors": "error cases"}.get(g, g)
        desc = "compat %s: %d cases identical to %s" % (what, len(gc) - len(bad) - len(expl), a.base_name)
        if expl:
            desc += ", %d explained" % len(expl)
        if bad:
            desc += ", %d differ" % len(bad)
        tap(not bad, desc, comments)

    stale = [r for r in rows if not r["used"]]
    if a.only:
        tap(True, "differences.tsv: not checked for stale rows (--only)")
    else:
        tap(not stale, "differences.tsv: %d row(s), %d stale" % (len(rows), len(stale)),
            ["stale (line %d): %s\t%s  -- matches no differing case; remove it" %
             (r["line"], r["glob"], r["reason"]) for r in stale])

    counts = {s: sum(c.status == s for c in cases) for s in ("identical", "explained", "different")}
    if a.report:
        with open(a.report, "w", encoding="utf-8") as f:
            f.write("# numaguard CLI compat against %s: %d cases, %d identical, %d explained, "
                    "%d unexplained\n" % (a.base_name, len(cases), counts["identical"],
                                          counts["explained"], counts["different"]))
            for c in cases:
                f.write("%s\t%s\texit %s%s\n" % (c.id, c.status, c.rc,
                                                 "\t" + c.reason if c.reason else ""))
    print("1..%d" % n)
    print("# compat against %s: %d cases, %d identical, %d explained, %d unexplained "
          "(%d topologies, %.1fs, %d jobs)" % (a.base_name, len(cases), counts["identical"],
                                               counts["explained"], counts["different"],
                                               len(stems), time.time() - t0, a.jobs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
