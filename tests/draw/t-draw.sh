#!/bin/sh
# numaguard's pictures read back: `plan --svg` on real topologies (XE8640
# 4 GPU tasks, the GH200 model with 4 and 8 tasks, g4dn 8 tasks, a CPU-only
# partial allocation, idle cores, KNL's MCDRAM, this machine) checked
# against the same run's `plan --json`, `topo --json` and the hwloc XML read
# by Python's own parser (tests/draw/drawcheck.py): well-formed
# (xmllint), self-contained, every PU once, each PU's fill its task's
# colour, each GPU and NIC in its tasks' colours, each memory node marked
# for exactly the tasks whose policy names it; rendered to PNG by
# rsvg-convert and by headless Chromium, the pixel at the centre of each
# task's first core has the task's colour. `--map` on XE8640, GH200, g4dn
# and this machine: rows and cells match the plan; colour only on a
# terminal (a pty) and never with NO_COLOR or into a pipe. `exec
# --dry-run --svg` outlines this rank; `check --svg/--map` on live
# processes (two piled on CPU 0, three threads on CPU 1); hostile names
# are escaped; `topo --svg` over the whole corpus.
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
DC="python3 tests/draw/drawcheck.py"
T=$(mktemp -d /tmp/ng-draw.XXXXXX)
PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT INT TERM
GH=$TOPO/gh200-4superchip-synthetic.xml
G4=$TOPO/g4dn-metal-8xt4.xml
KNL=$TOPO/knl-7250-snc4-flat-hwloc1.xml

if [ ! -x "$NG" ] || ! command -v xmllint >/dev/null || ! command -v rsvg-convert >/dev/null; then
    skip_all "needs $NG (make), xmllint (libxml2-utils) and rsvg-convert (librsvg2-bin): sh tests/install-deps.sh"
fi
# make test-fast (NG_FAST=1) leaves Chromium's renders and valgrind to make check.
CHROMIUM=""
[ -n "${NG_FAST:-}" ] || CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
lstopo-no-graphics --of xml "$T/live.xml" 2>/dev/null ||
    hwloc-ls --of xml "$T/live.xml" 2>/dev/null

# The topology file of a case ("live": this machine) and its option.
topo_xml() { [ "$1" = live ] && echo "$T/live.xml" || echo "$1"; }
topo_opt() { [ "$1" = live ] || printf '%s\n' "--topology=$1"; }

# Headless Chromium's screenshot of SVG $1 into PNG $2 at the SVG's size.
chromium_png() {
    size=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print("%d,%d" % (p["width"], p["height"]))' "$3")
    rm -rf "$T/profile"
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$T/profile" --force-device-scale-factor=1 --hide-scrollbars \
        --window-size="$size" --screenshot="$2" "file://$1" >"$T/chromium.log" 2>&1
}

