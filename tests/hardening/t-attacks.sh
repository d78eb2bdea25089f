#!/bin/sh
# Attacks by an unprivileged cluster user on the topology cache (issue 13),
# each through real srun on the private cluster (tests/slurm/cluster.sh),
# srun and the job running as uid 65534 (nobody):
#   - the admin points topology_cache= at a user-creatable path (/tmp): the
#     user creates the directory first, with an XML of their choice and a
#     stamp forged from the world-readable real one (right size and hash)
#   - a FIFO named topology.stamp: in the user's directory, and in root's
#     own cache directory (a fault: it used to hang every step in open())
#   - a symlinked parent: a user's symlink under /tmp, and a root-owned one
#   - identifying infos (DMI serials, product UUID) in the cache slurmd writes
#   - (and that hwloc's plugin blacklist is set in slurmd, single-threaded,
#     not by setenv in the multi-threaded slurmstepd)
# Each: the cache is refused (the step says "topology discovered live" and
# tasks get the real machine's placement), the step ends in bounded time,
# slurmd's log names the reason once per step ("topology cache DIR not used
# (why); topology discovered live"), the node is idle afterwards.
# The 512-task GPU-exchange timeout: tests/unit/spank/test_exchange.c, and
# through srun in t-faults.sh (test_fault=exchange_absent).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../slurm/testlib.sh"
command -v setpriv >/dev/null 2>&1 || skip_all "needs setpriv (util-linux)"
ngt_start_suite attacks plugin

