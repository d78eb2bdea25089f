/* GPU tasks stay on their GPU's package (docs/planner.md, rule 3).
 *
 * Without -c and without the `wide` modifier, a GPU task's CPUs stay in the
 * package(s) of its home: host buffers and data-loading threads on another
 * socket would cross the socket link on every copy to the GPU. GPU tasks
 * whose homes' packages overlap form a package group; the step's cores are
 * shared by water-filling: the largest even level L such that
 *     sum over groups of min(k * L, cores of the group's packages)
 *   + CPU-only tasks * L  <=  allocated cores
 * (k: the group's GPU tasks, each at least one core). A group whose
 * packages cannot give its tasks L each ("capped") shares its packages'
 * cores; the other tasks get L and the cores left over as +1s. So the
 * cores GPU tasks leave on other packages go to the step's CPU-only
 * tasks, or stay idle when it has none (the plan says so: note_idle()).
 * A group with more tasks than cores still gives each task one core,
 * found beyond its packages (the only way a GPU task leaves them).
 */
#include "private/plan.h"

#include <stdio.h>
#include <stdlib.h>

/* Package ids (+1: a unit of no package is 0) of @units. */
static void packages_of(const ngi_planner *p, hwloc_const_bitmap_t units, hwloc_bitmap_t out)
{
    int u;
    hwloc_bitmap_zero(out);
    hwloc_bitmap_foreach_begin(u, units) {
        hwloc_bitmap_set(out, (unsigned)(p->units[u].pkg + 1));
    } hwloc_bitmap_foreach_end();
}

static ngi_pkg_groups *groups_alloc(unsigned nt)
{
    ngi_pkg_groups *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->of_task = malloc(nt * sizeof *g->of_task);
    g->pkgs = calloc(nt, sizeof *g->pkgs);
    g->cap = calloc(nt, sizeof *g->cap);
    g->k = calloc(nt, sizeof *g->k);
    g->room = calloc(nt, sizeof *g->room);
    g->capped = calloc(nt, sizeof *g->capped);
    g->released = calloc(nt, sizeof *g->released);
    if (!g->of_task || !g->pkgs || !g->cap || !g->k || !g->room || !g->capped || !g->released) {
        ngi_plan_free_groups(g, 0);
        return NULL;
    }
    return g;
}

void ngi_plan_free_groups(ngi_pkg_groups *g, unsigned nt)
{
    if (!g)
        return;
    for (unsigned i = 0; g->pkgs && i < nt; i++)
        hwloc_bitmap_free(g->pkgs[i]);
    free(g->of_task);
    free(g->pkgs);
    free(g->cap);
    free(g->k);
    free(g->room);
    free(g->capped);
    free(g->released);
    free(g);
}

/* GPU tasks whose homes' packages overlap are one group. */
static int build_groups(const ngi_planner *p, ngi_pkg_groups *g, hwloc_bitmap_t *tp)
{
    int n = ngi_plan_group_tasks(p, tp, g->of_task);
    for (int i = 0; i < n; i++)
        if (!(g->pkgs[i] = hwloc_bitmap_alloc()))
            return -1;
    g->n = n < 0 ? 0 : (unsigned)n;
    for (unsigned t = 0; n > 0 && t < p->req->ntasks; t++) {
        int i = g->of_task[t];
        if (i < 0)
            continue;
        hwloc_bitmap_or(g->pkgs[i], g->pkgs[i], tp[t]);
        g->k[i]++;
    }
    for (unsigned u = 0; u < p->n_units; u++)
        for (unsigned i = 0; i < g->n; i++)
            g->cap[i] += hwloc_bitmap_isset(g->pkgs[i], (unsigned)(p->units[u].pkg + 1));
    return n < 0 ? -1 : 0;
}

/* Cores the step needs at level L (each GPU task at least one; a
 * released group's tasks L each, like CPU-only tasks). */
static unsigned long demand(const ngi_pkg_groups *g, unsigned cpu_tasks, unsigned long L,
                            unsigned long even)
{
    unsigned long d = cpu_tasks * L;
    for (unsigned i = 0; i < g->n; i++) {
        unsigned long want = g->k[i] * L < g->cap[i] ? g->k[i] * L : g->cap[i];
        if (g->released[i])
            want = g->k[i] * (L < even ? L : even);
        d += want > g->k[i] ? want : g->k[i];
    }
    return d;
}

/* Rule 2 (docs/planner.md): a group whose packages give each of its tasks
 * strictly less than half of the step's even share (cap / k < cores /
 * tasks / 2, compared exactly: 2 cap tasks < cores k) is released: its
 * tasks take the even share (never more: floor(cores / tasks), a +1 at
 * most) like CPU-only tasks, nearest cores first (seat.c), memory bound
 * to their GPUs' nodes and their cores' (mem.c). Kept on its packages it
 * would starve a GPU beside idle allocated cores (g4dn.metal, 6 of 24
 * cores on GPU 0's socket: 6 cores, 18 idle). At exactly half or more the
 * package keeps it (JUSUF, one GPU, 3 tasks: the socket's 64 of 128
 * cores, 21 or 22 each, as with 2 or 4 tasks): the cores it leaves idle
 * are said (ngi_plan_note_idle). Floors made 3 tasks on 64 of 128 cores
 * (21 < 42.67 / 2 after rounding) widen while 2 and 4 did not. */
static void release_starved(const ngi_planner *p, ngi_pkg_groups *g)
{
    unsigned long n = p->n_units, nt = p->req->ntasks;
    for (unsigned i = 0; i < g->n; i++)
        g->released[i] = 2ul * g->cap[i] * nt < n * g->k[i];
}

