#!/bin/sh
# numaguard as an admin installs it and a user runs it: build the .debs
# (dpkg-buildpackage), unpack them into a clean root (dpkg -x), check the
# files, run the installed CLI and man pages, load the INSTALLED plugin in a
# real private Slurm (tests/slurm/cluster.sh, free ports from 36817 up) and run jobs;
# and `numaguard exec` under a real srun (ranks from SLURM_LOCALID and
# SLURM_STEP_TASKS_PER_NODE).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
cd "$(dirname "$0")/../.." || exit 2
. tests/slurm/testlib.sh
# Ports: the first free block (cluster.sh), or NG_USERS_PORT_BASE.
[ -n "${NG_USERS_PORT_BASE:-}" ] && export NG_SLURM_PORT_BASE=$NG_USERS_PORT_BASE

command -v dpkg-buildpackage >/dev/null && dpkg -s debhelper >/dev/null 2>&1 ||
    ngt_skip_all "needs dpkg-dev and debhelper (Debian packages) for the .deb build"
[ "$(nproc --all)" -ge 2 ] || ngt_skip_all "needs 2 CPUs"
ngt_start_suite users-srun plugin

# --- the package ---
make --no-print-directory BUILD="$BUILD" deb >"$NGT_OUT/deb.log" 2>&1
ngt_ok $? "make deb (dpkg-buildpackage) succeeds"
DEB=$(ls "$NGT_BUILD"/deb/numaguard_*.deb 2>/dev/null | head -1)
ROOT=$NGC_DIR/root
mkdir -p "$ROOT"
dpkg -x "$DEB" "$ROOT" 2>/dev/null
ngt_ok $? "dpkg -x into a clean root"
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for f in usr/bin/numaguard "usr/lib/$MA/slurm-wlm/numaguard.so" usr/share/man/man1/numaguard.1.gz \
         usr/share/man/man8/numaguard.8.gz usr/share/doc/numaguard/plugstack.conf.example; do
    [ -f "$ROOT/$f" ]
    ngt_ok $? "package holds /$f"
done
ngt_like "$(dpkg -I "$DEB" | grep '^ Depends:')" \
    'slurm-wlm-basic-plugins \(>= [0-9]+\.[0-9]+\), slurm-wlm-basic-plugins \(<< [0-9]+\.[0-9]+\)' \
    "depends on the Slurm release it was built for"
ngt_is "$("$ROOT/usr/bin/numaguard" topo --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["numa_nodes"]) > 0)')" \
    "True" "installed CLI runs (topo --json)"
ngt_like "$(zcat "$ROOT/usr/share/man/man1/numaguard.1.gz" | groff -man -Tascii -P-cbou 2>&1 | grep -m1 'numaguard exec')" \
    'numaguard exec' "installed numaguard(1) renders"

# --- the installed plugin in a real Slurm ---
NGT_PLUGIN=$ROOT/usr/lib/$MA/slurm-wlm/numaguard.so
NGC_PLUGSTACK="required $NGT_PLUGIN allowed_policies=local,prefer,interleave,none"
ngt_cluster
show='echo "$SLURM_PROCID $(sed -n "s/^Cpus_allowed_list:\t//p" /proc/self/status) $NUMAGUARD_CPUS $NUMAGUARD_MEM_MODE $OMP_NUM_THREADS"'
ngc_wait_idle 10
out=$(srun -n 2 --numa-policy=local --omp-guard sh -c "$show" 2>"$NGT_OUT/j1.err" | sort)
ngt_is "$out" "$(printf '0 0 0 bind 1\n1 1 1 bind 1')" "installed plugin: 2 tasks on CPUs 0 and 1, memory bound, 1 thread each"
ngc_wait_idle 10
srun -n 1 --numa-policy=weighted true 2>"$NGT_OUT/j2.err"
rc=$?
ngt_is "$rc" 255 "allowed_policies from plugstack.conf: weighted refused (exit 255)"
ngt_like "$(cat "$NGT_OUT/j2.err")" 'numa-policy=weighted is not allowed on this cluster \(allowed: local,prefer,interleave,none\)' \
    "refusal names the allowed policies"

# --- numaguard exec under srun (the plugin not asked for) ---
ngc_wait_idle 10
out=$(srun -n 2 --cpu-bind=none "$NGT_CLI" exec --omp-guard -- sh -c "$show" 2>"$NGT_OUT/j3.err" | sort)
ngt_is "$out" "$(printf '0 0 0 bind 1\n1 1 1 bind 1')" \
    "srun -n 2 numaguard exec: rank from SLURM_LOCALID, size from SLURM_STEP_TASKS_PER_NODE"
ngc_wait_idle 10
out=$(srun -n 2 --cpu-bind=none "$NGT_CLI" exec --verbose -- true 2>&1 | grep '^numaguard: rank' | sort)
ngt_is "$out" "$(printf 'numaguard: rank 0 (local 0): gpus none numa 0 cpus 0 mem bind:0\nnumaguard: rank 1 (local 1): gpus none numa 0 cpus 1 mem bind:0')" \
    "exec --verbose under srun: one line per rank with SLURM_PROCID"

ngt_done
