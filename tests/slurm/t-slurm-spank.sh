#!/bin/sh
# SPANK semantics per Slurm release (issue 12; make check-releases runs it
# on 22.05, 24.11 and 26.05): the plugin is loaded `required`, a failure is
# provoked in slurm_spank_init (bad plugstack.conf argument), in
# slurm_spank_user_init (topology load fails, test_fault=) for job steps
# and a batch job, and in slurm_spank_task_init (strict + refused
# set_mempolicy): tasks run or fail as docs/hardening.md says, and the
# node is never drained. Where the headers have ESPANK_JOB_FAILURE the
# plugin exports slurm_spank_init_failure_mode (and only there).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-spank plugin

# The headers' answer, asked the way mk/spank-features.mk asks it.
if printf '#include <slurm/spank.h>\nint m = ESPANK_JOB_FAILURE;\n' |
    ${CC:-cc} -x c -fsyntax-only -I"${SLURM_INCLUDE:-/usr/include}" - >/dev/null 2>&1; then
    want=1
else
    want=0
fi
got=$(nm -D --defined-only "$NGT_PLUGIN" 2>/dev/null | grep -c ' slurm_spank_init_failure_mode$')
is "$got" "$want" "slurm_spank_init_failure_mode exported iff the headers define ESPANK_JOB_FAILURE"

# state_after DESC: the node is idle once the job is gone (not drained).
state_after() {
    ngc_wait_idle 20
    is "$(ngc_node_states)" idle "$1: node idle afterwards (not drained)"
}

# srun_case DESC WANT_RC REGEX SRUN-ARGS...
srun_case() {
    local desc=$1 want=$2 re=$3 rc
    shift 3
    ngc_wait_idle 10
    ngc_srun -D "$NGT_OUT" "$@" >"$NGT_OUT/o" 2>"$NGT_OUT/e"
    rc=$?
    if [ "$want" = nonzero ]; then
        ok $((rc == 0)) "$desc: srun fails (exit $rc)"
    else
        is "$rc" "$want" "$desc: srun exit status"
    fi
    [ -n "$re" ] && like "$(cat "$NGT_OUT/e")" "$re" "$desc: message"
    state_after "$desc"
}

NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_GPUS=0

# 1. slurm_spank_init on the node: a bad argument disables the plugin;
# init still returns 0 (a failing required init would fail every job, and
# on 25.05+ without a failure mode drain the node).
NGC_PLUGSTACK="required $NGT_PLUGIN bogus_argument=1"
ngt_cluster
echo "# $(srun --version 2>&1), hwloc $(pkg-config --modversion hwloc 2>/dev/null || echo '?')"
srun_case "init: bad plugstack argument, required" 0 "" -n 2 --numa-policy=local true
like "$(cat "$NGC_DIR"/log/slurmd.ng1.log)" "numaguard: plugstack.conf: .*bogus_argument.*plugin disabled" \
    "init: bad plugstack argument: slurmd log names it"

# 2. slurm_spank_user_init: the topology cannot be loaded.
NGC_PLUGSTACK="required $NGT_BUILD/numaguard-faults.so test_fault=topology_load"
ngt_cluster
srun_case "user_init: topology load fails, required" 0 "numaguard: cannot load the topology" \
    -n 2 --numa-policy=local true
srun_case "user_init: topology load fails, strict" nonzero "strict: failing the task" \
    -n 2 --numa-policy=local,strict true
ngc_wait_idle 10
job=$(sbatch --parsable -t 2 -D "$NGT_OUT" -o "$NGT_OUT/batch.out" -n 2 \
    --wrap "srun -n 2 --numa-policy=local,strict true; srun -n 1 --numa-policy=local true" 2>&1)
ngc_wait_for 30 sh -c "[ -z \"\$(squeue -h -j '$job' 2>/dev/null)\" ]"
like "$(scontrol show job "$job" 2>&1)" "JobState=(COMPLETED|FAILED)" "user_init: batch job ended"
state_after "user_init: batch job with a strict step"

# 3. slurm_spank_task_init: set_mempolicy refused; strict fails the tasks.
NGC_PLUGSTACK="required $NGT_BUILD/numaguard-faults.so test_fault=mempolicy_eperm"
ngt_cluster
srun_case "task_init: set_mempolicy refused" 0 "" -n 2 --numa-policy=local true
srun_case "task_init: set_mempolicy refused, strict" nonzero "strict: failing the task" \
    -n 2 --numa-policy=local,strict true
ngt_done
