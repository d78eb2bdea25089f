/* Memory nodes of a task (lib/plan/mem.c): for each policy kind, with and
 * without `cpuless`, the exact mem_nodes, mem_mode and mem_first of every
 * task, on real topologies.
 *
 *  - local / prefer: the nodes of the task's cores; prefer also names the
 *    GPU's CPU-bearing node and lists it first (mem_first), local lists the
 *    node holding most of its cores first (ties: the first in line).
 *  - interleave / weighted: every CPU-bearing node, with cpuless every node,
 *    or the nodes named; a named node the machine lacks is a warning and
 *    is ignored; nothing left is an error.
 *  - none: no memory policy, no CPU binding.
 *  - cpuless: GPU memory nodes only through the task's own GPU (GH200
 *    model, witherspoon), HBM / NVM nodes hwloc places beside the task's
 *    CPUs (Xeon Max flat, a QEMU machine whose CPUs 4-5 have only HBM and
 *    NVM beside them and borrow DRAM node 0).
 *
 * Through ng_plan_compute, and through ngi_plan_memory on slices set by
 * hand (a task whose cores left its GPU's node). Expected sets were
 * derived from the topologies (lstopo --input) and match `numaguard plan
 * --topology FILE --json`. Runs from the repository root. */
#include "private/plan.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XE "xe8640-4xh100-spr8480-snc4.xml"
#define JUWELS "juwels-booster-4xa100-epyc7402-nps4.xml"
#define GH200 "gh200-4superchip-synthetic.xml"
#define WITHERSPOON "witherspoon-p9-6xv100-gpumem-numa.xml"
#define XEONMAX "xeonmax-9462-2s-snc4-hbm-flat.xml"
#define QEMU "qemu-heteromem-dram-hbm-nvm.xml"

static char err[512];

static ng_topology *load(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "tests/topologies/%s", file);
    ng_topology_options o = {.xml_path = path};
    ng_topology *t = NULL;
    if (ng_topology_load(&t, &o, err, sizeof err) < 0)
        tap_diag("load %s: %s", path, err);
    return t;
}

static const char *fmt(hwloc_const_bitmap_t s)
{
    static char buf[8][512];
    static int slot;
    char *b = buf[slot++ & 7];
    if (!s)
        return "(null)";
    ng_list_format(s, b, 512);
    return b;
}

/* One GPU per task: "0;1;;3" (empty = CPU-only); NULL = no GPUs. */
typedef struct request {
    ng_plan_request req;
    unsigned count[64], offset[64];
    int gpus[64];
    hwloc_bitmap_t allowed;
} request;

static int request_init(request *r, unsigned nt, const char *task_gpus, const char *cpus,
                        unsigned c, const char *policy)
{
    memset(r, 0, sizeof *r);
    r->req.ntasks = nt;
    r->req.cpus_per_task = c;
    if (ng_policy_parse(policy, &r->req.policy, err, sizeof err) < 0) {
        tap_diag("policy %s: %s", policy, err);
        return -1;
    }
    if (task_gpus) {
        const char *p = task_gpus;
        unsigned pos = 0;
        for (unsigned t = 0; t < nt; t++) {
            r->offset[t] = pos;
            if (*p && *p != ';')
                r->gpus[pos++] = (int)strtol(p, (char **)&p, 10);
            r->count[t] = pos - r->offset[t];
            if (*p == ';')
                p++;
        }
        r->req.task_gpu_count = r->count;
        r->req.task_gpu_offset = r->offset;
        r->req.task_gpus = r->gpus;
    }
    if (cpus) {
        r->allowed = hwloc_bitmap_alloc();
        hwloc_bitmap_list_sscanf(r->allowed, cpus);
        r->req.allowed_cpus = r->allowed;
    }
    return 0;
}

static ng_plan *plan(const ng_topology *topo, unsigned nt, const char *task_gpus, const char *cpus,
                     unsigned c, const char *policy)
{
    request r;
    ng_plan *out = NULL;
    err[0] = '\0';
    if (request_init(&r, nt, task_gpus, cpus, c, policy) == 0 &&
        ng_plan_compute(topo, &r.req, &out, err, sizeof err) < 0)
        out = NULL;
    hwloc_bitmap_free(r.allowed);
    return out;
}

