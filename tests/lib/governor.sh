# shellcheck shell=sh
# tests/lib/governor.sh - the build's governor (libnumaguard-omp.so) where
# numaguard will preload it. exec and the plugin add it to LD_PRELOAD only
# when the file and every directory above it are root's alone (owned by
# root; no group or other write; not sticky: lib/task/preload.c), so a
# checkout under /tmp, or one a user owns, has a governor they refuse, by
# design. The suites that need it preloaded through exec or srun then use a
# copy in a directory that rule trusts.
#
#   ng_trusted_path PATH   true when the rule would accept PATH
#   ng_stage_governor DIR  prints DIR when its libnumaguard-omp.so is
#                          trusted; else copies numaguard and the library
#                          of DIR into a new directory under the first of
#                          /run, /var/lib, /root that the rule trusts and
#                          prints it (the caller removes it); else prints
#                          nothing (not root, or no such directory)
#   ng_stage_governor DIR open
#                          the same, and the directory printed is also open
#                          to every user (each directory above it searchable
#                          by others): what a rootless container runtime or
#                          a user namespace without host root can bind
#                          (a clone under /root, mode 0700, is closed)

ng_trusted_path() {
    _p=$1
    while :; do
        # -perm /1022: sticky, group-writable or other-writable
        [ -n "$(find "$_p" -maxdepth 0 -user 0 ! -perm /1022 2>/dev/null)" ] || return 1
        [ "$_p" = / ] && return 0
        _p=$(dirname "$_p")
    done
}

# ng_open_path PATH: true when every directory above PATH (and PATH, if a
# directory) is searchable by others.
ng_open_path() {
    _p=$1
    [ -d "$_p" ] || _p=$(dirname "$_p")
    while :; do
        [ -n "$(find "$_p" -maxdepth 0 -perm -0001 2>/dev/null)" ] || return 1
        [ "$_p" = / ] && return 0
        _p=$(dirname "$_p")
    done
}

ng_stage_governor() {
    _b=$(cd "$1" && pwd) || return 1
    _open=${2:-}
    if ng_trusted_path "$_b/libnumaguard-omp.so" &&
        { [ -z "$_open" ] || ng_open_path "$_b"; }; then
        echo "$_b"
        return 0
    fi
    [ "$(id -u)" -eq 0 ] || return 0
    for _base in /run /var/lib /root; do
        ng_trusted_path "$_base" || continue
        [ -z "$_open" ] || ng_open_path "$_base" || continue
        _d=$(mktemp -d "$_base/numaguard-gov.XXXXXX") || continue
        chmod 755 "$_d"
        if cp "$_b/numaguard" "$_b/libnumaguard-omp.so" "$_d/" &&
            chmod 755 "$_d/numaguard" && chmod 644 "$_d/libnumaguard-omp.so"; then
            echo "$_d"
            return 0
        fi
        rm -rf "$_d"
    done
    return 0
}
