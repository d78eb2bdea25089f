/* Cutting a line of cores into task slices, by an explicit objective.
 *
 * A line is a sequence of units (cores) in domain-major order: each domain's
 * units form one run. A cut gives every task one run of the line. Cuts are
 * compared by, in this order (docs/planner.md):
 *   1. the smallest task's effective cores: a core outside the task's main
 *      domain (the one holding most of its cores) counts 10/distance;
 *   2. the smallest task's raw size;
 *   3. fewest straddling tasks (tasks over more than one domain);
 *   4. fewest idle units.
 * Four families are scored and the best wins (ties keep the earlier one):
 * the consecutive cut (the +1s first, the previous planner's cut), the same
 * sizes with the +1s moved where they straddle least, a NUMA-aligned cut
 * (each task inside one domain, or over whole domains when tasks are fewer
 * than domains), and the same aligned cut on packages (each task inside one
 * socket: 5 tasks on 2 sockets of 4 nodes go 2 + 3, none across sockets,
 * where no cut on node boundaries avoids a cross-socket task). The
 * consecutive cut is always a candidate, so the result is never worse than
 * it.
 */
#include "private/plan.h"

#include <stdlib.h>
#include <string.h>

#define EPS 1e-9

double ngi_cut_eff(const ngi_cut_line *line, unsigned a, unsigned len)
{
    /* Runs inside [a, a+len): at most one per domain on a domain-major line. */
    unsigned end = a + len, best_n = 0, best_d = 0;
    for (unsigned i = a; i < end;) {
        unsigned j = i;
        while (j < end && line->dom[j] == line->dom[i])
            j++;
        if (j - i > best_n) {
            best_n = j - i;
            best_d = line->dom[i];
        }
        i = j;
    }
    double eff = 0;
    for (unsigned i = a; i < end;) {
        unsigned j = i;
        while (j < end && line->dom[j] == line->dom[i])
            j++;
        unsigned d = line->dist[best_d * line->ndom + line->dom[i]];
        eff += (double)(j - i) * 10.0 / (double)(d < 10 ? 10 : d);
        i = j;
    }
    return eff;
}

static int straddles(const ngi_cut_line *line, unsigned a, unsigned len)
{
    return len > 0 && line->dom[a] != line->dom[a + len - 1];
}

void ngi_cut_score_of(const ngi_cut_line *line, unsigned nt, const unsigned *start,
                     const unsigned *len, ngi_cut_score *out)
{
    unsigned owned = 0;
    out->min_eff = 1e300;
    out->min_raw = ~0u;
    out->straddles = 0;
    for (unsigned t = 0; t < nt; t++) {
        double e = ngi_cut_eff(line, start[t], len[t]);
        if (e < out->min_eff)
            out->min_eff = e;
        if (len[t] < out->min_raw)
            out->min_raw = len[t];
        out->straddles += (unsigned)straddles(line, start[t], len[t]);
        owned += len[t];
    }
    if (nt == 0) {
        out->min_eff = 0;
        out->min_raw = 0;
    }
    out->idle = line->n - owned;
}

int ngi_cut_better(const ngi_cut_score *a, const ngi_cut_score *b)
{
    if (a->min_eff > b->min_eff + EPS)
        return 1;
    if (a->min_eff < b->min_eff - EPS)
        return 0;
    if (a->min_raw != b->min_raw)
        return a->min_raw > b->min_raw;
    if (a->straddles != b->straddles)
        return a->straddles < b->straddles;
    return a->idle < b->idle;
}

/* ---- family 1: consecutive, the +1s first ----------------------------- */

static void cut_consecutive(unsigned nt, unsigned s, unsigned e, unsigned *start, unsigned *len)
{
    unsigned pos = 0;
    for (unsigned t = 0; t < nt; t++) {
        start[t] = pos;
        len[t] = s + (t < e);
        pos += len[t];
    }
}

/* ---- family 2: same sizes, +1s moved ----------------------------------- */

/* Two exact dynamic programs over (tasks placed i, +1s used j), whose next
 * run starts at i*s + j: first the best smallest-effective value, then the
 * fewest straddles among arrangements reaching it. */
