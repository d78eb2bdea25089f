#!/bin/sh
# numaguard check --job on real Slurm jobs (private cluster, task/affinity,
# tests/slurm/cluster.sh): srun binds both ranks of a job to CPU 0
# (--cpu-bind=map_cpu:0,0, as a launcher that piles ranks does): check
# --job lists exactly the job's ranks and reports them piled and
# oversubscribed; ranks on CPUs 0 and 1: nothing to report. And issue 13's
# attack: a job of uid 65534 (nobody) whose name and CUDA_VISIBLE_DEVICES
# carry terminal escape sequences and a fake line, read by root with
# check --job: printed escaped, nothing reaches root's terminal. Then with
# task/cgroup (ConstrainCores): ranks found by their job_ID cgroup alone
# (SLURM_JOB_ID removed from their environment), allowed CPUs from their
# cpuset cgroup, and a batch job's shell, srun and ranks not reported piled.
# Membership (issue 19), as root, under both: a job process that renamed
# itself slurmstepd (prctl) is listed, Slurm's own slurmstepd is not, nor a
# second user's process that exports the job's SLURM_JOB_ID; every process
# shows its owner. Without cgroups (task/affinity, proctrack/linuxproc)
# check says so and lists Slurm's record (scontrol listpids).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
cd "$(dirname "$0")/../.." || exit 2
. tests/slurm/testlib.sh
HELPER=$NGT_BUILD/tests/ng_threads
[ "$(nproc --all)" -ge 2 ] || skip_all "needs 2 CPUs"
[ -x "$HELPER" ] && [ -x "$NGT_CLI" ] || skip_all "needs $HELPER and $NGT_CLI (make all tests)"
ngt_start_suite check-job
ngt_cluster

# run_job NAME CPU-BIND [PREFIX...]: 2 ranks, one spinning thread each, in
# the background (srun started through PREFIX, e.g. as another user);
# sets JOB (the job id) and SRUN (srun's pid) once both ranks are ready
# (up to 60 s: a loaded machine; the loop ends as soon as they are). The
# job is the running one: a previous job still completing is not it.
run_job() {
    local out=$NGT_OUT/$1 bind=$2 i=0
    shift 2
    ngc_wait_idle 10
    "$@" timeout -k 5 "$NGC_SRUN_TIMEOUT" srun -n 2 --cpu-bind="$bind" "${RUN_CMD[@]:-$HELPER}" 1 0 64 >"$out" 2>"$out.err" &
    SRUN=$!
    JOB=""
    while [ $i -lt 1200 ] && { [ -z "$JOB" ] || [ "$(grep -c ready "$out")" -lt 2 ]; }; do
        JOB=$(running_job)
        kill -0 "$SRUN" 2>/dev/null || break
        sleep 0.05
        i=$((i + 1))
    done
}
# running_job: the id of the job in state RUNNING (one at a time here).
running_job() { squeue -h -t R -o %i 2>/dev/null | head -1; }
end_job() {
    scancel "$JOB" 2>/dev/null
    wait "$SRUN" 2>/dev/null
}
# sj FILE EXPR: Python over the JSON (s = summary, ps = processes).
sj() { python3 -c 'import json,sys; D=json.load(open(sys.argv[1])); s=D["summary"]; ps=D["processes"]; print(eval(sys.argv[2]))' "$@"; }

# --- both ranks bound to CPU 0 ---
run_job piled map_cpu:0,0
ok $([ -n "$JOB" ] && [ "$(grep -c ready "$NGT_OUT/piled")" -eq 2 ]; echo $?) "job $JOB: 2 ranks running"
"$NGT_CLI" check --local --job "$JOB" --json >"$NGT_OUT/piled.json"
rc=$?
"$NGT_CLI" check --local --job "$JOB" >"$NGT_OUT/piled.txt"
# --local follows the owner-or-root rule of check --job (issue 38): root's
# job, asked by uid 65534, the same words as a job that does not exist.
if command -v setpriv >/dev/null 2>&1; then
    setpriv --reuid=65534 --regid=65534 --clear-groups "$NGT_CLI" check --local --job "$JOB" \
        >"$NGT_OUT/other.out" 2>"$NGT_OUT/other.err"
    is "$?:$(wc -c <"$NGT_OUT/other.out"):$(tail -1 "$NGT_OUT/other.err")" \
        "1:0:numaguard: check: no job $JOB of yours here (only its owner or root may check it)" \
        "--local by another user: exit 1, nothing on stdout, no job of theirs"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$NGT_CLI" check --local --job 999999 \
        >/dev/null 2>"$NGT_OUT/none.err"
    is "$?:$(tail -1 "$NGT_OUT/none.err")" \
        "1:numaguard: check: no job 999999 of yours here (only its owner or root may check it)" \
        "--local on a job that does not exist: the same words"
