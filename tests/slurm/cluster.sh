# shellcheck shell=bash
# tests/slurm/cluster.sh - a private Slurm cluster on localhost, for tests.
#
# Source it from bash (the t-*.sh tests re-exec themselves under bash):
#
#   . tests/slurm/cluster.sh
#   ngc_init /tmp/somewhere           # work dir (created); installs the trap
#   NGC_NODES=1 NGC_TASK_PLUGIN=task/none \
#   NGC_TOPOLOGY=tests/topologies/g4dn-metal-8xt4.xml \
#   NGC_PLUGSTACK="optional $PWD/build/numaguard.so verbose"
#   ngc_start                         # writes the config, starts the daemons
#   srun -n 2 hostname                # SLURM_CONF is exported
#   ngc_restart                       # after changing NGC_* (new config)
#   ngc_stop                          # or let the EXIT trap do it
#
# What it runs (all as root, no systemd, nothing under /etc or /run):
#   munged        own key and socket under $NGC_DIR/munge (auth/munge, as on
#                 real clusters; started once per ngc_init)
#   slurmctld     port $NGC_PORT (NG_SLURM_PORT_BASE, default 36817)
#   slurmd x N    nodes ng1..ngN, ports $NGC_PORT+1.., several slurmd on one
#                 host (Debian's build has MULTIPLE_SLURMD)
#
# Settings (environment variables read by ngc_start):
#   NG_SLURM_PORT_BASE  first TCP port (default 36817); uses base..base+N
#   NG_SLURM_PORT_SEARCH  where the search for a free block starts (default
#                       36817; check-releases uses its own range per chroot)
#   NGC_NODES           number of slurmd daemons (default 1)
#   NGC_NODE_FMT        printf format of node K's name (default ng%d: ng1,
#                       ng2, ...); e.g. gpu%04d gives names with several
#                       digits (gpu0001), as production clusters have
#   NGC_TASK_PLUGIN     task/affinity (default; real CPUs) or task/none, or
#                       task/cgroup,task/affinity (writes cgroup.conf with
#                       ConstrainCores=yes ConstrainDevices=yes, cgroup/v1
#                       or cgroup/v2 as this host mounts it; NGC_CGROUP_EXTRA
#                       adds lines, e.g. IgnoreSystemd=yes in the VM)
#   NGC_TOPOLOGY        hwloc XML of an "inflated" node: slurmd runs with
#                       HWLOC_XMLFILE=<xml>, so Slurm schedules that
#                       machine's CPUs on this 2-core host (needs task/none)
#   NGC_GPUS            fake NVIDIA GPUs per node: "auto" (default: one per
#                       NVIDIA GPU of NGC_TOPOLOGY, bus order), or a number
#   NGC_GPU_BUSIDS      explicit space-separated bus ids (overrides auto)
#   NGC_GRES_TEMPLATE   gres.conf text instead of one Name=gpu line; @DEV@
#                       stands for the fake device directory (shared
#                       gres.conf tests: NodeName= records for several nodes)
#   NGC_PLUGSTACK       plugstack.conf contents (default: empty file)
#   NGC_SLURM_EXTRA     extra slurm.conf lines
#   NGC_SLURMD_ARGS     extra slurmd arguments (e.g. -d PATH: the
#                       slurmstepd slurmd starts)
#   NGC_SRUN_TIMEOUT    seconds any srun/sbatch --wait of the tests and the
#                       demo may take (default 120; see ngc_srun)
#
# Addresses: the daemons and srun listen on every address (no
# CommunicationParameters=NoInAddrAny), so the cluster works whatever this
# host's name maps to: 127.0.0.1, 127.0.1.1 (what debian-installer and
# cloud-init write into /etc/hosts) or a LAN address. With NoInAddrAny,
# slurmd and srun listened only on the name's address while slurmstepd
# called srun back at the address srun's request came from (127.0.0.1):
# with 127.0.1.1 every launch failed ("Slurmd could not connect IO"). A
# name that does not resolve at all stops ngc_init at once with one line
# saying what to add to /etc/hosts (ngc_check_host).
#
# Failures: ngc_init and ngc_start return 1 with the one line that matters
# in NGC_ERROR (also logged first, before the daemons' log tails); a daemon
# that exits while starting ends the wait at once.
#
# Fake GPUs (see docs/testing.md): $NGC_FSROOT/dev/nvidiaN are character
# devices (major 195, minor N, like the real driver's), and
# $NGC_FSROOT/proc/driver/nvidia/gpus/<busid>/information files in the
# driver's format map minor N to the N-th NVIDIA GPU of the topology.
# Slurm's gres.conf ($NGC_GRES_CONF) names the devices by host path; the
# plugin gets fsroot=$NGC_FSROOT and gres_conf=$NGC_PLUGIN_GRES_CONF, the
# same list as the node under fsroot sees it (File=/dev/nvidia[0-N]).

