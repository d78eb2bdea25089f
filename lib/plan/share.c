/* Phase (b2'), with fewer cores than tasks: every task gets one core and
 * tasks share. A GPU task takes the least-loaded core of its home while the
 * home is below the step's even load (ceil(tasks / cores)), so sharing
 * inside the home comes before leaving it; then the nearest core below that
 * load (seat.c's distances from a home). GPU tasks go first, most
 * constrained first (seat.c's order), then the CPU-only ones.
 */
#include "private/plan.h"

#include <stdlib.h>

static int least_loaded(const unsigned *load, unsigned n)
{
    int best = -1;
    for (unsigned u = 0; u < n; u++)
        if (best < 0 || load[u] < load[best])
            best = (int)u;
    return best;
}

/* A GPU task: the least-loaded core of its home below @limit, else the
 * nearest core below it (distance, package, L3), with a warning. */
static int least_loaded_near(ngi_planner *p, unsigned t, const unsigned *load, unsigned limit)
{
    int best = -1, u;
    hwloc_bitmap_foreach_begin(u, p->home[t]) {
        if (load[u] < limit && (best < 0 || load[u] < load[best]))
            best = u;
    } hwloc_bitmap_foreach_end();
    if (best >= 0)
        return best;
    ngi_rank br = {0, 0, 0, 0};
    for (unsigned u2 = 0; u2 < p->n_units; u2++) {
        if (load[u2] >= limit)
            continue;
        ngi_rank r = ngi_plan_rank_of(p, p->home[t], (unsigned)p->units[u2].dom);
        int cmp = best < 0 ? -1 : ngi_plan_rank_cmp(r, br);
        if (cmp < 0 || (cmp == 0 && load[u2] < load[best])) {
            best = (int)u2;
            br = r;
        }
    }
    ngi_plan_warn(p->plan, "not enough cores local to each task's GPU(s): some tasks get cores "
                          "farther away");
    return best;
}

int ngi_plan_share_cores(ngi_planner *p, char *err, size_t errlen)
{
    unsigned nt = p->req->ntasks, n = p->n_units;
    unsigned limit = (nt + n - 1) / n;
    unsigned *load = calloc(n, sizeof *load);
    unsigned *order = malloc(nt * sizeof *order), k = 0;
    if (!load || !order) {
        free(load);
        free(order);
        return ngi_fail(err, errlen, "out of memory");
    }
    for (unsigned t = 0; t < nt; t++)
        if (p->home[t])
            order[k++] = t;
    ngi_plan_sort_members(p, order, k);
    for (unsigned t = 0; t < nt; t++)
        if (!p->home[t])
            order[k++] = t;
    for (unsigned j = 0; j < nt; j++) {
        unsigned t = order[j];
        int best = p->home[t] ? least_loaded_near(p, t, load, limit) : least_loaded(load, n);
        load[best]++;
        hwloc_bitmap_set(p->slice[t], (unsigned)best);
        hwloc_bitmap_set(p->used, (unsigned)best);
        p->plan->tasks[t].shares_cores = 1;
    }
    ngi_plan_warn(p->plan, "%u tasks share %u cores: tasks will compete for CPUs", nt, n);
    ngi_cut_trace none = {.chosen = -1};
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    if (all) {
        hwloc_bitmap_set_range(all, 0, (int)n - 1);
        ngi_plan_record_cut(p, order, nt, all, NGI_CUT_WHAT_SHARED, &none);
    }
    hwloc_bitmap_free(all);
    free(load);
    free(order);
    return 0;
}
