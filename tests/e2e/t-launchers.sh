#!/bin/sh
# numaguard exec under real launchers (Debian's Open MPI and MPICH, installed
# by tests/install-deps.sh) and torchrun's environment, each rank running an
# OpenMP probe (tests/helpers/omp_probe.c): where every rank's OpenMP
# threads may run, the thread variables, and the warnings, as the ranks
# themselves report them. Targets a 2-CPU, 1-NUMA-node machine.
#
# torchrun itself (python3-torch, ~1 GiB of dependencies) is not installed:
# its workers are started here with exactly the variables torchrun exports
# to each worker (LOCAL_RANK, RANK, LOCAL_WORLD_SIZE, WORLD_SIZE, GROUP_RANK,
# and OMP_NUM_THREADS=1 when the user did not set it).
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
unset OMP_NUM_THREADS OMP_PROC_BIND OMP_PLACES CUDA_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES \
    LOCAL_RANK LOCAL_WORLD_SIZE RANK SLURM_LOCALID SLURM_PROCID SLURM_STEP_TASKS_PER_NODE \
    SLURM_TASKS_PER_NODE SLURM_NODEID
PROBE=$BUILD/tests/omp_probe
OMPI=$(command -v mpirun.openmpi)
MPICH=$(command -v mpiexec.hydra || command -v mpiexec.mpich)
if [ "$(nproc --all)" -lt 2 ] || [ ! -x "$NG" ] || [ ! -x "$PROBE" ] || [ -z "$OMPI" ] ||
   [ -z "$MPICH" ]; then
    skip 1 "needs 2 CPUs, $NG, $PROBE, mpirun.openmpi and mpiexec.hydra (tests/install-deps.sh)"
    done_testing
    exit 0
fi
D=$(mktemp -d /tmp/ng-launchers.XXXXXX)
trap 'rm -rf "$D"' EXIT
# Open MPI refuses root without these; the test machine's CPUs are shared.
[ "$(id -u)" -eq 0 ] && OMPI="$OMPI --allow-run-as-root"

# launch LAUNCHER... -- EXEC-ARGS...: every rank runs
#   numaguard exec EXEC-ARGS -- omp_probe
# writing its report to its own file; stderr of all ranks goes to $D/err.
launch() {
    rm -f "$D"/out.* "$D/err"
    l=""
    while [ "$1" != "--" ]; do l="$l $1"; shift; done
    shift
    # shellcheck disable=SC2086
    $l "$NG" exec "$@" -- sh -c 'exec "$0" 0.3 >"$1/out.$$"' "$PROBE" "$D" 2>"$D/err" </dev/null
}

# One line per rank, by local rank: "rank:OMP_NUM_THREADS:OMP_PROC_BIND:thread masks"
summary() {
    python3 - "$D" <<'EOF'
import glob, sys
rows = []
for f in glob.glob(sys.argv[1] + "/out.*"):
    env, masks = {}, []
    for line in open(f):
        line = line.rstrip("\n")
        if line.startswith("env "):
            k, _, v = line[4:].partition("=")
            env[k] = v
        elif line.startswith("thread "):
            masks.append(line.split("cpus=")[1].split()[0])
    rank = next((env[k] for k in ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "LOCAL_RANK")
                 if env.get(k)), "?")
    rows.append((rank, env["OMP_NUM_THREADS"], env["OMP_PROC_BIND"], "+".join(sorted(masks))))
print(" ".join(":".join(r) for r in sorted(rows)))
EOF
}
warnings() { grep -c '^numaguard: warning' "$D/err"; }

# --- Open MPI, its default binding (to core for np <= 2): kept, one warning ---
launch $OMPI -np 2 -- --omp-guard
is "$(summary)" "0:1::0 1:1::1" "mpirun -np 2 (binds to core): rank 0 on CPU 0, rank 1 on CPU 1, OMP=1, no OMP_PROC_BIND"
like "$(cat "$D/err")" "Open MPI already bound local rank 0 to CPUs 0 of the allowed 0-1: keeping the launcher's mask, threads capped to it; to let numaguard place the ranks, run mpirun --bind-to none" \
    "mpirun -np 2: pre-bound ranks, warned with the fix"
