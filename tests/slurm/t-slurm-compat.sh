#!/bin/sh
# The SPANK plugin against the reference release (tests/compat/base),
# through real srun: the same srun commands run once with the reference's
# numaguard.so in plugstack.conf and once with this tree's, on freshly
# started daemons each time; per command, srun's exit status, its stderr
# (the plugin's lines, sorted: task order varies) and every task's probe
# line (NUMAGUARD_*, thread and network variables, sorted by rank) must be
# identical. Phases: an inflated XE8640 node (4 H100, task/none), an
# inflated JUWELS Booster node (4 A100 + 4 HCAs: --net-affinity), and this
# host with task/affinity, where the probe line carries the kernel's view
# (sched_getaffinity, get_mempolicy). docs/testing.md, "Compatibility with
# the reference release".
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite slurm-compat plugin

# The reference build (cached in $BUILD/compat/<commit>); 77: cannot here.
ref=$(cd "$NGT_TOP" && BUILD=$BUILD sh tests/compat/build-base.sh 2>"$NGC_DIR/build-base.err")
rc=$?
if [ $rc -eq 77 ]; then
    echo "ok 1 # SKIP $(tail -n 1 "$NGC_DIR/build-base.err" | sed 's/^compat: //')"
    echo "1..1"
    ngc_teardown
    exit 0
fi
sed 's/^/# /' "$NGC_DIR/build-base.err"
if [ $rc -ne 0 ] || [ ! -f "$ref/build/numaguard.so" ]; then
    ok 1 "slurm compat: the reference plugin did not build ($ref/build/numaguard.so)"
    ngt_done
    exit 1
fi
REF_SO=$ref/build/numaguard.so
REF_NAME=$(git -C "$NGT_TOP" rev-parse --short=7 "$(sed -n 's/ .*//p' "$ref/../stamp")" 2>/dev/null)
REF_NAME=${REF_NAME:-the reference}
VARS=("NUMAGUARD_*" "OMP_*" MKL_NUM_THREADS UCX_NET_DEVICES NCCL_IB_HCA NVSHMEM_HCA_LIST
      OMPI_MCA_btl_openib_if_include)
ENVPOL=SLURM_SPANK__SLURM_SPANK_OPTION_numaguard_numa_policy
ENVNET=SLURM_SPANK__SLURM_SPANK_OPTION_numaguard_net_affinity
CMP=$NGT_OUT/cmp
mkdir -p "$CMP/ref" "$CMP/new"

# c ID [VAR=VALUE...] -- SRUN-ARGS...: one srun with the probe as the
# command, recorded in $CMP/$WHICH/<phase>.<ID>: the exit status, stderr
# (without srun's own "job N queued/allocated" chatter, whose timing
# varies) and the tasks' probe lines sorted by rank. Bounded: srun -t 1
# and timeout.
c() {
    local id=$1 envs=() f rc
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    f=$CMP/$WHICH/$PHASE.$(printf '%s' "$id" | tr -c 'a-zA-Z0-9=,.+-' '_')
    printf '%s\n' "$id" >>"$CMP/$WHICH/$PHASE.ids"
    printf '%s\n' "srun $*" >"$f.cmd"
    ngc_wait_idle 10
    env "${envs[@]}" timeout -k 5 40 srun -D "$NGT_OUT" -t 1 "$@" "$NGT_PROBE" "${VARS[@]}" \
        >"$f.out" 2>"$f.err" </dev/null
    rc=$?
    # Tasks write their lines in any order: sorted when tasks ran; srun
    # alone (a refused option, the grammar) keeps its order.
    local order=cat label="--- stderr (srun's, in order)"
    [ -s "$f.out" ] && order="env LC_ALL=C sort" label="--- stderr (sorted)"
    {
        echo "exit $rc"
        echo "$label"
        grep -Ev '^srun: (job|Job) [0-9]+ (queued|has been allocated|step creation)' "$f.err" | $order
        echo "--- tasks (by rank; one field a line, so a diff names the variable)"
        LC_ALL=C sort -V "$f.out" | awk -F '\t' '$1 ~ /^rank=/ {
            r = substr($1, 6); for (i = 2; i <= NF; i++) print "task " r ": " $i; next } { print }'
    } >"$f"
}

