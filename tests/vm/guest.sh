#!/bin/sh
# Runs INSIDE the NUMA test VM (as /ngvm/run.sh, root, host / read-only
# under a tmpfs overlay). Writes TAP lines without numbers to /ngvm/tap
# ("ok - ..." / "not ok - ..."); t-vm.sh numbers and prints them.
# Settings come from /ngvm/env: REPO, BUILD (absolute), FLAVOUR (612|61),
# PHASES, PLUGIN.
# Phases:
#   raw       kernel facts and page placement with numactl/probe only
#   slurm     slurmctld + slurmd (auth/none) with the two DRM render nodes
#             as gres GPUs; Slurm's own placement recorded as the baseline
#   plugin    the numaguard SPANK plugin's placements (needs $BUILD/numaguard.so)
#   cgroup    task/cgroup with ConstrainCores/ConstrainDevices on cgroup v2
#   fallback  6.1 kernel: weighted interleave unsupported
#   widemem   a widened task's memory (bind to its GPU's and cores' nodes)
#             filling its GPU's node: placed on both, not OOM-killed
#   jobwide   check --job across two slurmd (vm1, vm2) on cgroup v2 with
#             task/cgroup, a job of uid 65534, then with /proc hidepid=2
#   jobwide26 the same with Debian sid's Slurm 26.05 (its default SLUID
#             cgroup names): this script again, chrooted into the sid
#             root SID_ROOT, with numaguard built there (SID_BUILD)
. /ngvm/env
# Inside the sid root (phase jobwide26 runs this script again there):
# its phases, build and Slurm come from the caller; the TAP file is kept.
if [ -n "${NGVM_INNER:-}" ]; then
    PHASES=$NGVM_INNER BUILD=$SID_BUILD PLUGIN=$SID_BUILD/numaguard.so
fi
TAP=/ngvm/tap
LOG=/ngvm/guest.log
[ -n "${NGVM_INNER:-}" ] || : >"$TAP"
exec >>"$LOG" 2>&1
cd "$REPO" || exit 1
PROBE=$BUILD/tests/probe            # BUILD is absolute
PLUGIN=${PLUGIN:-$BUILD/numaguard.so}
NGS=/tmp/ngs                      # Slurm's files (guest tmpfs)
NGVM_TMP=/tmp/ngvm; mkdir -p $NGVM_TMP
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
echo "guest: $(uname -r) phases=$PHASES"

ok() { echo "ok - $*" >>"$TAP"; }
notok() { echo "not ok - $*" >>"$TAP"; }
skip() { echo "ok - $1 # SKIP $2" >>"$TAP"; }
diag() { echo "# $*" >>"$TAP"; }
# check DESC CMD...: ok when CMD succeeds.
check() { d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# Value of KEY in a probe line ("" when absent).
kv() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
# Pages on node N of a probe line.
pg() { kv "$1" pages | cut -d, -f$(($2 + 1)); }
# The probe line of rank R in a file of srun output.
rank_line() { grep "^probe .* rank=$2 " "$1" | head -1; }
# near A B PCT: |A-B| <= PCT% of TOTAL (4th arg).
near() { awk -v a="$1" -v b="$2" -v p="$3" -v t="$4" 'BEGIN{d=a-b; if(d<0)d=-d; exit !(a!="" && d<=t*p/100)}'; }
# at_least A PCT TOTAL: A >= PCT% of TOTAL.
at_least() { awk -v a="$1" -v p="$2" -v t="$3" 'BEGIN{exit !(a!="" && a>=t*p/100)}'; }
TOTAL=16384                        # 64 MiB / 4 KiB pages

node_cpus() { cat "/sys/devices/system/node/node$1/cpulist"; }
# within LIST1 LIST2: every CPU of cpulist LIST1 is in LIST2 (LIST1 non-empty).
within() {
    awk -v a="$1" -v b="$2" 'function ex(s, set,   n, i, k, p, q, j) {
        n = split(s, p, ","); for (i = 1; i <= n; i++) { k = split(p[i], q, "-"); if (k == 1) q[2] = q[1]
        for (j = q[1]; j <= q[2]; j++) set[j] = 1 } }
        BEGIN { ex(a, A); ex(b, B); m = 0; for (x in A) { m++; if (!(x in B)) exit 1 }; exit m == 0 }'
}
# The NUMA node of a DRM device file (/dev/dri/renderD128 -> 0 or 1).
dev_node() { cat "/sys/class/drm/$(basename "$1")/device/numa_node"; }
dev_bus() { basename "$(readlink -f "/sys/class/drm/$(basename "$1")/device")"; }