/* "mode nodes first" per task, joined by '|': "bind 2-3 2|...". */
static const char *memory_of(const ng_plan *pl)
{
    static char buf[2048];
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned t = 0; pl && t < ng_plan_task_count(pl); t++) {
        const ng_task_plan *tp = ng_plan_task(pl, t);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s %s %d", t ? "|" : "",
                              ng_mem_mode_name(tp->mem_mode), tp->mem_nodes ? fmt(tp->mem_nodes) : "-",
                              tp->mem_first);
    }
    return buf;
}

static const char *warnings(const ng_plan *pl)
{
    static char buf[1024];
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned i = 0; pl && i < ng_plan_warning_count(pl); i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "|" : "", ng_plan_warning(pl, i));
    return buf;
}

/* Plan and compare every task's memory (and the warnings) exactly. */
static void expect(const ng_topology *topo, const char *what, unsigned nt, const char *task_gpus,
                   const char *cpus, unsigned c, const char *policy, const char *want,
                   const char *want_warn)
{
    ng_plan *pl = plan(topo, nt, task_gpus, cpus, c, policy);
    if (!pl)
        tap_diag("%s: plan failed: %s", what, err);
    const char *got = memory_of(pl), *w = warnings(pl);
    int pass = pl && strcmp(got, want) == 0 && strcmp(w, want_warn) == 0;
    ok(pass, "%s, %s: %s%s%s", what, policy, want, *want_warn ? "; warns: " : "", want_warn);
    if (pl && !pass)
        tap_diag("got %s; warnings '%s'", got, w);
    ng_plan_free(pl);
}

/* xe8640: GPU 0 on node 3, 1 on node 1, 2 on node 7, 3 on node 5. With
 * -c 56 each task owns its GPU's node and the one beside it (the node
 * before it in line: 2-3, 0-1, 6-7, 4-5, 14 cores in each). */
static void test_kinds(const ng_topology *xe)
{
    const char *gpus = "0;1;2;3";
    expect(xe, "xe8640 4x1 GPU -c 56 (two nodes each, 14 cores in each)", 4, gpus, NULL, 56, "local",
           "bind 2-3 2|bind 0-1 0|bind 6-7 6|bind 4-5 4", "");
    expect(xe, "xe8640 4x1 GPU -c 56", 4, gpus, NULL, 56, "prefer",
           "preferred_many 2-3 3|preferred_many 0-1 1|preferred_many 6-7 7|preferred_many 4-5 5", "");
    expect(xe, "xe8640 4x1 GPU -c 56", 4, gpus, NULL, 56, "interleave",
           "interleave 0-7 -1|interleave 0-7 -1|interleave 0-7 -1|interleave 0-7 -1", "");
    expect(xe, "xe8640 4x1 GPU -c 56", 4, gpus, NULL, 56, "weighted",
           "weighted_interleave 0-7 -1|weighted_interleave 0-7 -1|weighted_interleave 0-7 -1|"
           "weighted_interleave 0-7 -1", "");
    expect(xe, "xe8640 4x1 GPU -c 56", 4, gpus, NULL, 56, "interleave:1,3",
           "interleave 1,3 -1|interleave 1,3 -1|interleave 1,3 -1|interleave 1,3 -1", "");
    expect(xe, "xe8640 4x1 GPU -c 56", 4, gpus, NULL, 56, "weighted:5-6",
           "weighted_interleave 5-6 -1|weighted_interleave 5-6 -1|weighted_interleave 5-6 -1|"
           "weighted_interleave 5-6 -1", "");
    expect(xe, "xe8640 2 CPU-only tasks", 2, NULL, NULL, 0, "interleave:0,99",
           "interleave 0 -1|interleave 0 -1",
           "--numa-policy names NUMA node 99, which this machine does not have; ignored");
    expect(xe, "xe8640 4x1 GPU -c 56", 4, gpus, NULL, 56, "none",
           "none - -1|none - -1|none - -1|none - -1", "");
    /* cpuless on a machine without CPU-less nodes changes nothing. */
    expect(xe, "xe8640 4x1 GPU -c 56", 4, gpus, NULL, 56, "local,cpuless",
           "bind 2-3 2|bind 0-1 0|bind 6-7 6|bind 4-5 4", "");
    expect(xe, "xe8640 4x1 GPU -c 28 (the GPU's node only)", 4, gpus, NULL, 28, "local",
           "bind 3 3|bind 1 1|bind 7 7|bind 5 5", "");

    ng_plan *pl = plan(xe, 2, "0;1", NULL, 28, "none");
    ok(pl && !ng_plan_task(pl, 0)->cpus && !ng_plan_task(pl, 1)->cpus &&
       ng_plan_task(pl, 0)->threads == 14, "none: no CPUs to bind either, threads still sized (14)");
    ng_plan_free(pl);
    pl = plan(xe, 1, NULL, NULL, 0, "interleave:99");
    ok(!pl && strcmp(err, "task 0: the policy leaves no NUMA node for memory") == 0,
       "interleave:99 only: '%s'", err);
}

