#!/bin/sh
# numaguard doctor as Slurm's HealthCheckProgram (tools/numaguard-healthcheck)
# on the private cluster: two slurmd (ng1, ng2) on an inflated g4dn node
# with 8 fake NVIDIA GPUs, HealthCheckInterval=5, an nvidia-smi stand-in
# that never answers on the health check's PATH (a hung driver).
#   - while every node is correct, both stay IDLE (doctor's WARNs never drain);
#   - ng2's gres.conf record names a device file of its own (a second name of
#     /dev/nvidia0: the two slurmd share one fake /dev); once that file is
#     gone (a GPU the driver dropped while slurmd runs; slurmd itself only
#     checks its device files when it starts, and refuses to start without
#     them), ng2 goes DRAIN with doctor's first FAIL as the reason, and ng1
#     stays IDLE;
#   - run by hand as ng1's slurmd would, with --node ng2 and --slurm-conf
#     (no SLURM_CONF): ng2, the node doctor judged, goes DRAIN with doctor's
#     reason through that slurm.conf, ng1 is unchanged;
#   - the governor is configured (default_omp_guard=adaptive) but not
#     installed: a WARN (tasks run without it), never a drain;
#   - ng1's nvidia-smi hangs (a stand-in that never answers, switched on
#     per node): ng1 goes DRAIN naming nvidia-smi, ng2 stays IDLE;
#   - the health check SIGKILLed while nvidia-smi hangs, the script alone
#     and its whole process group, and slurmd stopped in the middle of a
#     check: nothing the check started is left (each run's processes carry
#     NG_TEST_TAG, so only this suite's are counted);
#   - every health check run ends, in bounded time.
# Every wait is bounded.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-health plugin

TOPO=$NGT_TOPO/g4dn-metal-8xt4.xml
HC=$NGC_DIR/healthcheck
LOG=$NGC_DIR/healthcheck.log
mkdir -p "$NGC_DIR/bin"
cp "$NGT_TOP/tests/fakefs/nvidia-smi" "$NGC_DIR/bin/"

# ng2's own name for GPU 0, made with the fake devices (cluster.sh).
eval "ngt_orig_$(declare -f ngc_make_fake_gpus)"
ngc_make_fake_gpus() {
    ngt_orig_ngc_make_fake_gpus "$@" || return 1
    mknod "$NGC_FSROOT/dev/nvidia-ng2" c 195 0
}

# slurmd runs the health check with an empty environment but
# SLURMD_NODENAME: the wrapper names the cluster's files.
# nvidia-smi hangs on a node while $NGC_DIR/hang.<node> exists; every
# process of a run carries NG_TEST_TAG=$NGC_DIR/hc-<node>. The governor is
# looked for where none is (a machine with one installed stays the same).
GOV=$NGC_DIR/no-governor/libnumaguard-omp.so
cat >"$HC" <<EOF
#!/bin/sh
export SLURM_CONF=$NGC_CONF NUMAGUARD=$NGT_CLI NG_TEST_TAG=$NGC_DIR/hc-\$SLURMD_NODENAME
[ -e $NGC_DIR/hang.\$SLURMD_NODENAME ] && export NG_FAKE_SMI_HANG=1
export PATH=$NGC_DIR/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
t0=\$(date +%s)
echo "start \$SLURMD_NODENAME \$t0" >>$LOG
$NGT_TOP/tools/numaguard-healthcheck --slurm-conf $NGC_CONF --timeout 3 --governor $GOV 2>>$LOG.err
rc=\$?
echo "end \$SLURMD_NODENAME \$t0 \$(( \$(date +%s) - t0 )) \$rc" >>$LOG
EOF
chmod 755 "$HC"

NGC_NODES=2 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$TOPO NGC_GPUS=auto
NGC_GRES_TEMPLATE="NodeName=ng1 Name=gpu File=@DEV@/nvidia[0-7]
NodeName=ng2 Name=gpu File=@DEV@/nvidia-ng2,@DEV@/nvidia[1-7]"
NGC_PLUGSTACK=$(ngt_plugstack "topology=$TOPO default_omp_guard=adaptive")
NGC_SLURM_EXTRA="HealthCheckProgram=$HC
HealthCheckInterval=5"
ngt_cluster

