/* Phase (b2): seating GPU tasks, home first (their homes: home.c).
 *
 * Tasks whose homes
 * overlap form a component, planned over the union of their homes. A
 * component whose tasks want more cores than its home has spills over to free
 * units: by NUMA distance from its home, then same package, then same L3, then
 * the nearest domain in hwloc order; when several components compete, the one
 * with the fewest equally good choices goes first. Units of another GPU's home
 * are taken only when that GPU's own tasks leave them free. Each component's
 * region (home + spill) is then cut by the cutter (cut.c), so GPU tasks
 * get the same objective as CPU-only ones. With fewer cores than tasks
 * the tasks share cores instead (share.c, by the same distances).
 */
#include "private/plan.h"

#include <stdlib.h>
#include <string.h>

#define BIG 0x7fffffff

/* ---- distances from a home ------------------------------------------- */

/* How far domain x is from the domains of @home (a set of units). */
ngi_rank ngi_plan_rank_of(const ngi_planner *p, hwloc_const_bitmap_t home, unsigned x)
{
    ngi_rank r = {~0u, 1, 1, ~0u};
    for (unsigned h = 0; h < p->n_doms; h++) {
        const ngi_domain *d = &p->doms[h];
        if (!ngi_plan_touches(p, home, h))
            continue;
        unsigned dist = p->dist[h * p->n_doms + x];
        unsigned gap = h > x ? h - x : x - h;
        if (dist < r.dist)
            r.dist = dist;
        if (gap < r.gap)
            r.gap = gap;
        if (d->pkg == p->doms[x].pkg)
            r.pkg_miss = 0;
        if (d->l3 >= 0 && d->l3 == p->doms[x].l3)
            r.l3_miss = 0;
    }
    return r;
}

int ngi_plan_rank_cmp(ngi_rank a, ngi_rank b)
{
    if (a.dist != b.dist)
        return a.dist < b.dist ? -1 : 1;
    if (a.pkg_miss != b.pkg_miss)
        return a.pkg_miss < b.pkg_miss ? -1 : 1;
    if (a.l3_miss != b.l3_miss)
        return a.l3_miss < b.l3_miss ? -1 : 1;
    if (a.gap != b.gap)
        return a.gap < b.gap ? -1 : 1;
    return 0;
}

/* ---- components ------------------------------------------------------- */

typedef struct comp {
    unsigned *tasks;   /* members, most constrained first */
    unsigned n;
    hwloc_bitmap_t home;   /* union of the members' homes */
    hwloc_bitmap_t region; /* home + spill */
    unsigned demand;
    unsigned need;         /* spill still wanted */
    int identical;         /* all members have the same home */
    int done;              /* cut */
} comp;

/* Most constrained first: smallest home, then where it starts, then task id.
 * Keys are copied out so qsort needs no global (the planner is reentrant). */
typedef struct member_key {
    int home_size, first;
    unsigned task;
} member_key;

static int cmp_member(const void *a, const void *b)
{
    const member_key *x = a, *y = b;
    if (x->home_size != y->home_size)
        return x->home_size < y->home_size ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->task < y->task ? -1 : (x->task > y->task);
}

void ngi_plan_sort_members(const ngi_planner *p, unsigned *tasks, unsigned n)
{
    member_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!k)
        return; /* task order: still deterministic */
    for (unsigned i = 0; i < n; i++) {
        k[i].task = tasks[i];
        k[i].home_size = hwloc_bitmap_weight(p->home[tasks[i]]);
        k[i].first = hwloc_bitmap_first(p->home[tasks[i]]);
    }
    qsort(k, n, sizeof *k, cmp_member);
    for (unsigned i = 0; i < n; i++)
        tasks[i] = k[i].task;
    free(k);
}

/* Components: GPU tasks whose homes overlap (common.c's union-find), a
 * remote task never with local ones (rule 4: they are seated after, from
 * what the local ones leave). Returns how many, -1 without memory. */
static int build_comps(ngi_planner *p, comp *c)
{
    unsigned nt = p->req->ntasks;
    int *id = malloc(nt * sizeof *id);
    int nc = id ? ngi_plan_group_tasks_apart(p, p->home, id, 1) : -1;
    for (int i = 0; i < nc; i++) {
        c[i].tasks = malloc(nt * sizeof(unsigned));
        c[i].home = hwloc_bitmap_alloc();
        c[i].region = hwloc_bitmap_alloc();
        c[i].identical = 1;
        if (!c[i].tasks || !c[i].home || !c[i].region)
            nc = -1;
    }
    for (unsigned t = 0; nc > 0 && t < nt; t++) {
        if (id[t] < 0)
            continue;
        comp *k = &c[id[t]];
        if (k->n && !hwloc_bitmap_isequal(p->home[k->tasks[0]], p->home[t]))
            k->identical = 0;
        k->tasks[k->n++] = t;
        hwloc_bitmap_or(k->home, k->home, p->home[t]);
    }
    for (int i = 0; i < nc; i++)
        ngi_plan_sort_members(p, c[i].tasks, c[i].n);
    free(id);
    return nc;
}

