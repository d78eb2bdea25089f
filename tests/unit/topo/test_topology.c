/* Topology: every XML of tests/topologies/INDEX.tsv against the index,
 * memory kinds, GPU rules, errors, live loading, sysfs evidence.
 * Runs from the repository root. */
#include "numaguard.h"
#include "tap.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TOPO_DIR "tests/topologies"

/* Where our GPU locality deliberately differs from INDEX.tsv, which is
 * hwloc's "NUMA nodes intersecting the GPU's cpuset". We report CPU-bearing
 * nodes in numa_nodes and only the memory nodes that belong to the GPU
 * (PCIBusID info) in memory_nodes; hwloc's intersection also lists the
 * package's other GPUs' memory nodes, since hwloc gives a CPU-less node its
 * parent's cpuset. */
static const struct {
    const char *file, *busid, *numa, *memory, *why;
} diffs[] = {
    {"witherspoon-p9-6xv100-gpumem-numa.xml", "0004:05:00.0", "0", "255",
     "INDEX 0,253-255: 253/254 are the GPU memory of 0006:00:00.0/0004:06:00.0"},
    {"witherspoon-p9-6xv100-gpumem-numa.xml", "0004:06:00.0", "0", "254",
     "INDEX 0,253-255: PCIBusID of 254 is 0004:06:00.0"},
    {"witherspoon-p9-6xv100-gpumem-numa.xml", "0006:00:00.0", "0", "253",
     "INDEX 0,253-255: PCIBusID of 253 is 0006:00:00.0"},
    {"witherspoon-p9-6xv100-gpumem-numa.xml", "0007:00:00.0", "8", "252",
     "INDEX 8,250-252: PCIBusID of 252 is 0007:00:00.0"},
    {"witherspoon-p9-6xv100-gpumem-numa.xml", "0035:04:00.0", "8", "251",
     "INDEX 8,250-252: PCIBusID of 251 is 0035:04:00.0"},
    {"witherspoon-p9-6xv100-gpumem-numa.xml", "0035:05:00.0", "8", "250",
     "INDEX 8,250-252: PCIBusID of 250 is 0035:05:00.0"},
    /* The GH200 model's GPU memory nodes have empty cpusets (hwloc's
     * intersection finds none); their PCIBusID names their GPU. */
    {"gh200-4superchip-synthetic.xml", "0009:01:00.0", "0", "4-11",
     "INDEX 0: PCIBusID of 4-11 is 0009:01:00.0"},
    {"gh200-4superchip-synthetic.xml", "0019:01:00.0", "1", "12-19",
     "INDEX 1: PCIBusID of 12-19 is 0019:01:00.0"},
    {"gh200-4superchip-synthetic.xml", "0029:01:00.0", "2", "20-27",
     "INDEX 2: PCIBusID of 20-27 is 0029:01:00.0"},
    {"gh200-4superchip-synthetic.xml", "0039:01:00.0", "3", "28-35",
     "INDEX 3: PCIBusID of 28-35 is 0039:01:00.0"},
};

static char err[256];

static ng_topology *load(const char *file, int disallowed, const char *fsroot)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TOPO_DIR, file);
    ng_topology_options o = {.xml_path = path, .fsroot = fsroot, .include_disallowed = disallowed};
    ng_topology *t = NULL;
    err[0] = '\0';
    if (ng_topology_load(&t, &o, err, sizeof err) < 0)
        tap_diag("load %s: %s", file, err);
    return t;
}

/* Set -> "0-3,8" (or "" when empty), static buffer per call slot. */
static const char *fmt(hwloc_const_bitmap_t s)
{
    static char buf[4][1024];
    static int slot;
    char *b = buf[slot++ & 3];
    if (ng_list_format(s, b, 1024) < 0)
        snprintf(b, 1024, "?");
    return b;
}

static int set_is(hwloc_const_bitmap_t s, const char *list)
{
    return strcmp(fmt(s), list) == 0;
}

/* ------------------------------------------------------------------ */
/* INDEX.tsv                                                            */
/* ------------------------------------------------------------------ */

enum { C_FILE = 0, C_NUMA = 4, C_CPULESS = 5, C_CORES = 6, C_PUS = 7, C_GPUS = 9, C_MAP = 10, C_N = 15 };