# ---------------------------------------------------------------- raw
phase_raw() {
    t0=$(uptime_s)
    check "kernel $FLAVOUR: 3 NUMA nodes online" [ "$(cat /sys/devices/system/node/online)" = 0-2 ]
    check "node 0 CPUs 0-1, node 1 CPUs 2-3, node 2 CPU-less" \
        [ "$(node_cpus 0)|$(node_cpus 1)|$(node_cpus 2)" = "0-1|2-3|" ]
    check "distances 10 20 30 / 20 10 40 / 30 40 10" \
        [ "$(cat /sys/devices/system/node/node*/distance | tr '\n' ' ')" = "10 20 30 20 10 40 30 40 10 " ]
    # The GPUs: virtio-gpu behind the expander bridges, reached like a real
    # GPU from its DRM render node (char dev -> /sys/dev/char -> PCI).
    for r in /dev/dri/renderD128 /dev/dri/renderD129; do
        maj=$(stat -c %t "$r"); min=$(stat -c %T "$r")
        bus=$(basename "$(readlink -f "/sys/dev/char/$((0x$maj)):$((0x$min))/device")")
        diag "$r -> $bus numa_node $(cat /sys/bus/pci/devices/$bus/numa_node) local_cpulist $(cat /sys/bus/pci/devices/$bus/local_cpulist)"
    done
    check "GPU 0000:41:00.0 on node 0 (local_cpulist 0-1)" \
        [ "$(cat /sys/bus/pci/devices/0000:41:00.0/numa_node) $(cat /sys/bus/pci/devices/0000:41:00.0/local_cpulist)" = "0 0-1" ]
    check "GPU 0000:81:00.0 on node 1 (local_cpulist 2-3)" \
        [ "$(cat /sys/bus/pci/devices/0000:81:00.0/numa_node) $(cat /sys/bus/pci/devices/0000:81:00.0/local_cpulist)" = "1 2-3" ]
    check "both GPUs have a DRM render node" \
        [ -d /sys/bus/pci/devices/0000:41:00.0/drm ] && [ -d /sys/bus/pci/devices/0000:81:00.0/drm ]

    # The library's own view of this machine (what the plugin will use).
    if [ -x "$BUILD/numaguard" ]; then
        "$BUILD/numaguard" topo >$NGVM_TMP/topo.txt 2>&1
        sed 's/^/#   topo: /' $NGVM_TMP/topo.txt >>"$TAP"
        check "numaguard topo: GPU 0000:41:00.0 on node 0 (cpus 0-1) and 0000:81:00.0 on node 1 (cpus 2-3)" \
            eval 'grep -Eq "0000:41:00.0 .*numa 0 +cpus 0-1( |$)" $NGVM_TMP/topo.txt &&
                  grep -Eq "0000:81:00.0 .*numa 1 +cpus 2-3( |$)" $NGVM_TMP/topo.txt'
        check "numaguard topo: node 2 is CPU-less" grep -Eq "^ +2 .*no CPUs" $NGVM_TMP/topo.txt
    fi

    l=$(numactl --cpunodebind=1 --membind=1 "$PROBE" -t raw-bind1)
    diag "$l"
    check "raw numactl bind 1: cpus 2-3, policy bind, all pages on node 1 ($(kv "$l" pages))" \
        [ "$(kv "$l" cpus) $(kv "$l" policy) $(kv "$l" pages)" = "2-3 bind 0,$TOTAL,0" ]
    l=$(numactl --membind=2 "$PROBE" -t raw-bind2)
    check "raw numactl bind 2 (memory-only node): all pages on node 2 ($(kv "$l" pages))" \
        [ "$(kv "$l" pages)" = "0,0,$TOTAL" ]
    l=$(numactl --interleave=0,1 "$PROBE" -t raw-il01)
    diag "$l"
    check "raw interleave 0,1: even split, none on node 2 ($(kv "$l" pages))" \
        eval 'near "$(pg "$l" 0)" 8192 5 $TOTAL && near "$(pg "$l" 1)" 8192 5 $TOTAL && [ "$(pg "$l" 2)" = 0 ]'
    l=$(numactl --interleave=all "$PROBE" -t raw-ilall)
    check "raw interleave all: thirds ($(kv "$l" pages))" \
        eval 'near "$(pg "$l" 0)" 5461 5 $TOTAL && near "$(pg "$l" 1)" 5461 5 $TOTAL && near "$(pg "$l" 2)" 5461 5 $TOTAL'
    l=$(numactl --preferred-many=1,2 "$PROBE" -t raw-pm)
    check "raw preferred-many 1,2: policy preferred_many, pages on node 1 ($(kv "$l" pages))" \
        eval '[ "$(kv "$l" policy)" = preferred_many ] && at_least "$(pg "$l" 1)" 99 $TOTAL'
    wi=/sys/kernel/mm/mempolicy/weighted_interleave
    if [ "$FLAVOUR" = 612 ]; then
        echo 3 >$wi/node0 && echo 1 >$wi/node1
        l=$("$PROBE" -t raw-w -w 0-1)
        diag "$l"
        check "raw weighted 0-1 with weights 3:1: 75%/25% ($(kv "$l" pages))" \
            eval '[ "$(kv "$l" setpolicy)" = ok ] && near "$(pg "$l" 0)" 12288 5 $TOTAL && near "$(pg "$l" 1)" 4096 5 $TOTAL && [ "$(pg "$l" 2)" = 0 ]'
    else
        l=$("$PROBE" -t raw-w -w 0-1)
        diag "$l"
        check "raw weighted on $FLAVOUR: set_mempolicy fails with EINVAL, no weights in sysfs" \
            eval '[ "$(kv "$l" setpolicy)" = EINVAL ] && [ ! -e $wi ]'
    fi
    diag "raw phase $(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN{printf "%.1f", b-a}')s"
}

# ---------------------------------------------------------------- slurm
# Render nodes sorted by PCI bus id: gres GPU index i = i-th GPU in bus
# order, as an admin lists them (the DRM minors come in another order).
gres_files() {
    for r in /dev/dri/renderD*; do echo "$(dev_bus "$r") $r"; done | sort | cut -d' ' -f2
}

slurm_conf() {
    mkdir -p $NGS/state $NGS/spool
    chmod 755 $NGS
    cat >$NGS/slurm.conf <<EOF
ClusterName=ngvm
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$NGS/state
SlurmdSpoolDir=$NGS/spool
SlurmctldPidFile=$NGS/slurmctld.pid
SlurmdPidFile=$NGS/slurmd.pid
SlurmctldLogFile=$NGS/slurmctld.log
SlurmdLogFile=$NGS/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=${NGVM_TASK_PLUGIN:-task/affinity}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
EnforcePartLimits=ALL
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig=$NGS/plugstack.conf
GresTypes=gpu
NodeName=vm NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=4 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1500 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
EOF
    : >$NGS/gres.conf
    for f in $(gres_files); do echo "Name=gpu File=$f" >>$NGS/gres.conf; done
    : >$NGS/plugstack.conf
    # No systemd/dbus in the guest: slurmd makes its cgroup v2 scope itself.
    printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' >$NGS/cgroup.conf
    case ${NGVM_TASK_PLUGIN:-} in
        *task/cgroup*) printf 'ConstrainCores=yes\nConstrainDevices=yes\n' >>$NGS/cgroup.conf ;;
    esac
    export SLURM_CONF=$NGS/slurm.conf
}

# Wait (up to 30 s of guest time) until the node is idle.
wait_idle() {
    end=$(awk -v u="$(uptime_s)" 'BEGIN{print int(u) + 30}')
    while [ "$(sinfo -h -N -o %t 2>/dev/null | sort -u)" != idle ]; do
        [ "$(uptime_s | cut -d. -f1)" -lt "$end" ] || return 1
        sleep 0.1
    done
}

