/* Phase (a): units and domains.
 *
 * A unit is a core (its allowed PUs together; SMT siblings never split), or
 * a lone PU when hwloc knows no core above it. A domain is a NUMA node with
 * memory and CPUs, holding its allowed units plus the memoryless units
 * attached to it. Memoryless units are CPUs whose NUMA node has no memory
 * (AMD 2990WX dies, a node with memory 0 while others have some) or no
 * CPU-bearing node at all (node offline, only HBM/NVM beside them; hwloc 2
 * omits NUMA nodes without memory, so a 2990WX's memoryless dies are Die or
 * Group objects under no node). Each group of them (per memoryless node, else
 * the largest object holding no CPU of a CPU-bearing node: the die, or the
 * package of an offline node) is attached to ONE node: the nearest by
 * distance, ties to the node with the fewest attached units so far (so two
 * memoryless dies tied between two memory dies go one each), then the lowest
 * index. Units are then laid out domain by domain (domains in hwloc order of
 * their first unit), which is the "line" the cutter cuts.
 *
 * CPU groups: inside a domain, runs of units of one L3 (when the L3 holds
 * more than one core and less than the domain) and of one memoryless group
 * are the cut's finest level (ngi_unit.grp, docs/planner.md).
 */
#include "private/plan.h"

#include <stdlib.h>
#include <string.h>

static int ancestor_index(hwloc_topology_t hw, hwloc_obj_t pu, hwloc_obj_type_t type)
{
    hwloc_obj_t o = hwloc_get_ancestor_obj_by_type(hw, type, pu);
    return o ? (int)o->logical_index : -1;
}

static hwloc_obj_t l3_of(hwloc_obj_t pu)
{
    for (hwloc_obj_t o = pu->parent; o; o = o->parent)
        if (o->type == HWLOC_OBJ_L3CACHE)
            return o;
    return NULL;
}

/* An L3 groups cores when it holds more than one: a per-core L3 (POWER7)
 * is no level of the cut. */
static int l3_group(hwloc_topology_t hw, hwloc_obj_t l3)
{
    if (!l3)
        return -1;
    int cores = hwloc_get_nbobjs_inside_cpuset_by_type(hw, l3->cpuset, HWLOC_OBJ_CORE);
    return cores > 1 ? (int)l3->logical_index : -1;
}

/* CPUs of the CPU-bearing NUMA nodes. */
static hwloc_bitmap_t node_cpus(const ng_topology *topo)
{
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    for (unsigned i = 0; all && i < ng_topology_numa_count(topo); i++)
        if (ng_topology_numa(topo, i)->has_cpus)
            hwloc_bitmap_or(all, all, ng_topology_numa(topo, i)->cpus);
    return all;
}

/* The largest object above @pu holding no CPU of a CPU-bearing node (its
 * memoryless die, or the package of an offline node): the units under it
 * attach together. */
static const void *memoryless_root(hwloc_obj_t pu, hwloc_const_bitmap_t with_node)
{
    hwloc_obj_t o = pu;
    while (o->parent && o->parent->cpuset && !hwloc_bitmap_intersects(o->parent->cpuset, with_node))
        o = o->parent;
    return o;
}

/* A CPU-bearing node counts as memoryless when it reports no memory while
 * another CPU-bearing node reports some (0 alone means "unknown"). */
static int node_has_memory(const ng_topology *topo, unsigned i)
{
    const ng_numa_info *n = ng_topology_numa(topo, i);
    if (!n->has_cpus)
        return 0;
    if (n->memory_bytes)
        return 1;
    for (unsigned k = 0; k < ng_topology_numa_count(topo); k++) {
        const ng_numa_info *o = ng_topology_numa(topo, k);
        if (o->has_cpus && o->memory_bytes)
            return 0;
    }
    return 1;
}

