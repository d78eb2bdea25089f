#!/bin/sh
# numaguard doctor judged on real site configurations (tests/e2e/sites/,
# each file naming its public source), on the fake XE8640 node of
# t-doctor.sh (tests/fakefs/mkfake.sh node-xe8640, its NVIDIA minors 1,3,0,2
# in bus order), with the real slurmd (-G, -V) and the built numaguard.so:
#   - each valid configuration gives no WARN or FAIL about binding or gres;
#   - each classic fault, injected one at a time from the same sources, is
#     caught with the exact line doctor prints;
#   - doctor ends within its --deadline with every tool hanging (nvidia-smi
#     with a setsid() child, NVML, slurmd, srun) and leaves nothing running.
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
doctor_prereqs
W=$(mktemp -d /tmp/ng-sites.XXXXXX) || exit 2
trap 'rm -rf "$W"' EXIT
R=$W/root E=$W/etc BIN=$W/bin SMI=$W/smi NV=$W/nvml
S=tests/e2e/sites
mkdir -p "$E" "$BIN" "$SMI" "$W/spool" "$NV"
cp tests/fakefs/nvidia-smi "$BIN/"
cp tests/fakefs/nvidia-smi.d/xe8640-q.txt "$SMI/q.txt"
cp tests/fakefs/nvidia-smi.d/xe8640-topo-m.txt "$SMI/topo-m.txt"
# The test's NVML (tests/fakefs/fake_nvml.c: the XE8640's GPUs), for the
# node where the driver's library is installed.
${CC:-cc} -shared -fPIC -o "$NV/libnvidia-ml.so.1" tests/fakefs/fake_nvml.c ||
    { echo "Bail out! cannot build the fake NVML"; exit 1; }

# site NAME [GRES CGROUP]: the site's files into $E (GRES, CGROUP: another
# of its files); slurmd's gres.conf names the fake devices under $R, the
# plugin's (--gres-conf) the node's own /dev under fsroot.
site() {
    rm -rf "$R" && sh tests/fakefs/mkfake.sh "$R" node-xe8640 >/dev/null
    sub="s|@SPOOL@|$W/spool|g; s|@ETC@|$E|g"
    sed "$sub" "$S/$1/slurm.conf" >"$E/slurm.conf"
    sed "s|@DEV@|$R/dev|g" "$S/$1/${2:-gres.conf}" >"$E/gres.conf"
    sed "s|@DEV@|/dev|g" "$S/$1/${2:-gres.conf}" >"$E/gres.plugin.conf"
    cp "$S/$1/${3:-cgroup.conf}" "$E/cgroup.conf"
    printf 'optional %s topology_cache=off\n' "$PLUGIN" >"$E/plugstack.conf"
}
doctor() {
    out=$(PATH="$BIN:$PATH" NG_FAKE_SMI_DIR=$SMI "$NG" doctor --slurm-conf "$E/slurm.conf" \
        --node xe1 --fsroot "$R" --gres-conf "$E/gres.plugin.conf" --topology "$XE" "$@" 2>&1)
    rc=$?
}
line_of() { printf '%s\n' "$out" | grep -E "^(OK|WARN|FAIL) +$1: " | head -1; }
expect() { is "$(line_of "$1")" "$2" "$3"; }
# No WARN or FAIL about binding or gres (the slurm.* checks).
clean() {
    bad=$(printf '%s\n' "$out" | grep -E '^(WARN|FAIL) +slurm\.')
    is "$bad" "" "$1"
}

# --- NVIDIA DeepOps ------------------------------------------------------------
site deepops
doctor
clean "DeepOps (TaskPlugin=affinity,cgroup, CPUs= per GPU): no WARN/FAIL about binding or gres"
expect slurm.task_plugin "OK   slurm.task_plugin: TaskPlugin=affinity,cgroup (task/affinity,task/cgroup): steps get their own cpuset" \
    "TaskPlugin=affinity,cgroup is task/affinity,task/cgroup (Slurm adds the prefix)"
expect slurm.gres_cores "OK   slurm.gres_cores: gres.conf Cores= of 4 GPUs match their locality (compared in Slurm's core indices, hwloc's logical core order, not the OS CPU numbers)" \
    "DeepOps CPUs= in Slurm's core indices: each GPU's own cores"
