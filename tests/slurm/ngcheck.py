#!/usr/bin/env python3
"""Assertions for the Slurm integration tests (prints TAP lines, unnumbered).

Input: the lines ng_probe printed in each task (tab-separated key=value),
collected from srun's stdout into a file.

  ngcheck.py plan FILE LABEL CLI TOPOLOGY [--node N] [--mods M] -- CLIARGS...
      Run `CLI plan --topology TOPOLOGY --tasks <tasks seen on the node>
      CLIARGS --json` and compare each task (by SLURM_LOCALID) with the
      plan: NUMAGUARD_CPUS, NUMAGUARD_MEMS, NUMAGUARD_GPUS and every variable
      of the plan's "env" (unless --keep VAR says the user's value stays).
  ngcheck.py expect FILE LABEL SPEC...
      SPEC is RANK:KEY=VALUE or all:KEY=VALUE (VALUE "<unset>" = absent);
      KEY may be a probe field (affinity, mempolicy, memnodes, node).
  ngcheck.py applied FILE LABEL
      the kernel's view equals the report: affinity == NUMAGUARD_CPUS,
      mempolicy matches NUMAGUARD_MEM_MODE, memnodes == NUMAGUARD_MEMS.
  ngcheck.py count FILE LABEL N
      exactly N task lines, ranks 0..N-1 each once.
"""
import json
import subprocess
import sys


def tap(ok, desc, details=()):
    print(("ok - " if ok else "not ok - ") + desc)
    if not ok:
        for d in details:
            print("#   " + d)
    return ok


def read_tasks(path):
    tasks = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.startswith("rank="):
                continue
            fields = {}
            for part in line.split("\t"):
                k, _, v = part.partition("=")
                fields[k] = v
            tasks.append(fields)
    tasks.sort(key=lambda t: int(t.get("rank") or -1))
    return tasks


def parse_list(text):
    """Linux cpulist/nodelist ("0-3,8") -> set of ints; None if malformed."""
    out = set()
    if text is None:
        return None
    text = text.strip()
    if text == "":
        return out
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            lo = int(lo)
            hi = int(hi) if hi else lo
            out.update(range(lo, hi + 1))
    except ValueError:
        return None
    return out


def fmt_list(s):
    return ",".join(str(x) for x in sorted(s)) if s is not None else "<bad>"