else
    skip 2 "needs setpriv (util-linux)"
fi
end_job
echo "# numaguard check --job $JOB (srun -n 2 --cpu-bind=map_cpu:0,0):"
sed 's/^/#   /' "$NGT_OUT/piled.txt"
P=$(sj "$NGT_OUT/piled.json" '",".join(str(p["pid"]) for p in ps)')
is "$rc:$(sj "$NGT_OUT/piled.json" '[(p["comm"],p["cpus"],p["job_id"],p["runnable"],p["user"],p["uid"]) for p in ps]')" \
    "0:[('ng_threads', '0', '', 1, 'root', 0), ('ng_threads', '0', '', 1, 'root', 0)]" \
    "check --job: the job's 2 ranks (not srun, not slurmstepd), each on CPU 0, 1 runnable, root's (no cgroup: no job_id)"
is "$(sj "$NGT_OUT/piled.json" '(D["job"], D["membership"])')" "('$JOB', 'scontrol listpids')" \
    "no cgroup names the job (task/affinity): Slurm's record"
is "$(sj "$NGT_OUT/piled.json" 's["warnings"]')" \
    "['oversubscribed: 2 runnable threads of 2 process(es) on 1 core(s) (cpus 0)', '2 bound processes share 1 core(s) (cpus 0; pids $P): they take turns on them']" \
    "ranks piled on CPU 0: oversubscribed and sharing one core"
is "$(sj "$NGT_OUT/piled.json" '[(c["cpu"],c["bound"]) for c in s["cpus"] if c["bound"]]')" "[(0, 2)]" \
    "per-CPU: 2 bound processes on CPU 0, none on CPU 1"

# --- one rank per CPU ---
run_job spread map_cpu:0,1
"$NGT_CLI" check --local --job "$JOB" --json >"$NGT_OUT/spread.json"
"$NGT_CLI" check --local --job "$JOB" >"$NGT_OUT/spread.txt"
end_job
echo "# numaguard check --job $JOB (srun -n 2 --cpu-bind=map_cpu:0,1):"
sed -n '/^summary/,$p' "$NGT_OUT/spread.txt" | sed 's/^/#   /'
is "$(sj "$NGT_OUT/spread.json" '(sorted(p["cpus"] for p in ps), s["overlaps"], s["warnings"])')" \
    "(['0', '1'], [], [])" "ranks on CPUs 0 and 1: no overlap, no warning"

# renamed_job MEMBERSHIP: issue 19's membership attacks as root. A job
# whose task renames itself slurmstepd (prctl; its executable stays
# python3), and a process of uid 65534 outside Slurm exporting the job's
# SLURM_JOB_ID: check --job lists the task only (not Slurm's slurmstepd,
# not the other user's process), with its owner.
renamed_job() {
    local out=$NGT_OUT/renamed.$1 i=0 fake
    ngc_wait_idle 10
    # (Slurm's proctrack/linuxproc does not kill a process named
    # slurmstepd at the step's end: the task is ended here, by its pid.)
    srun -n 1 python3 -c 'import ctypes, os, time
ctypes.CDLL(None).prctl(15, b"slurmstepd", 0, 0, 0)
print("ready", os.environ["SLURM_JOB_ID"], os.getpid(), flush=True)
time.sleep(30)' >"$out" 2>&1 &
    SRUN=$!
    while [ $i -lt 1200 ] && ! grep -q ready "$out"; do
        kill -0 "$SRUN" 2>/dev/null || break
        sleep 0.05
        i=$((i + 1))
    done
    JOB=$(sed -n 's/^ready \([0-9]*\) .*/\1/p' "$out")
    local task
    task=$(sed -n 's/^ready [0-9]* \([0-9]*\)$/\1/p' "$out")
    setpriv --reuid=65534 --regid=65534 --clear-groups env SLURM_JOB_ID="$JOB" sleep 60 &
    fake=$!
    # Until it runs as sleep (setpriv and env exec'd: uid 65534, the
    # job's SLURM_JOB_ID in its environment): the process check must leave out.
    i=0
    while [ $i -lt 200 ] && [ "$(cat /proc/$fake/comm 2>/dev/null)" != sleep ]; do
        sleep 0.05
        i=$((i + 1))
    done
    "$NGT_CLI" check --local --job "$JOB" --json >"$out.json" 2>"$out.err"
    "$NGT_CLI" check --local --job "$JOB" >"$out.txt" 2>&1
    local stepd
    stepd=$(for d in /proc/[0-9]*; do [ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ] &&
        [ "$(stat -c %u "$d")" = 0 ] && readlink "$d/exe" | grep -q '/slurmstepd' && echo "${d#/proc/}"; done | tr '\n' ' ')
    kill "$fake" "$task" 2>/dev/null
    wait "$fake" "$SRUN" 2>/dev/null
    echo "# numaguard check --job $JOB ($1: a task renamed slurmstepd; uid 65534's sleep exporting SLURM_JOB_ID=$JOB; slurmstepd pids $stepd):"
    sed 's/^/#   /' "$out.txt" | grep -E '^#   (pid|  user|  job|numaguard)'
    is "$(sj "$out.json" '[(p["comm"], p["user"], p["uid"]) for p in ps]')" "[('slurmstepd', 'root', 0)]" \
        "$1: the task named slurmstepd is listed (root's), Slurm's slurmstepd and the other user's process are not"
    is "$(sj "$out.json" 'D["membership"]')" "$1" "$1: membership from $1"
    is "$(sj "$out.json" '[p["pid"] for p in ps if str(p["pid"]) in sys.argv[3].split()]' "$stepd")" \
        "[]" "$1: none of slurmstepd's pids ($stepd) listed"
    is "$(sj "$out.json" '[p["pid"] for p in ps]')" "[$task]" "$1: the task's pid ($task)"
    is "$(grep -c '^  user     root (uid 0)$' "$out.txt"):$(grep -c '^pid ' "$out.txt")" "1:1" \
        "$1: text shows the owner"
}
if command -v setpriv >/dev/null 2>&1; then
    renamed_job "scontrol listpids"
