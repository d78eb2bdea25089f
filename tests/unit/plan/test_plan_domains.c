/* The domain phase (lib/plan/domains.c) and GPU seating (lib/plan/seat.c).
 *
 * Domains: a 2990WX-like machine (4 dies, 2 with memory; made here with
 * hwloc's synthetic topology, exported as XML) attaches each memoryless die
 * to ONE memory node, ties spread one each; CPUs of an offline node (r630)
 * attach to the node that exists; the GH200 model has 4 domains (its 32
 * GPU-memory nodes have no CPUs). Seating: whole-node GPU jobs stay inside
 * their GPU's socket and keep its node; crowded homes share inside the
 * home before leaving the socket; a remote GPU with tied nearest nodes gets
 * one node. */
#include "private/plan.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[256];

static ng_topology *load_path(const char *path)
{
    ng_topology_options o = {.xml_path = path};
    ng_topology *t = NULL;
    if (ng_topology_load(&t, &o, err, sizeof err) < 0)
        tap_diag("load %s: %s", path, err);
    return t;
}

static ng_topology *load(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "tests/topologies/%s", file);
    return load_path(path);
}

/* 1 package, 4 dies of 4 cores, each die a NUMA node; dies 1 and 3 have no
 * memory; all off-die distances 16 (memoryless dies tie between 0 and 2). */
static int write_2990wx(const char *path)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) < 0)
        return -1;
    if (hwloc_topology_set_synthetic(t, "pack:1 numa:4 core:4 pu:1") < 0 || hwloc_topology_load(t) < 0) {
        hwloc_topology_destroy(t);
        return -1;
    }
    hwloc_obj_t nodes[4];
    hwloc_uint64_t dist[16];
    for (unsigned i = 0; i < 4; i++) {
        nodes[i] = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
        nodes[i]->attr->numanode.local_memory = i % 2 ? 0 : (1ull << 34);
        for (unsigned j = 0; j < 4; j++)
            dist[i * 4 + j] = i == j ? 10 : 16;
    }
    hwloc_distances_add_handle_t h = hwloc_distances_add_create(
        t, "NUMALatency", HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
    int rc = !h || hwloc_distances_add_values(t, h, 4, nodes, dist, 0) < 0 ||
             hwloc_distances_add_commit(t, h, 0) < 0 || hwloc_topology_export_xml(t, path, 0) < 0 ? -1 : 0;
    hwloc_topology_destroy(t);
    return rc;
}

static int build(ngi_planner *p, const ng_topology *topo, ng_plan_request *req)
{
    memset(p, 0, sizeof *p);
    p->topo = topo;
    p->req = req;
    return ngi_plan_build_domains(p, err, sizeof err);
}

static ng_plan *plan(const ng_topology *topo, unsigned nt, const char *task_gpus_csv,
                     const char *cpus, unsigned c, const char *policy)
{
    unsigned count[64], offset[64];
    int gpus[64];
    ng_plan_request req = {.ntasks = nt, .cpus_per_task = c};
    hwloc_bitmap_t allowed = NULL;
    ng_policy_parse(policy, &req.policy, NULL, 0);
    if (task_gpus_csv) {
        for (unsigned t = 0; t < nt; t++) {
            count[t] = 1;
            offset[t] = t;
            gpus[t] = task_gpus_csv[t] - '0';
        }
        req.task_gpu_count = count;
        req.task_gpu_offset = offset;
        req.task_gpus = gpus;
    }
    if (cpus) {
        allowed = hwloc_bitmap_alloc();
        hwloc_bitmap_list_sscanf(allowed, cpus);
        req.allowed_cpus = allowed;
    }
    ng_plan *out = NULL;
    if (ng_plan_compute(topo, &req, &out, err, sizeof err) < 0)
        tap_diag("plan: %s", err);
    hwloc_bitmap_free(allowed);
    return out;
}

