#!/bin/sh
# The pictures of README.md and docs/ (make pictures): each drawn by
# numaguard from a topology of the corpus, as SVG and as the --map text.
#   sh tests/draw/pictures.sh NUMAGUARD OUTDIR
# tests/draw/t-draw.sh draws them again and compares with docs/img/.
set -e
ng=$1 out=$2
mkdir -p "$out"
T=tests/topologies
# name | topology | plan options
while IFS='|' read -r name topo args; do
    case $name in '#'* | '') continue ;; esac
    # shellcheck disable=SC2086
    "$ng" plan --topology "$T/$topo.xml" $args --svg "$out/$name.svg" >/dev/null
    # shellcheck disable=SC2086
    "$ng" plan --topology "$T/$topo.xml" $args --map >"$out/$name.map.txt"
    echo "pictures: $out/$name.svg, $out/$name.map.txt"
done <<'EOF'
xe8640-4-gpu-tasks|xe8640-4xh100-spr8480-snc4|--tasks 4 --gpus-per-task 1 --omp-guard --net-affinity
gh200-4-tasks|gh200-4superchip-synthetic|--tasks 4 --gpus-per-task 1 --numa-policy local,cpuless
gh200-8-tasks-prefer|gh200-4superchip-synthetic|--tasks 8 --task-gpus 0;0;1;1;2;2;3;3 --numa-policy prefer,cpuless
cpu-only-partial|xe8640-4xh100-spr8480-snc4|--tasks 3 --cpus 0-27,112-139 --numa-policy interleave
EOF
