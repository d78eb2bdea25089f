#!/bin/sh
# numaguard check --job across a whole job (issue 29), on the private
# cluster with two slurmd (ng1, ng2; tests/slurm/cluster.sh): a job of 4
# tasks on 2 nodes placed with --numa-policy=local, owned by uid 65534.
#  - check --job J --json run from a PID namespace of its own (unshare -fp
#    --mount-proc: its /proc shows no process of the job, as a login node
#    sees a job), as root and as the job's owner: both nodes by name, all
#    4 tasks with their CPUs and memory policy; text, --map and --svg
#    (a panel per node, a task's chip in its rank's colour);
#  - run inside the job (a step on ng1), --job without ID still reports
#    the whole job, --local this node only;
#  - another user (uid 1) learns nothing: the same words as for a job that
#    does not exist, nothing on stdout;
#  - ng2's slurmd stopped (SIGSTOP: it accepts nothing): ng2 is named as
#    not answering, within --timeout (killed with its process group), and
#    ng1's report is still there.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
cd "$(dirname "$0")/../.." || exit 2
. tests/slurm/testlib.sh
HELPER=$NGT_BUILD/tests/ng_threads
U=65534
OTHER=1
[ -x "$HELPER" ] && [ -x "$NGT_CLI" ] || skip_all "needs $HELPER and $NGT_CLI (make all tests)"
command -v setpriv >/dev/null 2>&1 || skip_all "needs setpriv (util-linux)"
command -v unshare >/dev/null 2>&1 || skip_all "needs unshare (util-linux)"
ngt_start_suite check-wide plugin
ngt_user_files $U "$HELPER" "$NGT_CLI" "$NGT_PLUGIN"
NG=$NGT_SHARED/numaguard
NGT_PLUGIN=$NGT_SHARED/numaguard.so
NGC_NODES=2
NGC_PLUGSTACK=$(ngt_plugstack)
ngt_cluster
is "$(sinfo -h -N -o '%N %t' | sort | tr '\n' ' ')" "ng1 idle ng2 idle " "two slurmd: ng1 and ng2"

as_user() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
AS_OWNER=(setpriv --reuid=$U --regid=$U --clear-groups)
AS_OTHER=(setpriv --reuid=$OTHER --regid=$OTHER --clear-groups)
# In a PID namespace of its own: no process of the job in its /proc. In a
# chroot whose / is not a mount point (check-releases), unshare cannot make
# / private: the /proc mount is private there already, so propagation is
# left unchanged.
ALONE=(unshare -fp --mount-proc)
"${ALONE[@]}" true 2>/dev/null || ALONE=(unshare --propagation unchanged -fp --mount-proc)
"${ALONE[@]}" true || skip_all "no PID namespace of its own here (unshare -fp --mount-proc)"
alone() { "${ALONE[@]}" "$@"; }
sj() { python3 -c 'import json,sys; D=json.load(open(sys.argv[1])); N={n["name"]: n for n in D["nodes"]}; print(eval(sys.argv[2]))' "$@"; }

# --- the job: 4 tasks on 2 nodes, --numa-policy=local, uid 65534 ---
ngc_wait_idle 10
out=$NGT_OUT/job
: >"$out"
# (its bound leaves time for the forged answers below: gdb per forge)
as_user $U timeout -k 5 $((NGC_SRUN_TIMEOUT + 120)) srun -N 2 -n 4 --numa-policy=local \
    "$NGT_SHARED/ng_threads" 1 0 64 >"$out" 2>"$out.err" &
SRUN=$!
# (up to 60 s: a loaded machine; the loop ends as soon as all 4 are ready)
i=0
while [ $i -lt 1200 ] && [ "$(grep -c ready "$out" 2>/dev/null)" -lt 4 ] && kill -0 "$SRUN" 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
done
JOB=$(squeue -h -t R -o %i | head -1)
ok $([ "$(grep -c ready "$out")" = 4 ] && [ -n "$JOB" ]; echo $?) "job $JOB: 4 tasks running on ng[1-2]"

