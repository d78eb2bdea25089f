#!/bin/sh
# numaguard doctor end to end, on a fake Dell XE8640 node (4x H100 on 8
# SNC4 NUMA nodes): the driver files and the node's sysfs of
# tests/fakefs/mkfake.sh (node-xe8640), the real topology XML, real
# slurm.conf / gres.conf / cgroup.conf / plugstack.conf files, the real
# slurmd (-V, -G) and the built numaguard.so; nvidia-smi is the stand-in
# tests/fakefs/nvidia-smi printing captures in the real formats. From a
# node where every check is OK, one thing at a time is broken and the exact
# line doctor prints for it is checked, with the exit status (1 on FAIL,
# 0 on WARN only, 2 on bad usage), --json and --health; an nvidia-smi that
# never answers is killed after --timeout.
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
doctor_prereqs
W=$(mktemp -d /tmp/ng-doctor.XXXXXX) || exit 2
trap 'rm -rf "$W"' EXIT
R=$W/root E=$W/etc BIN=$W/bin SMI=$W/smi
sh tests/fakefs/mkfake.sh "$R" node-xe8640 || { echo "Bail out! mkfake.sh failed"; exit 1; }
mkdir -p "$E" "$BIN" "$SMI" "$W/spool/xe1"
cp tests/fakefs/nvidia-smi "$BIN/"
FAKESMI=$(pwd)/tests/fakefs/nvidia-smi.d

# The node as it should be: every check OK.
baseline() {
    cat >"$E/slurm.conf" <<EOF
ClusterName=doctor
SlurmctldHost=localhost(127.0.0.1)
SlurmdSpoolDir=$W/spool/%n
TaskPlugin=task/cgroup,task/affinity
PlugStackConfig=$E/plugstack.conf
GresTypes=gpu
NodeName=xe[1-2] CPUs=224 Boards=1 SocketsPerBoard=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=1000 Gres=gpu:4
PartitionName=p Nodes=ALL Default=YES
EOF
    # Slurm's copy names the host's paths, the plugin's the node under
    # fsroot (tests/slurm/cluster.sh does the same). Minors 1,3,0,2 are
    # the GPUs in bus order (mkfake.sh gives them out of order).
    printf 'NodeName=xe[1-2] Name=gpu File=%s/dev/nvidia[1,3,0,2]\n' "$R" >"$E/gres.conf"
    printf 'NodeName=xe[1-2] Name=gpu File=/dev/nvidia[1,3,0,2]\n' >"$E/gres.plugin.conf"
    printf 'ConstrainCores=yes\nConstrainDevices=yes\n' >"$E/cgroup.conf"
    printf 'required %s topology_cache=off\n' "$PLUGIN" >"$E/plugstack.conf"
    cp "$FAKESMI/xe8640-q.txt" "$SMI/q.txt"
    cp "$FAKESMI/xe8640-topo-m.txt" "$SMI/topo-m.txt"
    rm -rf "$R" && sh tests/fakefs/mkfake.sh "$R" node-xe8640
}

doctor() {
    out=$(PATH="$BIN:$PATH" NG_FAKE_SMI_DIR=$SMI "$NG" doctor --slurm-conf "$E/slurm.conf" \
        --node xe1 --fsroot "$R" --gres-conf "$E/gres.plugin.conf" --topology "$XE" "$@" 2>&1)
    rc=$?
}
# The line of check ID in the last output.
line_of() { printf '%s\n' "$out" | grep -E "^(OK|WARN|FAIL) +$1: " | head -1; }
expect() {  # expect ID LINE DESC
    is "$(line_of "$1")" "$2" "$3"
}

# --- the healthy node ------------------------------------------------------
baseline
doctor
is "$rc" 0 "healthy node: exit 0"
like "$out" "^29 checks: 29 OK, 0 WARN, 0 FAIL$" "healthy node: 29 checks, all OK"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | grep -E "^(WARN|FAIL)" | sed 's/^/#   /'
expect gpu.nvidia_smi "OK   gpu.nvidia_smi: nvidia-smi agrees: 4 GPUs, their bus ids and minors, CPU and NUMA affinity match the kernel and hwloc" \
    "nvidia-smi -q and topo -m that agree with sysfs: OK"