static int cut_moved(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                     unsigned *start, unsigned *len)
{
    unsigned w = e + 1;
    size_t cells = (size_t)(nt + 1) * w;
    /* Far beyond any node's core count (65536 tasks): not worth the table. */
    if (cells > (size_t)1 << 22)
        return -1;
    double *f = malloc(cells * sizeof *f);
    unsigned *g = malloc(cells * sizeof *g);
    unsigned char *pick = malloc(cells);
    if (!f || !g || !pick) {
        free(f); free(g); free(pick);
        return -1;
    }
    for (size_t k = 0; k < cells; k++) {
        f[k] = -1;
        g[k] = ~0u;
    }
    f[0] = 1e300;
    for (unsigned i = 1; i <= nt; i++)
        for (unsigned j = 0; j <= e && j <= i; j++)
            for (unsigned plus = 0; plus <= 1; plus++) {
                if (plus > j || i - 1 < j - plus)
                    continue;
                double prev = f[(i - 1) * w + (j - plus)];
                if (prev < 0)
                    continue;
                double v = ngi_cut_eff(line, (i - 1) * s + (j - plus), s + plus);
                if (v > prev)
                    v = prev;
                if (v > f[i * w + j])
                    f[i * w + j] = v;
            }
    double best = f[nt * w + e];
    g[0] = 0;
    for (unsigned i = 1; i <= nt; i++)
        for (unsigned j = 0; j <= e && j <= i; j++)
            for (unsigned plus = 0; plus <= 1; plus++) {
                if (plus > j || i - 1 < j - plus)
                    continue;
                unsigned prev = g[(i - 1) * w + (j - plus)];
                unsigned a = (i - 1) * s + (j - plus);
                if (prev == ~0u || ngi_cut_eff(line, a, s + plus) < best - EPS)
                    continue;
                unsigned v = prev + (unsigned)straddles(line, a, s + plus);
                /* Ties keep plus = 1 (tried second) only when strictly better,
                 * so the +1s stay as early as the objective allows. */
                if (v < g[i * w + j]) {
                    g[i * w + j] = v;
                    pick[i * w + j] = (unsigned char)plus;
                }
            }
    int rc = g[nt * w + e] == ~0u ? -1 : 0;
    for (unsigned i = nt, j = e; rc == 0 && i > 0; i--) {
        unsigned plus = pick[i * w + j];
        j -= plus;
        start[i - 1] = (i - 1) * s + j;
        len[i - 1] = s + plus;
    }
    free(f);
    free(g);
    free(pick);
    return rc;
}

/* ---- family 3: NUMA-aligned -------------------------------------------- */

typedef struct run {
    unsigned a, n;
} run;

/* Runs of equal @ids (domains, or packages). */
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

/* As many tasks as domains or more: each task inside one domain. Tasks go,
 * one at a time, to the domain whose per-task share would stay largest. */
static int aligned_per_domain(const run *r, unsigned nr, unsigned nt, unsigned lo,
                              unsigned hi, unsigned *start, unsigned *len)
{
    unsigned *k = calloc(nr, sizeof *k);
    if (!k)
        return -1;
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
        if (best < 0) {
            free(k);
            return -1;
        }
        k[best]++;
    }
    unsigned t = 0;
    for (unsigned i = 0; i < nr; i++) {
        unsigned base = k[i] ? r[i].n / k[i] : 0, extra = k[i] ? r[i].n % k[i] : 0;
        unsigned pos = r[i].a;
        for (unsigned m = 0; m < k[i]; m++, t++) {
            unsigned want = base + (m < extra);
            if (want > hi)
                want = hi;
            start[t] = pos;
            len[t] = want;
            pos += want;
        }
    }
    free(k);
    return 0;
}

/* Fewer tasks than domains: whole consecutive domains per task, the
 * smallest group as large as possible (exact DP over run boundaries). */
