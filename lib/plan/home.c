/* Phase (b1): each GPU task's home. A GPU task's home is the allowed units
 * local to its GPUs; a task whose GPUs have none ("remote") gets ONE
 * nearest domain by NUMA distance (ties: the domain holding the most
 * allocated cores in no other home, then the fewest tasks already calling
 * it home, then the lowest). seat.c seats the tasks from their homes. */
#include "private/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG 0x7fffffff

/* 1 if @set holds a unit of domain d (hwloc 2.9 has no range query). */
int ngi_plan_touches(const ngi_planner *p, hwloc_const_bitmap_t set, unsigned d)
{
    int u = hwloc_bitmap_next(set, (int)p->doms[d].first - 1);
    return u >= 0 && (unsigned)u < p->doms[d].first + p->doms[d].count;
}

static void units_in(const ngi_planner *p, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (unsigned u = 0; u < p->n_units; u++)
        if (hwloc_bitmap_intersects(p->units[u].pus, cpus))
            hwloc_bitmap_set(out, u);
}

/* Per domain: tasks whose home touches it (claim), and its allocated
 * units no home task will take (left: the units less the share of each
 * task calling it home, the even share or -c's cores, a home over several
 * domains claiming from its first domains first, as its cut fills them);
 * kept as homes are set. A local home
 * claims its tasks' share, not the whole node: the GH200 model with
 * cores 62-133 has node 0's 10 cores and node 1's 62 each claimed by one
 * task of 18; node 1 keeps 44 for the remote tasks, node 0 none. */
typedef struct claims {
    unsigned *claim, *left;
    unsigned share;        /* the even share: units / tasks, at least 1 */
} claims;

static void add_claims(const ngi_planner *p, hwloc_const_bitmap_t home, claims *c)
{
    unsigned want = c->share;
    for (unsigned d = 0; d < p->n_doms; d++) {
        if (!ngi_plan_touches(p, home, d))
            continue;
        c->claim[d]++;
        unsigned take = c->left[d] < want ? c->left[d] : want;
        c->left[d] -= take;
        want -= take;
    }
}

/* Distance from the nearest of @src (OS indices) to domain d; ~0u unknown. */
static unsigned dist_to(const ngi_planner *p, hwloc_const_bitmap_t src, unsigned d)
{
    unsigned dist = ~0u;
    int os;
    hwloc_bitmap_foreach_begin(os, src) {
        unsigned x = ng_topology_distance(p->topo, (unsigned)os,
                                          ng_topology_numa(p->topo, (unsigned)p->doms[d].mem)->os_index);
        if (x && x < dist)
            dist = x;
    } hwloc_bitmap_foreach_end();
    return dist;
}

/* Rule 5: among domains equally near, the one holding more of the
 * allocation that no home task will take (XE8640, GPU 0 remote, cores
 * 24-39: node 2's 12 rather than node 1's 4; GH200, cores 62-133: node 1's
 * 62 shared by one task rather than node 0's 10), then the fewest tasks
 * calling it home (twin remote GPUs spread), then the lowest. */
static int nearer(unsigned dist, unsigned left, unsigned claim, unsigned bdist, unsigned bleft,
                  unsigned bclaim)
{
    if (dist != bdist)
        return dist < bdist;
    if (left != bleft)
        return left > bleft;
    return claim < bclaim;
}

