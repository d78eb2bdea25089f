/* Cutting a line of cores into task slices, by an explicit objective.
 *
 * The objective and the line are in line.c; the families of candidate cuts
 * are scored and the best wins (ties keep the earlier one):
 *   consecutive  the even sizes, the +1s first (planner v1's cut);
 *   moved        the same sizes, the +1s where the fewest tasks straddle
 *                domains, then split the fewest CPU groups (line.c);
 *   numa-aligned each task inside one domain, or over whole domains when
 *                tasks are fewer than domains (align.c);
 *   package-aligned  the same on packages (5 tasks on 2 sockets of 4 nodes
 *                go 2 + 3, none across sockets, where no cut on node
 *                boundaries avoids a cross-socket task);
 *   group-aligned  the same on CPU groups (L3s, memoryless dies), when they
 *                are finer than the domains.
 * Before scoring, idle units beside a slice go to it when that costs the
 * smallest slice nothing (absorb()): the tie-break after the objective's
 * two terms is fewer idle cores. The consecutive cut is always a
 * candidate, so the result is never worse than it.
 */
#include "private/plan.h"

#include <stdlib.h>
#include <string.h>

#define EPS 1e-9

static const char *const family_names[NGI_CUT_FAMILIES] = {
    [NGI_CUT_CONSECUTIVE] = "consecutive", [NGI_CUT_MOVED] = "moved",
    [NGI_CUT_ALIGNED] = "numa-aligned",    [NGI_CUT_PACKAGE] = "package-aligned",
    [NGI_CUT_GROUP] = "group-aligned",
};

const char *ngi_cut_family_name(int family)
{
    return family >= 0 && family < NGI_CUT_FAMILIES ? family_names[family] : "shared";
}

/* CPU groups finer than the domains somewhere on the line. */
static int groups_finer(const ngi_cut_line *line)
{
    for (unsigned i = 1; line->grp && i < line->n; i++)
        if (line->grp[i] != line->grp[i - 1] && line->dom[i] == line->dom[i - 1])
            return 1;
    return 0;
}

int ngi_cut_family(const ngi_cut_line *line, int family, unsigned nt, unsigned s,
                  unsigned e, unsigned lo, unsigned hi, unsigned *start, unsigned *len)
{
    if (nt == 0 || (unsigned long)nt * s + e > line->n)
        return -1;
    switch (family) {
    case NGI_CUT_CONSECUTIVE:
        ngi_cut_consecutive(nt, s, e, start, len);
        return 0;
    case NGI_CUT_MOVED:
        return ngi_cut_moved(line, nt, s, e, start, len);
    case NGI_CUT_ALIGNED:
        return ngi_cut_aligned(line, line->dom, nt, lo, hi, start, len);
    case NGI_CUT_PACKAGE:
        return line->pkg ? ngi_cut_aligned(line, line->pkg, nt, lo, hi, start, len) : -1;
    case NGI_CUT_GROUP:
        return groups_finer(line) ? ngi_cut_aligned(line, line->grp, nt, lo, hi, start, len) : -1;
    default:
        return -1;
    }
}

/* ---- idle units to the neighbouring slices ------------------------------ */

static unsigned long long pair_cost(const ngi_cut_line *line, unsigned a, unsigned n)
{
    return n ? ((unsigned long long)ngi_cut_straddles(line, a, n) << 32) | ngi_cut_spans(line, a, n)
             : 0;
}

/* The gap [g, g+n) between slice l (ending at g, or -1) and slice r
 * (starting at g+n, or -1): l takes k units of it, r the last @take - k,
 * k in [kmin, kmax]. The k that straddles and splits least, then keeps the smaller of the
 * two slices largest; -1 when every k would drop a slice below @floor. */
static int split_gap(const ngi_cut_line *line, const unsigned *start, const unsigned *len, int l,
                     int r, unsigned g, unsigned n, unsigned take, unsigned kmin, unsigned kmax,
                     double floor)
{
    int best = -1;
    unsigned long long best_cost = 0;
    double best_eff = 0;
    for (unsigned k = kmin; k <= kmax; k++) {
        unsigned la = l >= 0 ? start[l] : g, ln = (l >= 0 ? len[l] : 0) + k;
        unsigned rn = (r >= 0 ? len[r] : 0) + take - k, ra = g + n - (take - k);
        double el = ln ? ngi_cut_eff(line, la, ln) : 1e300, er = rn ? ngi_cut_eff(line, ra, rn) : 1e300;
        if ((l >= 0 && el < floor - EPS) || (r >= 0 && er < floor - EPS))
            continue;
        unsigned long long cost = pair_cost(line, la, ln) + pair_cost(line, ra, rn);
        double low = el < er ? el : er;
        if (best < 0 || cost < best_cost || (cost == best_cost && low > best_eff + EPS)) {
            best = (int)k;
            best_cost = cost;
            best_eff = low;
        }
    }
    return best;
}