NGC_SBIN=${NGC_SBIN:-/usr/sbin}
NGC_SRUN_TIMEOUT=${NGC_SRUN_TIMEOUT:-120}

# Log lines go to stderr, as TAP comments unless NGC_LOG_PREFIX says
# otherwise (the demo names itself).
ngc_log() { printf '%s%s\n' "${NGC_LOG_PREFIX-# }" "$*" >&2; }

# ngc_fail LINE: the reason a step of set-up failed, kept for the caller
# (NGC_ERROR) and logged; returns 1.
ngc_fail() {
    NGC_ERROR=$*
    ngc_log "$*"
    return 1
}

# Every srun (and sbatch --wait) of the tests and the demo is bounded:
# a job that can never start (its node down, resources that never free)
# must end the test, not hang it. ngc_bounded CMD... runs CMD under
# timeout(1) (exit 124 when NGC_SRUN_TIMEOUT seconds pass; srun cancels
# its job on the SIGTERM); ngc_srun ARGS... is `ngc_bounded srun ARGS`.
# Where another program starts srun (setpriv, env), it is started as
# `timeout -k 5 "$NGC_SRUN_TIMEOUT" srun ...`.
ngc_bounded() { timeout -k 5 "$NGC_SRUN_TIMEOUT" "$@"; }
ngc_srun() { ngc_bounded srun "$@"; }

# ngc_init DIR: prepare the work dir, start munged, install cleanup traps.
ngc_init() {
    NGC_DIR=${1:?ngc_init needs a directory}
    mkdir -p "$NGC_DIR" || return 1
    NGC_DIR=$(cd "$NGC_DIR" && pwd)
    chmod 755 "$NGC_DIR"
    ngc_pick_ports || return 1
    NGC_CONF=$NGC_DIR/etc/slurm.conf
    NGC_GRES_CONF=$NGC_DIR/etc/gres.conf
    NGC_PLUGIN_GRES_CONF=$NGC_DIR/etc/gres.fsroot.conf
    NGC_PLUGSTACK_CONF=$NGC_DIR/etc/plugstack.conf
    NGC_FSROOT=$NGC_DIR/fsroot
    NGC_MUNGE_SOCKET=$NGC_DIR/munge/munge.socket
    export SLURM_CONF=$NGC_CONF
    # Clients must not pick up a user's defaults or a real cluster's.
    unset SLURM_JOB_ID SLURM_JOBID SLURM_NODELIST SLURM_NTASKS
    NGC_RUNNING=0
    NGC_ERROR=
    trap 'ngc_teardown' EXIT
    trap 'ngc_teardown; exit 130' INT TERM HUP
    ngc_check_host || return 1
    ngc_start_munge
}

# NG_SLURM_PORT_BASE given: use it. Otherwise the first free block of 10
# ports from 36817 up, so concurrent runs (other build dirs) don't collide.
ngc_pick_ports() {
    if [ -n "${NG_SLURM_PORT_BASE:-}" ]; then
        NGC_PORT=$NG_SLURM_PORT_BASE
        return 0
    fi
    local base p busy from=${NG_SLURM_PORT_SEARCH:-36817}
    for ((base = from; base < from + 400; base += 10)); do
        busy=0
        for ((p = base; p < base + 10; p++)); do
            ngc_port_open "$p" && { busy=1; break; }
        done
        [ $busy = 0 ] && { NGC_PORT=$base; return 0; }
    done
    ngc_fail "no free port block in $from-$((from + 399)); set NG_SLURM_PORT_BASE"
}