static void test_first(const ng_topology *xe)
{
    /* juwels -c 18: 9 cores each, 6 on the GPU's node and 3 on the node
     * before it in line: local lists the node with most cores first. */
    ng_topology *j = load(JUWELS);
    if (j) {
        expect(j, "juwels 4x1 GPU -c 18 (6 cores home + 3 beside)", 4, "0;1;2;3", NULL, 18, "local",
               "bind 2-3 3|bind 0-1 1|bind 6-7 7|bind 4-5 5", "");
        expect(j, "juwels 4x1 GPU -c 18", 4, "0;1;2;3", NULL, 18, "prefer",
               "preferred_many 2-3 3|preferred_many 0-1 1|preferred_many 6-7 7|preferred_many 4-5 5", "");
    }
    ng_topology_free(j);
    /* Only nodes 0-1 allowed; GPU 2 (node 7) is remote: prefer still names
     * node 7, first; local stays on the task's own node. */
    expect(xe, "xe8640 nodes 0-1, task 1 on remote GPU 2", 2, "1;2", "0-27,112-139", 0, "prefer",
           "preferred_many 1 1|preferred_many 0,7 7",
           "GPU 0000:cb:00.0 (on NUMA node 7): no allowed core is local to it; its task uses NUMA node 0, "
           "the nearest with the most cores to spare");
    expect(xe, "xe8640 nodes 0-1, task 1 on remote GPU 2", 2, "1;2", "0-27,112-139", 0, "local",
           "bind 1 1|bind 0 0",
           "GPU 0000:cb:00.0 (on NUMA node 7): no allowed core is local to it; its task uses NUMA node 0, "
           "the nearest with the most cores to spare");
    /* CPU-only tasks: prefer has no GPU to name, it is local's node set. */
    expect(xe, "xe8640 2 CPU-only tasks", 2, NULL, NULL, 0, "prefer",
           "preferred_many 0-3 0|preferred_many 4-7 4", "");
}

/* The planner up to its slices, for ngi_plan_memory on slices set by hand. */
typedef struct fixture {
    ngi_planner p;
    request r;
} fixture;

static int fixture_init(fixture *f, const ng_topology *topo, unsigned nt, const char *task_gpus,
                        const char *policy)
{
    memset(f, 0, sizeof *f);
    if (request_init(&f->r, nt, task_gpus, NULL, 0, policy) < 0)
        return -1;
    f->p.topo = topo;
    f->p.req = &f->r.req;
    f->p.plan = calloc(1, sizeof *f->p.plan);
    if (!f->p.plan || ngi_plan_build_domains(&f->p, err, sizeof err) < 0)
        return -1;
    f->p.plan->ntasks = nt;
    f->p.plan->tasks = calloc(nt, sizeof *f->p.plan->tasks);
    f->p.slice = calloc(nt, sizeof *f->p.slice);
    for (unsigned t = 0; t < nt; t++)
        f->p.slice[t] = hwloc_bitmap_alloc();
    return 0;
}

static void fixture_free(fixture *f)
{
    ngi_plan_free_domains(&f->p);
    for (unsigned t = 0; f->p.slice && t < f->r.req.ntasks; t++)
        hwloc_bitmap_free(f->p.slice[t]);
    free(f->p.slice);
    if (f->p.plan)
        free(f->p.plan->tasks);
    free(f->p.plan);
    hwloc_bitmap_free(f->r.allowed);
}