U=65534
# What the user's srun loads (the plugin) and runs (the probe), and a
# topology the forger reads: copies open to uid 65534 (testlib.sh), so the
# suite runs from any clone, /root included.
LAPTOP=$NGT_TOPO/laptop-hp-elitebook-i7-1370p.xml
ngt_user_files $U "$NGT_PLUGIN" "$NGT_PROBE" "$LAPTOP"
NGT_PLUGIN=$NGT_SHARED/${NGT_PLUGIN##*/} NGT_PROBE=$NGT_SHARED/${NGT_PROBE##*/} LAPTOP=$NGT_SHARED/${LAPTOP##*/}
# slurmstepd's environment as slurmd starts it: slurmd -d starts this
# wrapper instead, which writes its environment and becomes the real
# slurmstepd (its /proc/PID/environ cannot tell: Slurm 24.11 writes its
# process title over it).
STEPD_ENV=$NGC_DIR/stepd-env
mkdir -p "$STEPD_ENV"
printf '#!/bin/sh\nenv >"%s/$$"\nexec "%s" "$@"\n' "$STEPD_ENV" "$NGC_SBIN/slurmstepd" >"$NGT_SHARED/slurmstepd"
chmod 755 "$NGT_SHARED/slurmstepd"
NGC_SLURMD_ARGS="-d $NGT_SHARED/slurmstepd"
# The user's own work dir (job cwd, where the forger writes).
UDIR=$NGC_DIR/user
mkdir -p "$UDIR" && chown "$U:$U" "$UDIR"
# A trusted cache path (root's alone, like /run/numaguard) for the controls.
RUNC=$(mktemp -d /run/ng-attacks.XXXXXX) && chmod 755 "$RUNC"
# User-creatable paths the admin might have chosen.
ATK=/tmp/ng-attack.$$
LNK=/tmp/ng-attack-link.$$
cleanup_attacks() { rm -rf "$RUNC" "$ATK" "$LNK"; }
trap 'cleanup_attacks; ngc_teardown' EXIT

as_user() { setpriv --reuid=$U --regid=$U --clear-groups "$@"; }

# urun DESC WANT_CACHE(from cache|discovered live) SRUN-ARGS...: srun as the
# user with the probe, bounded by 60 s; checks exit 0, the topology source,
# that every task ran with memory bound to node 0 (this host's only node
# with CPUs), the time taken and the node state afterwards.
urun() {
    local desc=$1 want=$2 rc t0 secs n0 notes
    shift 2
    F=$NGT_OUT/$(echo "$desc" | tr -c 'a-zA-Z0-9\n' '_')
    ngc_wait_idle 10
    n0=$(slurmd_log | grep -c "$CACHE_NOTE")
    t0=$(date +%s)
    as_user timeout -k 5 60 srun -D "$UDIR" "$@" --numa-policy=local,verbose "$NGT_PROBE" "NUMAGUARD_*" \
        >"$F" 2>"$F.err"
    rc=$?
    secs=$(( $(date +%s) - t0 ))
    is "$rc" 0 "$desc: srun exit status (as uid $U)"
    ok $(( secs >= 30 )) "$desc: step done in ${secs}s (bounded)"
    like "$(cat "$F.err")" "topology $want" "$desc: topology $want"
    ngt_check expect "$F" "$desc: real placement" all:mempolicy=bind all:memnodes=0
    # slurmd's log gives the reason a configured cache was not used, once
    # for the step (one node); nothing when it was used.
    notes=$(slurmd_log | grep "$CACHE_NOTE" | tail -n +$((n0 + 1)))
    [ -n "$notes" ] && printf '%s\n' "$notes" | sed 's/^/#   slurmd: /'
    if [ "$want" = "from cache" ]; then
        is "$(printf '%s' "$notes" | grep -c .)" 0 "$desc: no cache note in slurmd's log"
    else
        is "$(printf '%s\n' "$notes" | grep -Ec "not used \(.+\); topology discovered live")" 1 \
            "$desc: slurmd's log says once why the cache was not used"
    fi
    ngc_wait_idle 20
    is "$(ngc_node_states)" idle "$desc: node idle afterwards"
}

slurmd_log() { cat "$NGC_DIR"/log/slurmd*.log 2>/dev/null; }
CACHE_NOTE="numaguard: node ng1: topology cache .* not used ("

# forge DIR XML: with the real stamp the user read ($REAL_STAMP), write
# DIR/topology.xml := XML with a stamp carrying XML's size and FNV-1a hash
# (the arithmetic is done by the test's python, the files are the user's).
forge() {
    local xml=$NGT_OUT/forge.xml
    as_user cat "$2" >"$xml" || return 1
    printf '%s\n' "$REAL_STAMP" | python3 -c '
import sys
xml = open(sys.argv[1], "rb").read()
h = 0xcbf29ce484222325
for b in xml:
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
for line in sys.stdin.read().splitlines():
    key = line.split(" ", 1)[0]
    if key == "xml_bytes":
        line = "xml_bytes %d" % len(xml)
    elif key == "xml_fnv1a64":
        line = "xml_fnv1a64 %016x" % h
    print(line)' "$xml" >"$NGT_OUT/forge.stamp" || return 1
    as_user sh -c 'cat >"$1/topology.xml"' sh "$1" <"$xml" &&
        as_user sh -c 'cat >"$1/topology.stamp"' sh "$1" <"$NGT_OUT/forge.stamp"
}

NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0

# --- the real cache in a trusted directory (controls, DMI) ---------------
NGC_PLUGSTACK="$(ngt_plugstack "topology_cache=$RUNC/cache")"
ngt_cluster
xml=$RUNC/cache/topology.xml
is "$(stat -c '%a %u' "$xml" "$RUNC/cache/topology.stamp" 2>&1 | sort -u)" "644 0" \
    "slurmd wrote the cache: root's, mode 0644 (world-readable)"
unlike "$(grep -Eio '<info name="[^"]*(serial|uuid|asset)[^"]*"' "$xml")" . \
    "the written cache has no serial, UUID or asset-tag info"
for f in product_uuid product_serial board_serial chassis_serial board_asset_tag; do
    v=$(cat "/sys/class/dmi/id/$f" 2>/dev/null | tr -d '[:space:]')
    [ -n "$v" ] && [ "$v" != "None" ] &&
        unlike "$(cat "$xml")" "$v" "DMI $f ($v) not in the written cache"
done
[ -r /sys/class/dmi/id/product_uuid ] ||
    echo "# no DMI on this host: stripping itself is tested on real XML in test_topocache"
urun "trusted cache" "from cache" -n 2
# hwloc's lean plugin set is put into slurmd's environment while slurmd is
# single-threaded (issue 13: setenv in slurmstepd raced with its threads);
# slurmstepd inherits it, the job's tasks do not see it.
# (The wrapper above recorded the environment of each slurmstepd.)
ngc_wait_idle 10
rm -f "$STEPD_ENV"/*
as_user timeout -k 5 "$NGC_SRUN_TIMEOUT" srun -D "$UDIR" -n 1 true >/dev/null 2>&1
stepd_env=$(cat "$STEPD_ENV"/* 2>/dev/null)
echo "# slurmstepd started $(ls "$STEPD_ENV" | wc -l) time(s) for the step"
like "$stepd_env" "^HWLOC_PLUGINS_BLACKLIST=hwloc_gl," \
    "slurmstepd inherits the lean hwloc plugin set from slurmd"
ngc_wait_idle 10
is "$(as_user timeout -k 5 "$NGC_SRUN_TIMEOUT" srun -D "$UDIR" -n 1 --numa-policy=local sh -c 'echo "${HWLOC_PLUGINS_BLACKLIST:-unset}"' 2>&1)" \
    unset "the job's tasks do not inherit it"
REAL_STAMP=$(as_user cat "$RUNC/cache/topology.stamp")
like "$REAL_STAMP" "^numaguard-topology-cache 1" "the user can read the real stamp (world-readable)"
# Control: the user's forgery passes every content check (stamp fields, size,
# hash): only the trust rules below stop it. Root installs it here to show.
sed 's/name="HostName" value="[^"]*"/name="HostName" value="forged"/' "$xml" >"$NGT_OUT/host.xml"
chmod 644 "$NGT_OUT/host.xml"
forge "$UDIR" "$NGT_OUT/host.xml"
ok $? "the user forged a stamp for an XML of their choice"
cp "$UDIR/topology.xml" "$UDIR/topology.stamp" "$RUNC/cache/"
chown root:root "$RUNC"/cache/topology.*
urun "control: the forged pair in root's directory" "from cache" -n 2
# Fault: a FIFO named topology.stamp in root's own cache directory.
rm -f "$RUNC/cache/topology.stamp" && mkfifo -m 644 "$RUNC/cache/topology.stamp"
urun "FIFO stamp in root's cache directory" "discovered live" -n 2

# --- the admin chose /tmp: the user creates the directory first ----------
as_user mkdir -m 755 -p "$ATK/cache"
forge "$ATK/cache" "$LAPTOP"
ok $? "the user planted a forged cache in $ATK/cache"
NGC_PLUGSTACK="$(ngt_plugstack "topology_cache=$ATK/cache")"
ngt_cluster
like "$(slurmd_log)" "numaguard: topology cache $ATK/cache not written \('/tmp' is writable by others" \
    "slurmd's log: cache under /tmp not written (names /tmp)"
is "$(stat -c %U "$ATK/cache/topology.xml")" nobody "slurmd did not touch the user's files"
urun "forged stamp + XML in a user's directory under /tmp" "discovered live" -n 2
rm -f "$ATK/cache/topology.stamp" && as_user mkfifo -m 644 "$ATK/cache/topology.stamp"
urun "FIFO stamp in a user's directory under /tmp" "discovered live" -n 2

# --- symlinked parents ----------------------------------------------------
as_user ln -s "$ATK" "$LNK"
as_user rm -f "$ATK/cache/topology.stamp"   # the FIFO above
forge "$ATK/cache" "$LAPTOP"
NGC_PLUGSTACK="$(ngt_plugstack "topology_cache=$LNK/cache")"
ngt_cluster
urun "a user's symlinked parent under /tmp" "discovered live" -n 2
# Root's own symlink, to root's own valid cache: refused all the same (no
# symlink anywhere on the path), and the admin is told why.
ln -s "$RUNC" "$RUNC/link"
NGC_PLUGSTACK="$(ngt_plugstack "topology_cache=$RUNC/link/cache")"
ngt_cluster
like "$(slurmd_log)" "topology cache $RUNC/link/cache not written \('$RUNC/link' is a symbolic link" \
    "slurmd's log: a symlink in the cache path is named"
urun "root-owned symlinked parent" "discovered live" -n 2
cleanup_attacks
ngt_done