static int split_tabs(char *line, char **col, int max)
{
    int n = 0;
    col[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            col[n++] = p + 1;
        }
    for (int i = 0; i < n; i++)
        col[i][strcspn(col[i], "\r\n")] = '\0';
    return n;
}

/* "4: 4-7 (subtype=MCDRAM)" -> "4-7"; "0" -> "". */
static void cpuless_list(const char *cell, char *out, size_t len)
{
    const char *p = strchr(cell, ':');
    out[0] = '\0';
    if (!p)
        return;
    p += strspn(p + 1, " ") + 1;
    size_t n = strcspn(p, " (");
    snprintf(out, len, "%.*s", (int)n, p);
}

static const char *diff_for(const char *file, const char *bus, int want_memory)
{
    for (size_t i = 0; i < sizeof diffs / sizeof diffs[0]; i++)
        if (!strcmp(diffs[i].file, file) && !strcmp(diffs[i].busid, bus))
            return want_memory ? diffs[i].memory : diffs[i].numa;
    return NULL;
}

static unsigned vendor_count(const ng_topology *t, ng_gpu_vendor v)
{
    unsigned n = 0;
    for (unsigned i = 0; i < ng_topology_gpu_count(t); i++)
        n += ng_topology_gpu(t, i)->vendor == v;
    return n;
}

/* "4 (NVIDIA x3, AMD x1)": count for "NVIDIA x" etc. */
static unsigned index_vendor(const char *cell, const char *name)
{
    const char *p = strstr(cell, name);
    return p ? (unsigned)atoi(p + strlen(name)) : 0;
}

static void check_gpu_map(const char *file, const ng_topology *t, char *map)
{
    unsigned i = 0;
    char *save = NULL;
    for (char *e = strtok_r(map, ";", &save); e; e = strtok_r(NULL, ";", &save), i++) {
        e += strspn(e, " ");
        char *arrow = strstr(e, "->");
        if (!arrow)
            break;
        *arrow = '\0';
        const char *want = strcmp(arrow + 2, "none") ? arrow + 2 : "";
        const ng_gpu_info *g = ng_topology_gpu(t, i);
        if (!ok(g && !strcmp(g->pci_bus_id, e), "%s: GPU %u is %s (got %s)", file, i, e,
                g ? g->pci_bus_id : "none"))
            continue;
        const char *dn = diff_for(file, e, 0), *dm = diff_for(file, e, 1);
        ok(set_is(g->numa_nodes, dn ? dn : want), "%s: %s numa_nodes %s%s (got %s)", file, e,
           dn ? dn : want, dn ? " [deliberate difference, see table]" : "", fmt(g->numa_nodes));
        ok(set_is(g->memory_nodes, dm ? dm : ""), "%s: %s memory_nodes '%s' (got '%s')", file, e,
           dm ? dm : "", fmt(g->memory_nodes));
        ok(ng_topology_gpu_by_busid(t, e) == (int)i, "%s: gpu_by_busid(%s) = %u", file, e, i);
    }
}

static void check_index_row(char **c)
{
    const char *file = c[C_FILE];
    ng_topology *t = load(file, 0, NULL);
    if (!ok(t != NULL, "%s: loads (%s)", file, t ? "ok" : err))
        return;
    hwloc_topology_t hw = ng_topology_hwloc(t);
    ok(ng_topology_numa_count(t) == (unsigned)atoi(c[C_NUMA]), "%s: %s NUMA nodes (got %u)", file,
       c[C_NUMA], ng_topology_numa_count(t));
    hwloc_bitmap_t cl = hwloc_bitmap_alloc();
    for (unsigned k = 0; k < ng_topology_numa_count(t); k++)
        if (!ng_topology_numa(t, k)->has_cpus)
            hwloc_bitmap_set(cl, ng_topology_numa(t, k)->os_index);
    char want[256];
    cpuless_list(c[C_CPULESS], want, sizeof want);
    ok(set_is(cl, want), "%s: CPU-less nodes '%s' (got '%s')", file, want, fmt(cl));
    hwloc_bitmap_free(cl);
    ok(hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE) == atoi(c[C_CORES]), "%s: %s cores", file, c[C_CORES]);
    ok(hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU) == atoi(c[C_PUS]), "%s: %s PUs", file, c[C_PUS]);
    ok(ng_topology_gpu_count(t) == (unsigned)atoi(c[C_GPUS]), "%s: %d GPUs (got %u)", file,
       atoi(c[C_GPUS]), ng_topology_gpu_count(t));
    ok(vendor_count(t, NG_VENDOR_NVIDIA) == index_vendor(c[C_GPUS], "NVIDIA x") &&
       vendor_count(t, NG_VENDOR_AMD) == index_vendor(c[C_GPUS], "AMD x") &&
       vendor_count(t, NG_VENDOR_UNKNOWN) == index_vendor(c[C_GPUS], "unknown-vendor x"),
       "%s: GPU vendors as in '%s'", file, c[C_GPUS]);
    ok(!ng_topology_is_this_system(t), "%s: not this system", file);
    if (strcmp(c[C_MAP], "-") != 0)
        check_gpu_map(file, t, c[C_MAP]);
    ng_topology_free(t);
}