# slurmd refuses to start without a mounted cgroup tree; say so clearly.
ngc_check_host() {
    if [ "$(id -u)" -ne 0 ]; then
        ngc_fail "the test cluster must run as root"; return 1
    fi
    if ! grep -q ' /sys/fs/cgroup ' /proc/mounts; then
        ngc_fail "/sys/fs/cgroup is not mounted (slurmd needs it)"; return 1
    fi
    local b
    for b in slurmctld slurmd munged mungekey; do
        [ -x "$NGC_SBIN/$b" ] || { ngc_fail "missing $NGC_SBIN/$b (run tests/install-deps.sh)"; return 1; }
    done
    for b in srun sbatch sinfo scontrol squeue python3 timeout; do
        command -v "$b" >/dev/null || { ngc_fail "missing $b (run tests/install-deps.sh)"; return 1; }
    done
    # Slurm looks this host's name up: with a name that does not resolve,
    # Slurm 24.11's daemons retry for seconds at each step and a job's end
    # waits about a minute (22.05 copes). Said once, before anything starts.
    local name
    name=$(uname -n)
    if ! getent hosts "$name" >/dev/null 2>&1; then
        ngc_fail "this host's name '$name' does not resolve (Slurm looks it up): add the line '127.0.1.1 $name' to /etc/hosts"
        return 1
    fi
}

ngc_start_munge() {
    local m=$NGC_DIR/munge
    mkdir -p "$m" && chmod 755 "$m"
    if [ ! -s "$m/munge.key" ]; then
        "$NGC_SBIN/mungekey" -c -k "$m/munge.key" -b 1024 >/dev/null 2>&1 || {
            ngc_fail "mungekey failed"; return 1; }
    fi
    chmod 600 "$m/munge.key"
    "$NGC_SBIN/munged" -F --key-file="$m/munge.key" --socket="$NGC_MUNGE_SOCKET" \
        --pid-file="$m/munged.pid" --seed-file="$m/munged.seed" \
        --log-file="$m/munged.log" >/dev/null 2>&1 &
    NGC_MUNGE_PID=$!
    local i
    for i in $(seq 100); do
        [ -S "$NGC_MUNGE_SOCKET" ] && return 0
        kill -0 "$NGC_MUNGE_PID" 2>/dev/null || break
        sleep 0.05
    done
    ngc_fail "munged did not start: $(grep -v '^ *$' "$m/munged.log" 2>/dev/null | tail -1)"
    sed 's/^/#   /' "$m/munged.log" >&2
    return 1
}

# The NVIDIA GPUs of a topology XML, PCI bus order: "busid model" lines.
# A GPU is a PCI device of class 03xx (display) or 12xx (accelerator) with
# vendor 10de, which is how hwloc itself recognises them.
ngc_topology_nvidia_gpus() {
    python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
gpus = []
for m in re.finditer(r'<object type="PCIDev"([^>]*)>', text):
    attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
    t = attrs.get("pci_type", "")
    tm = re.match(r'([0-9a-fA-F]{4}) \[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]', t)
    if not tm or tm.group(2).lower() != "10de":
        continue
    if tm.group(1)[:2] not in ("03", "12"):
        continue
    # The model name, if hwloc recorded one, follows in an <info> child.
    tail = text[m.end():m.end() + 2000]
    name = re.search(r'<info name="PCIDevice" value="([^"]*)"', tail.split("<object", 1)[0])
    gpus.append((attrs["pci_busid"].lower(), name.group(1) if name else "NVIDIA GPU 10de:" + tm.group(3)))
for bus, name in sorted(gpus):
    print(bus, name)
EOF
}

