/* Phase (e): memory follows the task's CPUs.
 *
 *  - local (MPOL_BIND) / prefer (MPOL_PREFERRED_MANY): the memory nodes of
 *    the task's domains: each core's own node, or for memoryless CPUs the
 *    one node they are attached to (domains.c). `prefer` also names
 *    its GPUs' CPU-bearing node(s), so a task whose cores spilled off the
 *    GPU's node still prefers memory there; mem_first names the node
 *    listed first (prefer: the GPU's; local: the one with most of the
 *    task's cores), the one MPOL_PREFERRED keeps on kernels without
 *    PREFERRED_MANY. With `cpuless`, the GPUs' own memory nodes (GPU memory linked by PCIBusID)
 *    and CPU-less nodes hwloc places beside the CPUs (HBM, CXL, PMEM).
 *  - interleave / weighted: the nodes named, else every CPU-bearing node
 *    (and every CPU-less one with cpuless).
 *  - none: nothing.
 */
#include "private/plan.h"

static void near_cpuless(const ngi_planner *p, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    hwloc_topology_t hw = ng_topology_hwloc(p->topo);
    unsigned n = ng_topology_numa_count(p->topo);
    for (unsigned i = 0; i < n; i++) {
        const ng_numa_info *node = ng_topology_numa(p->topo, i);
        /* GPU memory belongs to its GPU: added through the GPU only. */
        if (node->has_cpus || node->kind == NG_MEM_GPU)
            continue;
        hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(hw, node->os_index);
        if (obj && obj->cpuset && hwloc_bitmap_intersects(obj->cpuset, cpus))
            hwloc_bitmap_set(out, node->os_index);
    }
}

static void all_nodes(const ngi_planner *p, int cpuless, hwloc_bitmap_t out)
{
    unsigned n = ng_topology_numa_count(p->topo);
    for (unsigned i = 0; i < n; i++) {
        const ng_numa_info *node = ng_topology_numa(p->topo, i);
        if (node->has_cpus || cpuless)
            hwloc_bitmap_set(out, node->os_index);
    }
}

/* The units whose nodes hold the task's memory: its slice; for a task
 * released from its GPU's package (rule 2, bound.c) also its GPU's cores
 * (its home), the GPU's node named first (first_node). Planner v4 bound a
 * widened task's memory to its GPU's node alone: g4dn.metal's 6 + 18
 * cores had all of the rank's memory hard-bound to the node holding a
 * quarter of its cores, an OOM kill when that node filled. MPOL_BIND over
 * the GPU's node and its cores' nodes allocates on the faulting CPU's
 * node while it has memory (a thread on the GPU's node: there) and falls
 * back to the others of the set, nearest first, before any OOM; prefer
 * names the same set, preferred. */
static void memory_units(const ngi_planner *p, unsigned t, hwloc_bitmap_t out)
{
    hwloc_bitmap_copy(out, p->slice[t]);
    if (!p->home || !p->home[t] || !ngi_plan_released(p, t))
        return;
    hwloc_bitmap_or(out, out, p->home[t]);
}

static void task_nodes(const ngi_planner *p, unsigned t, int prefer, hwloc_bitmap_t out)
{
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), units = hwloc_bitmap_alloc();
    int u;
    memory_units(p, t, units);
    hwloc_bitmap_foreach_begin(u, units) {
        int mem = p->doms[p->units[u].dom].mem;
        hwloc_bitmap_set(out, ng_topology_numa(p->topo, (unsigned)mem)->os_index);
    } hwloc_bitmap_foreach_end();
    hwloc_bitmap_foreach_begin(u, p->slice[t]) {
        hwloc_bitmap_or(cpus, cpus, p->units[u].pus);
    } hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(units);
    unsigned ng;
    const int *gpus = ngi_plan_req_gpus(p->req, t, &ng);
    if (prefer)
        for (unsigned i = 0; i < ng; i++) {
            int os;
            hwloc_bitmap_foreach_begin(os, ng_topology_gpu(p->topo, (unsigned)gpus[i])->numa_nodes) {
                const ng_numa_info *ni = ng_topology_numa_by_os(p->topo, (unsigned)os);
                if (ni && ni->has_cpus)
                    hwloc_bitmap_set(out, (unsigned)os);
            } hwloc_bitmap_foreach_end();
        }
    if (p->req->policy.mods & NG_MOD_CPULESS) {
        for (unsigned i = 0; i < ng; i++)
            hwloc_bitmap_or(out, out, ng_topology_gpu(p->topo, (unsigned)gpus[i])->memory_nodes);
        near_cpuless(p, cpus, out);
    }
    hwloc_bitmap_free(cpus);
}

