/* The cutting phase (lib/plan/cut.c) against an exhaustive oracle.
 *
 * Random synthetic domain vectors (1-6 domains of 1-9 cores, random
 * symmetric distances) and lines built from every corpus topology: the
 * chosen cut is never worse, by the objective, than any arrangement of the
 * same sizes (every place for the +1s, enumerated), than the consecutive
 * cut, or than the NUMA-aligned cut; when some arrangement of the same sizes
 * straddles no domain, neither does the chosen cut; slices are disjoint runs
 * of the line with the sizes asked for; the same input gives the same cut.
 * Plus the pinned examples. */
#include "private/plan.h"
#include "tap.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 160
#define MAXT 16

static unsigned rng_state = 12345u;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 8) % n;
}

typedef struct synth {
    unsigned dom[MAXN];
    unsigned pkg[MAXN];
    unsigned dist[8 * 8];
    ngi_cut_line line;
} synth;

/* Domains of @per_pkg each make a package (0 = no packages). */
static void make_line(synth *y, const unsigned *sizes, unsigned nd, unsigned per_pkg)
{
    unsigned n = 0;
    for (unsigned d = 0; d < nd; d++)
        for (unsigned k = 0; k < sizes[d]; k++) {
            y->pkg[n] = per_pkg ? d / per_pkg : 0;
            y->dom[n++] = d;
        }
    y->line.n = n;
    y->line.dom = y->dom;
    y->line.ndom = nd;
    y->line.dist = y->dist;
    y->line.pkg = per_pkg ? y->pkg : NULL;
    y->line.grp = NULL;   /* no CPU groups below the domains here */
}

/* Best score over every arrangement of e +1s among nt slices of s. */
static int oracle_same_sizes(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                             ngi_cut_score *best, unsigned *min_straddles)
{
    unsigned start[MAXT], len[MAXT];
    int found = 0;
    *min_straddles = ~0u;
    for (unsigned mask = 0; mask < (1u << nt); mask++) {
        if ((unsigned)__builtin_popcount(mask) != e)
            continue;
        unsigned pos = 0;
        for (unsigned t = 0; t < nt; t++) {
            start[t] = pos;
            len[t] = s + ((mask >> t) & 1);
            pos += len[t];
        }
        ngi_cut_score sc;
        ngi_cut_score_of(line, nt, start, len, &sc);
        if (sc.straddles < *min_straddles)
            *min_straddles = sc.straddles;
        if (!found || ngi_cut_better(&sc, best))
            *best = sc;
        found = 1;
    }
    return found;
}

static int valid_cut(const ngi_cut_line *line, unsigned nt, const unsigned *start,
                     const unsigned *len, unsigned hi, char *why, size_t wl)
{
    unsigned char used[MAXN * 8] = {0};
    for (unsigned t = 0; t < nt; t++) {
        if (len[t] == 0 || start[t] + len[t] > line->n || len[t] > hi) {
            snprintf(why, wl, "slice %u: [%u,+%u) out of the line of %u (hi %u)", t, start[t],
                     len[t], line->n, hi);
            return 0;
        }
        for (unsigned i = start[t]; i < start[t] + len[t]; i++) {
            if (used[i]) {
                snprintf(why, wl, "slice %u overlaps at %u", t, i);
                return 0;
            }
            used[i] = 1;
        }
    }
    return 1;
}

/* One instance: the chosen cut against the oracle. */
static int check_instance(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                          unsigned lo, unsigned hi, char *why, size_t wl)
{
    unsigned start[MAXT], len[MAXT], start2[MAXT], len2[MAXT];
    ngi_cut_score chosen, again, best, other;
    int fam = ngi_cut_choose(line, nt, s, e, lo, hi, start, len, &chosen);
    if (fam < 0) {
        snprintf(why, wl, "no cut");
        return 0;
    }
    if (!valid_cut(line, nt, start, len, hi > s + 1 ? hi : s + 1, why, wl))
        return 0;
    if (fam != NGI_CUT_ALIGNED && fam != NGI_CUT_PACKAGE) {
        unsigned plus = 0;
        for (unsigned t = 0; t < nt; t++) {
            if (len[t] != s && len[t] != s + 1) {
                snprintf(why, wl, "family %d: slice of %u, sizes are %u/%u", fam, len[t], s, s + 1);
                return 0;
            }
            plus += len[t] == s + 1;
        }
        if (plus != e) {
            snprintf(why, wl, "family %d: %u +1s, want %u", fam, plus, e);
            return 0;
        }
    }
    unsigned min_str;
    oracle_same_sizes(line, nt, s, e, &best, &min_str);
    if (ngi_cut_better(&best, &chosen)) {
        snprintf(why, wl, "an arrangement of the same sizes scores better (eff %.3f/%.3f, "
                 "straddles %u/%u)", best.min_eff, chosen.min_eff, best.straddles, chosen.straddles);
        return 0;
    }
    if (min_str == 0 && chosen.straddles != 0) {
        snprintf(why, wl, "%u straddles where an arrangement of the same sizes has none",
                 chosen.straddles);
        return 0;
    }
    for (int f = NGI_CUT_CONSECUTIVE; f <= NGI_CUT_PACKAGE; f++) {
        if (ngi_cut_family(line, f, nt, s, e, lo, hi, start2, len2) < 0)
            continue;
        ngi_cut_score_of(line, nt, start2, len2, &other);
        if (ngi_cut_better(&other, &chosen)) {
            snprintf(why, wl, "family %d scores better than the chosen %d", f, fam);
            return 0;
        }
    }
    if (ngi_cut_choose(line, nt, s, e, lo, hi, start2, len2, &again) != fam ||
        memcmp(start, start2, nt * sizeof *start) || memcmp(len, len2, nt * sizeof *len)) {
        snprintf(why, wl, "same input, different cut");
        return 0;
    }
    return 1;
}

