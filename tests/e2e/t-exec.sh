#!/bin/sh
# numaguard exec standalone: affinity, memory policy and environment seen
# from INSIDE the executed command; rank detection from launcher variables;
# GPU ownership rules (on a real 4xH100 topology, plan only); bad input.
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
unset LOCAL_RANK LOCAL_WORLD_SIZE RANK OMPI_COMM_WORLD_LOCAL_RANK OMPI_COMM_WORLD_LOCAL_SIZE \
    OMPI_COMM_WORLD_RANK MPI_LOCALRANKID MPI_LOCALNRANKS PMI_RANK PMI_LOCAL_RANK PMI_LOCAL_SIZE \
    SLURM_LOCALID SLURM_PROCID SLURM_NODEID SLURM_STEP_TASKS_PER_NODE SLURM_TASKS_PER_NODE \
    CUDA_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND \
    NUMAGUARD_CPUS NUMAGUARD_MEMS NUMAGUARD_GPUS NUMAGUARD_POLICY NUMAGUARD_MEM_MODE

# What the child sees: affinity, heap policy (numa_maps), environment.
PROBE='grep -E "^(Cpus_allowed_list|Mems_allowed_list)" /proc/self/status
echo "heap=$(sed -n "s/^[0-9a-f]* \(.*\) heap.*/\1/p" /proc/self/numa_maps)"
env'
# run ARGS...: numaguard exec ARGS -- sh -c PROBE, on CPUs 0-1 (the
# machine this suite targets has 2 CPUs and one NUMA node: node 0).
run() { taskset -c 0,1 "$NG" exec "$@" -- sh -c "$PROBE" 2>/tmp/ng-exec-err.$$; }

# overlap A B: 0 (true for ok) when the CPU lists A and B share no CPU;
# inlist N LIST: 0 when N is in the Linux list LIST.
inlist() { overlap "$1" "$2" | tr 01 10; }
overlap() {
    python3 -c 'import sys
def cpus(t):
    s = set()
    for p in filter(None, t.split(",")):
        a, _, b = p.partition("-")
        s.update(range(int(a), int(b or a) + 1))
    return s
sys.exit(1 if cpus(sys.argv[1]) & cpus(sys.argv[2]) or not sys.argv[1] else 0)' "$1" "$2"
    echo $?
}

if [ "$(nproc --all)" -lt 2 ] || [ ! -x "$NG" ]; then
    skip 1 "needs 2 CPUs and $NG"
    done_testing
    exit 0
fi

# --- one rank: everything allowed, memory bound to the CPUs' node ---
out=$(run)
is "$(val "$out" Cpus_allowed_list)" "0-1" "1 rank: keeps CPUs 0-1"
is "$(val "$out" heap)" "bind:0" "1 rank: heap policy bind:0 (numa_maps)"
is "$(val "$out" NUMAGUARD_CPUS)/$(val "$out" NUMAGUARD_MEMS)/$(val "$out" NUMAGUARD_MEM_MODE)" \
   "0-1/0/bind" "1 rank: NUMAGUARD_CPUS/MEMS/MEM_MODE"
is "$(val "$out" NUMAGUARD_POLICY)" "local" "1 rank: NUMAGUARD_POLICY=local"
is "$(val "$out" OMP_NUM_THREADS)" "" "no --omp-guard: OMP_NUM_THREADS not set"

# --- rank 1 of 2 from the command line ---
out=$(run --local-rank 1 --local-size 2 --omp-guard)
is "$(val "$out" Cpus_allowed_list)" "1" "rank 1 of 2: bound to CPU 1"
is "$(val "$out" heap)" "bind:0" "rank 1 of 2: heap bind:0"
is "$(val "$out" OMP_NUM_THREADS),$(val "$out" OMP_PLACES),$(val "$out" OMP_PROC_BIND)" \
   "1,," "--omp-guard: 1 thread, no OMP_PLACES/OMP_PROC_BIND (the task is bound already)"
