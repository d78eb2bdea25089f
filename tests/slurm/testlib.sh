# shellcheck shell=bash
# tests/slurm/testlib.sh - paths and cluster helpers of the suites that
# run jobs on the private cluster (tests/slurm, tests/hardening, tests/e2e).
#
# A test starts with:
#   [ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
#   . "$(dirname "$0")/testlib.sh"
# then calls ngt_start_suite NAME, ngc_* (cluster.sh), the assertions of
# tests/lib/tap.sh (ok, is, like, unlike, emit; sourced here), ngt_check
# (ngcheck.py), and ngt_done at the end.

NGT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) NGT_BUILD=$BUILD ;; *) NGT_BUILD=$NGT_TOP/$BUILD ;; esac
NGT_PROBE=$NGT_BUILD/tests/ng_probe
NGT_PLUGIN=$NGT_BUILD/numaguard.so
NGT_CLI=$NGT_BUILD/numaguard
NGT_TOPO=$NGT_TOP/tests/topologies
NGT_CHECK="python3 $NGT_TOP/tests/slurm/ngcheck.py"
# shellcheck source=tests/lib/tap.sh
. "$NGT_TOP/tests/lib/tap.sh"
# NG_MA (the multiarch triplet): libraries' directories on this architecture.
# shellcheck source=tests/lib/multiarch.sh
. "$NGT_TOP/tests/lib/multiarch.sh"
# shellcheck source=tests/slurm/cluster.sh
. "$NGT_TOP/tests/slurm/cluster.sh"

# Run ngcheck.py and number its lines.
ngt_check() { emit < <($NGT_CHECK "$@"); }

# ngt_start_suite NAME [plugin]: check prerequisites, make a work dir,
# start munged. With "plugin", skip the file when the plugin or the CLI
# is not built.
ngt_start_suite() {
    local name=$1
    [ "$(id -u)" -eq 0 ] || skip_all "needs root (private slurmctld/slurmd)"
    command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ] ||
        skip_all "Slurm not installed (tests/install-deps.sh)"
    [ -x "$NGT_PROBE" ] || skip_all "$NGT_PROBE not built (make tests)"
    if [ "${2:-}" = plugin ]; then
        [ -f "$NGT_PLUGIN" ] || skip_all "$NGT_PLUGIN not built"
        [ -x "$NGT_CLI" ] || skip_all "$NGT_CLI not built"
    fi
    NGT_T0=$(date +%s)
    ngc_init "${NG_TEST_TMP:-/tmp}/ng-$name.$$" || { echo "Bail out! ${NGC_ERROR:-cluster set-up failed}"; exit 1; }
    NGT_OUT=$NGC_DIR/out
    mkdir -p "$NGT_OUT"
}

# Start (or restart) the cluster or bail out: nothing else can pass.
ngt_cluster() {
    if ! ngc_restart; then
        echo "Bail out! cluster did not start: ${NGC_ERROR:-$(ngc_node_states)}"
        exit 1
    fi
}

# ngt_srun FILE SRUN-ARGS... : run srun with the probe as the command
# (append probe args after "--"); stdout to FILE, stderr to FILE.err;
# returns srun's exit status. Waits for idle nodes first.
ngt_srun() {
    local out=$1 a=() p=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    p=("$@")
    ngc_wait_idle 10
    # -D: tasks run in the work dir (a crashing task's core file lands there).
    ngc_srun -D "$NGT_OUT" "${a[@]}" "$NGT_PROBE" "${p[@]}" >"$out" 2>"$out.err"
}

# ngt_user_files UID FILE...: copies of the files an unprivileged user of
# the suite must read or run (the plugin its srun loads, the probe, a
# topology) in $NGC_DIR/shared (NGT_SHARED, mode 755), as an installed
# plugin would be: a clone under /root (mode 0700 on Debian) is closed to
# that user. Skips the whole file, in one line, if UID cannot read the
# copies either (a work dir below a closed directory: NG_TEST_TMP).
ngt_user_files() {
    local uid=$1 f
    shift
    NGT_SHARED=$NGC_DIR/shared
    mkdir -p "$NGT_SHARED" && chmod 755 "$NGT_SHARED"
    for f in "$@"; do
        cp "$f" "$NGT_SHARED/" && chmod a+rX "$NGT_SHARED/${f##*/}"
        setpriv --reuid="$uid" --regid="$uid" --clear-groups test -r "$NGT_SHARED/${f##*/}" ||
            skip_all "uid $uid cannot read $NGT_SHARED/${f##*/}: the work dir must be open to every user (NG_TEST_TMP)"
    done
}

# The plugin's plugstack.conf line with the test fakes (fsroot, gres.conf).
ngt_plugstack() {
    echo "${NGT_PLUGSTACK_KIND:-optional} $NGT_PLUGIN fsroot=$NGC_FSROOT gres_conf=$NGC_PLUGIN_GRES_CONF $*"
}

ngt_done() {
    echo "1..$tap_n"
    echo "# $(basename "$0"): $((tap_n - tap_failed))/$tap_n passed in $(( $(date +%s) - NGT_T0 ))s"
    if [ "$tap_failed" -ne 0 ] && [ "${NGC_KEEP_ON_FAIL:-0}" = 1 ]; then
        NGC_CLEAN_DIR=0
        echo "# kept $NGC_DIR"
    fi
    ngc_teardown
    [ "$tap_failed" -eq 0 ]
}