# The guest's network and cgroup root as Slurm needs them (once).
slurm_host_setup() {
    ip link show ngdummy >/dev/null 2>&1 && return 0
    ip link set lo up
    # getaddrinfo(AI_ADDRCONFIG) needs a non-loopback address (module in initramfs).
    ip link add ngdummy type dummy && ip addr add 10.254.0.1/24 dev ngdummy && ip link set ngdummy up
    hostname vm
    # IgnoreSystemd: slurmd creates its scope under an existing system.slice.
    mkdir -p /sys/fs/cgroup/system.slice
    echo "+cpuset +cpu +memory +pids" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
}

# slurmctld, until it accepts connections (30 s of guest time at most).
ctld_start() {
    slurmctld -D -i -f $NGS/slurm.conf >$NGS/slurmctld.out 2>&1 &
    CTLD=$!
    i=0
    until (echo >/dev/tcp/127.0.0.1/16817) 2>/dev/null; do
        i=$((i + 1)); [ $i -gt 300 ] && return 1; sleep 0.1
    done
}

slurm_start() {
    slurm_host_setup
    slurm_conf
    ctld_start || return 1
    slurmd -D -N vm -f $NGS/slurm.conf >$NGS/slurmd.out 2>&1 &
    SLURMD=$!
    wait_idle
}

slurm_stop() {
    [ -n "${SLURMD:-}" ] || return 0
    wait_idle
    # shellcheck disable=SC2086 # (jobwide: two slurmd)
    kill $SLURMD "$CTLD" 2>/dev/null
    sleep 1
    # shellcheck disable=SC2086
    kill -9 $SLURMD "$CTLD" 2>/dev/null
    SLURMD=
}

# run NAME SRUN-ARGS...: srun the probe, output in $NGS/NAME.out/.err,
# exit status in $NGS/NAME.rc; prints the probe lines into the diagnostics.
run() {
    n=$1; shift
    wait_idle
    t=$(uptime_s)
    srun "$@" "$PROBE" -t "$n" >$NGS/$n.out 2>$NGS/$n.err
    echo $? >$NGS/$n.rc
    diag "srun $* ($(awk -v a="$t" -v b="$(uptime_s)" 'BEGIN{printf "%.1f", b-a}')s, rc $(cat $NGS/$n.rc))"
    sed 's/^/#   /' $NGS/$n.out >>"$TAP"
    grep -i numaguard $NGS/$n.err | head -6 | sed 's/^/#   err: /' >>"$TAP"
}

