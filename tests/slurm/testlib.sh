# shellcheck shell=bash
# tests/slurm/testlib.sh - TAP helpers and paths for tests/slurm/t-*.sh.
#
# A test starts with:
#   [ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
#   . "$(dirname "$0")/testlib.sh"
# then calls ngt_start_suite NAME, ngc_* (cluster.sh), ngt_* assertions,
# and ngt_done at the end. Lines are "ok N - ..." / "not ok N - ...".

NGT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) NGT_BUILD=$BUILD ;; *) NGT_BUILD=$NGT_TOP/$BUILD ;; esac
NGT_PROBE=$NGT_BUILD/tests/ng_probe
NGT_PLUGIN=$NGT_BUILD/numaguard.so
NGT_CLI=$NGT_BUILD/numaguard
NGT_TOPO=$NGT_TOP/tests/topologies
NGT_CHECK="python3 $NGT_TOP/tests/slurm/ngcheck.py"
# shellcheck source=tests/slurm/cluster.sh
. "$NGT_TOP/tests/slurm/cluster.sh"

ngt_n=0
ngt_failed=0

# Number and print TAP lines read from stdin ("ok - x" / "not ok - x" /
# "# comment"); used for ngcheck.py's output.
ngt_emit() {
    local line
    while IFS= read -r line; do
        case $line in
            "ok - "*) ngt_n=$((ngt_n + 1)); echo "ok $ngt_n - ${line#ok - }" ;;
            "not ok - "*) ngt_n=$((ngt_n + 1)); ngt_failed=$((ngt_failed + 1))
                echo "not ok $ngt_n - ${line#not ok - }" ;;
            *) echo "$line" ;;
        esac
    done
}

# ngt_ok STATUS DESC: pass when STATUS is 0.
ngt_ok() {
    ngt_n=$((ngt_n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $ngt_n - $2"
    else
        ngt_failed=$((ngt_failed + 1))
        echo "not ok $ngt_n - $2"
    fi
}

# ngt_is GOT WANT DESC
ngt_is() {
    if [ "$1" = "$2" ]; then
        ngt_ok 0 "$3"
    else
        ngt_ok 1 "$3"
        printf '#   got:  %s\n#   want: %s\n' "$1" "$2"
    fi
}

# ngt_like GOT REGEX DESC (grep -E)
ngt_like() {
    if printf '%s\n' "$1" | grep -Eq -- "$2"; then
        ngt_ok 0 "$3"
    else
        ngt_ok 1 "$3"
        printf '%s\n' "$1" | head -5 | sed 's/^/#   got: /'
        printf '#   want match: %s\n' "$2"
    fi
}

ngt_unlike() {
    if printf '%s\n' "$1" | grep -Eq -- "$2"; then
        ngt_ok 1 "$3"
        printf '%s\n' "$1" | grep -E -- "$2" | head -5 | sed 's/^/#   got: /'
    else
        ngt_ok 0 "$3"
    fi
}

# Run ngcheck.py and number its lines.
ngt_check() { ngt_emit < <($NGT_CHECK "$@"); }

ngt_skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

# ngt_start_suite NAME [plugin]: check prerequisites, make a work dir,
# start munged. With "plugin", skip the file when the plugin or the CLI
# is not built.
ngt_start_suite() {
    local name=$1
    [ "$(id -u)" -eq 0 ] || ngt_skip_all "needs root (private slurmctld/slurmd)"
    command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ] ||
        ngt_skip_all "Slurm not installed (tests/install-deps.sh)"
    [ -x "$NGT_PROBE" ] || ngt_skip_all "$NGT_PROBE not built (make tests)"
    if [ "${2:-}" = plugin ]; then
        [ -f "$NGT_PLUGIN" ] || ngt_skip_all "$NGT_PLUGIN not built"
        [ -x "$NGT_CLI" ] || ngt_skip_all "$NGT_CLI not built"
    fi
    NGT_T0=$(date +%s)
    ngc_init "${NG_TEST_TMP:-/tmp}/ng-$name.$$" || { echo "Bail out! cluster set-up failed"; exit 1; }
    NGT_OUT=$NGC_DIR/out
    mkdir -p "$NGT_OUT"
}

# Start (or restart) the cluster or bail out: nothing else can pass.
ngt_cluster() {
    if ! ngc_restart; then
        echo "Bail out! cluster did not start ($(ngc_node_states))"
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
    srun -D "$NGT_OUT" "${a[@]}" "$NGT_PROBE" "${p[@]}" >"$out" 2>"$out.err"
}

# The plugin's plugstack.conf line with the test fakes (fsroot, gres.conf).
ngt_plugstack() {
    echo "${NGT_PLUGSTACK_KIND:-optional} $NGT_PLUGIN fsroot=$NGC_FSROOT gres_conf=$NGC_PLUGIN_GRES_CONF $*"
}

ngt_done() {
    echo "1..$ngt_n"
    echo "# $(basename "$0"): $((ngt_n - ngt_failed))/$ngt_n passed in $(( $(date +%s) - NGT_T0 ))s"
    if [ "$ngt_failed" -ne 0 ] && [ "${NGC_KEEP_ON_FAIL:-0}" = 1 ]; then
        NGC_CLEAN_DIR=0
        echo "# kept $NGC_DIR"
    fi
    ngc_teardown
    [ "$ngt_failed" -eq 0 ]
}