static int cpu_node_of(const ng_topology *topo, hwloc_const_bitmap_t pus)
{
    unsigned n = ng_topology_numa_count(topo);
    for (unsigned i = 0; i < n; i++) {
        const ng_numa_info *node = ng_topology_numa(topo, i);
        if (node->has_cpus && hwloc_bitmap_intersects(node->cpus, pus))
            return (int)i;
    }
    return -1;
}

/* Walk PUs in hwloc logical order and group the allowed ones by core. */
static int collect_units(ngi_planner *p, ngi_unit **out, unsigned *n_out, char *err, size_t errlen)
{
    hwloc_topology_t hw = ng_topology_hwloc(p->topo);
    hwloc_bitmap_t allowed = hwloc_bitmap_dup(ng_topology_allowed_cpus(p->topo));
    if (p->req->allowed_cpus)
        hwloc_bitmap_and(allowed, allowed, p->req->allowed_cpus);
    int npu = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
    ngi_unit *u = calloc(npu > 0 ? (size_t)npu : 1, sizeof *u);
    if (!u) {
        hwloc_bitmap_free(allowed);
        return ngi_fail(err, errlen, "out of memory");
    }
    unsigned n = 0;
    hwloc_obj_t last_core = NULL, last_l3 = NULL;
    int last_l3g = -1;
    for (int i = 0; i < npu; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, (unsigned)i);
        if (!hwloc_bitmap_isset(allowed, pu->os_index))
            continue;
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
        if (!core || core != last_core) {
            u[n].pus = hwloc_bitmap_alloc();
            u[n].pos = (unsigned)i;
            u[n].pkg = ancestor_index(hw, pu, HWLOC_OBJ_PACKAGE);
            hwloc_obj_t l3 = l3_of(pu);
            u[n].l3 = l3 ? (int)l3->logical_index : -1;
            /* Units come in hwloc order: an L3's cores are consecutive. */
            if (l3 != last_l3) {
                last_l3 = l3;
                last_l3g = l3_group(hw, l3);
            }
            u[n].l3g = last_l3g;
            n++;
            last_core = core;
        }
        hwloc_bitmap_set(u[n - 1].pus, pu->os_index);
    }
    hwloc_bitmap_free(allowed);
    *out = u;
    *n_out = n;
    if (n == 0)
        return ngi_fail(err, errlen, "no usable CPU: the allowed CPU set does not "
                                    "intersect this topology's CPUs");
    hwloc_bitmap_t with_node = node_cpus(p->topo);
    if (!with_node)
        return ngi_fail(err, errlen, "out of memory");
    for (unsigned k = 0; k < n; k++) {
        u[k].node = cpu_node_of(p->topo, u[k].pus);
        hwloc_obj_t pu = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, u[k].pos);
        u[k].root = u[k].node < 0 && pu ? memoryless_root(pu, with_node) : NULL;
        unsigned w = (unsigned)hwloc_bitmap_weight(u[k].pus);
        if (w > p->max_smt)
            p->max_smt = w;
    }
    hwloc_bitmap_free(with_node);
    return 0;
}

unsigned ngi_plan_node_dist(const ngi_planner *p, int a, int b, int same_pkg)
{
    if (a == b)
        return 10;
    unsigned d = ng_topology_distance(p->topo, ng_topology_numa(p->topo, (unsigned)a)->os_index,
                                      ng_topology_numa(p->topo, (unsigned)b)->os_index);
    if (d >= 10)
        return d;
    return same_pkg ? 20 : 30;
}

/* Nodes hwloc places next to @pus (their memory, whatever its kind). */
static void near_nodes(const ng_topology *topo, hwloc_const_bitmap_t pus, hwloc_bitmap_t out)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned n = ng_topology_numa_count(topo);
    hwloc_bitmap_zero(out);
    for (unsigned i = 0; i < n; i++) {
        hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(hw, ng_topology_numa(topo, i)->os_index);
        if (obj && obj->cpuset && hwloc_bitmap_intersects(obj->cpuset, pus))
            hwloc_bitmap_set(out, i);
    }
}