state() { sinfo -h -n "$1" -o '%t' 2>/dev/null | head -1; }
reason() { scontrol show node "$1" 2>/dev/null | sed -n 's/^ *Reason=\(.*\) \[.*\]$/\1/p'; }
# tagged TAG: processes carrying NG_TEST_TAG=TAG (a health check run's).
tagged() { grep -lzxF "NG_TEST_TAG=$1" /proc/[0-9]*/environ 2>/dev/null | wc -l; }
# runs NODE: health check runs of NODE that ended.
runs() { grep -c "^end $1 " "$LOG" 2>/dev/null; }
# wait_runs NODE N SECONDS: until NODE has ended N runs.
wait_runs() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        [ "$(runs "$1")" -ge "$2" ] && return 0
        sleep 0.1
    done
    return 1
}

# --- a correct cluster: both nodes stay idle ------------------------------------
wait_runs ng1 2 40
ok $? "ng1: two health check runs ended within 40 s ($(runs ng1))"
wait_runs ng2 2 40
ok $? "ng2: two health check runs ended within 40 s ($(runs ng2))"
is "$(state ng1) $(state ng2)" "idle idle" "correct nodes stay IDLE (doctor's WARNs never drain)"
out=$(SLURMD_NODENAME=ng1 PATH="$NGC_DIR/bin:$PATH" NG_FAKE_SMI_HANG=1 "$NGT_CLI" doctor \
    --slurm-conf "$NGC_CONF" --timeout 3 --governor "$GOV")
rc=$?
is "$rc" 0 "doctor on ng1 by hand: exit 0 (a hung nvidia-smi is a WARN when run by hand)"
like "$out" "^WARN plugin.governor: the governor $GOV is not installed: No such file or directory \\(plugstack.conf: default_omp_guard=adaptive\\) \\| placement: every task of the default --omp-guard=adaptive warns and runs without the governor" \
    "the governor configured but missing: a WARN (the nodes stayed IDLE above)"
like "$out" "^OK   slurm.slurmd_gres: slurmd -G and the plugin give the same 8 GPUs the same gres indices$" \
    "ng1: the real slurmd -G and the plugin agree on the gres order"
like "$out" "^WARN gpu.nvidia_smi: nvidia-smi -q: did not answer within 3 s \\(killed with its process group\\)" \
    "ng1: the hung nvidia-smi is a WARN"
diag "ng1 by hand: $(printf '%s\n' "$out" | tail -1)"

# --- by hand, as ng1's slurmd runs it, judging ng2 (--node, --slurm-conf) ---------
# No SLURM_CONF in the environment: scontrol reaches this cluster only
# through the --slurm-conf doctor was given. ng2 (the node doctor judged)
# goes DRAIN with doctor's reason; ng1 (whose SLURMD_NODENAME it has) stays.
bad=$NGC_DIR/gres.ng2-gone.conf
printf 'NodeName=ng2 Name=gpu File=/dev/nvidia-gone,/dev/nvidia[1-7]\n' >"$bad"
want2="numaguard doctor: slurm.gres_devices: gres.conf names $NGC_FSROOT/dev/nvidia-gone (gres index 0), which does not exist: No such file or directory"
env -i SLURMD_NODENAME=ng1 NUMAGUARD="$NGT_CLI" \
    PATH="$NGC_DIR/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    /bin/sh "$NGT_TOP/tools/numaguard-healthcheck" --node ng2 --slurm-conf "$NGC_CONF" \
    --gres-conf "$bad" --timeout 3 2>"$NGC_DIR/hand.err"
is "$?" 0 "by hand with --node ng2 --slurm-conf (no SLURM_CONF): the drain succeeds"
is "$(state ng2)|$(reason ng2)" "drain|$want2" "--node ng2: ng2, the node doctor judged, is DRAIN with doctor's reason"
is "$(state ng1)|$(reason ng1)" "idle|" "ng1, whose SLURMD_NODENAME the run had, is unchanged"
grep -q "numaguard-healthcheck: draining ng2: $want2" "$NGC_DIR/hand.err"
ok $? "the health check logged the drain of ng2"
scontrol update nodename=ng2 state=resume
for ((i = 0; i < 100; i++)); do
    [ "$(state ng2)" = idle ] && break
    sleep 0.1
done
is "$(state ng2)" idle "ng2 resumed (its own health check finds nothing to drain)"

# --- ng2 loses a device file: DRAIN with doctor's reason -------------------------
rm -f "$NGC_FSROOT/dev/nvidia-ng2"
want="numaguard doctor: slurm.gres_devices: gres.conf names $NGC_FSROOT/dev/nvidia-ng2 (gres index 0), which does not exist: No such file or directory"
for ((i = 0; i < 600; i++)); do
    [ "$(state ng2)" = drain ] && break
    sleep 0.1
