/* Phase (b4), after ngi_plan_settle_remote (home.c): re-laying tasks over
 * the units they hold together, on whole parts where their sizes fill
 * every part exactly (a depth-first search, bounded).
 *  - The remote GPU tasks of one GPU list, seated last from what the local
 *    tasks left (rule 4), absorb the fragments; cut piece by piece they
 *    can leave a task over two nodes: re-laid whole per node; where they
 *    still do, a local task's spill core on one of their nodes swapped
 *    for one of theirs on a node as near that task's home (swap_spill).
 *  - Then per node, the GPU tasks wholly on it that may take any of its
 *    units (remote ones, local ones whose home holds them all): re-laid
 *    on whole L3s (the local tasks' cut packs them together, leaving the
 *    remote ones the rest, where the L3s had room for both).
 * Sizes, the units the tasks hold and the idle count stay as they are; a
 * layout is kept only when it spreads fewer tasks over two parts and no
 * more over the other level (nodes, L3s). A group re-laid is recorded as
 * its own split for --explain (ngi_plan_record_relaid; record.c's
 * ngi_plan_final_cuts leaves it its tasks and units). */
#include "private/plan.h"

#include <stdlib.h>
#include <string.h>

/* Tasks over more than one node among @g; their L3 splits into @l3s. */
static unsigned spread_of(const ngi_planner *p, const unsigned *g, unsigned n, unsigned *l3s)
{
    unsigned str = 0;
    *l3s = 0;
    for (unsigned i = 0; i < n; i++) {
        int node = -2, l3 = -2, u;
        unsigned two = 0, split = 0;
        hwloc_bitmap_foreach_begin(u, p->slice[g[i]]) {
            two |= node != -2 && p->units[u].node != node;
            split |= l3 != -2 && p->units[u].l3g != l3;
            node = p->units[u].node;
            l3 = p->units[u].l3g;
        } hwloc_bitmap_foreach_end();
        str += two;
        *l3s += split;
    }
    return str;
}

/* Tasks (sizes @sz, largest first) into parts of @cap units each, every
 * part filled exactly: depth first, tasks of one size into parts in order
 * (no symmetric retries), at most @budget steps. 1 if found (@part). */
static int pack_parts(const unsigned *sz, unsigned n, unsigned i, unsigned *cap, unsigned np,
                      unsigned *part, unsigned from, unsigned *budget)
{
    if (i == n)
        return 1;
    for (unsigned k = from; k < np && *budget; k++) {
        (*budget)--;
        if (cap[k] < sz[i])
            continue;
        cap[k] -= sz[i];
        part[i] = k;
        unsigned next = i + 1 < n && sz[i + 1] == sz[i] ? k : 0;
        if (pack_parts(sz, n, i + 1, cap, np, part, next, budget))
            return 1;
        cap[k] += sz[i];
    }
    return 0;
}

/* The parts of @all: runs of one node (@by_l3: of one L3) along the line
 * (first unit, size). Returns how many. */
static unsigned parts_of(const ngi_planner *p, hwloc_const_bitmap_t all, int by_l3,
                         unsigned *first, unsigned *cap)
{
    unsigned np = 0;
    int u, last = -2;
    hwloc_bitmap_foreach_begin(u, all) {
        int key = by_l3 ? p->units[u].l3g : p->units[u].node;
        if (np == 0 || key != last) {
            first[np] = (unsigned)u;
            cap[np++] = 0;
            last = key;
        }
        cap[np - 1]++;
    } hwloc_bitmap_foreach_end();
    return np;
}

/* @g by size, largest first (equal sizes in task order), sizes into @sz. */
static void by_size(const ngi_planner *p, unsigned *g, unsigned n, unsigned *sz)
{
    for (unsigned i = 0; i < n; i++)
        sz[i] = (unsigned)hwloc_bitmap_weight(p->slice[g[i]]);
    for (unsigned a = 1; a < n; a++)
        for (unsigned b = a; b > 0 && sz[b - 1] < sz[b]; b--) {
            unsigned x = g[b], y = sz[b];
            g[b] = g[b - 1];
            sz[b] = sz[b - 1];
            g[b - 1] = x;
            sz[b - 1] = y;
        }
}

/* The slices again: each part's tasks in task order, one run each from
 * the part's first unit (@at: per part, where the next run starts). */