static const char *fmt(hwloc_const_bitmap_t s)
{
    static char buf[4][256];
    static int slot;
    char *b = buf[slot++ & 3];
    ng_list_format(s, b, 256);
    return b;
}

static void check_2990wx(void)
{
    char path[] = "/tmp/h10-2990wx-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    if (!ok(fd >= 0 && write_2990wx(path) == 0, "2990WX-like XML written")) {
        unlink(path);
        return;
    }
    ng_topology *topo = load_path(path);
    unlink(path);
    if (!ok(topo != NULL, "2990WX-like topology loads"))
        return;
    ng_plan_request req = {.ntasks = 1};
    ngi_planner p;
    int rc = build(&p, topo, &req);
    ok(rc == 0 && p.n_doms == 2 && p.doms[0].count == 8 && p.doms[1].count == 8,
       "2990WX: 2 domains of 8 cores (a memory die + one memoryless die each; got %u)", p.n_doms);
    if (rc == 0 && p.n_doms == 2) {
        unsigned os0 = ng_topology_numa(topo, (unsigned)p.doms[0].mem)->os_index;
        unsigned os1 = ng_topology_numa(topo, (unsigned)p.doms[1].mem)->os_index;
        ok(os0 == 0 && os1 == 2, "2990WX: memoryless dies 1 and 3 attach to nodes 0 and 2 (tie spread; "
           "got %u, %u)", os0, os1);
    }
    ngi_plan_free_domains(&p);
    ng_plan *pl = plan(topo, 2, NULL, NULL, 0, "local");
    if (pl) {
        const ng_task_plan *a = ng_plan_task(pl, 0), *b = ng_plan_task(pl, 1);
        ok(hwloc_bitmap_weight(a->mem_nodes) == 1 && hwloc_bitmap_weight(b->mem_nodes) == 1 &&
           hwloc_bitmap_first(a->mem_nodes) == 0 && hwloc_bitmap_first(b->mem_nodes) == 2 &&
           hwloc_bitmap_weight(a->cpus) == 8 && hwloc_bitmap_weight(b->cpus) == 8,
           "2990WX, 2 tasks: a memory die + a memoryless die each, bound to one node (%s mem %s | %s mem %s)",
           fmt(a->cpus), fmt(a->mem_nodes), fmt(b->cpus), fmt(b->mem_nodes));
        ng_plan_free(pl);
    }
    pl = plan(topo, 4, NULL, NULL, 0, "prefer");
    if (pl) {
        int one = 1;
        for (unsigned t = 0; t < 4; t++)
            one &= hwloc_bitmap_weight(ng_plan_task(pl, t)->mem_nodes) == 1;
        ok(one, "2990WX, 4 tasks: every task prefers exactly one node");
        ng_plan_free(pl);
    }
    ng_topology_free(topo);
}

static void check_offline_node(void)
{
    ng_topology *topo = load("r630-offline-cpus-offline-node0.xml");
    if (!topo)
        return;
    ng_plan_request req = {.ntasks = 1};
    ngi_planner p;
    int rc = build(&p, topo, &req);
    ok(rc == 0 && p.n_doms == 1 && p.n_units == 17 &&
       ng_topology_numa(topo, (unsigned)p.doms[0].mem)->os_index == 1,
       "r630 (node 0 offline): one domain, node 1, with all 17 cores");
    ngi_plan_free_domains(&p);
    ng_topology_free(topo);
}

static void check_gh200_domains(void)
{
    ng_topology *topo = load("gh200-4superchip-synthetic.xml");
    if (!topo)
        return;
    ng_plan_request req = {.ntasks = 1};
    ngi_planner p;
    int rc = build(&p, topo, &req);
    ok(rc == 0 && p.n_doms == 4 && p.doms[3].count == 72 && p.dist[0 * 4 + 1] == 40,
       "gh200: 4 domains of 72 cores (GPU memory nodes hold none), distance 40 between them");
    ngi_plan_free_domains(&p);
    ng_topology_free(topo);
}