done
is "$(state ng2)" drain "ng2 drained within 60 s of losing its device file"
is "$(reason ng2)" "$want" "ng2's reason is doctor's first FAIL"
n1=$(runs ng1)
wait_runs ng1 $((n1 + 2)) 40
ok $? "ng1: two more health check runs ended after ng2 drained"
is "$(state ng1)" idle "the correct node ng1 stays IDLE"

# --- ng2 back; ng1's nvidia-smi hangs: ng1 DRAIN naming it, ng2 IDLE ---------------
mknod "$NGC_FSROOT/dev/nvidia-ng2" c 195 0
n2=$(runs ng2)
wait_runs ng2 $((n2 + 2)) 40   # no run of ng2 that began without the file is left
scontrol update nodename=ng2 state=resume
for ((i = 0; i < 100; i++)); do [ "$(state ng2)" = idle ] && break; sleep 0.1; done
is "$(state ng2)" idle "ng2 resumed with its device file back"
touch "$NGC_DIR/hang.ng1"
want1="numaguard doctor: gpu.nvidia_smi: nvidia-smi -q: did not answer within 3 s (killed with its process group)"
for ((i = 0; i < 600; i++)); do [ "$(state ng1)" = drain ] && break; sleep 0.1; done
is "$(state ng1)|$(reason ng1)" "drain|$want1" "ng1 with a hung nvidia-smi: DRAIN, the reason names the tool"
n2=$(runs ng2)
wait_runs ng2 $((n2 + 2)) 40
ok $? "ng2: two more health check runs ended"
# The state alone: Slurm 24.11 keeps the reason of ng2's earlier drain
# after `state=resume` (22.05 and 26.05 clear it).
is "$(state ng2)" idle "the correct node ng2 stays IDLE"

# --- killed mid-check: the script alone, its process group; slurmd stopped --------
# As slurmd starts it: a group of its own (setsid), ng1's nvidia-smi hung.
for how in alone group; do
    tag=$NGC_DIR/kill-$how
    env -i SLURMD_NODENAME=ng1 NUMAGUARD="$NGT_CLI" NG_FAKE_SMI_HANG=1 NG_TEST_TAG="$tag" \
        PATH="$NGC_DIR/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        setsid /bin/sh "$NGT_TOP/tools/numaguard-healthcheck" --slurm-conf "$NGC_CONF" \
        --timeout 30 --governor "$GOV" >/dev/null 2>&1 &
    pid=$!
    for ((i = 0; i < 100; i++)); do [ "$(tagged "$tag")" -ge 5 ] && break; sleep 0.1; done
    n=$(tagged "$tag")
    if [ $how = alone ]; then kill -KILL "$pid"; else kill -KILL -- "-$pid"; fi
    wait "$pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do [ "$(tagged "$tag")" = 0 ] && break; sleep 0.1; done
    is "$(tagged "$tag")" 0 "health check SIGKILLed ($how) while nvidia-smi hangs ($n processes): none left"
done
# slurmd ng1 stopped while its own health check runs (nvidia-smi hangs 3 s).
tag=$NGC_DIR/hc-ng1
for ((i = 0; i < 200; i++)); do [ "$(tagged "$tag")" -ge 5 ] && break; sleep 0.1; done
n=$(tagged "$tag")
kill -TERM "${NGC_SLURMD_PIDS[0]}"
for ((i = 0; i < 100; i++)); do kill -0 "${NGC_SLURMD_PIDS[0]}" 2>/dev/null || break; sleep 0.1; done
for ((i = 0; i < 100; i++)); do [ "$(tagged "$tag")" = 0 ] && break; sleep 0.1; done
is "$(tagged "$tag")" 0 "slurmd ng1 stopped during its health check ($n processes then): none left within 10 s"

# --- bounded: every run ended, none took long -----------------------------------
starts=$(grep -c '^start ' "$LOG")
ends=$(grep -c '^end ' "$LOG")
slow=$(awk '$1 == "end" && $4 > 30' "$LOG" | wc -l)
max=$(awk '$1 == "end" && $4 > m { m = $4 } END { print m + 0 }' "$LOG")
ok "$([ $((starts - ends)) -le 3 ] && [ "$ends" -ge 6 ]; echo $?)" \
    "every health check run ended ($ends of $starts started; at most one per node still running, one cut by slurmd's stop)"
is "$slow" 0 "no run took more than 30 s (longest ${max} s; nvidia-smi hangs, slurmd -G waits for the file)"
grep -q "numaguard-healthcheck: draining ng2: $want" "$LOG.err"
ok $? "the health check logged the drain"
ngt_done
