#!/bin/sh
# Fault matrix through real srun (private cluster of tests/slurm/cluster.sh):
# broken admin config, broken driver files, hostile user values, failures
# injected inside the plugin by the admin's test_fault=POINT argument
# (syscalls, hwloc, GPU lookup: only the test build numaguard-faults.so
# knows it; the shipped numaguard.so refuses it as an unknown argument), and odd machines (offline CPUs, fewer CPUs
# than tasks, CPUs with no NUMA node of their own). For each fault: the
# step's exit status (0 = tasks ran as Slurm placed them, with a warning;
# non-zero under strict or when srun refuses), the message, and that the
# node is never drained. The outcomes are the table in docs/hardening.md.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../slurm/testlib.sh"
ngt_start_suite faults plugin
FAULT_SO=$NGT_BUILD/numaguard-faults.so   # make tests; never installed
if [ ! -f "$FAULT_SO" ]; then
    echo "1..0 # SKIP $FAULT_SO not built (make tests)"
    exit 0
fi
# fault_plugstack ARGS...: ngt_plugstack for the test build of the plugin.
fault_plugstack() {
    NGT_PLUGIN=$FAULT_SO
    ngt_plugstack "$@"
}

# fault DESC WANT_RC REGEX SRUN-ARGS... : run `srun ARGS sh -c true`-style
# commands (ARGS include the command); check status, stderr and node state.
fault() {
    local desc=$1 want=$2 re=$3 rc
    shift 3
    ngc_wait_idle 10
    ngc_srun -D "$NGT_OUT" "$@" >"$NGT_OUT/f.out" 2>"$NGT_OUT/f.err"
    rc=$?
    if [ "$want" = nonzero ]; then
        ok $(( rc == 0 )) "$desc: srun fails (exit $rc)"
    else
        is "$rc" "$want" "$desc: srun exit status"
    fi
    [ -n "$re" ] && like "$(cat "$NGT_OUT/f.err")" "$re" "$desc: message"
    ngc_wait_idle 20   # "completing" for a moment after a failed task
    is "$(ngc_node_states)" idle "$desc: node idle afterwards (not drained)"
}

VARS=("NUMAGUARD_*" OMP_NUM_THREADS SLURM_STEP_GPUS)

# probe_fault DESC WANT REGEX NLINES NTASKS SRUN-ARGS... : run ng_probe in
# every task (file $F). WANT 0: srun exits 0, exactly NLINES numaguard lines
# on stderr, each matching REGEX, and all NTASKS tasks ran. WANT strict:
# srun fails, the numaguard lines match REGEX and "strict: failing the
# task", no task ran. Both: the node is idle afterwards.
probe_fault() {
    local desc=$1 want=$2 re=$3 nl=$4 nt=$5 rc lines
    shift 5
    F=$NGT_OUT/$(echo "$desc" | tr -c 'a-zA-Z0-9\n' '_')
    ngt_srun "$F" "$@" -- "${VARS[@]}"
    rc=$?
    lines=$(grep '^numaguard: ' "$F.err")
    if [ "$want" = strict ]; then
        ok $(( rc == 0 )) "$desc: srun fails (exit $rc)"
        re="$re.*strict: failing the task"
        is "$(grep -c '^rank=' "$F")" 0 "$desc: no task ran"
    else
        is "$rc" 0 "$desc: srun exit status"
        ngt_check count "$F" "$desc: every task ran" "$nt"
    fi
    is "$(printf '%s\n' "$lines" | grep -c .)" "$nl" "$desc: $nl numaguard line(s)"
    if [ "$nl" -gt 0 ]; then
        local odd
        odd=$(printf '%s\n' "$lines" | grep -Ev -- "$re")
        is "$odd" "" "$desc: the line names the problem"
        [ -z "$odd" ] || printf '#   want match: %s\n' "$re"
    fi
    ngc_wait_idle 20
    is "$(ngc_node_states)" idle "$desc: node idle afterwards (not drained)"
}

# strict_of SRUN-ARGS...: STRICT=(the same, ,strict appended to --numa-policy=...).
strict_of() {
    local x
    STRICT=()
    for x in "$@"; do
        case $x in --numa-policy=*) STRICT+=("$x,strict") ;; *) STRICT+=("$x") ;; esac
    done
}

