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

# The whole job (docs/check.md): `check --job 4242` of a job of 8 tasks on
# two XE8640 nodes, each node's report made by `check --job 4242 --local
# --json --panel` over a fake /proc tree (Slurm 26.05's SLUID cgroups, its
# slurmstepd titled "slurmstepd: [4242.0]"), shown by --replay. On ng2 a
# launcher piled tasks 6 and 7 on the same cores.
XE=$T/xe8640-4xh100-spr8480-snc4.xml
job=$(mktemp -d)
trap 'rm -rf "$job"' EXIT
# put FILE TEXT: a file of the fake tree.
put() { mkdir -p "$(dirname "$1")" && printf '%b' "$2" >"$1"; }
# fake_task NODE PID RANK LOCAL CPUS MEMS GPU RUNCPU NRUN
fake_task() {
    local p=$job/$1/proc/$2 t cg="0::/system.slice/${1}_slurmstepd.scope/sEKNKTV3WPV500/step_0/user/task_$4\n"
    put "$p/status" "Name:\tpython3\nPPid:\t90\nUid:\t1000\t1000\t1000\t1000\nThreads:\t4\nCpus_allowed_list:\t$5\nMems_allowed_list:\t0-7\n"
    put "$p/comm" "python3\n"
    put "$p/cmdline" "python3\0train.py\0"
    put "$p/cgroup" "$cg"
    put "$p/environ" "SLURM_PROCID=$3\0SLURM_LOCALID=$4\0SLURM_STEP_TASKS_PER_NODE=4\0NUMAGUARD_POLICY=local\0NUMAGUARD_GPUS=$7\0OMP_NUM_THREADS=28\0UCX_NET_DEVICES=mlx5_$4:1\0"
    put "$p/numa_maps" "55d0c0a00000 bind:$6 heap anon=262144 dirty=262144 N${6%%,*}=262144 kernelpagesize_kB=4\n"
    for t in 0 1 2 3; do
        local state=S
        [ "$t" -lt "$9" ] && state=R
        put "$p/task/$(($2 + t))/stat" "$(($2 + t)) (python3) $state$(printf ' 0%.0s' $(seq 4 38)) $8 0 0 0\n"
        put "$p/task/$(($2 + t))/status" "Name:\tpython3\nCpus_allowed_list:\t$5\n"
    done
}
# Slurm's slurmstepd of the job on NODE (root's, in the SLUID cgroup).
fake_stepd() {
    local p=$job/$1/proc/90
    put "$p/status" "Name:\tslurmstepd\nPPid:\t1\nUid:\t0\t0\t0\t0\nThreads:\t1\nCpus_allowed_list:\t0-223\nMems_allowed_list:\t0-7\n"
    put "$p/comm" "slurmstepd\n"
    put "$p/cmdline" "slurmstepd: [4242.0]\0"
    put "$p/cgroup" "0::/system.slice/${1}_slurmstepd.scope/sEKNKTV3WPV500/step_0/slurm\n"
    ln -sf /usr/sbin/slurmstepd "$p/exe"
}
fake_stepd ng1
fake_task ng1 1000 0 0 28-55,140-167 2,3 0000:4e:00.0 30 1
fake_task ng1 1100 1 1 0-27,112-139 0,1 0000:5f:00.0 3 1
fake_task ng1 1200 2 2 84-111,196-223 6,7 0000:cb:00.0 90 1
fake_task ng1 1300 3 3 56-83,168-195 4,5 0000:db:00.0 60 1
fake_stepd ng2
fake_task ng2 2000 4 0 28-55,140-167 2,3 0000:4e:00.0 30 1
fake_task ng2 2100 5 1 0-27,112-139 0,1 0000:5f:00.0 3 1
fake_task ng2 2200 6 2 56-83,168-195 4,5 0000:cb:00.0 56 3
fake_task ng2 2300 7 3 56-83,168-195 4,5 0000:db:00.0 56 3
mkdir -p "$job/answers"
for node in ng1 ng2; do
    "$ng" check --job 4242 --local --json --panel --fsroot "$job/$node" --topology "$XE" \
        >"$job/answers/$node.json"
done
"$ng" check --job 4242 --replay "$job/answers" --svg "$out/check-job.svg" >/dev/null
echo "pictures: $out/check-job.svg"