site deepops gres.conf cgroup.release-agent.conf
doctor
is "$rc" 1 "DeepOps cgroup.conf with CgroupReleaseAgentDir: exit 1"
expect slurm.slurmd_gres "FAIL slurm.slurmd_gres: slurmd -G -N xe1 (exit status 1): fatal: Support for CgroupReleaseAgentDir option has been removed. | placement: slurmd refuses to start with this configuration: after its next restart the node runs no job | fix: remove or correct CgroupReleaseAgentDir= in $E/cgroup.conf, then run slurmd -G -f $E/slurm.conf -N xe1 by hand until it prints no fatal: line" \
    "CgroupReleaseAgentDir (slurmd 22.05's fatal): FAIL quoting slurmd's line, naming the setting and its file"
site deepops gres.rendered.conf
doctor
expect slurm.gres_cores "WARN slurm.gres_cores: gres.conf line 5: CPUs=42-55,154-167 for $R/dev/nvidia1 (0000:4e:00.0) names cores the node does not have (Slurm's cores are 0-111): these are the GPU's OS CPU numbers (and 3 more) | placement: slurmd refuses the list ('Invalid GRES data for gpu'): Slurm gives this GPU no core affinity, so its jobs get cores anywhere, often far from it | fix: write CPUs=42-55 in gres.conf line 5 (Slurm's core indices: lstopo -l's Core L#, not the OS CPU numbers of local_cpulist or nvidia-smi topo -m)" \
    "DeepOps' rendered CPUs= (OS CPU numbers with hyperthreads): WARN naming the right Slurm cores"
site deepops gres.lspci-order.conf
doctor
is "$rc" 1 "Cores= of the wrong GPUs (File= in lspci order, not minor order): exit 1"
expect slurm.gres_cores "FAIL slurm.gres_cores: gres.conf line 6: Cores=42-55 for $R/dev/nvidia0 (0000:cb:00.0), but the GPU is near Slurm's cores 98-111 (another socket) (and 3 more) | placement: Slurm steers this GPU's jobs to those cores, on another socket: every task is placed far from its GPU, and numaguard cannot leave the step's cores | fix: write Cores=98-111 in gres.conf line 6 (Slurm's core indices: lstopo -l's Core L#, not the OS CPU numbers of local_cpulist or nvidia-smi topo -m)" \
    "Cores= on the other socket than the GPU: FAIL, per GPU, naming the right cores"

# --- Azure azurehpc: AutoDetect=nvml only ----------------------------------------
site azurehpc
doctor
is "$rc" 1 "AutoDetect=nvml on a node where slurmd cannot use NVML: exit 1"
expect slurm.autodetect "FAIL slurm.autodetect: AutoDetect=nvml, but slurmd cannot use NVML on this node (slurmd -G: 'We were configured with nvml functionality, but that lib wasn't found on the system.'): slurmd detects no GPU | placement: slurmd reports fewer GPUs than configured: slurmctld drains the node ('gres/gpu count reported lower than configured') | fix: install the NVIDIA driver's NVML (libnvidia-ml.so.1; Slurm 22.05 dlopen()s libnvidia-ml.so, the driver's development link) and Slurm's gpu_nvml.so plugin on the node and restart slurmd, or list the GPUs with File= and drop AutoDetect" \
    "AutoDetect=nvml without NVML and slurm.conf's gres=gpu:4: FAIL quoting slurmd -G"
like "$(line_of gpu.nvml)" "^OK   gpu.nvml: NVML is not loaded here \\(libnvidia-ml.so.1: cannot open shared object file" \
    "gpu.nvml says NVML was not loaded"
doctor_nvml() {  # the node with the driver's NVML (and no slurmd to ask)
    out=$(PATH="$BIN:/usr/bin:/bin" LD_LIBRARY_PATH=$NV NG_FAKE_SMI_DIR=$SMI "$NG" doctor \
        --slurm-conf "$E/slurm.conf" --node xe1 --fsroot "$R" --gres-conf "$E/gres.plugin.conf" \
        --topology "$XE" "$@" 2>&1)
    rc=$?
}
doctor_nvml
expect gpu.nvml "OK   gpu.nvml: NVML is loaded (libnvidia-ml.so.1, nvmlInit ok); it describes the real machine, not fsroot $R: not compared" \
    "with the driver's NVML: gpu.nvml says it loaded"
expect slurm.autodetect "OK   slurm.autodetect: AutoDetect=nvml finds 4 GPUs" \
    "with NVML: AutoDetect=nvml finds the 4 GPUs"
clean "azurehpc's AutoDetect=nvml where NVML loads: no WARN/FAIL about binding or gres"

