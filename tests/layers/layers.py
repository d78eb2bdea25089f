#!/usr/bin/env python3
"""The layer check (make check-layers; t-layers.sh in make check).

Reads what the code really uses, not what it says: every object file of a
build ($BUILD/lib/**, spank/, tools/) is asked with nm(1) which symbols it
defines and which it needs, and every source file's #include lines are
read. From that:
  1. the file graph (file -> files whose symbols it uses) has no circle;
  2. a library file uses only its own folder and the folders its layer may
     use (LAYERS below): never a folder of a higher or the same rank;
  3. a library file includes only the private headers of those folders;
  4. the adapters (spank/, tools/) use only the public API (ng_*, declared
     in lib/include/) and include no private header (the plugin's test
     build, spank/faults.c, excepted: it passes the test seams);
  5. every global symbol of the library is public API (declared in
     lib/include/) or marked internal (ngi_*);
  6. the public headers include only public headers (and system ones);
  7. every folder of lib/ with sources is in the layer table (a folder it
     does not know would be ranked nowhere, and calls through it, such as
     gpu -> lib/zzz -> plan, would pass: t-layers-scratch.sh tries that);
  8. preload/ (the governor, one shared object built from all its files at
     once, so no object of its own per file in $BUILD) has no circle
     between its files either: each file is compiled here on its own
     (cc -c into a temporary folder) and read the same way.
Prints the layer table and the edges between folders, then TAP lines.
"""
import collections
import glob
import os
import re
import subprocess
import sys

# folder: (rank, folders it may use). Lower ranks are lower layers.
LAYERS = {
    "lib/base":    (0, []),
    "lib/topo":    (1, ["lib/base"]),
    "lib/options": (2, ["lib/base", "lib/topo"]),
    "lib/gpu":     (2, ["lib/base", "lib/topo"]),
    "lib/plan":    (3, ["lib/base", "lib/topo", "lib/options"]),
    "lib/task":    (4, ["lib/base", "lib/topo", "lib/options", "lib/plan"]),
    "lib/inspect": (4, ["lib/base", "lib/topo", "lib/options", "lib/gpu"]),
    "lib/draw":    (5, ["lib/base", "lib/topo", "lib/plan", "lib/inspect"]),
    "lib/doctor":  (5, ["lib/base", "lib/topo", "lib/options", "lib/gpu", "lib/task"]),
    "spank":       (6, ["lib/*"]),
    "tools":       (6, ["lib/*"]),
}
# Folders of lib/ that hold headers only (no layer of their own).
HEADER_FOLDERS = {"lib/include", "lib/private"}
# Private headers belong to a folder's layer.
PRIVATE = {
    "base.h": "lib/base", "cgroup.h": "lib/base", "hostlist.h": "lib/base",
    "sysops.h": "lib/base", "hwloc_compat.h": "lib/base", "topo.h": "lib/topo", "options.h": "lib/options",
    "gpu.h": "lib/gpu", "plan.h": "lib/plan", "task.h": "lib/task",
    "inspect.h": "lib/inspect", "draw.h": "lib/draw", "doctor.h": "lib/doctor",
}
TEST_BUILD_ONLY = {"spank/faults.c"}

n = 0
failed = 0


def ok(cond, desc, details=()):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, desc))
    for d in list(details)[:30]:
        print("#   " + d)


def folder_of(src):
    d = os.path.dirname(src)
    return d if d in LAYERS else None


