/* The planner: topology + job shape -> one CPU slice, memory policy and
 * thread environment per local task. Pure and deterministic.
 *
 * Vocabulary:
 *  - unit:      one core (its allowed PUs together; SMT siblings never split),
 *               or a lone PU when hwloc knows no core above it.
 *  - domain:    the CPU-bearing NUMA node a unit belongs to (-1 if none).
 *  - home:      the units a task would like to run on (its GPUs' local cores,
 *               or the nearest ones by NUMA distance).
 *  - component: tasks whose homes overlap are planned together over the
 *               union of their homes; components never share units.
 *
 * Rules (see docs/planner.md): whole cores; slices disjoint and balanced
 * (sizes differ by at most one core) whenever there are at least as many
 * cores as tasks; GPU tasks inside their GPUs' local cores when the step has
 * any, else on the nearest by NUMA distance; CPU-only tasks cut the free
 * cores into equal consecutive slices in topology order, which spreads them
 * evenly over NUMA nodes; never CPUs of a CPU-less node; memory-only nodes
 * only when the policy asks; more tasks than cores share cores.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NG_MAX_TASKS 65536
#define NG_MAX_WARNINGS 16

typedef struct unit {
    hwloc_bitmap_t pus;
    int domain; /* index into topology NUMA list, -1 if none */
} unit;

struct ng_plan {
    unsigned ntasks;
    ng_task_plan *tasks;
    int *gpu_store;                 /* all tasks' GPU indices */
    hwloc_bitmap_t *cpus;           /* per task */
    hwloc_bitmap_t *mems;           /* per task */
    ng_env_var *env_store;          /* ntasks * NG_MAX_ENV */
    unsigned n_warnings;
    char warnings[NG_MAX_WARNINGS][256];
};

/* Working state while planning. */
typedef struct planner {
    const ng_topology *topo;
    const ng_plan_request *req;
    ng_plan *plan;
    unit *units;
    unsigned n_units;
    unsigned max_smt;               /* most PUs in one unit */
    hwloc_bitmap_t *home;           /* per task: set of unit indices, NULL = CPU-only */
    int *comp;                      /* per task: component id */
    unsigned n_comps;
    hwloc_bitmap_t *slice;          /* per task: unit indices owned */
} planner;

static void plan_warn(ng_plan *plan, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void plan_warn(ng_plan *plan, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    for (unsigned i = 0; i < plan->n_warnings; i++)
        if (strcmp(plan->warnings[i], line) == 0)
            return;
    if (plan->n_warnings < NG_MAX_WARNINGS)
        memcpy(plan->warnings[plan->n_warnings++], line, sizeof(line));
}

/* ---- units and domains ------------------------------------------------ */

static int domain_of(const ng_topology *topo, hwloc_const_bitmap_t pus)
{
    unsigned n = ng_topology_numa_count(topo);
    for (unsigned i = 0; i < n; i++) {
        const ng_numa_info *node = ng_topology_numa(topo, i);
        if (node->has_cpus && hwloc_bitmap_intersects(node->cpus, pus))
            return (int)i;
    }
    return -1;
}

/* Walk PUs in hwloc logical order (which follows the tree, so cores of one
 * NUMA node are consecutive) and group the allowed ones by core. */
static int build_units(planner *p, char *err, size_t errlen)
{
    hwloc_topology_t hw = ng_topology_hwloc(p->topo);
    hwloc_bitmap_t allowed = hwloc_bitmap_dup(ng_topology_allowed_cpus(p->topo));
    if (p->req->allowed_cpus)
        hwloc_bitmap_and(allowed, allowed, p->req->allowed_cpus);
    int npu = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
    p->units = calloc(npu > 0 ? (size_t)npu : 1, sizeof(unit));
    if (!p->units) {
        hwloc_bitmap_free(allowed);
        return ng_fail(err, errlen, "out of memory");
    }
    hwloc_obj_t last_core = NULL;
    for (int i = 0; i < npu; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, (unsigned)i);
        if (!hwloc_bitmap_isset(allowed, pu->os_index))
            continue;
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
        if (!core || core != last_core) {
            unit *u = &p->units[p->n_units++];
            u->pus = hwloc_bitmap_alloc();
            last_core = core;
        }
        hwloc_bitmap_set(p->units[p->n_units - 1].pus, pu->os_index);
    }
    hwloc_bitmap_free(allowed);
    if (p->n_units == 0)
        return ng_fail(err, errlen, "no usable CPU: the allowed CPU set does not "
                                    "intersect this topology's CPUs");
    for (unsigned u = 0; u < p->n_units; u++) {
        p->units[u].domain = domain_of(p->topo, p->units[u].pus);
        unsigned w = (unsigned)hwloc_bitmap_weight(p->units[u].pus);
        if (w > p->max_smt)
            p->max_smt = w;
    }
    return 0;
}

