#!/bin/sh
# Build a fake /dev, /proc and /sys tree that imitates what the kernel and
# GPU drivers really expose, for tests of lib/gpu/.
#
#   sh tests/fakefs/mkfake.sh ROOT nvidia-xe8640   # 4x H100, buses 4e,5f,cb,db
#   sh tests/fakefs/mkfake.sh ROOT node-xe8640     # the same with the node's sysfs
#   sh tests/fakefs/mkfake.sh ROOT amd-corona      # 8x MI50, buses 03..e3
#
# Needs root for mknod (the device files must be character devices:
# numaguard stat()s them for major/minor, as Slurm does).
#
# NVIDIA: /dev/nvidiaN is char 195:N; the driver lists each GPU in
#   /proc/driver/nvidia/gpus/<bus>/information ("Device Minor:", "GPU UUID:",
#   "Bus Location:"). Minors here are deliberately NOT in bus order.
# DRM (AMD, Intel): /dev/dri/renderD<128+i> is char 226:(128+i);
#   /sys/dev/char/226:128 -> ../../devices/<pci path>/drm/renderD128 and
#   that dir's "device" -> ../../../<bus> (the PCI device dir);
#   /sys/class/drm/{cardN,renderDM} link to the same drm dirs; amdgpu's
#   <pci dir>/unique_id holds the id ROCR_VISIBLE_DEVICES=GPU-<hex> uses.
set -eu
root=$1
profile=$2
mkdir -p "$root/dev/dri" "$root/proc/driver/nvidia/gpus" "$root/sys/dev/char" \
    "$root/sys/class/drm"

nv_gpu() { # minor bus uuid root_port
    minor=$1 bus=$2 uuid=$3
    d="$root/proc/driver/nvidia/gpus/$bus"
    mkdir -p "$d"
    printf 'Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t %s\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.74.00.0d\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\nDevice Minor: \t %s\nGPU Excluded:\t No\n' \
        "$((500 + minor))" "$uuid" "$bus" "$minor" >"$d/information"
    rm -f "$root/dev/nvidia$minor"
    mknod "$root/dev/nvidia$minor" c 195 "$minor"
}

drm_gpu() { # card bus vendor device unique_id root_port
    card=$1 bus=$2 vendor=$3 device=$4 uid=$5 port=$6
    render=$((128 + card))
    dom=${bus%%:*}
    pci="devices/pci$dom:${port%%:*}/$dom:$port/$bus"
    p="$root/sys/$pci"
    mkdir -p "$p/drm/card$card" "$p/drm/renderD$render"
    printf '%s\n' "$vendor" >"$p/vendor"
    printf '%s\n' "$device" >"$p/device"
    printf '0x038000\n' >"$p/class"
    [ -n "$uid" ] && printf '%s\n' "$uid" >"$p/unique_id"
    for n in "card$card" "renderD$render"; do
        ln -sfn "../../../$bus" "$p/drm/$n/device"
        ln -sfn "../../$pci/drm/$n" "$root/sys/class/drm/$n"
    done
    ln -sfn "../../$pci/drm/card$card" "$root/sys/dev/char/226:$card"
    ln -sfn "../../$pci/drm/renderD$render" "$root/sys/dev/char/226:$render"
    rm -f "$root/dev/dri/card$card" "$root/dev/dri/renderD$render"
    mknod "$root/dev/dri/card$card" c 226 "$card"
    mknod "$root/dev/dri/renderD$render" c 226 "$render"
}

xe8640_gpus() {
    # Dell XE8640: H100 at 4e, 5f, cb, db (tests/topologies/xe8640-*.xml).
    nv_gpu 1 0000:4e:00.0 GPU-4e4e4e4e-0000-1111-2222-333344445555
    nv_gpu 3 0000:5f:00.0 GPU-5f5f5f5f-0000-1111-2222-333344445555
    nv_gpu 0 0000:cb:00.0 GPU-cbcbcbcb-0000-1111-2222-333344445555
    nv_gpu 2 0000:db:00.0 GPU-dbdbdbdb-0000-1111-2222-333344445555
    rm -f "$root/dev/nvidiactl"
    mknod "$root/dev/nvidiactl" c 195 255
    # The BMC's VGA is a DRM device too (never a GPU for numaguard).
    drm_gpu 0 0000:03:00.0 0x102b 0x0536 "" 00:1c.0
}