alone "$NG" check --job "$JOB" --json >"$NGT_OUT/root.json" 2>"$NGT_OUT/root.err"
rc=$?
alone sh -c "ls /proc | grep -c '^[0-9]'" >"$NGT_OUT/nprocs"
is "$(alone sh -c 'cat /proc/[0-9]*/comm' | grep -c ng_threads)" 0 "that PID namespace's /proc shows no process of the job"
echo "# unshare -fp --mount-proc numaguard check --job $JOB --json ($(cat "$NGT_OUT/nprocs") processes in that /proc):"
python3 -c 'import json,sys; D=json.load(open(sys.argv[1]))
for n in D["nodes"]:
    print("#   %s %s %s" % (n["name"], n["status"], [(p["pid"], p.get("global_rank"), p["cpus"], p["mem_policy_text"]) for p in n["report"]["processes"]]))' "$NGT_OUT/root.json"
is "$rc:$(sj "$NGT_OUT/root.json" '(D["job"], D["uid"], D["nodelist"], [(n["name"], n["status"]) for n in D["nodes"]])')" \
    "0:('$JOB', $U, 'ng[1-2]', [('ng1', 'ok'), ('ng2', 'ok')])" \
    "root, from a PID namespace of its own: both nodes by name, both answered (steps run as the owner: Slurm allows no other)"
is "$(sj "$NGT_OUT/root.json" 'sorted((p["global_rank"], n["name"], p["comm"], p["user"]) for n in D["nodes"] for p in n["report"]["processes"])')" \
    "[(0, 'ng1', 'ng_threads', 'nobody'), (1, 'ng1', 'ng_threads', 'nobody'), (2, 'ng2', 'ng_threads', 'nobody'), (3, 'ng2', 'ng_threads', 'nobody')]" \
    "all 4 tasks (ranks 0-1 on ng1, 2-3 on ng2), the owner's, nothing else"
# --numa-policy=local: one CPU each (2 tasks on a 2-CPU node), memory bound to its node.
is "$(sj "$NGT_OUT/root.json" 'sorted((n["name"], p["global_rank"], p["cpus"], p["mem_policy"], p["mem_policy_nodes"]) for n in D["nodes"] for p in n["report"]["processes"])')" \
    "[('ng1', 0, '0', 'bind', [0]), ('ng1', 1, '1', 'bind', [0]), ('ng2', 2, '0', 'bind', [0]), ('ng2', 3, '1', 'bind', [0])]" \
    "each task's CPUs and memory policy as --numa-policy=local placed it"
is "$(sj "$NGT_OUT/root.json" 'sorted(set((n["report"]["job"], n["report"]["membership"]) for n in D["nodes"]))')" \
    "[('$JOB', 'scontrol listpids')]" "each node's own report: the job, and where its membership came from"
like "$(sj "$NGT_OUT/root.json" 'N["ng1"]["report"]["membership_note"]')" \
    'leaves out every process named slurmstepd' "R1: the report says Slurm's record leaves out processes named slurmstepd"

alone "${AS_OWNER[@]}" "$NG" check --job "$JOB" --json >"$NGT_OUT/owner.json" 2>"$NGT_OUT/owner.err"
is "$?:$(sj "$NGT_OUT/owner.json" 'sorted((n["name"], p["global_rank"], p["cpus"]) for n in D["nodes"] for p in n["report"]["processes"])')" \
    "0:[('ng1', 0, '0'), ('ng1', 1, '1'), ('ng2', 2, '0'), ('ng2', 3, '1')]" \
    "the job's owner (uid $U), from a PID namespace of its own: the same 4 tasks"

# --- text, --map, --svg ---
alone "$NG" check --job "$JOB" >"$NGT_OUT/root.txt" 2>&1
echo "# numaguard check --job $JOB (text, first lines of each node):"
grep -E '^(job|== node|pid|  cpus|  rank)' "$NGT_OUT/root.txt" | sed 's/^/#   /'
is "$(grep -c '^== node ng[12]: answered in ' "$NGT_OUT/root.txt"):$(grep -c '^  rank .*task [0-3] of the job$' "$NGT_OUT/root.txt")" \
    "2:4" "text: a line per node and the 4 tasks with their global rank"
