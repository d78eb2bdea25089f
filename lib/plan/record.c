/* The cut records ng_plan_explain reads (explain.c): what each chooser
 * saw and the units it cut (cut.c, seat.c, share.c), what the passes after
 * the cuts re-laid (home.c's settle, pack.c), and, once the slices are
 * final, which tasks and units each record describes (docs/planner.md,
 * "Explaining a plan"). Nothing here changes a slice. */
#include "private/plan.h"

#include <stdlib.h>
#include <string.h>

/* Keep what the chooser saw, for the explanation (explain.c). A record
 * that cannot be kept (no memory) only thins the explanation. */
void ngi_plan_record_cut(ngi_planner *p, const unsigned *tasks, unsigned nt,
                         hwloc_const_bitmap_t set, int what, const ngi_cut_trace *trace)
{
    ng_plan *plan = p->plan;
    ngi_cut_record *grown = realloc(plan->cuts, (plan->n_cuts + 1) * sizeof *grown);
    if (!grown)
        return;
    plan->cuts = grown;
    ngi_cut_record *r = &grown[plan->n_cuts];
    *r = (ngi_cut_record){.tasks = malloc(nt * sizeof *r->tasks), .nt = nt, .what = what,
                          .trace = *trace, .set = hwloc_bitmap_dup(set), .cut_nt = nt};
    if (!r->tasks || !r->set) {
        free(r->tasks);
        hwloc_bitmap_free(r->set);
        return;
    }
    memcpy(r->tasks, tasks, nt * sizeof *tasks);
    r->units = r->cut_units = (unsigned)hwloc_bitmap_weight(set);
    plan->n_cuts++;
}

void ngi_plan_record_relaid(ngi_planner *p, const unsigned *tasks, unsigned nt, int what,
                            unsigned before, unsigned after)
{
    unsigned *order = malloc((nt ? nt : 1) * sizeof *order);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    ngi_cut_trace none = {.chosen = -1};
    for (unsigned i = 0; order && set && i < nt; i++) {
        unsigned k = i;
        for (; k > 0 && hwloc_bitmap_first(p->slice[order[k - 1]]) >
                        hwloc_bitmap_first(p->slice[tasks[i]]); k--)
            order[k] = order[k - 1];
        order[k] = tasks[i];
        hwloc_bitmap_or(set, set, p->slice[tasks[i]]);
    }
    unsigned had = p->plan->n_cuts;
    if (order && set)
        ngi_plan_record_cut(p, order, nt, set, what, &none);
    if (p->plan->n_cuts > had) {
        p->plan->cuts[had].before = before;
        p->plan->cuts[had].after = after;
    }
    free(order);
    hwloc_bitmap_free(set);
}

/* Record @i keeps the tasks @owner gives it (in its order), and the units
 * of its set no later record took (@later) and no task of another record
 * holds (@held: every task's units). */
static void keep_final(ngi_planner *p, ngi_cut_record *r, unsigned i, const int *owner,
                       hwloc_bitmap_t later, hwloc_const_bitmap_t held)
{
    hwloc_bitmap_t others = hwloc_bitmap_dup(held);
    unsigned k = 0;
    for (unsigned j = 0; j < r->nt; j++)
        if (owner[r->tasks[j]] == (int)i)
            r->tasks[k++] = r->tasks[j];
    r->nt = k;
    for (unsigned j = 0; others && j < k; j++)
        hwloc_bitmap_andnot(others, others, p->slice[r->tasks[j]]);
    hwloc_bitmap_andnot(r->set, r->set, later);
    if (others)
        hwloc_bitmap_andnot(r->set, r->set, others);
    r->units = (unsigned)hwloc_bitmap_weight(r->set);
    hwloc_bitmap_or(later, later, r->set);
    hwloc_bitmap_free(others);
}

/* A task's slice was laid out last by the last record naming it: the
 * passes after the cut (ngi_plan_settle_remote, ngi_plan_pack_remote)
 * record the tasks they re-laid after the cuts that first laid them
 * (home_share_cut too re-cuts a region's tasks on their home). So the
 * explanation's splits say which tasks share which cores in the plan as
 * it is, and what laid each out (docs/planner.md, "Explaining a plan"). */
void ngi_plan_final_cuts(ngi_planner *p)
{
    ng_plan *plan = p->plan;
    unsigned nt = p->req->ntasks, kept = 0;
    int *owner = malloc((nt ? nt : 1) * sizeof *owner);
    hwloc_bitmap_t later = hwloc_bitmap_alloc(), held = hwloc_bitmap_alloc();
    if (!owner || !later || !held) {
        free(owner);
        hwloc_bitmap_free(later);
        hwloc_bitmap_free(held);
        return;
    }
    for (unsigned t = 0; t < nt; t++) {
        owner[t] = -1;
        hwloc_bitmap_or(held, held, p->slice[t]);
    }
    for (unsigned i = plan->n_cuts; i-- > 0;)
        for (unsigned j = 0; j < plan->cuts[i].nt; j++)
            if (plan->cuts[i].tasks[j] < nt && owner[plan->cuts[i].tasks[j]] < 0)
                owner[plan->cuts[i].tasks[j]] = (int)i;
    for (unsigned i = plan->n_cuts; i-- > 0;)
        keep_final(p, &plan->cuts[i], i, owner, later, held);
    for (unsigned i = 0; i < plan->n_cuts; i++) {
        if (plan->cuts[i].nt == 0) {
            free(plan->cuts[i].tasks);
            hwloc_bitmap_free(plan->cuts[i].set);
            continue;
        }
        plan->cuts[kept++] = plan->cuts[i];
    }
    plan->n_cuts = kept;
    free(owner);
    hwloc_bitmap_free(later);
    hwloc_bitmap_free(held);
}

void ngi_plan_free_cuts(ng_plan *plan)
{
    for (unsigned i = 0; i < plan->n_cuts; i++) {
        free(plan->cuts[i].tasks);
        hwloc_bitmap_free(plan->cuts[i].set);
    }
    free(plan->cuts);
    plan->cuts = NULL;
    plan->n_cuts = 0;
}