else
    ok 0 "# SKIP needs setpriv (util-linux)"
fi

# --- issue 13: escape sequences through check, from a job of uid 65534 ---
if command -v setpriv >/dev/null 2>&1; then
    U=65534
    UDIR=$NGC_DIR/user
    mkdir -p "$UDIR" && chown "$U:$U" "$UDIR"
    evil=$(printf 'n\033]0;pwned\007\033[2J')
    cp "$HELPER" "$UDIR/$evil" && chmod 755 "$UDIR/$evil"
    RUN_CMD=(env "CUDA_VISIBLE_DEVICES=$(printf 'GPU-\033[2J\033[H\nroot# fake')" "$UDIR/$evil")
    run_job evil map_cpu:0,1 setpriv --reuid=$U --regid=$U --clear-groups
    RUN_CMD=()
    "$NGT_CLI" check --local --topology "$NGT_TOPO/xe8640-4xh100-spr8480-snc4.xml" --job "$JOB" \
        >"$NGT_OUT/evil.txt" 2>&1
    rc=$?
    "$NGT_CLI" check --local --job "$JOB" --json >"$NGT_OUT/evil.json"
    setpriv --reuid=$U --regid=$U --clear-groups "$NGT_CLI" check --local --job "$JOB" --json \
        >"$NGT_OUT/evil.owner.json" 2>/dev/null
    is "$?:$(sj "$NGT_OUT/evil.owner.json" 'len(ps)')" "0:2" "--local by the job's owner (uid $U): its 2 ranks"
    end_job
    echo "# root: numaguard check --job $JOB (job of uid $U, escape sequences in comm and environ):"
    sed 's/^/#   /' "$NGT_OUT/evil.txt"
    is "$rc:$(grep -c '^pid ' "$NGT_OUT/evil.txt")" "0:2" "root sees the user's 2 ranks"
    uname=$(getent passwd $U | cut -d: -f1)
    is "$(grep -c "^  user     $uname (uid $U)\$" "$NGT_OUT/evil.txt")" 2 "each shown as $uname's (uid $U)"
    is "$(tr -d '\n' <"$NGT_OUT/evil.txt" | LC_ALL=C tr -d '\040-\176' | od -An -c | tr -d ' \n')" "" \
        "text output: only printable ASCII and newlines"
    is "$(grep -c '^root# fake' "$NGT_OUT/evil.txt"):$(grep -c '^pid [0-9]* (n\\x1b\]0;pwned\\x07\\x1b\[2J)$' "$NGT_OUT/evil.txt")" \
        "0:2" "no injected line; the name shown escaped"
    is "$(grep -c "^  error: CUDA_VISIBLE_DEVICES: malformed UUID 'GPU-\\\\x1b\[2J\\\\x1b\[H\\\\x0aroot# fake'\$" "$NGT_OUT/evil.txt")" \
        "2" "the user's CUDA_VISIBLE_DEVICES shown escaped, on one line"
    is "$(sj "$NGT_OUT/evil.json" 'sorted(set(p["comm"] for p in ps))')" "['n\x1b]0;pwned\x07\x1b[2J']" \
        "json: the raw name, as a JSON escape"
    ngc_wait_idle 20
    is "$(ngc_node_states)" idle "node idle afterwards"
