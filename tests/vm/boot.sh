#!/bin/sh
# Boot the NUMA test VM once and run a script inside it.
#
#   sh tests/vm/boot.sh KERNEL_DIR OUTDIR SCRIPT [TIMEOUT_S]
#
# KERNEL_DIR holds vmlinux + initrd.cpio (tests/vm/prepare.sh). OUTDIR is
# shared writable with the guest at /ngvm; SCRIPT is copied there as run.sh
# and run as root in the guest (host / read-only underneath a tmpfs overlay,
# so the repository is at the same path). Console output: OUTDIR/console.log.
# Exit: 0 the guest ran the script and powered off; 3 it died or hung
# before the script started (worth one retry); 4 it timed out later.
#
# Machine (docs/vm-test.md): q35, TCG single-threaded (KVM is unavailable
# and multi-threaded TCG oopsed at boot), 2 sockets x 2 cores,
#   node 0: CPUs 0-1, 1 GiB   node 1: CPUs 2-3, 1 GiB   node 2: 512 MiB, no CPUs
# distances 0-1 20, 0-2 30, 1-2 40; a virtio-gpu behind a PCIe expander
# bridge on node 0 (bus 0x40 -> 0000:41:00.0) and on node 1 (0x80 -> 81:00.0).
set -u
kdir=$1 out=$2 script=$3 limit=${4:-150}
mkdir -p "$out"
rm -f "$out/started" "$out/console.log"
cp "$script" "$out/run.sh"

# The repository is visible in the guest through the host's root; chmod so
# the guest's root (mapped to the QEMU user) may write the share.
chmod 777 "$out"

timeout -k 5 "$limit" qemu-system-x86_64 \
    -machine q35 -accel tcg,thread=single -cpu max \
    -smp 4,sockets=2,cores=2,threads=1 -m 2560M \
    -object memory-backend-ram,id=m0,size=1G \
    -object memory-backend-ram,id=m1,size=1G \
    -object memory-backend-ram,id=m2,size=512M \
    -numa node,nodeid=0,cpus=0-1,memdev=m0 \
    -numa node,nodeid=1,cpus=2-3,memdev=m1 \
    -numa node,nodeid=2,memdev=m2 \
    -numa dist,src=0,dst=1,val=20 -numa dist,src=0,dst=2,val=30 \
    -numa dist,src=1,dst=2,val=40 \
    -device pxb-pcie,id=pxb0,bus_nr=0x40,numa_node=0,bus=pcie.0 \
    -device pcie-root-port,id=rp0,bus=pxb0,chassis=10,slot=0 \
    -device virtio-gpu-pci,bus=rp0 \
    -device pxb-pcie,id=pxb1,bus_nr=0x80,numa_node=1,bus=pcie.0 \
    -device pcie-root-port,id=rp1,bus=pxb1,chassis=11,slot=0 \
    -device virtio-gpu-pci,bus=rp1 \
    -fsdev local,id=fsroot,path=/,security_model=none,multidevs=remap,readonly=on \
    -device virtio-9p-pci,fsdev=fsroot,mount_tag=hostroot,bus=pcie.0 \
    -fsdev local,id=fsout,path="$out",security_model=none,multidevs=remap \
    -device virtio-9p-pci,fsdev=fsout,mount_tag=ngout,bus=pcie.0 \
    -kernel "$kdir/vmlinux" -initrd "$kdir/initrd.cpio" \
    -append "console=ttyS0 quiet panic=-1 mitigations=off transparent_hugepage=madvise rdinit=/init" \
    -display none -vga none -serial "file:$out/console.log" -monitor none \
    -nodefaults -no-reboot </dev/null >"$out/qemu.log" 2>&1
rc=$?
[ -f "$out/started" ] || exit 3
[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && exit 4
grep -q '^ngvm: run.sh exit' "$out/console.log" || exit 4
exit 0
