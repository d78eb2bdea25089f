#!/usr/bin/env python3
"""Read numaguard's pictures back and compare them with the facts they
draw (tests/draw/t-draw.sh). Every check prints "ok - DESC" or
"not ok - DESC" (tap.sh's emit numbers them) and "# ..." details.

  drawcheck.py svg SVG PLAN.json|- TOPO.json HWLOC.xml [ALLOWED] [PROBES.json]
      the SVG against the same run's `plan --json` (- for `topo`), the
      topology's `topo --json` and its hwloc XML (read here with Python's
      own parser, not numaguard's); ALLOWED: the --cpus list. Writes the
      centre of each task's first core and the task's colour to PROBES.
  drawcheck.py png PNG PROBES.json LABEL
      the pixel at each probe has its task's colour.
  drawcheck.py check SVG RUNNABLE.json
      `check --svg`: each core's fill is the heat key of its runnable
      threads (RUNNABLE: {"cpu": runnable} from `check --json`), marks.
  drawcheck.py map MAP PLAN.json TOPO.json HWLOC.xml [ALLOWED]
      `--map`: one row per NUMA node, the cells of its cores, memory marks.
  drawcheck.py pty OUT CMD...
      run CMD with stdout on a pseudo-terminal, its output into OUT.
  drawcheck.py colours PTYOUT PLAIN PLAN.json
      the terminal map's colours: the same text as PLAIN once the escape
      sequences are removed, one background colour per task.
"""
import collections
import json
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"
MODE = {"bind": "bind", "preferred_many": "prefer", "interleave": "interleave",
        "weighted_interleave": "weighted"}
LETTER = {"bind": "B", "preferred_many": "P", "interleave": "I", "weighted_interleave": "W"}
failed = 0


def ok(cond, desc, details=()):
    global failed
    print(("ok - %s" if cond else "not ok - %s") % desc)
    if not cond:
        failed += 1
        for d in list(details)[:12]:
            print("#   %s" % d)