is "$(warnings)" "1" "... once for the job (local rank 0)"

# --- Open MPI --bind-to none: numaguard places the ranks ---
launch $OMPI --bind-to none -np 2 -- --omp-guard
is "$(summary)" "0:1::0 1:1::1" "mpirun --bind-to none -np 2: numaguard puts rank r on CPU r"
is "$(warnings)" "0" "... no warning"
launch $OMPI --bind-to none -np 2 -- --omp-guard=2
is "$(summary)" "0:2::0+0 1:2::1+1" "--omp-guard=2: each rank's 2 OpenMP threads stay on its own CPU"

# --- Open MPI -np 4 on 2 cores (oversubscribed: Open MPI does not bind) ---
for b in "" "--bind-to none"; do
    launch $OMPI --oversubscribe $b -np 4 -- --omp-guard
    is "$(summary)" "0:1::0 1:1::1 2:1::0 3:1::1" \
       "mpirun --oversubscribe ${b:+$b }-np 4: 2 ranks per CPU, 1 thread each"
    like "$(cat "$D/err")" '4 tasks share 2 cores' "... the sharing is said once"
    is "$(warnings)" "1" "... one warning"
done

# --- MPICH (hydra, no binding by default) ---
launch $MPICH -np 2 -- --omp-guard
is "$(summary)" "0:1::0 1:1::1" "mpiexec (MPICH) -np 2: rank r on CPU r from MPI_LOCALRANKID"
is "$(warnings)" "0" "... no warning"
launch $MPICH -bind-to core -np 2 -- --omp-guard
is "$(summary)" "0:1::0 1:1::1" "mpiexec -bind-to core: the launcher's masks kept"
like "$(cat "$D/err")" "MPICH already bound local rank 0 to CPUs 0 of the allowed 0-1: .*run mpiexec -bind-to none" \
    "... pre-bound warning names mpiexec -bind-to none"

# --- policy none + --omp-guard: threads capped, nothing pinned ---
# (before: OMP_PROC_BIND=close with an untouched mask pinned the first
# OpenMP thread of every rank to CPU 0)
launch $OMPI --bind-to none -np 2 -- --numa-policy=none --omp-guard
is "$(summary)" "0:1::0-1 1:1::0-1" \
   "none + --omp-guard: OMP=1, no OMP_PROC_BIND, each rank's OpenMP thread may use both CPUs"
launch $MPICH -np 2 -- --numa-policy=none --omp-guard=bind
is "$(summary)" "0:1::0-1 1:1::0-1" \
   "none + --omp-guard=bind: numaguard bound nothing, so it binds no OpenMP thread either"

# --- torchrun's worker environment (2 workers, OMP_NUM_THREADS=1 preset) ---
rm -f "$D"/out.* "$D/err"
for r in 0 1; do
    env LOCAL_RANK=$r RANK=$r GROUP_RANK=0 LOCAL_WORLD_SIZE=2 WORLD_SIZE=2 OMP_NUM_THREADS=1 \
        "$NG" exec --omp-guard -- sh -c 'exec "$0" 0.3 >"$1/out.$$"' "$PROBE" "$D" 2>>"$D/err" &
done
wait
is "$(summary)" "0:1::0 1:1::1" "torchrun env: worker r on CPU r, OMP_NUM_THREADS=1 kept"
is "$(warnings)" "0" "... 1 thread on 1 core: nothing to warn about"

# --- --dry-run under a real launcher ---
out=$($OMPI --bind-to none -np 2 "$NG" exec --omp-guard --dry-run 2>&1 | grep -E '^(rank|cpus) ' | sort)
is "$out" "$(printf '%s\n' 'cpus       0 (slice 1 of 2 of the allowed CPUs)' \
    'cpus       1 (slice 2 of 2 of the allowed CPUs)' \
    'rank       local 0 of 2 (from Open MPI: OMPI_COMM_WORLD_LOCAL_RANK), global rank 0' \
    'rank       local 1 of 2 (from Open MPI: OMPI_COMM_WORLD_LOCAL_RANK), global rank 1')" \
   "mpirun ... exec --dry-run: each rank explains itself, nothing runs"

done_testing