/* Task 0 has GPU 0 (node 3); its slice is @units (xe8640: unit = core). */
static void hand_slice(const ng_topology *xe, const char *policy, const char *units,
                       const char *want_mode, const char *want_nodes, int want_first)
{
    fixture f;
    if (fixture_init(&f, xe, 1, "0", policy) < 0) {
        ok(0, "fixture for %s: %s", policy, err);
        fixture_free(&f);
        return;
    }
    hwloc_bitmap_list_sscanf(f.p.slice[0], units);
    hwloc_bitmap_t mems = hwloc_bitmap_alloc();
    ng_mem_mode m = ngi_plan_memory(&f.p, 0, mems);
    int first = f.p.plan->tasks[0].mem_first;
    ok(strcmp(ng_mem_mode_name(m), want_mode) == 0 && strcmp(fmt(mems), want_nodes) == 0 &&
       first == want_first, "GPU 0 (node 3), cores %s, %s: %s %s, first %d (got %s %s %d)", units,
       policy, want_mode, want_nodes, want_first, ng_mem_mode_name(m), fmt(mems), first);
    hwloc_bitmap_free(mems);
    fixture_free(&f);
}

static void test_hand_slices(const ng_topology *xe)
{
    /* Cores wholly off the GPU's node (node 0). */
    hand_slice(xe, "local", "0-3", "bind", "0", 0);
    hand_slice(xe, "prefer", "0-3", "preferred_many", "0,3", 3);
    /* 4 cores on node 0, 1 on node 3: local's first is the node with most. */
    hand_slice(xe, "local", "0-3,42", "bind", "0,3", 0);
    hand_slice(xe, "prefer", "0-3,42", "preferred_many", "0,3", 3);
    /* 2 on node 1, 2 on node 3: a tie goes to the first in line (node 1). */
    hand_slice(xe, "local", "26-27,42-43", "bind", "1,3", 1);
    /* 1 on node 4, 3 on node 6: most wins over line order. */
    hand_slice(xe, "local", "56,84-86", "bind", "4,6", 6);
    hand_slice(xe, "interleave", "0-3", "interleave", "0-7", -1);
    hand_slice(xe, "weighted:2", "0-3", "weighted_interleave", "2", -1);
    hand_slice(xe, "none", "0-3", "none", "", -1);
}

/* GPU memory nodes: only through the task's GPU, and only with cpuless. */
static void test_gpu_memory(void)
{
    ng_topology *gh = load(GH200);
    if (gh) {
        const char *g = "0;1;2;3";
        expect(gh, "GH200 4x1 GPU", 4, g, NULL, 0, "local", "bind 0 0|bind 1 1|bind 2 2|bind 3 3", "");
        expect(gh, "GH200 4x1 GPU", 4, g, NULL, 0, "local,cpuless",
               "bind 0,4-11 0|bind 1,12-19 1|bind 2,20-27 2|bind 3,28-35 3", "");
        expect(gh, "GH200 4x1 GPU", 4, g, NULL, 0, "prefer,cpuless",
               "preferred_many 0,4-11 0|preferred_many 1,12-19 1|preferred_many 2,20-27 2|"
               "preferred_many 3,28-35 3", "");
        /* Task 0 has GPU 2 and stays on its Grace (a GPU task keeps to its
         * GPU's package): GPU 2's memory (20-27); the CPU-only task gets the
         * other three Graces and no GPU memory at all. */
        expect(gh, "GH200 task 0 GPU 2, task 1 CPU-only", 2, "2;", NULL, 0, "local,cpuless",
               "bind 2,20-27 2|bind 0-1,3 0", "");
        /* With wide, task 0 spills onto node 1: it still gets GPU 2's memory
         * (20-27), not that of node 1's GPU (12-19); the CPU-only task on
         * nodes 0 and 3 gets no GPU memory. */
        expect(gh, "GH200 task 0 GPU 2, task 1 CPU-only", 2, "2;", NULL, 0, "local,cpuless,wide",
               "bind 1-2,20-27 1|bind 0,3 0", "");
        expect(gh, "GH200 2 CPU-only tasks (no GPU: no GPU memory)", 2, NULL, NULL, 0, "local,cpuless",
               "bind 0-1 0|bind 2-3 2", "");
        expect(gh, "GH200 1 task", 1, "0", NULL, 0, "interleave", "interleave 0-3 -1", "");
        expect(gh, "GH200 1 task", 1, "0", NULL, 0, "interleave,cpuless", "interleave 0-35 -1", "");
        expect(gh, "GH200 1 task", 1, "0", NULL, 0, "weighted,cpuless", "weighted_interleave 0-35 -1", "");
        expect(gh, "GH200 1 task (a named GPU memory node exists)", 1, "0", NULL, 0, "interleave:0,12",
               "interleave 0,12 -1", "");
    }
    ng_topology_free(gh);

    ng_topology *w = load(WITHERSPOON);
    if (w) {
        const char *g = "0;1;2;3;4;5";
        expect(w, "witherspoon 6x1 GPU", 6, g, NULL, 0, "prefer",
               "preferred_many 0 0|preferred_many 0 0|preferred_many 0 0|preferred_many 8 8|"
               "preferred_many 8 8|preferred_many 8 8", "");
        expect(w, "witherspoon 6x1 GPU", 6, g, NULL, 0, "prefer,cpuless",
               "preferred_many 0,255 0|preferred_many 0,254 0|preferred_many 0,253 0|"
               "preferred_many 8,252 8|preferred_many 8,251 8|preferred_many 8,250 8", "");
        expect(w, "witherspoon 6x1 GPU", 6, g, NULL, 0, "local,cpuless",
               "bind 0,255 0|bind 0,254 0|bind 0,253 0|bind 8,252 8|bind 8,251 8|bind 8,250 8", "");
        /* one task on socket 0's 4 cores: socket 1's 4 idle, said (rule 9) */
        expect(w, "witherspoon 1 task", 1, "0", NULL, 0, "interleave", "interleave 0,8 -1",
               "4 allocated cores stay idle: --cpus-per-task 32 or the modifier wide would use them");
        expect(w, "witherspoon 1 task", 1, "0", NULL, 0, "interleave,cpuless",
               "interleave 0,8,250-255 -1", "4 allocated cores stay idle: --cpus-per-task 32 or the modifier wide would use them");
    }
    ng_topology_free(w);
}