alone "$NG" check --job "$JOB" --map >"$NGT_OUT/root.map" 2>&1
is "$(grep -c '^== node ng[12]: answered' "$NGT_OUT/root.map"):$(grep -c 'runnable threads on each core' "$NGT_OUT/root.map")" \
    "2:2" "--map: each node's map under its name"
alone "$NG" check --job "$JOB" --svg "$NGT_OUT/job.svg" >"$NGT_OUT/svg.out" 2>&1
rc=$?
# NG_TEST_PICTURES=DIR keeps the job's picture (to look at or render).
[ -z "${NG_TEST_PICTURES:-}" ] || cp "$NGT_OUT/job.svg" "$NG_TEST_PICTURES/check-wide-job.svg"
is "$rc:$(cat "$NGT_OUT/svg.out" | tr '\n' ' ')" "0:node ng1: answered in $(sed -n 's/^node ng1: answered in //p' "$NGT_OUT/svg.out") node ng2: answered in $(sed -n 's/^node ng2: answered in //p' "$NGT_OUT/svg.out") " \
    "--svg FILE: the nodes and how they answered on stdout"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$NGT_OUT/job.svg" 2>"$NGT_OUT/xmllint.err"
    is "$?:$(cat "$NGT_OUT/xmllint.err")" "0:" "--svg: a well-formed document"
fi
is "$(python3 - "$NGT_OUT/job.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
palette = "#2166ac #fb9a29 #a50f15 #99dcd4".split()
out = []
for g in root.findall("s:g", ns):
    chips = [(int(r.get("data-task")), r.get("fill") == palette[int(r.get("data-task"))])
             for r in g.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "task-chip"]
    pics = [m for m in g.findall("s:g", ns) if m.get("class") == "node-machine"]
    cores = sorted({(int(r.get("data-task")), r.get("fill") == palette[int(r.get("data-task"))])
                    for m in pics for r in m.iter("{http://www.w3.org/2000/svg}rect")
                    if r.get("class") == "core" and r.get("data-task") != "-1"})
    title = [t.text for m in pics for t in m.iter("{http://www.w3.org/2000/svg}text")][:1]
    out.append((g.get("data-node-name"), chips, len(pics), cores, title == [g.get("data-node-name")]))
print(out)
PY
)" "[('ng1', [(0, True), (1, True)], 1, [(0, True), (1, True)], True), ('ng2', [(2, True), (3, True)], 1, [(2, True), (3, True)], True)]" \
    "--svg: a panel per node, its machine titled with its name, drawn by root from the node's facts; tasks 0-3 (chips and cores) in the colours of their ranks"

# --- inside the job (a step of its owner's): the whole job, or --local this node ---
"${AS_OWNER[@]}" timeout -k 5 60 srun --jobid="$JOB" --overlap -N1 -n1 -w ng1 "$NG" check --job --json \
    >"$NGT_OUT/inside.json" 2>"$NGT_OUT/inside.err"
is "$?:$(sj "$NGT_OUT/inside.json" '[(n["name"], n["status"], len(n["report"]["processes"])) for n in D["nodes"]]')" \
    "0:[('ng1', 'ok', 2), ('ng2', 'ok', 2)]" "run in a step on ng1, --job without ID: the whole job"
"${AS_OWNER[@]}" timeout -k 5 60 srun --jobid="$JOB" --overlap -N1 -n1 -w ng1 "$NG" check --job --local --json \
    >"$NGT_OUT/inside-local.json" 2>"$NGT_OUT/inside-local.err"
is "$?:$(python3 -c 'import json,sys; D=json.load(open(sys.argv[1])); print(sorted(p["global_rank"] for p in D["processes"]), "nodes" in D)' "$NGT_OUT/inside-local.json")" \
    "0:[0, 1] False" "--local in a step on ng1: ng1's tasks only"

# --- another user learns nothing ---
alone "${AS_OTHER[@]}" "$NG" check --job "$JOB" --json >"$NGT_OUT/other.out" 2>"$NGT_OUT/other.err"
rc=$?
alone "${AS_OTHER[@]}" "$NG" check --job 999999 --json >"$NGT_OUT/none.out" 2>"$NGT_OUT/none.err"
is "$rc:$(wc -c <"$NGT_OUT/other.out"):$(cat "$NGT_OUT/other.err")" \
    "1:0:numaguard: check: no job $JOB of yours (only its owner or root may check it)" \
    "uid $OTHER: exit 1, nothing on stdout, no node, state or owner named"