static void check_index(void)
{
    FILE *f = fopen(TOPO_DIR "/INDEX.tsv", "r");
    if (!ok(f != NULL, "INDEX.tsv opens"))
        return;
    char line[8192];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        char *c[C_N + 1];
        if (strncmp(line, "file\t", 5) == 0 || split_tabs(line, c, C_N) < C_MAP + 1)
            continue;
        rows++;
        check_index_row(c);
    }
    fclose(f);
    ok(rows >= 39, "INDEX.tsv has %d topologies", rows);
}

/* ------------------------------------------------------------------ */
/* Memory kinds, distances, GPU details                                 */
/* ------------------------------------------------------------------ */

static void expect_kinds(const char *file, const char *nodes, ng_mem_kind kind)
{
    ng_topology *t = load(file, 0, NULL);
    if (!t)
        return (void)ok(0, "%s loads", file);
    hwloc_bitmap_t want = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc();
    ng_list_parse(nodes, want, NG_MAX_NUMA_OS_INDEX, NULL, 0);
    for (unsigned k = 0; k < ng_topology_numa_count(t); k++)
        if (ng_topology_numa(t, k)->kind == kind)
            hwloc_bitmap_set(got, ng_topology_numa(t, k)->os_index);
    ok(hwloc_bitmap_isequal(want, got), "%s: %s nodes are %s (got '%s')", file,
       ng_mem_kind_name(kind), nodes, fmt(got));
    hwloc_bitmap_free(want);
    hwloc_bitmap_free(got);
    ng_topology_free(t);
}

static void check_kinds(void)
{
    expect_kinds("knl-7250-quad-flat-hwloc1.xml", "1", NG_MEM_HBM);
    expect_kinds("knl-7250-quad-flat-hwloc24.xml", "1", NG_MEM_HBM);
    expect_kinds("knl-7250-snc4-flat-hwloc1.xml", "4-7", NG_MEM_HBM);
    expect_kinds("knl-7250-snc4-flat-hwloc1.xml", "0-3", NG_MEM_DRAM);
    expect_kinds("xeonmax-9462-2s-snc4-hbm-flat.xml", "8-15", NG_MEM_HBM);
    expect_kinds("xeonmax-9462-2s-snc4-hbm-flat.xml", "0-7", NG_MEM_DRAM);
    expect_kinds("xeonmax-9462-2s-snc4-hbm-cache.xml", "0-7", NG_MEM_DRAM);
    expect_kinds("qemu-heteromem-dram-hbm-nvm.xml", "2,4", NG_MEM_HBM);
    expect_kinds("qemu-heteromem-dram-hbm-nvm.xml", "6,8-9", NG_MEM_NVM);
    expect_kinds("qemu-heteromem-dram-hbm-nvm.xml", "0-1", NG_MEM_DRAM);
    expect_kinds("xeon6230-2s-pmem-kmem-hmat.xml", "7,10", NG_MEM_NVM);
    expect_kinds("xeon6230-2s-pmem-kmem-hmat.xml", "5-6,8-9", NG_MEM_DRAM);
    expect_kinds("witherspoon-p9-6xv100-gpumem-numa.xml", "250-255", NG_MEM_GPU);
    expect_kinds("witherspoon-p9-6xv100-gpumem-numa.xml", "0,8", NG_MEM_DRAM);
    /* lassen hwloc1: GPU memory nodes with no subtype/PCIBusID: unknown. */
    expect_kinds("lassen-p9-4xv100-gpunuma-hwloc1.xml", "252-255", NG_MEM_UNKNOWN);
    expect_kinds("opteron-8s-cgroup-cpuset-disallowed.xml", "4", NG_MEM_UNKNOWN);
}

