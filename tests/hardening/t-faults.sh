#!/bin/sh
# Fault matrix through real srun (private cluster of tests/slurm/cluster.sh):
# broken admin config, broken driver files, hostile user values. For each
# fault: the step's exit status (0 = tasks ran as Slurm placed them, with a
# warning; non-zero under strict or when srun refuses), the message, and
# that the node is never drained. Faults that need an injection hook inside
# the plugin (syscall failures, hwloc failing mid-load, a task that never
# reaches the GPU exchange) are listed in docs/hardening.md.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../slurm/testlib.sh"
ngt_start_suite faults plugin

# fault DESC WANT_RC REGEX SRUN-ARGS... : run `srun ARGS sh -c true`-style
# commands (ARGS include the command); check status, stderr and node state.
fault() {
    local desc=$1 want=$2 re=$3 rc
    shift 3
    ngc_wait_idle 10
    srun -D "$NGT_OUT" "$@" >"$NGT_OUT/f.out" 2>"$NGT_OUT/f.err"
    rc=$?
    if [ "$want" = nonzero ]; then
        ngt_ok $(( rc == 0 )) "$desc: srun fails (exit $rc)"
    else
        ngt_is "$rc" "$want" "$desc: srun exit status"
    fi
    [ -n "$re" ] && ngt_like "$(cat "$NGT_OUT/f.err")" "$re" "$desc: message"
    ngc_wait_idle 20   # "completing" for a moment after a failed task
    ngt_is "$(ngc_node_states)" idle "$desc: node idle afterwards (not drained)"
}

# --- admin config faults (real node, task/affinity) ---------------------
NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0
NGC_PLUGSTACK="$(ngt_plugstack topology=/nonexistent/topo.xml)"
ngt_cluster
fault "missing topology XML" 0 "numaguard: .*cannot load the topology.*tasks run as Slurm placed them" \
    -n 2 --numa-policy=local true
fault "missing topology XML, strict" nonzero "strict: failing the task" \
    -n 2 --numa-policy=local,strict true

NGC_PLUGSTACK="$(ngt_plugstack topology=$NGT_TOP/tests/topologies/README.txt)"
ngt_cluster
fault "topology file that is not XML" 0 "not a valid hwloc XML" -n 1 --numa-policy=local true

NGC_PLUGSTACK="$(ngt_plugstack no_such_argument=1)"
ngt_cluster
fault "unknown plugstack argument (plugin disabled)" 0 "" -n 1 --numa-policy=local true
ngt_like "$(cat "$NGC_DIR"/log/slurmd*.log 2>/dev/null)" \
    "numaguard: plugstack.conf: unknown argument 'no_such_argument=1'; plugin disabled" \
    "unknown plugstack argument: logged in slurmd's log"

# --- hostile user values (plugin healthy) --------------------------------
NGC_PLUGSTACK="$(ngt_plugstack)"
ngt_cluster
fault "policy longer than 1024 bytes (srun refuses)" nonzero "longer than 1024 bytes" \
    -n 1 "--numa-policy=interleave:$(printf '0,%.0s' $(seq 600))0" true
fault "policy with a terminal escape (srun refuses, escaped)" nonzero '\\x1b\[31m' \
    -n 1 "--numa-policy=local,$(printf '\033[31m')" true
# The internal variable skips srun's check: the node must re-validate.
export _SLURM_SPANK_OPTION_numaguard_numa_policy=bogus
fault "invalid policy that bypassed srun (node re-validates)" 0 \
    "invalid --numa-policy on the node" -n 1 true
export _SLURM_SPANK_OPTION_numaguard_numa_policy=bogus,strict
fault "invalid policy that bypassed srun, with strict" 0 "invalid --numa-policy on the node" \
    -n 1 true
unset _SLURM_SPANK_OPTION_numaguard_numa_policy
fault "garbage CUDA_VISIBLE_DEVICES with a newline" 0 "" \
    -n 1 --numa-policy=local --export="ALL,CUDA_VISIBLE_DEVICES=0,$(printf 'x\ny')" true

# --- driver faults (inflated GPU node) ------------------------------------
NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$NGT_TOPO/g4dn-metal-8xt4.xml NGC_GPUS=auto
NGC_PLUGSTACK="$(ngt_plugstack)"
ngt_cluster
info=$(ls -d "$NGC_FSROOT"/proc/driver/nvidia/gpus/* | head -1)
mv "$info/information" "$info/information.off"
fault "a GPU's driver information file missing" 0 "numaguard: " \
    -n 2 --gpus-per-task=1 --numa-policy=local,verbose true
fault "a GPU's driver information file missing, strict" nonzero "strict" \
    -n 8 --gpus-per-task=1 --numa-policy=local,strict true
mv "$info/information.off" "$info/information"
printf 'Device Minor: \t 999999999999999999999\nGPU UUID: \t \033]0;x\007\n' >"$info/information.bad"
mv "$info/information" "$info/information.good"
mv "$info/information.bad" "$info/information"
fault "a corrupt driver information file" 0 "numaguard: " \
    -n 8 --gpus-per-task=1 --numa-policy=local,verbose true
mv "$info/information.good" "$info/information"
NGC_PLUGSTACK="$(ngt_plugstack gres_conf=/nonexistent/gres.conf)"
ngt_cluster
fault "gres.conf missing (falls back to the task's variables)" 0 "numaguard: " \
    -n 2 --gpus-per-task=1 --numa-policy=local,verbose true
ngt_done
