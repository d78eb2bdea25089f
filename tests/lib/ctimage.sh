# Sourced by the container suites (tests/slurm/t-slurm-containers.sh,
# tests/e2e/t-pyxis-userns.sh): a minimal Debian image for container
# runtimes, made with debootstrap --variant=minbase from the Debian mirror
# (nothing from a container registry) and cached, like the release
# chroots of tests/releases/, under $NG_CHROOT_CACHE
# (/var/cache/numaguard-chroots): ctimage-<release>, the host's own
# release so that probes built here run inside. It holds what the probes
# need (libgomp1, libnuma1) and nothing of numaguard: the governor comes in
# by a bind mount or not at all. Made once (about 3 minutes and 210 MB);
# NG_CHROOT_REFRESH=1 makes it again.
#
# ng_ctimage: prints the image's directory, or nothing with the reason on
# stderr (not root, no debootstrap, the mirror unreachable).
ng_ctimage() {
    local cache=${NG_CHROOT_CACHE:-/var/cache/numaguard-chroots}
    local mirror=${NG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
    local rel d
    rel=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    [ -n "$rel" ] || { echo "no VERSION_CODENAME in /etc/os-release: which Debian release to bootstrap?" >&2; return 1; }
    d=$cache/ctimage-$rel
    if [ "${NG_CHROOT_REFRESH:-0}" = 1 ] && [ -d "$d" ]; then
        rm -rf --one-file-system "$d"
    fi
    if [ -f "$d/.ng-bootstrap-done" ]; then
        echo "$d"
        return 0
    fi
    [ "$(id -u)" = 0 ] || { echo "building the image needs root (debootstrap)" >&2; return 1; }
    command -v debootstrap >/dev/null 2>&1 || { echo "no debootstrap (apt-get install debootstrap)" >&2; return 1; }
    mkdir -p "$cache" && rm -rf --one-file-system "$d.part" || return 1
    echo "# building the container image $d (debootstrap minbase $rel, once)" >&2
    if ! debootstrap --variant=minbase --include=libgomp1,libnuma1 "$rel" "$d.part" "$mirror" \
        >"$cache/ctimage-$rel.debootstrap.log" 2>&1; then
        echo "debootstrap $rel from $mirror failed (see $cache/ctimage-$rel.debootstrap.log)" >&2
        return 1
    fi
    rm -rf --one-file-system "$d" && mv "$d.part" "$d" && touch "$d/.ng-bootstrap-done" || return 1
    echo "$d"
}
