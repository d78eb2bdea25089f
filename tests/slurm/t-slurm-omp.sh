#!/bin/sh
# --omp-guard=adaptive through a real srun: the plugin's test build
# (numaguard-faults.so) with test_omp_preload= naming this build's governor
# (the shipped plugin preloads only LIBDIR/numaguard/libnumaguard-omp.so;
# t-srun checks that path with the installed package). In the task:
# LD_PRELOAD appended to the user's, NUMAGUARD_OMP_CORES, and the team
# sizes each region reports (gcc and clang probes); the admin's
# default_omp_guard=adaptive; a governor root does not own is refused.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-omp plugin
GOV=$NGT_BUILD/libnumaguard-omp.so
FSO=$NGT_BUILD/numaguard-faults.so
[ -f "$GOV" ] && [ -f "$FSO" ] && [ -x "$NGT_BUILD/tests/clang/omp_teams" ] ||
    { skip_all "governor, numaguard-faults.so or the OpenMP probes not built (make all tests)"; }
# The plugin preloads only a governor in directories root's alone: this
# build's, or a copy of it where the build lies under /tmp
# (tests/lib/governor.sh).
. "$NGT_TOP/tests/lib/governor.sh"
GDIR=$(ng_stage_governor "$NGT_BUILD")
[ -n "$GDIR" ] || skip_all "no directory root's alone holds this build's governor (a checkout under /tmp with no trusted /run, /var/lib or /root to copy it to)"
# (the copy goes with the cluster: the EXIT trap ngc_init installed, then it)
[ "$GDIR" = "$NGT_BUILD" ] || trap 'ngc_teardown; rm -rf "$GDIR"' EXIT
GOV=$GDIR/libnumaguard-omp.so
n=$(nproc)
NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0
NGC_PLUGSTACK="required $FSO test_omp_preload=$GOV"
ngt_cluster
show='echo "PRE=${LD_PRELOAD-unset} CORES=${NUMAGUARD_OMP_CORES-unset} OMP=$OMP_NUM_THREADS"'

ngc_wait_idle 10
out=$(LD_PRELOAD=/lib/$NG_MA/libm.so.6 ngc_srun -n 1 -c "$n" --omp-guard=adaptive sh -c "$show" 2>"$NGT_OUT/e1")
is "$out" "PRE=/lib/$NG_MA/libm.so.6:$GOV CORES=$n OMP=$n" \
    "srun --omp-guard=adaptive: governor appended to the user's LD_PRELOAD, NUMAGUARD_OMP_CORES=$n"
for p in "$NGT_BUILD/tests/omp_teams" "$NGT_BUILD/tests/clang/omp_teams"; do
    ngc_wait_idle 10
    # (NUMAGUARD_OMP_LOAD=0: a lone caller's cores assumed quiet, see
    # tests/e2e/t-omp-adaptive.sh)
    one=$(NUMAGUARD_OMP_LOAD=0 ngc_srun -n 1 -c "$n" --omp-guard=adaptive "$p" 1 100 2>/dev/null | sed -n 's/^all \([0-9-]*\) .*/\1/p')
    is "$one" "$n-$n" "$(basename "$(dirname "$p")")/omp_teams: one caller in the task: all $n cores in each region"
    ngc_wait_idle 10
    # a 2 s window: pool threads descheduled between regions stay counted
    ones=$(NUMAGUARD_OMP_WINDOW_MS=2000 ngc_srun -n 1 -c "$n" --omp-guard=adaptive "$p" 16 100 2>/dev/null | sed -n 's/^ones \([0-9]*\) of .*/\1/p')
    ok $([ "${ones:-0}" -ge 1440 ]; echo $?) \
        "$(basename "$(dirname "$p")")/omp_teams: 16 callers share $n cores: teams of 1 in $ones of 1600 regions (>= 90%)"
    ngc_wait_idle 10
    # torch's pattern: each caller sets omp_set_num_threads(OMP_NUM_THREADS),
    # the count the plugin exported: the default's echo, governed
    ones=$(NUMAGUARD_OMP_WINDOW_MS=2000 ngc_srun -n 1 -c "$n" --omp-guard=adaptive "$p" 8 100 setnum "$n" 2>/dev/null | sed -n 's/^ones \([0-9]*\) of .*/\1/p')
    ok $([ "${ones:-0}" -ge 720 ]; echo $?) \
        "$(basename "$(dirname "$p")")/omp_teams: 8 callers with omp_set_num_threads($n) each (the task's OMP_NUM_THREADS): teams of 1 in $ones of 800 regions (>= 90%)"
done
ngc_wait_idle 10
out=$(ngc_srun -n 1 --numa-policy=local,verbose --omp-guard=adaptive true 2>&1)
like "$out" "threads [0-9]+ \(adaptive: teams shared by their callers\)" "verbose line says adaptive"

# The admin's default.
NGC_PLUGSTACK="required $FSO test_omp_preload=$GOV default_omp_guard=adaptive"
printf '%s\n' "$NGC_PLUGSTACK" >"$NGC_PLUGSTACK_CONF"
ngc_wait_idle 10
out=$(ngc_srun -n 1 sh -c "$show" 2>"$NGT_OUT/e2")
is "$out" "PRE=$GOV CORES=1 OMP=1" "default_omp_guard=adaptive: a job without the option gets the governor"
ngc_wait_idle 10
out=$(ngc_srun -n 1 --omp-guard=off sh -c "$show" 2>"$NGT_OUT/e3")
is "$out" "PRE=unset CORES=unset OMP=" "... --omp-guard=off opts out"

# A governor root does not own: refused, the task told.
bad=$NGC_DIR/bad
mkdir -p "$bad" && chmod 755 "$bad" && cp "$GOV" "$bad/" && chown 65534 "$bad/libnumaguard-omp.so"
printf '%s\n' "required $FSO test_omp_preload=$bad/libnumaguard-omp.so" >"$NGC_PLUGSTACK_CONF"
ngc_wait_idle 10
out=$(ngc_srun -n 1 --omp-guard=adaptive sh -c "$show" 2>"$NGT_OUT/e4")
is "$out" "PRE=unset CORES=1 OMP=1" "a governor owned by uid 65534: not preloaded, auto's variables"
like "$(cat "$NGT_OUT/e4")" "governor $bad/libnumaguard-omp.so not used \(not owned by root, or writable by others\)" \
    "... and the task is told why"
[ "$GDIR" = "$NGT_BUILD" ] || rm -rf "$GDIR"   # ngt_done clears the EXIT trap
ngt_done