/* Every task inside its GPU's package and on its GPU's node. */
static void check_whole_node_seating(const char *file, unsigned nt, unsigned want_cores)
{
    ng_topology *topo = load(file);
    if (!topo)
        return;
    char gpus[17];
    for (unsigned t = 0; t < nt; t++)
        gpus[t] = (char)('0' + t);
    ng_plan *pl = plan(topo, nt, gpus, NULL, 0, "local");
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    int good = pl != NULL;
    for (unsigned t = 0; pl && t < nt && good; t++) {
        const ng_task_plan *tp = ng_plan_task(pl, t);
        const ng_gpu_info *g = ng_topology_gpu(topo, (unsigned)t);
        hwloc_obj_t pk = hwloc_get_next_obj_covering_cpuset_by_type(hw, g->cpus, HWLOC_OBJ_PACKAGE, NULL);
        good = hwloc_bitmap_intersects(tp->cpus, g->cpus) && pk && hwloc_bitmap_isincluded(tp->cpus, pk->cpuset) &&
               tp->threads == want_cores;
        if (!good)
            tap_diag("task %u: %s (GPU %s local %s), %u cores", t, fmt(tp->cpus), g->pci_bus_id,
                     fmt(g->cpus), tp->threads);
    }
    ok(good, "%s: %u tasks x 1 GPU, whole node: %u cores each, on the GPU's node, inside its package",
       file, nt, want_cores);
    ng_plan_free(pl);
    ng_topology_free(topo);
}

static void check_crowded_home(void)
{
    ng_topology *topo = load("dgx2-16xv100.xml");
    if (!topo)
        return;
    ng_plan *pl = plan(topo, 16, "0123456789:;<=>?", NULL, 0, "local");
    int good = pl != NULL;
    for (unsigned t = 0; pl && t < 16 && good; t++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, t);
        good = hwloc_bitmap_isincluded(ng_plan_task(pl, t)->cpus, g->cpus);
    }
    ok(good, "dgx2 16 tasks on 4 cores: every task shares inside its GPU's socket");
    ng_plan_free(pl);
    ng_topology_free(topo);
}

static void check_remote_tie(void)
{
    ng_topology *topo = load("xe8640-4xh100-spr8480-snc4.xml");
    if (!topo)
        return;
    /* GPUs 2 (cb, node 7) and 3 (db, node 5) with only socket 0's nodes 0 and
     * 2 allowed: all four socket-0 nodes are 21 away, so they tie. */
    ng_plan *pl = plan(topo, 2, "23", "0-13,28-41,112-125,140-153", 0, "local");
    if (pl) {
        const ng_task_plan *a = ng_plan_task(pl, 0), *b = ng_plan_task(pl, 1);
        ok(a->gpu_remote && b->gpu_remote && hwloc_bitmap_weight(a->mem_nodes) == 1 &&
           hwloc_bitmap_weight(b->mem_nodes) == 1 && !hwloc_bitmap_isequal(a->mem_nodes, b->mem_nodes),
           "remote GPUs with tied nearest nodes: one node each, spread (%s, %s)", fmt(a->mem_nodes),
           fmt(b->mem_nodes));
        ng_plan_free(pl);
    }
    ng_topology_free(topo);
}

int main(void)
{
    check_2990wx();
    check_offline_node();
    check_gh200_domains();
    check_whole_node_seating("xe8640-4xh100-spr8480-snc4.xml", 4, 28);
    check_whole_node_seating("juwels-booster-4xa100-epyc7402-nps4.xml", 4, 12);
    check_whole_node_seating("meluxina-4xa100-epyc7452-nps4-hwloc1.xml", 4, 16);
    check_whole_node_seating("gh200-4superchip-synthetic.xml", 4, 72);
    check_whole_node_seating("g4dn-metal-8xt4.xml", 8, 6);
    check_crowded_home();
    check_remote_tie();
    return tap_done();
}
