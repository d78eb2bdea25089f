#!/bin/bash
# Micro benchmarks (no Slurm): topology load live / cache / XML, plan time,
# drawing time, per-task apply cost. Writes a Markdown fragment to $1.
# Needs: $BENCH_BIN (bench_topo, bench_apply), $BENCH_WORK.
set -u
out=$1
bin=$BENCH_BIN
work=$BENCH_WORK
topos=tests/topologies
med() { python3 bench/stats.py "$@"; }
lean=$(sed -n 's/^ *"\(hwloc_gl[^"]*\)".*/\1/p' lib/include/numaguard/topology.h | head -1)
[ -n "$lean" ] || lean=hwloc_gl,hwloc_opencl,hwloc_cuda,hwloc_levelzero,hwloc_pci,hwloc_xml_libxml

# One load in each of N fresh processes (the per-step cost in slurmstepd):
# "first MODE ARG" prints ms=...; $env is an extra environment assignment.
fresh() {
    local n=$1 envs=$2; shift 2
    for _ in $(seq "$n"); do
        env $envs "$bin/bench_topo" first "$@" | sed -n 's/^ms=\([0-9.]*\).*/\1/p'
    done | med
}

# The cache lives under /run: under /tmp (world-writable) it is never trusted.
cache_root=$(mktemp -d /run/ng-bench-cache.XXXXXX) || exit 1
trap 'rm -rf "$cache_root"' EXIT
cache=$cache_root/cache
"$bin/bench_topo" write "$cache" >/dev/null || { echo "cache write failed" >&2; exit 1; }
xmlsize=$(stat -c %s "$cache/topology.xml")
N=${BENCH_FRESH:-20}
{
echo "### c. Topology load and planning"
echo
echo "Topology load, this node ($(nproc) CPUs), one load per fresh process"
echo "(what slurmstepd pays once per step), median of $N processes:"
echo
echo "| source | hwloc plugins | median ms |"
echo "|---|---|---|"
echo "| live discovery (with PCI/OS devices) | all (default) | $(fresh "$N" "" live) |"
echo "| live discovery | lean (\`ng_topology_lean_hwloc\`) | $(fresh "$N" "HWLOC_PLUGINS_BLACKLIST=$lean" live) |"
echo "| topology cache ($xmlsize-byte XML) | all (libxml2 parser) | $(fresh "$N" "" cache "$cache") |"
echo "| topology cache | lean (hwloc's minimal parser) | $(fresh "$N" "HWLOC_PLUGINS_BLACKLIST=$lean" cache "$cache") |"
echo
echo "Largest topologies of tests/topologies (XML as the cache would hold it; the"
echo "cache of such a node has the same size), and \`ng_plan_compute\` for 64 tasks"
echo "(policy local, omp-guard auto, GPUs spread over tasks):"
echo
echo "| topology | KB | PUs | GPUs | load ms, fresh process, libxml2 | load ms, fresh, lean | load ms in-process, lean (median of 20) | plan 64 tasks ms (median of 200) |"
echo "|---|---|---|---|---|---|---|---|"
for f in $(ls -S "$topos"/*.xml | head -4); do
    kb=$(( $(stat -c %s "$f") / 1024 ))
    a=$(fresh "$N" "" xml "$f")
    b=$(fresh "$N" "HWLOC_PLUGINS_BLACKLIST=$lean" xml "$f")
    c=$(HWLOC_PLUGINS_BLACKLIST=$lean "$bin/bench_topo" xml "$f" 20 | sed -n 's/^median_ms=\([0-9.]*\).*/\1/p')
    p=$("$bin/bench_topo" plan "$f" 64 200)
    pm=$(printf '%s' "$p" | sed -n 's/^median_ms=\([0-9.]*\).*/\1/p')
    pus=$(printf '%s' "$p" | sed -n 's/.* pus=\([0-9]*\).*/\1/p')
    gp=$(printf '%s' "$p" | sed -n 's/.* gpus=\([0-9]*\).*/\1/p')
    echo "| $(basename "$f" .xml) | $kb | $pus | $gp | $a | $b | $c | ${pm:-fail} |"
done
echo
echo "Drawing a plan (\`--svg\`: \`ng_draw_svg\`, \`--map\`: \`ng_draw_map\`) of 8 tasks"
echo "(GPUs spread over tasks) into /dev/null, in-process, median of 200; the"
echo "target is under 100 ms for the largest topology of the corpus:"
echo
echo "| topology | PUs | SVG ms | map ms | under 100 ms |"
echo "|---|---|---|---|---|"
for f in $(ls -S "$topos"/*.xml | head -4); do
    d=$("$bin/bench_topo" draw "$f" 8 200)
    sm=$(printf '%s' "$d" | sed -n 's/^median_ms=\([0-9.]*\).*/\1/p')
    mm=$(printf '%s' "$d" | sed -n 's/.* map_ms=\([0-9.]*\).*/\1/p')
    pus=$(printf '%s' "$d" | sed -n 's/.* pus=\([0-9]*\).*/\1/p')
    under=$(awk -v s="${sm:-1e9}" -v m="${mm:-1e9}" 'BEGIN { print (s < 100 && m < 100) ? "yes" : "NO" }')
    [ "$under" = yes ] || echo "bench: drawing $(basename "$f") took ${sm:-?} ms (SVG), ${mm:-?} ms (map): over 100 ms" >&2
    echo "| $(basename "$f" .xml) | $pus | ${sm:-fail} | ${mm:-fail} | $under |"
done
echo
echo "Cache write (\`ng_topology_cache_write\`, once per node): $("$bin/bench_topo" write "$cache_root/cache2" | sed -n 's/^ms=//p') ms."
echo
echo "### b. Per-task apply cost (\`ng_apply_task\`)"
echo
echo "In-process loop on the live topology, one task owning the node, 20000"
echo "iterations each:"
echo
echo "| what | median us | p90 us | syscalls done |"
echo "|---|---|---|---|"
for m in local none skip; do
    r=$("$bin/bench_apply" 20000 $m)
    mu=$(printf '%s' "$r" | sed -n 's/^median_us=\([0-9.]*\).*/\1/p')
    p9=$(printf '%s' "$r" | sed -n 's/.*p90_us=\([0-9.]*\).*/\1/p')
    sc=$(printf '%s' "$r" | sed -n 's/.*cpus=\([01]\) mem=\([01]\).*/affinity=\1 mempolicy=\2/p')
    case $m in
        local) what="policy local: affinity + MPOL_BIND + env" ;;
        none) what="policy none: env only" ;;
        skip) what="plan-only (NG_APPLY_SKIP_SYSCALLS)" ;;
    esac
    echo "| $what | $mu | $p9 | $sc |"
done
echo
} >"$out"