is "$(val "$out" MKL_NUM_THREADS)" "1" "--omp-guard: MKL_NUM_THREADS=1"
out=$(OMP_NUM_THREADS=7 run --local-rank 0 --local-size 2 --omp-guard)
is "$(val "$out" OMP_NUM_THREADS)" "7" "a user's OMP_NUM_THREADS is kept"
out=$(OMP_NUM_THREADS=7 run --local-rank 0 --local-size 1 --omp-guard=3,force)
is "$(val "$out" OMP_NUM_THREADS)" "3" "--omp-guard=3,force overrides it"

# --- rank and size from launcher variables ---
out=$(LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 run)
is "$(val "$out" Cpus_allowed_list)" "0" "torchrun LOCAL_RANK=0 of 2: CPU 0"
out=$(OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2 run)
is "$(val "$out" Cpus_allowed_list)" "1" "Open MPI local rank 1 of 2: CPU 1"
out=$(MPI_LOCALRANKID=1 MPI_LOCALNRANKS=2 run)
is "$(val "$out" Cpus_allowed_list)" "1" "MPICH MPI_LOCALRANKID=1 of 2: CPU 1"
out=$(PMI_LOCAL_RANK=0 PMI_LOCAL_SIZE=2 run)
is "$(val "$out" Cpus_allowed_list)" "0" "PMI_LOCAL_RANK=0 of 2: CPU 0"
out=$(SLURM_LOCALID=1 SLURM_NODEID=1 SLURM_STEP_TASKS_PER_NODE='3,2(x2)' run)
is "$(val "$out" Cpus_allowed_list)" "1" "SLURM_LOCALID=1, node 1 of '3,2(x2)': 2 tasks, CPU 1"
out=$(LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 SLURM_LOCALID=1 SLURM_STEP_TASKS_PER_NODE=2 run)
is "$(val "$out" Cpus_allowed_list)" "0" "torchrun inside srun: LOCAL_RANK wins over SLURM_LOCALID"
out=$(LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 run --local-rank 1 --local-size 2)
is "$(val "$out" Cpus_allowed_list)" "1" "--local-rank/--local-size win over the environment"

# --- policies ---
out=$(run --numa-policy interleave)
is "$(val "$out" heap)/$(val "$out" NUMAGUARD_MEM_MODE)" "interleave:0/interleave" "interleave"
out=$(run --numa-policy prefer)
is "$(val "$out" heap)/$(val "$out" NUMAGUARD_MEM_MODE)" "prefer (many):0/preferred_many" \
   "prefer: MPOL_PREFERRED_MANY (Linux >= 5.15)"
out=$(run --local-rank 1 --local-size 2 --numa-policy none --omp-guard)
is "$(val "$out" Cpus_allowed_list)/$(val "$out" heap)/$(val "$out" NUMAGUARD_MEM_MODE)" \
   "0-1/default/none" "none: CPUs and memory untouched"
is "$(val "$out" OMP_NUM_THREADS)" "1" "none + --omp-guard: threads still capped to the slice"

# --- verbose line ---
run --local-rank 1 --local-size 2 --verbose >/dev/null
is "$(tail -1 /tmp/ng-exec-err.$$)" "numaguard: task 1: gpus none numa 0 cpus 1 mem bind:0" \
   "--verbose: the task line (no thread count without --omp-guard)"
RANK=5 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 run --numa-policy local,verbose --omp-guard >/dev/null
is "$(tail -1 /tmp/ng-exec-err.$$)" \
   "numaguard: rank 5 (local 1): gpus none numa 0 cpus 1 mem bind:0 threads 1" \
   "verbose modifier with RANK=5: the rank line, threads exported"

# --- the field reports' workload: OpenMP started in the main thread, then 2
# forked children and 16 pthread workers running small OpenMP regions. Every
# thread and child keeps the task's whole slice under every guard and policy
# (libgomp binding would confine them all to the first place). ---
POOL=$BUILD/tests/omp_pool
pool_cpus() {  # pool_cpus ARGS...: "slice|distinct cpus= values of main, children, workers"
    o=$(taskset -c 0,1 "$NG" exec "$@" -- sh -c 'echo "slice=$NUMAGUARD_CPUS"; exec "$0" 16 0.2 2' \
        "$POOL" 2>/dev/null)
    printf '%s|%s|%s' "$(val "$o" slice)" \
        "$(printf '%s\n' "$o" | grep -Ec '^(main|child [0-9]+|worker [0-9]+) cpus=')" \
        "$(printf '%s\n' "$o" | sed -n 's/^\(main\|child [0-9]*\|worker [0-9]*\) cpus=//p' | sort -u | tr '\n' ' ')"
}
for guard in --omp-guard --omp-guard=1; do
    for pol in local prefer interleave weighted none; do
        is "$(pool_cpus "$guard" --numa-policy "$pol")" "0-1|19|0-1 " \
           "pool + fork, $guard, $pol: main, 2 children, 16 workers all keep CPUs 0-1"
    done
