/* Aligned cuts: every task inside one run of a level (a NUMA domain, a
 * package, a CPU group: an L3 or a memoryless die inside a domain), or,
 * with fewer tasks than runs, over whole consecutive runs.
 *
 * With as many tasks as runs or more, tasks go one at a time to the run
 * whose per-task share would stay largest; inside a run its tasks share it
 * evenly, their +1s placed by the moved cut of that run alone, so a task
 * of a NUMA-aligned cut also stays inside an L3 when the sizes allow.
 * With fewer tasks than runs, an exact dynamic program over run boundaries
 * makes the smallest group of runs as large as possible.
 */
#include "private/plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct run {
    unsigned a, n;
} run;

/* Runs of equal @ids (domains, packages or groups). */
static unsigned line_runs(const unsigned *ids, unsigned n, run *r)
{
    unsigned k = 0;
    for (unsigned i = 0; i < n;) {
        unsigned j = i;
        while (j < n && ids[j] == ids[i])
            j++;
        r[k].a = i;
        r[k].n = j - i;
        k++;
        i = j;
    }
    return k;
}

/* How many tasks each run gets: one at a time to the run whose per-task
 * share would stay largest (each task at least @lo). */
static int tasks_per_run(const run *r, unsigned nr, unsigned nt, unsigned lo, unsigned *k)
{
    for (unsigned t = 0; t < nt; t++) {
        int best = -1;
        for (unsigned i = 0; i < nr; i++) {
            if ((k[i] + 1) * lo > r[i].n)
                continue;
            /* compare r[i].n/(k[i]+1) > r[best].n/(k[best]+1) exactly */
            if (best < 0 || (unsigned long)r[i].n * (k[best] + 1) >
                                (unsigned long)r[best].n * (k[i] + 1))
                best = (int)i;
        }
        if (best < 0)
            return -1;
        k[best]++;
    }
    return 0;
}

static unsigned count_runs(const unsigned *ids, unsigned n)
{
    unsigned k = n ? 1 : 0;
    for (unsigned i = 1; i < n; i++)
        k += ids[i] != ids[i - 1];
    return k;
}

/* @k tasks share the run [a, a+n) (each in [lo, hi]): evenly, their +1s
 * where they split the fewest finer runs; or, when the run holds CPU
 * groups, aligned on them (inside one group each, or over whole groups:
 * 20 cores in 2-core L3s for 3 tasks go 8 | 6 | 6 rather than 7 | 7 | 6
 * over halves of L3s), whichever scores better. Slices out at start/len. */
static void share_run(const ngi_cut_line *line, unsigned a, unsigned n, unsigned k, unsigned lo,
                      unsigned hi, unsigned *start, unsigned *len)
{
    unsigned s = n / k, e = n % k;
    if (s >= hi) {
        s = hi;
        e = 0;
    }
    ngi_cut_line sub = *line;
    sub.n = n;
    sub.dom = line->dom + a;
    sub.pkg = line->pkg ? line->pkg + a : NULL;
    sub.grp = line->grp ? line->grp + a : NULL;
    if (ngi_cut_moved(&sub, k, s, e, start, len) < 0)
        ngi_cut_consecutive(k, s, e, start, len);
    unsigned *gs = sub.grp && count_runs(sub.grp, n) > 1 ? malloc(2 * (size_t)k * sizeof *gs) : NULL;
    if (gs && ngi_cut_aligned(&sub, sub.grp, k, lo, hi, gs, gs + k) == 0) {
        ngi_cut_score even, grouped;
        ngi_cut_score_of(&sub, k, start, len, &even);
        ngi_cut_score_of(&sub, k, gs, gs + k, &grouped);
        if (ngi_cut_better(&grouped, &even)) {
            memcpy(start, gs, k * sizeof *start);
            memcpy(len, gs + k, k * sizeof *len);
        }
    }
    free(gs);
    for (unsigned m = 0; m < k; m++)
        start[m] += a;
}

static int aligned_per_run(const ngi_cut_line *line, const run *r, unsigned nr, unsigned nt,
                           unsigned lo, unsigned hi, unsigned *start, unsigned *len)
{
    unsigned *k = calloc(nr, sizeof *k);
    if (!k || tasks_per_run(r, nr, nt, lo, k) < 0) {
        free(k);
        return -1;
    }
    unsigned t = 0;
    for (unsigned i = 0; i < nr; i++) {
        if (k[i])
            share_run(line, r[i].a, r[i].n, k[i], lo, hi, start + t, len + t);
        t += k[i];
    }
    free(k);
    return 0;
}

/* Slices of the whole-run groups chosen by the program (cut[]); a group
 * larger than @hi keeps its largest run first, then its neighbours. */
static void whole_runs_slices(const run *r, const unsigned *pre, const unsigned *cut, unsigned w,
                              unsigned nt, unsigned nr, unsigned hi, unsigned *start,
                              unsigned *len)
{
    for (unsigned t = nt, i = nr; t > 0; t--) {
        unsigned k = cut[t * w + i];
        unsigned g = pre[i] - pre[k], want = g < hi ? g : hi, big = k;
        for (unsigned x = k; x < i; x++)
            if (r[x].n > r[big].n)
                big = x;
        unsigned a = r[big].a;
        if (a + want > r[i - 1].a + r[i - 1].n)
            a = r[i - 1].a + r[i - 1].n - want;
        start[t - 1] = a;
        len[t - 1] = want;
        i = k;
    }
}

/* A group of whole runs: its effective cores, then its size (the
 * objective's two terms, compared in that order). */