static void check_numa_details(void)
{
    ng_topology *t = load("witherspoon-p9-6xv100-gpumem-numa.xml", 0, NULL);
    if (!ok(t != NULL, "witherspoon loads"))
        return;
    const ng_numa_info *n255 = ng_topology_numa_by_os(t, 255), *n0 = ng_topology_numa_by_os(t, 0);
    ok(n255 && !n255->has_cpus && hwloc_bitmap_iszero(n255->cpus) && n255->memory_bytes == 16106127360ull,
       "witherspoon: node 255 CPU-less, empty cpus, 15 GiB");
    ok(n0 && n0->has_cpus && set_is(n0->cpus, "0-15") && n0->memory_bytes == 132955242496ull,
       "witherspoon: node 0 has PUs 0-15 and its memory size");
    ok(ng_topology_numa_by_os(t, 7) == NULL, "numa_by_os(7) is NULL");
    ok(ng_topology_numa(t, 0)->os_index == 0 && ng_topology_numa(t, 7)->os_index == 255 &&
       ng_topology_numa(t, 8) == NULL, "nodes sorted by OS index");
    ok(ng_topology_distance(t, 0, 0) == 10 && ng_topology_distance(t, 0, 8) == 40 &&
       ng_topology_distance(t, 8, 0) == 40 && ng_topology_distance(t, 250, 251) == 80,
       "witherspoon distances 10/40/80");
    ok(ng_topology_distance(t, 0, 7) == 0, "distance to a missing node is 0");
    const ng_gpu_info *g = ng_topology_gpu(t, 0);
    ok(g && g->vendor == NG_VENDOR_UNKNOWN && g->pci_vendor_id == 0 && g->n_os_devices == 0 &&
       g->os_devices && g->os_devices[0] == NULL, "witherspoon GPU: unknown vendor, no OS devices");
    ok(g && set_is(g->cpus, "0-15"), "witherspoon GPU 0 local CPUs 0-15");
    ng_topology_free(t);

    t = load("lassen-p9-4xv100-gpunuma-hwloc1.xml", 0, NULL);
    if (t) {
        ok(ng_topology_distance(t, 0, 8) == 40 && ng_topology_distance(t, 0, 0) == 10 &&
           ng_topology_distance(t, 0, 252) == 80, "lassen hwloc1 (v1 XML) distances 10/40/80");
        ok(set_is(ng_topology_gpu(t, 0)->memory_nodes, ""),
           "lassen hwloc1: no evidence ties 252-255 to a GPU: memory_nodes empty");
        ng_topology_free(t);
    }
    t = load("knl-7250-quad-flat-hwloc24.xml", 0, NULL);
    if (t) {
        ok(ng_topology_distance(t, 0, 1) == 31, "knl distance(0,1) = 31");
        ng_topology_free(t);
    }
}


/* GH200 model: 36 NUMA nodes, 4 Grace nodes with CPUs, 32 GPU-memory nodes
 * linked to their H100 by PCIBusID; CPU-less nodes never bind CPUs. */