# inject POINT DESC REGEX NLINES NTASKS SRUN-ARGS...: a cluster whose
# plugstack says test_fault=POINT, then the default run (REGEX then "...as
# Slurm placed it/them"; nothing applied) and the same job with ,strict
# appended to the --numa-policy of SRUN-ARGS.
inject() {
    local point=$1 desc=$2 re=$3 nl=$4 nt=$5 a=()
    shift 5
    a=("$@")
    strict_of "$@"
    NGC_PLUGSTACK="$(fault_plugstack "test_fault=$point")"
    ngt_cluster
    probe_fault "test_fault=$point: $desc" 0 "$re.*; tasks? runs? as Slurm placed (it|them)" \
        "$nl" "$nt" "${a[@]}"
    ngt_check expect "$F" "test_fault=$point: nothing applied" \
        "all:NUMAGUARD_CPUS=<unset>" all:mempolicy=default
    probe_fault "test_fault=$point: $desc, strict" strict "$re" "$nl" "$nt" "${STRICT[@]}"
    like "$(cat "$NGC_DIR"/log/slurmd*.log 2>/dev/null)" \
        "numaguard: test_fault=$point armed" "test_fault=$point: slurmd's log says it is armed"
}

# inject_mem POINT DESC REGEX SRUN-ARGS...: a refused memory policy alone
# is not a placement failure: each task says it once ("rank N: warning:
# REGEX...; CPU binding and variables kept"), keeps its CPU binding and
# its variables (the kernel agrees with NUMAGUARD_CPUS) with no memory
# policy (NUMAGUARD_MEM_MODE=none); with ,strict the tasks fail.
inject_mem() {
    local point=$1 desc=$2 re=$3 a=()
    shift 3
    a=("$@")
    strict_of "$@"
    NGC_PLUGSTACK="$(fault_plugstack "test_fault=$point")"
    ngt_cluster
    probe_fault "test_fault=$point: $desc" 0 \
        "^numaguard: rank [01]: warning: $re.*; CPU binding and variables kept\$" 2 2 "${a[@]}"
    ngt_check applied "$F" "test_fault=$point: CPU binding and variables applied"
    ngt_check expect "$F" "test_fault=$point: no memory policy" \
        all:NUMAGUARD_MEM_MODE=none all:mempolicy=default
    probe_fault "test_fault=$point: $desc, strict" strict "^numaguard: rank [01]: $re" 2 2 \
        "${STRICT[@]}"
}

# --- admin config faults (real node, task/affinity) ---------------------
NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0
# An admin error goes to slurmd's log once per step, and to the user only
# when they asked for placement themselves (not default_policy alone, not
# --numa-policy=none).
slurmd_count() { cat "$NGC_DIR"/log/slurmd*.log 2>/dev/null | grep -Ec -- "$1"; }
# admin_fault DESC LOG-REGEX WANT-USER(told|silent) FAULT-ARGS...: fault(),
# then exactly one new slurmd log line for the step, and the user's stderr.
admin_fault() {
    local desc=$1 re=$2 user=$3 n0
    shift 3
    n0=$(slurmd_count "$re")
    fault "$desc" "$@"
    is "$(( $(slurmd_count "$re") - n0 ))" 1 "$desc: slurmd's log names it once for the step"
    if [ "$user" = silent ]; then
        is "$(grep -c numaguard "$NGT_OUT/f.err")" 0 "$desc: nothing on the user's stderr"
    fi
}
NGC_PLUGSTACK="$(ngt_plugstack topology=/nonexistent/topo.xml default_policy=local)"
ngt_cluster
lre="numaguard: node ng1: error: cannot load the topology: .*/nonexistent/topo\.xml"
like "$(cat "$NGC_DIR"/log/slurmd*.log 2>/dev/null)" \
    "error: numaguard: topology=/nonexistent/topo\.xml: No such file or directory; steps cannot place tasks" \
    "missing topology XML: slurmd's log says so at slurmd's start"
admin_fault "missing topology XML" "$lre" told 0 \
    "numaguard: .*cannot load the topology.*tasks run as Slurm placed them" \
    -n 2 --numa-policy=local true
admin_fault "missing topology XML, strict" "$lre" told nonzero "strict: failing the task" \
    -n 2 --numa-policy=local,strict true
admin_fault "missing topology XML, default_policy only (the user asked nothing)" "$lre" silent \
    0 "" -n 2 true
admin_fault "missing topology XML, --numa-policy=none (the user opted out)" "$lre" silent \
    0 "" -n 2 --numa-policy=none true

NGC_PLUGSTACK="$(ngt_plugstack topology=$NGT_TOP/tests/topologies/README.txt)"
ngt_cluster
fault "topology file that is not XML" 0 "not a valid hwloc XML" -n 1 --numa-policy=local true