def cpulist(text):
    out = set()
    for part in filter(None, (text or "").split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def hexmask(text):
    """hwloc's "0xffffffff,0x0000000f" (32-bit words, most significant first)."""
    out, bit = set(), 0
    for word in reversed((text or "0x0").split(",")):
        v = int(word, 16) if word else 0  # hwloc leaves zero words empty: "0xf,,0x1"
        out.update(bit + i for i in range(32) if v >> i & 1)
        bit += 32
    return out


def hwloc_cores(path):
    """Cores in hwloc's logical order (depth first), each the list of its
    PU OS indices; and the root's complete and allowed CPU sets."""
    root = ET.parse(path).getroot()
    machine = root.find("object")
    cores = []

    def walk(obj, in_core):
        t = obj.get("type")
        if t == "Core":
            pus = [int(p.get("os_index")) for p in obj.iter("object") if p.get("type") == "PU"]
            cores.append(pus)
            return
        if t == "PU" and not in_core:
            cores.append([int(obj.get("os_index"))])
            return
        for child in obj.findall("object"):
            walk(child, in_core)

    walk(machine, False)
    complete = hexmask(machine.get("complete_cpuset") or machine.get("cpuset"))
    allowed = hexmask(machine.get("allowed_cpuset") or machine.get("cpuset"))
    # Only what the topology shows: disallowed PUs leave hwloc's tree.
    cores = [[p for p in c if p in allowed] for c in cores]
    return [c for c in cores if c], complete, allowed


def plan_tasks(path):
    if path == "-":
        return []
    return json.load(open(path))["tasks"]


def owners(tasks, pu):
    return [t["local_id"] for t in tasks if pu in cpulist(t["cpus"])]


# ---------------------------------------------------------------- SVG --

def elements(path):
    tree = ET.parse(path)
    return tree, list(tree.iter())


def cls(e):
    return (e.get("class") or "").split()


def geom(e):
    return tuple(int(float(e.get(k))) for k in ("x", "y", "width", "height"))


def self_contained(tree, raw):
    bad = []
    for e in tree.iter():
        tag = e.tag.replace(SVG, "")
        if tag in ("script", "foreignObject", "image", "use", "style", "a"):
            bad.append("element <%s>" % tag)
        for k, v in e.attrib.items():
            if "href" in k or k.startswith("on"):
                bad.append("attribute %s" % k)
            if "url(" in v and not re.fullmatch(r"url\(#[\w-]+\)", v):
                bad.append("reference %s" % v)
    if re.search(r"@import|@font-face|<!ENTITY|<!DOCTYPE", raw):
        bad.append("@import, @font-face or a DTD")
    ok(not bad, "self-contained: no script, no link, no external file or font", bad)


def rgb(hexcolour):
    return tuple(bytes.fromhex(hexcolour[1:]))


def luma(hexcolour):
    """Rec. 601 luma, 0-255: the grey a greyscale print or copy makes."""
    r, g, b = rgb(hexcolour)
    return 0.299 * r + 0.587 * g + 0.114 * b


def greys(colour):
    """Tasks 0-7 (the palette): any two greys at least 20 apart."""
    first = {t: c for t, c in colour.items() if t < 8}
    close = ["tasks %d and %d: %s %.0f, %s %.0f" % (a, b, first[a], luma(first[a]), first[b],
                                                   luma(first[b]))
             for a in first for b in first if a < b and abs(luma(first[a]) - luma(first[b])) < 20]
    ok(not close, "the greys (luma 0-255) of the first %d tasks' colours differ pairwise by 20 "
       "or more (%s)" % (len(first), " ".join("%.0f" % luma(c) for _, c in sorted(first.items()))),
       close)


def legend(all_el):
    colour = {int(e.get("data-task")): e.get("fill") for e in all_el
              if "legend-task" in cls(e)}
    keys = {e.get("data-key"): e.get("fill") for e in all_el if "legend-key" in cls(e)}
    return colour, keys


def pus_once(all_el, complete):
    count = collections.Counter(int(e.get("data-pu")) for e in all_el if "pu" in cls(e))
    twice = [p for p, n in count.items() if n != 1]
    ok(not twice and set(count) == complete,
       "every PU of the topology drawn exactly once (%d)" % len(complete),
       ["drawn more than once: %s" % twice[:10],
        "missing: %s" % sorted(complete - set(count))[:20],
        "extra: %s" % sorted(set(count) - complete)[:20]])


def pu_fills(all_el, tasks, colour, keys, allowed):
    bad = []
    for e in all_el:
        if cls(e) != ["pu"]:
            continue
        pu = int(e.get("data-pu"))
        own = owners(tasks, pu)
        if own:
            want = colour.get(own[0])
        elif not tasks:
            want = e.get("fill")  # topo: no task colours to compare
        else:
            want = keys.get("idle" if pu in allowed else "excluded")
        if e.get("fill") != want:
            bad.append("PU %d: fill %s, want %s (tasks %s)" % (pu, e.get("fill"), want, own))
    ok(not bad, "each PU's fill is its task's colour from the plan (else idle or excluded)", bad)


def numbers_in_cells(all_el, texts):
    """Greyscale: every core of a task carries the task's number."""
    bad = []
    for e in all_el:
        if "core" not in cls(e) or int(e.get("data-task", "-1")) < 0:
            continue
        x, y, w, h = geom(e)
        k = e.get("data-task")
        # A shared core names its tasks ("0,1", "4-7"), else the task's number.
        if not any(x <= tx <= x + w and y <= ty <= y + h and
                   (t == k or (re.fullmatch(r"[0-9,-]+", t) and int(k) in cpulist(t)))
                   for tx, ty, t in texts):
            bad.append("core %s of task %s has no number" % (e.get("data-core"), k))
    ok(not bad, "every core of a task shows the task's number (greyscale)", bad)


def devices(all_el, tasks, colour, topo, kind, all_nics=False):
    """GPUs (bus ids) or NICs (names): each drawn in the colours of exactly
    the tasks that use it. NICs: a plan draws those its tasks use, topo the
    RDMA ones (small), every one with --all-nics; one summary box counts
    the others."""
    names = [g["pci_bus_id"] for g in topo["gpus"]] if kind == "gpu" else \
            [n["name"] for n in topo["nics"]]
    got = collections.defaultdict(set)
    for e in all_el:
        if "%s-task" % kind in cls(e):
            got[int(e.get("data-" + kind))].add((int(e.get("data-task")), e.get("fill")))
    drawn_list = [int(e.get("data-" + kind)) for e in all_el if kind in cls(e)]
    drawn = set(drawn_list)
    bad = ["drawn twice: %s" % i for i in drawn if drawn_list.count(i) > 1]
    want_drawn = set(range(len(names)))
    if kind == "nic" and not all_nics:
        used = {i for i, n in enumerate(names) if any(n in t["nics"] for t in tasks)}
        want_drawn = used if tasks else {i for i, n in enumerate(topo["nics"]) if n["rdma"]}
        summary = [int(e.get("data-hidden")) for e in all_el if "nic-summary" in cls(e)]
        hidden = len(names) - len(want_drawn)
        if summary != ([hidden] if hidden else []):
            bad.append("summary box says %s not shown, want %d" % (summary, hidden))
    for i, name in enumerate(names):
        if i not in want_drawn:
            continue
        want = {(t["local_id"], colour.get(t["local_id"])) for t in tasks
                if name in t["%ss" % kind]}
        if got.get(i, set()) != want:
            bad.append("%s %d (%s): drawn %s, plan %s" % (kind, i, name, sorted(got.get(i, ())),
                                                        sorted(want)))
    ok(not bad and drawn == want_drawn,
       "each %s drawn once, in the colour of each task that uses it (%d of %d drawn%s)" %
       (kind, len(want_drawn), len(names), ", one box counting the others" if
        len(want_drawn) < len(names) else ""),
       bad + ["drawn %s, want %s" % (sorted(drawn), sorted(want_drawn))] if drawn != want_drawn
       else bad)


def memory_marks(all_el, tasks, colour, topo):
    got, bad = set(), []
    for g in all_el:
        if "mem" not in cls(g):
            continue
        chip = [c for c in g if "chip" in cls(c)][0]
        mode, task = g.get("data-mode"), int(g.get("data-task"))
        c = chip.get("stroke") if mode == "prefer" else chip.get("fill")
        got.add((int(g.get("data-node")), task, mode))
        if c != colour.get(task):
            bad.append("node %s task %d: colour %s, task's %s" % (g.get("data-node"), task, c,
                                                                 colour.get(task)))
    want = {(n, t["local_id"], MODE[t["mem_policy"]]) for t in tasks
            if t["mem_policy"] in MODE for n in t["mem_nodes"]}
    bad += ["marked, not in the plan: %s" % (x,) for x in sorted(got - want)]
    bad += ["in the plan, not marked: %s" % (x,) for x in sorted(want - got)]
    nodes = {int(e.get("data-node")) for e in all_el if "numa" in cls(e)}
    every = {n["os_index"] for n in topo["numa_nodes"]}
    ok(not bad and nodes == every,
       "each NUMA node drawn once and marked for exactly the tasks whose memory policy names "
       "it, in their colour and mode (%d marks)" % len(want), bad)


def probes(all_el, tasks, colour):
    """The centre of each task's first core (the core of its lowest CPU,
    else its next core of its own) and the task's colour."""
    cores = [e for e in all_el if "core" in cls(e)]
    pus = {int(e.get("data-pu")): geom(e) for e in all_el if cls(e) == ["pu"]}
    out = []
    for t in tasks:
        k = t["local_id"]
        for pu in sorted(cpulist(t["cpus"])):
            px, py, _, _ = pus[pu]
            core = [c for c in cores if geom(c)[0] <= px < geom(c)[0] + geom(c)[2]
                    and geom(c)[1] <= py < geom(c)[1] + geom(c)[3]][0]
            if core.get("fill") == colour[k]:
                x, y, w, h = geom(core)
                out.append({"task": k, "x": x + w // 2, "y": y + h // 2, "colour": colour[k]})
                break
    return out


def cmd_svg(args):
    path, plan, topo_json, xml = args[:4]
    tasks, topo = plan_tasks(plan), json.load(open(topo_json))
    cores, complete, allowed = hwloc_cores(xml)
    if len(args) > 4 and args[4] not in ("", "-"):
        allowed = cpulist(args[4])
    raw = open(path, encoding="utf-8").read()
    tree, all_el = elements(path)
    texts = [(int(float(e.get("x"))), int(float(e.get("y"))), (e.text or "").strip())
             for e in all_el if e.tag == SVG + "text" and e.get("x")]
    self_contained(tree, raw)
    pus_once(all_el, complete)
    colour, keys = legend(all_el)
    if tasks:
        want = [t["local_id"] for t in tasks]
        pattern = {int(e.get("data-task")): e.get("data-pattern") for e in all_el
                   if "task-pattern" in cls(e)}
        looks = {(colour[t], pattern.get(t)) for t in colour}
        ok(sorted(colour) == want and len(set(colour.values())) == min(len(want), 8) and
           len(looks) == min(len(want), 32),
           "the legend gives each task its own colour, from task 8 on with a pattern (%d tasks)"
           % len(want), ["legend %s" % colour, "patterns %s" % pattern])
        greys(colour)
    pu_fills(all_el, tasks, colour, keys, allowed)
    if tasks:
        numbers_in_cells(all_el, texts)
    devices(all_el, tasks, colour, topo, "gpu")
    devices(all_el, tasks, colour, topo, "nic", os.environ.get("ALL_NICS") == "1")
    memory_marks(all_el, tasks, colour, topo)
    if len(args) > 5:
        pr = probes(all_el, tasks, colour)
        own = sum(1 for t in tasks if any(e.get("fill") == colour[t["local_id"]]
                                          for e in all_el if "core" in cls(e)))
        ok(len(pr) == own, "a probe point for each task with a core of its own (%d)" % len(pr))
        # The picture's pixels per unit (--scale, or small pictures scaled up):
        # the probes are in units, the PNG in pixels.
        root = tree.getroot()
        width, height = int(root.get("width")), int(root.get("height"))
        f = width / float(root.get("viewBox").split()[2])
        for p in pr:
            p["x"], p["y"] = int(p["x"] * f), int(p["y"] * f)
        json.dump({"width": width, "height": height, "probes": pr}, open(args[5], "w"))


# ---------------------------------------------------------------- PNG --

def png_pixels(path):
    """RGB rows of an 8-bit RGB or RGBA, non-interlaced PNG (what
    rsvg-convert and Chromium write)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not inter, "unsupported PNG %d/%d" % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev, stride = zlib.decompress(idat), [], bytearray(w * bpp), w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def cmd_png(args):
    path, probe_path, label = args
    p = json.load(open(probe_path))
    w, h, bpp, rows = png_pixels(path)
    ok((w, h) == (p["width"], p["height"]), "%s: the PNG is the SVG's size (%dx%d)" % (label, w, h))
    bad = []
    for pr in p["probes"]:
        px = rows[pr["y"]][pr["x"] * bpp:pr["x"] * bpp + 3]
        want = bytes.fromhex(pr["colour"][1:])
        if any(abs(a - b) > 2 for a, b in zip(px, want)):
            bad.append("task %d at (%d,%d): #%s, want %s" % (pr["task"], pr["x"], pr["y"],
                                                             bytes(px).hex(), pr["colour"]))
    ok(not bad and p["probes"], "%s: the pixel at the centre of each task's first core has the "
       "task's colour (%d tasks)" % (label, len(p["probes"])), bad)


# -------------------------------------------------------------- check --

def cmd_check(args):
    path, runnable = args[0], {int(k): v for k, v in json.load(open(args[1])).items()}
    _, all_el = elements(path)
    _, keys = legend(all_el)
    mark = [e.get("stroke") for e in all_el if e.get("data-key") == "over"]
    mark = mark[0] if mark else None
    pus = {int(e.get("data-pu")): geom(e) for e in all_el if cls(e) == ["pu"]}
    bad, over, piled = [], 0, 0
    for c in (e for e in all_el if "core" in cls(e)):
        x, y, w, h = geom(c)
        inside = [p for p, g in pus.items() if x <= g[0] < x + w and y <= g[1] < y + h]
        n = sum(runnable.get(p, 0) for p in inside)
        if c.get("fill") != keys.get("heat-%d" % min(n, 5)):
            bad.append("core of CPUs %s: %d runnable, fill %s" % (inside, n, c.get("fill")))
        over += (c.get("stroke") == mark) != (n > len(inside))
    ok(not bad, "check: each core's fill is the heat of its runnable threads", bad)
    ok(not over, "check: exactly the cores with more runnable threads than PUs are marked "
       "oversubscribed", ["%d cores differ" % over])
    # The mark must show on an overloaded core: its colour (border, badge)
    # far from every heat colour of the picture (keys and core fills).
    heats = {v for k, v in keys.items() if k.startswith("heat-")}
    heats |= {c.get("fill") for c in all_el if "core" in cls(c)}
    badges = {e.get("fill") for e in all_el if "over-mark" in cls(e)}
    near = ["mark %s, heat %s: distance %.0f" % (m, h, sum((a - b) ** 2 for a, b in
                                                           zip(rgb(m), rgb(h))) ** 0.5)
            for m in {mark} | badges if m for h in heats if h and h.startswith("#")
            and sum((a - b) ** 2 for a, b in zip(rgb(m), rgb(h))) ** 0.5 < 150]
    ok(mark and not near and len(heats) >= 6 and badges <= {mark},
       "check: the oversubscription mark (%s, border and badge) is at least 150 from each of "
       "the %d heat colours in the picture (RGB distance)" % (mark, len(heats)), near)
    piled = sum(1 for e in all_el if e.get("fill") == "url(#piled)")
    print("# piled overlays: %d" % piled)
    return piled


# ---------------------------------------------------------------- map --

def map_rows(text):
    """{node: (kind, memory, cells, marks)} from the map's rows."""
    rows, node = {}, None
    for line in text.splitlines():
        m = re.match(r"^ {0,3}(\d+) (\S+) +(\S+(?: \S+)?)  (.*)$", line)
        if m and len(line) > 24 and line[4] == " ":
            node = int(m.group(1))
            rows[node] = [m.group(2), m.group(3), [], []]
            rest = line[24:]
        elif node is not None and line.startswith(" " * 24) and line.strip():
            rest = line[24:]
        else:
            node = None if not line.strip() or not line.startswith(" ") else node
            continue
        cells, _, marks = rest.partition("  mem ")
        if cells.startswith("(no CPUs"):
            rows[node][2] = ["(no CPUs)"]
        else:
            rows[node][2] += cells.split()
        rows[node][3] += marks.split()
    return rows


def cmd_map(args):
    text = open(args[0]).read()
    tasks, topo = plan_tasks(args[1]), json.load(open(args[2]))
    cores, _, allowed = hwloc_cores(args[3])
    if len(args) > 4 and args[4] not in ("", "-"):
        allowed = cpulist(args[4])
    rows, bad = map_rows(text), []
    nodes = [n["os_index"] for n in topo["numa_nodes"]]
    ok(sorted(rows) == nodes, "map: one row per NUMA node (%d)" % len(nodes),
       ["rows %s" % sorted(rows)])
    for n in topo["numa_nodes"]:
        row = rows.get(n["os_index"])
        if row is None:
            continue
        node_cpus = cpulist(n["cpus"])
        if not n["has_cpus"]:
            want = ["(no CPUs)"]
        else:
            want = []
            for core in (c for c in cores if node_cpus & set(c)):
                own = sorted({k for p in core for k in owners(tasks, p)})
                want.append("-" if not any(p in allowed for p in core) else
                            "." if not own else str(own[0]) if len(own) == 1 else "*")
        marks = sorted("%d%s" % (t["local_id"], LETTER[t["mem_policy"]]) for t in tasks
                       if t["mem_policy"] in LETTER and n["os_index"] in t["mem_nodes"])
        if row[2] != want or sorted(row[3]) != marks:
            bad.append("node %d: cells %s marks %s; plan: %s %s" % (
                n["os_index"], " ".join(row[2])[:80], row[3], " ".join(want)[:80], marks))
    ok(not bad, "map: each node's cells are its cores' tasks in the plan, its marks the tasks "
       "whose memory names it", bad)
    ok("\x1b" not in text, "map: no escape sequence in plain output")


SGR = re.compile(r"\x1b\[[0-9;]*m")


def cmd_pty(args):
    import pty
    out, cmd = args[0], args[1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    data = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    _, status = os.waitpid(pid, 0)
    open(out, "wb").write(data.replace(b"\r\n", b"\n"))
    sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode")
             else status >> 8)


def cmd_colours(args):
    coloured, plain = open(args[0]).read(), open(args[1]).read()
    tasks = plan_tasks(args[2])
    ok("\x1b[" in coloured, "map on a terminal: colour escape sequences")
    ok(SGR.sub("", coloured) == plain, "map on a terminal: the same text as plain once the "
       "colour sequences are removed", [repr(SGR.sub("", coloured)[:200]), repr(plain[:200])])
    # Cells: "\x1b[30m\x1b[48;5;Nm" then the task number.
    seen = collections.defaultdict(set)
    for m in re.finditer(r"\x1b\[(?:30|97)m\x1b\[48;5;(\d+)m *(\d+)\x1b\[0m", coloured):
        seen[int(m.group(2))].add(int(m.group(1)))
    one = all(len(v) == 1 for v in seen.values())
    codes = [next(iter(v)) for v in seen.values()]
    want = {t["local_id"] for t in tasks}
    ok(one and set(seen) == want and len(set(codes)) == len(codes),
       "map on a terminal: one background colour per task, different for each task (%d)"
       % len(want), ["%s" % dict(seen)])


def main():
    cmds = {"svg": cmd_svg, "png": cmd_png, "check": cmd_check, "map": cmd_map,
            "pty": cmd_pty, "colours": cmd_colours}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](sys.argv[2:])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