# run_phase NAME CMDS-FUNCTION PLUGSTACK-ARGS: the commands under the
# reference plugin, then under this tree's, each on a fresh cluster (same
# job ids, same node state), then one TAP line per command. $PHASE_PRE, if
# set, runs before each start.
run_phase() {
    PHASE=$1
    local cmds=$2 args=$3 which so
    for which in ref new; do
        WHICH=$which
        so=$NGT_PLUGIN
        [ $which = ref ] && so=$REF_SO
        NGC_PLUGSTACK="${NGT_PLUGSTACK_KIND:-optional} $so fsroot=$NGC_FSROOT gres_conf=$NGC_PLUGIN_GRES_CONF $args"
        [ -n "${PHASE_PRE:-}" ] && $PHASE_PRE
        ngt_cluster
        rm -f "$CMP/$which/$PHASE.ids"
        "$cmds"
    done
    compare_phase
}

# Deliberate differences: the rows of tests/compat/differences.tsv whose
# glob starts with "slurm/" (case ids slurm/<phase>/<command>).
ROW_GLOB=() ROW_WHY=() ROW_LINE=() ROW_USED=()
load_explanations() {
    local file=${NG_COMPAT_DIFFERENCES:-$NGT_TOP/tests/compat/differences.tsv} glob why n=0
    [ -f "$file" ] || return 0
    while IFS=$'\t' read -r glob why; do
        n=$((n + 1))
        case $glob in slurm/*) ;; *) continue ;; esac
        ROW_GLOB+=("$glob") ROW_WHY+=("${why:-(no reason given)}") ROW_LINE+=("$n") ROW_USED+=(0)
    done <"$file"
}
load_explanations

# explained ID: the index of the first row whose glob matches ID, else 1.
explained() {
    local i
    for i in "${!ROW_GLOB[@]}"; do
        # shellcheck disable=SC2053
        [[ $1 == ${ROW_GLOB[$i]} ]] && { EXPLAINED_BY=$i; return 0; }
    done
    return 1
}

DIFFS_SHOWN=0
compare_phase() {
    local id f g tasks lines rc
    while IFS= read -r id; do
        f=$CMP/ref/$PHASE.$(printf '%s' "$id" | tr -c 'a-zA-Z0-9=,.+-' '_')
        g=$CMP/new/${f#"$CMP/ref/"}
        rc=$(sed -n '1s/^exit //p' "$f")
        tasks=$(sed '1,/^--- tasks/d' "$f" | sed -n 's/^task \([0-9]*\): local=.*/\1/p' | grep -c .)
        lines=$(sed -n '/^--- stderr/,/^--- tasks/p' "$f" | grep -c 'numaguard')
        if cmp -s "$f" "$g"; then
            ok 0 "slurm compat $PHASE/$id: identical to $REF_NAME (exit $rc, $tasks tasks, $lines numaguard lines)"
        elif explained "slurm/$PHASE/$id"; then
            ROW_USED[EXPLAINED_BY]=1
            ok 0 "slurm compat $PHASE/$id: differs from $REF_NAME, explained"
            echo "# explained: slurm/$PHASE/$id: ${ROW_WHY[$EXPLAINED_BY]}"
        else
            ok 1 "slurm compat $PHASE/$id: differs from $REF_NAME ($(cat "$f.cmd"))"
            # 40 diff lines for the first 8 differing commands, 10 after that.
            DIFFS_SHOWN=$((DIFFS_SHOWN + 1))
            diff -u --label "$REF_NAME plugin" --label "this tree's plugin" "$f" "$g" |
                head -n "$([ $DIFFS_SHOWN -le 8 ] && echo 40 || echo 10)" | sed 's/^/#   /'
        fi
    done <"$CMP/ref/$PHASE.ids"
}