# plan_case NAME TOPO CPUS(or -) PNG PLAN-OPTIONS...; PNG: 0 none,
# 1 rsvg-convert, 2 rsvg-convert and Chromium.
plan_case() {
    name=$1 topo=$2 cpus=$3 png=$4
    shift 4
    opt=$(topo_opt "$topo")
    # shellcheck disable=SC2086
    "$NG" plan $opt "$@" --json >"$T/$name.json" &&
        "$NG" plan $opt "$@" --svg "$T/$name.svg" >"$T/$name.txt" &&
        "$NG" topo $opt --json >"$T/$name.topo.json"
    ok $? "$name: plan --json, plan --svg and topo --json"
    xmllint --noout "$T/$name.svg" 2>"$T/xmllint.err"
    ok $? "$name: the SVG is well-formed XML (xmllint)"
    # shellcheck disable=SC2086
    "$NG" plan $opt "$@" >"$T/$name.plain"
    is "$(cat "$T/$name.txt")" "$(cat "$T/$name.plain")" "$name: --svg FILE leaves the table on stdout as it was"
    $DC svg "$T/$name.svg" "$T/$name.json" "$T/$name.topo.json" "$(topo_xml "$topo")" "$cpus" \
        "$T/$name.probes" >"$T/$name.svgcheck"
    emit "$T/$name.svgcheck"
    [ "$png" -ge 1 ] || return 0
    rsvg-convert "$T/$name.svg" -o "$T/$name.rsvg.png"
    ok $? "$name: rsvg-convert renders it"
    $DC png "$T/$name.rsvg.png" "$T/$name.probes" "$name, rsvg-convert" >"$T/$name.pngcheck"
    emit "$T/$name.pngcheck"
    [ "$png" -ge 2 ] || return 0
    if [ -z "$CHROMIUM" ]; then
        skip 3 "no chromium (sh tests/install-deps.sh installs it), or make test-fast"
        return 0
    fi
    chromium_png "$T/$name.svg" "$T/$name.chromium.png" "$T/$name.probes"
    ok $? "$name: headless Chromium renders it"
    [ -s "$T/$name.chromium.png" ] || sed 's/^/#   /' "$T/chromium.log" | tail -5
    $DC png "$T/$name.chromium.png" "$T/$name.probes" "$name, Chromium" >"$T/$name.pngcheck"
    emit "$T/$name.pngcheck"
}

plan_case xe4 "$XE" - 2 --tasks 4 --gpus-per-task 1 --omp-guard --net-affinity
plan_case gh4 "$GH" - 2 --tasks 4 --gpus-per-task 1 --numa-policy local,cpuless
plan_case gh8 "$GH" - 1 --tasks 8 --task-gpus "0;0;1;1;2;2;3;3" --numa-policy weighted:all,cpuless
plan_case g4dn8 "$G4" - 2 --tasks 8 --gpus-per-task 1 --numa-policy prefer --net-affinity
plan_case xecpu "$XE" 0-27,112-139 2 --tasks 3 --cpus 0-27,112-139 --numa-policy interleave
plan_case xeidle "$XE" - 1 --tasks 2 --cpus-per-task 8
plan_case knl "$KNL" - 1 --tasks 4 --numa-policy prefer,cpuless
plan_case live2 live - 2 --tasks 2
plan_case live4 live - 0 --tasks 4
# 12 tasks: colours 0-7 repeat for tasks 8-11 with a pattern (the legend check).
plan_case xe12 "$XE" - 0 --tasks 12
like "$(grep -o 'class="task-pattern" data-task="[0-9]*" data-pattern="[0-9]"' "$T/xe12.svg" |
       sort -u | sed 's/.*data-task="\([0-9]*\)" data-pattern="\([0-9]\)"/\1:\2/' | sort -n | tr '\n' ' ')" \
    '^8:1 9:1 10:1 11:1 $' "12 tasks: tasks 8-11 (and only they) carry a pattern over their colour"
# An AWS p5.48xlarge model (8 H100, 32 EFA, 1 ENA): only the NICs in use
# are drawn, one box counts the others; rendered by both renderers.
P5=$TOPO/p5-48xlarge-8xh100-32efa-synthetic.xml
plan_case p5one "$P5" - 2 --tasks 8 --gpus-per-task 1 --net-affinity=1
plan_case p5auto "$P5" - 1 --tasks 8 --gpus-per-task 1 --net-affinity
for c in p5one p5auto; do
    used=$(python3 -c 'import json,sys; print(len({n for t in json.load(open(sys.argv[1]))["tasks"] for n in t["nics"]}))' "$T/$c.json")
    boxes=$(grep -c '<rect class="nic" ' "$T/$c.svg")
    sums=$(grep -c '<rect class="nic-summary" ' "$T/$c.svg")
    is "$boxes+$sums" "$used+1" "$c: the 33-NIC node's picture has a box per NIC in use ($used) and one summary"