phase_slurm() {
    t0=$(uptime_s)
    if ! slurm_start; then
        notok "slurmctld + slurmd start in the VM"
        tail -n 20 $NGS/*.log $NGS/*.out | sed 's/^/#   /' >>"$TAP"
        return 1
    fi
    ok "slurmctld + slurmd start in the VM ($(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN{printf "%.1f", b-a}')s)"
    diag "gres.conf: $(tr '\n' ' ' <$NGS/gres.conf)"
    check "gres.conf lists the render node of 0000:41:00.0 first" \
        [ "$(dev_bus "$(gres_files | head -1)")" = 0000:41:00.0 ]
    run base-gpu -n 2 --gpus-per-task=1
    check "Slurm alone: srun -n 2 --gpus-per-task=1 gives each task its own GPU" \
        eval '[ "$(cat $NGS/base-gpu.rc)" = 0 ] && [ "$(grep -c "^probe " $NGS/base-gpu.out)" = 2 ]'
    # What Slurm alone does when the GPUs are swapped (for the record: its
    # task/affinity binding does not follow map_gpu).
    run base-swap -n 2 --gpus-per-task=1 --gpu-bind=map_gpu:1,0
    run base-cpu -n 2
    check "Slurm alone: srun -n 2 runs 2 tasks" [ "$(grep -c '^probe ' $NGS/base-cpu.out)" = 2 ]
}

# ---------------------------------------------------------------- plugin
# The node (0/1) a task's GPU is on, from Slurm's env: gres index ->
# gres.conf File= -> /sys/class/drm/.../device/numa_node.
task_gpu_node() {
    idx=$(kv "$1" env.CUDA_VISIBLE_DEVICES)
    [ -n "$idx" ] || idx=$(kv "$1" env.SLURM_STEP_GPUS)
    case "$idx" in *[!0-9]*|"") echo -1; return ;; esac
    f=$(sed -n "$((idx + 1))s/.*File=//p" $NGS/gres.conf)
    dev_node "$f"
}

# Assertions for a GPU run with a memory policy that keeps pages local.
check_local_run() { # NAME LABEL POLICY-REGEX
    f=$NGS/$1.out want_pol=$3    # check's eval sees check's own $1..$n
    [ "$(cat $NGS/$1.rc)" = 0 ] || { notok "$2: srun failed (rc $(cat $NGS/$1.rc))"; return; }
    for r in 0 1; do
        l=$(rank_line "$f" $r)
        nd=$(task_gpu_node "$l")
        check "$2: rank $r (GPU on node $nd) cpus $(kv "$l" cpus) = node $nd CPUs, policy $(kv "$l" policy) $(kv "$l" polnodes), pages $(kv "$l" pages)" \
            eval '[ "$nd" -ge 0 ] && [ "$(kv "$l" cpus)" = "$(node_cpus $nd)" ] &&
                  [ "$(kv "$l" polnodes)" = "$nd" ] && kv "$l" policy | grep -Eqx "$want_pol" &&
                  at_least "$(pg "$l" $nd)" 99 $TOTAL'
    done
}

plugin_on() {
    echo "required $PLUGIN verbose gres_conf=$NGS/gres.conf $*" >$NGS/plugstack.conf
}

phase_plugin() {
    if [ ! -f "$PLUGIN" ]; then
        for d in "local: tasks bound near their GPU" "local with --gpu-bind=map_gpu:1,0" \
            "prefer" "interleave" "interleave,cpuless" "weighted 3:1" "none" "CPU-only tasks"; do
            notok "plugin: $d # TODO $PLUGIN not built yet"
        done
        return
    fi
    [ -n "${SLURMD:-}" ] || { notok "plugin phase needs Slurm"; return; }
    plugin_on
    run local -n 2 --gpus-per-task=1 --numa-policy=local --omp-guard
    check_local_run local "local" bind
    for r in 0 1; do
        l=$(rank_line $NGS/local.out $r)
        check "local --omp-guard: rank $r OMP_NUM_THREADS=$(kv "$l" env.OMP_NUM_THREADS)" \
            [ "$(kv "$l" env.OMP_NUM_THREADS)" = 2 ]
    done
    n0=$(task_gpu_node "$(rank_line $NGS/local.out 0)")
    run swap -n 2 --gpus-per-task=1 --gpu-bind=map_gpu:1,0 --numa-policy=local --omp-guard
    check_local_run swap "local, map_gpu:1,0" bind
    s0=$(task_gpu_node "$(rank_line $NGS/swap.out 0)")
    check "map_gpu:1,0 swaps the GPUs: rank 0 node $n0 -> $s0" [ "$n0" != "$s0" ] 
    for r in 0 1; do
        l=$(rank_line $NGS/swap.out $r)
        check "map_gpu --omp-guard: rank $r OMP_NUM_THREADS=$(kv "$l" env.OMP_NUM_THREADS)" \
            [ "$(kv "$l" env.OMP_NUM_THREADS)" = 2 ]
    done

    # The same with Slurm's -c given: each task owns a whole node's cores.
    run local-c2 -n 2 -c 2 --gpus-per-task=1 --numa-policy=local --omp-guard
    check_local_run local-c2 "local -c 2" bind
    for r in 0 1; do
        l=$(rank_line $NGS/local-c2.out $r)
        check "local -c 2 --omp-guard: rank $r OMP_NUM_THREADS=$(kv "$l" env.OMP_NUM_THREADS)" \
            [ "$(kv "$l" env.OMP_NUM_THREADS)" = 2 ]
    done

    run prefer -n 2 --gpus-per-task=1 --numa-policy=prefer
    check_local_run prefer "prefer" 'preferred(_many)?'

    run il -n 2 --gpus-per-task=1 --numa-policy=interleave
    for r in 0 1; do
        l=$(rank_line $NGS/il.out $r)
        check "interleave: rank $r policy $(kv "$l" policy) $(kv "$l" polnodes), pages $(kv "$l" pages) even over 0,1, none on 2" \
            eval '[ "$(kv "$l" policy) $(kv "$l" polnodes)" = "interleave 0-1" ] &&
                  near "$(pg "$l" 0)" 8192 5 $TOTAL && near "$(pg "$l" 1)" 8192 5 $TOTAL && [ "$(pg "$l" 2)" = 0 ]'
    done
    run ilc -n 2 --gpus-per-task=1 --numa-policy=interleave,cpuless
    for r in 0 1; do
        l=$(rank_line $NGS/ilc.out $r)
        check "interleave,cpuless: rank $r policy $(kv "$l" policy) $(kv "$l" polnodes), pages $(kv "$l" pages) in thirds" \
            eval '[ "$(kv "$l" policy) $(kv "$l" polnodes)" = "interleave 0-2" ] &&
                  near "$(pg "$l" 0)" 5461 5 $TOTAL && near "$(pg "$l" 1)" 5461 5 $TOTAL && near "$(pg "$l" 2)" 5461 5 $TOTAL'
    done

    if [ "$FLAVOUR" = 612 ]; then
        wi=/sys/kernel/mm/mempolicy/weighted_interleave
        echo 3 >$wi/node0 && echo 1 >$wi/node1
        run wt -n 2 --gpus-per-task=1 --numa-policy=weighted
        for r in 0 1; do
            l=$(rank_line $NGS/wt.out $r)
            check "weighted (sysfs 3:1): rank $r policy $(kv "$l" policy) $(kv "$l" polnodes), pages $(kv "$l" pages) = 75%/25%" \
                eval '[ "$(kv "$l" policy) $(kv "$l" polnodes)" = "weighted_interleave 0-1" ] &&
                      near "$(pg "$l" 0)" 12288 5 $TOTAL && near "$(pg "$l" 1)" 4096 5 $TOTAL && [ "$(pg "$l" 2)" = 0 ]'
        done
    fi

    # none: exactly what Slurm alone gave (the baseline run, same request).
    run none -n 2 --gpus-per-task=1 --numa-policy=none
    for r in 0 1; do
        l=$(rank_line $NGS/none.out $r); b=$(rank_line $NGS/base-gpu.out $r)
        check "none: rank $r cpus $(kv "$l" cpus) policy $(kv "$l" policy) = Slurm's own ($(kv "$b" cpus) $(kv "$b" policy))" \
            eval '[ -n "$l" ] && [ "$(kv "$l" cpus)|$(kv "$l" policy)|$(kv "$l" polnodes)" = "$(kv "$b" cpus)|$(kv "$b" policy)|$(kv "$b" polnodes)" ]'
    done

    run cpu -n 2 --numa-policy=local
    l0=$(rank_line $NGS/cpu.out 0); l1=$(rank_line $NGS/cpu.out 1)
    c0=$(kv "$l0" cpus); c1=$(kv "$l1" cpus)
    check "CPU-only srun -n 2: one task per CPU node (cpus $c0 | $c1)" \
        eval '{ [ "$c0|$c1" = "$(node_cpus 0)|$(node_cpus 1)" ] || [ "$c0|$c1" = "$(node_cpus 1)|$(node_cpus 0)" ]; }'
}

# ---------------------------------------------------------------- container
# A container the task starts (issue 36, docs/containers.md): the same
# local run inside bubblewrap (its own mount namespace and root). CPUs,
# memory policy and pages must be those of the task's GPU node, rank 1's
# on node 1: a policy lost on the way into the container would show there.
# Without --unshare-user: the guest's init chroots, and the kernel refuses
# a new user namespace to a chrooted process (EPERM); the user namespace
# is crossed in tests/slurm/t-slurm-containers.sh on the host.
phase_container() {
    if [ ! -f "$PLUGIN" ] || [ -z "${SLURMD:-}" ]; then
        notok "container phase needs Slurm and $PLUGIN"; return
    fi
    command -v bwrap >/dev/null 2>&1 || { ok "container: # SKIP bwrap not installed"; return; }
    plugin_on
    run ct -n 2 --gpus-per-task=1 --numa-policy=local --omp-guard \
        bwrap --ro-bind / / --dev-bind /dev /dev
    grep -v numaguard $NGS/ct.err | head -4 | sed 's/^/#   err: /' >>"$TAP"
    check_local_run ct "local, the task in bwrap (mount namespace)" bind
}

# ---------------------------------------------------------------- cgroup
# task/cgroup on cgroup v2 (issue 12): ConstrainCores=yes and
# ConstrainDevices=yes (IgnoreSystemd=yes: no systemd here). Slurm then
# renumbers each task's CUDA_VISIBLE_DEVICES from 0, so the GPU a task
# really has is read from the kernel: the render node its devices cgroup
# (a BPF program on v2) lets it access. Its CPUs, memory policy and pages
# must be that GPU's node's, inside the step's cpuset.
phase_cgroup() {
    if [ ! -f "$PLUGIN" ] || [ -z "${SLURMD:-}" ]; then
        notok "task/cgroup phase needs Slurm and $PLUGIN"; return
    fi
    slurm_stop
    rm -rf $NGS/state $NGS/spool
    NGVM_TASK_PLUGIN=task/cgroup,task/affinity
    if ! slurm_start; then
        notok "task/cgroup: slurmd starts with ConstrainCores/ConstrainDevices on cgroup v2"
        tail -n 20 $NGS/slurmd.log | sed 's/^/#   /' >>"$TAP"
        return
    fi
    ok "task/cgroup: slurmd starts with ConstrainCores/ConstrainDevices on cgroup v2"
    plugin_on
    for bind in "--gpus-per-task=1" "--gres=gpu:2 --gpu-bind=map_gpu:1,0"; do
        n=cg-${bind##*=}
        wait_idle
        # -c 2: the step owns every CPU (its cpuset is the whole node).
        srun -n 2 -c 2 $bind --numa-policy=local --omp-guard sh -c '
            for r in /dev/dri/renderD*; do [ -r "$r" ] && echo "dev rank=$SLURM_PROCID $r"; done
            c=$(sed -n "s/^0:://p" /proc/self/cgroup)
            while [ -n "$c" ] && [ ! -f "/sys/fs/cgroup$c/cpuset.cpus.effective" ]; do c=${c%/*}; done
            echo "cpuset rank=$SLURM_PROCID $(cat /sys/fs/cgroup$c/cpuset.cpus.effective 2>/dev/null)"
            exec '"$PROBE"' -t '"$n" >$NGS/$n.out 2>$NGS/$n.err
        echo $? >$NGS/$n.rc
        sed 's/^/#   /' $NGS/$n.out >>"$TAP"
        grep -i numaguard $NGS/$n.err | head -4 | sed 's/^/#   err: /' >>"$TAP"
        check "task/cgroup $bind: srun exits 0" [ "$(cat $NGS/$n.rc)" = 0 ]
        for r in 0 1; do
            l=$(rank_line $NGS/$n.out $r)
            dev=$(sed -n "s/^dev rank=$r //p" $NGS/$n.out)
            cs=$(sed -n "s/^cpuset rank=$r //p" $NGS/$n.out)
            nd=$(dev_node "$dev" 2>/dev/null || echo -1)
            check "task/cgroup $bind: rank $r may access only $dev (node $nd); NUMAGUARD_GPUS $(kv "$l" env.NUMAGUARD_GPUS) is its bus id" \
                eval '[ "$(printf "%s\n" "$dev" | grep -c .)" = 1 ] &&
                      [ "$(kv "$l" env.NUMAGUARD_GPUS)" = "$(dev_bus "$dev")" ]'
            check "task/cgroup $bind: rank $r cpus $(kv "$l" cpus) = node $nd CPUs, inside the step cpuset $cs; policy $(kv "$l" policy) $(kv "$l" polnodes); pages $(kv "$l" pages); OMP_NUM_THREADS $(kv "$l" env.OMP_NUM_THREADS)" \
                eval '[ "$nd" -ge 0 ] && [ "$(kv "$l" cpus)" = "$(node_cpus $nd)" ] &&
                      within "$(kv "$l" cpus)" "$cs" && [ "$(kv "$l" polnodes)" = "$nd" ] &&
                      at_least "$(pg "$l" $nd)" 99 $TOTAL && [ "$(kv "$l" env.OMP_NUM_THREADS)" = 2 ]'
        done
    done
}

# ---------------------------------------------------------------- jobwide
# check --job J across a whole job for real on cgroup v2 (issue 38): two
# slurmd on this VM (vm1, vm2; task/cgroup, each its own
# NODE_slurmstepd.scope), a job of 4 tasks of uid 65534 on both. Root's
# check --job (text, --json, --svg) sees both nodes and the 4 tasks by
# their cgroup; then with /proc mounted hidepid=2 (nobody sees another
# user's processes, slurmstepd included): root still, the owner from
# outside the job too (its node side reads its own processes' cgroups),
# and another user gets "no job J of yours" from --local and the whole-job
# check alike.
slurm_start2() {
    slurm_host_setup
    slurm_conf
    sed -i '/^NodeName=vm /d; /^GresTypes=/d' $NGS/slurm.conf
    # Each slurmd its own spool, pid and log file (%n: its node name).
    sed -i 's|^SlurmdSpoolDir=.*|SlurmdSpoolDir='$NGS'/spool/%n|; s|^SlurmdPidFile=.*|SlurmdPidFile='$NGS'/slurmd.%n.pid|; s|^SlurmdLogFile=.*|SlurmdLogFile='$NGS'/slurmd.%n.log|' $NGS/slurm.conf
    for n in 1 2; do
        echo "NodeName=vm$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((16818 + n)) CPUs=4 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=600 State=UNKNOWN" >>$NGS/slurm.conf
    done
    sed -i 's/^PartitionName=.*/PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP/' $NGS/slurm.conf
    : >$NGS/gres.conf
    ctld_start || return 1
    slurmd -D -N vm1 -f $NGS/slurm.conf >$NGS/slurmd1.out 2>&1 &
    SLURMD="$!"
    slurmd -D -N vm2 -f $NGS/slurm.conf >$NGS/slurmd2.out 2>&1 &
    SLURMD="$SLURMD $!"
    end=$(awk -v u="$(uptime_s)" 'BEGIN{print int(u) + 60}')
    until [ "$(sinfo -h -N -o %t 2>/dev/null | sort -u)" = idle ] && [ "$(sinfo -h -N -o %N | wc -l)" = 2 ]; do
        [ "$(uptime_s | cut -d. -f1)" -lt "$end" ] || return 1
        sleep 0.2
    done
}