NGC_PLUGSTACK="$(ngt_plugstack no_such_argument=1)"
ngt_cluster
fault "unknown plugstack argument (plugin disabled)" 0 \
    "numaguard: disabled by a plugstack.conf error \(unknown argument 'no_such_argument=1'\); option ignored" \
    -n 1 --numa-policy=local true
fault "unknown plugstack argument, --numa-policy=none (the user opted out)" 0 "" \
    -n 1 --numa-policy=none true
is "$(grep -c numaguard "$NGT_OUT/f.err")" 0 \
    "unknown plugstack argument, --numa-policy=none: nothing on the user's stderr"
fault "unknown plugstack argument, no option" 0 "" -n 1 true
is "$(grep -c numaguard "$NGT_OUT/f.err")" 0 \
    "unknown plugstack argument, no option: nothing on the user's stderr"
like "$(cat "$NGC_DIR"/log/slurmd*.log 2>/dev/null)" \
    "numaguard: plugstack.conf: unknown argument 'no_such_argument=1'; plugin disabled" \
    "unknown plugstack argument: logged in slurmd's log"
like "$(grep -v '\[[0-9]*\.[0-9a-z]*\]' "$NGC_DIR"/log/slurmd*.log 2>/dev/null)" \
    "numaguard: plugstack.conf: unknown argument 'no_such_argument=1'; plugin disabled" \
    "unknown plugstack argument: logged at slurmd's start too (not only by steps)"

NGC_PLUGSTACK="$(fault_plugstack test_fault=bogus)"
ngt_cluster
fault "unknown test_fault point (plugin disabled)" 0 "" -n 1 --numa-policy=local true
like "$(cat "$NGC_DIR"/log/slurmd*.log 2>/dev/null)" \
    "numaguard: plugstack.conf: test_fault=bogus: unknown fault point.*; plugin disabled" \
    "unknown test_fault point: logged in slurmd's log"

# The shipped plugin has no fault points: test_fault= is an unknown argument
# there (plugin disabled, slurmd's log says so; nothing injected).
NGC_PLUGSTACK="$(ngt_plugstack test_fault=mempolicy_eperm)"
ngt_cluster
probe_fault "shipped numaguard.so given test_fault=mempolicy_eperm" 0 "^$" 0 2 \
    -n 2 --numa-policy=local
ngt_check expect "$F" "shipped numaguard.so given test_fault=: nothing injected, nothing applied" \
    "all:NUMAGUARD_CPUS=<unset>" all:mempolicy=default
like "$(cat "$NGC_DIR"/log/slurmd*.log 2>/dev/null)" \
    "numaguard: plugstack.conf: unknown argument 'test_fault=mempolicy_eperm'; plugin disabled" \
    "shipped numaguard.so given test_fault=: unknown argument in slurmd's log"

# --- faults injected inside the plugin (test_fault=POINT, real node) -------
# Syscalls: every task reports its own failure; the step's problems
# (topology) are reported once per node, by local task 0.
inject_mem mempolicy_einval "set_mempolicy fails with EINVAL" \
    "set_mempolicy\(bind:[0-9,-]+\) refused \(EINVAL\): nodes outside the task's cpuset.mems" \
    -n 2 --numa-policy=local
inject_mem mempolicy_eperm "set_mempolicy fails with EPERM" \
    "set_mempolicy\(bind:[0-9,-]+\) refused \(EPERM\): a container without CAP_SYS_NICE" \
    -n 2 --numa-policy=local
inject affinity_einval "sched_setaffinity fails with EINVAL" \
    "^numaguard: rank [01]: sched_setaffinity\([0-9,-]+\) refused \(EINVAL\): CPUs offline or outside" \
    2 2 -n 2 --numa-policy=local
inject topology_load "hwloc fails to load the topology" \
    "^numaguard: cannot load the topology: hwloc could not load the topology \(injected by test_fault=topology_load\)" \
    1 2 -n 2 --numa-policy=local
inject no_numa "hwloc finds no NUMA node" \
    "^numaguard: cannot load the topology: invalid topology: hwloc found no NUMA node" \
    1 2 -n 2 --numa-policy=local