else
    ok 0 "# SKIP needs setpriv (util-linux)"
fi

# --- task/cgroup: the job from its cgroup, allowed CPUs from its cpuset ---
cgv=$(ngc_cgroup_version)
if [ -n "$cgv" ]; then
    NGC_TASK_PLUGIN=task/cgroup,task/affinity
    ngt_cluster
    RUN_CMD=(env -u SLURM_JOB_ID "$HELPER")
    run_job cg map_cpu:0,1
    RUN_CMD=()
    "$NGT_CLI" check --local --job "$JOB" --json >"$NGT_OUT/cg.json"
    end_job
    is "$(sj "$NGT_OUT/cg.json" '[(p["comm"],p["cpus"],p["job_id"],p["bound"]) for p in ps]')" \
        "[('ng_threads', '0', '$JOB', True), ('ng_threads', '1', '$JOB', True)]" \
        "cgroup $cgv: the job's ranks found by their job_$JOB cgroup (no SLURM_JOB_ID in their environment)"
    is "$(sj "$NGT_OUT/cg.json" 'D["membership"]')" cgroup "cgroup $cgv: membership from the cgroup"
    if command -v setpriv >/dev/null 2>&1; then
        renamed_job cgroup
    fi
    is "$(sj "$NGT_OUT/cg.json" 'sorted(set(p["allowed_cpus"] for p in ps))')" "['0-1']" \
        "cgroup $cgv: allowed CPUs = the step's cpuset"
    # One task on one core, unbound inside it: the cgroup cpuset is its
    # whole world (1 of this host's 2 CPUs), so it is not "bound".
    # (Slurm's cgroup v1 plugin can fail a step with EBUSY on cpuset.cpus
    # while the previous job's cgroup is being removed: try up to 3 times.)
    for try in 1 2 3; do
        ngc_wait_idle 10
        ngc_srun -n 1 -c 1 --cpu-bind=none env -u SLURM_JOB_ID "$HELPER" 0 0 64 >"$NGT_OUT/one" 2>&1 &
        SRUN=$!
        i=0
        while [ $i -lt 1200 ] && ! grep -q 'ready\|launch failed' "$NGT_OUT/one"; do
            kill -0 "$SRUN" 2>/dev/null || break
            sleep 0.05
            i=$((i + 1))
        done
        grep -q ready "$NGT_OUT/one" && break
        wait "$SRUN" 2>/dev/null
        sleep 1
    done
    JOB=$(running_job)
    "$NGT_CLI" check --local --job "$JOB" --json >"$NGT_OUT/one.json"
    end_job
    is "$(sj "$NGT_OUT/one.json" '[(p["cpus"] == p["allowed_cpus"], len(p["cpus"]) == 1, p["bound"]) for p in ps]')" \
        "[(True, True, False)]" "srun -n 1 -c 1: allowed CPUs = the 1-CPU step cpuset, the task is not bound"
    # A batch job: its shell and srun have the whole job cpuset; ranks bound.
    ngc_wait_idle 10
    JOB=$(sbatch --parsable -t 2 -n 2 -o "$NGT_OUT/batch.out" \
          --wrap "srun -n 2 --cpu-bind=map_cpu:0,1 $HELPER 0 0 64")
    i=0
    while [ $i -lt 1200 ] && [ "$(grep -c ready "$NGT_OUT/batch.out" 2>/dev/null)" != 2 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    "$NGT_CLI" check --local --job "$JOB" --json >"$NGT_OUT/batch.json"
    "$NGT_CLI" check --local --job "$JOB" >"$NGT_OUT/batch.txt"
    scancel "$JOB"
    echo "# numaguard check --job $JOB (sbatch -n 2 --wrap 'srun -n 2 ...', task/cgroup):"
    grep -E '^pid|^  (cpus|job)|^summary|^  (overlap|warning)' "$NGT_OUT/batch.txt" | sed 's/^/#   /'
    is "$(sj "$NGT_OUT/batch.json" '(sorted(set((p["comm"],p["bound"]) for p in ps)), [p["comm"] for p in ps].count("ng_threads"))')" \
        "([('ng_threads', True), ('slurm_script', False), ('srun', False)], 2)" \
        "batch job: the script's shell and srun (whole job cpuset, not bound) and the 2 bound ranks"
    is "$(sj "$NGT_OUT/batch.json" '(s["overlaps"], s["warnings"])')" "([], [])" \
        "batch job: shell, srun and ranks not reported piled"
    ngc_wait_idle 20
else
    ok 0 "# SKIP no cpuset and devices cgroup on this host"
fi
ngt_done
