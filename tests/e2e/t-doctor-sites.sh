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

# site NAME [GRES CGROUP SLURM]: the site's files into $E (GRES, CGROUP,
# SLURM: another of its files); slurmd's gres.conf names the fake devices
# under $R, the plugin's (--gres-conf) the node's own /dev under fsroot.
site() {
    rm -rf "$R" && sh tests/fakefs/mkfake.sh "$R" node-xe8640 >/dev/null
    rm -f "$E/gres.conf" "$E/gres.plugin.conf"
    sub="s|@SPOOL@|$W/spool|g; s|@ETC@|$E|g"
    sed "$sub" "$S/$1/${4:-slurm.conf}" >"$E/slurm.conf"
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

# --- AWS ParallelCluster: Type= per queue, Cores= in brackets --------------------
site parallelcluster
doctor
clean "ParallelCluster (Gres=gpu:h100:4, Type=h100, Cores=[..] in brackets): no WARN/FAIL about binding or gres"
expect slurm.gres_count "OK   slurm.gres_count: slurm.conf's Gres=gpu:h100:4 and gres.conf agree: 4 GPUs, of the types slurm.conf names" \
    "ParallelCluster: the types are compared and agree"
expect slurm.gres_cores "OK   slurm.gres_cores: gres.conf Cores= of 4 GPUs match their locality (compared in Slurm's core indices, hwloc's logical core order, not the OS CPU numbers)" \
    "Cores=[42-55] (brackets, as slurm reads them): all 4 GPUs compared"
site parallelcluster gres.generated.conf
doctor
like "$(line_of slurm.gres_order)" "^WARN slurm.gres_order: gres index order \\(File= order\\) is not PCI bus order: 0=0000:cb:00.0 1=0000:4e:00.0 2=0000:db:00.0 3=0000:5f:00.0 .*fix: list File= in PCI bus order" \
    "ParallelCluster's generated File=/dev/nvidia[0-3] (real): WARN, not bus order"
site parallelcluster gres.conf cgroup.template.conf
doctor
expect slurm.cgroup "WARN slurm.cgroup: cgroup.conf $E/cgroup.conf: ConstrainCores and ConstrainDevices are not yes | placement: neither cores nor GPUs are confined: a step's tasks can run on another job's CPUs (numaguard plans on slurmstepd's affinity) and open GPUs another job owns | fix: ConstrainCores=yes and ConstrainDevices=yes in cgroup.conf" \
    "ParallelCluster's cgroup.conf template (real: ConstrainRAMSpace only): both named"
site parallelcluster gres.os-cpus.conf
doctor
expect slurm.gres_cores "WARN slurm.gres_cores: gres.conf line 5: Cores=[14-27,126-139] for $R/dev/nvidia3 (0000:5f:00.0) names cores the node does not have (Slurm's cores are 0-111): these are the GPU's OS CPU numbers | placement: slurmd refuses the list ('Invalid GRES data for gpu'): Slurm gives this GPU no core affinity, so its jobs get cores anywhere, often far from it | fix: write Cores=14-27 in gres.conf line 5 (Slurm's core indices: lstopo -l's Core L#, not the OS CPU numbers of local_cpulist or nvidia-smi topo -m)" \
    "planted Cores=[..] with OS CPU numbers past the core count: said as such, the right cores named"
printf 'NodeName=xe1 Name=gpu Type=h100 File=/dev/nvidia1 Cores=[42-55,200-300]\n' >"$E/gres.plugin.conf"
doctor
like "$(line_of slurm.gres_cores)" "^WARN slurm.gres_cores: gres.conf line 1: Cores=\\[42-55,200-300\\] for $R/dev/nvidia1 \\(0000:4e:00.0\\) names cores the node does not have \\(Slurm's cores are 0-111\\): 200-300 are beyond Slurm's 112 cores \\|" \
    "Cores= numbers past every CPU: said, not called OS CPU numbers"
printf 'NodeName=xe1 Name=gpu Type=h100 File=/dev/nvidia1 Cores=0-x\n' >"$E/gres.plugin.conf"
doctor
like "$(line_of slurm.gres_cores)" "^WARN slurm.gres_cores: gres.conf line 1: Cores=0-x not read \\(" \
    "a Cores= that does not parse: a WARN saying it was not compared, never 'of 0 GPUs match'"

# --- SchedMD slurm-gcp: File=/dev/nvidia[0-N]; a dangling gres.conf link ---------
site slurm-gcp
doctor
clean "slurm-gcp (GresTypes=gpu, task/affinity,task/cgroup, File= in bus order): no WARN/FAIL about binding or gres"
site slurm-gcp gres.setup.conf
doctor
like "$(line_of slurm.gres_order)" "^WARN slurm.gres_order: gres index order \\(File= order\\) is not PCI bus order: 0=0000:cb:00.0 " \
    "slurm-gcp's setup.py File=/dev/nvidia[0-3] (real): WARN, not bus order"
site slurm-gcp
rm -f "$E/gres.conf" "$E/gres.plugin.conf"
ln -s "$W/nfs/etc/slurm/gres.conf" "$E/gres.conf"
ln -s "$W/nfs/etc/slurm/gres.conf" "$E/gres.plugin.conf"
doctor
is "$rc" 1 "planted: gres.conf a link to a shared file not yet there: exit 1"
expect slurm.gres_conf "FAIL slurm.gres_conf: gres.conf $E/gres.plugin.conf is a symbolic link to $W/nfs/etc/slurm/gres.conf, which does not exist (No such file or directory) | placement: the plugin cannot use it: it warns in every step and reads GPU indices in PCI bus order, which need not be the order Slurm numbers the GPUs in | fix: write $W/nfs/etc/slurm/gres.conf (where the link points: mount or copy the shared configuration before slurmd starts) or point $E/gres.plugin.conf at the node's gres.conf; then restart slurmd, which read no gres.conf" \
    "a dangling gres.conf: FAIL saying where the link points"
expect slurm.slurmd_gres "WARN slurm.slurmd_gres: slurmd -G lists 0 GPUs, the plugin 0: because of slurm.gres_conf (gres.conf is a dangling link to $W/nfs/etc/slurm/gres.conf) | placement: Slurm's own index order was not compared with the plugin's | fix: fix slurm.gres_conf first (its line above); this follows" \
    "its consequence in slurmd -G: a WARN naming the cause, not the gres_conf= fix"

# --- ElastiCluster: #GresTypes= and # TaskPlugin=task/none as the template has them -
site elasticluster gres.conf cgroup.conf slurm.fixed.conf
doctor
clean "ElastiCluster with GresTypes=gpu and TaskPlugin given: no WARN/FAIL about binding or gres"
site elasticluster
doctor
is "$rc" 1 "ElastiCluster's template with Gres=gpu:4 (planted on its node line): exit 1"
expect slurm.conf "FAIL slurm.conf: slurm.conf gives node xe1 Gres=gpu:4, but it sets no GresTypes= (gpu must be named there) | placement: Slurm ignores the node's GPUs: slurmd -G lists none, slurmctld gives no job a GPU, and numaguard has no gres order Slurm agrees with | fix: add gpu to GresTypes= in slurm.conf (GresTypes=gpu; the same file on every node and the controller), then restart slurmctld and slurmd" \
    "Gres= without GresTypes=gpu: the root cause is the FAIL"
expect slurm.slurmd_gres "WARN slurm.slurmd_gres: slurmd -G lists 0 GPUs, the plugin 4: because of slurm.conf (GresTypes= does not name gpu) | placement: Slurm's own index order was not compared with the plugin's | fix: fix slurm.conf first (its line above); this follows" \
    "slurmd -G lists none: its consequence, naming the cause"
expect slurm.task_plugin "WARN slurm.task_plugin: TaskPlugin=task/none binds and confines nothing | placement: Slurm confines no step: numaguard plans inside slurmstepd's affinity, which is then the whole node, so the steps of two jobs on one node are not kept apart | fix: TaskPlugin=task/cgroup,task/affinity with ConstrainCores=yes in cgroup.conf" \
    "ElastiCluster's TaskPlugin left commented (real): WARN"
is "$(printf '%s\n' "$out" | grep -c '^FAIL')" 1 "one FAIL: the cause, not its consequences"

# --- Canonical Charmed HPC: Type= from NVML's model name ------------------------------
site charmed-hpc
doctor
clean "Charmed HPC (Type=nvidia_h100_80gb_hbm3 in both files): no WARN/FAIL about binding or gres"
site charmed-hpc gres.renamed.conf
doctor
is "$rc" 1 "planted: NVML's renamed model in gres.conf's Type=: exit 1"
expect slurm.gres_count "FAIL slurm.gres_count: slurm.conf gives node xe1 Gres=gpu:nvidia_h100_80gb_hbm3:4, gres.conf has 0 devices of Type=nvidia_h100_80gb_hbm3 (its Type=: nvidia_h100) | placement: slurmd registers the GPUs under gres.conf's type: slurmctld counts fewer of this type than configured and drains the node ('gres/gpu count reported lower than configured'), no job gets these GPUs | fix: write Type=nvidia_h100_80gb_hbm3 in gres.conf (line 4 and the node's other Name=gpu records), or change slurm.conf's Gres= to the type gres.conf names; restart slurmd and slurmctld" \
    "Type= differing between the files: gres_count compares types, FAIL naming both"
expect slurm.slurmd_gres "WARN slurm.slurmd_gres: slurmd -G lists 0 GPUs, the plugin 4: because of slurm.gres_count (gres.conf's Type= is not slurm.conf's nvidia_h100_80gb_hbm3) | placement: Slurm's own index order was not compared with the plugin's | fix: fix slurm.gres_count first (its line above); this follows" \
    "slurmd -G lists none: the consequence, naming the cause"
is "$(doctor --health; printf '%s' "$out")" "numaguard doctor: slurm.gres_count: slurm.conf gives node xe1 Gres=gpu:nvidia_h100_80gb_hbm3:4, gres.conf has 0 devices of Type=nvidia_h100_80gb_hbm3 (its Type=: nvidia_h100)" \
    "--health drains with the cause"

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
out=$(PATH="$BIN:/usr/bin:/bin" LD_LIBRARY_PATH=$NV NG_FAKE_NVML_HANG=1 NG_FAKE_SMI_HANG=setsid NG_TEST_TAG=$W \
    "$NG" doctor --slurm-conf "$E/slurm.conf" --node xe1 --fsroot "$R" \
    --gres-conf "$E/gres.plugin.conf" --topology "$XE" --timeout 3 --deadline 8 2>&1)
rc=$? t1=$(date +%s)
ok "$([ $((t1 - t0)) -le 10 ]; echo $?)" "every tool hanging: doctor ended in $((t1 - t0)) s (--deadline 8, --timeout 3)"
left=$(tagged_left "$W")
is "$left" 0 "nothing left running (the hung tools and their setsid() children killed)"
expect gpu.nvidia_smi "WARN gpu.nvidia_smi: nvidia-smi -q: did not answer within 3 s (killed with its process group) | placement: the driver's own view of the GPUs could not be compared (a driver that hangs nvidia-smi hangs CUDA jobs too) | fix: check the driver: dmesg, nvidia-smi by hand, nvidia-bug-report.sh" \
    "the hung nvidia-smi: WARN after its 3 s"
like "$(line_of slurm.slurmd_gres)" "^WARN slurm.slurmd_gres: slurmd -G -N xe1: (did not answer within [0-9]+ (s|ms)|not run: doctor's whole-run limit of 8 s \\(--deadline\\) was reached)" \
    "slurmd -G: stopped by the whole run's limit"
like "$(line_of plugin.release)" "^(OK   plugin.release: release not compared: slurmd -V not run: doctor's whole-run limit|WARN plugin.release: cannot tell this node's Slurm release \\(slurmd -V: did not answer)" \
    "slurmd -V: not run (the run's limit: said, no spurious WARN) or its own hang named"

# --- a hung tool is a FAIL in a health check (--health), the tool named ------------
site deepops
out=$(PATH="$BIN:$PATH" NG_FAKE_SMI_DIR=$SMI NG_FAKE_SMI_HANG=1 NG_TEST_TAG=$W/health "$NG" doctor \
    --health --slurm-conf "$E/slurm.conf" --node xe1 --fsroot "$R" --gres-conf "$E/gres.plugin.conf" \
    --topology "$XE" --timeout 2 2>&1)
rc=$?
is "$rc|$out" "1|numaguard doctor: gpu.nvidia_smi: nvidia-smi -q: did not answer within 2 s (killed with its process group)" \
    "--health with a hung nvidia-smi: FAIL naming the tool (the drain reason)"

# --- doctor SIGKILLed while a tool hangs: alone, and its whole process group -----
# (setsid: doctor leads its own group, as under a supervisor); every tool
# hangs, nvidia-smi with a setsid() child of its own.
for how in alone group; do
    tag=$W/kill-$how
    PATH="$BIN:/usr/bin:/bin" NG_FAKE_SMI_HANG=setsid NG_TEST_TAG=$tag setsid "$NG" doctor \
        --slurm-conf "$E/slurm.conf" --node xe1 --fsroot "$R" --gres-conf "$E/gres.plugin.conf" \
        --topology "$XE" --timeout 60 --deadline 120 >/dev/null 2>&1 &
    pid=$!
    for i in $(seq 100); do [ "$(tagged_left "$tag")" -ge 4 ] && break; sleep 0.1; done
    started=$(tagged_left "$tag")
    if [ $how = alone ]; then kill -9 "$pid"; else kill -9 "-$pid"; fi   # dash: no "--"
    wait "$pid" 2>/dev/null
    for i in $(seq 50); do [ "$(tagged_left "$tag")" -eq 0 ] && break; sleep 0.1; done
    is "$(tagged_left "$tag")" 0 "doctor SIGKILLed ($how) with nvidia-smi hung ($started processes of its run): nothing of it left"
done
done_testing