done
like "$(grep -o 'data-hidden="[0-9]*" data-ethernet="[0-9]*"' "$T/p5one.svg")" 'data-hidden="25" data-ethernet="1"' \
    "p5, --net-affinity=1: the summary counts 25 not drawn, 1 of them Ethernet"
"$NG" plan --topology "$P5" --tasks 8 --gpus-per-task 1 --net-affinity=1 --map >"$T/p5one.map"
is "$(grep -c '^NIC ' "$T/p5one.map"):$(grep '^NICs not listed' "$T/p5one.map")" \
    "8:NICs not listed: 25 (1 Ethernet, 24 RDMA without a task); --all-nics lists them" \
    "p5 --map: the 8 NICs in use, one line for the others"
"$NG" plan --topology "$P5" --tasks 8 --gpus-per-task 1 --net-affinity=1 --all-nics --json >"$T/p5all.json"
"$NG" plan --topology "$P5" --tasks 8 --gpus-per-task 1 --net-affinity=1 --all-nics --svg "$T/p5all.svg" >/dev/null
ALL_NICS=1 $DC svg "$T/p5all.svg" "$T/p5all.json" "$T/p5one.topo.json" "$P5" >"$T/p5all.svgcheck"
emit "$T/p5all.svgcheck"
is "$(grep -c '<rect class="nic" ' "$T/p5all.svg"):$(grep -c '>no task<' "$T/p5all.svg"):$(grep -c 'class="nic-summary"' "$T/p5all.svg")" \
    "33:25:0" "--all-nics: all 33 NICs drawn, the 25 unused say 'no task', no summary"
"$NG" plan --topology "$P5" --tasks 8 --gpus-per-task 1 --all-nics --svg "$T/p5none.svg" >/dev/null
is "$(grep -c '<rect class="nic" ' "$T/p5none.svg"):$(grep -c '>no task<' "$T/p5none.svg")" "33:0" \
    "without --net-affinity (NICs not asked for): no NIC says 'no task'"
"$NG" topo --topology "$P5" --svg "$T/p5topo.svg" >/dev/null
is "$(grep -c '<rect class="nic small" ' "$T/p5topo.svg"):$(grep -o 'data-hidden="[0-9]*" data-ethernet="[0-9]*"' "$T/p5topo.svg")" \
    '32:data-hidden="1" data-ethernet="1"' "topo: the 32 EFA adapters drawn small, the Ethernet one counted"
# --scale: pixels per unit, the drawing (viewBox) unchanged; small
# machines are scaled up to 720 pixels by default.
"$NG" plan --topology "$XE" --tasks 2 --svg "$T/s1.svg" >/dev/null
"$NG" plan --topology "$XE" --tasks 2 --scale 2 --svg "$T/s2.svg" >/dev/null
size() { sed -n 's/.*<svg [^>]* width="\([0-9]*\)" height="\([0-9]*\)" viewBox="\([0-9 ]*\)".*/\1 \2 \3/p' "$1"; }
set -- $(size "$T/s1.svg")
is "$(size "$T/s2.svg")" "$(($1 * 2)) $(($2 * 2)) $3 $4 $5 $6" "--scale 2: twice the pixels, the same drawing"
set -- $(size "$T/live2.svg")
ok $(( !($1 >= 719 && $1 <= 721 && $5 < 720) )) "a small machine's picture ($5 units wide) is scaled to 720 pixels ($1)"
"$NG" plan --tasks 1 --scale 9 --svg "$T/x.svg" 2>"$T/err"
is "$?:$(cat "$T/err")" "2:numaguard: plan: --scale: invalid value '9': expected a number 0.25-8 (pixels per unit of the SVG; 2 doubles its size)" \
    "--scale 9: refused, one line"

# --- shared cores: hatched, naming their tasks ---
grep -q 'fill="url(#hatch)"' "$T/live4.svg"
ok $? "4 tasks on 2 cores: shared cores hatched"
"$NG" plan --tasks 4 --json >"$T/live4.json"
is "$(python3 - "$T/live4.svg" "$T/live4.json" <<'EOF'
import json, re, sys
svg, plan = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
def cl(t):
    out = set()
    for p in filter(None, t.split(",")):
        a, _, b = p.partition("-"); out.update(range(int(a), int(b or a) + 1))
    return out