/* HBM / NVM nodes beside the CPUs: added with cpuless, per task. */
static void test_cpuless_beside(void)
{
    ng_topology *x = load(XEONMAX);
    if (x) {
        expect(x, "Xeon Max flat, 8 CPU-only tasks", 8, NULL, NULL, 0, "local",
               "bind 0 0|bind 1 1|bind 2 2|bind 3 3|bind 4 4|bind 5 5|bind 6 6|bind 7 7", "");
        expect(x, "Xeon Max flat, 8 CPU-only tasks", 8, NULL, NULL, 0, "local,cpuless",
               "bind 0,8 0|bind 1,9 1|bind 2,10 2|bind 3,11 3|bind 4,12 4|bind 5,13 5|bind 6,14 6|"
               "bind 7,15 7", "");
        expect(x, "Xeon Max flat, 2 CPU-only tasks", 2, NULL, NULL, 0, "prefer,cpuless",
               "preferred_many 0-3,8-11 0|preferred_many 4-7,12-15 4", "");
        expect(x, "Xeon Max flat, 1 task", 1, NULL, NULL, 0, "interleave", "interleave 0-7 -1", "");
        expect(x, "Xeon Max flat, 1 task", 1, NULL, NULL, 0, "weighted,cpuless",
               "weighted_interleave 0-15 -1", "");
    }
    ng_topology_free(x);

    /* CPUs 0-1: DRAM 0 + NVM 8 beside; CPUs 2-3: DRAM 1 + HBM 4 + NVM 6;
     * CPUs 4-5: only HBM 2 + NVM 9 beside, their DRAM is node 0's. */
    ng_topology *q = load(QEMU);
    if (q) {
        expect(q, "QEMU DRAM+HBM+NVM, 3 CPU-only tasks", 3, NULL, NULL, 0, "local",
               "bind 0 0|bind 0 0|bind 1 1", "");
        expect(q, "QEMU DRAM+HBM+NVM, 3 CPU-only tasks", 3, NULL, NULL, 0, "local,cpuless",
               "bind 0,8 0|bind 0,2,9 0|bind 1,4,6 1", "");
        expect(q, "QEMU DRAM+HBM+NVM, 1 task", 1, NULL, NULL, 0, "interleave", "interleave 0-1 -1", "");
        expect(q, "QEMU DRAM+HBM+NVM, 1 task", 1, NULL, NULL, 0, "interleave,cpuless",
               "interleave 0-2,4,6,8-9 -1", "");
    }
    ng_topology_free(q);
}

int main(void)
{
    ng_topology *xe = load(XE);
    if (!ok(xe != NULL, "xe8640 topology loads"))
        return tap_done();
    test_kinds(xe);
    test_first(xe);
    test_hand_slices(xe);
    test_gpu_memory();
    test_cpuless_beside();
    ng_topology_free(xe);
    return tap_done();
}
