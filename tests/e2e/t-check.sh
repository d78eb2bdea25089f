#!/bin/sh
# numaguard check on processes with known placement: a bound one
# (numactl), an oversubscribed one (spinning threads on one CPU), one with
# idle pool threads, GPU shares on a real 4xH100 topology (NUMAGUARD_GPUS /
# CUDA_VISIBLE_DEVICES in the process environment, split per rank by the
# launcher rules), another user's process (no privilege), --all-mine, JSON
# and text, bad input; across processes: 4 busy processes x 2 threads on 2
# CPUs, two processes piled on one CPU, --job, a process started with
# --omp-guard (no --omp-guard advice), ranks of a real mpirun (Open MPI)
# and mpiexec (MPICH), terminal escapes from /proc.
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
HELPER=$BUILD/tests/ng_threads
T=$(mktemp -d /tmp/ng-check.XXXXXX)
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT INT TERM

if [ ! -x "$HELPER" ] || [ ! -x "$NG" ] || [ "$(nproc --all)" -lt 2 ]; then
    skip 1 "needs $HELPER (make tests), $NG and 2 CPUs"
    done_testing
    exit 0
fi

# j FILE EXPR: a Python expression over the first process, d = its JSON object.
j() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["processes"][0]; print(eval(sys.argv[2]))' "$1" "$2"; }
# s FILE EXPR: a Python expression over the summary (s) and processes (ps).
s() { python3 -c 'import json,sys; D=json.load(open(sys.argv[1])); s=D["summary"]; ps=D["processes"]; print(eval(sys.argv[2]))' "$1" "$2"; }
# stop NAME...: kill those helpers now (they spin).
stop() {
    for n in "$@"; do
        eval "p=\$PID_$n"
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
        PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$p" | tr '\n' ' ')
    done
}

start bound numactl --physcpubind=0 --membind=0 "$HELPER" 0 0 8192
start inter numactl --physcpubind=1 --interleave=0 "$HELPER" 0 0 1024
start idle taskset -c 0,1 "$HELPER" 0 4 64
start gpu env NUMAGUARD_GPUS=0000:4e:00.0 taskset -c 0 "$HELPER" 0 0 64
start cuda env CUDA_VISIBLE_DEVICES=0,1,2,3 LOCAL_RANK=1 LOCAL_WORLD_SIZE=4 "$HELPER" 0 0 64

# --- bound: numactl --physcpubind=0 --membind=0, 8 MiB touched ---
"$NG" check --pid "$PID_bound" --json >"$T/b.json"
is "$?" 0 "check --pid: exit 0"
is "$(j "$T/b.json" "d['pid']")" "$PID_bound" "json: pid"
is "$(j "$T/b.json" '(d["comm"],d["cpus"],d["cores"],d["pus"],d["cpu_numa_nodes"])')" \
   "('ng_threads', '0', 1, 1, [0])" "bound: cpus 0, 1 core, node 0"
is "$(j "$T/b.json" '(d["mem_policy"],d["mem_policy_nodes"],d["mem_policy_text"],d["mems_allowed"])')" \
   "('bind', [0], 'bind:0', '0')" "bound: heap policy bind:0"
is "$(j "$T/b.json" '[m["node"] for m in d["memory"]]')" "[0]" "bound: pages on node 0 only"
is "$(j "$T/b.json" 'd["memory"][0]["bytes"] >= 8<<20 and d["cpu_local_bytes"]==d["mem_bytes"]')" \
   "True" "bound: >= 8 MiB, all of it on the CPUs' node"
is "$(j "$T/b.json" '(d["threads"],d["runnable"],d["oversubscribed"],d["threads_exceed_cores"],d["warnings"],d["errors"])')" \
   "(1, 0, False, False, [], [])" "bound: 1 thread, no warning"
is "$(j "$T/b.json" '(d["gpus"],d["gpu_source"],d["gpu_local_bytes"])')" "([], 'none', 0)" "bound: no GPU"