/* Units whose PUs intersect @cpus, as a set of unit indices. */
static void units_in(const planner *p, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (unsigned u = 0; u < p->n_units; u++)
        if (hwloc_bitmap_intersects(p->units[u].pus, cpus))
            hwloc_bitmap_set(out, u);
}

static void units_in_domains(const planner *p, hwloc_const_bitmap_t domains, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (unsigned u = 0; u < p->n_units; u++)
        if (p->units[u].domain >= 0 && hwloc_bitmap_isset(domains, (unsigned)p->units[u].domain))
            hwloc_bitmap_set(out, u);
}

/* ---- homes: where each task wants to run --------------------------------- */

static const int *task_gpus(const ng_plan_request *req, unsigned t, unsigned *n)
{
    if (!req->task_gpu_count || !req->task_gpu_offset || !req->task_gpus) {
        *n = 0;
        return NULL;
    }
    *n = req->task_gpu_count[t];
    return req->task_gpus + req->task_gpu_offset[t];
}

/* Domains with usable units closest (by NUMA distance) to any of the GPU's
 * CPU-bearing local nodes. Returns 0 if distances cannot tell. */
static int nearest_domains(const planner *p, hwloc_const_nodeset_t sources,
                           hwloc_const_bitmap_t pool, hwloc_bitmap_t out)
{
    unsigned best = ~0u;
    hwloc_bitmap_zero(out);
    for (unsigned u = 0; u < p->n_units; u++) {
        int d = p->units[u].domain;
        if (d < 0 || !hwloc_bitmap_isset(pool, u))
            continue;
        unsigned dom_os = ng_topology_numa(p->topo, (unsigned)d)->os_index;
        unsigned dist = ~0u;
        int src;
        hwloc_bitmap_foreach_begin(src, sources) {
            unsigned x = ng_topology_distance(p->topo, (unsigned)src, dom_os);
            if (x && x < dist)
                dist = x;
        } hwloc_bitmap_foreach_end();
        if (dist == ~0u)
            continue;
        if (dist < best) {
            best = dist;
            hwloc_bitmap_zero(out);
        }
        if (dist == best)
            hwloc_bitmap_set(out, (unsigned)d);
    }
    return best != ~0u;
}

/* Local homes first: a task whose GPUs have allowed local cores wants those.
 * Tasks whose GPUs have none ("remote") are placed later, from the cores no
 * local task wants (see place_remote). */
static int compute_home(planner *p, unsigned t, char *err, size_t errlen)
{
    unsigned n;
    const int *gpus = task_gpus(p->req, t, &n);
    p->home[t] = NULL;
    if (n == 0)
        return 0;
    unsigned ngpu = ng_topology_gpu_count(p->topo);
    hwloc_bitmap_t local = hwloc_bitmap_alloc();
    for (unsigned i = 0; i < n; i++) {
        if (gpus[i] < 0 || (unsigned)gpus[i] >= ngpu) {
            hwloc_bitmap_free(local);
            return ng_fail(err, errlen, "task %u: GPU index %d is not a GPU of this "
                                        "topology (it has %u)", t, gpus[i], ngpu);
        }
        hwloc_bitmap_or(local, local, ng_topology_gpu(p->topo, (unsigned)gpus[i])->cpus);
    }
    p->home[t] = hwloc_bitmap_alloc();
    units_in(p, local, p->home[t]);
    hwloc_bitmap_free(local);
    if (hwloc_bitmap_iszero(p->home[t])) {
        hwloc_bitmap_free(p->home[t]);
        p->home[t] = NULL;
        p->plan->tasks[t].gpu_remote = 1;
    }
    return 0;
}