static void random_instances(void)
{
    char why[256] = "";
    unsigned cases = 0;
    int good = 1;
    for (unsigned iter = 0; iter < 3000 && good; iter++) {
        synth y;
        unsigned nd = 1 + rnd(6), sizes[8], per_pkg = rnd(4);
        for (unsigned d = 0; d < nd; d++)
            sizes[d] = 1 + rnd(9);
        for (unsigned a = 0; a < nd; a++)
            for (unsigned b = a; b < nd; b++) {
                unsigned v = a == b ? 10 : 11 + rnd(30);
                y.dist[a * nd + b] = y.dist[b * nd + a] = v;
            }
        make_line(&y, sizes, nd, per_pkg);
        unsigned n = y.line.n;
        unsigned nt = 1 + rnd(n < 12 ? n : 12);
        /* Whole line (no -c), then a fixed size (-c) that fits. */
        unsigned s = n / nt, e = n % nt;
        good = check_instance(&y.line, nt, s, e, 1, n, why, sizeof why);
        cases++;
        if (good && s > 1) {
            unsigned c = 1 + rnd(s);
            good = check_instance(&y.line, nt, c, 0, c, c, why, sizeof why);
            cases++;
        }
        if (!good)
            tap_diag("instance %u: %u domains, %u cores, %u tasks: %s", iter, nd, n, nt, why);
    }
    ok(good, "random domain vectors: optimal within the families, never worse than "
             "consecutive, no avoidable straddle (%u instances)", cases);
}

static unsigned slice_doms(const ngi_cut_line *line, unsigned a, unsigned len)
{
    return line->dom[a] == line->dom[a + len - 1] ? 1 : 2;
}