expect slurm.gres_order "OK   slurm.gres_order: gres index order is PCI bus order: 0=0000:4e:00.0 1=0000:5f:00.0 2=0000:cb:00.0 3=0000:db:00.0" \
    "File=/dev/nvidia[1,3,0,2] is bus order (minors are not)"
expect slurm.slurmd_gres "OK   slurm.slurmd_gres: slurmd -G and the plugin give the same 4 GPUs the same gres indices" \
    "the real slurmd -G agrees with the plugin's order"
like "$(line_of plugin.release)" "^OK   plugin.release: built for Slurm ([0-9.]+), this node runs \\1 \\(slurmd -V\\)$" \
    "the built plugin's release is this Slurm's"
like "$(line_of pci.locality)" "^OK   pci.locality: hwloc and sysfs agree on the NUMA node and CPUs of 8 of 8 GPUs and RDMA NICs$" \
    "hwloc and sysfs agree on 4 GPUs and 4 HCAs"

# --- GPU and NIC locality ----------------------------------------------------
echo -1 >"$R/sys/bus/pci/devices/0000:4e:00.0/numa_node"
echo 0-223 >"$R/sys/bus/pci/devices/0000:4e:00.0/local_cpulist"
doctor
is "$rc" 1 "firmware numa_node -1: exit 1"
expect pci.numa_node "FAIL pci.numa_node: GPU 0000:4e:00.0: sysfs numa_node is -1 (the firmware gives no NUMA proximity) on a machine with 8 NUMA nodes | placement: hwloc then puts the device on the whole machine: every NUMA node counts as local to it, so --numa-policy=local binds its tasks to all CPUs and memory instead of the near ones | fix: enable the firmware's NUMA proximity information for PCI devices (ACPI SRAT and _PXM) in the BIOS setup: the NUMA settings are named e.g. 'NUMA nodes per socket' (AMD NPS), 'Sub-NUMA Clustering' (Intel SNC) or 'ACPI SRAT'; update the BIOS if it has none; reboot, then restart slurmd (the topology cache)" \
    "firmware numa_node -1 on an 8-node machine: FAIL naming the BIOS settings"
baseline
echo 2 >"$R/sys/bus/pci/devices/0000:4d:00.0/numa_node"
doctor
expect pci.locality "FAIL pci.locality: NIC 0000:4d:00.0 (mlx5_0): hwloc says NUMA 3, CPUs 42-55,154-167; sysfs says numa_node 2 | placement: numaguard places tasks by hwloc's view, the kernel allocates by its own: the tasks of this device get CPUs and memory the kernel does not consider near it | fix: find which view is stale: restart slurmd to rewrite the topology cache (a BIOS or SNC/NPS change since it was written), or remove a topology= file that is not this machine's; compare with lstopo" \
    "an HCA whose sysfs node differs from hwloc's: FAIL"

# --- the NVIDIA driver and nvidia-smi ----------------------------------------
baseline
cp "$FAKESMI/xe8640-topo-m-disagree.txt" "$SMI/topo-m.txt"
doctor
is "$rc" 1 "nvidia-smi disagreeing with sysfs: exit 1"
expect gpu.nvidia_smi "FAIL gpu.nvidia_smi: nvidia-smi topo -m: GPU1 (0000:5f:00.0) CPU Affinity 0-13,112-125, NUMA Affinity 0; the kernel and hwloc: CPUs 14-27,126-139, NUMA node 1 | placement: numaguard places by the kernel's and hwloc's view while CUDA, NCCL and nvidia-smi go by the driver's: they disagree on which CPUs and memory are near this GPU | fix: find which view is wrong (lstopo, the BIOS NUMA settings, a driver older than a firmware change); restart slurmd after a fix" \
    "nvidia-smi topo -m that disagrees with sysfs: FAIL naming both views"