/* A task's size before its +1: the water level, or for a widened task
 * (bound.c, rule 2) the even share when the level is above it. When every
 * GPU task is widened and no CPU-only task runs, the level is the whole
 * step (demand stops growing at the even share), and compared with it a
 * widened task never took the +1s: 64 cores, 3 widened tasks gave 21 each
 * and left a core idle. */
static unsigned level_of(const ngi_planner *p, unsigned t)
{
    unsigned even = p->n_units / p->req->ntasks;
    return ngi_plan_released(p, t) && p->base > even ? even : p->base;
}

/* May task @t take a +1? Its package must have room (bound.c), and a
 * widened task stays within the even share rounded up (El Capitan, 24
 * cores, 2 tasks: the widened one 12, not 13, beside a kept 8). */
static int may_plus(ngi_planner *p, unsigned t)
{
    unsigned nt = p->req->ntasks, ceil_even = (p->n_units + nt - 1) / nt;
    if (ngi_plan_released(p, t) && p->size[t] >= ceil_even)
        return 0;
    return ngi_plan_has_room(p, t);
}

/* The +1s (cores left over after the even share) go first to components
 * whose home has room for them, one per member. */
static void give_extras(ngi_planner *p, comp *c, unsigned nc)
{
    for (unsigned i = 0; i < nc && p->extra; i++) {
        unsigned h = (unsigned)hwloc_bitmap_weight(c[i].home), spare = 0, want = 0;
        for (unsigned m = 0; m < c[i].n; m++)
            want += level_of(p, c[i].tasks[m]);
        spare = h > want ? h - want : 0;
        for (unsigned m = 0; m < c[i].n && spare && p->extra; m++) {
            unsigned t = c[i].tasks[m];
            if (!may_plus(p, t))
                continue; /* its package is full (bound.c), or widened to the even share */
            p->size[t]++;
            ngi_plan_take_room(p, t);
            spare--;
            p->extra--;
        }
    }
}

/* A capped package group's +1s (bound.c) go to its tasks as the step's
 * +1s would: first where the component's home has spare cores, one per
 * member, then round robin over the components. */
static void group_extras(ngi_planner *p, comp *c, unsigned nc)
{
    for (unsigned i = 0; i < nc; i++) {
        unsigned h = (unsigned)hwloc_bitmap_weight(c[i].home), want = 0;
        for (unsigned m = 0; m < c[i].n; m++)
            want += p->size[c[i].tasks[m]];
        for (unsigned m = 0; m < c[i].n && h > want; m++)
            if (ngi_plan_group_plus(p, c[i].tasks[m])) {
                p->size[c[i].tasks[m]]++;
                ngi_plan_take_room(p, c[i].tasks[m]);
                want++;
            }
    }
    for (int any = 1; any;) {
        any = 0;
        for (unsigned m = 0; m < p->req->ntasks; m++)
            for (unsigned i = 0; i < nc; i++)
                if (m < c[i].n && ngi_plan_group_plus(p, c[i].tasks[m])) {
                    p->size[c[i].tasks[m]]++;
                    ngi_plan_take_room(p, c[i].tasks[m]);
                    any = 1;
                }
    }
}

/* Cores left after the CPU-only tasks' share go to GPU tasks. */
static void extras_to_gpus(ngi_planner *p, comp *c, unsigned nc, unsigned cpu_tasks)
{
    if (cpu_tasks >= p->extra)
        return;
    unsigned left = p->extra - cpu_tasks;
    for (unsigned m = 0; left; m++) {
        int any = 0;
        for (unsigned i = 0; i < nc && left; i++)
            if (m < c[i].n) {
                any = 1;
                if (p->size[c[i].tasks[m]] == level_of(p, c[i].tasks[m]) &&
                    may_plus(p, c[i].tasks[m])) {
                    ngi_plan_take_room(p, c[i].tasks[m]);
                    p->size[c[i].tasks[m]]++;
                    left--;
                    p->extra--;
                }
            }
        if (!any)
            break;
    }
}

/* ---- spilling --------------------------------------------------------- */

/* Take up to @want free units of domain x for component k, nearest to its
 * home first (from the end of x that faces it). */