# --- gres.conf(5) -----------------------------------------------------------------
site gres-conf-5
doctor
clean "gres.conf(5)'s shared file with the node's records: no WARN/FAIL about binding or gres"
site gres-conf-5 gres.other-nodes.conf
doctor
expect slurm.gres_conf "FAIL slurm.gres_conf: gres.conf '$E/gres.plugin.conf': none of its 2 Name=gpu records names node 'xe1' (NodeName=) | placement: the plugin cannot use it: it warns in every step and reads GPU indices in PCI bus order, which need not be the order Slurm numbers the GPUs in | fix: add node xe1 to the NodeName= of its Name=gpu records (a hostlist such as gpu[01-16]), or give --node NAME if xe1 is not this node's Slurm name" \
    "a gres.conf written for other nodes: FAIL, the fix names this node"

# --- statements that were false -----------------------------------------------------
site gres-conf-5
printf 'ConstrainCores=no\nConstrainDevices=no\n' >"$E/cgroup.conf"
doctor
expect slurm.cgroup "WARN slurm.cgroup: cgroup.conf $E/cgroup.conf: ConstrainCores and ConstrainDevices are not yes | placement: neither cores nor GPUs are confined: a step's tasks can run on another job's CPUs (numaguard plans on slurmstepd's affinity) and open GPUs another job owns | fix: ConstrainCores=yes and ConstrainDevices=yes in cgroup.conf" \
    "ConstrainCores=no and ConstrainDevices=no: both named, both fixed"
doctor --slurm-conf "$W/none/slurm.conf"
expect slurm.cgroup "OK   slurm.cgroup: no slurm.conf: TaskPlugin and cgroup.conf not checked" \
    "no slurm.conf: nothing is said about TaskPlugin"
site gres-conf-5
printf '# none here\n' >"$E/plugstack.conf"
doctor
like "$(line_of plugin.plugstack)" "fix: add \`optional <Slurm's plugin dir>/numaguard.so\` to plugstack.conf \\(README.md, docs/admin-guide.md\\)" \
    "the plugstack fix says optional, as the README"
echo notsupported >"$R/sys/devices/system/cpu/smt/control"
doctor
like "$(line_of kernel.cpus)" "SMT not supported by these CPUs \\(one thread per core\\)$" \
    "sysfs 'notsupported' in words"

# --- every tool hanging: one deadline, nothing left -------------------------------
site deepops
printf '#!/bin/sh\nsetsid sleep 3602 &\nexec sleep 3600\n' >"$BIN/slurmd"
printf '#!/bin/sh\nexec sleep 3603\n' >"$BIN/srun"
chmod 755 "$BIN/slurmd" "$BIN/srun"
t0=$(date +%s)
out=$(PATH="$BIN:/usr/bin:/bin" LD_LIBRARY_PATH=$NV NG_FAKE_NVML_HANG=1 NG_FAKE_SMI_HANG=setsid \
    "$NG" doctor --slurm-conf "$E/slurm.conf" --node xe1 --fsroot "$R" \
    --gres-conf "$E/gres.plugin.conf" --topology "$XE" --timeout 3 --deadline 8 2>&1)
rc=$? t1=$(date +%s)
ok "$([ $((t1 - t0)) -le 10 ]; echo $?)" "every tool hanging: doctor ended in $((t1 - t0)) s (--deadline 8, --timeout 3)"
left=$(for d in /proc/[0-9]*; do { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null; echo; done |
    grep -cE '^sleep 360[0-3] $')
is "$left" 0 "nothing left running (the hung tools and their setsid() children killed)"
expect gpu.nvidia_smi "WARN gpu.nvidia_smi: nvidia-smi -q: did not answer within 3 s (killed with its process group) | placement: the driver's own view of the GPUs could not be compared (a driver that hangs nvidia-smi hangs CUDA jobs too) | fix: check the driver: dmesg, nvidia-smi by hand, nvidia-bug-report.sh" \
    "the hung nvidia-smi: WARN after its 3 s"
like "$(line_of slurm.slurmd_gres)" "^WARN slurm.slurmd_gres: slurmd -G -N xe1: (did not answer within [0-9]+ (s|ms)|not run: doctor's whole-run limit of 8 s \\(--deadline\\) was reached)" \
    "slurmd -G: stopped by the whole run's limit"
like "$(line_of plugin.release)" "^WARN plugin.release: cannot tell this node's Slurm release" \
    "slurmd -V and srun -V: not run or killed, the release unknown"
done_testing