static int aligned_groups(const run *r, unsigned nr, unsigned nt, unsigned lo,
                          unsigned hi, unsigned *start, unsigned *len)
{
    unsigned w = nr + 1;
    unsigned *best = malloc((size_t)(nt + 1) * w * sizeof *best);
    unsigned *cut = malloc((size_t)(nt + 1) * w * sizeof *cut);
    unsigned *pre = malloc((size_t)w * sizeof *pre);
    if (!best || !cut || !pre) {
        free(best); free(cut); free(pre);
        return -1;
    }
    pre[0] = 0;
    for (unsigned i = 0; i < nr; i++)
        pre[i + 1] = pre[i] + r[i].n;
    for (size_t x = 0; x < (size_t)(nt + 1) * w; x++)
        best[x] = 0;
    best[0] = ~0u; /* 0 tasks over 0 runs: no group yet */
    for (unsigned t = 1; t <= nt; t++)
        for (unsigned i = t; i <= nr; i++)
            for (unsigned k = t - 1; k < i; k++) {
                unsigned prev = best[(t - 1) * w + k];
                if (!prev)
                    continue;
                unsigned g = pre[i] - pre[k];
                unsigned v = g < prev ? g : prev;
                if (v > best[t * w + i]) {
                    best[t * w + i] = v;
                    cut[t * w + i] = k;
                }
            }
    int rc = best[nt * w + nr] && best[nt * w + nr] != ~0u && best[nt * w + nr] >= lo ? 0 : -1;
    for (unsigned t = nt, i = nr; rc == 0 && t > 0; t--) {
        unsigned k = cut[t * w + i];
        /* Capped: take the group's largest run first, then its neighbours. */
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
    free(best);
    free(cut);
    free(pre);
    return rc;
}

static int cut_aligned(const ngi_cut_line *line, const unsigned *ids, unsigned nt, unsigned lo,
                       unsigned hi, unsigned *start, unsigned *len)
{
    run *r = malloc((line->n ? line->n : 1) * sizeof *r);
    if (!r)
        return -1;
    unsigned nr = line_runs(ids, line->n, r);
    if (lo == 0)
        lo = 1;
    int rc = nt >= nr ? aligned_per_domain(r, nr, nt, lo, hi, start, len)
                      : aligned_groups(r, nr, nt, lo, hi, start, len);
    free(r);
    return rc;
}

int ngi_cut_family(const ngi_cut_line *line, int family, unsigned nt, unsigned s,
                  unsigned e, unsigned lo, unsigned hi, unsigned *start, unsigned *len)
{
    if (nt == 0 || (unsigned long)nt * s + e > line->n)
        return -1;
    switch (family) {
    case NGI_CUT_CONSECUTIVE:
        cut_consecutive(nt, s, e, start, len);
        return 0;
    case NGI_CUT_MOVED:
        return cut_moved(line, nt, s, e, start, len);
    case NGI_CUT_ALIGNED:
        return cut_aligned(line, line->dom, nt, lo, hi, start, len);
    case NGI_CUT_PACKAGE:
        return line->pkg ? cut_aligned(line, line->pkg, nt, lo, hi, start, len) : -1;
    default:
        return -1;
    }
}

static int choose(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e, unsigned lo,
                  unsigned hi, int no_idle, unsigned *start, unsigned *len, ngi_cut_score *score);

int ngi_cut_choose(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                  unsigned lo, unsigned hi, unsigned *start, unsigned *len,
                  ngi_cut_score *score)
{
    return choose(line, nt, s, e, lo, hi, 0, start, len, score);
}

int ngi_cut_choose_full(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                       unsigned lo, unsigned hi, unsigned *start, unsigned *len,
                       ngi_cut_score *score)
{
    return choose(line, nt, s, e, lo, hi, 1, start, len, score);
}

static int choose(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e, unsigned lo,
                  unsigned hi, int no_idle, unsigned *start, unsigned *len, ngi_cut_score *score)
{
    unsigned *ts = malloc(2 * (size_t)(nt ? nt : 1) * sizeof *ts);
    if (!ts)
        return -1;
    unsigned *tl = ts + nt;
    int chosen = -1;
    for (int fam = NGI_CUT_CONSECUTIVE; fam <= NGI_CUT_PACKAGE; fam++) {
        if (ngi_cut_family(line, fam, nt, s, e, lo, hi, ts, tl) < 0)
            continue;
        ngi_cut_score sc;
        ngi_cut_score_of(line, nt, ts, tl, &sc);
        if (no_idle && sc.idle > line->n - ((unsigned long)nt * s + e))
            continue;
        if (chosen < 0 || ngi_cut_better(&sc, score)) {
            *score = sc;
            memcpy(start, ts, nt * sizeof *ts);
            memcpy(len, tl, nt * sizeof *tl);
            chosen = fam;
        }
    }
    free(ts);
    return chosen;
}

/* ---- the planner's use ------------------------------------------------- */

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
    unsigned *dom = malloc(n * sizeof *dom), *start = malloc(2 * (size_t)nt * sizeof *start);
    if (!dom || !start) {
        free(dom);
        free(start);
        return -1;
    }
    unsigned *len = start + nt;
    for (unsigned i = 0; i < n; i++)
        dom[i] = (unsigned)p->units[units[i]].dom;
    unsigned *pkg = malloc(n * sizeof *pkg);
    for (unsigned i = 0; pkg && i < n; i++)
        pkg[i] = (unsigned)(p->units[units[i]].pkg + 1);
    ngi_cut_line line = {.n = n, .dom = dom, .ndom = p->n_doms, .dist = p->dist, .pkg = pkg};
    /* exact 1: no slice above its size (a GPU component's home must leave
     * what it does not need to the others); 2: no more idle units than the
     * sizes leave (a GPU component's spill region is exactly its demand:
     * an idle core there would be a core of the GPU's package left idle
     * while a task sits farther away). */
    unsigned lo = fixed ? base : 1, hi = fixed ? base : exact == 1 ? base + (e > 0) : (p->cap ? p->cap : n);
    ngi_cut_score sc;
    int fam = !base ? -1 : exact == 2 ? ngi_cut_choose_full(&line, nt, base, e, lo, hi, start, len, &sc)
                                      : ngi_cut_choose(&line, nt, base, e, lo, hi, start, len, &sc);
    if (fam < 0) {
        /* Fewer units than tasks: one each, round robin (tasks share). */
        for (unsigned t = 0; t < nt; t++) {
            start[t] = t % n;
            len[t] = 1;
            if (t >= n)
                p->plan->tasks[tasks[t]].shares_cores = 1;
        }
    }
    for (unsigned t = 0; t < nt; t++) {
        hwloc_bitmap_zero(p->slice[tasks[t]]);
        for (unsigned i = start[t]; i < start[t] + len[t]; i++) {
            hwloc_bitmap_set(p->slice[tasks[t]], units[i]);
            hwloc_bitmap_set(p->used, units[i]);
        }
        p->size[tasks[t]] = len[t];
    }
    free(dom);
    free(pkg);
    free(start);
    return fam;
}