typedef struct val {
    double eff;
    unsigned raw;
} val;

static int val_less(val a, val b)
{
    if (a.eff < b.eff - 1e-9)
        return 1;
    if (a.eff > b.eff + 1e-9)
        return 0;
    return a.raw < b.raw;
}

/* The DP's tables: best[t][i] the largest smallest value of t groups over
 * runs [0, i), cut[t][i] where the last group starts; seg[k][i] the value
 * of runs [k, i). */
typedef struct wdp {
    unsigned w;
    unsigned lo;          /* no group smaller: -c as a size is exact */
    val *best, *seg;
    unsigned *cut, *pre;
} wdp;

static void fill_segments(const ngi_cut_line *line, const run *r, unsigned nr, wdp *d)
{
    for (unsigned i = 0; i <= nr; i++)
        d->pre[i] = i ? d->pre[i - 1] + r[i - 1].n : 0;
    for (unsigned k = 0; k < nr; k++)
        for (unsigned i = k + 1; i <= nr; i++)
            d->seg[k * d->w + i] = (val){ngi_cut_eff(line, r[k].a, d->pre[i] - d->pre[k]),
                                         d->pre[i] - d->pre[k]};
}

static void run_dp(unsigned nr, unsigned nt, wdp *d)
{
    unsigned w = d->w;
    const val none = {-1, 0};
    for (size_t x = 0; x < (size_t)(nt + 1) * w; x++)
        d->best[x] = none;
    d->best[0] = (val){1e300, ~0u}; /* 0 tasks over 0 runs: no group yet */
    for (unsigned t = 1; t <= nt; t++)
        for (unsigned i = t; i <= nr; i++)
            for (unsigned k = t - 1; k < i; k++) {
                val prev = d->best[(t - 1) * w + k];
                if (prev.eff < 0)
                    continue;
                val g = d->seg[k * w + i];
                if (g.raw < d->lo)
                    continue; /* a group below the size would drop a core of -c */
                val v = val_less(g, prev) ? g : prev;
                if (val_less(d->best[t * w + i], v)) {
                    d->best[t * w + i] = v;
                    d->cut[t * w + i] = k;
                }
            }
}

/* Second pass: among the cuts whose every group is at least @floor, the
 * largest group as small as possible (so equal smallest groups come as
 * even as the runs allow: 8 L3s for 3 tasks go 3 + 3 + 2, not 2 + 2 + 4).
 * best[] then holds the largest group's size (raw in val.raw). */
static void balance_dp(unsigned nr, unsigned nt, val floor, wdp *d)
{
    unsigned w = d->w;
    for (size_t x = 0; x < (size_t)(nt + 1) * w; x++)
        d->best[x] = (val){-1, ~0u};
    d->best[0] = (val){0, 0};
    for (unsigned t = 1; t <= nt; t++)
        for (unsigned i = t; i <= nr; i++)
            for (unsigned k = t - 1; k < i; k++) {
                val prev = d->best[(t - 1) * w + k], g = d->seg[k * w + i];
                if (prev.eff < 0 || val_less(g, floor) || g.raw < d->lo)
                    continue;
                unsigned big = g.raw > prev.raw ? g.raw : prev.raw;
                if (big < d->best[t * w + i].raw) {
                    d->best[t * w + i] = (val){0, big};
                    d->cut[t * w + i] = k;
                }
            }
}

/* Fewer tasks than runs: whole consecutive runs per task, the smallest
 * group's effective cores, then its size, as large as possible, then the
 * largest group as small as possible (exact DPs over run boundaries). */
static int aligned_whole_runs(const ngi_cut_line *line, const run *r, unsigned nr, unsigned nt,
                              unsigned lo, unsigned hi, unsigned *start, unsigned *len)
{
    wdp d = {.w = nr + 1, .lo = lo};
    d.best = malloc((size_t)(nt + 1) * d.w * sizeof *d.best);
    d.seg = malloc((size_t)d.w * d.w * sizeof *d.seg);
    d.cut = calloc((size_t)(nt + 1) * d.w, sizeof *d.cut);
    d.pre = malloc((size_t)d.w * sizeof *d.pre);
    int rc = d.best && d.seg && d.cut && d.pre ? 0 : -1;
    if (rc == 0) {
        fill_segments(line, r, nr, &d);
        run_dp(nr, nt, &d);
        val got = d.best[nt * d.w + nr];
        rc = got.eff >= 0 && got.raw != ~0u ? 0 : -1;
        if (rc == 0)
            balance_dp(nr, nt, got, &d);
    }
    if (rc == 0)
        whole_runs_slices(r, d.pre, d.cut, d.w, nt, nr, hi, start, len);
    free(d.best);
    free(d.seg);
    free(d.cut);
    free(d.pre);
    return rc;
}

int ngi_cut_aligned(const ngi_cut_line *line, const unsigned *ids, unsigned nt, unsigned lo,
                    unsigned hi, unsigned *start, unsigned *len)
{
    run *r = malloc((line->n ? line->n : 1) * sizeof *r);
    if (!r)
        return -1;
    unsigned nr = line_runs(ids, line->n, r);
    if (lo == 0)
        lo = 1;
    int rc;
    if (nt >= nr)
        rc = aligned_per_run(line, r, nr, nt, lo, hi, start, len);
    else if ((unsigned long)nt * nr * nr > 1ul << 22)
        rc = -1; /* thousands of tiny runs: the other families cover it */
    else
        rc = aligned_whole_runs(line, r, nr, nt, lo, hi, start, len);
    free(r);
    return rc;
}