# Write fake NVIDIA device files and driver information for bus ids $@.
ngc_make_fake_gpus() {
    local dev=$NGC_FSROOT/dev gpus=$NGC_FSROOT/proc/driver/nvidia/gpus
    rm -rf "$dev" "$gpus"
    mkdir -p "$dev" "$gpus"
    local n=0 bus model
    for bus in "$@"; do
        model=${NGC_GPU_MODEL:-NVIDIA Test GPU}
        mknod "$dev/nvidia$n" c 195 "$n" || return 1
        mkdir -p "$gpus/$bus"
        # Field names, order and separators as nv-procfs.c prints them.
        {
            printf 'Model: \t\t %s\n' "$model"
            printf 'IRQ:   \t\t %d\n' $((100 + n))
            printf 'GPU UUID: \t GPU-%08x-0000-4000-8000-%012x\n' "$n" "$n"
            printf 'Video BIOS: \t %s\n' "90.04.38.00.03"
            printf 'Bus Type: \t %s\n' PCIe
            printf 'DMA Size: \t %d bits\n' 47
            printf 'DMA Mask: \t 0x%s\n' 7fffffffffff
            printf 'Bus Location: \t %s\n' "$bus"
            printf 'Device Minor: \t %u\n' "$n"
            printf 'GPU Excluded:\t %s\n' No
        } >"$gpus/$bus/information"
        n=$((n + 1))
    done
    # The plugin's other /proc and /sys lookups (mempolicy knobs) fall back
    # to the real files when absent; nothing else is faked.
    NGC_NGPUS=$n
}

# Node hardware line for slurm.conf: from the topology XML (slurmd -C with
# HWLOC_XMLFILE, which is what slurmd will report) or from this host.
ngc_node_hw() {
    local line
    if [ -n "${NGC_TOPOLOGY:-}" ]; then
        line=$(HWLOC_XMLFILE=$NGC_TOPOLOGY "$NGC_SBIN/slurmd" -C 2>/dev/null | head -1)
    else
        line=$("$NGC_SBIN/slurmd" -C 2>/dev/null | head -1)
    fi
    # Keep CPUs..ThreadsPerCore; RealMemory small so no node is "low memory".
    printf '%s' "$line" | sed -e 's/^NodeName=[^ ]* //' -e 's/ RealMemory=.*//'
}

ngc_write_config() {
    local etc=$NGC_DIR/etc nodes=${NGC_NODES:-1} tp=${NGC_TASK_PLUGIN:-task/affinity}
    mkdir -p "$etc" "$NGC_DIR/state" "$NGC_DIR/log"
    local busids=() ngpus=0
    if [ -n "${NGC_GPU_BUSIDS:-}" ]; then
        read -r -a busids <<<"$NGC_GPU_BUSIDS"
    elif [ "${NGC_GPUS:-auto}" = auto ]; then
        if [ -n "${NGC_TOPOLOGY:-}" ]; then
            mapfile -t busids < <(ngc_topology_nvidia_gpus "$NGC_TOPOLOGY" | cut -d' ' -f1)
        fi
    else
        local i
        for ((i = 0; i < NGC_GPUS; i++)); do busids+=("$(printf '0000:%02x:00.0' $((0x10 + i)))"); done
    fi
    ngc_make_fake_gpus "${busids[@]}" || return 1
    ngpus=$NGC_NGPUS
    local hw gres=""
    hw=$(ngc_node_hw)
    [ -n "$hw" ] || { ngc_fail "cannot get node hardware (slurmd -C)"; return 1; }
    [ "$ngpus" -gt 0 ] && gres="Gres=gpu:$ngpus"
    {
        echo "# written by tests/slurm/cluster.sh"
        echo "ClusterName=ngtest"
        echo "SlurmctldHost=localhost(127.0.0.1)"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "SlurmctldPort=$NGC_PORT"
        echo "SlurmdPort=$((NGC_PORT + 1))"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        echo "AuthInfo=socket=$NGC_MUNGE_SOCKET"
        echo "StateSaveLocation=$NGC_DIR/state"
        echo "SlurmdSpoolDir=$NGC_DIR/spool/%n"
        echo "SlurmctldPidFile=$NGC_DIR/slurmctld.pid"
        echo "SlurmdPidFile=$NGC_DIR/slurmd.%n.pid"
        echo "SlurmctldLogFile=$NGC_DIR/log/slurmctld.log"
        echo "SlurmdLogFile=$NGC_DIR/log/slurmd.%n.log"
        echo "SlurmctldDebug=${NGC_CTLD_DEBUG:-info}"
        echo "SlurmdDebug=${NGC_SLURMD_DEBUG:-info}"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=$tp"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "MpiDefault=none"
        echo "ReturnToService=2"
        echo "MailProg=/bin/true"
        echo "EnforcePartLimits=ALL"
        echo "AccountingStorageType=accounting_storage/none"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "JobCompType=jobcomp/none"
        echo "PlugStackConfig=$NGC_PLUGSTACK_CONF"
        echo "GresTypes=gpu"
        echo "FirstJobId=$(ngc_first_job_id "$tp")"
        echo "MinJobAge=30"
        echo "KillWait=2"
        [ -n "${NGC_TOPOLOGY:-}" ] && echo "SlurmdParameters=config_overrides"
        [ -n "${NGC_SLURM_EXTRA:-}" ] && printf '%s\n' "$NGC_SLURM_EXTRA"
        local k
        for ((k = 1; k <= nodes; k++)); do
            echo "NodeName=$(ngc_node_name $k) NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((NGC_PORT + k)) $hw RealMemory=1000 $gres State=UNKNOWN"
        done
        echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
    } >"$NGC_CONF"
    # Slurm's gres.conf names the device files by their host path; the
    # plugin's copy names them as the node under fsroot sees them
    # (/dev/nvidiaN), since the library reads gres.conf paths under fsroot.
    if [ -n "${NGC_GRES_TEMPLATE:-}" ]; then
        printf '%s\n' "${NGC_GRES_TEMPLATE//@DEV@/$NGC_FSROOT/dev}" >"$NGC_GRES_CONF"
        printf '%s\n' "${NGC_GRES_TEMPLATE//@DEV@//dev}" >"$NGC_PLUGIN_GRES_CONF"
    elif [ "$ngpus" -gt 0 ]; then
        printf 'Name=gpu File=%s/dev/nvidia[0-%d]\n' "$NGC_FSROOT" $((ngpus - 1)) >"$NGC_GRES_CONF"
        printf 'Name=gpu File=/dev/nvidia[0-%d]\n' $((ngpus - 1)) >"$NGC_PLUGIN_GRES_CONF"
    else
        : >"$NGC_GRES_CONF"
        : >"$NGC_PLUGIN_GRES_CONF"
    fi
    printf '%s\n' "${NGC_PLUGSTACK:-}" >"$NGC_PLUGSTACK_CONF"
    rm -f "$etc/cgroup.conf"
    case $tp in *task/cgroup*) ngc_write_cgroup_conf "$etc/cgroup.conf" ;; esac
}