static void lay_out(ngi_planner *p, const unsigned *g, unsigned n, const unsigned *sz,
                    const unsigned *part, hwloc_const_bitmap_t all, unsigned *at)
{
    for (unsigned t = 0; t < p->req->ntasks; t++)
        for (unsigned i = 0; i < n; i++) {
            if (g[i] != t)
                continue;
            hwloc_bitmap_zero(p->slice[t]);
            for (unsigned got = 0; got < sz[i]; at[part[i]]++)
                if (hwloc_bitmap_isset(all, at[part[i]])) {
                    hwloc_bitmap_set(p->slice[t], at[part[i]]);
                    got++;
                }
        }
}

/* Each task's home: the domain of its slice's first unit (the warning
 * and --explain name its node). */
static void rehome(ngi_planner *p, const unsigned *g, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        ngi_plan_home_at(p, g[i], (unsigned)p->units[hwloc_bitmap_first(p->slice[g[i]])].dom);
}

/* Tasks @g (interchangeable over the units they hold together) re-laid
 * on whole parts (nodes, or with @by_l3 L3s) when their sizes fill every
 * part exactly and that spreads fewer of them over two nodes (@by_l3:
 * over two L3s) without spreading more over the other. */
static int pack_group(ngi_planner *p, unsigned *g, unsigned n, int by_l3, int record)
{
    unsigned l3_old, str_old = spread_of(p, g, n, &l3_old);
    int better = 0;
    if ((by_l3 ? !l3_old : !str_old) || n < 2)
        return 0;
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    hwloc_bitmap_t *old = calloc(n, sizeof *old);
    unsigned *cap = calloc(p->n_units, sizeof *cap), *first = calloc(p->n_units, sizeof *first);
    unsigned *part = calloc(n, sizeof *part), *sz = calloc(n, sizeof *sz);
    unsigned budget = 4096; /* a bound on the search: plan time stays flat */
    if (all && old && cap && first && part && sz) {
        for (unsigned i = 0; i < n; i++) {
            hwloc_bitmap_or(all, all, p->slice[g[i]]);
            old[i] = hwloc_bitmap_dup(p->slice[g[i]]);
        }
        unsigned np = parts_of(p, all, by_l3, first, cap);
        by_size(p, g, n, sz);
        if (pack_parts(sz, n, 0, cap, np, part, 0, &budget)) {
            lay_out(p, g, n, sz, part, all, first);
            unsigned l3_new, str_new = spread_of(p, g, n, &l3_new);
            better = by_l3 ? l3_new < l3_old && str_new <= str_old
                           : str_new < str_old && l3_new <= l3_old;
            for (unsigned i = 0; !better && i < n; i++)
                hwloc_bitmap_copy(p->slice[g[i]], old[i]);
            if (better)
                rehome(p, g, n);
            if (better && record)
                ngi_plan_record_relaid(p, g, n, by_l3 ? NGI_CUT_WHAT_L3S : NGI_CUT_WHAT_NODES,
                                       by_l3 ? l3_old : str_old, by_l3 ? l3_new : str_new);
        }
    }
    for (unsigned i = 0; old && i < n; i++)
        hwloc_bitmap_free(old[i]);
    free(old);
    hwloc_bitmap_free(all);
    free(cap);
    free(first);
    free(part);
    free(sz);
    return better;
}

/* 1 if task t is a GPU task that may hold any unit of @all: remote (no
 * core is local to its GPU, one as near as another on its node), or local
 * with @all inside its home. */
static int may_take(const ngi_planner *p, unsigned t, hwloc_const_bitmap_t all)
{
    if (!p->home[t] || p->plan->tasks[t].shares_cores)
        return 0;
    return p->plan->tasks[t].gpu_remote || hwloc_bitmap_isincluded(all, p->home[t]);
}

/* The GPU tasks wholly on node @node, into @g; their units into @all.
 * Returns how many, 0 when one of them may not take all the units or a
 * unit has no shared L3. */
static unsigned node_tasks(const ngi_planner *p, int node, unsigned *g, hwloc_bitmap_t all)
{
    unsigned n = 0;
    hwloc_bitmap_zero(all);
    for (unsigned t = 0; t < p->req->ntasks; t++) {
        int u, in = p->home[t] && !hwloc_bitmap_iszero(p->slice[t]);
        hwloc_bitmap_foreach_begin(u, p->slice[t]) {
            in &= p->units[u].node == node;
        } hwloc_bitmap_foreach_end();
        if (!in)
            continue;
        hwloc_bitmap_or(all, all, p->slice[t]);
        g[n++] = t;
    }
    int u;
    hwloc_bitmap_foreach_begin(u, all) {
        if (p->units[u].l3g < 0)
            return 0;
    } hwloc_bitmap_foreach_end();
    for (unsigned i = 0; i < n; i++)
        if (!may_take(p, g[i], all))
            return 0;
    return n;
}