is "$(sed "s/999999/$JOB/" "$NGT_OUT/none.err")" "$(cat "$NGT_OUT/other.err")" \
    "uid $OTHER: the same words as for a job that does not exist"

# --- the owner forges ng1's answer (issue 38) ---
# A step of the owner's on ng1 waits for root's node side there, stops
# it, writes a forged report (scripts in every string, an old-style "svg"
# member with the namespace-prefix and quoted-'>' bypasses) to its stdout
# and makes it exit 0 (gdb): root's check takes it as ng1's answer. Root's
# picture draws it (the forged pids are there) but holds nothing of the
# owner's markup, and no script runs in Chromium; --json and text say the
# reports are the owner's.
if command -v gdb >/dev/null 2>&1 && [ -x /usr/bin/python3 ]; then
    python3 tests/e2e/check_job_attacks.py --forged "$NGT_SHARED/forged.json" \
        tests/topologies/laptop-hp-elitebook-i7-1370p.xml "$JOB" ng1
    cp tests/e2e/check_job_forge.py "$NGT_SHARED/"
    chmod a+r "$NGT_SHARED/forged.json" "$NGT_SHARED/check_job_forge.py"
    "${AS_OWNER[@]}" timeout -k 5 150 srun --jobid="$JOB" --overlap -N1 -n1 -w ng1 \
        /usr/bin/python3 "$NGT_SHARED/check_job_forge.py" "$JOB" ng1 "$NGT_SHARED/forged.json" 120 \
        >"$NGT_OUT/forge.out" 2>&1 &
    FORGER=$!
    for ((i = 0; i < 1200; i++)); do grep -q ready "$NGT_OUT/forge.out" && break; kill -0 "$FORGER" 2>/dev/null || break; sleep 0.05; done
    # (the forger may miss a node side that printed before it was stopped:
    # root's check then says ng1 failed; tried again, up to 5 times)
    t0=$SECONDS
    for try in 1 2 3 4 5; do
        alone "$NG" check --job "$JOB" --svg "$NGT_OUT/forged.svg" >"$NGT_OUT/forged-svg.out" 2>&1
        rc=$?
        grep -q '^node ng1: answered' "$NGT_OUT/forged-svg.out" && grep -q 'pid 1 (forged' "$NGT_OUT/forged.svg" && break
    done
    echo "# --svg forged after $try tries, $((SECONDS - t0)) s"
    t0=$SECONDS
    for try in 1 2 3 4 5; do
        alone "$NG" check --job "$JOB" --json >"$NGT_OUT/forged.json" 2>/dev/null
        grep -q '"comm":"forged' "$NGT_OUT/forged.json" && break
    done
    echo "# --json forged after $try tries, $((SECONDS - t0)) s"
    alone "$NG" check --job "$JOB" >"$NGT_OUT/forged.txt" 2>/dev/null
    kill "$FORGER" 2>/dev/null
    wait "$FORGER" 2>/dev/null
    echo "# forger on ng1: $(tr '\n' ' ' <"$NGT_OUT/forge.out"); root's --svg: $(tr '\n' ' ' <"$NGT_OUT/forged-svg.out")"
    is "$rc:$(grep -c '^node ng[12]: answered' "$NGT_OUT/forged-svg.out"):$(grep -c 'pid 1 (forged' "$NGT_OUT/forged.svg")" "0:2:1" \
        "root's --svg took ng1's forged answer (exit 0, both nodes answered, the forged pid 1 drawn)"
    is "$(python3 - "$NGT_OUT/forged.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