static void check_gh200(void)
{
    ng_topology *t = load("gh200-4superchip-synthetic.xml", 0, NULL);
    if (!ok(t != NULL, "gh200 model loads"))
        return;
    ok(ng_topology_numa_count(t) == 36, "gh200: 36 NUMA nodes (got %u)", ng_topology_numa_count(t));
    unsigned cpu_nodes = 0, gpu_nodes = 0;
    for (unsigned i = 0; i < ng_topology_numa_count(t); i++) {
        const ng_numa_info *n = ng_topology_numa(t, i);
        cpu_nodes += n->has_cpus && n->kind == NG_MEM_DRAM && n->os_index < 4;
        gpu_nodes += !n->has_cpus && n->kind == NG_MEM_GPU && hwloc_bitmap_iszero(n->cpus);
    }
    ok(cpu_nodes == 4 && gpu_nodes == 32, "gh200: nodes 0-3 DRAM with CPUs, 32 CPU-less GPU nodes "
       "(got %u, %u)", cpu_nodes, gpu_nodes);
    for (unsigned g = 0; g < ng_topology_gpu_count(t); g++) {
        const ng_gpu_info *gi = ng_topology_gpu(t, g);
        char want[32], cpus[32];
        snprintf(want, sizeof want, "%u-%u", 4 + 8 * g, 11 + 8 * g);
        snprintf(cpus, sizeof cpus, "%u-%u", 72 * g, 72 * g + 71);
        ok(set_is(gi->memory_nodes, want) && set_is(gi->cpus, cpus) &&
           hwloc_bitmap_weight(gi->numa_nodes) == 1 && hwloc_bitmap_first(gi->numa_nodes) == (int)g,
           "gh200: GPU %s: memory nodes %s by PCIBusID, CPUs %s, node %u", gi->pci_bus_id,
           fmt(gi->memory_nodes), fmt(gi->cpus), g);
    }
    ok(ng_topology_distance(t, 0, 1) == 40 && ng_topology_distance(t, 0, 4) == 80 &&
       ng_topology_distance(t, 0, 12) == 120 && ng_topology_distance(t, 4, 5) == 255,
       "gh200: distances 40 (Grace-Grace), 80 (own GPU memory), 120, 255");
    /* No plan ever binds CPUs of a CPU-less node: every task's CPUs lie in
     * nodes 0-3, and memory stays there unless cpuless is asked for. */
    int good = 1;
    for (unsigned nt = 1; nt <= 64 && good; nt *= 2) {
        ng_plan_request req = {.ntasks = nt};
        ng_policy_parse("local", &req.policy, err, sizeof err);
        ng_plan *p = NULL;
        if (ng_plan_compute(t, &req, &p, err, sizeof err) < 0) {
            good = 0;
            break;
        }
        for (unsigned k = 0; k < nt && good; k++) {
            const ng_task_plan *tp = ng_plan_task(p, k);
            good = hwloc_bitmap_first(tp->mem_nodes) >= 0 && hwloc_bitmap_last(tp->mem_nodes) <= 3 &&
                   hwloc_bitmap_last(tp->cpus) <= 287 && !hwloc_bitmap_iszero(tp->cpus);
        }
        ng_plan_free(p);
    }
    ok(good, "gh200: plans of 1..64 tasks bind CPUs and memory of nodes 0-3 only");
    ng_topology_free(t);
}

static void check_gpu_details(void)
{
    ng_topology *t = load("xe8640-4xh100-spr8480-snc4.xml", 0, NULL);
    if (!ok(t != NULL, "xe8640 loads"))
        return;
    ok(ng_topology_gpu_by_busid(t, "4E:00.0") == 0, "busid without domain, upper case");
    ok(ng_topology_gpu_by_busid(t, "00000000:DB:00.0") == 3, "busid with 8-digit domain");
    ok(ng_topology_gpu_by_busid(t, "0000:ff:00.0") == -1, "unknown busid -> -1");
    ok(ng_topology_gpu_by_busid(t, "garbage") == -1 && ng_topology_gpu_by_busid(t, NULL) == -1,
       "malformed busid -> -1");
    const ng_gpu_info *g = ng_topology_gpu(t, 0);
    const ng_numa_info *n3 = ng_topology_numa_by_os(t, 3);
    ok(g && n3 && hwloc_bitmap_isequal(g->cpus, n3->cpus) && !hwloc_bitmap_iszero(g->cpus),
       "xe8640 GPU 4e:00.0 local CPUs = NUMA 3's CPUs (%s)", g ? fmt(g->cpus) : "");
    ok(g && g->vendor == NG_VENDOR_NVIDIA && g->pci_vendor_id == 0x10de, "xe8640 GPU 0 is NVIDIA");
    ng_topology_free(t);

    t = load("corona-rome-8xmi50-rsmi.xml", 0, NULL);
    if (t) {
        g = ng_topology_gpu(t, 0);
        int rsmi2 = 0;
        for (unsigned i = 0; g && i < g->n_os_devices; i++)
            rsmi2 |= !strcmp(g->os_devices[i], "rsmi2");
        ok(g && !strcmp(g->pci_bus_id, "0000:03:00.0") && rsmi2 && g->os_devices[g->n_os_devices] == NULL,
           "corona-rome: lowest bus id carries rsmi2; names NULL-terminated");
        ok(g && g->vendor == NG_VENDOR_AMD, "corona-rome GPU is AMD");
        ng_topology_free(t);
    }
    /* hwloc 1.x and 2.x exports of the same machine agree. */
    ng_topology *a = load("juwels-booster-4xa100-epyc7402-nps4-hwloc1.xml", 0, NULL);
    ng_topology *b = load("juwels-booster-4xa100-epyc7402-nps4.xml", 0, NULL);
    int same = a && b && ng_topology_gpu_count(a) == ng_topology_gpu_count(b) &&
               ng_topology_numa_count(a) == ng_topology_numa_count(b);
    for (unsigned i = 0; same && i < ng_topology_gpu_count(a); i++)
        same = !strcmp(ng_topology_gpu(a, i)->pci_bus_id, ng_topology_gpu(b, i)->pci_bus_id) &&
               hwloc_bitmap_isequal(ng_topology_gpu(a, i)->cpus, ng_topology_gpu(b, i)->cpus);
    ok(same, "juwels: 1.x XML and 2.x XML give the same GPUs and locality");
    ng_topology_free(a);
    ng_topology_free(b);
}