baseline
t0=$(date +%s)
out=$(PATH="$BIN:$PATH" NG_FAKE_SMI_HANG=1 NG_TEST_TAG=$W "$NG" doctor --slurm-conf "$E/slurm.conf" --node xe1 \
    --fsroot "$R" --gres-conf "$E/gres.plugin.conf" --topology "$XE" --timeout 2 2>&1)
rc=$? t1=$(date +%s)
is "$rc" 0 "an nvidia-smi that never answers: exit 0 (WARN)"
ok "$([ $((t1 - t0)) -le 6 ]; echo $?)" "an nvidia-smi that never answers: doctor done in $((t1 - t0)) s (limit 2 s, the tool run once)"
expect gpu.nvidia_smi "WARN gpu.nvidia_smi: nvidia-smi -q: did not answer within 2 s (killed with its process group) | placement: the driver's own view of the GPUs could not be compared (a driver that hangs nvidia-smi hangs CUDA jobs too) | fix: check the driver: dmesg, nvidia-smi by hand, nvidia-bug-report.sh" \
    "a hung nvidia-smi: WARN, killed"
left=$(tagged_left "$W")
is "$left" 0 "nothing of the hung nvidia-smi is left running"
rm -rf "$R/proc/driver/nvidia/gpus/0000:cb:00.0"
doctor
expect gpu.nvidia_driver "FAIL gpu.nvidia_driver: hwloc shows NVIDIA GPU 0000:cb:00.0, the driver does not list it | placement: its device file maps to no GPU: tasks given it get no placement near it | fix: check the driver (dmesg; 'GPU Excluded' in the information files; nvidia-smi)" \
    "a GPU the driver does not list: FAIL"

# --- Slurm: gres.conf, slurm.conf, cgroup.conf ------------------------------
baseline
printf 'NodeName=xe[1-2] Name=gpu File=%s/dev/nvidia[2,0,3,1]\n' "$R" >"$E/gres.conf"
printf 'NodeName=xe[1-2] Name=gpu File=/dev/nvidia[2,0,3,1]\n' >"$E/gres.plugin.conf"
doctor
is "$rc" 0 "gres.conf File= reversed: exit 0 (WARN)"
expect slurm.gres_order "WARN slurm.gres_order: gres index order (File= order) is not PCI bus order: 0=0000:db:00.0 1=0000:cb:00.0 2=0000:5f:00.0 3=0000:4e:00.0 | placement: Slurm numbers the GPUs in this order and numaguard follows it (it reads gres.conf as slurmd does), but tools that count GPUs in bus order (nvidia-smi, CUDA_DEVICE_ORDER=PCI_BUS_ID, AutoDetect=nvml nodes) name another GPU for the same index, and where the plugin cannot read this file it falls back to bus order | fix: list File= in PCI bus order (each GPU's minor is in /proc/driver/nvidia/gpus/<bus>/information) or use AutoDetect=nvml" \
    "gres.conf File= reversed: WARN saying what the plugin does with it"
expect slurm.slurmd_gres "OK   slurm.slurmd_gres: slurmd -G and the plugin give the same 4 GPUs the same gres indices" \
    "reversed in both copies: slurmd -G and the plugin still agree"
baseline
printf 'NodeName=xe[1-2] Name=gpu File=/dev/nvidia[1,3,0,9]\n' >"$E/gres.plugin.conf"
doctor
is "$rc" 1 "gres.conf naming a missing device: exit 1"
expect slurm.gres_devices "FAIL slurm.gres_devices: gres.conf names $R/dev/nvidia9 (gres index 3), which does not exist: No such file or directory | placement: Slurm counts a GPU that is not there, and the plugin cannot tell which GPU a task given this gres index owns: no placement near it | fix: correct File= in gres.conf (ls -l /dev/nvidia*; /proc/driver/nvidia/gpus/*/information lists each GPU's minor) or load the driver" \
    "gres.conf naming a missing device file: FAIL"