static unsigned take_from(ngi_planner *p, comp *k, hwloc_bitmap_t freeu, unsigned x, unsigned want)
{
    const ngi_domain *d = &p->doms[x];
    int before = hwloc_bitmap_first(k->home) > (int)d->first;
    unsigned got = 0;
    for (unsigned i = 0; i < d->count && got < want; i++) {
        unsigned u = before ? d->first + d->count - 1 - i : d->first + i;
        if (!hwloc_bitmap_isset(freeu, u))
            continue;
        hwloc_bitmap_clr(freeu, u);
        hwloc_bitmap_set(k->region, u);
        got++;
    }
    return got;
}

static unsigned free_in(const ngi_planner *p, hwloc_const_bitmap_t freeu, unsigned x)
{
    unsigned n = 0;
    for (unsigned i = 0; i < p->doms[x].count; i++)
        n += hwloc_bitmap_isset(freeu, p->doms[x].first + i);
    return n;
}

/* @inside: only into the component's packages when its tasks are kept
 * there (bound.c); a second pass without finds one core each for the
 * tasks of a package with fewer cores than tasks. */
static void spill(ngi_planner *p, comp *c, unsigned nc, hwloc_bitmap_t freeu, int inside)
{
    for (;;) {
        int bk = -1, bx = -1;
        ngi_rank br = {0, 0, 0, 0};
        unsigned bopts = 0;
        for (unsigned i = 0; i < nc; i++) {
            /* Released tasks (rule 2) wait for the kept ones' spill inside
             * their packages, then take the nearest cores left. */
            if (!c[i].need || (inside && ngi_plan_released(p, c[i].tasks[0])))
                continue;
            ngi_rank mine = {~0u, 2, 2, ~0u};
            int mx = -1;
            unsigned opts = 0;
            for (unsigned x = 0; x < p->n_doms; x++) {
                if (!free_in(p, freeu, x) || (inside && !ngi_plan_may_spill(p, c[i].tasks[0], x)))
                    continue;
                ngi_rank r = ngi_plan_rank_of(p, c[i].home, x);
                int cmp = ngi_plan_rank_cmp(r, mine);
                if (mx < 0 || cmp < 0) {
                    mine = r;
                    mx = (int)x;
                    opts = 1;
                } else if (cmp == 0) {
                    opts++;
                }
            }
            if (mx < 0)
                continue;
            int cmp = bk < 0 ? -1 : ngi_plan_rank_cmp(mine, br);
            if (cmp < 0 || (cmp == 0 && opts < bopts)) {
                bk = (int)i;
                bx = mx;
                br = mine;
                bopts = opts;
            }
        }
        if (bk < 0)
            return;
        c[bk].need -= take_from(p, &c[bk], freeu, (unsigned)bx, c[bk].need);
    }
}

/* ---- cutting a component's region -------------------------------------- */

/* Every GPU of the component still has a task with a core of the home
 * (when the home has a core for each). Tasks of the same GPU(s) are
 * interchangeable: one per socket is fine for them (the GPU is shared
 * anyway); a task of ANOTHER GPU pushed wholly out of the home is not. */
static int every_member_home(const ngi_planner *p, const comp *k, const unsigned *order)
{
    if ((unsigned)hwloc_bitmap_weight(k->home) < k->n)
        return 1;
    for (unsigned m = 0; m < k->n; m++) {
        int seated = 0;
        for (unsigned o = 0; o < k->n && !seated; o++)
            seated = ngi_plan_same_gpus(p, order[m], order[o]) &&
                     hwloc_bitmap_intersects(p->slice[order[o]], k->home);
        if (!seated)
            return 0;
    }
    return 1;
}

/* The cut left a GPU with no task on its home (e.g. 2 tasks of two GPUs on
 * one 4-core socket, 4 cores each: 4|4 would put one GPU's task wholly on
 * the other socket). Seat home first instead: the home is shared out
 * evenly, then each task takes the rest of its size from the spill. */
static void home_share_cut(ngi_planner *p, comp *k, const unsigned *units, unsigned n,
                           const unsigned *order, const unsigned *want)
{
    unsigned *h = malloc(n * sizeof *h), *sp = malloc(n * sizeof *sp), nh = 0, ns = 0;
    for (unsigned m = 0; m < k->n; m++) {
        hwloc_bitmap_andnot(p->used, p->used, p->slice[order[m]]);
        hwloc_bitmap_zero(p->slice[order[m]]);
    }
    for (unsigned i = 0; i < n; i++) {
        if (hwloc_bitmap_isset(k->home, units[i]))
            h[nh++] = units[i];
        else
            sp[ns++] = units[i];
    }
    ngi_plan_cut_units(p, h, nh, order, k->n, nh / k->n, nh % k->n, 1);
    unsigned pos = 0;
    for (unsigned m = 0; m < k->n; m++) {
        unsigned t = order[m], got = p->size[t];
        for (; got < want[m] && pos < ns; got++, pos++) {
            hwloc_bitmap_set(p->slice[t], sp[pos]);
            hwloc_bitmap_set(p->used, sp[pos]);
        }
        p->size[t] = got;
    }
    free(h);
    free(sp);
}

