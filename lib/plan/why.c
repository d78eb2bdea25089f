/* One sentence per task for ng_plan_explain: why its slice (the size, then
 * where its cores are and what decided the cut), then which -c or policy
 * would give what. Every alternative named was planned again with
 * ng_plan_compute and checked first: a sentence never promises what the
 * planner would not do. Alternatives are planned once each (ngi_why.alts).
 */
#include "private/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct sbuf {
    char *buf;
    size_t len, used;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->used + 1 >= b->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->buf + b->used, b->len - b->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->used = b->used + (size_t)n < b->len ? b->used + (size_t)n : b->len - 1;
}

void ngi_why_units(const ngi_planner *p, const ng_plan *plan, unsigned t, hwloc_bitmap_t out)
{
    hwloc_const_bitmap_t cpus = ng_plan_task(plan, t)->cpus;
    hwloc_bitmap_zero(out);
    for (unsigned u = 0; cpus && u < p->n_units; u++)
        if (hwloc_bitmap_intersects(p->units[u].pus, cpus))
            hwloc_bitmap_set(out, u);
}

/* ---- alternatives -------------------------------------------------------- */

/* The request with another -c and modifiers, planned once; NULL if it
 * cannot be planned (or no room is left to keep it). */
static const ng_plan *alt(ngi_why *w, unsigned cpus_per_task, unsigned mods)
{
    for (unsigned i = 0; i < w->n_alts; i++)
        if (w->alts[i].cpus_per_task == cpus_per_task && w->alts[i].mods == mods)
            return w->alts[i].plan;
    if (w->n_alts == NGI_WHY_ALTS)
        return NULL;
    ng_plan_request r = *w->req;
    r.cpus_per_task = cpus_per_task;
    r.policy.mods = mods;
    r.policy.kind = NG_POLICY_LOCAL; /* binds CPUs: the slices are what is compared */
    r.policy.has_nodes = 0;
    r.net.mode = NG_NET_OFF;
    ng_plan *pl = NULL;
    if (ng_plan_compute(w->topo, &r, &pl, NULL, 0) < 0)
        pl = NULL;
    w->alts[w->n_alts].cpus_per_task = cpus_per_task;
    w->alts[w->n_alts].mods = mods;
    w->alts[w->n_alts++].plan = pl;
    return pl;
}

void ngi_why_free(ngi_why *w)
{
    for (unsigned i = 0; i < w->n_alts; i++)
        ng_plan_free(w->alts[i].plan);
    w->n_alts = 0;
}

/* Task @t of @pl: its cores, NUMA domains and packages. */
typedef struct shape {
    unsigned cores, doms, pkgs;
} shape;

static shape shape_of(const ngi_why *w, const ng_plan *pl, unsigned t, hwloc_bitmap_t doms)
{
    const ngi_planner *p = w->p;
    hwloc_bitmap_t units = hwloc_bitmap_alloc(), pk = hwloc_bitmap_alloc();
    shape s = {0, 0, 0};
    int u;
    ngi_why_units(p, pl, t, units);
    hwloc_bitmap_zero(doms);
    hwloc_bitmap_foreach_begin(u, units) {
        s.cores++;
        hwloc_bitmap_set(doms, (unsigned)p->units[u].dom);
        hwloc_bitmap_set(pk, (unsigned)(p->units[u].pkg + 1));
    } hwloc_bitmap_foreach_end();
    s.doms = (unsigned)hwloc_bitmap_weight(doms);
    s.pkgs = (unsigned)hwloc_bitmap_weight(pk);
    hwloc_bitmap_free(units);
    hwloc_bitmap_free(pk);
    return s;
}

/* Allocated units no task of @pl owns. */
static unsigned idle_in(const ngi_why *w, const ng_plan *pl)
{
    hwloc_bitmap_t all = hwloc_bitmap_alloc(), units = hwloc_bitmap_alloc();
    for (unsigned t = 0; t < pl->ntasks; t++) {
        ngi_why_units(w->p, pl, t, units);
        hwloc_bitmap_or(all, all, units);
    }
    unsigned idle = w->p->n_units - (unsigned)hwloc_bitmap_weight(all);
    hwloc_bitmap_free(all);
    hwloc_bitmap_free(units);
    return idle;
}