expect slurm.slurmd_gres "FAIL slurm.slurmd_gres: slurmd -G gives gres index 3 to 0000:db:00.0, the plugin to /dev/nvidia9 | placement: SLURM_STEP_GPUS index i names another GPU for Slurm than for numaguard: tasks are placed near the wrong GPU | fix: point the plugin's gres_conf= at the gres.conf slurmd reads; if it already does, report it (docs/gpu-order.md)" \
    "slurmd -G against the plugin's order: FAIL at the index that differs"
is "$(PATH="$BIN:$PATH" NG_FAKE_SMI_DIR=$SMI "$NG" doctor --health --slurm-conf "$E/slurm.conf" --node xe1 --fsroot "$R" --gres-conf "$E/gres.plugin.conf" --topology "$XE")" \
    "numaguard doctor: slurm.gres_devices: gres.conf names $R/dev/nvidia9 (gres index 3), which does not exist: No such file or directory" \
    "--health prints the first FAIL as the drain reason"
printf 'NodeName=other[01-04] Name=gpu File=/dev/nvidia[0-3]\n' >"$E/gres.plugin.conf"
doctor
expect slurm.gres_conf "FAIL slurm.gres_conf: gres.conf '$E/gres.plugin.conf': none of its 1 Name=gpu records names node 'xe1' (NodeName=) | placement: the plugin cannot use it: it warns in every step and reads GPU indices in PCI bus order, which need not be the order Slurm numbers the GPUs in | fix: add node xe1 to the NodeName= of its Name=gpu records (a hostlist such as gpu[01-16]), or give --node NAME if xe1 is not this node's Slurm name" \
    "gres.conf without a record for this node (the plugin's matching): FAIL, the fix names the node"
printf 'AutoDetect=nvml\nNodeName=xe[1-2] Name=gpu File=/dev/nvidia[1,3,0]\n' >"$E/gres.plugin.conf"
# A node whose driver NVML loads (the test's fake libnvidia-ml.so.1) and
# whose slurmd is not asked (Debian's slurmd here has no gpu/nvml plugin).
mkdir -p "$W/nvml" && ${CC:-cc} -shared -fPIC -o "$W/nvml/libnvidia-ml.so.1" tests/fakefs/fake_nvml.c
out=$(PATH="$BIN:/usr/bin:/bin" LD_LIBRARY_PATH=$W/nvml NG_FAKE_SMI_DIR=$SMI "$NG" doctor \
    --slurm-conf "$E/slurm.conf" --node xe1 --fsroot "$R" --gres-conf "$E/gres.plugin.conf" \
    --topology "$XE" 2>&1)
expect slurm.autodetect "WARN slurm.autodetect: AutoDetect=nvml finds $R/dev/nvidia2, which no File= names | placement: Slurm ignores it: the GPU is never given to a job | fix: add it to File= or drop File= and let AutoDetect list them" \
    "AutoDetect=nvml finding a GPU that File= leaves out: WARN"
baseline
sed -i 's/Gres=gpu:4/Gres=gpu:h100:8/' "$E/slurm.conf"
doctor
expect slurm.gres_count "FAIL slurm.gres_count: slurm.conf gives node xe1 Gres=gpu:h100:8 (8 GPUs), gres.conf lists 4 devices for it | placement: slurmd reports fewer GPUs than configured: slurmctld drains the node ('gres/gpu count reported lower than configured') | fix: make slurm.conf's Gres=gpu:N and gres.conf's File= list agree" \
    "slurm.conf's Gres count above gres.conf's devices: FAIL"