# Only the environment fails (test_fault=env_export: setting NUMAGUARD_* is
# refused after the affinity and the memory policy are set, as a failing
# spank_setenv would): each task's line says exactly what was applied and
# what was not, and the kernel agrees (its affinity is the CPU its line
# names, its memory policy is bind); strict fails the tasks.
NGC_PLUGSTACK="$(fault_plugstack test_fault=env_export)"
ngt_cluster
re="^numaguard: rank [01]: cannot set NUMAGUARD_[A-Z_]+ in the task environment; CPU affinity \(cpus [0-9,-]+\) and memory policy \(bind\) set, its environment variables not all"
probe_fault "test_fault=env_export: only the variables fail" 0 "$re\$" 2 2 -n 2 --numa-policy=local
ngt_check expect "$F" "test_fault=env_export: placed, NUMAGUARD_CPUS not set" \
    "all:NUMAGUARD_CPUS=<unset>" all:mempolicy=bind all:memnodes=0
said_vs_kernel() {
    python3 -c '
import re, sys
aff = {}
for line in open(sys.argv[1], errors="replace"):
    f = dict(p.partition("=")[::2] for p in line.rstrip("\n").split("\t"))
    if "rank" in f:
        aff[f["rank"]] = f.get("affinity")
err = open(sys.argv[1] + ".err", errors="replace").read()
said = dict(re.findall(r"^numaguard: rank (\d+): .*\(cpus ([0-9,-]+)\)", err, re.M))
print("same" if aff and aff == said else "affinity %s but the lines say %s" % (aff, said))' "$1"
}
is "$(said_vs_kernel "$F")" same "test_fault=env_export: each task's affinity is the CPU set its line names"
probe_fault "test_fault=env_export, strict" strict "$re" 2 2 -n 2 --numa-policy=local,strict

# A syscall fault only bites where numaguard makes the syscall: policy none
# with --omp-guard sets no affinity and no memory policy, so the task gets
# its thread cap with no warning.
NGC_PLUGSTACK="$(fault_plugstack test_fault=affinity_einval)"
ngt_cluster
probe_fault "test_fault=affinity_einval, policy none" 0 "^$" 0 2 -n 2 --numa-policy=none --omp-guard=1
ngt_check expect "$F" "test_fault=affinity_einval, policy none: threads capped" all:OMP_NUM_THREADS=1

# --- a step allowed fewer CPUs than tasks (real node) -----------------------
NGC_PLUGSTACK="$(ngt_plugstack)"
ngt_cluster
ncpu=$(scontrol show node ng1 | sed -n 's/.*CPUTot=\([0-9]*\).*/\1/p')
nt=$((2 * ncpu))
# --overcommit: Slurm allocates one CPU per node, so the step has 1 core.
probe_fault "$nt tasks on $ncpu CPUs (--overcommit)" 0 \
    "^numaguard: warning: $nt tasks share 1 cores: tasks will compete for CPUs" 1 "$nt" \
    -n "$nt" --overcommit --numa-policy=local
ngt_check applied "$F" "$nt tasks on $ncpu CPUs: each task got what it reports"
ngt_check expect "$F" "$nt tasks on $ncpu CPUs: memory bound" all:mempolicy=bind all:memnodes=0
like "$(sed -n 's/.*NUMAGUARD_CPUS=\([^[:space:]]*\).*/\1/p' "$F" | sort -u | tr '\n' ' ')" '^[0-9]+ $' \
    "$nt tasks on $ncpu CPUs: all tasks share the step's one CPU"

# --- offline CPUs, CPUs without a NUMA node (inflated nodes, plan only) ----
NGC_TASK_PLUGIN=task/none NGC_GPUS=0
topo=$NGT_TOPO/xeon-4s-offline-pus.xml   # online PUs 0-1,3-4,6-12,15
NGC_TOPOLOGY=$topo NGC_PLUGSTACK="$(ngt_plugstack "topology=$topo")"
ngt_cluster
cpus=$(scontrol show node ng1 | sed -n 's/.*CPUTot=\([0-9]*\).*/\1/p')
probe_fault "offline PUs (xeon-4s-offline-pus)" 0 "^$" 0 4 \
    -n 4 --exclusive -c $((cpus / 4)) --numa-policy=local
ngt_check plan "$F" "offline PUs: the CLI's plan" "$NGT_CLI" "$topo" -- \
    --cpus-per-task $((cpus / 4)) --numa-policy local