"$NG" check --pid "$PID_bound" >"$T/b.txt"
is "$(sed -n 1p "$T/b.txt")" "pid $PID_bound (ng_threads)" "text: header"
me=$(id -u)
is "$(sed -n 2p "$T/b.txt")" "  user     $(id -un) (uid $me)" "text: owner line"
is "$(j "$T/b.json" '(d["uid"],d["user"])')" "($me, '$(id -un)')" "json: owner"
is "$(sed -n 3p "$T/b.txt")" "  cpus     0  (1 core, 1 PU; numa 0)" "text: cpus line"
is "$(sed -n 4p "$T/b.txt")" "  threads  1, 0 runnable" "text: threads line"
is "$(sed -n 5p "$T/b.txt")" "  memory   policy bind:0  (allowed nodes 0)" "text: memory line"
like "$(sed -n 6p "$T/b.txt")" '^  pages    [0-9.]+ MiB: node 0 100\.0%$' "text: pages line"
is "$(sed -n 7p "$T/b.txt")" "  local    100.0% on the CPUs' node(s)" "text: local line"

"$NG" check --pid "$PID_inter" --json >"$T/i.json"
is "$(j "$T/i.json" '(d["cpus"],d["mem_policy"],d["mem_policy_text"])')" \
   "('1', 'interleave', 'interleave:0')" "interleave: policy read from numa_maps"

# --- threads (the spinning helper runs only for its own checks) ---
start over taskset -c 0 "$HELPER" 3 0 64
"$NG" check --pid "$PID_over" --json >"$T/o.json"
is "$(j "$T/o.json" '(d["cpus"],d["cores"],d["threads"],d["runnable"],d["oversubscribed"])')" \
   "('0', 1, 4, 3, True)" "3 spinning threads on 1 CPU: oversubscribed"
is "$(j "$T/o.json" 'd["warnings"]')" "['oversubscribed: 3 runnable threads on 1 core(s)']" \
   "oversubscribed: warning"
kill "$PID_over"
wait "$PID_over" 2>/dev/null
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_over" | tr '\n' ' ')
"$NG" check --pid "$PID_idle" --json >"$T/p.json"
is "$(j "$T/p.json" '(d["cores"],d["threads"],d["runnable"],d["oversubscribed"],d["threads_exceed_cores"])')" \
   "(2, 5, 0, False, True)" "4 idle pool threads on 2 cores: not oversubscribed, threads exceed cores"
like "$(j "$T/p.json" 'd["warnings"][0]')" '^5 threads for 2 core\(s\), 0 runnable now: idle pool threads\?' \
   "idle pool: the softer warning"

# --- GPUs (topology of a 4xH100 SNC4 node; this machine's memory is node 0) ---
"$NG" check --topology "$XE" --pid "$PID_gpu" --json >"$T/g.json"
is "$(j "$T/g.json" '(d["gpus"],d["gpu_source"],d["gpu_numa_nodes"],d["gpu_local_bytes"])')" \
   "(['0000:4e:00.0'], 'NUMAGUARD_GPUS', [3], 0)" "NUMAGUARD_GPUS: GPU on node 3, nothing local"
is "$(j "$T/g.json" 'd["warnings"]')" \
   "[\"most memory is not on the GPU's NUMA node(s)\", \"no CPU of the process is on the GPU's NUMA node(s)\"]" \
   "GPU far from memory and CPUs: two warnings"
"$NG" check --topology "$XE" --pid "$PID_cuda" --json >"$T/c.json"
is "$(j "$T/c.json" '(d["gpus"],d["gpu_source"],d["gpu_numa_nodes"])')" \
   "(['0000:5f:00.0'], 'CUDA_VISIBLE_DEVICES', [1])" "CUDA_VISIBLE_DEVICES=0,1,2,3 with LOCAL_RANK=1 of 4: GPU 1"

# --- across processes: 4 busy processes x 2 threads on CPUs 0-1 ---
for n in 1 2 3 4; do start "busy$n" taskset -c 0,1 "$HELPER" 2 0 64; done
BUSY="$PID_busy1,$PID_busy2,$PID_busy3,$PID_busy4"
"$NG" check --pid "$BUSY" --json >"$T/x.json"
"$NG" check --pid "$BUSY" >"$T/x.txt"
"$NG" check --all-mine --json >"$T/xa.json"
stop busy1 busy2 busy3 busy4
echo "# check --pid 4 busy processes (text, summary):"
sed -n '/^summary/,$p' "$T/x.txt" | sed 's/^/#   /'
is "$(s "$T/x.json" '[(p["runnable"],p["cores"],p["oversubscribed"]) for p in ps]')" \
   "[(2, 2, False), (2, 2, False), (2, 2, False), (2, 2, False)]" \
   "4 busy processes: each alone 2 runnable threads on 2 cores, not oversubscribed"
