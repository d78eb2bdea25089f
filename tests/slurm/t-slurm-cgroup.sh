#!/bin/sh
# The usual site setup (issue 12): TaskPlugin=task/cgroup,task/affinity with
# ConstrainCores=yes and ConstrainDevices=yes, on this host's cgroup layout
# (v1 here; v2 inside the multi-NUMA VM), real CPUs, fake NVIDIA devices
# named by a shared gres.conf (other nodes' records first, ng1's File=
# order not bus order). The topology is this machine's own, with the fake
# GPUs added as PCI devices, so numaguard binds for real.
#
# Which GPUs a task really has is read from the kernel, not from Slurm's
# variables: the devices cgroup denies every device file it was not given
# (access(2) fails with EPERM). For every task: NUMAGUARD_GPUS = the bus
# ids of the devices it can access (per-task GPUs) or a subset (shared
# GPUs), its affinity = NUMAGUARD_CPUS and inside its step's cpuset,
# OMP_NUM_THREADS = its CPU count; with and without --gpu-bind.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/testlib.sh"
ngt_start_suite plugin-cgroup plugin

cgv=$(ngc_cgroup_version)
[ -n "$cgv" ] || skip_all "no cpuset and devices cgroup on this host"
ncpu=$(slurmd -C | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p')
[ "${ncpu:-0}" -ge 2 ] || skip_all "needs 2 CPUs"

BUS=(0000:18:00.0 0000:3b:00.0 0000:86:00.0 0000:af:00.0)
ORDER="2 0 3 1"   # ng1's File= order: gres index i is /dev/nvidia${ORDER[i]}

# This machine's topology plus the fake GPUs (a PCI bridge under Machine).
xml=$NGC_DIR/this-machine-gpus.xml
lstopo-no-graphics --of xml "$NGC_DIR/this.xml" 2>/dev/null
python3 - "$NGC_DIR/this.xml" "$xml" "${BUS[@]}" <<'EOF'
import sys
src, dst, *bus = sys.argv[1:]
text = open(src).read()
end = text.rindex("</object>")        # closes Machine
buses = sorted(int(b.split(":")[1], 16) for b in bus)
pci = [f'<object type="Bridge" gp_index="{90000}" bridge_type="0-1" depth="0" '
       f'bridge_pci="0000:[{buses[0]:02x}-{buses[-1]:02x}]">']
for k, b in enumerate(bus):
    pci.append(f'<object type="PCIDev" gp_index="{90001 + k}" pci_busid="{b}" '
               'pci_type="0302 [10de:1eb8] [10de:12a2] a1" pci_link_speed="0.000000">'
               '<info name="PCIVendor" value="NVIDIA Corporation"/></object>')
pci.append("</object>")
open(dst, "w").write(text[:end] + "\n".join(pci) + "\n" + text[end:])
EOF

NGC_GRES_TEMPLATE="NodeName=other[01-04] Name=gpu File=@DEV@/nvidia[3,2,1,0]
NodeName=ng1 Name=gpu File=@DEV@/nvidia[${ORDER// /,}]"
NGC_NODES=1 NGC_TASK_PLUGIN=task/cgroup,task/affinity NGC_TOPOLOGY= NGC_GPU_BUSIDS="${BUS[*]}"
ngt_cluster_cg() {
    NGC_PLUGSTACK=$(ngt_plugstack "topology=$xml")
    ngt_cluster
    # The plugin checks the XML against the kernel's CPU and node lists
    # under fsroot: give it this machine's, so it binds for real.
    local f
    for f in cpu/online node/online node/has_cpu node/has_memory; do
        mkdir -p "$(dirname "$NGC_FSROOT/sys/devices/system/$f")"
        cp "/sys/devices/system/$f" "$NGC_FSROOT/sys/devices/system/$f" 2>/dev/null ||
            echo 0 >"$NGC_FSROOT/sys/devices/system/$f"
    done
}
ngt_cluster_cg
echo "# cgroup $cgv, $(srun --version 2>&1), $ncpu CPUs"

# In each task: the fake devices it may access, its step's cpuset, then
# the probe (one "rank=" line).
TASK='devs=""
for d in '"$NGC_FSROOT"'/dev/nvidia*; do [ -r "$d" ] && devs="$devs${devs:+,}${d##*nvidia}"; done
cg=$(sed -n "s/^[0-9]*:cpuset:\(.*\)/\1/p;s/^0::\(.*\)/\1/p" /proc/self/cgroup | head -1)
for c in /sys/fs/cgroup/cpuset$cg/cpuset.cpus /sys/fs/cgroup$cg/cpuset.cpus.effective; do
    [ -f "$c" ] && { cpuset=$(cat "$c"); break; }
done
printf "cg\trank=%s\tdevs=%s\tcpuset=%s\n" "$SLURM_PROCID" "$devs" "$cpuset"
exec '"$NGT_PROBE"' NUMAGUARD_GPUS NUMAGUARD_CPUS OMP_NUM_THREADS CUDA_VISIBLE_DEVICES SLURM_STEP_GPUS'

# check FILE LABEL NTASKS MODE: MODE own (NUMAGUARD_GPUS = accessible
# devices), shared (a non-empty subset of them) or none (no device, no
# GPU, the tasks' CPUs together = the step's cpuset).
check() {
    emit < <(python3 - "$@" "${BUS[@]}" <<'EOF'
import sys
path, label, n, mode, *bus = sys.argv[1:]
def cpus(t):
    out = set()
    for part in (t or "").split(","):
        if part:
            lo, _, hi = part.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    return out
cg, pr = {}, {}
for line in open(path, errors="replace"):
    f = dict(p.partition("=")[::2] for p in line.rstrip("\n").split("\t") if "=" in p)
    (cg if line.startswith("cg\t") else pr)[f.get("rank")] = f
errs = {"gpus": [], "cpus": [], "threads": []}
for r, t in sorted(pr.items()):
    c = cg.get(r, {})
    mine = {bus[int(m)] for m in c.get("devs", "").split(",") if m}
    got = set(filter(None, (t.get("NUMAGUARD_GPUS") or "").split(",")))
    if mode == "none":
        bad = mine or got or t.get("NUMAGUARD_GPUS") != ""
    else:
        bad = not mine or (got != mine if mode == "own" else not (got and got <= mine))
    if bad:
        errs["gpus"].append(f"rank {r}: devices {sorted(mine)} NUMAGUARD_GPUS {sorted(got)} "
                            f"(CUDA_VISIBLE_DEVICES={t.get('CUDA_VISIBLE_DEVICES')} "
                            f"SLURM_STEP_GPUS={t.get('SLURM_STEP_GPUS')})")
    aff, want, cs = cpus(t.get("affinity")), cpus(t.get("NUMAGUARD_CPUS")), cpus(c.get("cpuset"))
    if not aff or aff != want or not aff <= cs:
        errs["cpus"].append(f"rank {r}: affinity {t.get('affinity')} NUMAGUARD_CPUS "
                            f"{t.get('NUMAGUARD_CPUS')} step cpuset {c.get('cpuset')}")
    if t.get("OMP_NUM_THREADS") != str(len(aff)):
        errs["threads"].append(f"rank {r}: OMP_NUM_THREADS={t.get('OMP_NUM_THREADS')} for {len(aff)} CPUs")
ran = len(pr) == int(n)
# A CPU-only step: its tasks together use the whole step's cpuset.
union, step = set(), set()
for r, t in pr.items():
    union |= cpus(t.get("NUMAGUARD_CPUS"))
    step |= cpus(cg.get(r, {}).get("cpuset"))
if mode == "none" and union != step:
    errs["cpus"].append(f"tasks' CPUs {sorted(union)} are not the step's cpuset {sorted(step)}")
what = {"gpus": {"own": "NUMAGUARD_GPUS = the devices the cgroup allows",
                 "shared": "NUMAGUARD_GPUS within the devices the cgroup allows",
                 "none": "the cgroup allows no GPU device, NUMAGUARD_GPUS empty"}[mode],
        "cpus": "affinity = NUMAGUARD_CPUS, inside the step's cpuset",
        "threads": "OMP_NUM_THREADS = CPUs owned"}
for k in ("gpus", "cpus", "threads"):
    ok = ran and not errs[k]
    print(("ok - " if ok else "not ok - ") + f"{label}: {len(pr)}/{n} tasks: {what[k]}")
    for e in errs[k][:6] or ([] if ran else [f"{len(pr)} tasks ran"]):
        print("#   " + e)
EOF
)
}

# run LABEL NTASKS MODE SRUN-ARGS...
run() {
    local label=$1 n=$2 mode=$3 f
    shift 3
    f=$NGT_OUT/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
    ngc_wait_idle 10
    ngc_srun -D "$NGT_OUT" -n "$n" "$@" --numa-policy=local --omp-guard sh -c "$TASK" >"$f" 2>"$f.err"
    local rc=$?
    ok $rc "$label: srun exits 0"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$f.err" | head -5
    check "$f" "$label" "$n" "$mode"
    unlike "$(cat "$f.err")" "numaguard: .*(cannot identify|gres.conf)" \
        "$label: no GPU identity warning"
}

run "-n 2 gpus-per-task=1" 2 own --gpus-per-task=1
run "-n 2 gpus-per-task=2" 2 own --gpus-per-task=2
run "-n 2 map_gpu:3,1" 2 own --gres=gpu:4 --gpu-bind=map_gpu:3,1
run "-n 2 gres=gpu:4 shared" 2 shared --gres=gpu:4
run "-n 1 gres=gpu:3 single:1" 1 own --gres=gpu:3 --gpu-bind=single:1

# Another job holds a CPU and a GPU: this step's cpuset is the other CPU
# and its GPUs are not the first ones.
ngc_wait_idle 10
ngc_srun -n 1 -c 1 --gres=gpu:1 sleep 6 >/dev/null 2>&1 &
holder=$!
ngc_wait_for 10 sh -c '[ -n "$(squeue -h -t R 2>/dev/null)" ]'
f=$NGT_OUT/beside
ngc_srun -D "$NGT_OUT" -n 1 -c 1 --gres=gpu:2 --numa-policy=local --omp-guard sh -c "$TASK" >"$f" 2>"$f.err"
ok $? "beside another job: srun exits 0"
check "$f" "beside another job, gres=gpu:2" 1 own
ngc_srun -D "$NGT_OUT" -n 1 -c 1 --gpus-per-task=2 --numa-policy=local --omp-guard sh -c "$TASK" >"$f.2" 2>"$f.2.err"
ok $? "beside another job, gpus-per-task=2: srun exits 0"
check "$f.2" "beside another job, gpus-per-task=2" 1 own
wait "$holder"

# A CPU-only step inside a GPU job (issue 19): the devices cgroup of a
# srun --gres=none or --gpus=0 step denies every GPU, Slurm keeps
# SLURM_JOB_GPUS there: no GPU, no warning, CPUs from the whole step. The
# GPU steps of the same job as above.
job=$NGT_OUT/gpu-job
{
    echo '#!/bin/bash'
    for s in "none --gres=none" "gpus0 --gpus=0" "gres2 --gres=gpu:2" "pertask --gpus-per-task=1"; do
        printf 'srun -n 2 %s --numa-policy=local --omp-guard sh -c %q >%s 2>%s\n' \
            "${s#* }" "$TASK" "$job.${s%% *}" "$job.${s%% *}.err"
    done
} >"$job.sh"
ngc_wait_idle 10
sbatch --wait -n 2 --gres=gpu:2 -o "$job.out" "$job.sh" >/dev/null 2>&1
ok $? "sbatch -n 2 --gres=gpu:2 with four steps: exit 0"
check "$job.none" "srun --gres=none in a GPU job" 2 none
check "$job.gpus0" "srun --gpus=0 in a GPU job" 2 none
is "$(cat "$job.none.err" "$job.gpus0.err" | grep -c numaguard)" 0 \
    "CPU-only steps of a GPU job: no numaguard line (no warning)"
check "$job.gres2" "srun --gres=gpu:2 in the same job" 2 shared
check "$job.pertask" "srun --gpus-per-task=1 in the same job" 2 own
unlike "$(cat "$job.gres2.err" "$job.pertask.err")" "numaguard: .*(cannot identify|gres.conf|differ)" \
    "GPU steps of the job: no GPU identity warning"
ngt_done
