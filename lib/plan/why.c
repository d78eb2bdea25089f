/* The lines that explain one task for ng_plan_explain (docs/planner.md,
 * "Explaining a plan"; its terms in "Glossary"):
 *
 *   1. the plain reason for its size, one sentence;
 *   2. where its cores are (a GPU task: seen from its GPU's node);
 *   3. how the cores were split among the tasks of its cut, and what won;
 *   4. what stays idle and why;
 *   5. one line per alternative: the -c or modifier, and what it gives.
 *
 * Every line is at most NGI_WHY_LINE characters and names no task's own
 * node or CPU numbers (the plan's table has them), so alike tasks read the
 * same and the CLI prints them once ("tasks 0-15: ..."). A sentence counts
 * cores or CPUs, never both. Every alternative was planned again with
 * ng_plan_compute before it is named: its line says what that plan gives
 * this task, and explain.c keeps its arguments, CPUs and memory nodes.
 */
#include "private/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *buf;
    size_t len, used;
} sbuf;

static void put(sbuf *b, const char *pre, const char *s, size_t n)
{
    int k = snprintf(b->buf + b->used, b->len - b->used, "%s%s%.*s", b->used ? "\n" : "", pre,
                     (int)n, s);
    if (k > 0)
        b->used = b->used + (size_t)k < b->len ? b->used + (size_t)k : b->len - 1;
}

/* A new line (the first has no '\n' before it), wrapped at a space into
 * lines of at most NGI_WHY_LINE characters, never cut: the lines after
 * the first are indented two more spaces (v4 cut "...under half the eve"). */
static void line(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(sbuf *b, const char *fmt, ...)
{
    char one[4 * NGI_WHY_LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(one, sizeof one, fmt, ap);
    va_end(ap);
    const char *s = one, *pre = "";
    for (size_t room = NGI_WHY_LINE; strlen(s) > room; room = NGI_WHY_LINE - 2, pre = "  ") {
        size_t cut = room;
        while (cut > room / 2 && s[cut] != ' ')
            cut--;
        if (s[cut] != ' ')
            cut = room;   /* one word longer than half a line: split it */
        put(b, pre, s, cut);
        s += cut + (s[cut] == ' ');
    }
    put(b, pre, s, strlen(s));
}

/* Node @to_os as seen from node @from_os, in words with the distance in
 * brackets: "the same socket (distance 12)", "the other socket (distance
 * 21)"; a bare "distance 30" meant nothing to a Slurm user. */
static void node_words(const ngi_why *w, unsigned from_os, unsigned to_os, char *buf, size_t len)
{
    hwloc_topology_t hw = ng_topology_hwloc(w->topo);
    hwloc_obj_t a = hwloc_get_numanode_obj_by_os_index(hw, from_os);
    hwloc_obj_t b = hwloc_get_numanode_obj_by_os_index(hw, to_os);
    hwloc_obj_t pa = a ? hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, a) : NULL;
    hwloc_obj_t pb = b ? hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, b) : NULL;
    int npkg = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PACKAGE);
    unsigned d = ng_topology_distance(w->topo, from_os, to_os);
    const char *words = from_os == to_os ? "the same node"
                      : pa && pa == pb ? "the same socket"
                      : pa && pb ? (npkg == 2 ? "the other socket" : "another socket")
                      : "another node";
    if (d)
        snprintf(buf, len, "%s (distance %u)", words, d);
    else
        snprintf(buf, len, "%s", words);
}

/* The OS index of the node holding most of task @t's cores; -1 if none. */
static int main_node_os(const ngi_why *w, unsigned t)
{
    const ngi_planner *p = w->p;
    hwloc_bitmap_t units = hwloc_bitmap_alloc();
    unsigned *n = calloc(p->n_doms + 1, sizeof *n), best = 0;
    int u, os = -1;
    ngi_why_units(p, w->plan, t, units);
    hwloc_bitmap_foreach_begin(u, units) {
        if (n)
            n[p->units[u].dom]++;
    } hwloc_bitmap_foreach_end();
    for (unsigned d = 0; n && d < p->n_doms; d++)
        if (n[d] > best) {
            best = n[d];
            os = (int)ng_topology_numa(w->topo, (unsigned)p->doms[d].mem)->os_index;
        }
    free(n);
    hwloc_bitmap_free(units);
    return os;
}