# Job ids: 1, except under task/cgroup. Slurm names a job's cgroup
# slurm_<node>/uid_<uid>/job_<id> (v1) without the cluster's name, and every
# test cluster's nodes are ng1..ngN: two clusters at once (make check and
# check-releases, or a job's cgroup a failed step left behind) would share
# job_1 and Slurm fails the step writing its cpuset (EBUSY). So each such
# cluster starts at an id from its ports and the clock.
ngc_first_job_id() {
    case $1 in
        *task/cgroup*) echo $((1 + (NGC_PORT % 1000) * 60000 + ($(date +%s) % 600) * 100)) ;;
        *) echo 1 ;;
    esac
}

# cgroup v2 (one unified tree: cgroup.controllers at the top) or v1 (one
# mount per controller: cpuset, devices, ...). Prints v1, v2 or nothing.
ngc_cgroup_version() {
    if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        echo v2
    elif [ -d /sys/fs/cgroup/cpuset ] && [ -d /sys/fs/cgroup/devices ]; then
        echo v1
    fi
}

# cgroup.conf beside slurm.conf (slurmd reads it from there). Cores and
# devices constrained as on production sites; memory left alone (the
# tests' jobs ask for no memory, and RealMemory is made up).
ngc_write_cgroup_conf() {
    local v
    v=$(ngc_cgroup_version)
    [ -n "$v" ] || { ngc_fail "task/cgroup: no cpuset and devices cgroup here"; return 1; }
    {
        echo "# written by tests/slurm/cluster.sh ($v host)"
        echo "CgroupPlugin=cgroup/$v"
        echo "CgroupMountpoint=/sys/fs/cgroup"
        echo "ConstrainCores=yes"
        echo "ConstrainDevices=yes"
        echo "ConstrainRAMSpace=no"
        if [ -n "${NGC_CGROUP_EXTRA:-}" ]; then printf '%s\n' "$NGC_CGROUP_EXTRA"; fi
    } >"$1"
}

