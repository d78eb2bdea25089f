#!/usr/bin/env python3
"""make plan-quality's tables (bench/quality.sh): bench/quality.c's totals of
several planners side by side, oldest first, as "a -> b -> c".

    quality_table.py A.tsv NAME-A B.tsv NAME-B ... NOW.tsv NAME-NOW
"""
import sys

SHARES = ("mean_min_eff_share", "worst_min_eff_share")


def load(path):
    rows = [line.rstrip("\n").split("\t") for line in open(path)]
    head = rows[0]
    return {r[0]: dict(zip(head, r)) for r in rows[1:]}


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0:
        sys.stderr.write(__doc__)
        return 2
    runs = [(load(argv[i]), argv[i + 1]) for i in range(1, len(argv), 2)]
    now = runs[-1][0]
    fams = list(now)
    for d, _ in runs:
        d["all"] = {k: str(sum(int(d[f].get(k, 0) or 0) for f in fams if f in d))
                    for k in now[fams[0]] if k != "family" and k not in SHARES}
    fams.append("all")

    def chain(f, k):
        return " -> ".join(d.get(f, {}).get(k, "-") for d, _ in runs)

    def pct(f, a, b):
        out = []
        for d, _ in runs:
            x, y = int(d.get(f, {}).get(a, "0") or 0), d.get(f, {}).get(b)
            out.append("-" if y is None else (f"{100 * int(y) / x:.0f}%" if x else "n/a"))
        return " -> ".join(out)

    names = " -> ".join(n for _, n in runs)
    print(f"Placement quality over tests/topologies: {names}")
    print("| family | plans | straddling tasks | cross-socket straddles | idle allocated cores | "
          "GPU tasks off their GPU's socket (while it had idle cores) | GPU tasks over two packages "
          "(... with their GPU's package full) | smallest effective slice, share of cores/tasks "
          "(mean / worst) |")
    print("|---|---|---|---|---|---|---|---|")
    for f in fams:
        eff = "" if f == "all" else " -> ".join(
            f"{float(d[f][SHARES[0]]):.2f} / {float(d[f][SHARES[1]]):.2f}" for d, _ in runs if f in d)
        print(f"| {f} | {now[f]['plans']} | {chain(f, 'straddling')} | {chain(f, 'cross_socket')} | "
              f"{chain(f, 'idle_cores')} of {now[f]['alloc_cores']} | {chain(f, 'off_gpu_socket')} "
              f"({chain(f, 'off_gpu_socket_free')}) of {now[f]['gpu_tasks']} | "
              f"{chain(f, 'gpu_two_packages')} ({chain(f, 'pkg_short')}) | {eff} |")
    print()
    print("Planner v4's goals (issue 26): -c exact, no starved GPU task, every idle core said")
    print("| family | exact-fit -c plans | ... with a task not given exactly -c | "
          "plans leaving allocated cores idle (no -c) | ... with a warning naming the count | "
          "GPU tasks below half the even share while cores sit idle |")
    print("|---|---|---|---|---|---|")
    for f in fams:
        print(f"| {f} | {now[f]['c_plans']} | {chain(f, 'c_short')} | {chain(f, 'idle_plans')} | "
              f"{chain(f, 'idle_warned')} ({pct(f, 'idle_plans', 'idle_warned')}) | "
              f"{chain(f, 'starved')} |")
    print()
    print("The same outside the plans where any planner compared widens a GPU task off its package")
    print("(this tree: its GPU's package(s) hold less than half its even share, docs/planner.md,")
    print("rule 3; b89b623 also at exactly half): the same plans for every planner")
    print("| family | plans with a widened GPU task | straddling tasks | cross-socket straddles | "
          "tasks over two L3s | GPU tasks off their GPU's socket | GPU tasks over two packages |")
    print("|---|---|---|---|---|---|---|")
    for f in fams:
        print(f"| {f} | {now[f]['r2_plans']} | {chain(f, 'straddling_x')} | {chain(f, 'cross_socket_x')} | "
              f"{chain(f, 'l3_straddles_x')} | {chain(f, 'off_gpu_socket_x')} | {chain(f, 'gpu_two_packages_x')} |")
    print()
    print("Checked against exact oracles (bench/quality_oracle.c), CPU-only plans: a cut as good on")
    print("the objective (smallest effective slice, smallest slice) and its first tie-breaks (idle")
    print("cores, tasks over two NUMA nodes)")
    print("| family | tasks over two L3s (held in part) | ... where an L3-aligned cut as good exists | "
          "plans mixing CPU groups | ... where an aligned cut with the plan's own sizes exists | "
          "idle cores | ... where a cut as good leaves fewer | GPU tasks over two L3s |")
    print("|---|---|---|---|---|---|---|---|")
    for f in fams:
        print(f"| {f} | {chain(f, 'l3_straddles')} | {chain(f, 'l3_avoidable')} | "
              f"{chain(f, 'mixed_plans')} | {chain(f, 'mixed_avoidable')} | "
              f"{chain(f, 'cpu_only_idle')} | {chain(f, 'idle_equal_objective')} | "
              f"{chain(f, 'gpu_l3_straddles')} |")
    print()
    print("Planner v5's defect families (issue 37), all to be 0")
    print("| family | widened GPU tasks beyond the even share + 1 | widened GPU tasks whose package held half "
          "their even share or more | remote GPU tasks on a node with fewer unclaimed cores than one as near | "
          "local GPU tasks scattered beside a compact remote one |")
    print("|---|---|---|---|---|")
    for f in fams:
        print(f"| {f} | {chain(f, 'wide_over')} | {chain(f, 'wide_half')} | {chain(f, 'remote_crowded')} | "
              f"{chain(f, 'scattered_local')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
