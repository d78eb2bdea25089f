#!/bin/sh
# numaguard's options through real srun/sbatch: values from the command
# line, the environment and #SBATCH lines; invalid values rejected before a
# job exists; plugstack.conf defaults and allowed_policies; --omp-guard.
# Node: inflated g4dn.metal (task/none, 8 fake T4s), plan-only.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-options plugin

topo=$NGT_TOPO/g4dn-metal-8xt4.xml
TV=(OMP_NUM_THREADS MKL_NUM_THREADS OPENBLAS_NUM_THREADS BLIS_NUM_THREADS NUMEXPR_NUM_THREADS
    NUMBA_NUM_THREADS VECLIB_MAXIMUM_THREADS OMP_PLACES OMP_PROC_BIND)
VARS=("NUMAGUARD_*" "${TV[@]}")
ENVOPT=SLURM_SPANK__SLURM_SPANK_OPTION_numaguard_numa_policy
ENVOMP=SLURM_SPANK__SLURM_SPANK_OPTION_numaguard_omp_guard
NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$topo NGC_GPUS=auto
NGC_PLUGSTACK=$(ngt_plugstack "topology=$topo")
ngt_cluster

# probe LABEL SRUN-ARGS... : run 2 tasks with 1 GPU each, owning the whole
# node (-c 48 of 96 CPUs; the CLI comparisons pass --cpus-per-task 48).
probe() {
    local label=$1
    shift
    F=$NGT_OUT/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
    ngt_srun "$F" --exclusive -n 2 -c 48 --gpus-per-task=1 "$@" -- "${VARS[@]}"
    local rc=$?
    ok $rc "$label: srun exits 0"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$F.err" | head -5
}

# --- no option, no default: the plugin leaves tasks alone ---------------
probe "no option"
ngt_check expect "$F" "no option" "all:NUMAGUARD_CPUS=<unset>" "all:OMP_NUM_THREADS=<unset>"

# --- from the environment; the command line wins ------------------------
export $ENVOPT=interleave
probe "env interleave"
ngt_check expect "$F" "env interleave" all:NUMAGUARD_MEM_MODE=interleave
ngt_check plan "$F" "env interleave" "$NGT_CLI" "$topo" -- --task-gpus "0;1" --cpus-per-task 48 --numa-policy interleave
probe "env interleave + --numa-policy=prefer" --numa-policy=prefer
ngt_check expect "$F" "command line beats env" all:NUMAGUARD_MEM_MODE=preferred_many
unset $ENVOPT

# --- invalid values: exit status, one clear line, no job ----------------
# Job ids are consecutive from 1: a rejected srun must not consume one.
bad_value() {
    local label=$1 pattern=$2 before after err lines
    shift 2
    ngc_wait_idle 10
    before=$(ngc_next_job_id)
    lines=$(wc -l <"$NGC_DIR/log/slurmctld.log")
    env ${BAD_ENV:-} timeout -k 5 "$NGC_SRUN_TIMEOUT" srun -n 1 "$@" true >"$NGT_OUT/bad.out" 2>"$NGT_OUT/bad.err"
    local rc=$?
    err=$(cat "$NGT_OUT/bad.err")
    # What slurmctld logged while the refused srun ran (before the next probe job).
    tail -n +$((lines + 1)) "$NGC_DIR/log/slurmctld.log" >"$NGT_OUT/bad.ctld"
    ok $((rc == 0)) "$label: srun fails (status $rc)"
    is "$(grep -c '^srun: error: numaguard:' "$NGT_OUT/bad.err")" 1 "$label: exactly one numaguard line"
    like "$err" "$pattern" "$label: the line names the problem"
    unlike "$(grep -E 'allocate_resources|JobId=' "$NGT_OUT/bad.ctld")" "JobId=" \
        "$label: slurmctld logged no job while srun ran"
    after=$(ngc_next_job_id)
    is "$after" $((before + 1)) "$label: no job was created (job ids $before -> $after)"
}
bad_value "--numa-policy=bogus" "numa-policy.*bogus" --numa-policy=bogus
bad_value "--numa-policy=local,prefer" "numa-policy.*local,prefer" --numa-policy=local,prefer
bad_value "--omp-guard=0" "omp-guard.*'0'" --omp-guard=0
bad_value "--omp-guard=off,force" "omp-guard.*off,force" --omp-guard=off,force
BAD_ENV=$ENVOPT=interleave:x bad_value "env numa-policy=interleave:x" "numa-policy.*interleave:x"

# --- --omp-guard ----------------------------------------------------------
probe "omp-guard (bare)" --numa-policy=local --omp-guard
ngt_check plan "$F" "omp-guard bare = auto" "$NGT_CLI" "$topo" -- --task-gpus "0;1" --cpus-per-task 48 --omp-guard=auto
probe "omp-guard=auto" --numa-policy=local --omp-guard=auto
ngt_check plan "$F" "omp-guard=auto" "$NGT_CLI" "$topo" -- --task-gpus "0;1" --cpus-per-task 48 --omp-guard=auto
# The planner's thread count for these tasks (cores each task owns).
AUTO=$("$NGT_CLI" plan --topology "$topo" --tasks 2 --task-gpus "0;1" --cpus-per-task 48 --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["tasks"][0]["threads"])')
ok $(( AUTO < 1 )) "planner: $AUTO threads per task for 2 tasks x 48 CPUs"
ngt_check expect "$F" "omp-guard=auto" all:OMP_NUM_THREADS=$AUTO all:MKL_NUM_THREADS=$AUTO \
    all:OPENBLAS_NUM_THREADS=$AUTO all:NUMEXPR_NUM_THREADS=$AUTO