bad, n = [], 0
for m in re.finditer(r'<rect class="core" data-core="\d+" data-task="\d+" data-tasks="([^"]+)"'
                     r'[^>]*>\n<rect[^>]*url\(#hatch\)"/>\n<text[^>]*>([^<]*)</text>', svg):
    n += 1
    end = svg.find('<rect class="core"', m.end())
    pus = {int(p) for p in re.findall(r'data-pu="(\d+)"', svg[m.end():end if end > 0 else None])}
    want = {t["local_id"] for t in plan["tasks"] if pus & cl(t["cpus"])}
    if cl(m.group(1)) != want or m.group(2) != m.group(1):
        bad.append((m.group(1), m.group(2), sorted(want)))
print("shared %d, wrong %s" % (n, bad))
EOF
)" "shared 2, wrong []" "4 tasks on 2 cores: each shared core names its tasks (the plan's tasks on its CPUs)"
# The map's cells show "*" (one character): its "shared cores:" line names
# each shared core's tasks, the plan's tasks on that core's CPUs.
"$NG" plan --topology tests/topologies/xe8640-4xh100-spr8480-snc4.xml --tasks 6 --cpus 0-3 --map \
    >"$T/shared.map" 2>/dev/null
is "$(grep '^shared cores:' "$T/shared.map")" "shared cores: CPU 0: tasks 0,4; CPU 1: tasks 1,5" \
    "--map: 6 tasks on 4 cores: the shared cores and their tasks in one line"
"$NG" plan --topology tests/topologies/xe8640-4xh100-spr8480-snc4.xml --tasks 4 --cpus 0-3 --map \
    >"$T/unshared.map" 2>/dev/null
is "$(grep -c '^shared cores:' "$T/unshared.map")" "0" "--map: no shared core, no such line"
# --- idle allocated cores grey, excluded dimmed (keys in the legend) ---
like "$(grep -c 'data-key="idle"' "$T/xeidle.svg")" '^1$' "idle allocated cores: grey, with a key"
like "$(grep -c 'data-key="excluded"' "$T/xecpu.svg")" '^1$' "CPUs outside --cpus: dimmed, with a key"
like "$(grep -o 'data-mode="[a-z]*"' "$T/gh8.svg" | sort -u | tr '\n' ' ')" 'weighted' \
    "weighted interleave drawn as weighted (dots)"
like "$(grep -o 'class="gpuset" data-gpu="[0-9]*"' "$T/gh4.svg" | wc -l)" '^4$' \
    "GH200: each GPU drawn with its 8 memory nodes beside it"
like "$(grep -c 'class="link"' "$T/gh4.svg")" '^[1-9][0-9]*$' "GH200: lines from each GPU to its memory nodes"

# --- the map: rows and cells match the plan; colour on a terminal only ---
map_case() {
    name=$1 topo=$2
    shift 2
    opt=$(topo_opt "$topo")
    # shellcheck disable=SC2086
    "$NG" plan $opt "$@" --map >"$T/$name.map"
    ok $? "$name: plan --map into a pipe"
    $DC map "$T/$name.map" "$T/$name.json" "$T/$name.topo.json" "$(topo_xml "$topo")" \
        >"$T/$name.mapcheck"
    emit "$T/$name.mapcheck"
    # A colour terminal whatever this suite runs under (CI, make under
    # TERM=dumb, no TERM at all): the map colours only where TERM allows.
    TERM=xterm-256color $DC pty "$T/$name.pty" "$NG" plan $opt "$@" --map
    ok $? "$name: plan --map on a terminal"
    $DC colours "$T/$name.pty" "$T/$name.map" "$T/$name.json" >"$T/$name.colcheck"
    emit "$T/$name.colcheck"
    NO_COLOR=1 TERM=xterm-256color $DC pty "$T/$name.nocolor" "$NG" plan $opt "$@" --map
    if grep -q "$(printf '\033')" "$T/$name.nocolor"; then r=1; else r=0; fi
    ok $r "$name: NO_COLOR=1 on a terminal: no escape sequence"
    TERM=dumb $DC pty "$T/$name.dumb" "$NG" plan $opt "$@" --map
    if grep -q "$(printf '\033')" "$T/$name.dumb"; then r=1; else r=0; fi
    ok $r "$name: TERM=dumb: no escape sequence"
}
map_case xe4 "$XE" --tasks 4 --gpus-per-task 1 --omp-guard --net-affinity
map_case gh4 "$GH" --tasks 4 --gpus-per-task 1 --numa-policy local,cpuless
map_case g4dn8 "$G4" --tasks 8 --gpus-per-task 1 --numa-policy prefer --net-affinity
map_case live2 live --tasks 2
"$NG" plan --topology "$XE" --tasks 3 --cpus 0-27,112-139 --numa-policy interleave --map >"$T/xecpu.map"
$DC map "$T/xecpu.map" "$T/xecpu.json" "$T/xecpu.topo.json" "$XE" 0-27,112-139 >"$T/xecpu.mapcheck"
emit "$T/xecpu.mapcheck"

# --- stdout taken by one of --json, --map, --svg - ---
"$NG" plan --topology "$XE" --tasks 2 --json --map >/dev/null 2>"$T/err"
is "$?:$(cat "$T/err")" "2:numaguard: plan: --json, --map and --svg - each take stdout: give one of them (or --svg FILE)" \
    "plan --json --map: refused (exit 2), one line"
"$NG" plan --topology "$XE" --tasks 2 --svg - >"$T/stdout.svg"
xmllint --noout "$T/stdout.svg" 2>/dev/null
ok $? "plan --svg -: the SVG alone on stdout"
"$NG" plan --topology "$XE" --tasks 2 --svg /nonexistent/x.svg >/dev/null 2>"$T/err"
like "$?:$(cat "$T/err")" "^1:numaguard: plan: --svg: cannot write '/nonexistent/x.svg': " \
    "an unwritable --svg file: exit 1, one line"
"$NG" exec --topology "$XE" --svg "$T/x.svg" -- true 2>"$T/err"
is "$?:$(cat "$T/err")" "2:numaguard: exec: --svg and --map go with --dry-run" \
    "exec --svg without --dry-run: refused"

# --- exec --dry-run: every rank's slice, this rank outlined ---
env LOCAL_RANK=1 LOCAL_WORLD_SIZE=4 "$NG" exec --dry-run --json --gpus all --topology "$XE" -- true >"$T/ex.json"
env LOCAL_RANK=1 LOCAL_WORLD_SIZE=4 "$NG" exec --dry-run --svg "$T/ex.svg" --gpus all --topology "$XE" -- true >/dev/null
ok $? "exec --dry-run --svg (torchrun rank 1 of 4)"
"$NG" plan --topology "$XE" --tasks 4 --task-gpus "0;1;2;3" --json >"$T/ex.plan.json"
$DC svg "$T/ex.svg" "$T/ex.plan.json" "$T/xe4.topo.json" "$XE" >"$T/ex.svgcheck"
emit "$T/ex.svgcheck"
is "$(python3 - "$T/ex.svg" "$T/ex.json" <<'EOF'
import json, re, sys
svg, me = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
def cl(t):
    out = set()
    for p in t.split(","):
        a, _, b = p.partition("-"); out.update(range(int(a), int(b or a) + 1))
    return out
outlined = re.findall(r'<rect class="core"[^>]*data-task="(\d+)"[^>]*stroke="#000000" stroke-width="2.5"', svg)
mine = {int(p) for p in re.findall(r'<rect class="pu" data-pu="(\d+)" data-task="1"', svg)}
print(set(outlined) == {"1"}, len(outlined) == len(cl(me["cpus"])) // 2, mine == cl(me["cpus"]))
EOF
)" "True True True" "exec --dry-run --svg: this rank's cores (its --json CPUs) outlined, no other"
env LOCAL_RANK=1 LOCAL_WORLD_SIZE=4 "$NG" exec --dry-run --map --gpus all --topology "$XE" -- true >"$T/ex.map"
like "$(cat "$T/ex.map")" 'this rank \(task 1\)' "exec --dry-run --map: names this rank"

# --- escaping: a topology file name and a NIC name an attacker chose ---
# A NIC name with markup never reaches a picture: the topology is refused
# where the name is read (lib/topo, the kernel's rules for device names).
# The file's own name is shown, escaped for XML and for the terminal.
evilnic="$T/evilnic.xml"
sed 's/name="mlx5_0"/name="mlx5_\&lt;\/text\&gt;\&lt;script\&gt;\&amp;"/' "$XE" >"$evilnic"
"$NG" topo --topology "$evilnic" --svg "$T/evilnic.svg" >/dev/null 2>"$T/evilnic.err"
rc=$?
ok "$([ "$rc" -ne 0 ] && [ ! -s "$T/evilnic.svg" ] && grep -q "verbs device name 'mlx5_</text><script>&' refused" "$T/evilnic.err"; echo $?)" \
    "hostile names: a NIC named with markup refuses the topology, no picture (exit $rc)"
evil="$T/$(printf 'x\033]0;pwn\007<b>&.xml')"
cp "$XE" "$evil"
"$NG" topo --topology "$evil" --svg "$T/evil.svg" >/dev/null
xmllint --noout "$T/evil.svg" 2>/dev/null
ok $? "hostile names: the SVG is still well-formed"
if grep -q '<script\|<b>' "$T/evil.svg" || grep -q "$(printf '\033')" "$T/evil.svg"; then r=1; else r=0; fi
ok $r "hostile names: no element and no control byte from them in the SVG"
like "$(grep -o '&lt;b&gt;&amp;\.xml' "$T/evil.svg" | head -1)" '&lt;b&gt;&amp;' \
    "hostile names: the file name is shown, XML-escaped"
"$NG" topo --topology "$evil" --map >"$T/evil.map"
if grep -q "$(printf '\033')" "$T/evil.map"; then r=1; else r=0; fi
ok $r "hostile names: no escape byte in the map"
like "$(head -1 "$T/evil.map")" '\\x1b\]0;pwn\\x07<b>&\.xml' "hostile names: the map shows them as \\xNN"

# --- check: runnable threads per core, piles, oversubscription ---
HELPER=$BUILD/tests/ng_threads
if [ -x "$HELPER" ] && [ "$(nproc --all)" -ge 2 ]; then
    start pile1 taskset -c 0 "$HELPER" 1 0 64
    start pile2 taskset -c 0 "$HELPER" 1 0 64
    start three taskset -c 1 "$HELPER" 3 0 64
    sleep 0.3
    pids="$PID_pile1,$PID_pile2,$PID_three"
    "$NG" check --pid "$pids" --json >"$T/ck.json"
    "$NG" check --pid "$pids" --svg "$T/ck.svg" >/dev/null
    ok $? "check --svg on two processes piled on CPU 0 and three threads on CPU 1"
    "$NG" check --pid "$pids" --map >"$T/ck.map"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); json.dump({c["cpu"]: c["runnable"] for c in d["summary"]["cpus"]}, open(sys.argv[2], "w"))' \
        "$T/ck.json" "$T/ck.runnable"
    diag "runnable per CPU: $(cat "$T/ck.runnable")"
    xmllint --noout "$T/ck.svg" 2>/dev/null
    ok $? "check --svg: well-formed"
    $DC check "$T/ck.svg" "$T/ck.runnable" >"$T/ck.check"
    emit "$T/ck.check"
    like "$(grep -c 'fill="url(#piled)"' "$T/ck.svg")" '^[1-9]' "check --svg: the piled core is marked"
    like "$(sed -n 's/^ *0 DRAM .*GiB  //p' "$T/ck.map")" '^ *2!\^ +3! *$' \
        "check --map: CPU 0 2 runnable, oversubscribed and piled; CPU 1 3, oversubscribed"
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    PIDS=""
else
    skip 6 "needs $HELPER (make tests) and 2 CPUs"
fi

# --- the pictures of README and docs/ are what this build draws ---
sh tests/draw/pictures.sh "$NG" "$T/img" >/dev/null
ok $? "tests/draw/pictures.sh draws every picture"
stale=""
for f in "$T"/img/*; do
    cmp -s "$f" "docs/img/$(basename "$f")" || stale="$stale $(basename "$f")"
done
for f in docs/img/*; do [ -e "$T/img/$(basename "$f")" ] || stale="$stale $(basename "$f")(extra)"; done
is "$stale" "" "docs/img/ is what the code draws (else: make pictures, commit docs/img/)"
# The map excerpts of README.md and docs/draw.md are lines of the map file.
for doc in README.md docs/draw.md; do
    python3 - "$doc" docs/img/xe8640-4-gpu-tasks.map.txt <<'EOF'
import sys
doc, want = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines()
i = [n for n, l in enumerate(doc) if l.lstrip().startswith("node kind")][0]
indent = len(doc[i]) - len(doc[i].lstrip())
got = [l[indent:] for l in doc[i:i + 9]]
same = got == want[4:13]
print("%sok - %s: its --map excerpt is what plan --map prints" % ("" if same else "not ", sys.argv[1]))
if not same:
    print("# got  %r\n# want %r" % (got[:3], want[4:7]))
EOF
done >"$T/docmap"
emit "$T/docmap"

# --- memcheck: the drawing code under valgrind (zero errors, no definite leak) ---
vg() {
    desc=$1
    shift
    valgrind -q --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
        --error-exitcode=99 "$@" >/dev/null 2>"$T/vg.err"
    rc=$?
    errs=$(grep -c '^==[0-9]*== ' "$T/vg.err")
    ok $((rc != 0 || errs != 0)) "valgrind: $desc"
    [ "$rc" = 0 ] && [ "$errs" = 0 ] || grep -E -A8 '^==[0-9]*== [A-Z]' "$T/vg.err" | head -20 | sed 's/^/# /'
}
if [ -z "${NG_FAST:-}" ] && command -v valgrind >/dev/null; then
    vg "plan --svg and --map, GH200, 8 tasks, weighted" "$NG" plan --topology "$GH" --tasks 8 \
        --task-gpus "0;0;1;1;2;2;3;3" --numa-policy weighted:all,cpuless --svg "$T/vg.svg" --map
    vg "topo --svg -, disallowed and offline CPUs" "$NG" topo \
        --topology "$TOPO/opteron-8s-cgroup-cpuset-disallowed.xml" --svg -
    vg "check --svg and --map, this machine" "$NG" check --pid $$ --svg "$T/vg.svg" --map
else
    skip 3 "valgrind not installed, or make test-fast"
fi

# --- topo --svg over the whole corpus: well-formed, every PU once ---
bad=""
for f in "$TOPO"/*.xml; do
    b=$(basename "$f" .xml)
    "$NG" topo --topology "$f" --svg "$T/c.svg" >/dev/null &&
        "$NG" topo --topology "$f" --json >"$T/c.json" &&
        xmllint --noout "$T/c.svg" 2>/dev/null &&
        $DC svg "$T/c.svg" - "$T/c.json" "$f" >"$T/c.check" || bad="$bad $b"
done
is "$bad" "" "topo --svg on every corpus topology: well-formed, self-contained, every PU once, every node, GPU and NIC once"

done_testing