baseline
sed -i 's|^TaskPlugin=.*|TaskPlugin=task/none|' "$E/slurm.conf"
doctor
expect slurm.task_plugin "WARN slurm.task_plugin: TaskPlugin=task/none binds and confines nothing | placement: Slurm confines no step: numaguard plans inside slurmstepd's affinity, which is then the whole node, so the steps of two jobs on one node are not kept apart | fix: TaskPlugin=task/cgroup,task/affinity with ConstrainCores=yes in cgroup.conf" \
    "TaskPlugin=task/none: WARN"
baseline
printf 'ConstrainCores=yes\n' >"$E/cgroup.conf"
doctor
expect slurm.cgroup "WARN slurm.cgroup: cgroup.conf $E/cgroup.conf: ConstrainDevices is not yes | placement: every task can open every GPU: numaguard names a task's GPUs from SLURM_STEP_GPUS and CUDA_VISIBLE_DEVICES alone, and a program that ignores them uses GPUs another job owns | fix: ConstrainDevices=yes in cgroup.conf" \
    "cgroup.conf without ConstrainDevices: WARN"

# --- the plugin ------------------------------------------------------------------
baseline
printf 'required %s topology_cache=off default_policy=fastest\n' "$PLUGIN" >"$E/plugstack.conf"
doctor
is "$rc" 1 "a plugstack argument that does not parse: exit 1"
like "$(line_of plugin.args)" "^FAIL plugin.args: $E/plugstack.conf:1: the plugin's arguments do not parse: default_policy=fastest: --numa-policy: invalid value 'fastest'.* \\| placement: the plugin disables itself: jobs run as if it were absent \\(srun says 'numaguard: disabled by a plugstack.conf error'\\) \\| fix: correct the argument: docs/admin-guide.md and numaguard\\(8\\) list them$" \
    "a plugstack argument that does not parse: FAIL with the plugin's own message"
cat >"$W/other.c" <<'EOF'
/* A SPANK plugin as SPANK_PLUGIN() of Slurm 23.11 headers defines it. */
const char plugin_name[] = "numaguard";
const char plugin_type[] = "spank";
const unsigned int plugin_version = (23 << 16) + (11 << 8) + 4;
const unsigned int spank_plugin_version = 1;
EOF
mkdir -p "$W/plug" && ${CC:-cc} -shared -fPIC -o "$W/plug/numaguard.so" "$W/other.c" &&
    chmod 755 "$W/plug/numaguard.so"
printf 'required %s/plug/numaguard.so topology_cache=off\n' "$W" >"$E/plugstack.conf"
doctor
is "$rc" 1 "a plugin built for another Slurm release: exit 1"
run=$(slurmd -V | sed -n 's/.* \([0-9][0-9]*\.[0-9]*\.[0-9]*\).*/\1/p')
expect plugin.release "FAIL plugin.release: $W/plug/numaguard.so was built for Slurm 23.11 (plugin_version 0x170b04), this node runs Slurm $run (slurmd -V) | placement: Slurm refuses the plugin ('Incompatible Slurm plugin version'): with required every job step on this node fails, with optional nothing is placed | fix: rebuild numaguard against this Slurm's headers (make, or the package built for this release) and install it on every node and submit host" \
    "a plugin built for Slurm 23.11 (its ELF plugin_version): FAIL"
chmod 666 "$W/plug/numaguard.so"
doctor
expect plugin.file "FAIL plugin.file: $W/plug/numaguard.so is owned by uid 0 with mode 0666: not root's alone | placement: whoever can write it runs code as root in every slurmstepd | fix: chown root:root and chmod 0755 the file (and its directory)" \
    "a plugin file others can write: FAIL"
printf 'optional %s/plug/missing/numaguard.so\n' "$W" >"$E/plugstack.conf"
doctor
expect plugin.file "WARN plugin.file: $W/plug/missing/numaguard.so ($E/plugstack.conf:1) is not a readable regular file | placement: Slurm skips the optional plugin: nothing is placed | fix: install numaguard.so there (make install, or the package), or correct the path in plugstack.conf" \
    "an optional plugin that is not there: WARN"
