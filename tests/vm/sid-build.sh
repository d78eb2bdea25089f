#!/bin/sh
# Build what the VM's jobwide phase runs (the CLI, the plugin, the
# ng_threads helper) against Debian sid's Slurm 26.05 and hwloc, for
# NG_VM_SLURM=sid (docs/vm-test.md): with sid's compiler, headers and
# libraries, in the sid chroot that `make check-releases` keeps
# (tests/releases/check-releases.sh).
#
#   sh tests/vm/sid-build.sh BUILD_DIR     (relative to the repository)
#
# The cached chroot is not changed: the build runs in a private mount
# namespace on an overlay of it (upper layer under /var/tmp, removed
# after), with this repository bind-mounted at its own path, so the
# output lands in BUILD_DIR of this checkout and the guest, which sees
# the host's / and the same chroot, runs it at the same path.
# Settings: NG_VM_SID_ROOT (default $NG_CHROOT_CACHE/sid,
# /var/cache/numaguard-chroots/sid). Exit 3: no usable chroot there.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: sid-build.sh BUILD_DIR}
SID=${NG_VM_SID_ROOT:-${NG_CHROOT_CACHE:-/var/cache/numaguard-chroots}/sid}
for f in usr/sbin/slurmd usr/include/slurm/spank.h usr/include/hwloc.h usr/bin/make; do
    [ -e "$SID/$f" ] || {
        echo "sid-build: $SID has no /$f (make the chroot with: NG_RELEASES=sid make check-releases)" >&2
        exit 3
    }
done
w=$(mktemp -d /var/tmp/ngvm-sid.XXXXXX) || exit 2
mkdir -p "$w/upper" "$w/work" "$w/root"
# Everything mounted here dies with the namespace (private propagation:
# nothing reaches the host's mount table).
unshare -m --propagation private sh -c '
    SID=$1 w=$2 top=$3 out=$4
    mount -t overlay overlay -o "lowerdir=$SID,upperdir=$w/upper,workdir=$w/work" "$w/root" &&
        mkdir -p "$w/root$top" && mount --bind "$top" "$w/root$top" &&
        mount --bind /dev "$w/root/dev" &&
        mount -t proc proc "$w/root/proc" &&
        mount -t tmpfs tmpfs "$w/root/tmp" || exit 2
    chroot "$w/root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        make --no-print-directory -C "$top" BUILD="$out" \
        "$out/numaguard" "$out/numaguard.so" "$out/tests/ng_threads"
' sh "$SID" "$w" "$top" "$out"
rc=$?
rm -rf --one-file-system "$w"
exit $rc
