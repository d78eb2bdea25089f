#!/bin/sh
# Containers started by the task (docs/containers.md), through a real srun
# with the plugin (test build, test_omp_preload= this build's governor):
# the same probe, `srun -l -n2 -c1 --numa-policy=local
# --omp-guard=adaptive`, bare and inside Charliecloud (ch-run), bubblewrap
# (Apptainer's stand-in, with and without --clearenv) and rootless Podman
# (runc, as a test user with subordinate ids). The image is a debootstrap
# minbase of the host's release (tests/lib/ctimage.sh, cached under
# /var/cache/numaguard-chroots; nothing from a registry), under an overlay
# per run so that bind mount points never land in the cache.
#
# Per task, against the bare run: Cpus_allowed_list (sched_getaffinity)
# and the memory policy equal; the thread variables and NUMAGUARD_* equal
# where the runtime passes the environment and where the documented
# channel carries them (ch-run --set-env=FILE, bwrap --setenv, podman
# --env-host); the governor mapped (/proc/self/maps) and teams governed
# (omp_set_num_threads(2) held to 1) with the directory bound at the same
# path; without it: one hint line for the node, no ld.so error, no
# LD_PRELOAD and no NUMAGUARD_OMP_GOVERNOR (no silent "adaptive"); `check`
# on a containerised task; pyxis's order of operations in both plugstack
# orders (tests/slurm/fake_pyxis.c). About 30-50 s here (2 cores), plus the
# image once (about 3 minutes).
# Skips, each with its reason: no user namespaces, no image (debootstrap),
# a runtime not installed (tests/install-deps.sh), no test user for Podman.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-containers plugin
FSO=$NGT_BUILD/numaguard-faults.so
[ -f "$FSO" ] && [ -x "$NGT_BUILD/tests/omp_teams" ] || skip_all "numaguard-faults.so or omp_teams not built (make all tests)"
unshare -U true 2>/dev/null || skip_all "no user namespaces here (unshare -U refused): no rootless runtime can run"
. "$NGT_TOP/tests/lib/ctimage.sh"
IMG=$(ng_ctimage 2>"$NGT_OUT/img.err") || skip_all "no container image: $(tail -1 "$NGT_OUT/img.err")"
. "$NGT_TOP/tests/lib/governor.sh"
# "open": rootless Podman's user and fake pyxis's user namespace (host root
# unmapped) bind the governor's directory, so it must be reachable by
# others, not only root's alone (a clone under /root, 0700, is not).
GDIR=$(ng_stage_governor "$NGT_BUILD" open)
[ -n "$GDIR" ] || skip_all "no directory root's alone and open to all holds this build's governor (tests/lib/governor.sh)"
# The plugin srun loads for the Podman runs' user: a copy that user can read.
ngt_user_files 65534 "$FSO"
FSO=$NGT_SHARED/${FSO##*/}
GOV=$GDIR/libnumaguard-omp.so
REL=$(basename "$IMG"); REL=${REL#ctimage-}

# The probe: copies in a directory every runtime binds at /ngt, and the
# same path bare (the image has no numaguard at all).
CT=$NGC_DIR/ct
mkdir -p "$CT/bin" "$CT/up" "$CT/work" "$CT/root"
cp "$NGT_PROBE" "$NGT_BUILD/tests/omp_teams" "$CT/bin/"
cat >"$CT/bin/probe.sh" <<'EOF'
#!/bin/sh
# One line: placement, variables, governor mapped, team size of a caller
# that asks omp_set_num_threads(2).
d=$(dirname "$0")
p=$("$d/ng_probe" OMP_NUM_THREADS MKL_NUM_THREADS OPENBLAS_NUM_THREADS LD_PRELOAD 'NUMAGUARD_*' | tr '\t' ' ')
g=$(grep -q libnumaguard-omp /proc/self/maps && echo 1 || echo 0)
t=$("$d/omp_teams" 1 20 setnum 2 2>/dev/null | sed -n 's/^all \([0-9-]*\) .*/\1/p')
echo "$p gov=$g teams=$t"
EOF
chmod -R a+rX "$CT/bin" && chmod 755 "$CT/bin/probe.sh" "$CT" "$NGC_DIR"
ROOT=$CT/root
mount -t overlay overlay -o "lowerdir=$IMG,upperdir=$CT/up,workdir=$CT/work" "$ROOT" ||
    skip_all "cannot mount an overlay of $IMG (overlayfs)"
mkdir -p "$ROOT/ngt" "$ROOT$GDIR"   # ch-run binds only onto existing directories
cleanup_ct() { umount "$ROOT" 2>/dev/null || umount -l "$ROOT" 2>/dev/null; [ "$GDIR" = "$NGT_BUILD" ] || rm -rf "$GDIR"; }
trap 'cleanup_ct; ngc_teardown' EXIT

NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0
NGC_PLUGSTACK="required $FSO test_omp_preload=$GOV"
ngt_cluster
export USER=${USER:-$(id -un)}   # ch-run wants it (a batch shell may lack it)
ARGS=(-l -n2 -c1 --numa-policy=local --omp-guard=adaptive)
UNSET="OMP_NUM_THREADS=<unset> MKL_NUM_THREADS=<unset> OPENBLAS_NUM_THREADS=<unset> "

# run NAME CMD...: the probe through srun; lines "T: ..." in $NGT_OUT/NAME.
run() {
    local name=$1
    shift
    ngc_wait_idle 10
    (cd "$NGT_OUT" && ngc_srun "${ARGS[@]}" "$@" >"$NGT_OUT/$name" 2>"$NGT_OUT/$name.err")
}
# f NAME TASK KEY: the value of KEY in task TASK's line ("" when absent).
f() { sed -n "s/^$2: //p" "$NGT_OUT/$1" | tr ' ' '\n' | sed -n "s/^$3=//p" | head -1; }
# vars NAME TASK: the thread variables and NUMAGUARD_* of a task's line.
vars() { sed -n "s/^$2: //p" "$NGT_OUT/$1" | tr ' ' '\n' | grep -E '^(OMP|MKL|OPENBLAS)_NUM_THREADS=|^NUMAGUARD_' | tr '\n' ' '; }
# same_place NAME: both tasks' CPUs and memory policy as bare.
same_place() {
    local t ok_=0
    for t in 0 1; do
        [ -n "$(f bare $t affinity)" ] && [ "$(f "$1" $t affinity)" = "$(f bare $t affinity)" ] &&
            [ "$(f "$1" $t mempolicy):$(f "$1" $t memnodes)" = "$(f bare $t mempolicy):$(f bare $t memnodes)" ] || ok_=1
    done
    ok $ok_ "$1: per task CPUs and memory policy as bare ($(f "$1" 0 affinity)/$(f "$1" 1 affinity), $(f "$1" 0 mempolicy):$(f "$1" 0 memnodes))"
}
# same_vars NAME: both tasks' variables as bare.
same_vars() {
    local t ok_=0
    for t in 0 1; do [ "$(vars "$1" $t)" = "$(vars bare $t)" ] || ok_=1; done
    ok $ok_ "$1: thread variables and NUMAGUARD_* as bare"
    [ $ok_ = 0 ] || { echo "#   bare: $(vars bare 0)"; echo "#   $1: $(vars "$1" 0)"; }
}
# governed NAME: the governor mapped and teams held to 1 in both tasks.
governed() {
    is "$(f "$1" 0 gov)/$(f "$1" 0 teams) $(f "$1" 1 gov)/$(f "$1" 1 teams)" "1/1-1 1/1-1" \
        "$1: the governor mapped in the container, omp_set_num_threads(2) held to teams of 1"
    unlike "$(cat "$NGT_OUT/$1.err")" "ld.so|numaguard:" "$1: no ld.so error, no numaguard line"
}
# hinted NAME RUNTIME FLAG: without the bind: one hint naming FLAG, no
# governor promised, no ld.so error, teams not governed.
hinted() {
    local err
    err=$(cat "$NGT_OUT/$1.err")
    is "$(grep -c "numaguard: the task starts a container ($2)" <<<"$err")" 1 \
        "$1: one hint line for the node (task 0)"
    like "$err" "add $3" "$1: the hint names the bind: add $3"
    unlike "$err" "ld.so" "$1: no ld.so error"
    is "$(f "$1" 0 gov)/$(f "$1" 0 teams) $(f "$1" 0 LD_PRELOAD) $(f "$1" 0 NUMAGUARD_OMP_GOVERNOR)" \
        "0/2-2 <unset> " "$1: no LD_PRELOAD, no NUMAGUARD_OMP_GOVERNOR (no silent adaptive), teams not governed"
}

# --- bare ---
run bare "$CT/bin/probe.sh"
is "$(f bare 0 gov)/$(f bare 0 teams) $(f bare 0 NUMAGUARD_OMP_GOVERNOR)" "1/1-1 $GOV" \
    "bare: governed (teams of 1), NUMAGUARD_OMP_GOVERNOR=$GOV"
ok $([ -n "$(f bare 0 affinity)" ] && [ "$(f bare 0 affinity)" != "$(f bare 1 affinity)" ]; echo $?) \
    "bare: tasks on distinct CPUs ($(f bare 0 affinity), $(f bare 1 affinity)), memory $(f bare 0 mempolicy):$(f bare 0 memnodes)"

# --- bubblewrap ---
if command -v bwrap >/dev/null 2>&1; then
    BW=(bwrap --bind "$ROOT" / --proc /proc --dev /dev --ro-bind "$CT/bin" /ngt)
    run bwrap "${BW[@]}" --ro-bind "$GDIR" "$GDIR" /ngt/probe.sh
    same_place bwrap; same_vars bwrap; governed bwrap
    run bwrap-nobind "${BW[@]}" /ngt/probe.sh
    same_place bwrap-nobind; hinted bwrap-nobind bwrap "--ro-bind $GDIR $GDIR"
    run bwrap-clearenv "${BW[@]}" --ro-bind "$GDIR" "$GDIR" --clearenv /ngt/probe.sh
    same_place bwrap-clearenv
    is "$(vars bwrap-clearenv 0)/$(f bwrap-clearenv 0 gov)" "$UNSET/0" \
        "bwrap --clearenv: no variable, no governor inside"
    like "$(cat "$NGT_OUT/bwrap-clearenv.err")" 'clearenv drops them: add --setenv NAME "\$NAME"' \
        "bwrap --clearenv: the hint names --setenv"
    # The channel (docs/containers.md): --setenv for each of numaguard's variables.
    # shellcheck disable=SC2016
    run bwrap-setenv sh -c 'r=$0 b=$1 g=$2; set --
        for v in $(env | sed -n "s/^\(NUMAGUARD_[A-Z_]*\|[A-Z]*_NUM_THREADS\|LD_PRELOAD\)=.*/\1/p"); do set -- "$@" --setenv "$v" "$(printenv "$v")"; done
        exec bwrap --bind "$r" / --proc /proc --dev /dev --ro-bind "$b" /ngt --ro-bind "$g" "$g" --clearenv "$@" /ngt/probe.sh' "$ROOT" "$CT/bin" "$GDIR"
    same_place bwrap-setenv; same_vars bwrap-setenv; governed bwrap-setenv
else
    skip 16 "bubblewrap not installed (apt-get install bubblewrap)"
fi

# --- Charliecloud ---
if command -v ch-run >/dev/null 2>&1; then
    run chrun ch-run -b "$CT/bin:/ngt" -b "$GDIR" "$ROOT" -- /ngt/probe.sh
    same_place chrun; same_vars chrun; governed chrun
    run chrun-nobind ch-run -b "$CT/bin:/ngt" "$ROOT" -- /ngt/probe.sh
    same_place chrun-nobind; hinted chrun-nobind ch-run "-b $GDIR"
    run chrun-unset ch-run --unset-env='*' -b "$CT/bin:/ngt" -b "$GDIR" "$ROOT" -- /ngt/probe.sh
    same_place chrun-unset
    is "$(vars chrun-unset 0)/$(f chrun-unset 0 gov)" "$UNSET/0" "ch-run --unset-env='*': no variable, no governor inside"
    like "$(cat "$NGT_OUT/chrun-unset.err")" "add --set-env=FILE after it" "ch-run --unset-env: the hint names --set-env=FILE"
    # The channel: a per-task file of numaguard's variables, --set-env after --unset-env.
    # shellcheck disable=SC2016
    run chrun-setenv sh -c 'e=$0.$SLURM_PROCID; env | grep -E "^(NUMAGUARD_[A-Z_]*|[A-Z]*_NUM_THREADS|LD_PRELOAD)=" >"$e"
        exec ch-run --unset-env="*" --set-env="$e" -b "$1:/ngt" -b "$2" "$3" -- /ngt/probe.sh' \
        "$NGT_OUT/chenv" "$CT/bin" "$GDIR" "$ROOT"
    same_place chrun-setenv; same_vars chrun-setenv; governed chrun-setenv
else
    skip 16 "Charliecloud not installed (apt-get install charliecloud-runtime)"
fi
# --- rootless Podman (runc), as a test user with subordinate ids ---
# The user (numaguard-ct, a system account with 65536 subordinate ids) is
# made once; the image is imported once into its storage (podman import of
# the same debootstrap tree; a registry is never asked).
PU=numaguard-ct
podman_ready() {
    command -v podman >/dev/null 2>&1 || { echo "podman not installed (apt-get install podman uidmap runc)"; return 1; }
    command -v newuidmap >/dev/null 2>&1 || { echo "no newuidmap (apt-get install uidmap)"; return 1; }
    command -v runc >/dev/null 2>&1 || { echo "no runc (apt-get install runc)"; return 1; }
    id -u "$PU" >/dev/null 2>&1 ||
        useradd --system --home-dir "/var/lib/$PU" --create-home --shell /usr/sbin/nologin "$PU" ||
        { echo "cannot make the test user $PU"; return 1; }
    grep -q "^$PU:" /etc/subuid || usermod --add-subuids 300000-365535 --add-subgids 300000-365535 "$PU" ||
        { echo "cannot give $PU subordinate ids (usermod --add-subuids)"; return 1; }
    PUID=$(id -u "$PU") PGID=$(id -g "$PU") XRD=/run/user/$(id -u "$PU")
    mkdir -p "$XRD" && chown "$PUID:$PGID" "$XRD" && chmod 700 "$XRD"
    # the tag follows the cached tree: a rebuilt image is imported again
    PIMG=localhost/numaguard-ct:$REL-$(stat -c %Y "$IMG/.ng-bootstrap-done")
    as_pu podman image exists "$PIMG" 2>/dev/null && return 0
    tar -C "$IMG" --exclude='./proc/*' --exclude='./sys/*' --exclude='./dev/*' -cf - . |
        as_pu podman import - "$PIMG" >/dev/null 2>"$NGT_OUT/podman-import.err" ||
        { echo "podman import as $PU failed: $(tail -1 "$NGT_OUT/podman-import.err")"; return 1; }
}
as_pu() {
    (cd /tmp && setpriv --reuid="$PUID" --regid="$PGID" --init-groups env HOME="/var/lib/$PU" USER="$PU" \
        XDG_RUNTIME_DIR="$XRD" "$@")
}
# prun NAME PODMAN-ARGS...: the probe in podman, srun as the test user.
prun() {
    local name=$1
    shift
    ngc_wait_idle 10
    as_pu timeout -k 5 "$NGC_SRUN_TIMEOUT" srun "${ARGS[@]}" podman --runtime runc run --rm --network=host \
        -v "$CT/bin:/ngt:ro" "$@" "$PIMG" /ngt/probe.sh >"$NGT_OUT/$name" 2>"$NGT_OUT/$name.err"
}
if podman_ready >"$NGT_OUT/podman-why"; then
    prun podman -v "$GDIR:$GDIR:ro" --env-host
    same_place podman; same_vars podman; governed podman
    prun podman-nobind --env-host
    same_place podman-nobind; hinted podman-nobind podman "-v $GDIR:$GDIR:ro"
    prun podman-noenv -v "$GDIR:$GDIR:ro"
    same_place podman-noenv
    is "$(vars podman-noenv 0)/$(f podman-noenv 0 gov)" "$UNSET/0" "podman without --env-host: no variable, no governor inside"
    like "$(cat "$NGT_OUT/podman-noenv.err")" "podman passes none of the task's variables: add --env-host" \
        "podman without --env-host: the hint names --env-host and -e NAME"
else
    skip 12 "$(cat "$NGT_OUT/podman-why")"
fi

# --- Apptainer's channel (Apptainer is not in Debian 12 or 13) ---
# Only the plugin's side: a command named apptainer gets numaguard's
# variables copied to APPTAINERENV_<NAME>, which Apptainer passes in even
# under --cleanenv (its documentation); the stand-in prints its environment.
mkdir -p "$CT/fake" && printf '#!/bin/sh\nexec env\n' >"$CT/fake/apptainer" && chmod 755 "$CT/fake/apptainer"
run apptainer "$CT/fake/apptainer" exec --cleanenv -B "$GDIR" img.sif ./app
ae() { sed -n "s/^$1: $2=//p" "$NGT_OUT/apptainer"; }
is "$(ae 0 APPTAINERENV_OMP_NUM_THREADS) $(ae 0 APPTAINERENV_NUMAGUARD_CPUS) $(ae 1 APPTAINERENV_NUMAGUARD_CPUS) $(ae 0 APPTAINERENV_LD_PRELOAD)" \
    "$(ae 0 OMP_NUM_THREADS) $(ae 0 NUMAGUARD_CPUS) $(ae 1 NUMAGUARD_CPUS) $GOV" \
    "apptainer: APPTAINERENV_ copies of the thread variables, NUMAGUARD_* (per task) and LD_PRELOAD"
is "$(grep -c '^[01]: APPTAINERENV_PATH=' "$NGT_OUT/apptainer")/$(grep -c numaguard: "$NGT_OUT/apptainer.err")" "0/0" \
    "apptainer: nothing else copied; bound with -B and the channel: no hint"
run apptainer-nobind "$CT/fake/apptainer" exec img.sif ./app
hinted_line=$(grep "numaguard: the task starts a container (apptainer)" "$NGT_OUT/apptainer-nobind.err")
like "$hinted_line" "add -B $GDIR$" "apptainer without -B: the hint names -B DIR"

# --- pyxis's order of operations, both orders (tests/slurm/fake_pyxis.c) ---
# pyxis and enroot are not packaged for Debian: a stand-in plugin starts
# a "container" in user_init (a user namespace with host root unmapped, a
# mount namespace whose root is the image, the probe and the governor's
# directory bound in), and in task_init copies the image's ENV
# (OMP_NUM_THREADS=8) into the task, overwriting, then joins them.
FP=$NGT_BUILD/tests/fake_pyxis.so
if [ -f "$FP" ]; then
    PYX="required $FP root=$ROOT mount=$CT/bin:/ngt mount=$GDIR:$GDIR env=OMP_NUM_THREADS=8"
    NGL="required $FSO test_omp_preload=$GOV"
    printf '%s\n%s\n' "$PYX" "$NGL" >"$NGC_PLUGSTACK_CONF"
    run pyxis-first /ngt/probe.sh
    same_place pyxis-first
    is "$(f pyxis-first 0 gov)/$(f pyxis-first 0 teams) $(f pyxis-first 1 gov)/$(f pyxis-first 1 teams) $(f pyxis-first 0 NUMAGUARD_OMP_GOVERNOR)" \
        "1/1-1 1/1-1 $GOV" "numaguard after pyxis: the governor accepted inside the user namespace (by identity), mapped, teams of 1"
    is "$(f pyxis-first 0 OMP_NUM_THREADS)" 8 "numaguard after pyxis: the image's OMP_NUM_THREADS=8 kept as a preset"
    ngc_wait_idle 10
    own=$(cd /tmp && ngc_srun -n1 stat -c %u "$GOV" 2>&1)
    is "$own" 65534 "... where the governor's owner shows as nobody (the plain ownership check would refuse it)"
    ARGS=(-l -n2 -c1 --numa-policy=local --omp-guard=adaptive,force)
    run pyxis-first-force /ngt/probe.sh
    is "$(f pyxis-first-force 0 OMP_NUM_THREADS)/$(f pyxis-first-force 0 gov)" "1/1" \
        "numaguard after pyxis, --omp-guard=adaptive,force: the image's value replaced"
    printf '%s\n%s\n' "$NGL" "$PYX" >"$NGC_PLUGSTACK_CONF"
    run pyxis-last-force /ngt/probe.sh
    same_place pyxis-last-force
    is "$(f pyxis-last-force 0 OMP_NUM_THREADS) $(f pyxis-last-force 0 gov)/$(f pyxis-last-force 0 teams)" "8 1/1-1" \
        "numaguard before pyxis: governor checked in the host and loaded, but the image's OMP_NUM_THREADS=8 wins even with force"
    ARGS=(-l -n2 -c1 --numa-policy=local --omp-guard=adaptive)
    printf '%s\n' "$NGC_PLUGSTACK" >"$NGC_PLUGSTACK_CONF"
else
    skip 8 "$FP not built (make tests; needs the Slurm headers)"
fi

# --- check on a containerised task: processes, caps, the governor mapped ---
# A shell starts bwrap (so the plugin cannot tell a container starts): the
# governor goes into LD_PRELOAD but its directory is not inside.
if command -v bwrap >/dev/null 2>&1; then
    ngc_wait_idle 10
    (cd "$NGT_OUT" && ngc_srun -n1 -c1 --numa-policy=local --omp-guard=adaptive sh -c \
        'exec bwrap --bind "$0" / --proc /proc --dev /dev --ro-bind "$1" /ngt /ngt/omp_teams 1 100000 long 1' \
        "$ROOT" "$CT/bin" >"$NGT_OUT/ck" 2>"$NGT_OUT/ck.err") &
    spid=$!
    job=
    for _ in $(seq 50); do
        job=$(squeue -h -o %A -t R 2>/dev/null | head -1)
        [ -n "$job" ] && pgrep -f "^/ngt/omp_teams" >/dev/null && break
        sleep 0.2
    done
    "$NGT_CLI" check --job "$job" --local --json >"$NGT_OUT/ck.json" 2>"$NGT_OUT/ck.jerr"
    is "$(python3 -c 'import json,sys; ps=json.load(open(sys.argv[1]))["processes"]; p=[p for p in ps if p["comm"]=="omp_teams"][0]; print(p["cpus"], p["thread_caps"].split()[0], any(w.startswith("governor promised but not loaded") for w in p["warnings"]))' "$NGT_OUT/ck.json" 2>&1)" \
        "$(f bare 0 affinity) OMP_NUM_THREADS=1 True" \
        "check --job: the task inside bwrap seen (its CPUs, OMP_NUM_THREADS=1) and 'governor promised but not loaded'"
    like "$(cat "$NGT_OUT/ck.err")" "ld.so" "... (the ld.so error check explains)"
    scancel "$job" 2>/dev/null
    wait "$spid" 2>/dev/null
else
    skip 2 "bubblewrap not installed"
fi
cleanup_ct   # ngt_done clears the EXIT trap
ngt_done
