#!/bin/sh
# The numaguard CLI (`topo` and `plan`) under valgrind memcheck on the live
# machine and on real topologies of different generations: xe8640 (hwloc 2,
# 4 GPUs, SNC4), witherspoon (GPU memory as NUMA nodes), lassen (hwloc 1.x
# XML), corona (AMD). Passes only with zero memcheck errors and zero
# definite leaks; "still reachable" memory (hwloc's component list, libxml2's
# parser globals) is not a leak and is not reported. The suppression file
# tests/hardening/valgrind.supp is passed when present (see its comments).
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 2
. tests/lib/tap.sh
if ! command -v valgrind >/dev/null 2>&1; then
    skip 1 "valgrind is not installed (Debian: valgrind)"
    done_testing
    exit 0
fi
cli=$BUILD/numaguard
if [ ! -x "$cli" ]; then
    make --no-print-directory -s BUILD="$BUILD" "$cli" >/dev/null 2>&1 || {
        ok 1 "cannot build $cli"
        done_testing
        exit 1
    }
fi
supp=""
[ -f tests/hardening/valgrind.supp ] && supp="--suppressions=tests/hardening/valgrind.supp"
T=tests/topologies
XE=$T/xe8640-4xh100-spr8480-snc4.xml
WS=$T/witherspoon-p9-6xv100-gpumem-numa.xml
H1=$T/lassen-p9-4xv100-gpunuma-hwloc1.xml
CO=$T/corona-rome-8xmi50-rsmi.xml
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# vg WANT_RC DESCRIPTION ARGS...: the CLI under memcheck must exit WANT_RC
# (memcheck's own verdict is exit 99). Add --track-origins=yes through
# VALGRIND_OPTS when chasing an uninitialised value (it doubles the time).
vg() {
    want=$1
    desc=$2
    shift 2
    # shellcheck disable=SC2086
    valgrind -q --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
        --error-exitcode=99 $supp "$cli" "$@" >"$out" 2>&1
    rc=$?
    errs=$(grep -c '^==[0-9]*== ' "$out")
    if [ "$rc" -eq "$want" ] && [ "$errs" -eq 0 ]; then
        ok 0 "valgrind: $desc (0 errors, 0 definite leaks)"
    else
        ok 1 "valgrind: $desc (exit $rc, want $want)"
        grep -E -A14 '^==[0-9]*== [A-Z]|definitely lost' "$out" | head -40 | sed 's/^/# /'
    fi
}

vg 0 "topo (live)" topo
vg 0 "topo --json (live)" topo --json
vg 0 "plan --tasks 2 (live)" plan --tasks 2 --omp-guard
vg 0 "topo xe8640" topo --topology "$XE"
vg 0 "plan xe8640, 4 tasks x 1 GPU, json" plan --topology "$XE" --tasks 4 --gpus-per-task 1 --json
vg 0 "plan xe8640, interleave:all + smt, 8 tasks" plan --topology "$XE" --tasks 8 \
    --numa-policy interleave:all,smt --omp-guard=4,force
vg 0 "topo witherspoon (GPU memory nodes)" topo --topology "$WS" --json
vg 0 "plan witherspoon, cpuless prefer" plan --topology "$WS" --tasks 6 --gpus-per-task 1 \
    --numa-policy prefer,cpuless
vg 0 "topo lassen (hwloc 1.x XML)" topo --topology "$H1"
vg 0 "plan lassen (hwloc 1.x XML), task GPU lists" plan --topology "$H1" --tasks 3 \
    --task-gpus "0;1,2;" --json
vg 0 "plan corona (AMD), weighted" plan --topology "$CO" --tasks 8 --gpus-per-task 1 \
    --numa-policy weighted
vg 2 "plan with a bad policy (error path)" plan --topology "$XE" --tasks 1 --numa-policy bogus
vg 1 "topo with a missing XML (error path)" topo --topology /nonexistent/topology.xml
vg 1 "topo with a file that is not XML (error path)" topo --topology tests/topologies/README.txt
# doctor judging xe8640 under an empty fsroot: no driver list for its 4
# NVIDIA GPUs is a FAIL (exit 1) on every machine.
empty=$(mktemp -d)
nodoc="--topology $XE --fsroot $empty --slurm-conf /nonexistent/slurm.conf --plugstack /nonexistent/plugstack.conf --topology-cache /nonexistent"
# shellcheck disable=SC2086
vg 1 "doctor, xe8640 under an empty fsroot (FAIL path)" doctor $nodoc
# shellcheck disable=SC2086
vg 1 "doctor --json, the same" doctor --json $nodoc
rmdir "$empty"
done_testing