/* A remote GPU task's home: the units of @pool in the NUMA node(s) nearest
 * to its GPUs' nodes; all of @pool when distances cannot tell. */
static void place_remote(planner *p, unsigned t, hwloc_const_bitmap_t pool)
{
    unsigned n;
    const int *gpus = task_gpus(p->req, t, &n);
    hwloc_bitmap_t sources = hwloc_bitmap_alloc(), doms = hwloc_bitmap_alloc();
    for (unsigned i = 0; i < n; i++)
        hwloc_bitmap_or(sources, sources, ng_topology_gpu(p->topo, (unsigned)gpus[i])->numa_nodes);
    char names[128];
    ng_gpu_list_format(p->topo, gpus, n, names, sizeof(names));
    p->home[t] = hwloc_bitmap_alloc();
    if (nearest_domains(p, sources, pool, doms)) {
        units_in_domains(p, doms, p->home[t]);
        hwloc_bitmap_and(p->home[t], p->home[t], pool);
        plan_warn(p->plan, "GPU %s: no allowed core is local to it; using the "
                           "nearest NUMA node(s) by distance", names);
    } else {
        hwloc_bitmap_copy(p->home[t], pool);
        plan_warn(p->plan, "GPU %s: no allowed core is local to it and NUMA "
                           "distances cannot tell which is nearest", names);
    }
    hwloc_bitmap_free(sources);
    hwloc_bitmap_free(doms);
}

/* ---- components ------------------------------------------------------- */

