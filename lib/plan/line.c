/* A line of cores and what a cut of it scores (docs/planner.md, "the
 * objective"), plus the two cuts that keep the even sizes: consecutive (the
 * +1s first) and moved (the +1s where the cut straddles and splits least).
 *
 * A line is a sequence of units (cores) in domain-major order: each
 * domain's units form one run, each CPU group's (an L3, a memoryless die
 * inside a domain) a run inside it. A cut gives every task one run of the
 * line. Its score, compared in this order:
 *   1. the smallest task's effective cores: a core outside the task's main
 *      domain (the one holding most of its cores) counts 10/distance;
 *   2. the smallest task's raw size;
 *   then the tie-breaks:
 *   3. fewest idle units;
 *   4. fewest straddling tasks (tasks over more than one domain);
 *   5. fewest CPU groups split (a task over two groups or more counts
 *      each group it holds only in part).
 */
#include "private/plan.h"

#include <stdlib.h>

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

int ngi_cut_straddles(const ngi_cut_line *line, unsigned a, unsigned len)
{
    return len > 0 && line->dom[a] != line->dom[a + len - 1];
}

/* A run over two CPU groups or more: the groups at its ends it holds only
 * in part (0, 1 or 2; a run inside one group, or over whole groups, 0). */
unsigned ngi_cut_spans(const ngi_cut_line *line, unsigned a, unsigned len)
{
    unsigned e = a + len;
    if (!line->grp || len < 2 || line->grp[a] == line->grp[e - 1])
        return 0;
    return (unsigned)(a > 0 && line->grp[a - 1] == line->grp[a]) +
           (unsigned)(e < line->n && line->grp[e] == line->grp[e - 1]);
}

void ngi_cut_score_of(const ngi_cut_line *line, unsigned nt, const unsigned *start,
                     const unsigned *len, ngi_cut_score *out)
{
    unsigned owned = 0;
    out->min_eff = 1e300;
    out->min_raw = ~0u;
    out->straddles = 0;
    out->spans = 0;
    for (unsigned t = 0; t < nt; t++) {
        double e = ngi_cut_eff(line, start[t], len[t]);
        if (e < out->min_eff)
            out->min_eff = e;
        if (len[t] < out->min_raw)
            out->min_raw = len[t];
        out->straddles += (unsigned)ngi_cut_straddles(line, start[t], len[t]);
        out->spans += ngi_cut_spans(line, start[t], len[t]);
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
    if (a->idle != b->idle)
        return a->idle < b->idle;
    if (a->straddles != b->straddles)
        return a->straddles < b->straddles;
    return a->spans < b->spans;
}

/* ---- the consecutive cut: the +1s first -------------------------------- */

void ngi_cut_consecutive(unsigned nt, unsigned s, unsigned e, unsigned *start, unsigned *len)
{
    unsigned pos = 0;
    for (unsigned t = 0; t < nt; t++) {
        start[t] = pos;
        len[t] = s + (t < e);
        pos += len[t];
    }
}

/* ---- the moved cut: same sizes, +1s where they span least --------------- */

/* The moved cut's tables over (tasks placed i, +1s used j); the next run
 * starts at i*s + j. */
typedef struct dp {
    unsigned w;                /* e + 1 */
    double *f;                 /* best smallest effective value */
    unsigned long long *g;     /* fewest (straddles, spans) reaching it */
    unsigned char *pick;       /* 1: task i-1 took a +1 */
} dp;

/* Straddles in the high half, spans in the low: compared as a pair. */
static unsigned long long run_cost(const ngi_cut_line *line, unsigned a, unsigned len)
{
    return ((unsigned long long)ngi_cut_straddles(line, a, len) << 32) | ngi_cut_spans(line, a, len);
}

static void dp_best_eff(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e, dp *t)
{
    unsigned w = t->w;
    t->f[0] = 1e300;
    for (unsigned i = 1; i <= nt; i++)
        for (unsigned j = 0; j <= e && j <= i; j++)
            for (unsigned plus = 0; plus <= 1; plus++) {
                if (plus > j || i - 1 < j - plus)
                    continue;
                double prev = t->f[(i - 1) * w + (j - plus)];
                if (prev < 0)
                    continue;
                double v = ngi_cut_eff(line, (i - 1) * s + (j - plus), s + plus);
                if (v > prev)
                    v = prev;
                if (v > t->f[i * w + j])
                    t->f[i * w + j] = v;
            }
}

static void dp_least_cost(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                          double best, dp *t)
{
    unsigned w = t->w;
    t->g[0] = 0;
    for (unsigned i = 1; i <= nt; i++)
        for (unsigned j = 0; j <= e && j <= i; j++)
            for (unsigned plus = 0; plus <= 1; plus++) {
                if (plus > j || i - 1 < j - plus)
                    continue;
                unsigned long long prev = t->g[(i - 1) * w + (j - plus)];
                unsigned a = (i - 1) * s + (j - plus);
                if (prev == ~0ull || ngi_cut_eff(line, a, s + plus) < best - EPS)
                    continue;
                unsigned long long v = prev + run_cost(line, a, s + plus);
                /* Ties keep plus = 1 (tried second) only when strictly better,
                 * so the +1s stay as early as the objective allows. */
                if (v < t->g[i * w + j]) {
                    t->g[i * w + j] = v;
                    t->pick[i * w + j] = (unsigned char)plus;
                }
            }
}

/* Two exact dynamic programs: first the best smallest-effective value, then
 * the fewest straddles, then split groups, among arrangements reaching it. */
int ngi_cut_moved(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                  unsigned *start, unsigned *len)
{
    dp t = {.w = e + 1};
    size_t cells = (size_t)(nt + 1) * t.w;
    /* Far beyond any node's core count (65536 tasks): not worth the table. */
    if (cells > (size_t)1 << 22 || (unsigned long)nt * s + e > line->n)
        return -1;
    t.f = malloc(cells * sizeof *t.f);
    t.g = malloc(cells * sizeof *t.g);
    t.pick = calloc(cells, 1);
    int rc = t.f && t.g && t.pick ? 0 : -1;
    for (size_t k = 0; rc == 0 && k < cells; k++) {
        t.f[k] = -1;
        t.g[k] = ~0ull;
    }
    if (rc == 0) {
        dp_best_eff(line, nt, s, e, &t);
        dp_least_cost(line, nt, s, e, t.f[nt * t.w + e], &t);
        rc = t.g[nt * t.w + e] == ~0ull ? -1 : 0;
    }
    for (unsigned i = nt, j = e; rc == 0 && i > 0; i--) {
        unsigned plus = t.pick[i * t.w + j];
        j -= plus;
        start[i - 1] = (i - 1) * s + j;
        len[i - 1] = s + plus;
    }
    free(t.f);
    free(t.g);
    free(t.pick);
    return rc;
}