/* Idle units between or beside the slices (in line order) go to the
 * neighbouring slices while none grows past @hi and none's effective cores
 * drop below @floor (the cut's smallest): the objective's terms stay, idle
 * cores go. */
static void absorb(const ngi_cut_line *line, unsigned nt, unsigned *start, unsigned *len,
                   unsigned hi, double floor)
{
    for (unsigned t = 1; t < nt; t++)
        if (start[t] < start[t - 1] + len[t - 1])
            return; /* not in line order: leave it as the family made it */
    for (unsigned t = 0; t <= nt; t++) {
        int l = t ? (int)t - 1 : -1, r = t < nt ? (int)t : -1;
        unsigned g = l >= 0 ? start[l] + len[l] : 0, end = r >= 0 ? start[r] : line->n;
        if (end <= g)
            continue;
        unsigned cap_l = l >= 0 && len[l] < hi ? hi - len[l] : 0;
        unsigned cap_r = r >= 0 && len[r] < hi ? hi - len[r] : 0;
        unsigned n = end - g, take = n < cap_l + cap_r ? n : cap_l + cap_r;
        if (!take)
            continue;
        unsigned kmin = take > cap_r ? take - cap_r : 0, kmax = take < cap_l ? take : cap_l;
        int k = split_gap(line, start, len, l, r, g, n, take, kmin, kmax, floor);
        if (k < 0)
            continue;
        if (l >= 0)
            len[l] += (unsigned)k;
        if (r >= 0) {
            start[r] -= take - (unsigned)k;
            len[r] += take - (unsigned)k;
        }
    }
}

/* ---- choosing ---------------------------------------------------------- */

/* Idle units between two slices: a home cut must leave what it does not
 * use in one piece at an end, for the other tasks to grow into. */
static int holes(unsigned nt, const unsigned *start, const unsigned *len)
{
    for (unsigned t = 1; t < nt; t++)
        if (start[t] != start[t - 1] + len[t - 1])
            return 1;
    return 0;
}


int ngi_cut_choose_mode(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                        unsigned lo, unsigned hi, int mode, unsigned *start, unsigned *len,
                        ngi_cut_score *score, ngi_cut_trace *trace)
{
    unsigned *ts = malloc(2 * (size_t)(nt ? nt : 1) * sizeof *ts);
    if (!ts)
        return -1;
    unsigned *tl = ts + nt;
    int chosen = -1;
    for (int fam = 0; fam < NGI_CUT_FAMILIES; fam++) {
        if (trace)
            trace->found[fam] = 0;
        if (ngi_cut_family(line, fam, nt, s, e, lo, hi, ts, tl) < 0)
            continue;
        ngi_cut_score sc;
        if (mode & NGI_CUT_ABSORB) {
            ngi_cut_score_of(line, nt, ts, tl, &sc);
            absorb(line, nt, ts, tl, hi, sc.min_eff);
        }
        ngi_cut_score_of(line, nt, ts, tl, &sc);
        unsigned long sized = (unsigned long)nt * s + e;
        if ((mode & NGI_CUT_FULL) && sc.idle > line->n - sized)
            continue;
        if ((mode & NGI_CUT_EXACT) && (line->n - sc.idle > sized || holes(nt, ts, tl)))
            continue;
        if (trace) {
            trace->found[fam] = 1;
            trace->score[fam] = sc;
        }
        if (chosen < 0 || ngi_cut_better(&sc, score)) {
            *score = sc;
            memcpy(start, ts, nt * sizeof *ts);
            memcpy(len, tl, nt * sizeof *tl);
            chosen = fam;
        }
    }
    if (trace)
        trace->chosen = chosen;
    free(ts);
    return chosen;
}

int ngi_cut_choose(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                  unsigned lo, unsigned hi, unsigned *start, unsigned *len,
                  ngi_cut_score *score)
{
    return ngi_cut_choose_mode(line, nt, s, e, lo, hi, NGI_CUT_ABSORB, start, len, score, NULL);
}