# ngc_node_name K: the name of node K (1..NGC_NODES).
ngc_node_name() {
    # shellcheck disable=SC2059
    printf "${NGC_NODE_FMT:-ng%d}" "$1"
}

# Is a TCP port on 127.0.0.1 accepting connections?
ngc_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ngc_wait_for SECONDS COMMAND...: poll every 50 ms until COMMAND succeeds.
ngc_wait_for() {
    local limit=$1 i
    shift
    for ((i = 0; i < limit * 20; i++)); do
        "$@" && return 0
        sleep 0.05
    done
    return 1
}

ngc_all_idle() {
    local s
    s=$(sinfo -h -N -o '%t' 2>/dev/null | sort -u | tr '\n' ' ')
    [ "$s" = "idle " ]
}

ngc_no_comp() {
    ! sinfo -h -N -o '%t' 2>/dev/null | grep -Eq 'comp|mix|alloc'
}

# Node state words ("idle", "drain", ...), one per node, sorted.
ngc_node_states() { sinfo -h -N -o '%t' 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/ $//'; }

# Wait until every node is idle (before timed sruns: else some queue ~1 s).
ngc_wait_idle() { ngc_wait_for "${1:-20}" ngc_all_idle; }

ngc_start() {
    [ "${NGC_RUNNING:-0}" = 1 ] && ngc_stop
    NGC_ERROR=
    # Another suite's cluster may have taken the block picked at ngc_init
    # (suites run side by side in other build dirs): pick the next free one.
    if [ -z "${NG_SLURM_PORT_BASE:-}" ] && ngc_port_open "$NGC_PORT"; then
        NG_SLURM_PORT_SEARCH=$((NGC_PORT + 10)) ngc_pick_ports || return 1
    fi
    ngc_write_config || return 1
    local nodes=${NGC_NODES:-1} k slurmd_args=()
    if ngc_port_open "$NGC_PORT"; then
        ngc_fail "port $NGC_PORT is busy: set NG_SLURM_PORT_BASE"; return 1
    fi
    # shellcheck disable=SC2206  # NGC_SLURMD_ARGS: words, as on a command line
    slurmd_args=(${NGC_SLURMD_ARGS:-})
    # Job ids restart at 1 with a fresh state dir: slurmd must forget the
    # credentials it revoked for the previous incarnation's jobs (cred_state
    # in its spool), or a reused job id fails with "Job credential revoked".
    rm -rf "$NGC_DIR/state"/* "$NGC_DIR/spool"
    "$NGC_SBIN/slurmctld" -D -i -f "$NGC_CONF" >>"$NGC_DIR/log/slurmctld.out" 2>&1 &
    NGC_CTLD_PID=$!
    NGC_SLURMD_PIDS=()
    NGC_RUNNING=1
    if ! ngc_wait_started 20 ngc_port_open "$NGC_PORT"; then
        ngc_start_failed "slurmctld did not open port $NGC_PORT" slurmctld; return 1
    fi
    for ((k = 1; k <= nodes; k++)); do
        local name
        name=$(ngc_node_name $k)
        mkdir -p "$NGC_DIR/spool/$name"
        if [ -n "${NGC_TOPOLOGY:-}" ]; then
            HWLOC_XMLFILE=$NGC_TOPOLOGY "$NGC_SBIN/slurmd" -D -N "$name" -f "$NGC_CONF" "${slurmd_args[@]}" \
                >>"$NGC_DIR/log/slurmd.$name.out" 2>&1 &
        else
            "$NGC_SBIN/slurmd" -D -N "$name" -f "$NGC_CONF" "${slurmd_args[@]}" \
                >>"$NGC_DIR/log/slurmd.$name.out" 2>&1 &
        fi
        NGC_SLURMD_PIDS+=($!)
    done
    if ! ngc_wait_started 30 ngc_all_idle; then
        ngc_start_failed "nodes not idle ($(ngc_node_states))" slurmd; return 1
    fi
}

# ngc_wait_started SECONDS COMMAND...: ngc_wait_for, but gives up as soon
# as a daemon started by ngc_start has exited (nothing to wait for then).
ngc_wait_started() {
    local limit=$1 i p
    shift
    for ((i = 0; i < limit * 20; i++)); do
        "$@" && return 0
        for p in "$NGC_CTLD_PID" "${NGC_SLURMD_PIDS[@]}"; do
            kill -0 "$p" 2>/dev/null || return 1
        done
        sleep 0.05
    done
    return 1
}

# ngc_start_failed WHAT DAEMON: the one line that matters first (the
# daemon's first fatal, else its first error that is not start-up noise:
# no PMIx library, no saved state, the port probes), then the log tails.
ngc_start_failed() {
    local what=$1 daemon=$2 f line=""
    for f in "$NGC_DIR"/log/"$daemon"*.log "$NGC_DIR"/log/"$daemon"*.out; do
        [ -f "$f" ] || continue
        line=$(grep -m1 -i 'fatal' "$f")
        [ -n "$line" ] || line=$(grep -i 'error' "$f" |
            grep -Eiv 'pmix|mpi/|MPI: Cannot|state file|Trying backup|Zero Bytes were transmitted' | head -1)
        if [ -n "$line" ]; then
            f=${f##*/}
            line="${f%.*}: $(printf '%s' "$line" | sed 's/^\[[^]]*\] //')"
            break
        fi
    done
    case $line in
        *resolve*|*getaddrinfo*)
            line="$line (this host's name '$(uname -n)' must resolve: add '127.0.1.1 $(uname -n)' to /etc/hosts)" ;;
    esac
    ngc_fail "$what${line:+: $line}"
    ngc_dump_logs
}