/* The water level and the sizes it gives; the +1s are left in p->extra. */
static void fill(ngi_planner *p, ngi_pkg_groups *g, unsigned cpu_tasks)
{
    unsigned long lo = 1, hi = p->n_units, even = p->n_units / p->req->ntasks;
    while (lo < hi) {
        unsigned long mid = (lo + hi + 1) / 2;
        if (demand(g, cpu_tasks, mid, even) <= p->n_units)
            lo = mid;
        else
            hi = mid - 1;
    }
    p->base = (unsigned)lo;
    p->extra = p->n_units - (unsigned)demand(g, cpu_tasks, lo, even);
    for (unsigned i = 0; i < g->n; i++) {
        g->capped[i] = !g->released[i] && g->k[i] * lo >= g->cap[i];
        g->room[i] = g->capped[i] || g->released[i] ? 0 : g->cap[i] - g->k[i] * (unsigned)lo;
    }
    /* A capped group shares its packages' cores: floor(cores / tasks) each
     * (at least one), and room holds its +1s, which seat.c hands out as the
     * step's +1s are (homes with spare cores first). */
    for (unsigned t = 0; t < p->req->ntasks; t++) {
        int i = g->of_task[t];
        unsigned s = i >= 0 && g->capped[i] ? g->cap[i] / g->k[i] : p->base;
        /* A widened task: the even share at most (its +1 from p->extra). */
        if (i >= 0 && g->released[i] && s > even)
            s = (unsigned)even;
        p->size[t] = s ? s : 1;
    }
    for (unsigned i = 0; i < g->n; i++)
        if (g->capped[i])
            g->room[i] = g->cap[i] >= g->k[i] ? g->cap[i] % g->k[i] : 0;
}

int ngi_plan_bound_sizes(ngi_planner *p)
{
    unsigned nt = p->req->ntasks, cpu_tasks = 0;
    ngi_pkg_groups *g = groups_alloc(nt);
    hwloc_bitmap_t *tp = calloc(nt, sizeof *tp);
    int rc = g && tp ? 0 : -1;
    for (unsigned t = 0; rc == 0 && t < nt; t++) {
        cpu_tasks += !p->home[t];
        if (p->home[t] && (tp[t] = hwloc_bitmap_alloc()) != NULL)
            packages_of(p, p->home[t], tp[t]);
        else if (p->home[t])
            rc = -1;
    }
    if (rc == 0)
        rc = build_groups(p, g, tp);
    if (rc == 0) {
        release_starved(p, g);
        fill(p, g, cpu_tasks);
        p->groups = g;
    } else {
        ngi_plan_free_groups(g, nt);
    }
    for (unsigned t = 0; tp && t < nt; t++)
        hwloc_bitmap_free(tp[t]);
    free(tp);
    return rc;
}

int ngi_plan_released(const ngi_planner *p, unsigned t)
{
    const ngi_pkg_groups *g = p->groups;
    return g && g->of_task[t] >= 0 && g->released[g->of_task[t]];
}

/* Kept on its packages: bound and not released. */
static int kept(const ngi_pkg_groups *g, unsigned t)
{
    return g && g->of_task[t] >= 0 && !g->released[g->of_task[t]];
}

int ngi_plan_has_room(const ngi_planner *p, unsigned t)
{
    const ngi_pkg_groups *g = p->groups;
    if (!kept(g, t))
        return 1;
    return !g->capped[g->of_task[t]] && g->room[g->of_task[t]] > 0;
}

int ngi_plan_group_plus(const ngi_planner *p, unsigned t)
{
    const ngi_pkg_groups *g = p->groups;
    return kept(g, t) && g->capped[g->of_task[t]] && g->room[g->of_task[t]] > 0;
}

void ngi_plan_take_room(ngi_planner *p, unsigned t)
{
    ngi_pkg_groups *g = p->groups;
    if (kept(g, t) && g->room[g->of_task[t]] > 0)
        g->room[g->of_task[t]]--;
}

int ngi_plan_may_spill(const ngi_planner *p, unsigned t, unsigned dom)
{
    const ngi_pkg_groups *g = p->groups;
    if (!kept(g, t))
        return 1;
    return hwloc_bitmap_isset(g->pkgs[g->of_task[t]], (unsigned)(p->doms[dom].pkg + 1));
}

/* Idle allocated cores while GPU tasks were kept on their packages: said
 * in every kept GPU task's note (the verbose line, plan --explain); the
 * plan's warning names the options that would use them (plan.c). A
 * widened task's note says why it left its GPU's socket. */
void ngi_plan_note_idle(ngi_planner *p)
{
    if (!p->groups)
        return;
    unsigned idle = 0, nt = p->req->ntasks;
    for (unsigned u = 0; u < p->n_units; u++)
        idle += !hwloc_bitmap_isset(p->used, u);
    snprintf(p->plan->note, sizeof p->plan->note,
             "kept on its GPU's socket: %u allocated core%s idle on other sockets", idle,
             idle == 1 ? "" : "s");
    snprintf(p->plan->note_widened, sizeof p->plan->note_widened,
             "widened: its GPU's socket holds under half its even share; memory on its GPU's node "
             "first, then its cores' nodes");
    for (unsigned t = 0; t < nt; t++) {
        if (ngi_plan_released(p, t))
            p->plan->tasks[t].note = p->plan->note_widened;
        else if (p->home[t] && idle)
            p->plan->tasks[t].note = p->plan->note;
    }
}