/* The memory node a group of memoryless units attaches to. */
static int attach_node(ngi_planner *p, hwloc_const_bitmap_t pus, int own_node,
                       const unsigned *attached, int pkg)
{
    unsigned n = ng_topology_numa_count(p->topo), best_d = ~0u;
    int best = -1;
    hwloc_bitmap_t src = hwloc_bitmap_alloc();
    if (own_node >= 0)
        hwloc_bitmap_set(src, (unsigned)own_node);
    else
        near_nodes(p->topo, pus, src);
    hwloc_topology_t hw = ng_topology_hwloc(p->topo);
    for (unsigned i = 0; i < n; i++) {
        if (!node_has_memory(p->topo, i))
            continue;
        hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(hw, ng_topology_numa(p->topo, i)->os_index);
        hwloc_obj_t pk = obj ? hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, obj) : NULL;
        int same_pkg = pk && (int)pk->logical_index == pkg;
        unsigned d = ~0u;
        int s;
        hwloc_bitmap_foreach_begin(s, src) {
            unsigned x = ngi_plan_node_dist(p, s, (int)i, same_pkg);
            if (x < d)
                d = x;
        } hwloc_bitmap_foreach_end();
        if (d == ~0u)
            d = same_pkg ? 20 : 30;
        if (best < 0 || d < best_d || (d == best_d && attached[i] < attached[best])) {
            best = (int)i;
            best_d = d;
        }
    }
    hwloc_bitmap_free(src);
    return best;
}

static int same_memoryless_group(const ngi_unit *a, const ngi_unit *b)
{
    return a->node == b->node && (a->node >= 0 || a->root == b->root);
}

/* Give every unit a memory node (mem[u]): its own, or its group's attachment. */
static int assign_memory(ngi_planner *p, ngi_unit *u, unsigned n, int *mem, char *err, size_t errlen)
{
    unsigned nn = ng_topology_numa_count(p->topo);
    unsigned *attached = calloc(nn ? nn : 1, sizeof *attached);
    unsigned char *done = calloc(n, 1);
    hwloc_bitmap_t group = hwloc_bitmap_alloc();
    if (!attached || !done) {
        free(attached); free(done); hwloc_bitmap_free(group);
        return ngi_fail(err, errlen, "out of memory");
    }
    for (unsigned k = 0; k < n; k++) {
        mem[k] = u[k].node >= 0 && node_has_memory(p->topo, (unsigned)u[k].node) ? u[k].node : -1;
        if (mem[k] >= 0)
            attached[mem[k]]++;
    }
    /* Groups: same CPU-bearing (memoryless) node, or, for CPUs of no node,
     * the same memoryless root (their die, or their package). */
    for (unsigned k = 0; k < n; k++) {
        if (mem[k] >= 0 || done[k])
            continue;
        hwloc_bitmap_zero(group);
        unsigned members = 0;
        for (unsigned m = k; m < n; m++)
            if (mem[m] < 0 && !done[m] && same_memoryless_group(&u[m], &u[k])) {
                hwloc_bitmap_or(group, group, u[m].pus);
                members++;
            }
        int node = attach_node(p, group, u[k].node, attached, u[k].pkg);
        for (unsigned m = k; m < n; m++)
            if (mem[m] < 0 && !done[m] && same_memoryless_group(&u[m], &u[k])) {
                done[m] = 1;
                mem[m] = node;
            }
        if (node >= 0)
            attached[node] += members;
    }
    int rc = 0;
    for (unsigned k = 0; k < n && rc == 0; k++)
        if (mem[k] < 0)
            rc = ngi_fail(err, errlen, "no NUMA node with memory to attach CPUs to");
    free(attached);
    free(done);
    hwloc_bitmap_free(group);
    return rc;
}

/* CPU groups: a new one wherever the domain, the CPU's own node, its
 * memoryless root or its (shared) L3 changes along the line. */
