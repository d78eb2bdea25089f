#!/bin/sh
# Strings from files and the environment in the CLI's text (issue 19):
#  - OS device names of a topology file (NICs' verbs and interface names,
#    GPUs' device names) are checked where they are read, by the kernel's
#    rules: a newline (forged "env 0 LD_PRELOAD=..." lines in topo, plan and
#    exec --dry-run), a comma (UCX_NET_DEVICES / NCCL_IB_HCA split in two)
#    or an empty name is refused with one line naming the file, by topo,
#    plan and exec alike (exit 2, nothing on stdout);
#  - a malformed GPU UUID in CUDA_VISIBLE_DEVICES (terminal escapes and a
#    newline) is shown escaped on one line by exec --dry-run (text and
#    JSON) and exec; so is a preset OMP_NUM_THREADS that --omp-guard keeps.
# CLI only (no cluster); every real topology of tests/topologies still loads.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 2
. tests/lib/tap.sh
cli=$BUILD/numaguard
[ -x "$cli" ] || skip_all "$cli is not built (make all)"
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
J=tests/topologies/juwels-booster-4xa100-epyc7402-nps4.xml
XE=tests/topologies/xe8640-4xh100-spr8480-snc4.xml
G4=tests/topologies/g4dn-metal-8xt4.xml

# forge NAME OLD NEW [XML]: a copy of JUWELS Booster (or XML) with one OS
# device renamed (XML character references: &#10; is a newline).
forge() { sed "s|name=\"$2\"|name=\"$3\"|" "${4:-$J}" >"$tmp/$1.xml"; }
forge newline mlx5_0 'mlx5_0\&#10;env 0 LD_PRELOAD=/tmp/evil.so'
forge comma mlx5_0 'mlx5_0,mlx5_1'
forge empty mlx5_0 ''
forge ifname ib0 'ib0:evil'
forge long mlx5_0 'mlx5_0123456789012345678901234567'
forge gpudev cuda0 'cuda0\&#10;warning: fake' "$G4"

# refused NAME WHAT ESCAPED: topo, plan --net-affinity and exec --dry-run
# on it: fail (topo and plan exit 1, exec 2 as for any unloadable
# --topology), no stdout, one stderr line naming the file and the name.
refused() {
    f=$tmp/$1.xml
    for cmd in "topo" "plan --tasks 4 --net-affinity" "exec --dry-run --net-affinity"; do
        # shellcheck disable=SC2086
        if [ "${cmd%% *}" = exec ]; then
            $cli $cmd --topology "$f" -- true >"$tmp/out" 2>"$tmp/err"
        else
            $cli $cmd --topology "$f" >"$tmp/out" 2>"$tmp/err"
        fi
        rc=$?
        line=$(cat "$tmp/err")
        want=1
        [ "${cmd%% *}" = exec ] && want=2
        is "$rc:$(wc -c <"$tmp/out"):$(wc -l <"$tmp/err")" "$want:0:1" \
            "$1: numaguard ${cmd%% *} refuses the topology: exit $want, no output, one line"
        like "$line" "^numaguard: cannot load topology $f: invalid topology: $2 name '$3' refused \\(1-[0-9]+ letters, digits" \
            "$1: numaguard ${cmd%% *}: the line names the file and the name"
    done
}
refused newline "NIC 0000:04:00.0: verbs device" 'mlx5_0\\x0aenv 0 LD_PRELOAD=/tmp/evil.so'
refused comma "NIC 0000:04:00.0: verbs device" 'mlx5_0,mlx5_1'
refused empty "NIC 0000:04:00.0: verbs device" ''
refused ifname "NIC 0000:04:00.0: network interface" 'ib0:evil'
refused long "NIC 0000:04:00.0: verbs device" 'mlx5_0123456789012345678901234567'
refused gpudev "GPU 0000:18:00.0: OS device" 'cuda0\\x0awarning: fake'

# Every real topology (the corpus and the shared ones) still loads.
bad=""
for x in tests/topologies/*.xml; do
    $cli topo --topology "$x" >/dev/null 2>&1 || bad="$bad $(basename "$x")"
done
is "${bad:-none}" none "every topology of tests/topologies loads (real names pass)"

# --- the environment's strings in exec's text ------------------------------
uuid=$(printf 'GPU-\033[2J\033[H\nenv 0 LD_PRELOAD=/tmp/evil.so')
want="CUDA_VISIBLE_DEVICES: malformed UUID 'GPU-\\\\x1b\\[2J\\\\x1b\\[H\\\\x0aenv 0 LD_PRELOAD=/tmp/evil.so'"
CUDA_VISIBLE_DEVICES=$uuid $cli exec --dry-run --topology "$XE" -- true >"$tmp/out" 2>"$tmp/err"
is "$?:$(wc -l <"$tmp/out")" "1:1" "exec --dry-run with a malformed UUID: exit 1, one line"
like "$(cat "$tmp/out")" "^error +$want\$" "exec --dry-run: the UUID shown escaped"
CUDA_VISIBLE_DEVICES=$uuid $cli exec --dry-run --json --topology "$XE" -- true >"$tmp/out" 2>&1
is "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"])' "$tmp/out")" \
    "CUDA_VISIBLE_DEVICES: malformed UUID 'GPU-\\x1b[2J\\x1b[H\\x0aenv 0 LD_PRELOAD=/tmp/evil.so'" \
    "exec --dry-run --json: the same escaped message"
CUDA_VISIBLE_DEVICES=$uuid $cli exec --topology "$XE" -- true >"$tmp/out" 2>"$tmp/err"
is "$?:$(wc -l <"$tmp/err")" "0:1" "exec with a malformed UUID: runs unplaced, one stderr line"
like "$(cat "$tmp/err")" "^numaguard: exec: $want; running the command unplaced\$" \
    "exec: the UUID shown escaped"
for f in "$tmp/out" "$tmp/err"; do
    LC_ALL=C tr -d '\n\040-\176' <"$f" >"$tmp/ctl"
    is "$(wc -c <"$tmp/ctl")" 0 "exec $(basename "$f"): only printable ASCII and newlines"
done
omp=$(printf '1\033[2J\nx')
OMP_NUM_THREADS=$omp $cli exec --dry-run --omp-guard --topology "$XE" -- true >"$tmp/out" 2>&1
like "$(grep '^kept' "$tmp/out")" '^kept +OMP_NUM_THREADS=1\\x1b\[2J\\x0ax$' \
    "exec --dry-run: a kept preset shown escaped, on one line"
OMP_NUM_THREADS=$omp $cli exec --verbose --omp-guard --topology "$XE" -- true >"$tmp/out" 2>"$tmp/err"
like "$(grep 'numaguard: task 0' "$tmp/err")" '\(kept OMP_NUM_THREADS=1\\x1b\[2J\\x0ax\)' \
    "exec --verbose: the kept preset escaped in the verbose line"
is "$(LC_ALL=C tr -d '\n\040-\176' <"$tmp/err" | wc -c)" 0 "exec --verbose: only printable ASCII"
done_testing