is "$(s "$T/x.json" '"oversubscribed: 8 runnable threads of 4 process(es) on 2 core(s) (cpus 0-1)" in s["warnings"]')" \
   "True" "json summary: 8 runnable threads of 4 processes on 2 cores"
is "$(s "$T/x.json" 'sum(c["runnable"] for c in s["cpus"] if c["cpu"] in (0,1))')" "8" \
   "json summary: 8 runnable threads counted on CPUs 0 and 1"
is "$(grep -c '^  warning: oversubscribed: 8 runnable threads of 4 process(es) on 2 core(s) (cpus 0-1)$' "$T/x.txt")" \
   "1" "text summary: the oversubscription line"
like "$(grep '^summary' "$T/x.txt")" '^summary  4 processes$' "text summary: header"
is "$(s "$T/x.json" 'sorted(set(t["cpus"] for p in ps for t in p["thread_affinity"]))')" "['0-1']" \
   "json: per-thread affinity of every thread (0-1)"
# --all-mine: the same 8 threads among everything else the caller runs.
is "$(s "$T/xa.json" 'any(w.startswith("oversubscribed: ") and int(w.split()[1]) >= 8 and w.endswith("core(s) (cpus 0-1)") for w in s["warnings"])')" \
   "True" "--all-mine: judged together, at least 8 runnable threads on CPUs 0-1 reported"

# --- two processes piled on CPU 0 (as a launcher binding both to core 0) ---
start pile1 taskset -c 0 "$HELPER" 1 0 64
start pile2 taskset -c 0 "$HELPER" 1 0 64
"$NG" check --pid "$PID_pile1,$PID_pile2" --json >"$T/y.json"
"$NG" check --pid "$PID_pile1,$PID_pile2" >"$T/y.txt"
stop pile1 pile2
echo "# check --pid 2 processes on CPU 0 (text, summary):"
sed -n '/^summary/,$p' "$T/y.txt" | sed 's/^/#   /'
is "$(s "$T/y.json" 's["warnings"]')" \
   "['oversubscribed: 2 runnable threads of 2 process(es) on 1 core(s) (cpus 0)', '2 bound processes share 1 core(s) (cpus 0; pids $PID_pile1,$PID_pile2): they take turns on them']" \
   "piled on CPU 0: oversubscribed and sharing one core"
is "$(s "$T/y.json" '[(o["pids"],o["cpus"],o["cores"]) for o in s["overlaps"]]')" \
   "[([$PID_pile1, $PID_pile2], '0', 1)]" "piled on CPU 0: one overlap, both pids on CPU 0"
is "$(grep -c "^  overlap  pids $PID_pile1,$PID_pile2 on cpus 0 (1 core)\$" "$T/y.txt")" "1" \
   "text: the overlap line"

# --- started with --omp-guard: no --omp-guard advice ---
start guarded "$NG" exec --omp-guard -- "$HELPER" 0 4 64
"$NG" check --pid "$PID_guarded" --json >"$T/z.json"
"$NG" check --pid "$PID_guarded" >"$T/z.txt"
echo "# check --pid (started with numaguard exec --omp-guard):"
sed 's/^/#   /' "$T/z.txt"
is "$(j "$T/z.json" '(d["threads"],d["numaguard_started"],d["thread_caps"].startswith("OMP_NUM_THREADS="))')" \
   "(5, True, True)" "guarded: 5 threads, NUMAGUARD_* and thread caps seen in environ"
is "$(j "$T/z.json" '[w for w in d["warnings"] if "--omp-guard" in w]')" "[]" \
   "guarded: no --omp-guard advice"
like "$(j "$T/z.json" 'd["warnings"][0]')" '^5 threads for [0-9]+ core\(s\), 0 runnable now: idle pool threads\? \(thread caps already set: OMP_NUM_THREADS=[0-9]+\)$' \
   "guarded: the idle pool note names the caps instead"
stop guarded