# jw FILE EXPR: Python over a --json document (N: nodes by name).
jw() { python3 -c 'import json,sys; D=json.load(open(sys.argv[1])); N={n["name"]: n for n in D.get("nodes", [])}; print(eval(sys.argv[2]))' "$@" 2>&1; }

phase_jobwide() {
    NG=$BUILD/numaguard HELPER=$BUILD/tests/ng_threads U=65534
    as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
    slurm_stop
    rm -rf $NGS/state $NGS/spool
    NGVM_TASK_PLUGIN=task/cgroup,task/affinity
    t0=$(uptime_s)
    if ! slurm_start2; then
        notok "jobwide: two slurmd (vm1, vm2) start with task/cgroup on cgroup v2"
        tail -n 20 $NGS/slurmctld.log $NGS/slurmd*.out $NGS/slurmd.*.log | sed 's/^/#   /' >>"$TAP"
        return
    fi
    ok "jobwide: two slurmd (vm1, vm2) start with task/cgroup on cgroup v2 ($(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN{printf "%.1f", b-a}')s)"
    # (a step launch can fail under TCG on a loaded host, "Communication
    # connection failure", seen 1 run in 4: tried twice)
    for try in 1 2; do
        : >$NGS/jw.out
        as $U srun -N 2 -n 4 --ntasks-per-node=2 "$HELPER" 1 0 64 >$NGS/jw.out 2>$NGS/jw.err &
        JWSRUN=$!
        i=0
        while [ $i -lt 900 ] && [ "$(grep -c ready $NGS/jw.out)" -lt 4 ] && kill -0 $JWSRUN 2>/dev/null; do
            sleep 0.1; i=$((i + 1))
        done
        J=$(squeue -h -o %i | head -1)
        [ "$(grep -c ready $NGS/jw.out)" = 4 ] && break
        diag "try $try: job $J: $(grep -c ready $NGS/jw.out) tasks ready; srun: $(head -c 400 $NGS/jw.err | tr '\n' ' ')"
        scancel "$J" 2>/dev/null
        wait $JWSRUN 2>/dev/null
        # (a failed launch leaves its node down: back to service)
        scontrol update NodeName=vm1,vm2 State=RESUME 2>/dev/null
        wait_idle
    done
    check "jobwide: job $J of uid $U, 4 tasks on vm1 and vm2 running" [ "$(grep -c ready $NGS/jw.out)" = 4 ]
    cgs=$(for p in $(pgrep -u $U ng_threads); do sed -n 's/^0:://p' /proc/$p/cgroup; done | sort -u)
    diag "job $J cgroups: $(printf '%s\n' "$cgs" | tr '\n' ' ')"
    # Slurm 26.05 (jobwide26): by default (CgroupJobIdPaths=no) the job
    # level of each task's cgroup is the job's SLUID, as scontrol prints
    # it, the same on both nodes; no job_ID level anywhere.
    SLUID=
    if [ "${NGVM_SLURM:-}" = sid ]; then
        SLUID=$(scontrol -d show job "$J" | tr ' ' '\n' | sed -n 's/^SLUID=//p' | head -1)
        check "Slurm $(scontrol --version | cut -d' ' -f2): job $J's tasks' cgroups are named by its SLUID $SLUID (under vm1_ and vm2_slurmstepd.scope, step_0; no job_$J)" \
            eval 'printf "%s\n" "$SLUID" | grep -Eqx "s[0-9A-HJKMNP-TV-Z]{13}" &&
                  ! printf "%s\n" "$cgs" | grep -Evq "^/system.slice/vm[12]_slurmstepd.scope/$SLUID/step_0/" &&
                  [ "$(printf "%s\n" "$cgs" | cut -d/ -f3 | sort -u | tr "\n" " ")" = "vm1_slurmstepd.scope vm2_slurmstepd.scope " ] &&
                  ! printf "%s\n" "$cgs" | grep -q "/job_"'
    fi
    # (TCG: each node's step takes seconds; --timeout leaves room)
    T0=$(uptime_s)
    "$NG" check --job "$J" --json --timeout 200 >$NGS/jw-root.json 2>$NGS/jw-root.err
    diag "root's check --job $J --json: rc $?, $(awk -v a="$T0" -v b="$(uptime_s)" 'BEGIN{printf "%.1f", b-a}')s, stderr: $(head -c 600 $NGS/jw-root.err | tr '\n' ' ')"
    # Both slurmd share this VM's /proc and cgroup tree: each node's side
    # sees the job's cgroups under vm1_ and vm2_slurmstepd.scope alike (a
    # site runs one slurmd per host), so each lists the 4 tasks.
    check "jobwide: root's check --job $J --json: both nodes answered, each lists the job's 4 tasks by their cgroup ($(jw $NGS/jw-root.json '[(n, N[n]["status"], N[n]["report"]["membership"]) for n in N]'))" \
        [ "$(jw $NGS/jw-root.json 'sorted((n, N[n]["status"], tuple(sorted(p["global_rank"] for p in N[n]["report"]["processes"] if p["comm"] == "ng_threads")), N[n]["report"]["membership"]) for n in N)')" = \
          "[('vm1', 'ok', (0, 1, 2, 3), 'cgroup'), ('vm2', 'ok', (0, 1, 2, 3), 'cgroup')]" ]
    if [ -n "$SLUID" ]; then
        # (root sees slurmstepd's title "[J.0]" in the SLUID cgroup: the
        # job number leads to the SLUID without asking Slurm)
        check "jobwide: root's check --job $J --json names the job's SLUID ($(jw $NGS/jw-root.json 'D["sluid"]')); its node sides found the tasks from the job number ($(jw $NGS/jw-root.json '[N[n]["report"].get("sluid", "-") for n in N]'))" \
            [ "$(jw $NGS/jw-root.json '(D["sluid"], sorted(N[n]["report"].get("sluid", "-") for n in N))')" = "('$SLUID', ['-', '-'])" ]
    fi
    "$NG" check --job "$J" --svg $NGS/jw.svg --timeout 200 >/dev/null 2>&1
    check "jobwide: root's --svg: a machine per node titled with its name, its cores in the colours of the job's tasks" \
        [ "$(python3 -c 'import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
r = ET.parse(sys.argv[1]).getroot()
out = []
for g in r.findall(S + "g"):
    m = [x for x in g.iter(S + "g") if x.get("class") == "node-machine"]
    t = {int(c.get("data-task")) for x in m for c in x.iter(S + "rect") if c.get("class") == "core" and c.get("data-task") != "-1"}
    title = [x.text for y in m for x in y.iter(S + "text")][:1]
    out.append((g.get("data-node-name"), title == [g.get("data-node-name")], len(t) > 0 and t <= {0, 1, 2, 3}))
print(out)' $NGS/jw.svg 2>&1)" = "[('vm1', True, True), ('vm2', True, True)]" ]
    if mount -o remount,hidepid=2 /proc; then
        diag "/proc remounted hidepid=2: uid $U sees $(as $U sh -c 'ls /proc | grep -c "^[0-9]"') processes, root $(ls /proc | grep -c '^[0-9]')"
        "$NG" check --job "$J" --json --timeout 200 >$NGS/jw-hp-root.json 2>$NGS/jw-hp-root.err
        diag "hidepid=2: root: $(head -c 300 $NGS/jw-hp-root.err | tr '\n' ' ')"
        check "hidepid=2: root's check --job $J: both nodes, the 4 tasks" \
            [ "$(jw $NGS/jw-hp-root.json 'sorted((n, N[n]["status"], tuple(sorted(p["global_rank"] for p in N[n]["report"]["processes"] if p["comm"] == "ng_threads"))) for n in N)')" = \
              "[('vm1', 'ok', (0, 1, 2, 3)), ('vm2', 'ok', (0, 1, 2, 3))]" ]
        as $U "$NG" check --job "$J" --json --timeout 200 >$NGS/jw-hp-owner.json 2>$NGS/jw-hp-owner.err
        diag "hidepid=2: owner: $(head -c 300 $NGS/jw-hp-owner.err | tr '\n' ' ')"
        check "hidepid=2: the owner's check --job $J (node sides as the owner, slurmstepd hidden from them): both nodes, the 4 tasks by their cgroup" \
            [ "$(jw $NGS/jw-hp-owner.json 'sorted((n, N[n]["status"], tuple(sorted(p["global_rank"] for p in N[n]["report"]["processes"] if p["comm"] == "ng_threads")), N[n]["report"]["membership"]) for n in N)')" = \
              "[('vm1', 'ok', (0, 1, 2, 3), 'cgroup'), ('vm2', 'ok', (0, 1, 2, 3), 'cgroup')]" ]
        if [ -n "$SLUID" ]; then
            # The hidepid fallback: no slurmstepd is visible to the owner,
            # so its node sides ask Slurm for the SLUID (scontrol -d show
            # job) and read that cgroup; each report names it.
            check "hidepid=2: the owner's node sides looked the SLUID up: $(jw $NGS/jw-hp-owner.json '[(n, N[n]["report"].get("sluid")) for n in N]')" \
                [ "$(jw $NGS/jw-hp-owner.json 'sorted((n, N[n]["report"].get("sluid")) for n in N)')" = \
                  "[('vm1', '$SLUID'), ('vm2', '$SLUID')]" ]
        fi
        as 1 "$NG" check --job "$J" --local >$NGS/jw-hp-other.out 2>$NGS/jw-hp-other.err
        check "hidepid=2: uid 1's check --job $J --local: exit 1, nothing on stdout, '$(tail -1 $NGS/jw-hp-other.err)'" \
            eval '[ ! -s $NGS/jw-hp-other.out ] && [ "$(tail -1 $NGS/jw-hp-other.err)" = "numaguard: check: no job $J of yours here (only its owner or root may check it)" ]'
        mount -o remount,hidepid=0 /proc
    else
        notok "hidepid=2: mount -o remount,hidepid=2 /proc"
    fi
    scancel "$J"
    wait $JWSRUN 2>/dev/null
    for n in 1 2; do tail -n 5 $NGS/slurmd$n.out | sed "s/^/#   slurmd vm$n: /" >>"$TAP"; done
}

# ---------------------------------------------------------------- jobwide26
# The jobwide phase with Slurm 26.05 (issue 38: its default cgroup v2
# names are the job's SLUID, sEKNKTV3WPV500, not job_ID): the sid root
# that `make check-releases` keeps, with numaguard built there
# (tests/vm/sid-build.sh), is entered with chroot and this script runs
# phase jobwide again inside with sid's slurmctld, slurmd, srun and
# scontrol. Our / is a tmpfs overlay over the host's, so what is mounted
# or written under SID_ROOT stays in this guest; /proc is a fresh
# mount (its hidepid is the chroot's own), /sys (the cgroup v2 tree),
# /dev, the results share and the repository (same path) are bound in.
phase_jobwide26() {
    R=${SID_ROOT:-}
    if [ -z "$R" ] || [ ! -x "$R/usr/sbin/slurmd" ] || [ ! -x "${SID_BUILD:-}/numaguard" ]; then
        notok "jobwide26: a sid root with Slurm 26.05 at '$R' and numaguard built for it in '${SID_BUILD:-}' (tests/vm/sid-build.sh)"
        return
    fi
    slurm_stop
    mkdir -p "$R$REPO" "$R/ngvm"
    if ! { mount -t proc proc "$R/proc" && mount --rbind /sys "$R/sys" &&
           mount --rbind /dev "$R/dev" && mount -t tmpfs tmpfs "$R/tmp" &&
           mount -t tmpfs tmpfs "$R/run" && mount --bind /ngvm "$R/ngvm" &&
           mount --bind "$REPO" "$R$REPO"; }; then
        notok "jobwide26: mounts for the sid root $R"
        return
    fi
    # Slurm resolves localhost and this guest's name (vm).
    printf '127.0.0.1\tlocalhost vm\n' >"$R/etc/hosts"
    diag "jobwide26: Slurm $(chroot "$R" dpkg-query -W -f '${Version}' slurmd), hwloc $(chroot "$R" dpkg-query -W -f '${Version}' libhwloc15) in $R"
    chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        NGVM_INNER=jobwide NGVM_SLURM=sid /bin/bash /ngvm/run.sh
    diag "jobwide26: the sid run ended (rc $?)"
    for m in "$R$REPO" "$R/ngvm" "$R/run" "$R/tmp" "$R/dev" "$R/sys" "$R/proc"; do
        umount -R "$m" 2>/dev/null || umount -lR "$m" 2>/dev/null
    done
}

# ---------------------------------------------------------------- fallback
phase_fallback() {
    if [ ! -f "$PLUGIN" ]; then
        notok "fallback: weighted -> interleave + warning # TODO $PLUGIN not built yet"
        notok "fallback: weighted,strict fails the task # TODO $PLUGIN not built yet"
        return
    fi
    [ -n "${SLURMD:-}" ] || { notok "fallback phase needs Slurm"; return; }
    plugin_on
    run fb -n 2 --gpus-per-task=1 --numa-policy=weighted
    for r in 0 1; do
        l=$(rank_line $NGS/fb.out $r)
        check "6.1 weighted falls back: rank $r policy $(kv "$l" policy) $(kv "$l" polnodes), pages $(kv "$l" pages) even" \
            eval '[ "$(kv "$l" policy) $(kv "$l" polnodes)" = "interleave 0-1" ] &&
                  near "$(pg "$l" 0)" 8192 5 $TOTAL && near "$(pg "$l" 1)" 8192 5 $TOTAL'
    done
    check "6.1 weighted: a warning names the fallback" \
        grep -Eiq 'weighted.*interleave|interleave.*weighted' $NGS/fb.err
    run fbs -n 2 --gpus-per-task=1 --numa-policy=weighted,strict
    check "6.1 weighted,strict: the step fails (rc $(cat $NGS/fbs.rc)), no task ran the probe" \
        eval '[ "$(cat $NGS/fbs.rc)" != 0 ] && ! grep -q "^probe " $NGS/fbs.out'
}

# ---------------------------------------------------------------- widemem
# Planner v5's memory rule for a widened task (issue 37, docs/planner.md
# rule 7), no Slurm: in a cpuset of CPUs 1-3 GPU 0's node 0 holds one of
# the three cores, so its task is widened over nodes 0-1 and `local` binds
# its memory to the GPU's node and its cores' nodes (0-1), not node 0
# alone. Node 0 is first filled with huge pages (another job's memory:
# reserved at once, nothing touched, as touching pages under TCG is slow);
# a buffer larger than all node 0 keeps outside them must then be placed
# on both nodes, while the old rule's bind to node 0 alone is OOM-killed.
phase_widemem() {
    t0=$(uptime_s)
    cg=/sys/fs/cgroup/ngwide
    hp=/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages
    [ -f /sys/fs/cgroup/cgroup.controllers ] || mount -t cgroup2 none /sys/fs/cgroup
    echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    mkdir -p $cg && echo 1-3 >$cg/cpuset.cpus 2>/dev/null
    if [ "$(cat $cg/cpuset.cpus.effective 2>/dev/null)" != 1-3 ] || [ ! -w $hp ]; then
        notok "widemem: a cpuset of CPUs 1-3 (cgroup v2) and node 0's huge pages ($hp)"
        rmdir $cg 2>/dev/null; return
    fi
    # in_cg CMD...: CMD in that cpuset (its own shell joins it, not ours).
    in_cg() { sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }
    mem_mib() { awk -v k="$2:" '$3 == k {print int($4 / 1024)}' "/sys/devices/system/node/node$1/meminfo"; }
    # Page cache dropped first: less for the OOM path to scan on node 0.
    echo 3 >/proc/sys/vm/drop_caches
    echo $((($(mem_mib 0 MemFree) - 96) / 2)) >$hp
    huge=$(($(cat $hp) * 2))
    f0=$(mem_mib 0 MemFree) f1=$(mem_mib 1 MemFree)
    # More than node 0 has outside the huge pages, so no reclaim can make
    # it fit there.
    mib=$(($(mem_mib 0 MemTotal) - huge + 32))
    pages=$((mib * 256))
    diag "widemem: node 0 filled with $huge MiB of huge pages; free node 0 ${f0} MiB, node 1 ${f1} MiB; buffer ${mib} MiB ($pages pages)"
    if [ $((f0 + f1 - 64)) -lt $mib ] || [ $mib -gt 512 ]; then
        notok "widemem: nodes 0-1 have room for $mib MiB (at most 512), more than node 0 outside its huge pages"
        echo 0 >$hp; rmdir $cg 2>/dev/null; return
    fi
    in_cg "$BUILD/numaguard" exec --gpus 0 --verbose -- "$PROBE" -m $mib -t wide \
        >$NGVM_TMP/wide.out 2>&1
    rc=$?
    sed 's/^/#   /' $NGVM_TMP/wide.out >>"$TAP"
    l=$(grep '^probe ' $NGVM_TMP/wide.out | head -1)
    check "widemem: numaguard exec, GPU 0, CPUs 1-3 (widened): rc $rc, cpus $(kv "$l" cpus), policy $(kv "$l" policy) $(kv "$l" polnodes), pages $(kv "$l" pages): all $pages on nodes 0 and 1, none on node 2" \
        eval '[ $rc = 0 ] && [ "$(kv "$l" cpus)" = 1-3 ] && [ "$(kv "$l" policy) $(kv "$l" polnodes)" = "bind 0-1" ] &&
              [ "$(pg "$l" 2)" = 0 ] && [ $(($(pg "$l" 0) + $(pg "$l" 1))) = $pages ]'
    in_cg numactl --membind=0 --physcpubind=1-3 "$PROBE" -m $mib -t oldbind >$NGVM_TMP/old.out 2>&1
    rc=$?
    check "widemem: the old rule, the same task bound to node 0 alone, is OOM-killed (rc $rc, want 137)" \
        [ $rc = 137 ]
    echo 0 >$hp
    rmdir $cg 2>/dev/null
    diag "widemem phase $(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN{printf "%.1f", b-a}')s"
}

[ -n "${NGVM_INNER:-}" ] || echo "started $(uptime_s)" >/ngvm/guest-started
for p in $PHASES; do
    "phase_$p"
done
slurm_stop
[ -n "${NGVM_INNER:-}" ] || diag "guest done at $(uptime_s)s uptime"
sync