done
is "$(pool_cpus --omp-guard=1 --local-rank 1 --local-size 2)" "1|19|1 " \
   "pool + fork, rank 1 of 2: all 19 on the rank's slice (CPU 1)"
# ,bind is opt-in for pure OpenMP programs: libgomp then pins the first
# thread, and what it starts outside OpenMP, to the first place (shown here).
out=$(run --omp-guard=1,bind)
is "$(val "$out" OMP_PROC_BIND)/$(val "$out" OMP_PLACES)" "spread/{0}:2" \
   "--omp-guard=1,bind: OMP_PROC_BIND=spread, OMP_PLACES lists the task's own cores"
is "$(pool_cpus --omp-guard=bind)" "0-1|19|0 " \
   "--omp-guard=bind: the documented cost, everything on the first place"
for pol in none; do
    out=$(run --omp-guard=bind --numa-policy "$pol")
    is "$(val "$out" OMP_NUM_THREADS)/$(val "$out" OMP_PROC_BIND)/$(val "$out" OMP_PLACES)" "2//" \
       "--omp-guard=bind with policy $pol: counts only (numaguard did not bind)"
done
out=$(run --omp-guard=bind --topology "$XE")
is "$(val "$out" OMP_PROC_BIND)/$(val "$out" OMP_PLACES)" "/" \
   "--omp-guard=bind, plan only (foreign topology): no binding variables"

# --- GPUs on a 4xH100 SNC4 topology (plan only: env, no syscalls) ---
# The launcher rule decides which GPU a rank owns (asserted exactly); the
# planner (docs/planner.md) decides the cores: they must include the GPU's
# own NUMA node's first core and the memory its node.
out=$(CUDA_VISIBLE_DEVICES=0,1,2,3 LOCAL_RANK=2 LOCAL_WORLD_SIZE=4 run --topology "$XE")
is "$(val "$out" NUMAGUARD_GPUS)" "0000:cb:00.0" "torchrun: 4 visible, local rank 2 owns entry 2"
ok "$(inlist 7 "$(val "$out" NUMAGUARD_MEMS)")" "... memory includes its GPU's node 7"
# exec and plan share one planner: rank 2's cores and memory are plan's task 2.
is "$(val "$out" NUMAGUARD_CPUS) bind:$(val "$out" NUMAGUARD_MEMS)" \
   "$("$NG" plan --topology "$XE" --tasks 4 --gpus-per-task 1 | awk '$1 == "2" {print $3, $4}')" \
   "... its cores and memory are numaguard plan's task 2"
is "$(val "$out" Cpus_allowed_list)" "0-1" "plan only: affinity not changed"
out=$(CUDA_VISIBLE_DEVICES=3,2,1,0 LOCAL_RANK=0 LOCAL_WORLD_SIZE=4 run --topology "$XE")
is "$(val "$out" NUMAGUARD_GPUS)" "0000:db:00.0" "visible list 3,2,1,0: rank 0 owns GPU index 3"
ok "$(inlist 5 "$(val "$out" NUMAGUARD_MEMS)")" "... memory includes its GPU's node 5"
out=$(CUDA_VISIBLE_DEVICES=1 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 run --topology "$XE")
is "$(val "$out" NUMAGUARD_GPUS)" "0000:5f:00.0" "one visible GPU, 2 ranks: they share it"
out0=$(CUDA_VISIBLE_DEVICES=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 run --topology "$XE")
is "$(val "$out0" NUMAGUARD_GPUS)" "0000:5f:00.0" "... rank 0 has it too"
ok "$(overlap "$(val "$out0" NUMAGUARD_CPUS)" "$(val "$out" NUMAGUARD_CPUS)")" \
   "... and the two ranks' slices are disjoint"
