#!/usr/bin/env python3
"""The examples of README.md, docs/*.md and the man pages against the
numaguard binary (tests/e2e/t-docs.sh numbers the lines this prints:
"ok - ..." / "not ok - ...", "# ..." details).

What is an example, and how it is checked:

- "$ numaguard topo|plan ..." in a code block (fenced, or indented by four
  spaces), its continuation lines ending in a backslash, then the lines up
  to the next "$ " line or the block's end: the output. The command is run
  from the repository root and its output must equal those lines (trailing
  blanks aside); a line "..." stands for any number of lines. A command
  followed by no output line must exit 0. These commands need --topology
  (their output must not depend on the machine the test runs on); a name
  that is not a file is the topology of tests/topologies/ whose name
  starts with it (witherspoon.xml: witherspoon-p9-6xv100-gpumem-numa.xml).
- "$ srun ..." followed by the plugin's verbose lines ("numaguard: rank R
  (local L): gpus G numa N cpus C mem M threads T"): each line must be
  what `numaguard plan` gives local task L for the same options (-n, -c,
  --gpus-per-task, --numa-policy, --omp-guard) on the machine the document
  describes (SRUN_MACHINES; t-slurm-gpus proves the plugin equals plan
  when -c x tasks is the whole node, so the example must give -c);
  N is the NUMA nodes of the task's CPUs (what ng_task_describe prints),
  from `numaguard topo --json`.
- In the man pages, every "numaguard topo|plan" line of an .nf/.fi block
  (they show no output) must exit 0.
- A plan table ("task  gpus ...") outside a checked example fails: it
  cannot be checked without its command.
- "$ numaguard exec/check ..." examples depend on this machine and on a
  live process: t-docs.sh checks each of them by name (EXEC_CHECK_CASES);
  one it does not know fails here.

usage: doc_examples.py NUMAGUARD_BINARY
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPO_DIR = os.path.join(TOP, "tests", "topologies")
XE8640 = "xe8640-4xh100-spr8480-snc4.xml"
# The machine behind each document's srun examples (stated in its text).
SRUN_MACHINES = {"README.md": XE8640, "docs/user-guide.md": XE8640}
# "$ numaguard exec|check" examples t-docs.sh checks itself: file, command.
EXEC_CHECK_CASES = {
    ("docs/user-guide.md", "numaguard exec --local-rank 1 --local-size 2 --omp-guard --verbose -- "
     "sh -c 'grep Cpus_allowed_list /proc/self/status; echo $OMP_NUM_THREADS'"),
    ("docs/user-guide.md", "numaguard check --pid 4242"),
}
VERBOSE = re.compile(r"^numaguard: rank (\d+) \(local (\d+)\): gpus (\S+) numa (\S+) cpus (\S+) "
                     r"mem (\S+) threads (\d+)$")
CLEAN_ENV = {k: v for k, v in os.environ.items()
             if not re.match(r"(SLURM_|OMPI_|PMI_|MPI_LOCAL|LOCAL_RANK|LOCAL_WORLD|RANK$|"
                             r"CUDA_VISIBLE|ROCR_VISIBLE|OMP_|NUMAGUARD_)", k)}


def emit(ok, desc, details=()):
    print(("ok - " if ok else "not ok - ") + desc)
    for d in details:
        print("#   " + d)


def md_examples(path):
    """(line number, command, output lines, block kind) of a markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fenced = not fenced
            i += 1
            continue
        indented = not fenced and line.startswith("    ")
        body = line if fenced else (line[4:] if indented else None)
        if body is None or not body.lstrip().startswith("$ "):
            i += 1
            continue
        start = i + 1
        cmd = body.lstrip()[2:]
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd[:-1].rstrip() + " " + (lines[i] if fenced else lines[i][4:]).strip()
        i += 1
        output = []
        while i < len(lines):
            nxt = lines[i]
            if fenced:
                if nxt.startswith("```") or nxt.startswith("$ "):
                    break
                output.append(nxt)
            else:
                if not nxt.startswith("    ") or nxt[4:].lstrip().startswith("$ "):
                    break
                output.append(nxt[4:])
            i += 1
        out.append((start, cmd, output))
    return out


def md_tables(path):
    """Line numbers of plan tables ("task  gpus") in code blocks."""
    return [n + 1 for n, line in enumerate(open(path, encoding="utf-8"))
            if re.match(r"^(    )?task  +gpus  +cpus", line)]