static void cut_identical(ngi_planner *p, comp *k)
{
    unsigned n = 0, base = ~0u, e = 0;
    unsigned *units = malloc(((unsigned)hwloc_bitmap_weight(k->region) + 1) * sizeof *units);
    int u;
    hwloc_bitmap_foreach_begin(u, k->region) {
        if (!hwloc_bitmap_isset(p->used, (unsigned)u))
            units[n++] = (unsigned)u;
    } hwloc_bitmap_foreach_end();
    for (unsigned m = 0; m < k->n; m++)
        if (p->size[k->tasks[m]] < base)
            base = p->size[k->tasks[m]];
    for (unsigned m = 0; m < k->n; m++)
        e += p->size[k->tasks[m]] > base;
    /* Members have the same home, so any of them may take any slice. */
    unsigned *order = malloc(k->n * sizeof *order);
    memcpy(order, k->tasks, k->n * sizeof *order);
    for (unsigned a = 1; a < k->n; a++)
        for (unsigned b = a; b > 0 && order[b - 1] > order[b]; b--) {
            unsigned x = order[b];
            order[b] = order[b - 1];
            order[b - 1] = x;
        }
    unsigned *want = malloc(k->n * sizeof *want);
    for (unsigned m = 0; m < k->n; m++)
        want[m] = p->size[order[m]];
    /* A home larger than its tasks' demand leaves the rest to others: no
     * slice above its size. A region grown by spilling is exactly the
     * demand: slices may be sized as the objective prefers, but no core of
     * it may stay idle (the nearest were taken first). */
    int exact = hwloc_bitmap_isequal(k->region, k->home) ? 1 : 2;
    /* Widened tasks (rule 2) keep the even share, within one core: the
     * cutter may not trade sizes for alignment over their spill. */
    if (ngi_plan_released(p, k->tasks[0]))
        exact = 3;
    ngi_plan_cut_units(p, units, n, order, k->n, base, e, exact);
    if (!hwloc_bitmap_isequal(k->region, k->home) && !every_member_home(p, k, order))
        home_share_cut(p, k, units, n, order, want);
    free(want);
    free(order);
    free(units);
}

/* Overlapping but different homes: each member, most constrained first,
 * takes its own home's free region units, then the nearest ones. */
static void cut_mixed(ngi_planner *p, comp *k)
{
    for (unsigned m = 0; m < k->n; m++) {
        unsigned t = k->tasks[m], got = 0;
        int u;
        hwloc_bitmap_foreach_begin(u, p->home[t]) {
            if (got < p->size[t] && hwloc_bitmap_isset(k->region, (unsigned)u) &&
                !hwloc_bitmap_isset(p->used, (unsigned)u)) {
                hwloc_bitmap_set(p->slice[t], (unsigned)u);
                hwloc_bitmap_set(p->used, (unsigned)u);
                got++;
            }
        } hwloc_bitmap_foreach_end();
        while (got < p->size[t]) {
            int best = -1;
            ngi_rank br = {0, 0, 0, 0};
            unsigned bgap = 0;
            int anchor = hwloc_bitmap_first(p->home[t]);
            hwloc_bitmap_foreach_begin(u, k->region) {
                if (hwloc_bitmap_isset(p->used, (unsigned)u))
                    continue;
                ngi_rank r = ngi_plan_rank_of(p, p->home[t], (unsigned)p->units[u].dom);
                unsigned gap = (unsigned)abs(u - anchor);
                int cmp = best < 0 ? -1 : ngi_plan_rank_cmp(r, br);
                if (cmp < 0 || (cmp == 0 && gap < bgap)) {
                    best = u;
                    br = r;
                    bgap = gap;
                }
            } hwloc_bitmap_foreach_end();
            if (best < 0)
                break;
            hwloc_bitmap_set(p->slice[t], (unsigned)best);
            hwloc_bitmap_set(p->used, (unsigned)best);
            got++;
        }
    }
}