got=$(sed -n 's/.*NUMAGUARD_CPUS=\([^[:space:]]*\).*/\1/p' "$F" | tr '\n' ',')
bad=$(python3 -c 'import sys
on={0,1,3,4,6,7,8,9,10,11,12,15}
s=set()
for p in sys.argv[1].split(","):
    if p:
        a,_,b=p.partition("-"); s|=set(range(int(a),int(b or a)+1))
print(",".join(str(c) for c in sorted(s-on)) or "none")' "$got")
is "$bad" "none" "offline PUs: no task is given an offline PU ($got)"

topo=$NGT_TOPO/r630-offline-cpus-offline-node0.xml   # node 0 offline: package 0 has no node
NGC_TOPOLOGY=$topo NGC_PLUGSTACK="$(ngt_plugstack "topology=$topo verbose")"
ngt_cluster
# Slurm's first cores are package 0's (PUs 4,6,8,..): CPUs with no NUMA node.
probe_fault "CPUs whose NUMA node is offline (r630)" 0 \
    "^numaguard: (step on this node: 1 tasks.*plan only|rank 0 \(local 0\): gpus none numa none cpus 4,6 mem bind:1 .*\(plan only\))" \
    2 1 -n 1 -c 2 --numa-policy=local
ngt_check expect "$F" "CPUs whose NUMA node is offline: memory on the nearest CPU-bearing node" \
    0:NUMAGUARD_CPUS=4,6 0:NUMAGUARD_MEMS=1 0:NUMAGUARD_MEM_MODE=bind
probe_fault "CPUs whose NUMA node is offline, interleave" 0 \
    "^numaguard: (step on this node|rank 0 .* mem interleave:1 )" 2 1 -n 1 -c 2 --numa-policy=interleave
ngt_check expect "$F" "CPUs whose NUMA node is offline, interleave: over the nodes there are" \
    0:NUMAGUARD_MEMS=1 0:NUMAGUARD_MEM_MODE=interleave

# --- hostile user values (plugin healthy) --------------------------------
NGC_PLUGSTACK="$(ngt_plugstack)"
ngt_cluster
fault "policy longer than 1024 bytes (srun refuses)" nonzero "longer than 1024 bytes" \
    -n 1 "--numa-policy=interleave:$(printf '0,%.0s' $(seq 600))0" true
fault "policy with a terminal escape (srun refuses, escaped)" nonzero '\\x1b\[31m' \
    -n 1 "--numa-policy=local,$(printf '\033[31m')" true
# The internal variable skips srun's check: the node must re-validate, and
# strict (the user's, even inside the unparsable value, or the admin's)
# fails the tasks (issue 19: they ran).
export _SLURM_SPANK_OPTION_numaguard_numa_policy=bogus
fault "invalid policy that bypassed srun (node re-validates)" 0 \
    "invalid --numa-policy on the node.*; tasks run as Slurm placed them" -n 1 true
export _SLURM_SPANK_OPTION_numaguard_numa_policy=bogus,strict
fault "invalid policy that bypassed srun, with strict in it: the tasks fail" nonzero \
    "invalid --numa-policy on the node: .*; strict: failing the task" -n 2 true
is "$(grep -c '^numaguard: ' "$NGT_OUT/f.err")" 1 "invalid policy, strict: said once per node"
unset _SLURM_SPANK_OPTION_numaguard_numa_policy
# The documented variable is checked by srun itself: refused, no task.
export SLURM_SPANK__SLURM_SPANK_OPTION_numaguard_numa_policy=bogus,strict
fault "invalid policy through SLURM_SPANK__SLURM_SPANK_OPTION_numaguard_numa_policy: srun refuses it" \
    nonzero "numaguard: .*bogus" -n 1 true
is "$(grep -c '^rank=\|strict: failing' "$NGT_OUT/f.out" "$NGT_OUT/f.err" | awk -F: '{s+=$2} END {print s}')" 0 \
    "SLURM_SPANK__SLURM_SPANK_OPTION_numaguard_numa_policy: refused before any task"
unset SLURM_SPANK__SLURM_SPANK_OPTION_numaguard_numa_policy
export _SLURM_SPANK_OPTION_numaguard_omp_guard=bogus
fault "invalid --omp-guard that bypassed srun, policy local,strict: the tasks fail" nonzero \
    "invalid --omp-guard on the node: .*; strict: failing the task" \
    -n 1 --numa-policy=local,strict true
fault "invalid --omp-guard that bypassed srun, not strict: tasks run" 0 \
    "invalid --omp-guard on the node: .*; tasks run as Slurm placed them" \
    -n 1 --numa-policy=local true
unset _SLURM_SPANK_OPTION_numaguard_omp_guard
NGC_PLUGSTACK="$(ngt_plugstack strict)"
ngt_cluster
export _SLURM_SPANK_OPTION_numaguard_net_affinity=bogus
fault "invalid --net-affinity that bypassed srun, admin strict: the tasks fail" nonzero \
    "invalid --net-affinity on the node: .*; strict: failing the task" -n 1 true
unset _SLURM_SPANK_OPTION_numaguard_net_affinity
NGC_PLUGSTACK="$(ngt_plugstack)"
ngt_cluster
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

# The task's own GPU lookup fails (the step-level one works): each task
# keeps its predicted share of the step's GPUs; strict fails it.
topo=$NGC_TOPOLOGY
mapfile -t bus < <(ngc_topology_nvidia_gpus "$topo" | cut -d' ' -f1)
cpus=$(scontrol show node ng1 | sed -n 's/.*CPUTot=\([0-9]*\).*/\1/p')
NGC_PLUGSTACK="$(fault_plugstack "topology=$topo test_fault=gpu_lookup")"
ngt_cluster
re="^numaguard: rank [01]: cannot identify this task's GPUs \(GPU lookup failed \(injected by test_fault=gpu_lookup\)\)"
probe_fault "test_fault=gpu_lookup: identifying the task's GPUs fails" 0 \
    "$re; placed by the step's GPU prediction" 2 2 \
    -n 2 --exclusive -c $((cpus / 2)) --gpus-per-task=1 --numa-policy=local
ngt_check plan "$F" "test_fault=gpu_lookup: placed by the prediction" "$NGT_CLI" "$topo" -- \
    --cpus-per-task $((cpus / 2)) --task-gpus "0;1" --numa-policy local
ngt_check expect "$F" "test_fault=gpu_lookup: predicted GPUs" \
    "0:NUMAGUARD_GPUS=${bus[0]}" "1:NUMAGUARD_GPUS=${bus[1]}"
probe_fault "test_fault=gpu_lookup, strict" strict "$re" 2 2 \
    -n 2 --exclusive -c $((cpus / 2)) --gpus-per-task=1 --numa-policy=local,strict

# --- 512 tasks, one never joins the GPU exchange (issue 13) ---------------
# The step's 512 tasks (Slurm's MaxTasksPerNode) share the node's 8 GPUs
# (--gres=gpu:8) and publish what they see through the exchange page; with
# test_fault=exchange_absent the last local task (the last forked) never
# arrives: every other task gives up after the 3 s CLOCK_MONOTONIC bound
# (futex sleep, no spinning) and keeps the step's prediction. Bounded time,
# every task placed, the node idle afterwards.
gpus8=$(IFS=,; echo "${bus[*]}")
# exch DESC: 512 tasks printing "LOCALID NUMAGUARD_GPUS"; sets $secs.
exch() {
    local t0 rc
    ngc_wait_idle 20
    t0=$(date +%s%N)
    timeout 120 srun -D "$NGT_OUT" -n 512 --overcommit --gres=gpu:8 --numa-policy=local \
        sh -c 'echo "$SLURM_LOCALID ${NUMAGUARD_GPUS:-unset}"' >"$NGT_OUT/x.out" 2>"$NGT_OUT/x.err"
    rc=$?
    secs=$(( ($(date +%s%N) - t0) / 1000000 ))
    secs=$((secs / 1000)).$(printf '%03d' $((secs % 1000)))
    echo "# $1: srun of 512 tasks took ${secs}s"
    is "$rc" 0 "$1: srun exit status"
    is "$(awk -v g="$gpus8" '$2 == g' "$NGT_OUT/x.out" | sort -u | wc -l)" 512 \
        "$1: all 512 tasks ran, each placed for the step's 8 GPUs"
    ngc_wait_idle 20
    is "$(ngc_node_states)" idle "$1: node idle afterwards"
}
NGC_PLUGSTACK="$(ngt_plugstack "topology=$topo")"
ngt_cluster
exch "512 tasks, all join the exchange"
base=$secs
NGC_PLUGSTACK="$(fault_plugstack "topology=$topo test_fault=exchange_absent")"
ngt_cluster
exch "512 tasks, local task 511 never joins the exchange"
is "$(grep -c 'numaguard: local task 511: not joining the GPU exchange (injected' "$NGT_OUT/x.err")" 1 \
    "exchange_absent: only the last task stayed away"
ok "$(awk -v s="$secs" 'BEGIN {exit !(s >= 3 && s < 30)}'; echo $?)" \
    "exchange_absent: the others waited the 3 s bound and no longer (${secs}s; ${base}s when all join)"
ngt_done