# --- --job: a job's processes from the kernel or Slurm, never from their
# own SLURM_JOB_ID (issue 19). Outside Slurm no cgroup names job 4242001:
# check says so and asks Slurm's record, here a stand-in scontrol on PATH
# that names job1 only (the real one: tests/e2e/t-check-job.sh). job2
# exports the same SLURM_JOB_ID and is not listed.
start job1 env SLURM_JOB_ID=4242001 "$HELPER" 0 0 64
start job2 env SLURM_JOB_ID=4242001 "$HELPER" 0 1 64
mkdir -p "$T/bin"
{
    echo '#!/bin/sh'
    echo '[ "$1 $2" = "listpids 4242001" ] || { echo "Job $2 does not exist on this node"; exit 1; }'
    echo 'echo "PID      JOBID    STEPID   LOCALID GLOBALID"'
    echo "echo '$PID_job1    4242001  0        0       0'"
} >"$T/bin/scontrol"
chmod 755 "$T/bin/scontrol"
SPATH=$T/bin:$PATH
PATH=$SPATH "$NG" check --local --job 4242001 --json >"$T/j1.json" 2>"$T/j1.err"
is "$?:$(s "$T/j1.json" '[p["pid"] for p in ps]')" "0:[$PID_job1]" \
   "--job ID: the process Slurm's record names, not the other exporting SLURM_JOB_ID=4242001"
is "$(cat "$T/j1.err")" "numaguard: check: no cgroup on this node names job 4242001 (proctrack without cgroups?): its processes from Slurm's record (scontrol listpids 4242001)" \
   "--job: says no cgroup names the job and where the list comes from"
is "$(s "$T/j1.json" '(D["job"], D["membership"], [p["job_id"] for p in ps])')" \
   "('4242001', 'scontrol listpids', [''])" \
   "--job json: the job, the membership's source; no job_id from the environment"
PATH=$SPATH SLURM_JOB_ID=4242001 "$NG" check --local --job --json >"$T/j2.json" 2>/dev/null
is "$(s "$T/j2.json" 'len(ps)'):$(PATH=$SPATH "$NG" check --local --job=4242001 --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["processes"]))')" \
   "1:1" "--job without ID (SLURM_JOB_ID) and --job=ID: the same one"
PATH=/nonexistent "$NG" check --local --job 4242001 >/dev/null 2>"$T/e"
is "$?:$(tail -n 1 "$T/e")" "1:numaguard: check: Slurm's record is unavailable (scontrol listpids 4242001: cannot run scontrol: No such file or directory): cannot tell job 4242001's processes" \
   "--job without cgroups and without scontrol: exit 1, nothing guessed"
stop job1 job2
PATH=$SPATH "$NG" check --local --job 4242999 >/dev/null 2>"$T/e"
is "$?:$(tail -n 1 "$T/e")" "1:numaguard: check: Slurm's record is unavailable (scontrol listpids 4242999: Job 4242999 does not exist on this node): cannot tell job 4242999's processes" \
   "--job of no process here: exit 1"
# A scontrol that never answers (slurmd down): check is bounded (10 s),
# kills it with its process group and says so; nothing is guessed.
# The hung tool is a copy of sleep under a path of this run alone: check
# runs tools in a PID namespace of their own (as root), where $$ is not
# the host's pid, so the test finds it by that path.
mkdir -p "$T/hang"
cp "$(command -v sleep)" "$T/hang/ng-hung-sleep"
printf '#!/bin/sh\n: >"%s/hang/started"\nexec "%s/hang/ng-hung-sleep" 300\n' "$T" "$T" >"$T/hang/scontrol"
chmod 755 "$T/hang/scontrol"
PATH=$T/hang:$PATH "$NG" check --local --job 4242001 >/dev/null 2>"$T/e"
is "$?:$(tail -n 1 "$T/e")" "1:numaguard: check: Slurm's record is unavailable (scontrol listpids 4242001: scontrol did not answer within 10 s (killed with its process group)): cannot tell job 4242001's processes" \
   "--job with a scontrol that hangs: exit 1 after the 10 s bound"
