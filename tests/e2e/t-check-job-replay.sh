#!/bin/sh
# numaguard check --job J from hostile node answers (--replay: the answers
# a job's owner could make its nodes give, tests/e2e/check_job_attacks.py;
# no Slurm needed). Issue 38:
#  - --svg: every script form that once passed the SVG filter (svg:script
#    by a namespace prefix, a '>' in a quoted attribute before onload) and
#    the classic ones (<script>, onload, href="javascript:", foreignObject,
#    entities, a DOCTYPE with an external entity) in every string of the
#    report, the node's name and its topology: the document holds only
#    elements numaguard writes, no event attribute, no href, nothing of
#    the node's old "svg" member; rendered in headless Chromium nothing
#    ran (no data-pwned, title unchanged), while the same payload inline
#    in a plain SVG does run there (the control); cores in their task's
#    colour, each machine titled with its node's name;
#  - --json: valid UTF-8 whatever bytes a node sent, C0, C1 and DEL
#    escaped; the report says what the job's owner controlled;
#  - the replay reader: an answer over 16 MiB refused before it is read,
#    a symlink and a FIFO refused (no hang).
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
T=$(mktemp -d /tmp/ng-cjr.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
if [ ! -x "$NG" ] || ! command -v python3 >/dev/null 2>&1; then
    skip 1 "needs $NG and python3"
    done_testing
    exit 0
fi
LAPTOP=$TOPO/laptop-hp-elitebook-i7-1370p.xml
echo "root-only-secret-$$" >"$T/marker"
python3 tests/e2e/check_job_attacks.py "$T" "$LAPTOP" "$T/marker"
R=$T/answers

# --- --svg ---
"$NG" check --job 7 --replay "$R" --svg "$T/job.svg" >"$T/svg.out" 2>"$T/svg.err"
is "$?:$(wc -l <"$T/svg.out")" "0:3" "--svg from 3 hostile answers: exit 0, the 3 nodes named"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$T/job.svg" 2>"$T/xmllint.err"
    is "$?:$(cat "$T/xmllint.err")" "0:" "a well-formed document"
else
    skip 1 "no xmllint (libxml2-utils)"
fi
is "$(python3 - "$T/job.svg" "$T/marker" <<'PY'
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
ours = {"svg", "title", "defs", "pattern", "rect", "text", "g", "line"}
tags = sorted({e.tag[len(S):] if e.tag.startswith(S) else e.tag for e in root.iter()} - ours)
attrs = sorted({a for e in root.iter() for a in e.attrib
                if a.lower().startswith("on") or "href" in a.lower() or a == "style"})
raw = open(sys.argv[1], "rb").read()
secret = open(sys.argv[2]).read().strip().encode()
print(tags, attrs, b"<script" in raw, b"<svg:" in raw, b"<foreignObject" in raw,
      secret in raw, raw.count(b"<svg "))
PY
)" "[] [] False False False False 1" \
    "only numaguard's elements, no event attribute or href, no markup of a node's, nothing of a root-only file (DOCTYPE entity)"
is "$(python3 - "$T/job.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
palette = "#2166ac #fb9a29 #a50f15 #99dcd4".split()
out = []
for g in root.findall(S + "g"):
    machine = [m for m in g.iter(S + "g") if m.get("class") == "node-machine"]
    cores = sorted({(int(r.get("data-task")), r.get("fill") == palette[int(r.get("data-task"))])
                    for m in machine for r in m.iter(S + "rect")
                    if r.get("class") == "core" and r.get("data-task") != "-1"})
    title = [t.text for m in machine for t in m.iter(S + "text")][:1]
    out.append((g.get("data-node-name")[:3], g.get("data-picture"), cores, title == [g.get("data-node-name")[:79]]))
print(out)
PY
)" "[('n1', 'yes', [(0, True), (1, True)], True), ('n2<', 'no', [], False), ('n3', 'yes', [(3, True)], True)]" \
    "n1, n3: cores in their task's colour, the machine titled with the node's name; n2's hostile topology left out"
like "$(grep -o 'its topology cannot be read[^<]*' "$T/job.svg" | head -1)" '^its topology cannot be read: ' \
    "the band of n2 says why its machine is not drawn"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
dom() {
    rm -rf "$T/profile"
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-background-networking --disable-component-update --user-data-dir="$T/profile" \
        --virtual-time-budget=2000 --dump-dom "file://$1" 2>"$T/chromium.log"
}
if [ -n "$CHROMIUM" ] && [ -z "${NG_FAST:-}" ]; then
    dom "$T/control.svg" >"$T/control.dom"
    like "$(grep -o 'data-pwned="[a-z]*"' "$T/control.dom" | head -1)" '^data-pwned="prefix"$' \
        "control: the svg:script payload inline in a plain SVG runs in this Chromium"
    dom "$T/job.svg" >"$T/job.dom"
    is "$(grep -c 'data-pwned="' "$T/job.dom"):$(grep -o '<title>[^<]*</title>' "$T/job.dom" | head -1)" \
        "0:<title>numaguard check: job 7</title>" \
        "root's picture in Chromium: no script ran (no data-pwned, title unchanged)"
else
    skip 2 "no chromium (sh tests/install-deps.sh installs it), or NG_FAST"
fi

# --- --json ---
"$NG" check --job 7 --replay "$R" --json >"$T/job.json" 2>"$T/json.err"
is "$?" 0 "--json from the hostile answers: exit 0"
is "$(python3 - "$T/job.json" <<'PY'
import json, re, sys
raw = open(sys.argv[1], "rb").read()
text = raw.decode("utf-8")                      # strict: fails on bytes that are not UTF-8
controls = re.findall("[\x00-\x09\x0b-\x1f\x7f-\x9f]", text)
D = json.loads(text)
n3 = [n for n in D["nodes"] if n["name"] == "n3"][0]["report"]["processes"][0]["comm"]
print(len(controls), D["reports_written_as_uid"], "owner" in D["reports_note"], ascii(n3))
PY
)" "0 $(id -u) True '\\ufffd\\ufffd\\ufffd\\ufffda\\x85b\\x9bc\\x7fd\\ufffde\\x1bf'" \
    "valid UTF-8, no raw control character (C0, C1, DEL; escaped as \\\\uXXXX), bytes that are not UTF-8 and NUL as U+FFFD; says whose the reports are"

# --- the replay reader ---
B=$T/bad
mkdir -p "$B"
cp "$R/n1.json" "$B/a.json"
truncate -s 17M "$B/big.json"
ln -s "$R/n3.json" "$B/link.json"
mkfifo "$B/fifo.json"
timeout 20 "$NG" check --job 7 --replay "$B" --json >"$T/bad.json" 2>"$T/bad.err"
is "$?" 1 "--replay with unusable answers: exit 1 (they failed), not a hang"
is "$(python3 -c 'import json,sys; print([(n["name"], n["status"], n.get("error", "")) for n in json.load(open(sys.argv[1]))["nodes"]])' "$T/bad.json")" \
    "[('a', 'ok', ''), ('big', 'failed', 'failed: its saved answer is over 16 MiB'), ('fifo', 'failed', 'failed: its saved answer is not a regular file'), ('link', 'failed', 'failed: cannot read its saved answer (Too many levels of symbolic links)')]" \
    "over 16 MiB refused by its size, a FIFO and a symlink refused"

done_testing