out=$(run --topology "$XE" --gpus all --local-rank 3 --local-size 4)
is "$(val "$out" NUMAGUARD_GPUS)" "0000:db:00.0" "--gpus all, 4 ranks: rank 3 owns the 4th GPU in bus order"
out=$(CUDA_VISIBLE_DEVICES=0 run --topology "$XE" --gpus none)
is "$(val "$out" NUMAGUARD_GPUS)/$(val "$out" NUMAGUARD_MEMS)" "/0-7" \
   "--gpus none: CPU-only over the whole machine"

# --- thread rules: exported count, kept presets, too many threads, cpu.max ---
run --local-rank 1 --local-size 2 --omp-guard=8 --verbose >/dev/null
like "$(cat /tmp/ng-exec-err.$$)" '\[--omp-guard=8 exceeds the 1 CPU this task owns' \
   "--omp-guard=8 on 1 CPU: warning"
like "$(tail -1 /tmp/ng-exec-err.$$)" ' threads 8 ' "... and the verbose line shows the 8 exported"
out=$(OMP_NUM_THREADS=8 MKL_NUM_THREADS=1 run --omp-guard --verbose)
is "$(val "$out" OMP_NUM_THREADS)/$(val "$out" MKL_NUM_THREADS)/$(val "$out" OPENBLAS_NUM_THREADS)" \
   "8/1/2" "presets kept, the rest capped to the 2 cores"
like "$(tail -1 /tmp/ng-exec-err.$$)" \
   ' threads 2 \(kept OMP_NUM_THREADS=8 MKL_NUM_THREADS=1\) \[preset thread values kept \(OMP_NUM_THREADS=8 MKL_NUM_THREADS=1\) disagree with each other or with the 2 cores this task owns by more than 2x; --omp-guard=...,force replaces them\]$' \
   "kept presets named once, and a warning when they disagree > 2x"
OMP_NUM_THREADS=1 run --omp-guard >/dev/null
is "$(cat /tmp/ng-exec-err.$$)" "" "a kept OMP_NUM_THREADS=1 on 2 cores: within 2x, no warning"
# torchrun's environment exactly as torchrun sets it for 2 workers
# (LOCAL_RANK, RANK, LOCAL_WORLD_SIZE, WORLD_SIZE, OMP_NUM_THREADS=1 preset).
out=$(LOCAL_RANK=1 RANK=1 LOCAL_WORLD_SIZE=2 WORLD_SIZE=2 OMP_NUM_THREADS=1 run --omp-guard --verbose)
is "$(val "$out" Cpus_allowed_list)/$(val "$out" OMP_NUM_THREADS)/$(val "$out" MKL_NUM_THREADS)" "1/1/1" \
   "torchrun env, worker 1 of 2: CPU 1, OMP_NUM_THREADS=1 kept, MKL capped to 1"
is "$(tail -1 /tmp/ng-exec-err.$$)" \
   "numaguard: rank 1 (local 1): gpus none numa 0 cpus 1 mem bind:0 threads 1 (kept OMP_NUM_THREADS=1)" \
   "torchrun env: the verbose line says the preset was kept"
# cgroup v2 cpu.max below the CPU count (a fake /proc and /sys under --fsroot)
F=/tmp/ng-exec-fake.$$
mkdir -p "$F/proc/self" "$F/sys/fs/cgroup/job/step"
printf '0::/job/step\n' >"$F/proc/self/cgroup"
echo "100000 100000" >"$F/sys/fs/cgroup/job/cpu.max"
echo "max 100000" >"$F/sys/fs/cgroup/job/step/cpu.max"
out=$(run --fsroot "$F" --omp-guard --verbose)
is "$(val "$out" OMP_NUM_THREADS)" "1" "cpu.max 1 CPU on the job's cgroup: --omp-guard=auto exports 1"
like "$(tail -1 /tmp/ng-exec-err.$$)" ' threads 1 \(cgroup cpu.max quota\)' "... and says why"
echo "150000 100000" >"$F/sys/fs/cgroup/job/cpu.max"
out=$(run --fsroot "$F" --omp-guard)
is "$(val "$out" OMP_NUM_THREADS)" "2" "cpu.max 1.5 CPUs: ceil = 2 = the cores owned"
out=$(run --fsroot "$F" --omp-guard=4)
is "$(val "$out" OMP_NUM_THREADS)" "4" "--omp-guard=4: an explicit count is not lowered"
rm -rf "$F"