static void pinned_examples(void)
{
    synth y;
    unsigned start[MAXT], len[MAXT];
    ngi_cut_score sc;
    /* 2 sockets x 2 nodes of 7 cores, 8 tasks: 3/4 sizes, none straddles. */
    unsigned four7[4] = {7, 7, 7, 7};
    unsigned d4[16] = {10, 12, 21, 21, 12, 10, 21, 21, 21, 21, 10, 12, 21, 21, 12, 10};
    memcpy(y.dist, d4, sizeof d4);
    make_line(&y, four7, 4, 2);
    ngi_cut_choose(&y.line, 8, 3, 4, 1, 28, start, len, &sc);
    unsigned str = 0;
    for (unsigned t = 0; t < 8; t++)
        str += slice_doms(&y.line, start[t], len[t]) > 1;
    ok(sc.straddles == 0 && str == 0 && sc.min_raw == 3 && sc.idle == 0,
       "4 nodes x 7 cores, 8 tasks: sizes 3/4 on node boundaries (straddles %u)", sc.straddles);
    unsigned cs[8], cl[8];
    ngi_cut_family(&y.line, NGI_CUT_CONSECUTIVE, 8, 3, 4, 1, 28, cs, cl);
    ngi_cut_score cons;
    ngi_cut_score_of(&y.line, 8, cs, cl, &cons);
    ok(cons.straddles == 3, "... where the consecutive cut straddles 3 times (got %u)", cons.straddles);
    /* 7 + 3 cores over a socket boundary, 4 tasks: 3,2,2,3 cuts at the boundary. */
    unsigned sock[2] = {7, 3};
    unsigned d2[4] = {10, 21, 21, 10};
    memcpy(y.dist, d2, sizeof d2);
    make_line(&y, sock, 2, 1);
    ngi_cut_choose(&y.line, 4, 2, 2, 1, 10, start, len, &sc);
    ok(sc.straddles == 0 && len[3] == 3 && start[3] == 7, "7+3 cores, 4 tasks: last task = the 3 "
       "cores past the boundary (len %u at %u)", len[3], start[3]);
    /* 12 + 6 cores, 4 tasks: no arrangement of 5,5,4,4 avoids a straddle;
     * the aligned cut 4/4/4/6 wins on effective cores. */
    unsigned g4[2] = {12, 6};
    make_line(&y, g4, 2, 1);
    int fam = ngi_cut_choose(&y.line, 4, 4, 2, 1, 18, start, len, &sc);
    ok((fam == NGI_CUT_ALIGNED || fam == NGI_CUT_PACKAGE) && len[0] == 4 && len[1] == 4 && len[2] == 4 && len[3] == 6 &&
       sc.straddles == 0, "12+6 cores, 4 tasks: aligned 4/4/4/6 (family %d, %u/%u/%u/%u)", fam,
       len[0], len[1], len[2], len[3]);
    /* -c as a size: the aligned family keeps exact sizes. */
    fam = ngi_cut_choose(&y.line, 4, 3, 0, 3, 3, start, len, &sc);
    ok(sc.min_raw == 3 && sc.straddles == 0 && len[0] == 3 && len[3] == 3,
       "12+6 cores, 4 tasks of exactly 3: 3/3/3 | 3, nothing larger (family %d)", fam);
    /* 2 sockets x 4 nodes of 16 (12 within a socket, 32 across), 5 tasks:
     * sizes 26/25 force a task across sockets; the package cut gives 22,
     * 21, 21 on one socket and 32, 32 on the other, none across. */
    unsigned epyc[8] = {16, 16, 16, 16, 16, 16, 16, 16};
    unsigned de[64];
    for (unsigned a = 0; a < 8; a++)
        for (unsigned b = 0; b < 8; b++)
            de[a * 8 + b] = a == b ? 10 : (a / 4 == b / 4 ? 12 : 32);
    memcpy(y.dist, de, sizeof de);
    make_line(&y, epyc, 8, 4);
    fam = ngi_cut_choose(&y.line, 5, 25, 3, 1, 128, start, len, &sc);
    int across = 0;
    for (unsigned t = 0; t < 5; t++)
        across |= start[t] < 64 && start[t] + len[t] > 64;
    unsigned big = 0;
    for (unsigned t = 0; t < 5; t++)
        big += len[t] == 32;
    ok(fam == NGI_CUT_PACKAGE && !across && big == 2 && sc.min_raw == 21 && sc.idle == 0,
       "2 sockets x 4 nodes of 16, 5 tasks: 22, 21, 21 | 32, 32, none across sockets (family %d: "
       "%u/%u/%u/%u/%u)", fam, len[0], len[1], len[2], len[3], len[4]);
    memcpy(y.dist, d2, sizeof d2);
    /* Effective cores: a core 21 away counts 10/21. */
    make_line(&y, g4, 2, 1);
    double eff = ngi_cut_eff(&y.line, 10, 4);
    ok(eff > 2 + 20.0 / 21 - 1e-9 && eff < 2 + 20.0 / 21 + 1e-9,
       "effective cores of 2 local + 2 at distance 21 = 2.952 (got %.3f)", eff);
}

/* Lines of real machines: each corpus topology's domains, all its cores. */
static void corpus_lines(void)
{
    DIR *dir = opendir("tests/topologies");
    if (!ok(dir != NULL, "open tests/topologies (run from the repository root)"))
        return;
    struct dirent *de;
    unsigned topos = 0, cases = 0;
    int good = 1;
    char why[256] = "";
    while ((de = readdir(dir)) && good) {
        if (!strstr(de->d_name, ".xml"))
            continue;
        char path[512], err[256];
        snprintf(path, sizeof path, "tests/topologies/%s", de->d_name);
        ng_topology_options o = {.xml_path = path};
        ng_topology *topo = NULL;
        if (ng_topology_load(&topo, &o, err, sizeof err) < 0)
            continue;
        ng_plan_request req = {.ntasks = 1};
        ngi_planner p = {.topo = topo, .req = &req};
        if (ngi_plan_build_domains(&p, err, sizeof err) == 0) {
            unsigned *dom = malloc(p.n_units * sizeof *dom), *pkg = malloc(p.n_units * sizeof *pkg);
            for (unsigned u = 0; u < p.n_units; u++) {
                dom[u] = (unsigned)p.units[u].dom;
                pkg[u] = (unsigned)(p.units[u].pkg + 1);
            }
            ngi_cut_line line = {.n = p.n_units, .dom = dom, .ndom = p.n_doms, .dist = p.dist, .pkg = pkg};
            for (unsigned nt = 1; nt <= 2 * p.n_doms + 2 && nt <= 12 && nt <= p.n_units && good; nt++) {
                good = check_instance(&line, nt, p.n_units / nt, p.n_units % nt, 1, p.n_units,
                                      why, sizeof why);
                cases++;
                if (!good)
                    tap_diag("%s, %u tasks: %s", de->d_name, nt, why);
            }
            free(dom);
            free(pkg);
            topos++;
        }
        ngi_plan_free_domains(&p);
        ng_topology_free(topo);
    }
    closedir(dir);
    ok(good && topos >= 39, "corpus lines (%u topologies, %u cuts): optimal within the families", topos,
       cases);
}

int main(void)
{
    random_instances();
    pinned_examples();
    corpus_lines();
    return tap_done();
}