static int find_root(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

static void union_roots(int *parent, int a, int b)
{
    int ra = find_root(parent, a), rb = find_root(parent, b);
    if (ra != rb)
        parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
}

/* Union GPU-local tasks with overlapping homes. The other tasks (CPU-only,
 * and GPU tasks with no allowed local core) share one component over the
 * units no local task wants; remote GPU tasks lead it, nearest first. If
 * some component has fewer cores than tasks while the node as a whole has
 * enough, everything is merged: disjoint, balanced slices matter more than
 * locality, and the merged order still keeps tasks near their GPUs. */
static void build_components(planner *p, hwloc_bitmap_t *comp_units)
{
    unsigned nt = p->req->ntasks;
    int *parent = malloc(nt * sizeof(int));
    hwloc_bitmap_t pool = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(pool, 0, (int)p->n_units - 1);
    int first_floating = -1;
    for (unsigned a = 0; a < nt; a++) {
        parent[a] = (int)a;
        if (!p->home[a]) {
            if (first_floating < 0)
                first_floating = (int)a;
            else
                union_roots(parent, (int)a, first_floating);
            continue;
        }
        hwloc_bitmap_andnot(pool, pool, p->home[a]);
        for (unsigned b = 0; b < a; b++)
            if (p->home[b] && hwloc_bitmap_intersects(p->home[a], p->home[b]))
                union_roots(parent, (int)a, (int)b);
    }
    /* Floating tasks with no free unit left: plan over everything below. */
    int no_room = first_floating >= 0 && hwloc_bitmap_iszero(pool);
    if (no_room)
        hwloc_bitmap_set_range(pool, 0, (int)p->n_units - 1);
    for (unsigned t = 0; t < nt; t++)
        if (p->plan->tasks[t].gpu_remote)
            place_remote(p, t, pool);

    /* Number components in order of their first task. */
    int *id_of_root = malloc(nt * sizeof(int));
    for (unsigned t = 0; t < nt; t++)
        id_of_root[t] = -1;
    p->n_comps = 0;
    for (unsigned t = 0; t < nt; t++) {
        int r = find_root(parent, (int)t);
        if (id_of_root[r] < 0)
            id_of_root[r] = (int)p->n_comps++;
        p->comp[t] = id_of_root[r];
        if (!comp_units[p->comp[t]])
            comp_units[p->comp[t]] = hwloc_bitmap_alloc();
        hwloc_bitmap_or(comp_units[p->comp[t]], comp_units[p->comp[t]],
                        p->home[t] && !p->plan->tasks[t].gpu_remote ? p->home[t] : pool);
    }
    free(parent);
    free(id_of_root);
    hwloc_bitmap_free(pool);

    int crowded = no_room;
    for (unsigned c = 0; c < p->n_comps; c++) {
        unsigned members = 0;
        for (unsigned t = 0; t < nt; t++)
            members += p->comp[t] == (int)c;
        if ((unsigned)hwloc_bitmap_weight(comp_units[c]) < members)
            crowded = 1;
    }
    /* Merging keeps slices disjoint when the node has enough cores, and
     * spreads shared cores evenly when it has not. */
    if (crowded) {
        if (p->n_units >= nt)
            plan_warn(p->plan, "not enough cores local to each task's GPU(s): some "
                               "tasks get cores farther away");
        for (unsigned c = 0; c < p->n_comps; c++) {
            hwloc_bitmap_free(comp_units[c]);
            comp_units[c] = NULL;
        }
        p->n_comps = 1;
        comp_units[0] = hwloc_bitmap_alloc();
        hwloc_bitmap_set_range(comp_units[0], 0, (int)p->n_units - 1);
        for (unsigned t = 0; t < nt; t++)
            p->comp[t] = 0;
    }
}

/* ---- cutting components into slices ----------------------------------- */

/* Tasks of a component are served most constrained first (smallest home),
 * then by where their home starts, then by task id; identical homes thus
 * get consecutive slices in task order. */
typedef struct order_key {
    unsigned task;
    int home_size;  /* units in the task's home; INT_MAX for CPU-only */
    int first;      /* first unit of the task's home; INT_MAX for CPU-only */
} order_key;

static int cmp_key(const void *a, const void *b)
{
    const order_key *x = a, *y = b;
    if (x->home_size != y->home_size)
        return x->home_size < y->home_size ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->task < y->task ? -1 : (x->task > y->task);
}

/* The smallest per-task share over all components sets the size every task
 * gets (or one more), which keeps slices balanced across the node. */
static unsigned balanced_size(const planner *p, hwloc_bitmap_t *comp_units)
{
    unsigned s = ~0u;
    for (unsigned c = 0; c < p->n_comps; c++) {
        unsigned members = 0;
        for (unsigned t = 0; t < p->req->ntasks; t++)
            members += p->comp[t] == (int)c;
        unsigned share = (unsigned)hwloc_bitmap_weight(comp_units[c]) / members;
        if (share < s)
            s = share;
    }
    return s;
}

static unsigned cores_for_cpus(const planner *p, unsigned cpus)
{
    unsigned smt = p->max_smt ? p->max_smt : 1;
    return (cpus + smt - 1) / smt;
}

/* Take @want free units for task @t: from its home first (in unit order),
 * then the free units of the component closest to where its home starts. */
static void take_units(planner *p, unsigned t, hwloc_bitmap_t free_units, unsigned want)
{
    unsigned got = 0;
    int u;
    if (p->home[t]) {
        hwloc_bitmap_foreach_begin(u, p->home[t]) {
            if (got < want && hwloc_bitmap_isset(free_units, (unsigned)u)) {
                hwloc_bitmap_set(p->slice[t], (unsigned)u);
                hwloc_bitmap_clr(free_units, (unsigned)u);
                got++;
            }
        } hwloc_bitmap_foreach_end();
    }
    if (got < want && p->home[t])
        plan_warn(p->plan, "not enough cores local to each task's GPU(s): some tasks "
                           "get cores farther away");
    int anchor = p->home[t] ? hwloc_bitmap_first(p->home[t]) : 0;
    while (got < want && !hwloc_bitmap_iszero(free_units)) {
        int best = -1;
        hwloc_bitmap_foreach_begin(u, free_units) {
            if (best < 0 || abs(u - anchor) < abs(best - anchor))
                best = u;
        } hwloc_bitmap_foreach_end();
        hwloc_bitmap_set(p->slice[t], (unsigned)best);
        hwloc_bitmap_clr(free_units, (unsigned)best);
        got++;
    }
}

static void cut_component(planner *p, unsigned c, hwloc_const_bitmap_t cu, unsigned s,
                          unsigned cap)
{
    unsigned nt = p->req->ntasks, members = 0;
    order_key *keys = malloc(nt * sizeof(order_key));
    for (unsigned t = 0; t < nt; t++) {
        if (p->comp[t] != (int)c)
            continue;
        keys[members].task = t;
        keys[members].home_size = p->home[t] ? hwloc_bitmap_weight(p->home[t]) : 0x7fffffff;
        keys[members].first = p->home[t] ? hwloc_bitmap_first(p->home[t]) : 0x7fffffff;
        members++;
    }
    qsort(keys, members, sizeof(order_key), cmp_key);
    unsigned avail = (unsigned)hwloc_bitmap_weight(cu);

    if (avail < members) {
        /* More tasks than cores: each task takes the least-loaded core of its
         * home unless a core elsewhere is less loaded, so the load stays even
         * (at most one task apart) and tasks stay home when that costs nothing. */
        unsigned *load = calloc(p->n_units, sizeof(unsigned));
        for (unsigned j = 0; j < members; j++) {
            unsigned t = keys[j].task;
            int u, best_home = -1, best_any = -1;
            hwloc_bitmap_foreach_begin(u, cu) {
                if (best_any < 0 || load[u] < load[best_any])
                    best_any = u;
                if (p->home[t] && hwloc_bitmap_isset(p->home[t], (unsigned)u) &&
                    (best_home < 0 || load[u] < load[best_home]))
                    best_home = u;
            } hwloc_bitmap_foreach_end();
            int best = best_home >= 0 && load[best_home] <= load[best_any] ? best_home : best_any;
            if (p->home[t] && best != best_home)
                plan_warn(p->plan, "not enough cores local to each task's GPU(s): some "
                                   "tasks get cores farther away");
            load[best]++;
            hwloc_bitmap_set(p->slice[t], (unsigned)best);
            p->plan->tasks[t].shares_cores = 1;
        }
        free(load);
        plan_warn(p->plan, "%u tasks share %u cores: tasks will compete for CPUs",
                  members, avail);
    } else {
        /* One core more than the balanced size goes to the tasks with the
         * largest homes (they have room), which keeps locality intact. */
        unsigned extra = avail - members * s;
        unsigned char *plus = calloc(members, 1);
        for (unsigned k = 0; k < extra && k < members; k++) {
            unsigned pick = members;
            for (unsigned j = 0; j < members; j++)
                if (!plus[j] && (pick == members || keys[j].home_size > keys[pick].home_size))
                    pick = j;
            plus[pick] = 1;
        }
        hwloc_bitmap_t free_units = hwloc_bitmap_dup(cu);
        for (unsigned j = 0; j < members; j++) {
            unsigned want = s + plus[j];
            if (cap && want > cap)
                want = cap;
            take_units(p, keys[j].task, free_units, want);
        }
        hwloc_bitmap_free(free_units);
        free(plus);
    }
    free(keys);
}

static void cut_all(planner *p, hwloc_bitmap_t *comp_units)
{
    unsigned s = balanced_size(p, comp_units);
    unsigned cap = p->req->cpus_per_task ? cores_for_cpus(p, p->req->cpus_per_task) : 0;
    if (s == 0)
        s = 1; /* only reached when some component shares cores */
    /* Without a cap every task may take one more than the balanced size; the
     * cap (Slurm's -c) then trims it. */
    unsigned hard = cap ? (cap < s + 1 ? cap : s + 1) : s + 1;
    for (unsigned c = 0; c < p->n_comps; c++)
        cut_component(p, c, comp_units[c], cap && cap <= s ? cap : s, hard);
}

/* ---- memory nodes ----------------------------------------------------- */

/* CPU-less nodes hwloc attaches near @cpus (HBM, NVM, CXL next to a package;
 * hwloc gives them their parent's cpuset). GPU-memory nodes are excluded: they
 * belong to their GPU and are added through the GPU. */
static void near_cpuless(const planner *p, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    hwloc_topology_t hw = ng_topology_hwloc(p->topo);
    unsigned n = ng_topology_numa_count(p->topo);
    for (unsigned i = 0; i < n; i++) {
        const ng_numa_info *node = ng_topology_numa(p->topo, i);
        if (node->has_cpus || node->kind == NG_MEM_GPU)
            continue;
        hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(hw, node->os_index);
        if (obj && obj->cpuset && hwloc_bitmap_intersects(obj->cpuset, cpus))
            hwloc_bitmap_set(out, node->os_index);
    }
}

static void all_nodes(const planner *p, int cpuless, hwloc_bitmap_t out)
{
    unsigned n = ng_topology_numa_count(p->topo);
    for (unsigned i = 0; i < n; i++) {
        const ng_numa_info *node = ng_topology_numa(p->topo, i);
        if (node->has_cpus || cpuless)
            hwloc_bitmap_set(out, node->os_index);
    }
}

/* CPU-bearing nodes nearest (by distance) to the memory nodes hwloc places
 * next to @cpus; for CPUs that have no CPU-bearing node of their own (an
 * offline node, or only HBM/NVM beside them). All CPU-bearing nodes when
 * distances cannot tell. */
static void fallback_nodes(const planner *p, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    hwloc_topology_t hw = ng_topology_hwloc(p->topo);
    unsigned n = ng_topology_numa_count(p->topo), best = ~0u;
    hwloc_bitmap_t near = hwloc_bitmap_alloc();
    for (unsigned i = 0; i < n; i++) {
        hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(hw, ng_topology_numa(p->topo, i)->os_index);
        if (obj && obj->cpuset && hwloc_bitmap_intersects(obj->cpuset, cpus))
            hwloc_bitmap_set(near, obj->os_index);
    }
    for (unsigned i = 0; i < n; i++) {
        const ng_numa_info *node = ng_topology_numa(p->topo, i);
        if (!node->has_cpus)
            continue;
        unsigned dist = ~0u;
        int src;
        hwloc_bitmap_foreach_begin(src, near) {
            unsigned x = ng_topology_distance(p->topo, (unsigned)src, node->os_index);
            if (x && x < dist)
                dist = x;
        } hwloc_bitmap_foreach_end();
        if (dist < best) {
            best = dist;
            hwloc_bitmap_zero(out);
        }
        if (dist == best)
            hwloc_bitmap_set(out, node->os_index);
    }
    hwloc_bitmap_free(near);
}

static void local_nodes(const planner *p, unsigned t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    unsigned n = ng_topology_numa_count(p->topo);
    for (unsigned i = 0; i < n; i++) {
        const ng_numa_info *node = ng_topology_numa(p->topo, i);
        if (node->has_cpus && hwloc_bitmap_intersects(node->cpus, cpus))
            hwloc_bitmap_set(out, node->os_index);
    }
    if (hwloc_bitmap_iszero(out))
        fallback_nodes(p, cpus, out);
    if (!(p->req->policy.mods & NG_MOD_CPULESS))
        return;
    unsigned ng;
    const int *gpus = task_gpus(p->req, t, &ng);
    for (unsigned i = 0; i < ng; i++)
        hwloc_bitmap_or(out, out, ng_topology_gpu(p->topo, (unsigned)gpus[i])->memory_nodes);
    near_cpuless(p, cpus, out);
}

static void named_nodes(planner *p, hwloc_bitmap_t out)
{
    hwloc_bitmap_t named = hwloc_bitmap_alloc();
    ng_nodemask_to_bitmap(p->req->policy.nodes, NG_NODEMASK_WORDS, named);
    int os;
    hwloc_bitmap_foreach_begin(os, named) {
        if (ng_topology_numa_by_os(p->topo, (unsigned)os))
            hwloc_bitmap_set(out, (unsigned)os);
        else
            plan_warn(p->plan, "--numa-policy names NUMA node %d, which this machine "
                               "does not have; ignored", os);
    } hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(named);
}

static ng_mem_mode plan_memory(planner *p, unsigned t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t mems)
{
    const ng_policy *pol = &p->req->policy;
    switch (pol->kind) {
    case NG_POLICY_LOCAL:
        local_nodes(p, t, cpus, mems);
        return NG_MEM_MODE_BIND;
    case NG_POLICY_PREFER:
        local_nodes(p, t, cpus, mems);
        return NG_MEM_MODE_PREFERRED_MANY;
    case NG_POLICY_INTERLEAVE:
    case NG_POLICY_WEIGHTED:
        if (pol->has_nodes)
            named_nodes(p, mems);
        else
            all_nodes(p, (pol->mods & NG_MOD_CPULESS) != 0, mems);
        return pol->kind == NG_POLICY_WEIGHTED ? NG_MEM_MODE_WEIGHTED : NG_MEM_MODE_INTERLEAVE;
    case NG_POLICY_NONE:
    default:
        return NG_MEM_MODE_NONE;
    }
}

/* ---- assembling the plan ---------------------------------------------- */

static ng_plan *plan_alloc(unsigned nt)
{
    ng_plan *plan = calloc(1, sizeof(*plan));
    if (!plan)
        return NULL;
    plan->ntasks = nt;
    plan->tasks = calloc(nt, sizeof(ng_task_plan));
    plan->cpus = calloc(nt, sizeof(hwloc_bitmap_t));
    plan->mems = calloc(nt, sizeof(hwloc_bitmap_t));
    plan->env_store = calloc((size_t)nt * NG_MAX_ENV, sizeof(ng_env_var));
    if (!plan->tasks || !plan->cpus || !plan->mems || !plan->env_store) {
        ng_plan_free(plan);
        return NULL;
    }
    return plan;
}

static int copy_gpus(planner *p)
{
    const ng_plan_request *req = p->req;
    unsigned total = 0;
    for (unsigned t = 0; t < req->ntasks; t++) {
        unsigned n;
        task_gpus(req, t, &n);
        total += n;
    }
    p->plan->gpu_store = calloc(total ? total : 1, sizeof(int));
    if (!p->plan->gpu_store)
        return -1;
    unsigned pos = 0;
    for (unsigned t = 0; t < req->ntasks; t++) {
        unsigned n;
        const int *g = task_gpus(req, t, &n);
        p->plan->tasks[t].gpus = p->plan->gpu_store + pos;
        p->plan->tasks[t].n_gpus = n;
        if (n)
            memcpy(p->plan->gpu_store + pos, g, n * sizeof(int));
        pos += n;
    }
    return 0;
}

static int finish_task(planner *p, unsigned t, char *err, size_t errlen)
{
    ng_plan *plan = p->plan;
    ng_task_plan *tp = &plan->tasks[t];
    hwloc_bitmap_t cpus = plan->cpus[t] = hwloc_bitmap_alloc();
    unsigned cores = 0;
    int u;
    hwloc_bitmap_foreach_begin(u, p->slice[t]) {
        hwloc_bitmap_or(cpus, cpus, p->units[u].pus);
        cores++;
    } hwloc_bitmap_foreach_end();
    int smt = (p->req->policy.mods & NG_MOD_SMT) != 0;
    tp->local_id = t;
    tp->threads = smt ? (unsigned)hwloc_bitmap_weight(cpus) : cores;
    plan->mems[t] = hwloc_bitmap_alloc();
    tp->mem_mode = plan_memory(p, t, cpus, plan->mems[t]);
    tp->mem_nodes = tp->mem_mode == NG_MEM_MODE_NONE ? NULL : plan->mems[t];
    /* Policy none leaves affinity as Slurm set it; the slice still sizes threads. */
    tp->cpus = p->req->policy.kind == NG_POLICY_NONE ? NULL : cpus;
    if (tp->mem_mode != NG_MEM_MODE_NONE && hwloc_bitmap_iszero(plan->mems[t]))
        return ng_fail(err, errlen, "task %u: the policy leaves no NUMA node for memory", t);
    ng_env_var *env = plan->env_store + (size_t)t * NG_MAX_ENV;
    int n = ng_thread_env(&p->req->omp, tp->threads, smt, p->req->thread_vars, env, NG_MAX_ENV);
    if (n < 0)
        return ng_fail(err, errlen, "too many thread variables (at most %d)", NG_MAX_ENV - 2);
    tp->env = env;
    tp->n_env = (unsigned)n;
    return 0;
}

static void planner_free(planner *p)
{
    for (unsigned u = 0; u < p->n_units; u++)
        hwloc_bitmap_free(p->units[u].pus);
    free(p->units);
    for (unsigned t = 0; p->home && t < p->req->ntasks; t++)
        hwloc_bitmap_free(p->home[t]);
    for (unsigned t = 0; p->slice && t < p->req->ntasks; t++)
        hwloc_bitmap_free(p->slice[t]);
    free(p->home);
    free(p->slice);
    free(p->comp);
}

static int plan_steps(planner *p, char *err, size_t errlen)
{
    unsigned nt = p->req->ntasks;
    if (build_units(p, err, errlen) < 0 || copy_gpus(p) < 0)
        return -1;
    p->home = calloc(nt, sizeof(hwloc_bitmap_t));
    p->slice = calloc(nt, sizeof(hwloc_bitmap_t));
    p->comp = calloc(nt, sizeof(int));
    if (!p->home || !p->slice || !p->comp)
        return ng_fail(err, errlen, "out of memory");
    for (unsigned t = 0; t < nt; t++) {
        p->slice[t] = hwloc_bitmap_alloc();
        if (compute_home(p, t, err, errlen) < 0)
            return -1;
    }
    hwloc_bitmap_t *comp_units = calloc(nt, sizeof(hwloc_bitmap_t));
    if (!comp_units)
        return ng_fail(err, errlen, "out of memory");
    build_components(p, comp_units);
    cut_all(p, comp_units);
    for (unsigned c = 0; c < p->n_comps; c++)
        hwloc_bitmap_free(comp_units[c]);
    free(comp_units);
    for (unsigned t = 0; t < nt; t++)
        if (finish_task(p, t, err, errlen) < 0)
            return -1;
    return 0;
}

int ng_plan_compute(const ng_topology *topo, const ng_plan_request *req,
                    ng_plan **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!topo || !req)
        return ng_fail(err, errlen, "no topology or request");
    if (req->ntasks == 0 || req->ntasks > NG_MAX_TASKS)
        return ng_fail(err, errlen, "number of tasks %u out of range (1-%d)",
                       req->ntasks, NG_MAX_TASKS);
    planner p = {.topo = topo, .req = req};
    p.plan = plan_alloc(req->ntasks);
    if (!p.plan)
        return ng_fail(err, errlen, "out of memory");
    int rc = plan_steps(&p, err, errlen);
    planner_free(&p);
    if (rc < 0) {
        ng_plan_free(p.plan);
        return -1;
    }
    *out = p.plan;
    return 0;
}

void ng_plan_free(ng_plan *plan)
{
    if (!plan)
        return;
    for (unsigned t = 0; t < plan->ntasks; t++) {
        if (plan->cpus)
            hwloc_bitmap_free(plan->cpus[t]);
        if (plan->mems)
            hwloc_bitmap_free(plan->mems[t]);
    }
    free(plan->cpus);
    free(plan->mems);
    free(plan->tasks);
    free(plan->gpu_store);
    free(plan->env_store);
    free(plan);
}

unsigned ng_plan_task_count(const ng_plan *plan)
{
    return plan ? plan->ntasks : 0;
}

const ng_task_plan *ng_plan_task(const ng_plan *plan, unsigned local_id)
{
    return plan && local_id < plan->ntasks ? &plan->tasks[local_id] : NULL;
}

unsigned ng_plan_warning_count(const ng_plan *plan)
{
    return plan ? plan->n_warnings : 0;
}

const char *ng_plan_warning(const ng_plan *plan, unsigned i)
{
    return plan && i < plan->n_warnings ? plan->warnings[i] : NULL;
}