/* The node holding most of @units (ties: the first in line). */
static int main_node_of(const ngi_planner *p, hwloc_const_bitmap_t units)
{
    int best = -1;
    unsigned best_n = 0;
    for (unsigned d = 0; d < p->n_doms; d++) {
        unsigned n = 0;
        for (unsigned i = 0; i < p->doms[d].count; i++)
            n += hwloc_bitmap_isset(units, p->doms[d].first + i);
        if (n > best_n) {
            best_n = n;
            best = (int)ng_topology_numa(p->topo, (unsigned)p->doms[d].mem)->os_index;
        }
    }
    return best;
}

/* The node holding most of the task's memory units (above). */
static int main_node(const ngi_planner *p, unsigned t)
{
    hwloc_bitmap_t units = hwloc_bitmap_alloc();
    memory_units(p, t, units);
    int best = main_node_of(p, units);
    hwloc_bitmap_free(units);
    return best;
}

/* prefer: its GPU's (first CPU-bearing) node; a widened task: the node
 * of its home holding most of it (its GPU's, or for a remote GPU the node
 * chosen for it); else the main node. */
static int first_node(const ngi_planner *p, unsigned t, int prefer)
{
    if (!prefer && ngi_plan_released(p, t) && p->home && p->home[t])
        return main_node_of(p, p->home[t]);
    unsigned ng;
    const int *gpus = ngi_plan_req_gpus(p->req, t, &ng);
    for (unsigned i = 0; prefer && i < ng; i++) {
        int os;
        hwloc_bitmap_foreach_begin(os, ng_topology_gpu(p->topo, (unsigned)gpus[i])->numa_nodes) {
            const ng_numa_info *ni = ng_topology_numa_by_os(p->topo, (unsigned)os);
            if (ni && ni->has_cpus)
                return os;
        } hwloc_bitmap_foreach_end();
    }
    return main_node(p, t);
}

static void named_nodes(ngi_planner *p, hwloc_bitmap_t out)
{
    hwloc_bitmap_t named = hwloc_bitmap_alloc();
    ngi_nodemask_to_bitmap(p->req->policy.nodes, NG_NODEMASK_WORDS, named);
    int os;
    hwloc_bitmap_foreach_begin(os, named) {
        if (ng_topology_numa_by_os(p->topo, (unsigned)os))
            hwloc_bitmap_set(out, (unsigned)os);
        else
            ngi_plan_warn(p->plan, "--numa-policy names NUMA node %d, which this machine "
                                  "does not have; ignored", os);
    } hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(named);
}

/* The policy kind's row (lib/options/policy.c) says which nodes and which
 * mode; this file only knows how to find each kind of node set. */
ng_mem_mode ngi_plan_memory(ngi_planner *p, unsigned t, hwloc_bitmap_t mems)
{
    const ng_policy *pol = &p->req->policy;
    const ngi_policy_info *pi = ngi_policy_info_of(pol->kind);
    p->plan->tasks[t].mem_first = -1;
    switch (pi ? pi->nodes : NGI_NODES_NONE) {
    case NGI_NODES_TASK:
    case NGI_NODES_TASK_GPU_FIRST: {
        int gpu_first = pi->nodes == NGI_NODES_TASK_GPU_FIRST;
        task_nodes(p, t, gpu_first, mems);
        p->plan->tasks[t].mem_first = first_node(p, t, gpu_first);
        return pi->mem_mode;
    }
    case NGI_NODES_NAMED_OR_ALL:
        if (pol->has_nodes)
            named_nodes(p, mems);
        else
            all_nodes(p, (pol->mods & NG_MOD_CPULESS) != 0, mems);
        return pi->mem_mode;
    case NGI_NODES_NONE:
        break;  /* no default: a new way of choosing nodes must be a case */
    }
    return NG_MEM_MODE_NONE;
}