def man_commands(path):
    """(line number, command) of numaguard topo/plan lines in .nf/.fi blocks."""
    res = []
    nf = False
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(".nf"):
            nf = True
        elif line.startswith(".fi"):
            nf = False
        elif nf:
            text = line.replace("\\-", "-").replace("\\e", "\\").strip()
            start = i + 1
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1].rstrip() + " " + lines[i].replace("\\-", "-").replace("\\e", "\\").strip()
            if re.match(r"numaguard (topo|plan)\b", text):
                res.append((start, text))
        i += 1
    return res


def topology(name):
    """The file a --topology argument names: as written, in tests/topologies,
    or the corpus file whose name starts with its stem."""
    for cand in (os.path.join(TOP, name), os.path.join(TOPO_DIR, name)):
        if os.path.isfile(cand):
            return cand
    stem = os.path.basename(name)
    stem = stem[:-4] if stem.endswith(".xml") else stem
    hits = glob.glob(os.path.join(TOPO_DIR, stem + "*.xml"))
    return hits[0] if len(hits) == 1 else None


def run(ng, argv):
    """Run a numaguard command line (argv[0] == "numaguard"); returns
    (status, stdout, stderr) or an error string for the topology."""
    args = list(argv[1:])
    for k, a in enumerate(args):
        val = None
        if a == "--topology" and k + 1 < len(args):
            val, where = args[k + 1], k + 1
        elif a.startswith("--topology="):
            val, where = a.split("=", 1)[1], k
        if val is not None:
            path = topology(val)
            if path is None:
                return "no topology file for --topology %s" % val
            args[where] = path if where != k else "--topology=" + path
    # A picture the example writes (--svg plan.svg) goes to a scratch
    # folder, never into the repository it runs in.
    with tempfile.TemporaryDirectory() as scratch:
        for k, a in enumerate(args):
            if a == "--svg" and k + 1 < len(args) and args[k + 1] != "-":
                args[k + 1] = os.path.join(scratch, os.path.basename(args[k + 1]))
            elif a.startswith("--svg=") and a != "--svg=-":
                args[k] = "--svg=" + os.path.join(scratch, os.path.basename(a[6:]))
        p = subprocess.run([ng] + args, cwd=TOP, env=CLEAN_ENV, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def matches(want, got):
    """want (doc lines, "..." = any lines) against got; returns the first
    differing doc line or None."""
    want = [w.rstrip() for w in want]
    while want and want[-1] == "":
        want.pop()
    got = [g.rstrip() for g in got]
    while got and got[-1] == "":
        got.pop()

    def m(wi, gi):
        if wi == len(want):
            return gi == len(got)
        if want[wi] == "...":
            return any(m(wi + 1, k) for k in range(gi, len(got) + 1))
        return gi < len(got) and got[gi] == want[wi] and m(wi + 1, gi + 1)
    if m(0, 0):
        return None
    for w in want:
        if w != "..." and w not in got:
            return w
    return "(the lines are there, not in this order or with others between)"


def check_numaguard(ng, rel, line, cmd, output):
    where = "%s:%d: $ %s" % (rel, line, cmd if len(cmd) < 90 else cmd[:87] + "...")
    argv = shlex.split(cmd)
    if "--topology" not in cmd:
        emit(False, where + ": names --topology (its output must not depend on this machine)")
        return
    r = run(ng, argv)
    if isinstance(r, str):
        emit(False, where + ": " + r)
        return
    rc, out, err = r
    if not [o for o in output if o.strip()]:
        emit(rc == 0, where + ": exits 0", [] if rc == 0 else ["exit %d: %s" % (rc, err.strip()[:200])])
        return
    bad = matches(output, out.split("\n"))
    details = []
    if bad is not None:
        details = ["doc line not printed: " + bad] + ["got: " + g for g in out.rstrip("\n").split("\n")[:14]]
    emit(bad is None and rc == 0, where + ": output is what the command prints", details)


def srun_plan_args(argv):
    """plan options for an srun command line's placement options."""
    plan = []
    it = iter(argv[1:])
    for a in it:
        key, _, val = a.partition("=")
        if key in ("-n", "--ntasks"):
            plan += ["--tasks", val or next(it)]
        elif key in ("-c", "--cpus-per-task"):
            plan += ["--cpus-per-task", val or next(it)]
        elif key == "--gpus-per-task":
            plan += ["--gpus-per-task", val or next(it)]
        elif key == "--numa-policy":
            items = [x for x in val.split(",") if x not in ("verbose", "quiet")]
            if items:
                plan += ["--numa-policy", ",".join(items)]
        elif key == "--omp-guard":
            plan += [a]
        elif key == "--net-affinity":
            plan += [a]
    return plan


def cpu_set(text):
    """A Linux cpulist ("0-3,8") as a set of ints."""
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def list_text(ids):
    """Sorted ints as a Linux list ("0-1,3")."""
    runs, out = [], []
    for i in ids:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    for a, b in runs:
        out.append(str(a) if a == b else "%d-%d" % (a, b))
    return ",".join(out)


def check_srun(ng, rel, line, cmd, output):
    where = "%s:%d: $ %s" % (rel, line, cmd if len(cmd) < 90 else cmd[:87] + "...")
    lines = [o.strip() for o in output if o.strip() and o.strip() != "..."]
    verbose = [VERBOSE.match(o) for o in lines]
    if not lines or not all(verbose):
        emit(False, where + ": its output lines are the plugin's verbose lines",
             [o for o, v in zip(lines, verbose) if not v][:5])
        return
    argv = shlex.split(cmd)
    if not any(a in ("-c", "--cpus-per-task") or a.startswith("--cpus-per-task=") for a in argv):
        emit(False, where + ": asks for -c (a step has only the CPUs it asks for; plan's equal is"
             " --cpus-per-task, as in t-slurm-gpus)")
        return
    machine = SRUN_MACHINES.get(rel)
    if machine is None:
        emit(False, where + ": the machine of this document's srun examples is known (SRUN_MACHINES)")
        return
    xml = os.path.join(TOPO_DIR, machine)
    rc, out, err = run(ng, ["numaguard", "plan", "--topology", xml] + srun_plan_args(shlex.split(cmd)))
    rc2, topo, _ = run(ng, ["numaguard", "topo", "--topology", xml, "--json"])
    if rc != 0 or rc2 != 0:
        emit(False, where + ": plan for it runs", [err.strip()[:200]])
        return
    rows = {}
    for r in out.split("\n")[1:]:
        f = r.split()
        if len(f) >= 5:
            rows[f[0]] = f
    nodes = [(n["os_index"], cpu_set(n["cpus"])) for n in json.loads(topo)["numa_nodes"] if n["has_cpus"]]
    details = []
    for v in verbose:
        rank, local, gpus, numa, cpus, mem, threads = v.groups()
        row = rows.get(local)
        want = None
        if row is not None:
            mine = cpu_set(row[2])
            numa = list_text(sorted(os for os, c in nodes if c & mine))
            want = "gpus %s numa %s cpus %s mem %s threads %s" % (row[1], numa, row[2], row[3], row[4])
        got = "gpus %s numa %s cpus %s mem %s threads %s" % (gpus, numa, cpus, mem, threads)
        if got != want:
            details.append("rank %s: doc %s; plan on %s: %s" % (rank, got, machine, want))
    emit(not details, where + ": each verbose line is what plan gives on " + machine, details)


def main():
    ng = sys.argv[1]
    docs = ["README.md"] + sorted(os.path.relpath(p, TOP) for p in glob.glob(os.path.join(TOP, "docs", "*.md")))
    checked_tables = set()
    for rel in docs:
        path = os.path.join(TOP, rel)
        for line, cmd, output in md_examples(path):
            word = cmd.split()[:2]
            if word[:1] == ["srun"]:
                if any(o.strip().startswith("numaguard: rank") for o in output):
                    check_srun(ng, rel, line, cmd, output)
            elif word[:1] == ["numaguard"] and len(word) > 1 and word[1] in ("topo", "plan"):
                check_numaguard(ng, rel, line, cmd, output)
                checked_tables.update((rel, line + k + 1) for k in range(len(output) + 3))
            elif word[:1] == ["numaguard"]:
                emit((rel, cmd) in EXEC_CHECK_CASES,
                     "%s:%d: $ %s: checked by t-docs.sh (EXEC_CHECK_CASES)" % (rel, line, cmd[:80]))
        for n in md_tables(path):
            if not any((rel, n + d) in checked_tables for d in range(0, 3)):
                emit(False, "%s:%d: a plan table with its $ numaguard plan command (else it cannot be checked)" % (rel, n))
    for rel in ("man/numaguard.1", "man/numaguard.8"):
        for line, cmd in man_commands(os.path.join(TOP, rel)):
            r = run(ng, shlex.split(cmd))
            ok = not isinstance(r, str) and r[0] == 0
            emit(ok, "%s:%d: %s: exits 0" % (rel, line, cmd[:90]),
                 [] if ok else [r if isinstance(r, str) else r[2].strip()[:200]])


if __name__ == "__main__":
    main()