int ngi_cut_choose_full(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                       unsigned lo, unsigned hi, unsigned *start, unsigned *len,
                       ngi_cut_score *score)
{
    return ngi_cut_choose_mode(line, nt, s, e, lo, hi, NGI_CUT_ABSORB | NGI_CUT_FULL, start, len,
                               score, NULL);
}
/* ---- the planner's use ------------------------------------------------- */

/* The line of @units: per unit its domain, package and CPU group. */
static int build_line(const ngi_planner *p, const unsigned *units, unsigned n, ngi_cut_line *line)
{
    unsigned *ids = malloc(3 * (size_t)(n ? n : 1) * sizeof *ids);
    if (!ids)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        const ngi_unit *u = &p->units[units[i]];
        ids[i] = (unsigned)u->dom;
        ids[n + i] = (unsigned)(u->pkg + 1);
        ids[2 * n + i] = u->grp;
    }
    *line = (ngi_cut_line){.n = n, .dom = ids, .ndom = p->n_doms, .dist = p->dist,
                           .pkg = ids + n, .grp = ids + 2 * n};
    return 0;
}

/* Fewer units than tasks: one each, round robin (tasks share). */
static void share_round_robin(ngi_planner *p, const unsigned *tasks, unsigned nt, unsigned n,
                              unsigned *start, unsigned *len)
{
    for (unsigned t = 0; t < nt; t++) {
        start[t] = t % n;
        len[t] = 1;
        if (t >= n)
            p->plan->tasks[tasks[t]].shares_cores = 1;
    }
}

int ngi_plan_cut_units(ngi_planner *p, const unsigned *units, unsigned n,
                      const unsigned *tasks, unsigned nt, unsigned base, unsigned e, int exact)
{
    if (nt == 0 || n == 0)
        return -1;
    int fixed = p->fixed;
    if ((unsigned long)nt * base + e > n) {
        /* Not reached when sizes were set from the same units; stay safe. */
        base = n / nt;
        e = n % nt;
        fixed = 0;
    }
    ngi_cut_line line;
    unsigned *start = malloc(2 * (size_t)nt * sizeof *start);
    if (!start || build_line(p, units, n, &line) < 0) {
        free(start);
        return -1;
    }
    unsigned *len = start + nt;
    /* exact 1: no slice above its size and no more units than the sizes
     * (a GPU component's home must leave what it does not need to the
     * others), nothing absorbed; 2: no more
     * idle units than the sizes leave (a GPU component's spill region is
     * exactly its demand: an idle core there would be a core of the GPU's
     * package left idle while a task sits farther away). */
    unsigned lo = fixed || exact == 3 ? base : 1;
    unsigned hi = fixed ? base : exact == 1 || exact == 3 ? base + (e > 0) : (p->cap ? p->cap : n);
    /* exact 3: widened tasks (rule 2), every slice base or base+1, no
     * unit of the region idle beyond what the sizes leave. */
    int mode = exact == 1 ? NGI_CUT_EXACT
             : exact == 2 ? NGI_CUT_ABSORB | NGI_CUT_FULL
             : exact == 3 ? NGI_CUT_FULL : NGI_CUT_ABSORB;
    ngi_cut_score sc;
    ngi_cut_trace trace = {.chosen = -1};
    int fam = !base ? -1 : ngi_cut_choose_mode(&line, nt, base, e, lo, hi, mode, start, len, &sc,
                                               &trace);
    if (fam < 0)
        share_round_robin(p, tasks, nt, n, start, len);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (unsigned i = 0; set && i < n; i++)
        hwloc_bitmap_set(set, units[i]);
    if (set)
        ngi_plan_record_cut(p, tasks, nt, set, exact == 0 ? NGI_CUT_WHAT_CPU
                                              : exact == 1 ? NGI_CUT_WHAT_HOME : NGI_CUT_WHAT_REGION,
                            &trace);
    hwloc_bitmap_free(set);
    for (unsigned t = 0; t < nt; t++) {
        hwloc_bitmap_zero(p->slice[tasks[t]]);
        for (unsigned i = start[t]; i < start[t] + len[t]; i++) {
            hwloc_bitmap_set(p->slice[tasks[t]], units[i]);
            hwloc_bitmap_set(p->used, units[i]);
        }
        p->size[tasks[t]] = len[t];
    }
    free((void *)line.dom);
    free(start);
    return fam;
}