printf '# no numaguard here\n' >"$E/plugstack.conf"
doctor
expect plugin.plugstack "WARN plugin.plugstack: plugstack.conf $E/plugstack.conf (files read with its includes: 1) names no numaguard.so | placement: numaguard is not loaded on this node: srun has no --numa-policy and --omp-guard here, nothing is placed | fix: add \`optional <Slurm's plugin dir>/numaguard.so\` to plugstack.conf (README.md, docs/admin-guide.md) on every node and submit host" \
    "plugstack.conf without numaguard: WARN"

# --- the kernel (simulated through fsroot: its osrelease and sysfs) ------------
baseline
echo 6.1.0-28-amd64 >"$R/proc/sys/kernel/osrelease"
rm -rf "$R/sys/kernel/mm/mempolicy"
doctor
is "$rc" 0 "a kernel without weighted interleave: exit 0 (WARN)"
expect kernel.weighted_interleave "WARN kernel.weighted_interleave: the kernel has no MPOL_WEIGHTED_INTERLEAVE (Linux < 6.9; $R/proc/sys/kernel/osrelease 6.1.0-28-amd64) | placement: --numa-policy=weighted falls back to plain interleave (an error under strict) | fix: a kernel >= 6.9, or leave weighted out of allowed_policies" \
    "Linux 6.1: weighted interleave WARN"
expect kernel.preferred_many "OK   kernel.preferred_many: the kernel accepts MPOL_PREFERRED_MANY ($R/proc/sys/kernel/osrelease 6.1.0-28-amd64)" \
    "Linux 6.1: MPOL_PREFERRED_MANY is there"
echo 5.10.0-33-amd64 >"$R/proc/sys/kernel/osrelease"
doctor
expect kernel.preferred_many "WARN kernel.preferred_many: the kernel refuses MPOL_PREFERRED_MANY (Linux < 5.15; $R/proc/sys/kernel/osrelease 5.10.0-33-amd64) | placement: --numa-policy=prefer prefers one node (the task's first, its GPU's) instead of all of its nodes | fix: a kernel >= 5.15, or leave prefer out of allowed_policies" \
    "Linux 5.10: MPOL_PREFERRED_MANY WARN"
baseline
echo 0-111 >"$R/sys/devices/system/cpu/online"
echo 112-223 >"$R/sys/devices/system/cpu/offline"
doctor
expect kernel.cpus "WARN kernel.cpus: CPUs 112-223 are offline | placement: hwloc, the topology cache and Slurm see fewer CPUs than the node has; when they come back the cache's stamp no longer matches and every step discovers the node live until slurmd restarts | fix: online them (echo 1 > /sys/devices/system/cpu/cpuN/online) or set slurm.conf's CPUs to what is online" \
    "offline CPUs: WARN"

# --- the topology cache ---------------------------------------------------------
baseline
doctor --topology-cache "$W/cache"
expect cache.topology "WARN cache.topology: no topology cache in $W/cache | placement: every step discovers the node live: 10-20 ms more per step and node, seconds on large nodes | fix: restart slurmd with numaguard in plugstack.conf (slurmd writes the cache, as root, when it starts)" \
    "no topology cache: WARN"
mkdir -p "$W/cache" && echo stale >"$W/cache/topology.stamp" && echo "<x/>" >"$W/cache/topology.xml"
doctor --topology-cache "$W/cache"
expect cache.topology "WARN cache.topology: the plugin refuses the topology cache $W/cache: '/tmp' is writable by others or not owned by root (every directory from / to the cache must be root's alone) | placement: the plugin does not use it: every step discovers the node live | fix: a cache directory must be root's alone from / down (never below /tmp); a stale one is rewritten when slurmd restarts" \
    "a cache below /tmp, refused by the plugin's own trust rule: WARN with its reason"