# A slurm/ row that explained nothing is stale.
check_stale() {
    local i stale=()
    for i in "${!ROW_GLOB[@]}"; do
        [ "${ROW_USED[$i]}" = 1 ] ||
            stale+=("# stale (line ${ROW_LINE[$i]}): ${ROW_GLOB[$i]}	${ROW_WHY[$i]}  -- matches no differing case; remove it")
    done
    ok ${#stale[@]} "slurm compat: differences.tsv: ${#ROW_GLOB[@]} slurm/ row(s), ${#stale[@]} stale"
    [ ${#stale[@]} -eq 0 ] || printf '%s\n' "${stale[@]}"
}

# --- XE8640 (4 H100, SNC4, 224 CPUs), inflated: the plan and its lines ----
xe_cmds() {
    c gpt1-local-omp -- --exclusive -n 4 -c 56 --gpus-per-task=1 --numa-policy=local,verbose --omp-guard
    c gpt1-local-partial -- -n 4 --gpus-per-task=1 --numa-policy=local,verbose --omp-guard
    c n8-c8-gres4-omp2 -- -n 8 -c 8 --gres=gpu:4 --numa-policy=local,verbose --omp-guard=2
    c n2-gres4-shared -- --exclusive -n 2 -c 112 --gres=gpu:4 --numa-policy=local,verbose
    c gpt2 -- --exclusive -n 2 -c 112 --gpus-per-task=2 --numa-policy=local,verbose
    c map_gpu-3210-prefer -- --exclusive -n 4 -c 56 --gres=gpu:4 --gpu-bind=map_gpu:3,2,1,0 \
        --numa-policy=prefer,verbose
    c n8-map_gpu-interleave -- --exclusive -n 8 -c 28 --gres=gpu:4 --gpu-bind=map_gpu:0,1,2,3 \
        --numa-policy=interleave,verbose
    c weighted-all-cpuless -- --exclusive -n 4 -c 56 --gpus-per-task=1 \
        --numa-policy=weighted:all,cpuless,verbose
    c interleave-nodes -- -n 2 -c 16 --gpus-per-task=1 --numa-policy=interleave:0-3,verbose
    c none-omp -- --exclusive -n 4 -c 56 --gpus-per-task=1 --numa-policy=none,verbose --omp-guard
    c smt-omp-bind -- --exclusive -n 4 -c 56 --gpus-per-task=1 --numa-policy=local,smt,verbose \
        --omp-guard=auto,bind
    c cpu-only -- -n 3 -c 16 --numa-policy=local,verbose --omp-guard=4
    c cpu-only-exclusive -- --exclusive -n 7 -c 32 --numa-policy=prefer,verbose
    c no-option -- -n 2 -c 4
    c omp-kept OMP_NUM_THREADS=3 -- -n 2 -c 8 --numa-policy=local,verbose --omp-guard
    c omp-force OMP_NUM_THREADS=3 -- -n 2 -c 8 --numa-policy=local,verbose --omp-guard=force
    c env-policy "$ENVPOL=prefer,verbose" -- -n 2 -c 8 --gpus-per-task=1
    c env-policy-invalid "$ENVPOL=bogus" -- -n 2
    # The internal variable skips srun's check (srun refuses the SPANK one).
    c internal-policy-invalid-strict _SLURM_SPANK_OPTION_numaguard_numa_policy=bogus,strict -- -n 2
    # A CPU-only step with the job's SLURM_JOB_GPUS in its environment (as
    # every step of an sbatch --gres=gpu job has it): no GPU for the step.
    c cpu-step-job-gpus SLURM_JOB_GPUS=0,1 -- -n 2 -c 16 --gres=none --numa-policy=local,verbose
    c policy-invalid -- -n 2 --numa-policy=local,bogus
    c omp-invalid -- -n 2 --numa-policy=local --omp-guard=0
    c policy-help -- -n 1 --numa-policy=help
}
xe=$NGT_TOPO/xe8640-4xh100-spr8480-snc4.xml
NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$xe NGC_GPUS=auto
run_phase xe8640 xe_cmds "topology=$xe"

# --- JUWELS Booster (4 A100, 4 HDR HCAs), inflated: --net-affinity ---------
juwels_cmds() {
    c net-auto -- --exclusive -n 4 -c 24 --gpus-per-task=1 --numa-policy=local,verbose --net-affinity
    c net-2 -- --exclusive -n 4 -c 24 --gpus-per-task=1 --numa-policy=local,verbose --net-affinity=2
    c net-alone -- --exclusive -n 4 -c 24 --gpus-per-task=1 --net-affinity
    c net-env-nccl-per-rank "$ENVNET=auto,nccl-per-rank" -- --exclusive -n 4 -c 24 --gpus-per-task=1 \
        --numa-policy=local,verbose
    c net-user-kept UCX_NET_DEVICES=mlx5_3:1 NCCL_IB_HCA=mlx5 -- --exclusive -n 4 -c 24 \
        --gpus-per-task=1 --numa-policy=local,verbose --net-affinity=auto
    c net-user-force UCX_NET_DEVICES=mlx5_3:1 -- --exclusive -n 4 -c 24 --gpus-per-task=1 \
        --numa-policy=local,verbose --net-affinity=auto,force
    c net-cpu-only -- -n 2 -c 12 --numa-policy=local,verbose --net-affinity --omp-guard
    c net-invalid -- -n 1 --net-affinity=0
}
juwels=$NGT_TOPO/juwels-booster-4xa100-epyc7402-nps4.xml
NGC_NODES=1 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$juwels NGC_GPUS=auto
run_phase juwels juwels_cmds "topology=$juwels"
# The admin's defaults and deny list (plugstack.conf arguments).
juwels_admin_cmds() {
    c default-net-deny -- --exclusive -n 4 -c 24 --gpus-per-task=1 --numa-policy=local,verbose
    c default-net-off -- --exclusive -n 4 -c 24 --gpus-per-task=1 --numa-policy=local --net-affinity=off
}
run_phase juwels-admin juwels_admin_cmds \
    "topology=$juwels default_net_affinity=auto net_deny=mlx5_0 default_omp_guard=auto"

# --- this host, task/affinity: the kernel's view inside each task ----------
# The slurmd start writes the topology cache (under /run: a cache below /tmp
# is never trusted); each plugin writes its own, the steps read it.
ncpu=$(slurmd -C | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p')
cache=$(mktemp -d /run/ng-compat-cache.XXXXXX)
trap 'rm -rf "$cache"; ngc_teardown' EXIT
clear_cache() { rm -rf "${cache:?}"/*; }
host_cmds() {
    c local -- -n "$ncpu" --numa-policy=local,verbose --omp-guard
    c one-task-all-cpus -- -n 1 -c "$ncpu" --numa-policy=local,verbose
    c prefer -- -n 1 -c "$ncpu" --numa-policy=prefer,verbose
    c interleave -- -n 1 -c "$ncpu" --numa-policy=interleave,verbose --omp-guard=2,bind
    c weighted -- -n 1 -c "$ncpu" --numa-policy=weighted,verbose
    c none -- -n "$ncpu" --numa-policy=none,verbose --omp-guard=2
    c no-option -- -n "$ncpu"
    if [ "$ncpu" -ge 2 ]; then
        c map_cpu-1,0 -- -n 2 --cpu-bind=map_cpu:1,0 --numa-policy=local,verbose --omp-guard
    fi
    c oversubscribed -- -n $((ncpu * 2)) --overcommit --numa-policy=local,verbose --omp-guard
}
NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0
PHASE_PRE=clear_cache run_phase host host_cmds "topology_cache=$cache/topocache"
ngc_wait_idle 20
is "$(ngc_node_states)" idle "slurm compat: node idle at the end"
check_stale
rm -rf "$cache"
ngt_done