/* Domains whose memory node is one of its GPUs' CPU nodes. */
static void gpu_doms(const ngi_why *w, unsigned t, hwloc_bitmap_t out)
{
    const ng_task_plan *tp = ng_plan_task(w->plan, t);
    hwloc_bitmap_zero(out);
    for (unsigned d = 0; d < w->p->n_doms; d++) {
        unsigned os = ng_topology_numa(w->topo, (unsigned)w->p->doms[d].mem)->os_index;
        for (unsigned k = 0; k < tp->n_gpus; k++)
            if (hwloc_bitmap_isset(ng_topology_gpu(w->topo, (unsigned)tp->gpus[k])->numa_nodes, os))
                hwloc_bitmap_set(out, d);
    }
}

/* OS indices of the memory nodes of domains @doms, as a list. */
static void node_list(const ngi_why *w, hwloc_const_bitmap_t doms, char *buf, size_t len)
{
    hwloc_bitmap_t os = hwloc_bitmap_alloc();
    int d;
    hwloc_bitmap_foreach_begin(d, doms) {
        hwloc_bitmap_set(os, ng_topology_numa(w->topo, (unsigned)w->p->doms[d].mem)->os_index);
    } hwloc_bitmap_foreach_end();
    if (ng_list_format(os, buf, len) < 0)
        snprintf(buf, len, "(many)");
    hwloc_bitmap_free(os);
}

/* ---- the parts of a sentence ------------------------------------------- */

static const char *cores_word(unsigned n)
{
    return n == 1 ? "core" : "cores";
}

static void size_part(const ngi_why *w, unsigned t, sbuf *b)
{
    const ngi_sizing *z = &w->plan->sizing;
    const ngi_task_sizing *ts = &w->plan->tsz[t];
    unsigned nt = w->plan->ntasks, cores = w->terms[t].cores;
    if (z->shared)
        put(b, "%u tasks share %u cores: one core each", nt, z->units);
    else if (z->fixed)
        put(b, "%u %s: --cpus-per-task %u asks for them and the step has them for every task",
            cores, cores_word(cores), w->req->cpus_per_task);
    else if (ts->capped)
        put(b, "%u %s: %s has %u allocated cores for %u GPU task%s", cores, cores_word(cores),
            ng_plan_task(w->plan, t)->gpu_remote ? "the package of the node nearest its GPU"
                                                 : "its GPU's package",
            ts->pkg_units, ts->pkg_tasks, ts->pkg_tasks > 1 ? "s" : "");
    else if (cores == z->base || (cores == z->base + 1 && z->extra))
        put(b, "%u %s: the even share of the %u allocated cores over %u tasks is %u%s", cores,
            cores_word(cores), z->units, nt, z->base, cores > z->base ? ", +1 of the cores left over" : "");
    else
        put(b, "%u %s, where the even share of the %u allocated cores over %u tasks is %u: "
            "the cut sized it", cores, cores_word(cores), z->units, nt, z->base);
}

static void gpu_place(const ngi_why *w, unsigned t, sbuf *b)
{
    const ng_task_terms *x = &w->terms[t];
    hwloc_bitmap_t gd = hwloc_bitmap_alloc(), mine = hwloc_bitmap_alloc();
    char on[64], off[64];
    gpu_doms(w, t, gd);
    shape_of(w, w->plan, t, mine);
    node_list(w, gd, on, sizeof on);
    hwloc_bitmap_andnot(mine, mine, gd);
    node_list(w, mine, off, sizeof off);
    if (ng_plan_task(w->plan, t)->gpu_remote)
        put(b, "; its GPU has no allowed local core: node %d, the nearest by distance",
            x->main_node);
    else if (!x->off_cores)
        put(b, "; all on its GPU's node %s", on);
    else
        put(b, "; %u on its GPU's node %s and %u on node %s (distance %u, %s), the nearest "
            "free cores", x->cores - x->off_cores, on, x->off_cores, off, x->off_distance,
            x->packages > 1 ? "across packages" : "same package");
    hwloc_bitmap_free(gd);
    hwloc_bitmap_free(mine);
}