# --- launcher-bound ranks: the mask is kept, one warning with the fix ---
out=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2 taskset -c 1 "$NG" exec --omp-guard \
      --verbose -- sh -c "$PROBE" 2>/tmp/ng-exec-err.$$)
is "$(val "$out" Cpus_allowed_list)/$(val "$out" NUMAGUARD_CPUS)/$(val "$out" OMP_NUM_THREADS)" "1/1/1" \
   "Open MPI rank bound to CPU 1: mask kept, threads capped to it"
like "$(cat /tmp/ng-exec-err.$$)" \
   '^numaguard: warning: Open MPI already bound local rank 0 to CPUs 1 of the allowed 0-1: keeping the launcher.s mask, threads capped to it; to let numaguard place the ranks, run mpirun --bind-to none$' \
   "pre-bound: one warning naming the fix"
like "$(tail -1 /tmp/ng-exec-err.$$)" '\(cpus kept from the launcher\)' "pre-bound: the verbose line says so"
is "$(grep -c 'already bound' /tmp/ng-exec-err.$$)" "1" "pre-bound: warned once"
out=$(SLURM_LOCALID=1 SLURM_STEP_TASKS_PER_NODE=2 taskset -c 0 "$NG" exec -- sh -c "$PROBE" 2>/tmp/ng-exec-err.$$)
is "$(val "$out" Cpus_allowed_list)" "0" "srun-bound rank 1: its mask (CPU 0) kept"
is "$(cat /tmp/ng-exec-err.$$)" "" "... only local rank 0 warns"
out=$(taskset -c 1 "$NG" exec --local-rank 0 --local-size 1 -- sh -c "$PROBE" 2>/tmp/ng-exec-err.$$)
is "$(val "$out" Cpus_allowed_list)/$(cat /tmp/ng-exec-err.$$)" "1/" \
   "no launcher variables: a narrow mask is simply the CPUs to plan in, no warning"

# --- GPU lists without a GPU ---
for cvd in -1 0,1; do
    out=$(CUDA_VISIBLE_DEVICES=$cvd run)
    is "$(val "$out" NUMAGUARD_CPUS)/$(val "$out" NUMAGUARD_GPUS)/$(val "$out" NUMAGUARD_MEM_MODE)" "0-1//bind" \
       "CUDA_VISIBLE_DEVICES=$cvd on this GPU-less machine: a CPU-only plan"
done
CUDA_VISIBLE_DEVICES=-1 run >/dev/null
is "$(cat /tmp/ng-exec-err.$$)" \
   "numaguard: warning: CUDA_VISIBLE_DEVICES=-1 hides every GPU: planning CPU-only" "... -1: one warning"
CUDA_VISIBLE_DEVICES=0,1 run >/dev/null
is "$(cat /tmp/ng-exec-err.$$)" \
   "numaguard: warning: CUDA_VISIBLE_DEVICES=0,1 but this node has no GPU: planning CPU-only" \
   "... a list on a GPU-less node: one warning"

# --- --verbose is not part of the policy the task is told about ---
out=$(run --verbose --numa-policy interleave)
is "$(val "$out" NUMAGUARD_POLICY)" "interleave" "--verbose does not leak into NUMAGUARD_POLICY"

# --- --dry-run / --explain: the placement and why, nothing run ---
out=$(OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2 OMPI_COMM_WORLD_RANK=3 OMP_NUM_THREADS=1 \
      taskset -c 0,1 "$NG" exec --omp-guard --dry-run -- echo ran 2>&1)
is "$?:$(printf '%s\n' "$out" | grep -c '^ran$')" "0:0" "--dry-run: exit 0, the command is not run"
like "$out" 'rank +local 1 of 2 \(from Open MPI: OMPI_COMM_WORLD_LOCAL_RANK\), global rank 3' "--dry-run: rank and source"
like "$out" 'cpus +1 \(slice 2 of 2 of the allowed CPUs\)' "--dry-run: CPUs and why"
like "$out" 'mask +0-1; allowed 0-1; excluded by the allocation: none' "--dry-run: masks"
like "$out" 'kept +OMP_NUM_THREADS=1' "--dry-run: kept presets"
like "$out" 'env +MKL_NUM_THREADS=1' "--dry-run: the variables it would set"
is "$(OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2 taskset -c 0,1 "$NG" exec --explain --json \
      --omp-guard | python3 -c 'import json,sys; d=json.load(sys.stdin)
