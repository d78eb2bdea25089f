# shellcheck shell=sh
# tests/lib/multiarch.sh - what differs between the machine architectures
# the suites run on (amd64, arm64 in make check-arm64), said once.
#
#   NG_MA                  the multiarch triplet libraries live under
#                          (/usr/lib/$NG_MA/...): x86_64-linux-gnu,
#                          aarch64-linux-gnu, ...
#   ng_kmpc_argcs BINARY   the argument counts BINARY's calls to
#                          __kmpc_fork_call pass (libomp's variadic entry
#                          point: argc in its second argument register,
#                          %esi on x86-64, w1 on aarch64), as hex
#                          constants, sorted, one blank after each
#                          ("0x14 0x8 "); empty where objdump or the
#                          architecture is not known

ng_multiarch() {
    _ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
    [ -n "$_ma" ] || _ma=$(gcc -print-multiarch 2>/dev/null)
    [ -n "$_ma" ] || _ma=$(cc -dumpmachine 2>/dev/null | sed 's/-unknown-/-/; s/-pc-/-/')
    echo "$_ma"
}
NG_MA=${NG_MA:-$(ng_multiarch)}

ng_kmpc_argcs() {
    case $(uname -m) in
        x86_64) _re='mov[ \t]+[$]0x[0-9a-f]+,%esi' ;;
        aarch64) _re='mov[ \t]+w1, #0x[0-9a-f]+' ;;
        *) return 0 ;;
    esac
    objdump -d --no-show-raw-insn "$1" 2>/dev/null |
        awk -v re="$_re" '$0 ~ re {v = $0; sub(/.*0x/, "0x", v); sub(/[^0-9a-fx].*/, "", v)}
            /(call|bl).*<__kmpc_fork_call/ {print v; v = ""}' |
        sort -u | tr '\n' ' '
}