pci_dev() { # bus vendor class numa_node local_cpulist
    d="$root/sys/bus/pci/devices/$1"
    mkdir -p "$d"
    printf '%s\n' "$2" >"$d/vendor"
    printf '%s\n' "$3" >"$d/class"
    printf '%s\n' "$4" >"$d/numa_node"
    printf '%s\n' "$5" >"$d/local_cpulist"
}

# The rest of an XE8640 node as the kernel shows it (SNC4: 8 NUMA nodes of
# 28 CPUs): each GPU's and HCA's numa_node and local_cpulist, CPUs, SMT,
# the kernel release, weighted interleave's weights, cgroup v2.
xe8640_node() {
    pci_dev 0000:4e:00.0 0x10de 0x030200 3 42-55,154-167
    pci_dev 0000:5f:00.0 0x10de 0x030200 1 14-27,126-139
    pci_dev 0000:cb:00.0 0x10de 0x030200 7 98-111,210-223
    pci_dev 0000:db:00.0 0x10de 0x030200 5 70-83,182-195
    pci_dev 0000:4d:00.0 0x15b3 0x020700 3 42-55,154-167
    pci_dev 0000:4d:00.1 0x15b3 0x020700 3 42-55,154-167
    pci_dev 0000:5e:00.0 0x15b3 0x020700 1 14-27,126-139
    pci_dev 0000:da:00.0 0x15b3 0x020700 5 70-83,182-195
    c="$root/sys/devices/system/cpu"
    mkdir -p "$c/smt" "$root/proc/sys/kernel" "$root/sys/fs/cgroup"
    echo 0-223 >"$c/online"
    echo >"$c/offline"
    echo on >"$c/smt/control"
    echo 6.12.48+deb13-amd64 >"$root/proc/sys/kernel/osrelease"
    w="$root/sys/kernel/mm/mempolicy/weighted_interleave"
    mkdir -p "$w"
    for n in 0 1 2 3 4 5 6 7; do echo 1 >"$w/node$n"; done
    echo "cpuset cpu io memory hugetlb pids rdma misc" >"$root/sys/fs/cgroup/cgroup.controllers"
}

case "$profile" in
nvidia-xe8640)
    xe8640_gpus
    ;;
node-xe8640)
    # The GPUs and driver files of nvidia-xe8640 plus the node's sysfs
    # (numaguard doctor's tests).
    xe8640_gpus
    xe8640_node
    ;;
amd-corona)
    # LLNL Corona: MI50 (1002:66a1); card order follows the rsmi indices
    # of tests/topologies/corona-rome-8xmi50-rsmi.xml, not bus order.
    drm_gpu 0 0000:63:00.0 0x1002 0x66a1 a0c5d1e2f3040506 60:03.1
    drm_gpu 1 0000:43:00.0 0x1002 0x66a1 a1c5d1e2f3040506 40:01.1
    drm_gpu 2 0000:03:00.0 0x1002 0x66a1 a2c5d1e2f3040506 00:01.1
    drm_gpu 3 0000:27:00.0 0x1002 0x66a1 a3c5d1e2f3040506 20:03.1
    drm_gpu 4 0000:e3:00.0 0x1002 0x66a1 a4c5d1e2f3040506 e0:03.1
    drm_gpu 5 0000:c3:00.0 0x1002 0x66a1 a5c5d1e2f3040506 c0:01.1
    drm_gpu 6 0000:83:00.0 0x1002 0x66a1 a6c5d1e2f3040506 80:01.1
    drm_gpu 7 0000:a3:00.0 0x1002 0x66a1 07c5d1e2f3040506 a0:03.1
    ;;
*)
    echo "mkfake.sh: unknown profile '$profile'" >&2
    exit 2
    ;;
esac