def nm(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defs, uses = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRCG":
            defs.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            uses.add(p[1])
    return defs, uses


def public_names():
    names = set()
    for h in ["lib/include/numaguard.h"] + glob.glob("lib/include/numaguard/*.h"):
        names |= set(re.findall(r"\b(ng_\w+)\s*\(", open(h).read()))
        names |= set(re.findall(r"\b(ng_\w+)\s*\[", open(h).read()))
    return names


def sccs(graph):
    """Tarjan: the strongly connected components with more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def file_graph(objs):
    """file -> the files whose symbols it uses, and the symbols of each edge."""
    defs_of, uses_of, where = {}, {}, {}
    for src, obj in objs.items():
        d, u = nm(obj)
        defs_of[src], uses_of[src] = d, u
        for s in d:
            where.setdefault(s, src)
    graph = collections.defaultdict(set)
    why = collections.defaultdict(set)
    for src, used in uses_of.items():
        for s in used:
            dst = where.get(s)
            if dst and dst != src:
                graph[src].add(dst)
                why[(src, dst)].add(s)
    return defs_of, uses_of, where, graph, why


def preload_circles():
    """Check 8: the circles between preload/'s files (each compiled alone)."""
    import tempfile
    cc = os.environ.get("CC", "cc")
    objs = {}
    with tempfile.TemporaryDirectory() as tmp:
        srcs = sorted(glob.glob("preload/*.c"))
        arch = subprocess.run([cc, "-dumpmachine"], capture_output=True,
                              text=True).stdout.split("-")[0]
        srcs += glob.glob("preload/kmp_stub_%s.S" % arch)
        for src in srcs:
            obj = os.path.join(tmp, os.path.basename(src) + ".o")
            subprocess.run([cc, "-std=c11", "-D_GNU_SOURCE", "-fPIC", "-fvisibility=hidden",
                            "-c", src, "-o", obj], check=True)
            objs[src] = obj
        graph = file_graph(objs)[3]
    edges = sorted("%s -> %s" % (a, b) for a in graph for b in graph[a])
    print("# preload/ file edges: " + ("; ".join(edges) or "none"))
    return len(objs), sum(len(v) for v in graph.values()), sccs(graph)


def main():
    build = os.environ.get("BUILD", "build")
    objs = {}
    for src in sorted(glob.glob("lib/*/*.c") + glob.glob("spank/*.c") + glob.glob("tools/*.c")):
        if src in TEST_BUILD_ONLY:
            continue
        obj = os.path.join(build, src[:-2] + ".o")
        if os.path.exists(obj):
            objs[src] = obj
        elif src.startswith(("lib/", "tools/")):
            print("Bail out! %s not built (make all first)" % obj)
            return 1
    defs_of, uses_of, where, graph, why = file_graph(objs)
    lines = {s: sum(1 for _ in open(s)) for s in objs}

    # The layer table and the folder edges.
    print("# layer table (rank, folder, files, lines, folders it uses)")
    fedges = collections.defaultdict(set)
    for (a, b) in why:
        fa, fb = folder_of(a), folder_of(b)
        if fa and fb and fa != fb:
            fedges[fa].add(fb)
    for f, (rank, _) in sorted(LAYERS.items(), key=lambda kv: (kv[1][0], kv[0])):
        files = [s for s in objs if folder_of(s) == f]
        print("#   %d  %-12s %2d files %6d lines  uses: %s" % (
            rank, f, len(files), sum(lines[s] for s in files),
            " ".join(sorted(fedges[f])) or "-"))

    # A folder of lib/ the table does not rank: its files would be in no
    # layer and every check above would pass over them.
    unranked = []
    for d in sorted(glob.glob("lib/*/")):
        d = d.rstrip("/")
        srcs = glob.glob(d + "/**/*.c", recursive=True)
        if d in HEADER_FOLDERS:
            unranked += ["%s holds a source file (headers only): %s" % (d, s) for s in srcs]
        elif d not in LAYERS:
            unranked.append("%s is in no layer (%d source files): give it a rank and the folders it "
                            "may use in LAYERS, tests/layers/layers.py" % (d, len(srcs)))
    unranked += ["%s is in no folder of lib/" % s for s in sorted(glob.glob("lib/*.c"))]
    ok(not unranked, "every folder of lib/ is in the layer table (%d folders)" % sum(
        1 for f in LAYERS if f.startswith("lib/")), unranked)

    circles = sccs(graph)
    ok(not circles, "no circle between source files (%d files, %d edges)" % (
        len(objs), sum(len(v) for v in graph.values())),
       ["circle: " + " <-> ".join(c) for c in circles])
    pn, pe, pcircles = preload_circles()
    ok(not pcircles, "no circle between preload/'s files (%d files, %d edges)" % (pn, pe),
       ["circle: " + " <-> ".join(c) for c in pcircles])

    bad = []
    for (a, b), syms in sorted(why.items()):
        fa, fb = folder_of(a), folder_of(b)
        if not fa or not fb or fa == fb or not fa.startswith("lib/"):
            continue
        if fb not in LAYERS[fa][1]:
            bad.append("%s -> %s (%s): %s" % (a, b, "upward" if LAYERS[fb][0] >= LAYERS[fa][0]
                                               else "not allowed", " ".join(sorted(syms))[:120]))
    ok(not bad, "no library file calls a higher layer or a folder of its own rank", bad)

    badinc = []
    for src in sorted(glob.glob("lib/*/*.c") + glob.glob("spank/*.[ch]") + glob.glob("tools/*.[ch]")):
        fa = folder_of(src) or os.path.dirname(src)
        for h in re.findall(r'#include\s+"private/(\w+\.h)"', open(src).read()):
            fh = PRIVATE.get(h)
            if src in TEST_BUILD_ONLY:
                continue
            if not fa.startswith("lib/"):
                badinc.append("%s includes private/%s (adapters use lib/include only)" % (src, h))
            elif fh is None or (fh != fa and fh not in LAYERS[fa][1]):
                badinc.append("%s includes private/%s (%s)" % (src, h, fh))
    for h in glob.glob("lib/private/*.h"):
        fa = PRIVATE.get(os.path.basename(h))
        for inc in re.findall(r'#include\s+"(\w+\.h)"', open(h).read()):
            fh = PRIVATE.get(inc)
            if fh and fa and fh != fa and fh not in LAYERS[fa][1]:
                badinc.append("%s includes %s (%s above %s)" % (h, inc, fh, fa))
    ok(not badinc, "private headers included only by their own layer and the layers above",
       badinc)

    public = public_names()
    adapter = []
    for src in objs:
        if folder_of(src) in ("spank", "tools"):
            for s in sorted(uses_of[src]):
                dst = where.get(s)
                if dst and dst.startswith("lib/") and s not in public:
                    adapter.append("%s uses %s (%s)" % (src, s, dst))
    ok(not adapter, "the adapters (spank/, tools/) call only the public API", adapter)

    lib_globals = sorted({s for src in objs if src.startswith("lib/") for s in defs_of[src]})
    unmarked = [s for s in lib_globals if s not in public and not s.startswith("ngi_")]
    ok(not unmarked, "every global of the library is public API (ng_*) or internal (ngi_*): "
       "%d public, %d internal" % (sum(s in public for s in lib_globals),
                                    sum(s.startswith("ngi_") for s in lib_globals)), unmarked)
    badpub = [s for s in lib_globals if s.startswith("ngi_") and s in public]
    ok(not badpub, "no internal name in the public headers", badpub)

    pubinc = []
    for h in ["lib/include/numaguard.h"] + glob.glob("lib/include/numaguard/*.h"):
        for inc in re.findall(r'#include\s+"([^"]+)"', open(h).read()):
            if not inc.startswith("numaguard/"):
                pubinc.append("%s includes \"%s\"" % (h, inc))
    ok(not pubinc, "the public headers include only public headers", pubinc)

    # The public API and who calls it (docs/api.md keeps the same list).
    callers = collections.defaultdict(set)
    for src in objs:
        if folder_of(src) in ("spank", "tools"):
            for s in uses_of[src]:
                if s in public:
                    callers[s].add(folder_of(src))
    defined_public = [s for s in lib_globals if s in public]
    unused = [s for s in defined_public if not callers[s]]
    print("# public functions: %d; called by an adapter: %d; for library users only: %s" % (
        len(defined_public), len(defined_public) - len(unused), " ".join(unused) or "none"))
    documented = open("docs/api.md").read() if os.path.exists("docs/api.md") else ""
    undoc = [s for s in unused if not re.search(r"`%s`.*for library users" % s, documented)]
    ok(not undoc, "every public function is called by an adapter or documented for library "
       "users in docs/api.md (%d such)" % len(unused), undoc)
    missing = [s for s in defined_public if "`%s`" % s not in documented]
    ok(not missing, "docs/api.md lists every public function (%d)" % len(defined_public), missing)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    sys.exit(main())