static void check_disallowed(void)
{
    ng_topology *t = load("opteron-8s-cgroup-cpuset-disallowed.xml", 1, NULL);
    if (ok(t != NULL, "opteron loads with include_disallowed")) {
        ok(ng_topology_numa_count(t) == 8, "opteron include_disallowed: 8 NUMA nodes (got %u)",
           ng_topology_numa_count(t));
        ok(hwloc_bitmap_weight(ng_topology_allowed_cpus(t)) == 15, "opteron include_disallowed: 15 PUs usable");
        ng_topology_free(t);
    }
    t = load("opteron-8s-cgroup-cpuset-disallowed.xml", 0, NULL);
    if (t) {
        ok(set_is(ng_topology_allowed_cpus(t), "0-3,5-6,12-15"), "opteron: allowed cpus 0-3,5-6,12-15");
        ng_topology_free(t);
    }
    t = load("sgi-uv2000-disallowed-gpus.xml", 1, NULL);
    if (ok(t != NULL, "sgi loads with include_disallowed") && ng_topology_gpu_count(t) == 2) {
        ok(set_is(ng_topology_gpu(t, 0)->cpus, "32-39") && set_is(ng_topology_gpu(t, 0)->numa_nodes, "4"),
           "sgi include_disallowed: GPU 0 local to PUs 32-39, node 4 (got %s / %s)",
           fmt(ng_topology_gpu(t, 0)->cpus), fmt(ng_topology_gpu(t, 0)->numa_nodes));
        ok(set_is(ng_topology_gpu(t, 1)->cpus, "56-63") && set_is(ng_topology_gpu(t, 1)->numa_nodes, "7"),
           "sgi include_disallowed: GPU 1 local to PUs 56-63, node 7");
    }
    ng_topology_free(t);
}

/* ------------------------------------------------------------------ */
/* Errors, live machine, sysfs evidence                                 */
/* ------------------------------------------------------------------ */