# Found by its executable in /proc (a minimal Debian has no pgrep). check
# reaps it before it returns; the poll (up to 5 s) only spares a loaded
# machine a false alarm: left behind, it would live for 300 s.
hung_left() {
    for d in /proc/[0-9]*; do
        [ "$(readlink "$d/exe" 2>/dev/null)" = "$T/hang/ng-hung-sleep" ] && echo "${d#/proc/}"
    done
}
i=0
while [ -n "$(hung_left)" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
if [ -e "$T/hang/started" ] && [ -z "$(hung_left)" ]; then r=0; else r=1; fi
ok $r "--job: the hung scontrol was killed, not left behind"
"$NG" check --job 12x >/dev/null 2>"$T/e"
is "$?" 2 "--job 12x: exit 2"
env -u SLURM_JOB_ID "$NG" check --job >/dev/null 2>"$T/e"
is "$?:$(cat "$T/e")" "2:numaguard: check: --job without an ID needs SLURM_JOB_ID (give --job ID)" \
   "--job without ID outside a job: exit 2"

# --- Open MPI-style environment: the launcher rules pick the rank's GPU ---
start ompi env CUDA_VISIBLE_DEVICES=0,1,2,3 OMPI_COMM_WORLD_LOCAL_RANK=2 OMPI_COMM_WORLD_LOCAL_SIZE=4 \
    OMPI_COMM_WORLD_RANK=2 "$HELPER" 0 0 64
"$NG" check --topology "$XE" --pid "$PID_ompi" --json >"$T/m.json"
"$NG" check --topology "$XE" --pid "$PID_ompi" >"$T/m.txt"
echo "# check --topology xe8640 --pid (Open MPI local rank 2 of 4, CUDA_VISIBLE_DEVICES=0,1,2,3):"
sed 's/^/#   /' "$T/m.txt"
is "$(grep '^  gpus' "$T/m.txt")" \
   "  gpus     0000:cb:00.0 (CUDA_VISIBLE_DEVICES, one entry per rank: local rank 2 of 4 (OMPI_COMM_WORLD_LOCAL_RANK); numa 7) 0.0% of memory there" \
   "text: the rank's GPU and the rule that chose it"
is "$(grep '^  rank' "$T/m.txt")" "  rank     local 2 of 4 (OMPI_COMM_WORLD_LOCAL_RANK), task 2 of the job" "text: the launcher rank (local, and global: OMPI_COMM_WORLD_RANK)"
is "$(j "$T/m.json" '(d["gpus"],d["gpu_source"],d["launcher"])')" \
   "(['0000:cb:00.0'], 'CUDA_VISIBLE_DEVICES', {'local_rank': 2, 'local_size': 4, 'source': 'OMPI_COMM_WORLD_LOCAL_RANK'})" \
   "Open MPI local rank 2 of 4 with CUDA_VISIBLE_DEVICES=0,1,2,3: GPU 2 only"
stop ompi

# --- real launchers: Open MPI and MPICH ranks ---
# ranks NAME: the ng_threads processes below launcher NAME, comma list.
# (/proc read directly: a minimal Debian has no procps.)
ranks() {
    eval "lp=\$PID_$1"
    for d in /proc/[0-9]*; do
        [ "$(cat "$d/comm" 2>/dev/null)" = ng_threads ] || continue
        q=${d#/proc/}
        while [ -n "$q" ] && [ "$q" -gt 1 ] && [ "$q" != "$lp" ]; do
            q=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$q/status" 2>/dev/null)
        done
        [ "$q" = "$lp" ] && echo "${d#/proc/}"
    done | sort -n | paste -sd, -
}
# launched NAME: wait until both ranks of launcher NAME said ready (up to
# 60 s: a launcher starts slowly on a loaded machine; the wait ends as soon
# as they are ready, or the launcher is gone: 1, as when it refused).
launched() {
    eval "lp=\$PID_$1"
    i=0
    while [ "$(grep -c ready "$T/$1.out")" -lt 2 ] && [ $i -lt 1200 ]; do
        case $(main_state "$lp") in ''|Z) return 1 ;; esac
        sleep 0.05; i=$((i + 1))
    done
    [ "$(grep -c ready "$T/$1.out")" -ge 2 ]
}
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# By their own names: plain mpirun is whichever MPI Debian's alternatives
# picked (MPICH's on a fresh root where both are installed).
OMPIRUN=$(command -v mpirun.openmpi)
if [ -n "$OMPIRUN" ]; then
    # Open MPI binds to core for np <= 2; every rank gets every GPU to split.
    start ompi2 "$OMPIRUN" -np 2 -x CUDA_VISIBLE_DEVICES=0,1 "$HELPER" 0 0 64
    launched ompi2
    "$NG" check --topology "$XE" --pid "$(ranks ompi2)" --json >"$T/o2.json"
    "$NG" check --topology "$XE" --pid "$(ranks ompi2)" >"$T/o2.txt"
    kill $(ranks ompi2 | tr , ' ') 2>/dev/null
    stop ompi2
    echo "# check --topology xe8640 on mpirun -np 2 -x CUDA_VISIBLE_DEVICES=0,1 ranks:"
    grep -E '^pid|^  (cpus|gpus|rank)' "$T/o2.txt" | sed 's/^/#   /'
    is "$(s "$T/o2.json" 'sorted((p["cpus"],p["gpus"],p["launcher"]["local_rank"],p["launcher"]["source"]) for p in ps)')" \
       "[('0', ['0000:4e:00.0'], 0, 'OMPI_COMM_WORLD_LOCAL_RANK'), ('1', ['0000:5f:00.0'], 1, 'OMPI_COMM_WORLD_LOCAL_RANK')]" \
       "real mpirun -np 2: rank r on core r with GPU r (Open MPI local rank)"
    # Both ranks on CPU 0. Open MPI 4 binds them there itself (--cpu-set 0
    # --bind-to core:overload-allowed); Open MPI 5 refuses to bind two ranks
    # to one core ("PRTE ERROR: Out of resource"): there mpirun starts under
    # taskset -c 0 with no binding of its own, and the ranks inherit CPU 0.
    how="mpirun -np 2 --cpu-set 0 --bind-to core:overload-allowed"
    start ompip "$OMPIRUN" -np 2 --oversubscribe --cpu-set 0 --bind-to core:overload-allowed "$HELPER" 1 0 64
    if ! launched ompip; then
        echo "# $how refused: $(grep -m1 -i error "$T/ompip.out")"
        stop ompip
        how="taskset -c 0 mpirun -np 2 --bind-to none"
        start ompip taskset -c 0 "$OMPIRUN" -np 2 --oversubscribe --bind-to none "$HELPER" 1 0 64
        launched ompip
    fi
    RP=$(ranks ompip)
    "$NG" check --pid "$RP" --json >"$T/op.json"
    "$NG" check --pid "$RP" >"$T/op.txt"
    kill $(echo "$RP" | tr , ' ') 2>/dev/null   # spinning ranks: not left to mpirun
    stop ompip
    echo "# check on $how ranks (summary):"
    sed -n '/^summary/,$p' "$T/op.txt" | sed 's/^/#   /'
    is "$(s "$T/op.json" 's["warnings"]')" \
       "['oversubscribed: 2 runnable threads of 2 process(es) on 1 core(s) (cpus 0)', '2 bound processes share 1 core(s) (cpus 0; pids $RP): they take turns on them']" \
       "real mpirun, 2 ranks bound to CPU 0: reported piled and oversubscribed"
else
    skip 2 "needs Open MPI's mpirun.openmpi (openmpi-bin)"
fi
if command -v mpiexec.mpich >/dev/null; then
    start mpich mpiexec.mpich -n 2 env CUDA_VISIBLE_DEVICES=0,1 "$HELPER" 0 0 64
    launched mpich
    "$NG" check --topology "$XE" --pid "$(ranks mpich)" --json >"$T/mp.json"
    kill $(ranks mpich | tr , ' ') 2>/dev/null
    stop mpich
    is "$(s "$T/mp.json" 'sorted((p["gpus"],p["launcher"]["local_rank"],p["launcher"]["source"]) for p in ps)')" \
       "[(['0000:4e:00.0'], 0, 'MPI_LOCALRANKID'), (['0000:5f:00.0'], 1, 'MPI_LOCALRANKID')]" \
       "real mpiexec (MPICH) -n 2: rank r gets GPU r (MPI_LOCALRANKID)"
else
    skip 1 "needs MPICH's mpiexec.mpich"
fi

# --- terminal escapes from /proc (issue 13): comm and environ are the user's ---
evil=$(printf 'n\033]0;pwned\007\033[2J')
cp "$HELPER" "$T/$evil"
start evil env "CUDA_VISIBLE_DEVICES=$(printf 'GPU-\033[2J\033[H\nroot# fake')" \
    "OMP_NUM_THREADS=$(printf '1\033[31m')" "NUMEXPR_NUM_THREADS=$(printf '\377\302\2332J')" \
    "$T/$evil" 0 0 64
"$NG" check --topology "$XE" --pid "$PID_evil" --threads >"$T/v.txt" 2>&1
echo "# check --pid (comm and environ with escape sequences), text:"
sed 's/^/#   /' "$T/v.txt"
is "$(tr -d '\n' <"$T/v.txt" | LC_ALL=C tr -d '\040-\176' | od -An -c | tr -d ' \n')" "" \
   "text output: only printable ASCII and newlines"
is "$(grep -c '^root# fake' "$T/v.txt")" "0" "no injected line"
is "$(sed -n 1p "$T/v.txt")" "pid $PID_evil (n\\x1b]0;pwned\\x07\\x1b[2J)" "comm shown escaped"
is "$(grep -c "malformed UUID 'GPU-\\\\x1b\[2J\\\\x1b\[H\\\\x0aroot# fake'" "$T/v.txt")" "1" \
   "the bad CUDA_VISIBLE_DEVICES shown escaped in the error"
is "$(grep -c '^  caps     OMP_NUM_THREADS=1\\x1b\[31m NUMEXPR_NUM_THREADS=\\xff\\xc2\\x9b2J$' "$T/v.txt")" "1" \
   "thread caps shown escaped (C0, C1 and non-UTF-8 bytes)"
"$NG" check --pid "$PID_evil" --json >"$T/v.json"
is "$?:$(j "$T/v.json" 'ascii((d["comm"], d["thread_caps"]))')" \
   "0:('n\x1b]0;pwned\x07\x1b[2J', 'OMP_NUM_THREADS=1\x1b[31m NUMEXPR_NUM_THREADS=\ufffd\x9b2J')" \
   "json: valid UTF-8, control characters as \\u escapes, the byte 0xff as U+FFFD"
is "$(LC_ALL=C tr -d '\040-\176\n' <"$T/v.json" | od -An -c | tr -d ' \n')" "" \
   "json output: only printable ASCII"
stop evil

# --- another user's process: status readable, numa_maps not (no privilege) ---
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    cp "$NG" "$T/numaguard" && chmod 755 "$T" "$T/numaguard"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$T/numaguard" check --pid "$PID_bound" --json >"$T/n.json"
    is "$(j "$T/n.json" '(d["cpus"],d["threads"],d["memory"],d["errors"])')" \
       "('0', 1, [], ['numa_maps: Permission denied'])" "as nobody: CPUs and threads, numa_maps refused"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$T/numaguard" check --all-mine --json >"$T/m.json"
    is "$(python3 -c 'import json,sys; print(sys.argv[2] in [str(p["pid"]) for p in json.load(open(sys.argv[1]))["processes"]])' "$T/m.json" "$PID_bound")" \
       "False" "--all-mine as nobody: root's processes not listed"
else
    skip 2 "needs root and setpriv"
fi
"$NG" check --all-mine --json >"$T/a.json"
is "$(python3 -c 'import json,sys; l=[p["pid"] for p in json.load(open(sys.argv[1]))["processes"]]; print([int(x) for x in sys.argv[2:] if int(x) not in l])' "$T/a.json" $PIDS)" \
   "[]" "--all-mine lists the caller's processes"

# --- bad input ---
"$NG" check >/dev/null 2>"$T/e"
is "$?:$(cat "$T/e")" "2:numaguard: check: give --pid P (one or more), --all-mine or --job [ID]" "no process named: exit 2"
"$NG" check --pid 12x 2>"$T/e"
is "$?:$(cat "$T/e")" "2:numaguard: check: invalid --pid '12x': expected a process id" "bad pid: exit 2"
gone=$(sh -c 'echo $$')
"$NG" check --pid "$gone" >/dev/null 2>"$T/e"
is "$?:$(cat "$T/e")" "1:numaguard: check: no process $gone" "exited process: exit 1"
"$NG" check --pid "$PID_bound" --all-mine 2>/dev/null
is "$?" 2 "--pid with --all-mine: exit 2"

# --- the whole job's report from saved answers (--replay: no Slurm) ---
# What each node answered is checked before it is used: a cut-short
# answer is that node's failure, a picture with a script is left out.
R=$T/replay
mkdir -p "$R"
svg='<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"40\" height=\"20\" viewBox=\"0 0 40 20\"><defs><pattern id=\"piled\" width=\"5\" height=\"5\"/></defs><rect class=\"pu\" width=\"4\" height=\"4\" fill=\"url(#piled)\"/><text x=\"1\" y=\"9\">slurm_script &amp;</text></svg>\n'
proc() { printf '{"pid":%s,"comm":"%s","cpus":"%s","global_rank":%s,"mem_policy_text":"bind:0","gpus":[],"nic_vars":"","threads":2,"runnable":1,"oversubscribed":false}' "$@"; }
printf '{"job":"7","processes":[%s,%s],"summary":{},"svg":"%s"}' "$(proc 11 a 0 1)" "$(proc 10 b 1 0)" "$svg" >"$R/n1.json"
printf '{"job":"7","processes":[%s],"summary":{},"svg":"%s"}' "$(proc 20 c 0 2)" \
    "$(printf '%s' "$svg" | sed 's|<text|<script>x</script><text|')" >"$R/n2.json"
printf '{"job":"7","processes":[%s' "$(proc 30 d 0 3)" >"$R/n3.json"
"$NG" check --job 7 --replay "$R" --json >"$T/r.json" 2>"$T/r.err"
rc=$?
is "$rc:$(python3 -c 'import json,sys; D=json.load(open(sys.argv[1])); print([(n["name"], n["status"], [p["pid"] for p in n.get("report", {}).get("processes", [])]) for n in D["nodes"]])' "$T/r.json")" \
    "1:[('n1', 'ok', [11, 10]), ('n2', 'ok', [20]), ('n3', 'failed', [])]" \
    "--replay --json: each node's report embedded as it came; a cut-short one is that node's failure (exit 1)"
like "$(cat "$T/r.err")" '^numaguard: check: job 7: node n3: failed: its answer \([0-9]+ bytes\) is not a numaguard check report$' \
    "the node whose answer is not a report is named on stderr"
"$NG" check --job 7 --replay "$R" --svg - >"$T/r.svg" 2>/dev/null
is "$(python3 - "$T/r.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
out = []
for g in root.findall(S + "g"):
    chips = [int(r.get("data-task")) for r in g.iter(S + "rect") if r.get("class") == "task-chip"]
    notes = [t.text.split("; ")[-1] for t in g.iter(S + "text") if t.text and "; " in t.text]
    out.append((g.get("data-node-name"), g.get("data-picture"), chips, notes, any(e.tag == S + "script" for e in root.iter())))
print(out)
PY
)" "[('n1', 'no', [0, 1], ['no topology in its answer (an older numaguard there?)'], False), ('n2', 'no', [2], ['no topology in its answer (an older numaguard there?)'], False), ('n3', 'no', [], [], False)]" \
    "--replay --svg: tasks in rank order; a node's own picture (svg, old answers) never used, its band says what is missing; no script anywhere"
