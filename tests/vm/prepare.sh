#!/bin/sh
# Prepare (once) and cache what the NUMA VM test boots: a Debian kernel as an
# uncompressed ELF vmlinux plus a tiny busybox initramfs holding the modules
# the guest needs (9p root, overlay, virtio-gpu).
#
#   sh tests/vm/prepare.sh [612] [61]     (default: both)
#
# Output, per flavour F (612 = Debian's 6.12 kernel, 61 = the 6.1 kernel):
#   $NG_VM_CACHE/k-F/vmlinux  $NG_VM_CACHE/k-F/initrd.cpio  $NG_VM_CACHE/k-F/ready
# NG_VM_CACHE defaults to build/vm-cache (git-ignored, removed by make clean).
# Needs: apt-get access to Debian 12 mirrors on first use (root installs the
# host packages below when missing). Prints the flavour dirs, nothing else on
# stdout; progress goes to stderr. Exit 0 ready, 1 failure, 2 cannot (no root,
# no mirror) so callers can skip.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${NG_VM_CACHE:-$top/build/vm-cache}
flavours=${*:-612 61}

say() { echo "vm-prepare: $*" >&2; }

# Host tools: qemu (TCG), busybox-static (initramfs + its cpio), zstd and xz
# to unpack the kernel images (6.12 is zstd, 6.1 is xz); iproute2 for the
# guest's dummy interface (the guest runs the host's binaries).
need_pkgs() {
    missing=""
    for p in qemu-system-x86 busybox-static zstd xz-utils iproute2; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        say "missing packages:$missing (need root)"; exit 2
    fi
    say "installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends $missing >&2 ||
        { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends $missing >&2; } ||
        { say "cannot install$missing"; exit 2; }
}

# apt's view of the kernels. The 6.12 meta package (linux-image-6.12-amd64)
# is in bookworm-security since Debian 12.10; a machine whose sources lack
# that suite (a debootstrap root, say) gets a private apt view of Debian 12's
# standard suites under the cache, leaving the system's sources alone.
APT_OPTS=""
apt_knows() { apt-cache $APT_OPTS depends "$1" 2>/dev/null | grep -q 'Depends: linux-image-'; }
apt_view() {
    apt_knows linux-image-6.12-amd64 && return 0
    apt-get update -q >&2 || true
    apt_knows linux-image-6.12-amd64 && return 0
    d=$cache/apt
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
    cat >"$d/sources.list" <<SRC
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SRC
    APT_OPTS="-o Dir::Etc::sourcelist=$d/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$d/lists -o Dir::Cache=$d/cache"
    say "the system's apt sources lack bookworm-security: using $d/sources.list"
    apt-get $APT_OPTS update -q >&2 || true
}

# The concrete kernel package behind a Debian meta package.
kernel_pkg() {
    case "$1" in
        612) meta=linux-image-6.12-amd64 ;;
        61) meta=linux-image-amd64 ;;
        *) say "unknown flavour $1"; exit 1 ;;
    esac
    pkg=$(apt-cache $APT_OPTS depends "$meta" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
    [ -n "$pkg" ] || { say "no package behind $meta"; exit 2; }
    echo "$pkg"
}

# Uncompressed ELF vmlinux out of a bzImage: find the compressed payload's
# magic and decompress from there (trailing bytes make the tool complain,
# the output is still whole). The ELF keeps the PVH note, so QEMU boots it
# directly with -kernel and TCG skips the slow in-guest decompression.
extract_vmlinux() {
    img=$1 out=$2
    for spec in 'zstd -dcq:\x28\xb5\x2f\xfd' 'xz -dcq:\xfd\x37\x7a\x58\x5a\x00' 'gzip -dcq:\x1f\x8b\x08'; do
        tool=${spec%%:*} magic=${spec#*:}
        for off in $(LC_ALL=C grep -obUaP "$magic" "$img" | cut -d: -f1 | head -5); do
            tail -c +"$((off + 1))" "$img" | $tool >"$out" 2>/dev/null || true
            if [ "$(head -c 4 "$out" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
                return 0
            fi
        done
    done
    say "no ELF payload in $img"; return 1
}

# Modules needed, in load order, dependencies first (from each module's
# modinfo "depends=" field: the .deb has no modules.dep and kmod may be
# absent). Builtins have no file and are skipped.
# dummy: slurmctld's getaddrinfo(AI_ADDRCONFIG) fails unless some
# non-loopback interface has an address; a dummy one needs no QEMU NIC.
MODS="netfs 9pnet 9pnet_virtio 9p overlay virtio_pci virtio_gpu dummy"
find_mod() { find "$1" -name "$(echo "$2" | sed 's/[-_]/[-_]/g').ko*" | head -1; }
mod_deps() {
    case "$1" in
        *.xz) xz -dc "$1" ;; *.zst) zstd -dcq "$1" ;; *) cat "$1" ;;
    esac | tr '\0' '\n' | sed -n 's/^depends=//p' | head -1 | tr ',' ' '
}
add_mod() { # tree name outdir
    local f d    # recursive: keep the file name per call
    case " $seen " in *" $2 "*) return 0 ;; esac
    seen="$seen $2"
    f=$(find_mod "$1" "$2")
    [ -n "$f" ] || return 0            # builtin
    for d in $(mod_deps "$f"); do add_mod "$1" "$d" "$3"; done
    case "$f" in
        *.xz) xz -dc "$f" >"$3/lib/modules/$2.ko" ;;
        *.zst) zstd -dcq "$f" >"$3/lib/modules/$2.ko" ;;
        *) cp "$f" "$3/lib/modules/$2.ko" ;;
    esac
    echo "$2" >>"$3/modlist"
}