/* GPU tasks over two nodes among all of them; their L3 splits into @l3s. */
static unsigned gpu_spread(const ngi_planner *p, unsigned *buf, unsigned *l3s)
{
    unsigned n = 0;
    for (unsigned t = 0; t < p->req->ntasks; t++)
        if (p->home[t] && !hwloc_bitmap_iszero(p->slice[t]))
            buf[n++] = t;
    return spread_of(p, buf, n, l3s);
}

/* Local task @l's unit @s (a spill: off its home) for the group's unit
 * @r, on a node as near @l's home; then the group packed again. Returns
 * the GPU tasks over two nodes then (x 65536, + their L3 splits), ~0u
 * when the group does not pack; kept with @commit, else undone (@keep: 2
 * bitmaps per member, @ids: n, @buf: ntasks). */
static unsigned try_swap(ngi_planner *p, unsigned *g, unsigned n, const unsigned *slr,
                         int commit, hwloc_bitmap_t *keep, unsigned *ids, unsigned *buf)
{
    unsigned l = slr[0], s = slr[1], r = slr[2], o = 0, got = ~0u, l3s;
    while (o < n && !hwloc_bitmap_isset(p->slice[g[o]], r))
        o++;
    if (o == n)
        return got;
    for (unsigned i = 0; i < n; i++) {
        ids[i] = g[i];
        hwloc_bitmap_copy(keep[2 * i], p->slice[g[i]]);
        hwloc_bitmap_copy(keep[2 * i + 1], p->home[g[i]]);
    }
    hwloc_bitmap_clr(p->slice[g[o]], r);
    hwloc_bitmap_set(p->slice[g[o]], s);
    hwloc_bitmap_clr(p->slice[l], s);
    hwloc_bitmap_set(p->slice[l], r);
    /* the swap alone may leave the group whole per node */
    if (!spread_of(p, g, n, &l3s) || pack_group(p, g, n, 0, 0)) {
        got = gpu_spread(p, buf, &l3s) * 65536u + l3s;
        if (commit)
            return got;
    }
    hwloc_bitmap_clr(p->slice[l], r);
    hwloc_bitmap_set(p->slice[l], s);
    for (unsigned i = 0; i < n; i++) {
        hwloc_bitmap_copy(p->slice[ids[i]], keep[2 * i]);
        hwloc_bitmap_copy(p->home[ids[i]], keep[2 * i + 1]);
    }
    return got;
}

/* What swap_spill tries: the group, its scratch, the best swap found. */
typedef struct swap_try {
    unsigned *g, n, *ids, *buf, tries, floor, score, best[3];
    hwloc_bitmap_t *keep, all;
} swap_try;

/* Local task @l's spill units on the group's nodes, each against the
 * group's units on a node as near @l's home. */
static void swaps_of(ngi_planner *p, swap_try *w, unsigned l)
{
    int s, r;
    hwloc_bitmap_foreach_begin(s, p->slice[l]) {
        unsigned ds = (unsigned)p->units[s].dom, cand[3] = {l, (unsigned)s, 0};
        if (hwloc_bitmap_isset(p->home[l], (unsigned)s) || !ngi_plan_touches(p, w->all, ds))
            continue;
        ngi_rank rs = ngi_plan_rank_of(p, p->home[l], ds);
        hwloc_bitmap_foreach_begin(r, w->all) {
            unsigned dr = (unsigned)p->units[r].dom;
            if (!w->tries || dr == ds ||
                ngi_plan_rank_cmp(ngi_plan_rank_of(p, p->home[l], dr), rs) != 0)
                continue;
            w->tries--;
            cand[2] = (unsigned)r;
            unsigned got = try_swap(p, w->g, w->n, cand, 0, w->keep, w->ids, w->buf);
            if (got <= w->floor && got < w->score) {
                w->score = got;
                memcpy(w->best, cand, sizeof w->best);
            }
        } hwloc_bitmap_foreach_end();
    } hwloc_bitmap_foreach_end();
}