"$NG" check --job 7 --replay "$R" >/dev/null 2>"$T/e"
is "$?:$(cat "$T/e")" "2:numaguard: check: --replay DIR goes with --job ID and --json or --svg" "--replay without --json or --svg: exit 2"
"$NG" check --local --all-mine >/dev/null 2>"$T/e"
is "$?:$(cat "$T/e")" "2:numaguard: check: --local goes with --job" "--local without --job: exit 2"
"$NG" check --job 7 --timeout 0 >/dev/null 2>"$T/e"
is "$?:$(cat "$T/e")" "2:numaguard: check: invalid --timeout '0': expected a whole number from 1 to 3600" "--timeout 0: exit 2"
PATH=/nonexistent "$NG" check --job 7 >/dev/null 2>"$T/e"
is "$?:$(cat "$T/e")" "1:numaguard: check: cannot run scontrol: not on PATH (no Slurm client here?) (--local: this node alone, without asking Slurm)" \
    "--job without the Slurm client: exit 1, says so and names --local"

# --- issue 36: the governor promised (NUMAGUARD_OMP_GOVERNOR) but not mapped ---
start promised env NUMAGUARD_OMP_GOVERNOR=/usr/local/lib/numaguard/libnumaguard-omp.so "$HELPER" 0 0 64
"$NG" check --pid "$PID_promised" --json >"$T/pr.json"
is "$(j "$T/pr.json" '[w for w in d["warnings"] if w.startswith("governor promised but not loaded")] != []')" \
   "True" "NUMAGUARD_OMP_GOVERNOR set, the governor not in its maps: governor promised but not loaded"
"$NG" check --pid "$PID_promised" >"$T/pr.txt"
like "$(cat "$T/pr.txt")" "governor promised but not loaded: NUMAGUARD_OMP_GOVERNOR=/usr/local/lib/numaguard/libnumaguard-omp.so is not mapped" \
   "text: the warning names the path"
stop promised

done_testing