void ngi_why_units(const ngi_planner *p, const ng_plan *plan, unsigned t, hwloc_bitmap_t out)
{
    hwloc_const_bitmap_t cpus = ng_plan_task(plan, t)->cpus;
    hwloc_bitmap_zero(out);
    for (unsigned u = 0; cpus && u < p->n_units; u++)
        if (hwloc_bitmap_intersects(p->units[u].pus, cpus))
            hwloc_bitmap_set(out, u);
}

const char *ngi_why_family_words(const char *family)
{
    static const char *const words[][2] = {
        {"consecutive", "in task order"},
        {"moved", "in task order, the +1s moved"},
        {"numa-aligned", "one NUMA node per task"},
        {"package-aligned", "one socket per task"},
        {"group-aligned", "one CPU group per task"},
    };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcmp(words[i][0], family) == 0)
            return words[i][1];
    return family;
}

static const char *plural(unsigned n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* ---- alternatives -------------------------------------------------------- */

/* The request with another -c and modifiers, planned once; NULL if it
 * cannot be planned (or no room is left to keep it). Only -c and the
 * modifiers change: the alternative's arguments replace exactly those. */
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
    r.net.mode = NG_NET_OFF; /* NICs change no CPU and no memory node */
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

/* Task @t of @pl: its cores, PUs, NUMA domains and packages. */
typedef struct shape {
    unsigned cores, pus, doms, pkgs;
} shape;

static shape shape_of(const ngi_why *w, const ng_plan *pl, unsigned t, hwloc_bitmap_t doms)
{
    const ngi_planner *p = w->p;
    hwloc_bitmap_t units = hwloc_bitmap_alloc(), pk = hwloc_bitmap_alloc();
    shape s = {0, 0, 0, 0};
    int u;
    ngi_why_units(p, pl, t, units);
    hwloc_bitmap_zero(doms);
    hwloc_bitmap_foreach_begin(u, units) {
        s.cores++;
        hwloc_bitmap_set(doms, (unsigned)p->units[u].dom);
        hwloc_bitmap_set(pk, (unsigned)(p->units[u].pkg + 1));
    } hwloc_bitmap_foreach_end();
    s.pus = ng_plan_task(pl, t)->cpus ? (unsigned)hwloc_bitmap_weight(ng_plan_task(pl, t)->cpus) : 0;
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

/* Packages (+1) of the allocated units local to task @t's GPUs. */
static void gpu_pkgs(const ngi_why *w, unsigned t, hwloc_bitmap_t out)
{
    const ng_task_plan *tp = ng_plan_task(w->plan, t);
    hwloc_bitmap_zero(out);
    for (unsigned u = 0; u < w->p->n_units; u++)
        for (unsigned k = 0; k < tp->n_gpus; k++)
            if (hwloc_bitmap_intersects(w->p->units[u].pus,
                                        ng_topology_gpu(w->topo, (unsigned)tp->gpus[k])->cpus))
                hwloc_bitmap_set(out, (unsigned)(w->p->units[u].pkg + 1));
}

/* Task @t of @pl lies in the packages @pk (+1 ids)? */
static int within_pkgs(const ngi_why *w, const ng_plan *pl, unsigned t, hwloc_const_bitmap_t pk)
{
    hwloc_bitmap_t units = hwloc_bitmap_alloc();
    int in = 1, u;
    ngi_why_units(w->p, pl, t, units);
    hwloc_bitmap_foreach_begin(u, units) {
        in &= hwloc_bitmap_isset(pk, (unsigned)(w->p->units[u].pkg + 1));
    } hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(units);
    return in;
}

/* Keep alternative @pl for task @t: its arguments, what it gives, the line. */
static void offer(ngi_why *w, const ng_plan *pl, unsigned t, ngi_why_alt *alts, unsigned *n,
                  const char *opt, const char *val, sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));
static void offer(ngi_why *w, const ng_plan *pl, unsigned t, ngi_why_alt *alts, unsigned *n,
                  const char *opt, const char *val, sbuf *b, const char *fmt, ...)
{
    if (*n >= NGI_WHY_TASK_ALTS)
        return;
    for (unsigned k = 0; k < *n; k++)
        if (strcmp(alts[k].opt, opt) == 0 && strcmp(alts[k].val, val) == 0)
            return; /* offered already, in other words */
    ngi_why_alt *a = &alts[*n];
    char list[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->says, sizeof a->says, fmt, ap);
    va_end(ap);
    const ng_task_plan *tp = ng_plan_task(pl, t);
    if (ng_list_format(tp->cpus, list, sizeof list) < 0)
        return; /* too long to keep: not offered */
    a->cpus = strdup(list);
    a->mems = tp->mem_nodes ? hwloc_bitmap_dup(tp->mem_nodes) : hwloc_bitmap_alloc();
    if (!a->cpus || !a->mems) {
        free(a->cpus);
        hwloc_bitmap_free(a->mems);
        a->cpus = NULL;
        a->mems = NULL;
        return;
    }
    snprintf(a->opt, sizeof a->opt, "%s", opt);
    snprintf(a->val, sizeof a->val, "%s", val);
    line(b, "%s", a->says);
    (*n)++;
    (void)w;
}

/* The request's --numa-policy with modifiers @mods. */
static void policy_with(const ngi_why *w, unsigned mods, char *buf, size_t len)
{
    ng_policy pol = w->req->policy;
    pol.mods = mods;
    if (ngi_policy_format(&pol, buf, len) < 0)
        snprintf(buf, len, "local%s", mods & NG_MOD_WIDE ? ",wide" : "");
}

/* ---- 1. the reason ------------------------------------------------------ */

static void gpu_reason(const ngi_why *w, unsigned t, sbuf *b)
{
    const ngi_task_sizing *ts = &w->plan->tsz[t];
    const ng_task_plan *tp = ng_plan_task(w->plan, t);
    unsigned cores = w->terms[t].cores;
    const char *where = tp->gpu_remote ? "the socket nearest its GPU" : "its GPU's socket";
    char whom[32] = "for it";
    if (ts->pkg_tasks > 1)
        snprintf(whom, sizeof whom, "for %u GPU tasks", ts->pkg_tasks);
    if (tp->widened)
        line(b, "%u %s: %s has only %u allocated %s %s, under half the even share", cores,
             plural(cores, "core", "cores"), where, ts->pkg_units, plural(ts->pkg_units, "core", "cores"),
             whom);
    else
        line(b, "%u %s: %s has %u allocated %s %s", cores, plural(cores, "core", "cores"), where,
             ts->pkg_units, plural(ts->pkg_units, "core", "cores"), whom);
}

static void reason(const ngi_why *w, unsigned t, sbuf *b)
{
    const ngi_sizing *z = &w->plan->sizing;
    const ng_task_plan *tp = ng_plan_task(w->plan, t);
    unsigned nt = w->plan->ntasks, cores = w->terms[t].cores, even = z->units / nt;
    if (z->shared)
        line(b, "one core, shared: %u tasks on %u cores", nt, z->units);
    else if (z->fixed)
        line(b, "%u %s, as --cpus-per-task %u asks", tp->cpus ? (unsigned)hwloc_bitmap_weight(tp->cpus)
             : cores * z->smt, "CPUs", w->req->cpus_per_task);
    else if (w->plan->tsz[t].capped || tp->widened)
        gpu_reason(w, t, b);
    else if ((cores == z->base || (cores == z->base + 1 && z->extra)) && z->base == even)
        line(b, "%u %s: the even share of %u allocated cores over %u tasks%s", cores,
             plural(cores, "core", "cores"), z->units, nt, cores > z->base ? ", plus one left over" : "");
    else if (cores == z->base || (cores == z->base + 1 && z->extra))
        line(b, "%u %s: an even share of the cores the GPU tasks kept on their sockets leave%s",
             cores, plural(cores, "core", "cores"), cores > z->base ? ", plus one" : "");
    else
        line(b, "%u %s, against an even share of %u: the split of the cores gave it %s", cores,
             plural(cores, "core", "cores"), z->base, cores > z->base ? "more" : "fewer");
}

/* ---- 2. where ----------------------------------------------------------- */

static void gpu_where(const ngi_why *w, unsigned t, sbuf *b)
{
    const ng_task_terms *x = &w->terms[t];
    const ng_task_plan *tp = ng_plan_task(w->plan, t);
    const char *gnode = tp->n_gpus > 1 ? "its GPUs' nodes" : "its GPU's node";
    unsigned near = x->cores - x->off_cores, others = x->nodes > 1 ? x->nodes - 1 : 1;
    int gos = tp->n_gpus ? hwloc_bitmap_first(ng_topology_gpu(w->topo, (unsigned)tp->gpus[0])->numa_nodes)
                         : -1;
    if (tp->gpu_remote) {
        int mos = main_node_os(w, t);
        char far[64] = "";
        if (gos >= 0 && mos >= 0) {
            node_words(w, (unsigned)gos, (unsigned)mos, far, sizeof far);
            line(b, "its GPU is on NUMA node %d, with no allocated core; its cores are on node %d, "
                    "%s, the nearest with the most cores to spare", gos, mos, far);
        } else {
            line(b, "its GPU has no allocated core of its own; its cores are on the nearest node "
                    "with the most cores to spare");
        }
    } else if (!x->off_cores) {
        line(b, "all on %s", gnode);
    } else if (!near) {
        line(b, "none on %s: its cores there went to other tasks; these are the nearest", gnode);
    } else {
        int two = hwloc_get_nbobjs_by_type(ng_topology_hwloc(w->topo), HWLOC_OBJ_PACKAGE) == 2;
        const char *sock = x->packages <= 1 ? "the same socket" : two ? "the other socket"
                                                                     : "another socket";
        line(b, "%u on %s, %u on %s%s (distance %u)", near, gnode, x->off_cores,
             others == 1 ? "the next node: " : "other nodes, the farthest on ", sock,
             x->off_distance);
    }
    const ngi_policy_info *pi = ngi_policy_info_of(w->req->policy.kind);
    if (tp->widened && pi && pi->nodes == NGI_NODES_TASK)
        line(b, "its memory is bound to %s first, then its cores' other nodes: a full node "
                "falls back to the next, not an OOM kill", tp->gpu_remote ? "its main node" : gnode);
    else if (tp->widened && pi && pi->nodes == NGI_NODES_TASK_GPU_FIRST)
        line(b, "its memory prefers %s first, then its cores' other nodes", gnode);
}

static void cpu_where(const ngi_why *w, unsigned t, sbuf *b)
{
    const ng_task_terms *x = &w->terms[t];
    if (x->nodes == 1)
        line(b, "inside one NUMA node%s", x->groups == 1 && w->p->n_grps > w->p->n_doms
             ? ", in one CPU group" : "");
    else
        line(b, "over %u NUMA nodes: %.1f effective cores of %u", x->nodes, x->effective, x->cores);
}

/* ---- 3. the split ------------------------------------------------------- */

static void split(const ngi_why *w, unsigned t, sbuf *b)
{
    const ng_task_terms *x = &w->terms[t];
    if (x->cut < 0)
        return;
    const ng_plan_cut *c = &w->cuts[x->cut];
    const ngi_cut_record *r = &w->plan->cuts[x->cut];
    if (c->n_tasks < 2)
        return;
    if (r->what == NGI_CUT_WHAT_NODES || r->what == NGI_CUT_WHAT_L3S || r->what == NGI_CUT_WHAT_SWAP) {
        line(b, "the %u cores of %u tasks were re-laid after the cut, %s", c->cores, c->n_tasks,
             r->what == NGI_CUT_WHAT_L3S ? "on whole L3s" : "whole per node");
        line(b, "that left %s", c->decided + strlen("re-laid after the cut: "));
        return;
    }
    if (c->chosen < 0)
        return;
    /* The split as the plan has it (a later cut may have taken cores it
     * left idle); one whose tasks a later split re-laid: the chooser's
     * numbers, and how many left. */
    if (c->moved)
        line(b, "the %u cores were split among %u tasks, %s; then %u of them %s re-laid",
             r->cut_units, r->cut_nt, ngi_why_family_words(c->candidates[c->chosen].family),
             c->moved, plural(c->moved, "was", "were"));
    else
        line(b, "the %u cores were split among %u tasks, %s", c->cores, c->n_tasks,
             ngi_why_family_words(c->candidates[c->chosen].family));
    line(b, "that split won by %s", c->decided);
}

/* ---- 4. idle cores and 5. alternatives ------------------------------------ */

/* Cores GPU tasks kept on their sockets leave idle: -c or wide use them. */
static void idle_kept(ngi_why *w, unsigned t, sbuf *b, ngi_why_alt *alts, unsigned *n)
{
    unsigned idle = idle_in(w, w->plan), mods = w->req->policy.mods;
    unsigned even = w->p->n_units / w->plan->ntasks, smt = w->plan->sizing.smt;
    hwloc_bitmap_t doms = hwloc_bitmap_alloc();
    char val[96];
    line(b, "%u allocated %s on other sockets %s idle (the plan warns)", idle,
         plural(idle, "core", "cores"), plural(idle, "stays", "stay"));
    const ng_plan *c = even > w->terms[t].cores ? alt(w, even * smt, mods) : NULL;
    if (c && idle_in(w, c) < idle) {
        shape s = shape_of(w, c, t, doms);
        snprintf(val, sizeof val, "%u", even * smt);
        offer(w, c, t, alts, n, "--cpus-per-task", val, b,
              "--cpus-per-task %u would use them: %u CPUs for it, over %u %s", even * smt, s.pus,
              s.pkgs, plural(s.pkgs, "socket", "sockets"));
    }
    const ng_plan *wide = alt(w, w->req->cpus_per_task, mods | NG_MOD_WIDE);
    if (wide && idle_in(w, wide) < idle) {
        shape s = shape_of(w, wide, t, doms);
        policy_with(w, mods | NG_MOD_WIDE, val, sizeof val);
        offer(w, wide, t, alts, n, "--numa-policy", val, b,
              "--numa-policy %s would use them: %u cores for it, over %u %s", val, s.cores,
              s.pkgs, plural(s.pkgs, "socket", "sockets"));
    }
    hwloc_bitmap_free(doms);
}

/* Its GPU's home: the allocated units local to its GPUs, and the GPU
 * tasks whose homes overlap it; the share of the home per task. */
static unsigned home_share(const ngi_why *w, unsigned t)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc(), theirs = hwloc_bitmap_alloc();
    unsigned units = 0, tasks = 0;
    const ng_task_plan *tp = ng_plan_task(w->plan, t);
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

/* A widened task: the -c of its package share keeps it on its socket. */
static void widened_alt(ngi_why *w, unsigned t, sbuf *b, ngi_why_alt *alts, unsigned *n)
{
    const ngi_task_sizing *ts = &w->plan->tsz[t];
    unsigned smt = w->plan->sizing.smt, k = ts->pkg_tasks ? ts->pkg_units / ts->pkg_tasks : 0;
    hwloc_bitmap_t pk = hwloc_bitmap_alloc();
    gpu_pkgs(w, t, pk);
    const ng_plan *a = k ? alt(w, k * smt, w->req->policy.mods) : NULL;
    if (a && !hwloc_bitmap_iszero(pk) && within_pkgs(w, a, t, pk)) {
        char val[16];
        snprintf(val, sizeof val, "%u", k * smt);
        offer(w, a, t, alts, n, "--cpus-per-task", val, b,
              "--cpus-per-task %u would keep it on its GPU's socket: %u CPUs", k * smt,
              (unsigned)hwloc_bitmap_weight(ng_plan_task(a, t)->cpus));
    }
    hwloc_bitmap_free(pk);
}

static void gpu_alternatives(ngi_why *w, unsigned t, sbuf *b, ngi_why_alt *alts, unsigned *n)
{
    const ng_task_terms *x = &w->terms[t];
    const ng_plan_request *r = w->req;
    unsigned mods = r->policy.mods, smt = w->plan->sizing.smt;
    hwloc_bitmap_t doms = hwloc_bitmap_alloc(), gd = hwloc_bitmap_alloc();
    char val[96];
    gpu_doms(w, t, gd);
    if (ng_plan_task(w->plan, t)->note && !ng_plan_task(w->plan, t)->widened &&
        idle_in(w, w->plan))
        idle_kept(w, t, b, alts, n);
    unsigned k = home_share(w, t);
    const ng_plan *a = x->off_cores && k && k < x->cores ? alt(w, k * smt, mods) : NULL;
    if (a && shape_of(w, a, t, doms).cores == k && hwloc_bitmap_isincluded(doms, gd)) {
        snprintf(val, sizeof val, "%u", k * smt);
        offer(w, a, t, alts, n, "--cpus-per-task", val, b,
              "--cpus-per-task %u would keep it on %s: %u CPUs", k * smt,
              ng_plan_task(w->plan, t)->n_gpus > 1 ? "its GPUs' nodes" : "its GPU's node",
              shape_of(w, a, t, doms).pus);
    }
    if (ng_plan_task(w->plan, t)->widened)
        widened_alt(w, t, b, alts, n);
    if (x->packages > 1 && (mods & NG_MOD_WIDE)) {
        a = alt(w, r->cpus_per_task, mods & ~(unsigned)NG_MOD_WIDE);
        if (a && shape_of(w, a, t, doms).pkgs == 1) {
            policy_with(w, mods & ~(unsigned)NG_MOD_WIDE, val, sizeof val);
            offer(w, a, t, alts, n, "--numa-policy", val, b,
                  "--numa-policy %s (no wide) would keep it on one socket: %u cores", val,
                  shape_of(w, a, t, doms).cores);
        }
    } else if (x->packages > 1 && r->cpus_per_task) {
        a = alt(w, 0, mods);
        if (a && shape_of(w, a, t, doms).pkgs == 1)
            offer(w, a, t, alts, n, "--cpus-per-task", "0", b,
                  "--cpus-per-task 0 (none) would keep it on one socket: %u CPUs",
                  shape_of(w, a, t, doms).pus);
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
        const ng_plan *a = alt(w, k * smt, w->req->policy.mods);
        int all_in_one = a != NULL;
        for (unsigned t = 0; all_in_one && t < nt; t++)
            all_in_one = shape_of(w, a, t, doms).doms == 1;
        found = all_in_one ? k : 0;
        /* keep the one found only: the cache holds a few plans */
        if (!found && w->n_alts && w->alts[w->n_alts - 1].plan == a) {
            ng_plan_free(w->alts[w->n_alts - 1].plan);
            w->n_alts--;
        }
    }
    hwloc_bitmap_free(doms);
    return found;
}

static void cpu_alternatives(ngi_why *w, unsigned t, sbuf *b, ngi_why_alt *alts, unsigned *n)
{
    const ngi_sizing *z = &w->plan->sizing;
    hwloc_bitmap_t doms = hwloc_bitmap_alloc();
    char val[16];
    if (w->terms[t].nodes > 1) {
        if (!w->straddle_size_known) {
            w->straddle_size = no_straddle_size(w);
            w->straddle_size_known = 1;
        }
        const ng_plan *a = w->straddle_size ? alt(w, w->straddle_size * z->smt, w->req->policy.mods)
                                            : NULL;
        if (a) {
            snprintf(val, sizeof val, "%u", w->straddle_size * z->smt);
            offer(w, a, t, alts, n, "--cpus-per-task", val, b,
                  "--cpus-per-task %u would keep every task inside one NUMA node: %u CPUs each",
                  w->straddle_size * z->smt, w->straddle_size * z->smt);
        }
    }
    hwloc_bitmap_free(doms);
}

/* -c as a size leaving allocated cores idle: said, and what none gives. */
static void fixed_idle(ngi_why *w, unsigned t, sbuf *b, ngi_why_alt *alts, unsigned *n)
{
    unsigned idle = idle_in(w, w->plan);
    hwloc_bitmap_t doms = hwloc_bitmap_alloc();
    if (idle) {
        line(b, "--cpus-per-task leaves %u allocated %s idle, as asked", idle,
             plural(idle, "core", "cores"));
        const ng_plan *a = alt(w, 0, w->req->policy.mods);
        if (a)
            offer(w, a, t, alts, n, "--cpus-per-task", "0", b,
                  "--cpus-per-task 0 (none) would give it %u CPUs", shape_of(w, a, t, doms).pus);
    }
    hwloc_bitmap_free(doms);
}

unsigned ngi_why_task(ngi_why *w, unsigned t, char *buf, size_t len, ngi_why_alt *alts)
{
    sbuf b = {buf, len, 0};
    unsigned n = 0;
    buf[0] = '\0';
    int gpu = ng_plan_task(w->plan, t)->n_gpus > 0;
    reason(w, t, &b);
    if (gpu)
        gpu_where(w, t, &b);
    else
        cpu_where(w, t, &b);
    split(w, t, &b);
    /* Alternatives move CPUs: none for a policy that binds none. */
    const ngi_policy_info *pi = ngi_policy_info_of(w->req->policy.kind);
    if (w->plan->sizing.shared || !pi || !pi->binds_cpus)
        return 0;
    if (w->plan->sizing.fixed)
        fixed_idle(w, t, &b, alts, &n);
    if (gpu)
        gpu_alternatives(w, t, &b, alts, &n);
    else
        cpu_alternatives(w, t, &b, alts, &n);
    return n;
}