print(d["local_rank"], d["local_size"], d["launcher"], d["cpus"], d["mem_policy"], d["mem_nodes"],
      d["threads"], d["env"]["OMP_NUM_THREADS"], d["prebound"], d["warnings"])')" \
   "1 2 Open MPI 1 bind [0] 1 1 False []" "--explain --json: one document, no command needed"
out=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2 taskset -c 1 "$NG" exec --dry-run --json |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["prebound"], d["cpus"], d["cpus_why"])')
is "$out" "True 1 the launcher's mask, kept (pre-bound rank)" "--dry-run --json: a pre-bound rank"

# --- bad input: exit 2, one line, nothing run ---
bad() {  # bad DESC ERE ARGS...
    d=$1 re=$2
    shift 2
    "$NG" exec "$@" >/tmp/ng-exec-out.$$ 2>/tmp/ng-exec-err.$$
    rc=$?
    is "$rc:$(wc -l </tmp/ng-exec-err.$$):$(wc -c </tmp/ng-exec-out.$$)" "2:1:0" "$d: exit 2, one line"
    like "$(cat /tmp/ng-exec-err.$$)" "$re" "$d: message"
}
bad "rank >= size" '^numaguard: exec: --local-rank 2 is not below --local-size 2$' \
    --local-rank 2 --local-size 2 -- echo ran
bad "rank alone" 'give --local-rank and --local-size together' --local-rank 1 -- echo ran
bad "bad policy" "^numaguard: exec: --numa-policy: invalid value 'locl'" --numa-policy locl -- echo ran
bad "bad omp guard" "^numaguard: exec: --omp-guard: invalid value '0'" --omp-guard=0 -- echo ran
bad "no command" 'no command given' --verbose
bad "bad --gpus" "'9' is not a GPU index \(0-3\)" --topology "$XE" --gpus 9 -- echo ran
bad "bad size" "invalid --local-size 'x'" --local-rank 0 --local-size x -- echo ran
bad "missing topology file" "^numaguard: cannot load topology /nonexistent.xml: " \
    --topology /nonexistent.xml -- echo ran
bad "--omp-guard 4 (space)" "^numaguard: exec: did you mean --omp-guard=4\\? \\(its value follows '=': '--omp-guard 4' is the bare --omp-guard and a command to run\\)$" \
    --omp-guard 4 echo ran
bad "node 7 on a 1-node machine" \
    "^numaguard: exec: --numa-policy=interleave:7: NUMA node 7 does not exist on this machine \(its nodes: 0\)$" \
    --numa-policy=interleave:7 -- echo ran
bad "--json without --dry-run" "--json goes with --dry-run" --json -- echo ran
"$NG" exec --omp-guard -- 4 2>/dev/null
is "$?" "127" "--omp-guard -- 4: '--' makes 4 the command (not found: 127)"

"$NG" exec -- /nonexistent/cmd 2>/tmp/ng-exec-err.$$
is "$?:$(cat /tmp/ng-exec-err.$$)" \
   "127:numaguard: exec: cannot run '/nonexistent/cmd': No such file or directory" "missing command: 127"
: >/tmp/ng-exec-noexec.$$
chmod 644 /tmp/ng-exec-noexec.$$
"$NG" exec -- /tmp/ng-exec-noexec.$$ 2>/dev/null
is "$?" "126" "not executable: 126"
rm -f /tmp/ng-exec-noexec.$$

# A broken launcher environment warns and runs unplaced; strict refuses.
out=$(LOCAL_RANK=3 LOCAL_WORLD_SIZE=2 run)
is "$(val "$out" Cpus_allowed_list):$(val "$out" NUMAGUARD_CPUS)" "0-1:" "bad LOCAL_RANK: runs unplaced"
like "$(cat /tmp/ng-exec-err.$$)" \
   '^numaguard: exec: LOCAL_RANK=3 with LOCAL_WORLD_SIZE=2 is not a valid local rank and size; give --local-rank and --local-size; running the command unplaced$' \
   "bad LOCAL_RANK: one warning line"
