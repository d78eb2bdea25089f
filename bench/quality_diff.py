#!/usr/bin/env python3
"""Which plans make a plan-quality column differ between two planners, and
why (docs/planner.md, "Placement quality").

    quality_diff.py BUILD/quality OLD NEW [-v COLUMN]

reads OLD.plans and NEW.plans (bench/quality.sh, NG_QUALITY_PLANS) and the
plans each widens (r2-OLD.txt, r2-NEW.txt; NEW is 'now' for this tree), and
prints per column and family the change split by cause:
  half      OLD widened the plan and NEW does not (v5 rule 1: widening only
            strictly under half, so the GPU tasks stay on their package)
  both      both widen it (v5 rule 1's bounds: at most the even share + 1,
            the nearest cores first)
  new       only NEW widens it
  neither   neither widens it (v5 rules 2-4: remote GPU tasks' nodes,
            seating order)
-v COLUMN lists the plans that change COLUMN with their CPUs."""
import sys

FAM = ["cpu-only", "1-gpu-per-task", "2-gpus-per-task", "partial-allocations",
       "one-gpu-task", "cpus-per-task-exact-fit"]
COLS = ["idle", "idle_plans", "str", "cross", "gl3", "two", "min"]


def load(path):
    plans = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        kv = {}
        for x in f[6:-1]:
            k, v = x.split("=")
            kv[k] = float(v)
        kv["idle_plans"] = float(kv["idle"] > 0 and f[4] == "c=0")
        plans[int(f[0])] = (f, kv)
    return plans


def widened(path):
    try:
        return {int(x) for x in open(path).read().split()}
    except OSError:
        return set()


def main(argv):
    q, old, new = argv[1], argv[2], argv[3]
    verbose = argv[5] if len(argv) > 5 and argv[4] == "-v" else None
    a, b = load(f"{q}/{old}.plans"), load(f"{q}/{new}.plans")
    wa, wb = widened(f"{q}/r2-{old}.txt"), widened(f"{q}/r2-{new}.txt")

    def cause(n):
        return ("both" if n in wb else "half") if n in wa else ("new" if n in wb else "neither")

    for col in COLS:
        for fam in range(len(FAM)):
            acc = {}
            for n, (fa, ka) in a.items():
                if int(fa[1]) != fam or n not in b:
                    continue
                d = b[n][1][col] - ka[col]
                if not d:
                    continue
                c = acc.setdefault(cause(n), [0.0, 0, 0])
                c[0] += d
                c[1 if d > 0 else 2] += 1
                if verbose == col:
                    print(f"{col} {d:+g} [{cause(n)}] plan {n} {FAM[fam]} {' '.join(fa[2:6])}\n"
                          f"  {old}: {fa[-1]}\n  {new}: {b[n][0][-1]}")
            if acc and col != "min":
                parts = ", ".join(f"{k} {v[0]:+g} ({v[1]} plans worse, {v[2]} better)"
                                  for k, v in sorted(acc.items()))
                print(f"{col}\t{FAM[fam]}\t{parts}")
        if col == "min":
            for fam in range(len(FAM)):
                wa_ = min((k["min"] for f, k in a.values() if int(f[1]) == fam), default=0)
                wb_ = min((k["min"] for f, k in b.values() if int(f[1]) == fam), default=0)
                if wa_ != wb_:
                    worst = [n for n, (f, k) in b.items() if int(f[1]) == fam and k["min"] == wb_]
                    print(f"min\t{FAM[fam]}\tworst {wa_:.4f} -> {wb_:.4f}: plans "
                          + ", ".join(f"{n} [{cause(n)}] {b[n][0][2]} {b[n][0][3]} {b[n][0][5]}"
                                      f" (was {a[n][1]['min']:.4f})" for n in worst))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