static void cpu_place(const ngi_why *w, unsigned t, sbuf *b)
{
    const ng_task_terms *x = &w->terms[t];
    hwloc_bitmap_t doms = hwloc_bitmap_alloc();
    char list[64];
    shape_of(w, w->plan, t, doms);
    node_list(w, doms, list, sizeof list);
    if (x->nodes == 1)
        put(b, "; inside node %s%s", list, x->groups == 1 && w->p->n_grps > w->p->n_doms
            ? ", in one CPU group" : "");
    else
        put(b, "; over nodes %s (effective %.1f of %u cores)", list, x->effective, x->cores);
    hwloc_bitmap_free(doms);
}

static void cut_part(const ngi_why *w, unsigned t, sbuf *b)
{
    const ng_task_terms *x = &w->terms[t];
    if (x->cut < 0)
        return;
    const ng_plan_cut *c = &w->cuts[x->cut];
    if (c->n_tasks < 2 || c->chosen < 0)
        return;
    put(b, "; the %s cut of %u cores among %u tasks won (%s)", c->candidates[c->chosen].family,
        c->cores, c->n_tasks, c->decided);
}

/* ---- alternatives, each checked on its own plan -------------------------- */

static void idle_alternatives(ngi_why *w, unsigned t, sbuf *b)
{
    unsigned idle = idle_in(w, w->plan), mods = w->req->policy.mods;
    unsigned even = w->p->n_units / w->plan->ntasks, smt = w->plan->sizing.smt;
    hwloc_bitmap_t doms = hwloc_bitmap_alloc();
    put(b, "; %u allocated cores stay idle on other packages", idle);
    const ng_plan *c = even > w->terms[t].cores ? alt(w, even * smt, mods) : NULL;
    const ng_plan *wide = alt(w, 0, mods | NG_MOD_WIDE);
    int by_c = c && idle_in(w, c) < idle, by_wide = wide && idle_in(w, wide) < idle;
    shape sc = by_c ? shape_of(w, c, t, doms) : (shape){0, 0, 0};
    shape sw = by_wide ? shape_of(w, wide, t, doms) : (shape){0, 0, 0};
    if (by_c && by_wide && sc.cores == sw.cores && sc.pkgs == sw.pkgs)
        put(b, ": --cpus-per-task %u or the modifier wide would give each task %u cores over "
            "%u packages", even * smt, sc.cores, sc.pkgs);
    else if (by_c)
        put(b, ": --cpus-per-task %u would give this task %u cores over %u packages", even * smt,
            sc.cores, sc.pkgs);
    if (by_wide && !(by_c && sc.cores == sw.cores && sc.pkgs == sw.pkgs))
        put(b, "%s the modifier wide would give it %u cores over %u packages", by_c ? "; " : ":",
            sw.cores, sw.pkgs);
    hwloc_bitmap_free(doms);
}

/* Its GPU's home: the allocated units local to its GPUs, and the GPU
 * tasks whose homes overlap it; the share of the home per task. */
static unsigned home_share(const ngi_why *w, unsigned t)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc(), theirs = hwloc_bitmap_alloc();
    unsigned units = 0, tasks = 0;
    const ng_task_plan *tp = ng_plan_task(w->plan, t);
    hwloc_bitmap_zero(mine);
    for (unsigned k = 0; k < tp->n_gpus; k++)
        hwloc_bitmap_or(mine, mine, ng_topology_gpu(w->topo, (unsigned)tp->gpus[k])->cpus);
    for (unsigned u = 0; u < w->p->n_units; u++)
        units += hwloc_bitmap_intersects(w->p->units[u].pus, mine);
    for (unsigned o = 0; o < w->plan->ntasks; o++) {
        const ng_task_plan *op = ng_plan_task(w->plan, o);
        hwloc_bitmap_zero(theirs);
        for (unsigned k = 0; k < op->n_gpus; k++)
            hwloc_bitmap_or(theirs, theirs, ng_topology_gpu(w->topo, (unsigned)op->gpus[k])->cpus);
        tasks += op->n_gpus && hwloc_bitmap_intersects(theirs, mine);
    }
    hwloc_bitmap_free(mine);
    hwloc_bitmap_free(theirs);
    return tasks ? units / tasks : 0;
}

