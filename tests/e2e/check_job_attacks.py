#!/usr/bin/env python3
"""Hostile node answers for `numaguard check --job J --replay DIR`
(tests/e2e/t-check-job-replay.sh): what a job's owner could make a node
answer (the node side runs as the owner, docs/check.md). Each answer is a
real report's shape with a real topology, its strings carrying scripts in
every form that once passed numaguard's SVG filter or is classic:

  svg:script      a namespace prefix (<svg:script xmlns:svg=...>)
  quoted >        a '>' inside a quoted attribute before onload
  script          <script>
  onload          an event attribute
  javascript:     href="javascript:..."
  foreignObject   HTML inside SVG
  entities        &lt; &#60; CDATA, a DOCTYPE with entities

Every script, if it ran, would set data-pwned on the document element and
change the title (the Chromium check looks for both).

    check_job_attacks.py DIR TOPOLOGY.xml MARKER-FILE
writes DIR/answers/*.json and DIR/control.svg (the same payloads inline
in a plain SVG: proves the Chromium check sees a script that runs);
    check_job_attacks.py --forged FILE TOPOLOGY.xml JOB NODE
writes one forged answer of NODE for job JOB (tests/e2e/t-check-wide.sh,
check_job_forge.py writes it in place of the node's real answer).
"""
import json
import os
import sys

JS = "document.documentElement.setAttribute('data-pwned','{0}');document.title='pwned-{0}'"

def payloads():
    return {
        "svg-prefix": '<svg:script xmlns:svg="http://www.w3.org/2000/svg">%s</svg:script>' % JS.format("prefix"),
        "quoted-gt": '<svg data-x=">" onload="%s">' % JS.format("quoted"),
        "script": "<script>%s</script>" % JS.format("script"),
        "onload": '<rect width="9" height="9" onload="%s"/>' % JS.format("onload"),
        "javascript": '<a href="javascript:%s"><text>x</text></a>' % JS.format("href"),
        "foreign": '<foreignObject><body xmlns="http://www.w3.org/1999/xhtml"><script>%s</script></body></foreignObject>' % JS.format("foreign"),
        "entities": "&lt;script&gt;%s&lt;/script&gt; &#60;script&#62; <![CDATA[<script>%s</script>]]>" % (JS.format("ent1"), JS.format("ent2")),
    }

ALL = " ".join(payloads().values())

def proc(pid, rank, cpus, comm, extra=""):
    return {"pid": pid, "comm": comm, "uid": 65534, "user": "nobody" + extra, "cpus": cpus,
            "global_rank": rank, "mem_policy_text": "bind:0" + extra, "gpus": [extra],
            "nic_vars": "UCX_NET_DEVICES=" + extra, "threads": 2, "runnable": 1,
            "oversubscribed": False}

def answer(node, topo_xml, procs, extra):
    return {"job": "7", "node": node + extra, "membership": "cgroup",
            "membership_note": extra, "processes": procs,
            "summary": {"cpus": [{"cpu": 0, "runnable": 2, "threads": 2, "bound": 1},
                                 {"cpu": 1, "runnable": 1, "threads": 1, "bound": 1}],
                        "overlaps": [], "warnings": [extra]},
            "topology_xml": topo_xml,
            # The channel of old: a picture of the node's own. Never used.
            "svg": '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="40" '
                   'height="20">' + ALL + "</svg>"}

def hostile_topology(xml, marker):
    """The topology with a DOCTYPE (an internal entity holding a script,
    an external one naming MARKER-FILE) and a script in an info value."""
    head, sep, rest = xml.partition("<topology")
    doctype = ('<!DOCTYPE topology [<!ENTITY pw "%s"><!ENTITY leak SYSTEM "file://%s">]>\n'
               % (payloads()["script"].replace("<", "&#60;").replace('"', "&#34;"), marker))
    rest = rest.replace("<object type=\"Machine\"",
                        "<object type=\"Machine\"", 1)
    info = ('<info name="DMIProductName" value="&pw;&leak;"/>\n'
            '<info name="Backend" value="%s"/>\n' % payloads()["quoted-gt"]
            .replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;"))
    # The first line after the Machine object's start tag.
    i = rest.find(">", rest.find('type="Machine"')) + 1
    return head + doctype + sep + rest[:i] + "\n" + info + rest[i:]

def forged(path, topo_path, job, node):
    p = payloads()
    doc = answer(node, open(topo_path).read(),
                 [proc(1, 0, "0", "forged" + p["svg-prefix"], p["quoted-gt"]),
                  proc(2, 1, "1", p["script"] + p["foreign"] + "\u0085\u009b", p["javascript"])],
                 p["onload"] + p["entities"])
    doc["job"] = job
    with open(path, "w") as f:
        f.write(json.dumps(doc))

def main():
    if sys.argv[1] == "--forged":
        forged(*sys.argv[2:6])
        return
    out, topo_path, marker = sys.argv[1], sys.argv[2], sys.argv[3]
    xml = open(topo_path).read()
    ans = os.path.join(out, "answers")
    os.makedirs(ans, exist_ok=True)
    p = payloads()
    # n1: every string of the report hostile, a good topology.
    n1 = answer("n1", xml, [proc(11, 0, "0", p["svg-prefix"], p["quoted-gt"]),
                            proc(12, 1, "2", p["script"] + p["foreign"], p["javascript"])],
                p["onload"] + p["entities"])
    # n2: its name (the file's) hostile too, and a hostile topology.
    n2 = answer("n2", hostile_topology(xml, marker),
                [proc(21, 2, "0-1", p["entities"], p["foreign"])], p["svg-prefix"])
    # n3: invalid UTF-8, C1 controls, DEL and NUL in its strings.
    n3 = answer("n3", xml, [proc(31, 3, "1", "a\u0085b\u009bc\u007fd\u0000e\u001bf", "\u2028")], "")
    names = {"n1": n1, 'n2<svg onload="%s">' % JS.format("name"): n2, "n3": n3}
    for name, doc in names.items():
        data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        if name == "n3":   # raw bytes that are not UTF-8, inside a string
            data = data.replace(b'"comm": "a', b'"comm": "\xff\xfe\xc0\xafa')
        with open(os.path.join(ans, name + ".json"), "wb") as f:
            f.write(data)
    with open(os.path.join(out, "control.svg"), "w") as f:
        f.write('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="40" '
                'height="20"><title>control</title>%s</svg>\n' % p["svg-prefix"])

main()
