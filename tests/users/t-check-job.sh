#!/bin/sh
# numaguard check --job on real Slurm jobs (private cluster, task/affinity,
# tests/slurm/cluster.sh): srun binds both ranks of a job to CPU 0
# (--cpu-bind=map_cpu:0,0, as a launcher that piles ranks does): check
# --job lists exactly the job's ranks and reports them piled and
# oversubscribed; ranks on CPUs 0 and 1: nothing to report.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
cd "$(dirname "$0")/../.." || exit 2
. tests/slurm/testlib.sh
[ -n "${NG_USERS_PORT_BASE:-}" ] && export NG_SLURM_PORT_BASE=$NG_USERS_PORT_BASE
HELPER=$NGT_BUILD/tests/ng_threads
[ "$(nproc --all)" -ge 2 ] || ngt_skip_all "needs 2 CPUs"
[ -x "$HELPER" ] && [ -x "$NGT_CLI" ] || ngt_skip_all "needs $HELPER and $NGT_CLI (make all tests)"
ngt_start_suite check-job
ngt_cluster

# run_job NAME CPU-BIND: 2 ranks, one spinning thread each, in the
# background; sets JOB (the job id) and SRUN (srun's pid) once both ranks
# are ready.
run_job() {
    local out=$NGT_OUT/$1 i=0
    ngc_wait_idle 10
    srun -n 2 --cpu-bind="$2" "$HELPER" 1 0 64 >"$out" 2>"$out.err" &
    SRUN=$!
    JOB=""
    while [ $i -lt 200 ] && { [ -z "$JOB" ] || [ "$(grep -c ready "$out")" -lt 2 ]; }; do
        JOB=$(squeue -h -o %i 2>/dev/null | head -1)
        sleep 0.05
        i=$((i + 1))
    done
}
end_job() {
    scancel "$JOB" 2>/dev/null
    wait "$SRUN" 2>/dev/null
}
# sj FILE EXPR: Python over the JSON (s = summary, ps = processes).
sj() { python3 -c 'import json,sys; D=json.load(open(sys.argv[1])); s=D["summary"]; ps=D["processes"]; print(eval(sys.argv[2]))' "$1" "$2"; }

# --- both ranks bound to CPU 0 ---
run_job piled map_cpu:0,0
ngt_ok $([ -n "$JOB" ] && [ "$(grep -c ready "$NGT_OUT/piled")" -eq 2 ]; echo $?) "job $JOB: 2 ranks running"
"$NGT_CLI" check --job "$JOB" --json >"$NGT_OUT/piled.json"
rc=$?
"$NGT_CLI" check --job "$JOB" >"$NGT_OUT/piled.txt"
end_job
echo "# numaguard check --job $JOB (srun -n 2 --cpu-bind=map_cpu:0,0):"
sed 's/^/#   /' "$NGT_OUT/piled.txt"
P=$(sj "$NGT_OUT/piled.json" '",".join(str(p["pid"]) for p in ps)')
ngt_is "$rc:$(sj "$NGT_OUT/piled.json" '[(p["comm"],p["cpus"],p["job_id"],p["runnable"]) for p in ps]')" \
    "0:[('ng_threads', '0', '$JOB', 1), ('ng_threads', '0', '$JOB', 1)]" \
    "check --job: the job's 2 ranks (not srun, not slurmstepd), each on CPU 0, 1 runnable"
ngt_is "$(sj "$NGT_OUT/piled.json" 's["warnings"]')" \
    "['oversubscribed: 2 runnable threads of 2 process(es) on 1 core(s) (cpus 0)', '2 bound processes share 1 core(s) (cpus 0; pids $P): they take turns on them']" \
    "ranks piled on CPU 0: oversubscribed and sharing one core"
ngt_is "$(sj "$NGT_OUT/piled.json" '[(c["cpu"],c["bound"]) for c in s["cpus"] if c["bound"]]')" "[(0, 2)]" \
    "per-CPU: 2 bound processes on CPU 0, none on CPU 1"

# --- one rank per CPU ---
run_job spread map_cpu:0,1
"$NGT_CLI" check --job "$JOB" --json >"$NGT_OUT/spread.json"
"$NGT_CLI" check --job "$JOB" >"$NGT_OUT/spread.txt"
end_job
echo "# numaguard check --job $JOB (srun -n 2 --cpu-bind=map_cpu:0,1):"
sed -n '/^summary/,$p' "$NGT_OUT/spread.txt" | sed 's/^/#   /'
ngt_is "$(sj "$NGT_OUT/spread.json" '(sorted(p["cpus"] for p in ps), s["overlaps"], s["warnings"])')" \
    "(['0', '1'], [], [])" "ranks on CPUs 0 and 1: no overlap, no warning"
ngt_done
