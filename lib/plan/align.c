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

/* @k tasks share the run [a, a+n) evenly (each at most @hi), their +1s
 * where they span the fewest finer runs; slices out at start/len. */
static void share_run(const ngi_cut_line *line, unsigned a, unsigned n, unsigned k, unsigned hi,
                      unsigned *start, unsigned *len)
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
            share_run(line, r[i].a, r[i].n, k[i], hi, start + t, len + t);
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

/* Fewer tasks than runs: whole consecutive runs per task, the smallest
 * group as large as possible (exact DP over run boundaries). */
static int aligned_whole_runs(const run *r, unsigned nr, unsigned nt, unsigned lo, unsigned hi,
                              unsigned *start, unsigned *len)
{
    unsigned w = nr + 1;
    unsigned *best = calloc((size_t)(nt + 1) * w, sizeof *best);
    unsigned *cut = calloc((size_t)(nt + 1) * w, sizeof *cut);
    unsigned *pre = malloc((size_t)w * sizeof *pre);
    int rc = best && cut && pre ? 0 : -1;
    for (unsigned i = 0; rc == 0 && i <= nr; i++)
        pre[i] = i ? pre[i - 1] + r[i - 1].n : 0;
    if (rc == 0)
        best[0] = ~0u; /* 0 tasks over 0 runs: no group yet */
    for (unsigned t = 1; rc == 0 && t <= nt; t++)
        for (unsigned i = t; i <= nr; i++)
            for (unsigned k = t - 1; k < i; k++) {
                unsigned prev = best[(t - 1) * w + k];
                unsigned g = pre[i] - pre[k];
                unsigned v = g < prev ? g : prev;
                if (prev && v > best[t * w + i]) {
                    best[t * w + i] = v;
                    cut[t * w + i] = k;
                }
            }
    unsigned got = rc == 0 ? best[nt * w + nr] : 0;
    rc = got && got != ~0u && got >= lo ? 0 : -1;
    if (rc == 0)
        whole_runs_slices(r, pre, cut, w, nt, nr, hi, start, len);
    free(best);
    free(cut);
    free(pre);
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
        rc = aligned_whole_runs(r, nr, nt, lo, hi, start, len);
    free(r);
    return rc;
}