LOCAL_RANK=3 LOCAL_WORLD_SIZE=2 "$NG" exec --numa-policy local,strict -- echo ran >/tmp/ng-exec-out.$$ 2>&1
is "$?:$(tail -1 /tmp/ng-exec-out.$$)" \
   "1:numaguard: exec: LOCAL_RANK=3 with LOCAL_WORLD_SIZE=2 is not a valid local rank and size; give --local-rank and --local-size; strict: not running the command" \
   "strict: exit 1, command not run"

# --- no wrapper left: the command replaces numaguard (same pid) ---
pids=$(sh -c 'echo $$; exec "$0" exec -- sh -c "echo \$\$"' "$NG" | tr '\n' ' ')
set -- $pids
is "$1" "$2" "the command runs in numaguard's own process (exec, no wrapper)"

out=$("$NG" exec --numa-policy help -- echo ran)
like "$out" 'interleave' "--numa-policy help prints the grammar"
is "$(printf '%s\n' "$out" | grep -c '^ran$')" "0" "... and runs nothing"

# --- set_mempolicy refused (ENOSYS from a seccomp filter, as under
# qemu-user or a sandbox): each part applies on its own. The task keeps
# its CPU binding, its variables and the governor, with one warning and no
# memory policy; strict refuses to run the command. The governor is the
# build's (a copy where a checkout is not root's alone, tests/lib/governor.sh).
. tests/lib/governor.sh
GDIR=$(ng_stage_governor "$BUILD")
NOMP=$BUILD/tests/no_mempolicy
if [ -z "$GDIR" ] || [ ! -x "$NOMP" ]; then
    skip 6 "set_mempolicy refused: needs $NOMP and a governor directory root's alone (run as root)"
else
    GNG=$GDIR/numaguard
    out=$(taskset -c 0,1 "$NOMP" "$GNG" exec --local-rank 1 --local-size 2 --omp-guard=adaptive \
        -- sh -c "$PROBE" 2>/tmp/ng-exec-err.$$)
    is "$(val "$out" Cpus_allowed_list)/$(val "$out" NUMAGUARD_CPUS)" "1/1" \
       "set_mempolicy ENOSYS: rank 1 of 2 keeps its CPU binding (CPU 1) and NUMAGUARD_CPUS"
    is "$(val "$out" heap)/$(val "$out" NUMAGUARD_MEM_MODE)/$(val "$out" NUMAGUARD_MEMS)" "default/none/" \
       "set_mempolicy ENOSYS: no memory policy, NUMAGUARD_MEM_MODE=none, NUMAGUARD_MEMS empty"
    is "$(val "$out" OMP_NUM_THREADS)/$(val "$out" LD_PRELOAD)" "1/$GDIR/libnumaguard-omp.so" \
       "set_mempolicy ENOSYS: thread variables and the governor preload kept"
    like "$(cat /tmp/ng-exec-err.$$)" \
       '^numaguard: warning: set_mempolicy\(bind:0\) failed: Function not implemented; CPU binding and variables kept$' \
       "set_mempolicy ENOSYS: one warning naming the call"
    taskset -c 0,1 "$NOMP" "$GNG" exec --local-rank 1 --local-size 2 --omp-guard=adaptive \
        --numa-policy local,strict -- echo ran >/tmp/ng-exec-out.$$ 2>&1
    is "$?:$(grep -c '^ran$' /tmp/ng-exec-out.$$)" "1:0" "set_mempolicy ENOSYS, strict: exit 1, command not run"
    like "$(cat /tmp/ng-exec-out.$$)" \
       '^numaguard: exec: set_mempolicy\(bind:0\) failed: Function not implemented; strict: not running the command$' \
       "set_mempolicy ENOSYS, strict: one line saying why"
    [ "$GDIR" = "$(cd "$BUILD" && pwd)" ] || rm -rf "$GDIR"
fi

rm -f /tmp/ng-exec-err.$$ /tmp/ng-exec-out.$$
done_testing