# Stop slurmd(s) and slurmctld: wait for running jobs to finish completing,
# SIGTERM them together (slurmd first in the list), wait, SIGKILL leftovers.
ngc_stop() {
    [ "${NGC_RUNNING:-0}" = 1 ] || return 0
    ngc_wait_for 10 ngc_no_comp || true
    local pids=("${NGC_SLURMD_PIDS[@]}" "$NGC_CTLD_PID") p i
    kill -TERM "${pids[@]}" 2>/dev/null
    for ((i = 0; i < 200; i++)); do
        local alive=0
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.05
    done
    for p in "${pids[@]}"; do
        if kill -0 "$p" 2>/dev/null; then
            ngc_log "daemon $p ignored SIGTERM; killing it"
            kill -KILL "$p" 2>/dev/null
        fi
    done
    # slurmstepd processes of killed steps would keep ports and files.
    ngc_kill_stepds
    wait "${pids[@]}" 2>/dev/null
    NGC_RUNNING=0
}

# slurmstepd processes outlive a killed slurmd (they are reparented). Ours
# are those holding a file under our work dir (spool socket, logs); others
# on the host are left alone. /proc is scanned directly: no procps needed.
ngc_kill_stepds() {
    local d p
    for d in /proc/[0-9]*; do
        [ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ] || continue
        p=${d#/proc/}
        if ls -l "$d/fd" 2>/dev/null | grep -qF "$NGC_DIR/"; then
            kill -KILL "$p" 2>/dev/null
        fi
    done
}

ngc_restart() { ngc_stop; ngc_start; }

# Full cleanup (EXIT trap): daemons, munged. Keeps the work dir (logs) when
# NGC_KEEP=1 or a test failed and NGC_KEEP_ON_FAIL=1.
ngc_teardown() {
    ngc_stop
    if [ -n "${NGC_MUNGE_PID:-}" ]; then
        kill -TERM "$NGC_MUNGE_PID" 2>/dev/null
        wait "$NGC_MUNGE_PID" 2>/dev/null
        NGC_MUNGE_PID=
    fi
    if [ -n "${NGC_DIR:-}" ] && [ "${NGC_KEEP:-0}" != 1 ] && [ "${NGC_CLEAN_DIR:-1}" = 1 ]; then
        rm -rf "$NGC_DIR"
    fi
    trap - EXIT
}

# The value of job id counter: the id the next job will get.
ngc_next_job_id() {
    local id
    # A clean environment: no SPANK option variables, no user settings.
    id=$(env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" timeout -k 5 "$NGC_SRUN_TIMEOUT" \
        srun -n1 -t 1 sh -c 'echo $SLURM_JOB_ID' 2>/dev/null)
    echo $((id + 1))
}
