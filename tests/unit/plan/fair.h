/* Planner v5's defect families (issue 37, docs/planner.md rules 2-5), as
 * make plan-quality counts them (bench/quality.c) and test_plan_fair
 * asserts them at 0 over the corpus. Public API only (numaguard.h), so
 * the bench builds it against older releases too. Each fair_* returns
 * how many tasks of @plan have the defect and, with @why, describes the
 * first.
 *   wide_over:  a GPU task with cores off its GPU's package (widened)
 *               and more than the even share + 1 cores;
 *   wide_half:  ... while its GPU's package held half its even share or
 *               more (cap cores for the k GPU tasks of those packages:
 *               2 cap tasks >= cores k; with fewer cores than tasks some
 *               must leave: not widening);
 *   remote:     a remote GPU task (no allowed core local to its GPU)
 *               whose main node keeps fewer allocated cores no other
 *               task holds than a node as near its GPU;
 *   scattered:  a local GPU task over more NUMA nodes than its GPU's
 *               nodes and the largest others need for its size, while a
 *               remote GPU task of the plan lies on one node. */
#ifndef NG_TEST_FAIR_H
#define NG_TEST_FAIR_H

#include "numaguard.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static inline unsigned fair_cores(hwloc_topology_t hw, hwloc_const_bitmap_t pus)
{
    int n = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    unsigned k = 0;
    for (int c = 0; c < n; c++)
        k += hwloc_bitmap_intersects(hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)c)->cpuset, pus);
    return n > 0 ? k : (unsigned)hwloc_bitmap_weight(pus);
}

static inline void fair_say(char *why, size_t len, const char *fmt, ...)
{
    if (!why || why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

/* Cores of @pus per CPU-bearing node (topology index); returns the main one. */
static inline unsigned fair_node_cores(const ng_topology *topo, hwloc_const_bitmap_t pus, unsigned *cnt)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned nn = ng_topology_numa_count(topo), main = 0;
    hwloc_bitmap_t part = hwloc_bitmap_alloc();
    for (unsigned i = 0; i < nn; i++) {
        cnt[i] = 0;
        if (!ng_topology_numa(topo, i)->has_cpus)
            continue;
        hwloc_bitmap_and(part, ng_topology_numa(topo, i)->cpus, pus);
        cnt[i] = fair_cores(hw, part);
        if (cnt[i] > cnt[main])
            main = i;
    }
    hwloc_bitmap_free(part);
    return main;
}

static inline unsigned fair_nodes_of(const ng_topology *topo, hwloc_const_bitmap_t pus, unsigned *cnt)
{
    unsigned n = 0;
    fair_node_cores(topo, pus, cnt);
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++)
        n += cnt[i] > 0;
    return n;
}

/* The packages of a task's GPUs' local CPUs (their CPU sets, united). */
static inline void fair_gpu_packages(const ng_topology *topo, const ng_task_plan *tp, hwloc_bitmap_t pk)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    hwloc_bitmap_t local = hwloc_bitmap_alloc();
    for (unsigned k = 0; k < tp->n_gpus; k++)
        hwloc_bitmap_or(local, local, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->cpus);
    hwloc_bitmap_zero(pk);
    int np = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PACKAGE);
    for (int i = 0; i < np; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PACKAGE, (unsigned)i);
        if (hwloc_bitmap_intersects(o->cpuset, local))
            hwloc_bitmap_or(pk, pk, o->cpuset);
    }
    hwloc_bitmap_free(local);
}

/* Widened tasks: beyond the even share + 1 (@half 0) or widened at half or more (@half 1). */
static inline unsigned fair_widened(const ng_topology *topo, const ng_plan *plan,
                                    hwloc_const_bitmap_t allowed, int half, char *why, size_t len)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned nt = ng_plan_task_count(plan), alloc = fair_cores(hw, allowed), bad = 0;
    hwloc_bitmap_t pk = hwloc_bitmap_alloc(), pk2 = hwloc_bitmap_alloc();
    for (unsigned t = 0; t < nt; t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        if (!tp->n_gpus || tp->gpu_remote || !tp->cpus)
            continue;
        fair_gpu_packages(topo, tp, pk);
        if (hwloc_bitmap_isincluded(tp->cpus, pk))
            continue;
        unsigned k = 0, size = fair_cores(hw, tp->cpus);
        for (unsigned o = 0; o < nt; o++) {
            if (!ng_plan_task(plan, o)->n_gpus)
                continue;
            fair_gpu_packages(topo, ng_plan_task(plan, o), pk2);
            k += hwloc_bitmap_isequal(pk, pk2);
        }
        hwloc_bitmap_and(pk2, pk, allowed);
        unsigned long cap = fair_cores(hw, pk2);
        int is = half ? cap >= k && 2ul * cap * nt >= (unsigned long)alloc * k : size > alloc / nt + 1;
        if (is)
            fair_say(why, len, "task %u widened: %u cores of %u for %u tasks, its package %lu for %u",
                     t, size, alloc, nt, cap, k);
        bad += is;
    }
    hwloc_bitmap_free(pk);
    hwloc_bitmap_free(pk2);
    return bad;
}

/* Distance from the nearest node of GPU task @tp's GPUs to node i (~0u unknown). */
static inline unsigned fair_gpu_dist(const ng_topology *topo, const ng_task_plan *tp, unsigned i)
{
    unsigned best = ~0u;
    for (unsigned k = 0; k < tp->n_gpus; k++) {
        int os;
        hwloc_bitmap_foreach_begin(os, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->numa_nodes) {
            unsigned d = ng_topology_distance(topo, (unsigned)os, ng_topology_numa(topo, i)->os_index);
            best = d && d < best ? d : best;
        } hwloc_bitmap_foreach_end();
    }
    return best;
}