static void gpu_alternatives(ngi_why *w, unsigned t, sbuf *b)
{
    const ng_task_terms *x = &w->terms[t];
    const ng_plan_request *r = w->req;
    unsigned mods = r->policy.mods, smt = w->plan->sizing.smt;
    hwloc_bitmap_t doms = hwloc_bitmap_alloc(), gd = hwloc_bitmap_alloc();
    gpu_doms(w, t, gd);
    if (ng_plan_task(w->plan, t)->note)
        idle_alternatives(w, t, b);
    unsigned k = home_share(w, t);
    const ng_plan *a = x->off_cores && k && k < x->cores ? alt(w, k * smt, mods) : NULL;
    if (a && shape_of(w, a, t, doms).cores == k && hwloc_bitmap_isincluded(doms, gd))
        put(b, "; --cpus-per-task %u keeps it on its GPU's node (%u cores)", k * smt, k);
    if (x->packages > 1 && (mods & NG_MOD_WIDE)) {
        a = alt(w, r->cpus_per_task, mods & ~(unsigned)NG_MOD_WIDE);
        if (a && shape_of(w, a, t, doms).pkgs == 1)
            put(b, "; without wide it keeps to its GPU's package (%u cores)",
                shape_of(w, a, t, doms).cores);
    } else if (x->packages > 1 && r->cpus_per_task) {
        a = alt(w, 0, mods);
        if (a && shape_of(w, a, t, doms).pkgs == 1)
            put(b, "; without --cpus-per-task it keeps to its GPU's package (%u cores)",
                shape_of(w, a, t, doms).cores);
    }
    hwloc_bitmap_free(doms);
    hwloc_bitmap_free(gd);
}

/* The largest -c (cores) at which no task of the step spans two NUMA
 * nodes, looked for once below the current sizes (at most 24 plans). */
static unsigned no_straddle_size(ngi_why *w)
{
    unsigned nt = w->plan->ntasks, smt = w->plan->sizing.smt, top = ~0u;
    hwloc_bitmap_t doms = hwloc_bitmap_alloc();
    for (unsigned t = 0; t < nt; t++)
        if (w->terms[t].cores < top)
            top = w->terms[t].cores;
    unsigned found = 0;
    for (unsigned k = top, tries = 0; k >= 1 && tries < 24 && !found; k--, tries++) {
        ng_plan_request r = *w->req;
        r.cpus_per_task = k * smt;
        r.net.mode = NG_NET_OFF;
        r.policy.kind = NG_POLICY_LOCAL;
        r.policy.has_nodes = 0;
        ng_plan *a = NULL;
        int all_in_one = ng_plan_compute(w->topo, &r, &a, NULL, 0) == 0;
        for (unsigned t = 0; all_in_one && t < nt; t++)
            all_in_one = shape_of(w, a, t, doms).doms == 1;
        found = all_in_one ? k : 0;
        ng_plan_free(a);
    }
    hwloc_bitmap_free(doms);
    return found;
}

static void cpu_alternatives(ngi_why *w, unsigned t, sbuf *b)
{
    const ngi_sizing *z = &w->plan->sizing;
    if (w->terms[t].nodes > 1 && !z->shared) {
        if (!w->straddle_size_known) {
            w->straddle_size = no_straddle_size(w);
            w->straddle_size_known = 1;
        }
        if (w->straddle_size)
            put(b, "; --cpus-per-task %u keeps every task inside one NUMA node (%u cores each)",
                w->straddle_size * z->smt, w->straddle_size);
    }
    unsigned idle = z->fixed ? idle_in(w, w->plan) : 0;
    const ng_plan *a = idle ? alt(w, 0, w->req->policy.mods) : NULL;
    hwloc_bitmap_t doms = hwloc_bitmap_alloc();
    if (a)
        put(b, "; --cpus-per-task leaves %u allocated cores idle, as asked (without it, %u cores)",
            idle, shape_of(w, a, t, doms).cores);
    hwloc_bitmap_free(doms);
}

void ngi_why_task(ngi_why *w, unsigned t, char *buf, size_t len)
{
    sbuf b = {buf, len, 0};
    buf[0] = '\0';
    int gpu = ng_plan_task(w->plan, t)->n_gpus > 0;
    size_part(w, t, &b);
    if (gpu)
        gpu_place(w, t, &b);
    else
        cpu_place(w, t, &b);
    cut_part(w, t, &b);
    if (w->plan->sizing.shared) {
        put(&b, ".");
        return;
    }
    if (gpu)
        gpu_alternatives(w, t, &b);
    else
        cpu_alternatives(w, t, &b);
    put(&b, ".");
}