def cmd_plan(argv):
    path, label, cli, topo = argv[:4]
    rest = argv[4:]
    node = None
    keep = set()
    while rest and rest[0] != "--":
        opt = rest.pop(0)
        if opt == "--node":
            node = rest.pop(0)
        elif opt == "--keep":
            keep.add(rest.pop(0))
        else:
            sys.exit("ngcheck plan: unknown option " + opt)
    cliargs = rest[1:] if rest else []
    tasks = [t for t in read_tasks(path) if node is None or t.get("node") == node]
    if not tap(len(tasks) > 0, f"{label}: tasks reported" + (f" on {node}" if node else ""),
               [f"no probe lines in {path}"]):
        return
    cmd = [cli, "plan", "--topology", topo, "--tasks", str(len(tasks))] + cliargs + ["--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    try:
        plan = json.loads(proc.stdout)
    except ValueError:
        tap(False, f"{label}: planner CLI answered", [" ".join(cmd), proc.stdout[:300], proc.stderr[:300]])
        return
    want = {t["local_id"]: t for t in plan.get("tasks", [])}
    checks = {"NUMAGUARD_CPUS": [], "NUMAGUARD_MEMS": [], "NUMAGUARD_GPUS": [], "env": []}
    for t in tasks:
        lid = int(t.get("local", -1))
        w = want.get(lid)
        if w is None:
            checks["NUMAGUARD_CPUS"].append(f"local {lid}: not in the plan")
            continue
        got = parse_list(t.get("NUMAGUARD_CPUS"))
        if got != parse_list(w.get("cpus") or ""):
            checks["NUMAGUARD_CPUS"].append(
                f"local {lid}: got {t.get('NUMAGUARD_CPUS')} want {w.get('cpus')}")
        got = parse_list(t.get("NUMAGUARD_MEMS"))
        if got != set(w.get("mem_nodes") or []):
            checks["NUMAGUARD_MEMS"].append(
                f"local {lid}: got {t.get('NUMAGUARD_MEMS')} want {fmt_list(set(w.get('mem_nodes') or []))}")
        wg = ",".join(w.get("gpus") or [])
        if (t.get("NUMAGUARD_GPUS") or "") != wg and not (wg == "" and t.get("NUMAGUARD_GPUS") == "<unset>"):
            checks["NUMAGUARD_GPUS"].append(f"local {lid}: got {t.get('NUMAGUARD_GPUS')} want {wg}")
        for k, v in (w.get("env") or {}).items():
            if k in keep:
                continue
            if t.get(k) != str(v):
                checks["env"].append(f"local {lid}: {k}={t.get(k)} want {v}")
    where = f" on {node}" if node else ""
    for key, errs in checks.items():
        what = "thread variables" if key == "env" else key
        tap(not errs, f"{label}: {what} of {len(tasks)} tasks{where} equal the planner's", errs[:8])


def cmd_expect(argv):
    path, label = argv[:2]
    tasks = read_tasks(path)
    for spec in argv[2:]:
        who, _, kv = spec.partition(":")
        key, _, val = kv.partition("=")
        sel = tasks if who == "all" else [t for t in tasks if t.get("rank") == who]
        errs = []
        if not sel:
            errs.append(f"no task {who}")
        for t in sel:
            got = t.get(key, "<unset>")
            if got != val:
                errs.append(f"rank {t.get('rank')}: {key}={got}")
        tap(not errs, f"{label}: {who} {key}={val}", errs[:8])


# NUMAGUARD_MEM_MODE -> get_mempolicy() mode name printed by ng_probe.
MODE_TO_KERNEL = {"bind": "bind", "preferred_many": "preferred_many", "preferred": "preferred",
                  "interleave": "interleave", "weighted_interleave": "weighted_interleave",
                  "none": "default"}


def cmd_applied(argv):
    path, label = argv[:2]
    tasks = read_tasks(path)
    errs = {"affinity": [], "mempolicy": []}
    for t in tasks:
        r = t.get("rank")
        if parse_list(t.get("affinity")) != parse_list(t.get("NUMAGUARD_CPUS")):
            errs["affinity"].append(f"rank {r}: affinity {t.get('affinity')} NUMAGUARD_CPUS {t.get('NUMAGUARD_CPUS')}")
        mode = t.get("NUMAGUARD_MEM_MODE")
        want = MODE_TO_KERNEL.get(mode, "?" + str(mode))
        if t.get("mempolicy") != want:
            errs["mempolicy"].append(f"rank {r}: kernel {t.get('mempolicy')} NUMAGUARD_MEM_MODE {mode}")
        elif want != "default" and parse_list(t.get("memnodes")) != parse_list(t.get("NUMAGUARD_MEMS")):
            errs["mempolicy"].append(f"rank {r}: kernel nodes {t.get('memnodes')} NUMAGUARD_MEMS {t.get('NUMAGUARD_MEMS')}")
    tap(bool(tasks) and not errs["affinity"], f"{label}: kernel affinity of {len(tasks)} tasks = NUMAGUARD_CPUS",
        errs["affinity"][:8] or ["no tasks"])
    tap(bool(tasks) and not errs["mempolicy"], f"{label}: kernel memory policy of {len(tasks)} tasks = NUMAGUARD_MEM_MODE/MEMS",
        errs["mempolicy"][:8] or ["no tasks"])


def cmd_count(argv):
    path, label, n = argv[0], argv[1], int(argv[2])
    ranks = [t.get("rank") for t in read_tasks(path)]
    tap(ranks == [str(i) for i in range(n)], f"{label}: {n} tasks ran",
        [f"ranks seen: {ranks}"])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    {"plan": cmd_plan, "expect": cmd_expect, "count": cmd_count, "applied": cmd_applied}[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