static inline unsigned fair_remote(const ng_topology *topo, const ng_plan *plan,
                                   hwloc_const_bitmap_t allowed, char *why, size_t len)
{
    unsigned nt = ng_plan_task_count(plan), nn = ng_topology_numa_count(topo), bad = 0;
    unsigned *cnt = calloc(nn + 1, sizeof *cnt), *own = calloc(nn + 1, sizeof *own);
    hwloc_bitmap_t others = hwloc_bitmap_alloc(), free_r = hwloc_bitmap_alloc();
    for (unsigned t = 0; t < nt; t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        if (!tp->n_gpus || !tp->gpu_remote || !tp->cpus)
            continue;
        hwloc_bitmap_zero(others);
        for (unsigned o = 0; o < nt; o++)
            if (o != t && ng_plan_task(plan, o)->cpus)
                hwloc_bitmap_or(others, others, ng_plan_task(plan, o)->cpus);
        hwloc_bitmap_andnot(free_r, allowed, others);
        unsigned m = fair_node_cores(topo, tp->cpus, own), dm = fair_gpu_dist(topo, tp, m);
        fair_node_cores(topo, free_r, cnt);
        for (unsigned i = 0; i < nn && dm != ~0u; i++)
            if (ng_topology_numa(topo, i)->has_cpus && fair_gpu_dist(topo, tp, i) == dm &&
                cnt[i] > cnt[m]) {
                fair_say(why, len, "remote task %u on node %u (%u cores no other task holds), "
                         "node %u as near has %u", t, ng_topology_numa(topo, m)->os_index, cnt[m],
                         ng_topology_numa(topo, i)->os_index, cnt[i]);
                bad++;
                break;
            }
    }
    hwloc_bitmap_free(others);
    hwloc_bitmap_free(free_r);
    free(cnt);
    free(own);
    return bad;
}

/* The fewest nodes a local GPU task of @size cores needs: its GPUs'
 * nodes' allocated cores first, then the nodes with the most. */
static inline unsigned fair_nodes_needed(const ng_topology *topo, const ng_task_plan *tp, unsigned size,
                                         const unsigned *alloc_cnt)
{
    unsigned nn = ng_topology_numa_count(topo), have = 0, nodes = 0;
    unsigned char *taken = calloc(nn + 1, 1);
    for (unsigned i = 0; i < nn; i++)
        if (alloc_cnt[i] && fair_gpu_dist(topo, tp, i) == 10) {
            taken[i] = 1;
            have += alloc_cnt[i];
            nodes++;
        }
    while (have < size) {
        int best = -1;
        for (unsigned i = 0; i < nn; i++)
            if (!taken[i] && alloc_cnt[i] && (best < 0 || alloc_cnt[i] > alloc_cnt[best]))
                best = (int)i;
        if (best < 0)
            break;
        taken[best] = 1;
        have += alloc_cnt[best];
        nodes++;
    }
    free(taken);
    return nodes;
}

/* The CPU-bearing nodes of a task's GPUs (OS indices). */
static inline void fair_gpu_nodes(const ng_topology *topo, const ng_task_plan *tp, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (unsigned k = 0; k < tp->n_gpus; k++)
        hwloc_bitmap_or(out, out, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->numa_nodes);
}

/* Local GPU tasks are judged by the tasks of their GPUs' nodes together:
 * two tasks of one GPU whose node holds 14 cores for 9 + 9 must use a
 * second node between them. */
static inline unsigned fair_scattered(const ng_topology *topo, const ng_plan *plan,
                                      hwloc_const_bitmap_t allowed, char *why, size_t len)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned nt = ng_plan_task_count(plan), nn = ng_topology_numa_count(topo), bad = 0;
    unsigned *cnt = calloc(nn + 1, sizeof *cnt), *own = calloc(nn + 1, sizeof *own);
    hwloc_bitmap_t mine = hwloc_bitmap_alloc(), theirs = hwloc_bitmap_alloc(), group = hwloc_bitmap_alloc();
    int compact_remote = 0;
    for (unsigned t = 0; t < nt; t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        if (tp->n_gpus && tp->gpu_remote && tp->cpus)
            compact_remote |= fair_nodes_of(topo, tp->cpus, own) == 1;
    }
    fair_node_cores(topo, allowed, cnt);
    for (unsigned t = 0; compact_remote && t < nt; t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        if (!tp->n_gpus || tp->gpu_remote || !tp->cpus)
            continue;
        fair_gpu_nodes(topo, tp, mine);
        hwloc_bitmap_zero(group);
        int first = 1;
        for (unsigned o = 0; o < nt && first; o++) {
            const ng_task_plan *op = ng_plan_task(plan, o);
            if (!op->n_gpus || op->gpu_remote || !op->cpus)
                continue;
            fair_gpu_nodes(topo, op, theirs);
            if (!hwloc_bitmap_isequal(mine, theirs))
                continue;
            first = o >= t;
            hwloc_bitmap_or(group, group, op->cpus);
        }
        if (!first)
            continue;   /* judged with the first of its group */
        unsigned nodes = fair_nodes_of(topo, group, own);
        unsigned need = fair_nodes_needed(topo, tp, fair_cores(hw, group), cnt);
        if (nodes > need) {
            fair_say(why, len, "local task %u (with its GPU's others) over %u nodes (%u would do) "
                     "beside a compact remote task", t, nodes, need);
            bad++;
        }
    }
    hwloc_bitmap_free(mine);
    hwloc_bitmap_free(theirs);
    hwloc_bitmap_free(group);
    free(cnt);
    free(own);
    return bad;
}

#endif