static void cut_comp(ngi_planner *p, comp *k)
{
    k->done = 1;
    if (k->identical) {
        cut_identical(p, k);
        return;
    }
    cut_mixed(p, k);
    ngi_cut_trace none = {.chosen = -1};
    ngi_plan_record_cut(p, k->tasks, k->n, k->region, NGI_CUT_WHAT_NEAREST, &none);
}

/* The first @n components' members and CPU sets, then the array. */
static void free_comps(comp *c, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        free(c[i].tasks);
        hwloc_bitmap_free(c[i].home);
        hwloc_bitmap_free(c[i].region);
    }
    free(c);
}

/* A component whose tasks' GPUs all have no allowed local core. */
static int remote_comp(const ngi_planner *p, const comp *k)
{
    for (unsigned m = 0; m < k->n; m++)
        if (!p->plan->tasks[k->tasks[m]].gpu_remote)
            return 0;
    return 1;
}

/* Seat the components of one phase (@remote: the remote-only ones, else
 * the others) from @freeu: those that fit the free part of their home
 * first, what they leave freed; then the others spill, nearest first. */
static void seat_phase(ngi_planner *p, comp *c, unsigned nc, hwloc_bitmap_t freeu, int remote)
{
    hwloc_bitmap_t avail = hwloc_bitmap_alloc();
    for (unsigned i = 0; i < nc; i++) {
        c[i].need = 0;
        if (c[i].done || remote_comp(p, &c[i]) != remote)
            continue;
        /* Phase 1's homes were taken out of freeu; a remote home holds
         * what phase 1 left of it. */
        hwloc_bitmap_copy(avail, c[i].home);
        if (remote)
            hwloc_bitmap_and(avail, avail, freeu);
        hwloc_bitmap_andnot(freeu, freeu, avail);
        unsigned h = (unsigned)hwloc_bitmap_weight(avail);
        c[i].need = c[i].demand > h ? c[i].demand - h : 0;
        hwloc_bitmap_copy(c[i].region, c[i].home);
    }
    for (unsigned i = 0; i < nc; i++)
        if (!c[i].done && remote_comp(p, &c[i]) == remote && !c[i].need) {
            cut_comp(p, &c[i]);
            hwloc_bitmap_andnot(avail, c[i].home, p->used);
            hwloc_bitmap_or(freeu, freeu, avail);
        }
    spill(p, c, nc, freeu, 1);
    if (p->groups)
        spill(p, c, nc, freeu, 0);
    for (unsigned i = 0; i < nc; i++)
        if (!c[i].done && remote_comp(p, &c[i]) == remote)
            cut_comp(p, &c[i]);
    hwloc_bitmap_free(avail);
}

/* Rule 4 (docs/planner.md): components with a local core are seated
 * first, with the homes of remote-only components still free to spill
 * into; the remote ones (no core of theirs is local to their GPU
 * anyway) then take what is left nearest their node, absorbing the
 * fragments. Seated the other way round, XE8640 with cores 0-47 gave GPU
 * 0's task (6 cores on its node) two cores of each of four nodes while
 * the remote tasks had whole runs. */
int ngi_plan_seat_gpus(ngi_planner *p, char *err, size_t errlen)
{
    unsigned nt = p->req->ntasks, cpu_tasks = 0;
    comp *c = calloc(nt, sizeof *c);
    hwloc_bitmap_t freeu = hwloc_bitmap_alloc();
    if (!c || !freeu) {
        free(c);
        hwloc_bitmap_free(freeu);
        return ngi_fail(err, errlen, "out of memory");
    }
    for (unsigned t = 0; t < nt; t++)
        cpu_tasks += !p->home[t];
    int built = build_comps(p, c);
    if (built < 0) {
        free_comps(c, nt);   /* the ones build_comps allocated; the rest are zero */
        hwloc_bitmap_free(freeu);
        return ngi_fail(err, errlen, "out of memory");
    }
    unsigned nc = (unsigned)built;
    group_extras(p, c, nc);
    give_extras(p, c, nc);
    extras_to_gpus(p, c, nc, cpu_tasks);
    hwloc_bitmap_set_range(freeu, 0, (int)p->n_units - 1);
    for (unsigned i = 0; i < nc; i++)
        for (unsigned m = 0; m < c[i].n; m++)
            c[i].demand += p->size[c[i].tasks[m]];
    for (unsigned i = 0; i < nc; i++)
        if (!remote_comp(p, &c[i]))
            hwloc_bitmap_andnot(freeu, freeu, c[i].home);
    seat_phase(p, c, nc, freeu, 0);
    seat_phase(p, c, nc, freeu, 1);
    free_comps(c, nc);
    hwloc_bitmap_free(freeu);
    return 0;
}