static void remote_home(ngi_planner *p, unsigned t, const int *gpus, unsigned n, claims *cl)
{
    hwloc_bitmap_t src = hwloc_bitmap_alloc();
    for (unsigned i = 0; i < n; i++)
        hwloc_bitmap_or(src, src, ng_topology_gpu(p->topo, (unsigned)gpus[i])->numa_nodes);
    unsigned best_d = ~0u;
    int best = -1, known = 0;
    for (unsigned d = 0; d < p->n_doms; d++) {
        unsigned dist = dist_to(p, src, d);
        known |= dist != ~0u;
        if (best < 0 || nearer(dist, cl->left[d], cl->claim[d], best_d, cl->left[best],
                               cl->claim[best])) {
            best = (int)d;
            best_d = dist;
        }
    }
    p->home[t] = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(p->home[t], p->doms[best].first,
                           (int)(p->doms[best].first + p->doms[best].count - 1));
    cl->claim[best]++;
    cl->left[best] = cl->left[best] > cl->share ? cl->left[best] - cl->share : 0;
    char names[128], on[48] = "";
    ng_gpu_list_format(p->topo, gpus, n, names, sizeof(names));
    int gos = hwloc_bitmap_first(src);
    if (gos >= 0)
        snprintf(on, sizeof on, " (on NUMA node %d)", gos);
    unsigned bos = ng_topology_numa(p->topo, (unsigned)p->doms[best].mem)->os_index;
    if (known)
        ngi_plan_warn(p->plan, "GPU %s%s: no allowed core is local to it; its task uses NUMA "
                              "node %u, the nearest with the most cores to spare",
                      names, on, bos);
    else
        ngi_plan_warn(p->plan, "GPU %s%s: no allowed core is local to it and NUMA "
                              "distances cannot tell which is nearest: its task uses NUMA node %u",
                      names, on, bos);
    hwloc_bitmap_free(src);
}

int ngi_plan_homes(ngi_planner *p, char *err, size_t errlen)
{
    unsigned nt = p->req->ntasks, ngpu = ng_topology_gpu_count(p->topo);
    claims cl = {calloc(p->n_doms, sizeof *cl.claim), calloc(p->n_doms, sizeof *cl.left), 1};
    hwloc_bitmap_t local = hwloc_bitmap_alloc();
    if (!cl.claim || !cl.left || !local) {
        free(cl.claim);
        free(cl.left);
        hwloc_bitmap_free(local);
        return ngi_fail(err, errlen, "out of memory");
    }
    for (unsigned d = 0; d < p->n_doms; d++)
        cl.left[d] = p->doms[d].count;
    cl.share = p->n_units / nt ? p->n_units / nt : 1;
    /* -c as a size (plan.c's set_sizes): each task claims -c's cores. */
    unsigned smt = p->max_smt ? p->max_smt : 1;
    unsigned cap = p->req->cpus_per_task ? (p->req->cpus_per_task + smt - 1) / smt : 0;
    if (cap && (unsigned long)cap * nt <= p->n_units)
        cl.share = cap;
    /* Local homes first, so remote tasks see them when spreading. */
    for (int pass = 0; pass < 2; pass++)
        for (unsigned t = 0; t < nt; t++) {
            unsigned n;
            const int *gpus = ngi_plan_req_gpus(p->req, t, &n);
            if (n == 0 || (pass == 1 && !p->plan->tasks[t].gpu_remote))
                continue;
            if (pass == 1) {
                remote_home(p, t, gpus, n, &cl);
                continue;
            }
            hwloc_bitmap_zero(local);
            for (unsigned i = 0; i < n; i++) {
                if (gpus[i] < 0 || (unsigned)gpus[i] >= ngpu) {
                    hwloc_bitmap_free(local);
                    free(cl.claim);
                    free(cl.left);
                    return ngi_fail(err, errlen, "task %u: GPU index %d is not a GPU of this "
                                                "topology (it has %u)", t, gpus[i], ngpu);
                }
                hwloc_bitmap_or(local, local, ng_topology_gpu(p->topo, (unsigned)gpus[i])->cpus);
            }
            p->home[t] = hwloc_bitmap_alloc();
            units_in(p, local, p->home[t]);
            if (hwloc_bitmap_iszero(p->home[t])) {
                hwloc_bitmap_free(p->home[t]);
                p->home[t] = NULL;
                p->plan->tasks[t].gpu_remote = 1;
            } else {
                add_claims(p, p->home[t], &cl);
            }
        }
    hwloc_bitmap_free(local);
    free(cl.claim);
    free(cl.left);
    return 0;
}