/* A remote group still over two nodes after packing: a local GPU task's
 * spill unit on one of the group's nodes, and one of the group's units on
 * another node the spill could as well have gone to (the same rank from
 * the local task's home: the spill took the first of a tie), swapped when
 * the group then fills each node whole (Corona Naples, cores 16-39, 12
 * tasks round robin: GPU 2's local tasks 3, 2, 2 on node 5's 6 cores
 * spill a core onto node 4, not node 6, as near; GPU 3's remote tasks of
 * 3 then hold 5 + 4 cores, one over both). The best swap of at most 64 is
 * kept: fewer GPU tasks over two nodes, then fewer L3 splits, none more.
 * @g has room for n + 1 tasks. */
static void swap_spill(ngi_planner *p, unsigned *g, unsigned n, unsigned *buf)
{
    unsigned l3s = 0;
    swap_try w = {.g = g, .n = n, .buf = buf, .tries = 64, .all = hwloc_bitmap_alloc(),
                  .keep = calloc(2 * (size_t)n, sizeof *w.keep), .ids = calloc(n, sizeof *w.ids)};
    int skip = !w.all || !w.keep || !w.ids || !spread_of(p, g, n, &l3s);
    for (unsigned i = 0; !skip && i < 2 * n; i++)
        skip = !(w.keep[i] = hwloc_bitmap_alloc());
    unsigned now = skip ? 0 : gpu_spread(p, buf, &l3s);
    w.score = now * 65536u + l3s;
    w.floor = (now - 1) * 65536u + l3s; /* one straddle fewer, no more L3 splits */
    for (unsigned i = 0; !skip && i < n; i++)
        hwloc_bitmap_or(w.all, w.all, p->slice[g[i]]);
    for (unsigned l = 0; !skip && l < p->req->ntasks; l++)
        if (p->home[l] && !p->plan->tasks[l].gpu_remote && !p->plan->tasks[l].shares_cores)
            swaps_of(p, &w, l);
    if (!skip && w.score <= w.floor && try_swap(p, g, n, w.best, 1, w.keep, w.ids, buf) == w.score) {
        g[n] = w.best[0]; /* the local task: laid out again too */
        ngi_plan_record_relaid(p, g, n + 1, NGI_CUT_WHAT_SWAP, now, w.score / 65536u);
    }
    for (unsigned i = 0; w.keep && i < 2 * n; i++)
        hwloc_bitmap_free(w.keep[i]);
    free(w.keep);
    free(w.ids);
    hwloc_bitmap_free(w.all);
}

/* XE8640, cores 37-92, 28 tasks: GPU 2's seven remote tasks, 4,3,3,3 on
 * node 4's 13 free cores and 3,3,3 on node 6's 9, not a 4 on node 6 and a
 * task over both nodes as cut piece by piece. */
void ngi_plan_pack_remote(ngi_planner *p)
{
    unsigned nt = p->req->ntasks, *g = malloc(nt * sizeof *g), *buf = malloc(nt * sizeof *buf);
    unsigned char *seen = calloc(nt, 1);
    for (unsigned t = 0; g && buf && seen && t < nt; t++) {
        if (seen[t] || !p->plan->tasks[t].gpu_remote || !p->home[t] ||
            hwloc_bitmap_iszero(p->slice[t]))
            continue;
        unsigned n = 0;
        for (unsigned o = t; o < nt; o++)
            if (!seen[o] && p->plan->tasks[o].gpu_remote && p->home[o] &&
                !hwloc_bitmap_iszero(p->slice[o]) && ngi_plan_same_gpus(p, t, o)) {
                seen[o] = 1;
                g[n++] = o;
            }
        pack_group(p, g, n, 0, 1);
        swap_spill(p, g, n, buf);
    }
    /* Then per node, its GPU tasks on whole L3s where their sizes allow
     * (Corona's Rome node, 16 tasks on cores 0-23: the 8 local tasks 2
     * cores each in the 3-core L3s, the 8 remote ones the third core of
     * each, rather than the local ones over 0-15 cut across 3 L3s). */
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    for (unsigned d = 0; g && all && d < p->n_doms; d++) {
        int node = p->units[p->doms[d].first].node, seen_before = 0;
        for (unsigned e = 0; e < d; e++)
            seen_before |= p->units[p->doms[e].first].node == node;
        unsigned n = seen_before ? 0 : node_tasks(p, node, g, all);
        if (n)
            pack_group(p, g, n, 1, 1);
    }
    hwloc_bitmap_free(all);
    free(g);
    free(buf);
    free(seen);
}