build_initrd() { # moddir out
    root=$(mktemp -d)
    mkdir -p "$root/bin" "$root/lib/modules" "$root/proc" "$root/sys" "$root/dev" \
        "$root/mnt/lower" "$root/mnt/rw" "$root/newroot"
    cp /bin/busybox "$root/bin/busybox"
    cp "$top/tests/vm/init" "$root/init"
    chmod 755 "$root/init" "$root/bin/busybox"
    : >"$root/modlist"
    seen=""
    for m in $MODS; do add_mod "$1" "$m" "$root"; done
    (cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null) >"$2.tmp"
    mv "$2.tmp" "$2"
    say "initramfs $(wc -c <"$2") bytes, modules: $(tr '\n' ' ' <"$root/modlist")"
    rm -rf "$root"
}

# Bump when the extracted file list changes, so old caches re-extract.
TREE_V=2

prepare_one() {
    f=$1 dir=$cache/k-$1
    if [ -f "$dir/ready" ] && [ "$dir/initrd.cpio" -nt "$top/tests/vm/init" ] &&
        [ "$dir/initrd.cpio" -nt "$top/tests/vm/prepare.sh" ]; then
        echo "$dir"; return 0
    fi
    mkdir -p "$cache/deb" "$dir"
    rm -f "$dir/ready"
    if [ ! -f "$dir/vmlinux" ] || [ ! -f "$dir/tree.v$TREE_V" ]; then
        [ -n "${APT_VIEWED:-}" ] || { apt_view; APT_VIEWED=1; }
        pkg=$(kernel_pkg "$f")
        deb=$(ls "$cache/deb/${pkg}_"*.deb 2>/dev/null | head -1 || true)
        if [ -z "$deb" ]; then
            say "downloading $pkg"
            # apt's _apt user cannot write into root-only dirs: fetch in /tmp.
            tmpd=$(mktemp -d); chmod 777 "$tmpd"
            (cd "$tmpd" && apt-get $APT_OPTS download "$pkg" >&2) ||
                { apt-get $APT_OPTS update -q >&2 && (cd "$tmpd" && apt-get $APT_OPTS download "$pkg" >&2); } ||
                { say "cannot download $pkg"; rm -rf "$tmpd"; exit 2; }
            mv "$tmpd"/*.deb "$cache/deb/"; rm -rf "$tmpd"
            deb=$(ls "$cache/deb/${pkg}_"*.deb | head -1)
        fi
        rm -rf "$dir/tree"; mkdir -p "$dir/tree"
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/tree" --wildcards \
            './boot/vmlinuz-*' './lib/modules/*/kernel/fs/*' './lib/modules/*/kernel/net/9p/*' \
            './lib/modules/*/kernel/drivers/virtio/*' './lib/modules/*/kernel/drivers/gpu/drm/*' \
            './lib/modules/*/kernel/drivers/dma-buf/*' './lib/modules/*/kernel/drivers/i2c/*' \
            './lib/modules/*/kernel/drivers/video/*' './lib/modules/*/kernel/drivers/net/dummy.ko*' './lib/modules/*/kernel/lib/*' 2>/dev/null || true
        extract_vmlinux "$dir"/tree/boot/vmlinuz-* "$dir/vmlinux"
        basename "$deb" >"$dir/package"
        touch "$dir/tree.v$TREE_V"
        rm -f "$deb"    # 70-110 MB; re-downloaded only if the tree list changes
    fi
    build_initrd "$dir/tree/lib/modules" "$dir/initrd.cpio"
    touch "$dir/ready"
    echo "$dir"
}

need_pkgs
for f in $flavours; do prepare_one "$f"; done