static void check_errors(void)
{
    ng_topology *t = (ng_topology *)&t;
    ng_topology_options o = {.xml_path = TOPO_DIR "/no-such-file.xml"};
    err[0] = '\0';
    ok(ng_topology_load(&t, &o, err, sizeof err) == -1 && t == NULL && strstr(err, "no-such-file.xml") &&
       strstr(err, "No such file"), "missing XML fails: %s", err);
    char tmp[] = "/tmp/ng-topo-XXXXXX";
    int fd = mkstemp(tmp);
    const char junk[] = "this is <not> an hwloc topology\n";
    if (fd >= 0) {
        ok(write(fd, junk, sizeof junk - 1) == (ssize_t)(sizeof junk - 1), "garbage file written");
        close(fd);
    }
    o.xml_path = tmp;
    err[0] = '\0';
    t = (ng_topology *)&t;
    ok(ng_topology_load(&t, &o, err, sizeof err) == -1 && t == NULL && strstr(err, "XML"),
       "garbage XML fails: %s", err);
    ok(truncate(tmp, 0) == 0, "garbage file emptied");
    err[0] = '\0';
    ok(ng_topology_load(&t, &o, err, sizeof err) == -1 && t == NULL && err[0], "empty XML fails: %s", err);
    unlink(tmp);
    ok(ng_topology_load(NULL, &o, NULL, 0) == -1, "NULL out pointer fails, NULL err allowed");
    ok(ng_topology_numa_count(NULL) == 0 && ng_topology_gpu_count(NULL) == 0 &&
       ng_topology_gpu_by_busid(NULL, "00:00.0") == -1 && !ng_topology_is_this_system(NULL),
       "accessors accept NULL");
    ng_topology_free(NULL);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void check_live(void)
{
    ng_topology *t = NULL;
    double t0 = now_ms();
    int rc = ng_topology_load(&t, NULL, err, sizeof err);
    double ms = now_ms() - t0;
    if (!ok(rc == 0 && t, "live topology loads (%.1f ms) %s", ms, rc ? err : ""))
        return;
    ok(ng_topology_is_this_system(t), "live topology is this system");
    hwloc_bitmap_t online = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    char buf[4096] = "";
    FILE *f = fopen("/sys/devices/system/cpu/online", "r");
    if (f && fgets(buf, sizeof buf, f))
        buf[strcspn(buf, "\n")] = '\0';
    if (f)
        fclose(f);
    ng_list_parse(buf, online, 1u << 20, NULL, 0);
    ok(!hwloc_bitmap_iszero(ng_topology_allowed_cpus(t)) &&
       hwloc_bitmap_isincluded(ng_topology_allowed_cpus(t), online), "live allowed cpus %s within online %s",
       fmt(ng_topology_allowed_cpus(t)), buf);
    for (unsigned k = 0; k < ng_topology_numa_count(t); k++)
        hwloc_bitmap_set(nodes, ng_topology_numa(t, k)->os_index);
    buf[0] = '\0';
    f = fopen("/sys/devices/system/node/has_memory", "r");
    if (f && fgets(buf, sizeof buf, f))
        buf[strcspn(buf, "\n")] = '\0';
    if (f)
        fclose(f);
    hwloc_bitmap_t mem = hwloc_bitmap_alloc();
    if (buf[0] && ng_list_parse(buf, mem, 1u << 20, NULL, 0) == 0)
        ok(hwloc_bitmap_isincluded(mem, nodes), "live: every kernel node with memory (%s) reported (%s)",
           buf, fmt(nodes));
    ok(ng_topology_numa(t, 0)->has_cpus && ng_topology_distance(t, ng_topology_numa(t, 0)->os_index,
                                                                 ng_topology_numa(t, 0)->os_index) == 10,
       "live: first node has CPUs, local distance 10");
    ng_topology_free(t);
    hwloc_bitmap_free(mem);
    hwloc_bitmap_free(online);
    hwloc_bitmap_free(nodes);
    /* Load times for the report. */
    t0 = now_ms();
    for (int i = 0; i < 10; i++) {
        ng_topology_load(&t, NULL, NULL, 0);
        ng_topology_free(t);
    }
    tap_diag("live load: %.2f ms average over 10", (now_ms() - t0) / 10);
    t0 = now_ms();
    for (int i = 0; i < 10; i++)
        ng_topology_free(load("jusuf-1xv100-epyc7742-nps4-hwloc1.xml", 0, NULL));
    tap_diag("largest XML (jusuf, 323 KB) load: %.2f ms average over 10", (now_ms() - t0) / 10);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* A fake sysfs/procfs tree under a temporary fsroot. */
static void put(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void link_to(const char *root, const char *rel, const char *target)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", root, rel);
    put(root, rel, "");
    unlink(path);
    ok(symlink(target, path) == 0, "fake sysfs link %s", rel);
}

/* deep-esb (16 PUs, one V100 at 0000:65:00.0) plus kernel-only nodes:
 * 1 = GPU coherent memory (numa_status), 2 = hmem DAX, 3 = CXL DAX. */
static void check_fsroot_evidence(void)
{
    char root[] = "/tmp/ng-fsroot-XXXXXX";
    if (!ok(mkdtemp(root) != NULL, "temporary fsroot"))
        return;
    put(root, "/sys/devices/system/cpu/online", "0-15\n");
    put(root, "/sys/devices/system/node/online", "0-3\n");
    put(root, "/sys/devices/system/node/has_memory", "0-3\n");
    put(root, "/sys/devices/system/node/has_cpu", "0\n");
    put(root, "/sys/devices/system/node/node0/cpulist", "0-15\n");
    put(root, "/sys/devices/system/node/node0/distance", "10 80 30 40\n");
    for (int n = 1; n <= 3; n++) {
        char rel[128], txt[128];
        snprintf(rel, sizeof rel, "/sys/devices/system/node/node%d/cpulist", n);
        put(root, rel, "\n");
        snprintf(rel, sizeof rel, "/sys/devices/system/node/node%d/meminfo", n);
        snprintf(txt, sizeof txt, "Node %d MemTotal:        %d kB\nNode %d MemFree: 1 kB\n", n, n * 1048576, n);
        put(root, rel, txt);
    }
    put(root, "/proc/driver/nvidia/gpus/0000:65:00.0/numa_status", "Node:  1\nOffline memory: 0\n");
    put(root, "/proc/self/status", "Name:\ttest\nMems_allowed_list:\t0-3\n");
    put(root, "/sys/devices/platform/hmem.0/dax0.0/target_node", "2\n");
    put(root, "/sys/devices/platform/ACPI0017:00/root0/decoder0.0/region0/dax_region0/dax1.0/target_node", "3\n");
    link_to(root, "/sys/bus/dax/devices/dax0.0", "../../../devices/platform/hmem.0/dax0.0");
    link_to(root, "/sys/bus/dax/devices/dax1.0",
            "../../../devices/platform/ACPI0017:00/root0/decoder0.0/region0/dax_region0/dax1.0");

    ng_topology *t = load("deep-esb-1s-silver4215-1xv100-hwloc1.xml", 0, root);
    if (ok(t != NULL, "deep-esb loads with a matching fake fsroot")) {
        ok(ng_topology_is_this_system(t), "XML matching the fsroot's CPUs and nodes is this system");
        ok(ng_topology_numa_count(t) == 4, "kernel-only nodes 1-3 added (got %u)", ng_topology_numa_count(t));
        const ng_numa_info *n1 = ng_topology_numa_by_os(t, 1), *n2 = ng_topology_numa_by_os(t, 2),
                           *n3 = ng_topology_numa_by_os(t, 3);
        ok(n1 && !n1->has_cpus && n1->kind == NG_MEM_GPU && n1->memory_bytes == 1073741824ull &&
           hwloc_bitmap_iszero(n1->cpus), "node 1: CPU-less GPU memory, 1 GiB (numa_status)");
        ok(n2 && !n2->has_cpus && n2->kind == NG_MEM_HBM, "node 2: hmem DAX -> HBM");
        ok(n3 && !n3->has_cpus && n3->kind == NG_MEM_CXL, "node 3: CXL region DAX -> CXL");
        const ng_gpu_info *g = ng_topology_gpu(t, 0);
        ok(g && set_is(g->memory_nodes, "1") && set_is(g->numa_nodes, "0"),
           "GPU 0000:65:00.0 owns memory node 1, local node 0");
        ok(ng_topology_distance(t, 0, 1) == 80 && ng_topology_distance(t, 0, 3) == 40,
           "distances to hidden nodes from sysfs");
        ng_topology_free(t);
    }
    put(root, "/sys/devices/system/cpu/online", "0-7\n");
    t = load("deep-esb-1s-silver4215-1xv100-hwloc1.xml", 0, root);
    ok(t && !ng_topology_is_this_system(t) && ng_topology_numa_count(t) == 1,
       "XML with other CPUs than the fsroot is not this system; no sysfs nodes added");
    ng_topology_free(t);
    t = load("knl-7250-quad-flat-hwloc24.xml", 0, "/");
    ok(t && !ng_topology_is_this_system(t), "knl XML is not this 2-CPU machine");
    ng_topology_free(t);
    ok(nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0, "fake fsroot removed");
}

int main(void)
{
    check_index();
    check_kinds();
    check_numa_details();
    check_gpu_details();
    check_gh200();
    check_disallowed();
    check_errors();
    check_fsroot_evidence();
    check_live();
    return tap_done();
}