probe "omp-guard=6" --numa-policy=local --omp-guard=6
ngt_check expect "$F" "omp-guard=6" all:OMP_NUM_THREADS=6 all:MKL_NUM_THREADS=6 all:OPENBLAS_NUM_THREADS=6 \
    all:BLIS_NUM_THREADS=6 all:NUMBA_NUM_THREADS=6
ngt_check plan "$F" "omp-guard=6" "$NGT_CLI" "$topo" -- --task-gpus "0;1" --cpus-per-task 48 --omp-guard=6
probe "omp-guard=off" --numa-policy=local --omp-guard=off
ngt_check expect "$F" "omp-guard=off" "all:OMP_NUM_THREADS=<unset>" "all:MKL_NUM_THREADS=<unset>"
export OMP_NUM_THREADS=7
probe "user OMP_NUM_THREADS=7, omp-guard=3" --numa-policy=local --omp-guard=3
ngt_check expect "$F" "user value kept" all:OMP_NUM_THREADS=7 all:MKL_NUM_THREADS=3
probe "user OMP_NUM_THREADS=7, omp-guard=3,force" --numa-policy=local --omp-guard=3,force
ngt_check expect "$F" "force overwrites" all:OMP_NUM_THREADS=3 all:MKL_NUM_THREADS=3
export $ENVOMP=5
probe "omp-guard from env"
ngt_check expect "$F" "omp-guard=5 from env, user value kept" all:OMP_NUM_THREADS=7 all:MKL_NUM_THREADS=5
unset OMP_NUM_THREADS $ENVOMP

# --- sbatch: #SBATCH --numa-policy, sruns inside inherit it ---------------
cat >"$NGT_OUT/job.sh" <<EOF
#!/bin/sh
#SBATCH -D $NGT_OUT
#SBATCH --numa-policy=interleave
#SBATCH --omp-guard=4
#SBATCH --exclusive -n 2 -c 48 --gpus-per-task=1
#SBATCH -o $NGT_OUT/job.out -e $NGT_OUT/job.err
srun $NGT_PROBE ${VARS[*]}
srun --numa-policy=prefer $NGT_PROBE ${VARS[*]} | sed 's/^rank=/rank=1/'
EOF
ngc_wait_idle 10
ngc_bounded sbatch --wait -t 2 "$NGT_OUT/job.sh" >/dev/null 2>"$NGT_OUT/sbatch.err"
ok $? "sbatch --wait with #SBATCH --numa-policy exits 0"
ngt_check expect "$NGT_OUT/job.out" "sbatch step 1 inherits #SBATCH" 0:NUMAGUARD_MEM_MODE=interleave \
    1:NUMAGUARD_MEM_MODE=interleave 0:OMP_NUM_THREADS=4
ngt_check expect "$NGT_OUT/job.out" "sbatch step 2 --numa-policy=prefer wins" 10:NUMAGUARD_MEM_MODE=preferred_many \
    11:NUMAGUARD_MEM_MODE=preferred_many 11:OMP_NUM_THREADS=4
is "$(ngc_node_states)" idle "node idle after the batch job"

# --- plugstack.conf: default_policy, allowed_policies, omp_vars ----------
NGC_PLUGSTACK=$(ngt_plugstack "topology=$topo default_policy=prefer default_omp_guard=auto allowed_policies=local,prefer omp_vars=OMP_NUM_THREADS,MKL_NUM_THREADS")
ngt_cluster
probe "default_policy=prefer"
ngt_check expect "$F" "default_policy=prefer" all:NUMAGUARD_MEM_MODE=preferred_many \
    all:OMP_NUM_THREADS=$AUTO all:MKL_NUM_THREADS=$AUTO "all:OPENBLAS_NUM_THREADS=<unset>"
# (the CLI has no omp_vars: compare placement only)
ngt_check plan "$F" "default_policy=prefer" "$NGT_CLI" "$topo" --keep OMP_NUM_THREADS --keep MKL_NUM_THREADS \
    --keep OPENBLAS_NUM_THREADS --keep BLIS_NUM_THREADS --keep NUMEXPR_NUM_THREADS --keep NUMBA_NUM_THREADS \
    --keep VECLIB_MAXIMUM_THREADS -- --task-gpus "0;1" --cpus-per-task 48 --numa-policy prefer --omp-guard=auto
probe "allowed local" --numa-policy=local
ngt_check expect "$F" "allowed_policies: local runs" all:NUMAGUARD_MEM_MODE=bind
bad_value "allowed_policies: interleave refused" "interleave.*not allowed.*local,prefer" --numa-policy=interleave
ngc_wait_idle 20   # a step that just ended may still be completing
is "$(ngc_node_states)" idle "node idle at the end"
ngt_done