tags = sorted({e.tag[len(S):] for e in root.iter()} - {"svg", "title", "defs", "pattern", "rect", "text", "g", "line"})
attrs = sorted({a for e in root.iter() for a in e.attrib if a.lower().startswith("on") or "href" in a.lower()})
raw = open(sys.argv[1], "rb").read()
print(tags, attrs, b"<script" in raw, b"<svg:" in raw, b"<foreignObject" in raw)
PY
)" "[] [] False False False" "the picture holds only numaguard's elements: none of the owner's markup"
    CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
    if [ -n "$CHROMIUM" ]; then
        rm -rf "$NGT_OUT/profile"
        timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
            --user-data-dir="$NGT_OUT/profile" --virtual-time-budget=2000 --dump-dom \
            "file://$NGT_OUT/forged.svg" >"$NGT_OUT/forged.dom" 2>/dev/null
        is "$(grep -c 'data-pwned="' "$NGT_OUT/forged.dom"):$(grep -o '<title>[^<]*</title>' "$NGT_OUT/forged.dom" | head -1)" \
            "0:<title>numaguard check: job $JOB</title>" "in Chromium: no script of the owner's ran"
    else
        skip 1 "no chromium"
    fi
    is "$(python3 -c 'import json,sys; raw=open(sys.argv[1],"rb").read(); D=json.loads(raw.decode("utf-8")); n=[n for n in D["nodes"] if n["name"]=="ng1"][0]; print(D["reports_written_as_uid"], n["status"], n["report"]["processes"][1]["comm"][-2:] == "\x85\x9b", b"\xc2\x85" in raw)' "$NGT_OUT/forged.json")" \
        "$U ok True False" "--json: ng1's forged report, C1 controls escaped (\\u0085), the reports said to be uid $U's"
    is "$(sed -n 2p "$NGT_OUT/forged.txt" | grep -c "as the job's owner.*uid $U)")" 1 \
        "text: the line under the job's says the reports are the owner's"
else
    skip 5 "needs gdb and /usr/bin/python3 (the forger)"
fi

# --- a node that does not answer ---
kill -STOP "${NGC_SLURMD_PIDS[1]}"
t0=$(date +%s%N)
alone "$NG" check --job "$JOB" --json --timeout 5 >"$NGT_OUT/stopped.json" 2>"$NGT_OUT/stopped.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -CONT "${NGC_SLURMD_PIDS[1]}"
echo "# ng2's slurmd stopped: check --job $JOB --timeout 5 took $ms ms; stderr: $(cat "$NGT_OUT/stopped.err")"
is "$rc:$(sj "$NGT_OUT/stopped.json" '[(n["name"], n["status"]) for n in D["nodes"]]')" \
    "1:[('ng1', 'ok'), ('ng2', 'no answer')]" "ng2's slurmd stopped: ng2 named as not answering, ng1 answered; exit 1"
is "$(sj "$NGT_OUT/stopped.json" 'N["ng2"]["error"]')" \
    "no answer: did not answer within 5 s (killed with its process group)" "ng2: why, in the report"
ok $([ "$ms" -lt 9000 ]; echo $?) "within the bound: $ms ms for --timeout 5 (+1 s between SIGTERM and SIGKILL)"
is "$(grep -c "^numaguard: check: job $JOB: node ng2: no answer: did not answer within 5 s" "$NGT_OUT/stopped.err")" 1 \
    "stderr names ng2"
is "$(sj "$NGT_OUT/stopped.json" 'sorted(p["global_rank"] for p in N["ng1"]["report"]["processes"])')" "[0, 1]" \
    "ng1's report is still there"

# The tasks end with the job (Slurm kills them); any still there after 20 s
# (a slurmd just woken from SIGSTOP may miss the kill: seen once under
# load) are killed here by pid, so that nothing of uid 65534 outlives the
# suite (t-cli's check --all-mine as that user expects none).
tasks=$(sj "$NGT_OUT/root.json" '" ".join(str(p["pid"]) for n in D["nodes"] for p in n.get("report", {}).get("processes", []))')
scancel "$JOB"
wait "$SRUN" 2>/dev/null
left=$tasks
for ((i = 0; i < 200 && ${#left} > 0; i++)); do
    sleep 0.1
    left=$(for p in $tasks; do [ -d /proc/$p ] && echo "$p"; done | tr '\n' ' ' | sed 's/ $//')
done
if [ -n "$left" ]; then
    echo "# tasks still running 20 s after scancel (killed here): $left"
    kill -KILL $left 2>/dev/null
fi
ngc_wait_idle 30
is "$(ngc_node_states)" idle "nodes idle afterwards"
ngt_done