# --- the health check script (tools/numaguard-healthcheck) ----------------------
# scontrol is a stand-in here that records its arguments (the real one
# drains a real node in tests/slurm/t-slurm-health.sh).
printf '#!/bin/sh\n[ -z "$SLURM_CONF" ] || echo "SLURM_CONF=$SLURM_CONF" >>%s/scontrol.args\nprintf "%%s\\n" "$@" >>%s/scontrol.args\n' "$W" "$W" >"$BIN/scontrol"
chmod 755 "$BIN/scontrol"
printf 'NUMAGUARD=%s\nDOCTOR_ARGS="--slurm-conf %s --fsroot %s --gres-conf %s --topology %s"\n' \
    "$NG" "$E/slurm.conf" "$R" "$E/gres.plugin.conf" "$XE" >"$E/healthcheck.conf"
chmod 644 "$E/healthcheck.conf"
hc() {
    rm -f "$W/scontrol.args"
    env -i SLURMD_NODENAME=xe1 PATH="$BIN" NG_FAKE_SMI_DIR="$SMI" NUMAGUARD=/nonexistent/numaguard \
        NUMAGUARD_HEALTHCHECK_CONF="$E/healthcheck.conf" /bin/sh tools/numaguard-healthcheck "$@" \
        2>"$W/hc.err"
}
baseline
hc
is "$?:$(cat "$W/scontrol.args" 2>/dev/null)" "0:" "health check on a correct node: exit 0, scontrol not run"
printf 'NodeName=xe[1-2] Name=gpu File=/dev/nvidia[1,3,0,9]\n' >"$E/gres.plugin.conf"
hc
is "$?:$(tr '\n' '|' <"$W/scontrol.args")" \
    "0:SLURM_CONF=$E/slurm.conf|update|nodename=xe1|state=drain|reason=numaguard doctor: slurm.gres_devices: gres.conf names $R/dev/nvidia9 (gres index 3), which does not exist: No such file or directory|" \
    "health check on a node with a missing device: scontrol (with doctor's slurm.conf) update nodename=xe1 state=drain reason=<doctor's first FAIL>"
hc --node=xe2
is "$?:$(tr '\n' '|' <"$W/scontrol.args")" \
    "0:SLURM_CONF=$E/slurm.conf|update|nodename=xe2|state=drain|reason=numaguard doctor: slurm.gres_devices: gres.conf names $R/dev/nvidia9 (gres index 3), which does not exist: No such file or directory|" \
    "health check with --node=xe2 (SLURMD_NODENAME=xe1): the node doctor judged, xe2, is drained"
chmod 666 "$E/healthcheck.conf"
hc
is "$?" 127 "a health check config others can write is not read (its NUMAGUARD= neither): nothing drained"
is "$(cat "$W/scontrol.args" 2>/dev/null)" "" "... and scontrol is not run"
chmod 644 "$E/healthcheck.conf"

# --- JSON and usage ------------------------------------------------------------
baseline
printf 'NodeName=xe[1-2] Name=gpu File=/dev/nvidia[1,3,0,9]\n' >"$E/gres.plugin.conf"
doctor --json
is "$rc" 1 "--json: the same exit status (1: a FAIL)"
printf '%s\n' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = {x["id"]: x for x in d["checks"]}
g = c["slurm.gres_devices"]
ev = {e["key"]: e["value"] for e in c["slurm.gres_devices"]["evidence"]}
ok = (d["status"] == "FAIL" and d["summary"]["checks"] == len(d["checks"]) == 29 and
      g["status"] == "FAIL" and g["group"] == "slurm" and "nvidia9" in g["finding"] and
      g["fix"] and ev.get(sys.argv[1] + "/dev/nvidia1") == "0000:4e:00.0" and
      all(x["status"] in ("OK", "WARN", "FAIL") for x in d["checks"]) and
      {"key": "node", "value": "xe1"} in d["inputs"])
