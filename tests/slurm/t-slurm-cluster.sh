#!/bin/sh
# The test cluster itself (no numaguard plugin): daemons start and stop,
# the inflated node reports the topology's CPUs, the fake GPUs look like
# the NVIDIA driver's and Slurm hands them out as on a real GPU node.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite cluster

# --- a real node: this machine, task/affinity --------------------------
NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0 NGC_PLUGSTACK=
ngt_cluster
is "$(ngc_node_states)" idle "real node ng1 is idle after start"
real_cpus=$(slurmd -C | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p')
is "$(scontrol show node ng1 | sed -n 's/.*CPUTot=\([0-9]*\).*/\1/p')" "$real_cpus" \
    "real node has this machine's $real_cpus CPUs"
f=$NGT_OUT/real
ngt_srun "$f" -n 2 --
ok $? "srun -n 2 exits 0"
ngt_check count "$f" "real node" 2
# task/affinity binds each task to its own CPU (2 CPUs, 2 tasks).
if [ "$real_cpus" -ge 2 ]; then
    ngt_check expect "$f" "task/affinity" "0:affinity=0" "1:affinity=1"
fi

# --- an inflated 8-GPU node: g4dn.metal, task/none -----------------------
NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$NGT_TOPO/g4dn-metal-8xt4.xml NGC_GPUS=auto
ngt_cluster
node=$(scontrol show node ng1 | tr -s '\n ' '  ')
like "$node" "CPUTot=96 " "inflated node has g4dn.metal's 96 CPUs"
like "$node" "Gres=gpu:8" "inflated node has 8 GPUs"
like "$node" "CoresPerSocket=24 .*Sockets=2 .*ThreadsPerCore=2" "inflated node shape 2x24x2"

# Fake device files: char 195:N, the real driver's major/minor scheme.
devs=""
for n in 0 1 2 3 4 5 6 7; do
    devs="$devs $(stat -c '%F %t:%T' "$NGC_FSROOT/dev/nvidia$n")"
done
is "$devs" "$(for n in 0 1 2 3 4 5 6 7; do printf ' character special file c3:%x' $n; done)" \
    "/dev/nvidia0-7 are character devices 195:0-7"
# Driver information files: minor N is the N-th GPU in PCI bus order.
map=""
for d in "$NGC_FSROOT"/proc/driver/nvidia/gpus/*; do
    m=$(sed -n 's/^Device Minor: \t \([0-9]*\)$/\1/p' "$d/information")
    b=$(sed -n 's/^Bus Location: \t \(.*\)$/\1/p' "$d/information")
    map="$map $m=$b"
done
is "$map" " 0=0000:18:00.0 1=0000:19:00.0 2=0000:35:00.0 3=0000:36:00.0 4=0000:e7:00.0 5=0000:e8:00.0 6=0000:f4:00.0 7=0000:f5:00.0" \
    "driver information: minors in bus order, Bus Location = directory name"
is "$(cut -d: -f1 "$NGC_FSROOT/proc/driver/nvidia/gpus/0000:18:00.0/information" | tr '\n' ' ')" \
    "Model IRQ GPU UUID Video BIOS Bus Type DMA Size DMA Mask Bus Location Device Minor GPU Excluded " \
    "information file has the driver's fields in the driver's order"

f=$NGT_OUT/gpt1
ngt_srun "$f" -n 8 --gpus-per-task=1 -- CUDA_VISIBLE_DEVICES SLURM_STEP_GPUS
ok $? "srun -n 8 --gpus-per-task=1 exits 0"
ngt_check count "$f" "gpus-per-task=1" 8
ngt_check expect "$f" "gpus-per-task=1" 0:SLURM_STEP_GPUS=0 3:SLURM_STEP_GPUS=3 7:SLURM_STEP_GPUS=7 \
    0:CUDA_VISIBLE_DEVICES=0 7:CUDA_VISIBLE_DEVICES=7
f=$NGT_OUT/gpt2
ngt_srun "$f" -n 4 --gpus-per-task=2 -- SLURM_STEP_GPUS
ngt_check expect "$f" "gpus-per-task=2" 0:SLURM_STEP_GPUS=0,1 1:SLURM_STEP_GPUS=2,3 3:SLURM_STEP_GPUS=6,7
f=$NGT_OUT/shared
ngt_srun "$f" -n 2 --gres=gpu:3 -- SLURM_STEP_GPUS CUDA_VISIBLE_DEVICES
ngt_check expect "$f" "gres=gpu:3 shared" all:SLURM_STEP_GPUS=0,1,2 all:CUDA_VISIBLE_DEVICES=0,1,2
f=$NGT_OUT/map
ngt_srun "$f" -n 4 --gres=gpu:4 --gpu-bind=map_gpu:3,2,1,0 -- SLURM_STEP_GPUS CUDA_VISIBLE_DEVICES
ngt_check expect "$f" "gpu-bind=map_gpu:3,2,1,0" 0:SLURM_STEP_GPUS=3 3:SLURM_STEP_GPUS=0 \
    0:CUDA_VISIBLE_DEVICES=3 2:CUDA_VISIBLE_DEVICES=1
# The plugin's topology argument points at the same XML the node pretends to be.
ngt_check expect "$f" "inflated node runs tasks on this machine" "all:node=ng1"

# --- two slurmd daemons on one host ------------------------------------
NGC_NODES=2 NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$NGT_TOPO/juwels-booster-4xa100-epyc7402-nps4.xml
ngt_cluster
is "$(sinfo -h -N -o '%N %t' | tr '\n' ' ')" "ng1 idle ng2 idle " "two slurmd: ng1 and ng2 idle"
f=$NGT_OUT/two
ngt_srun "$f" -N 2 -n 4 --gpus-per-task=1 -- SLURM_STEP_GPUS
ok $? "srun -N 2 -n 4 exits 0"
ngt_check expect "$f" "srun -N 2" 0:node=ng1 1:node=ng1 2:node=ng2 3:node=ng2 \
    0:local=0 1:local=1 2:local=0 3:local=1 2:SLURM_STEP_GPUS=0 3:SLURM_STEP_GPUS=1

# --- whatever this host's name maps to ---------------------------------
# debian-installer and cloud-init map it to 127.0.1.1: in a private mount
# namespace whose /etc/hosts says so, a second cluster of two slurmd starts
# and runs srun -N 2 (cluster.sh: the daemons and srun listen on every
# address). Minimal roots and some containers map it to nothing: there
# ngc_init stops at once with one line saying what to add to /etc/hosts.
# hosts_ns TAG HOSTS-FILE-TEXT: run that cluster under that /etc/hosts;
# prints its "# /etc/hosts" line, then the nodes srun ran on and their
# state, or "init failed after Ns: <line>". Names are looked up in that
# file alone (nsswitch.conf's hosts: files): a name missing there would
# else go to DNS, which may know this host (a cloud VM's resolver) or
# answer late (a lost packet: 5 s), and "at once" would depend on it.
hosts_ns() {
    local h=$NGT_OUT/hosts.$1
    printf '%s' "$2" >"$h"
    { grep -v '^hosts:' /etc/nsswitch.conf 2>/dev/null || printf 'passwd: files\ngroup: files\nshadow: files\n'
      echo 'hosts: files'; } >"$h.nsswitch"
    unshare -m --propagation private bash -c '
        mount --bind "$1" /etc/hosts || exit 9
        [ ! -e /etc/nsswitch.conf ] || mount --bind "$1.nsswitch" /etc/nsswitch.conf || exit 9
        name=$(uname -n)
        echo "# /etc/hosts: $(getent hosts "$name" || echo "$name does not resolve")"
        . "$2/tests/slurm/cluster.sh"
        NGC_SRUN_TIMEOUT=30
        t0=$(date +%s)
        ngc_init "$3" 2>/dev/null || { echo "init failed after $(( $(date +%s) - t0 ))s: $NGC_ERROR"; exit 0; }
        NGC_NODES=2 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0 NGC_PLUGSTACK=
        ngc_start || exit 7
        ngc_srun -N 2 -n 2 sh -c "echo \$SLURMD_NODENAME" | sort | tr "\n" " "
        ngc_wait_idle 10; echo "$(ngc_node_states)"' x "$h" "$NGT_TOP" "$NGC_DIR/ns-$1" 2>"$NGT_OUT/ns-$1.err"
}
if unshare -m --propagation private true 2>/dev/null; then
    out=$(hosts_ns local "$(printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$(uname -n)")")
    printf '%s\n' "$out" | grep '^#'
    is "$(printf '%s\n' "$out" | grep -v '^#')" "ng1 ng2 idle" \
        "this host's name on 127.0.1.1: srun -N 2 runs on both nodes, which stay idle"
    out=$(hosts_ns none "$(printf '127.0.0.1\tlocalhost\n')")
    printf '%s\n' "$out" | grep '^#'
    like "$(printf '%s\n' "$out" | grep -v '^#')" \
        "^init failed after [0-4]s: this host's name '$(uname -n)' does not resolve \(Slurm looks it up\): add the line '127\.0\.1\.1 $(uname -n)' to /etc/hosts$" \
        "this host's name not resolvable: ngc_init stops at once, one line saying what to add to /etc/hosts"
else
    skip 2 "no private mount namespace here (unshare -m; a chroot whose / is not a mount point)"
fi

# --- clean stop ----------------------------------------------------------
pids="$NGC_CTLD_PID ${NGC_SLURMD_PIDS[*]}"
ngc_stop
alive=""
for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
is "$alive" "" "ngc_stop leaves no slurmctld/slurmd running"
ok "$(ngc_port_open "$NGC_PORT"; echo $((1 - $?)))" "slurmctld port $NGC_PORT is closed after stop"
ngt_done