static void number_groups(ngi_planner *p)
{
    unsigned g = 0;
    for (unsigned k = 0; k < p->n_units; k++) {
        const ngi_unit *a = &p->units[k], *b = k ? &p->units[k - 1] : NULL;
        if (b && (a->dom != b->dom || a->node != b->node || a->root != b->root || a->l3g != b->l3g))
            g++;
        p->units[k].grp = g;
    }
    p->n_grps = p->n_units ? g + 1 : 0;
}

/* Order domains by their first unit in hwloc order; lay units out domain by
 * domain (own units first, then attached ones, each in hwloc order). */
static int layout(ngi_planner *p, ngi_unit *u, unsigned n, const int *mem, char *err, size_t errlen)
{
    unsigned nn = ng_topology_numa_count(p->topo);
    int *dom_of_node = malloc((nn ? nn : 1) * sizeof *dom_of_node);
    p->doms = calloc(nn ? nn : 1, sizeof *p->doms);
    p->units = calloc(n, sizeof *p->units);
    if (!dom_of_node || !p->doms || !p->units) {
        free(dom_of_node);
        return ngi_fail(err, errlen, "out of memory");
    }
    for (unsigned i = 0; i < nn; i++)
        dom_of_node[i] = -1;
    for (unsigned k = 0; k < n; k++)
        if (dom_of_node[mem[k]] < 0) {
            dom_of_node[mem[k]] = (int)p->n_doms;
            p->doms[p->n_doms++].mem = mem[k];
        }
    unsigned pos = 0;
    for (unsigned d = 0; d < p->n_doms; d++) {
        p->doms[d].first = pos;
        for (int pass = 0; pass < 2; pass++)
            for (unsigned k = 0; k < n; k++) {
                int own = u[k].node == mem[k];
                if (mem[k] != p->doms[d].mem || own != (pass == 0))
                    continue;
                p->units[pos] = u[k];
                p->units[pos].dom = (int)d;
                pos++;
            }
        p->doms[d].count = pos - p->doms[d].first;
        p->doms[d].pkg = p->units[p->doms[d].first].pkg;
        p->doms[d].l3 = p->units[p->doms[d].first].l3;
    }
    p->n_units = n;
    number_groups(p);
    free(dom_of_node);
    return 0;
}

static int build_dist(ngi_planner *p, char *err, size_t errlen)
{
    unsigned nd = p->n_doms;
    p->dist = malloc((size_t)nd * nd * sizeof *p->dist);
    if (!p->dist)
        return ngi_fail(err, errlen, "out of memory");
    for (unsigned a = 0; a < nd; a++)
        for (unsigned b = 0; b < nd; b++)
            p->dist[a * nd + b] = ngi_plan_node_dist(p, p->doms[a].mem, p->doms[b].mem,
                                                    p->doms[a].pkg == p->doms[b].pkg);
    return 0;
}

int ngi_plan_build_domains(ngi_planner *p, char *err, size_t errlen)
{
    ngi_unit *u = NULL;
    unsigned n = 0;
    int rc = collect_units(p, &u, &n, err, errlen);
    int *mem = rc == 0 ? malloc(n * sizeof *mem) : NULL;
    if (rc == 0 && !mem)
        rc = ngi_fail(err, errlen, "out of memory");
    if (rc == 0)
        rc = assign_memory(p, u, n, mem, err, errlen);
    if (rc == 0)
        rc = layout(p, u, n, mem, err, errlen);
    if (rc == 0)
        rc = build_dist(p, err, errlen);
    if (!p->units) /* layout did not take the bitmaps: free them here */
        for (unsigned k = 0; k < n; k++)
            hwloc_bitmap_free(u[k].pus);
    free(u);
    free(mem);
    return rc;
}

void ngi_plan_free_domains(ngi_planner *p)
{
    for (unsigned k = 0; p->units && k < p->n_units; k++)
        hwloc_bitmap_free(p->units[k].pus);
    free(p->units);
    free(p->doms);
    free(p->dist);
}