print(("ok - " if ok else "not ok - ") + "--json: every check with its evidence (29 checks, gres_devices FAIL with the bus id of each device file)")
' "$R" >"$W/json.tap" 2>&1 || echo "not ok - --json: not valid JSON" >>"$W/json.tap"
emit "$W/json.tap"
"$NG" doctor --timeout 0 >/dev/null 2>"$W/err"
is "$?" 2 "--timeout 0: exit 2"
is "$(cat "$W/err")" "numaguard: doctor: --timeout: invalid value '0' (whole seconds 1..600)" \
    "--timeout 0: one line naming the option, the value and the valid forms"
"$NG" doctor --json --health >/dev/null 2>&1
is "$?" 2 "--json with --health: exit 2"
"$NG" doctor extra >/dev/null 2>&1
is "$?" 2 "an extra argument: exit 2"

# --- this machine -----------------------------------------------------------------
out=$("$NG" doctor 2>&1)
rc=$?
like "$out" "^[0-9]+ checks: [0-9]+ OK, [0-9]+ WARN, [0-9]+ FAIL$" "this machine: doctor runs every check"
diag "this machine: exit $rc, $(printf '%s\n' "$out" | tail -1)"
# --- the OpenMP governor (plugin.governor) ---------------------------------------
. tests/lib/governor.sh
baseline
printf 'required %s topology_cache=off default_omp_guard=adaptive\n' "$PLUGIN" >"$E/plugstack.conf"
doctor --governor "$W/none/libnumaguard-omp.so"
is "$rc" 0 "default_omp_guard=adaptive without the governor: a WARN, exit 0 (the health check does not drain)"
expect plugin.governor "WARN plugin.governor: the governor $W/none/libnumaguard-omp.so is not installed: No such file or directory (plugstack.conf: default_omp_guard=adaptive) | placement: every task of the default --omp-guard=adaptive warns and runs without the governor: its OpenMP teams are not shared among the task's cores | fix: install it (make install puts it at $W/none/libnumaguard-omp.so), or drop default_omp_guard=adaptive from plugstack.conf" \
    "configured, not installed: WARN, what each task then does"
G=$(ng_stage_governor "$BUILD")
D=$(mktemp -d /run/ng-doctor-gov.XXXXXX 2>/dev/null) && chmod 755 "$D"
if [ -n "$G" ] && [ -f "$G/libnumaguard-omp.so" ] && [ -n "$D" ] && ng_trusted_path "$D"; then
    doctor --governor "$G/libnumaguard-omp.so"
    expect plugin.governor "OK   plugin.governor: the governor $G/libnumaguard-omp.so is root's; preloaded with libgomp it ran an OpenMP region of 2 threads" \
        "the build's governor, root's: it loads and runs a region"
    printf 'int ng_not_the_governor;\n' | cc -shared -fPIC -o "$D/other.so" -x c -
    doctor --governor "$D/other.so"
    like "$(line_of plugin.governor)" "^WARN plugin.governor: the governor $D/other.so is not in effect when preloaded: GOMP_parallel in the process is [^ ]*libgomp[^ ]*'s \\(plugstack.conf: default_omp_guard=adaptive\\) .*fix: reinstall the libnumaguard-omp.so built with this numaguard at $D/other.so \\(make install\\)$" \
        "a library that is not the governor: WARN, not in effect (libgomp answers)"
    cp "$G/libnumaguard-omp.so" "$D/libnumaguard-omp.so"
    chown 65534 "$D/libnumaguard-omp.so"
    doctor --governor "$D/libnumaguard-omp.so"
    like "$(line_of plugin.governor)" "^WARN plugin.governor: the governor $D/libnumaguard-omp.so is refused by the plugin's rule: not owned by root, or writable by others .*fix: install it as root's: chown root:root" \
        "not root's: WARN, the plugin's rule quoted, the fix"
else
    skip 3 "no directory root's alone to stage the governor in"
fi
# a staged copy (not the build tree itself) is removed
[ -z "$G" ] || [ "$G" = "$(cd "$BUILD" && pwd)" ] || rm -rf "$G"
[ -z "$D" ] || rm -rf "$D"

done_testing
