/* make plan-quality's oracles: exact dynamic programs, independent of the
 * planner's code, that say whether a cut at least as good as a plan's
 * (smallest effective slice, then smallest slice) leaves fewer cores idle,
 * keeps every task inside one group, or does so with the plan's own sizes.
 * Lines are in hwloc order of the allocated cores; groups are runs on it. */
#include "quality.h"

#include <stdlib.h>
#include <string.h>

#define INF (~0u)
#define EPS 1e-9

typedef struct qcore {
    hwloc_bitmap_t pus;
    int node, dom, pkg;        /* CPU-bearing node (-1 none), memory node, package */
    const void *root, *l3;     /* memoryless root (node < 0), shared L3 */
    unsigned pos;              /* hwloc order */
} qcore;

static int node_of(const ng_topology *topo, hwloc_const_bitmap_t pus)
{
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
        const ng_numa_info *ni = ng_topology_numa(topo, i);
        if (ni->has_cpus && hwloc_bitmap_intersects(ni->cpus, pus))
            return (int)i;
    }
    return -1;
}

/* A CPU-bearing node with memory (0 everywhere means unknown: all do). */
static int has_memory(const ng_topology *topo, unsigned i)
{
    const ng_numa_info *n = ng_topology_numa(topo, i);
    if (!n->has_cpus)
        return 0;
    if (n->memory_bytes)
        return 1;
    for (unsigned k = 0; k < ng_topology_numa_count(topo); k++)
        if (ng_topology_numa(topo, k)->has_cpus && ng_topology_numa(topo, k)->memory_bytes)
            return 0;
    return 1;
}

static int pkg_of_node(hwloc_topology_t hw, const ng_topology *topo, unsigned i)
{
    hwloc_obj_t o = hwloc_get_numanode_obj_by_os_index(hw, ng_topology_numa(topo, i)->os_index);
    o = o ? hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, o) : NULL;
    return o ? (int)o->logical_index : -1;
}

/* The L3 above @o when it holds several cores, else NULL. */
static hwloc_obj_t shared_l3(hwloc_topology_t hw, hwloc_obj_t o)
{
    for (; o; o = o->parent)
        if (o->type == HWLOC_OBJ_L3CACHE)
            return hwloc_get_nbobjs_inside_cpuset_by_type(hw, o->cpuset, HWLOC_OBJ_CORE) > 1 ? o
                                                                                            : NULL;
    return NULL;
}

/* The largest object above @o holding no CPU of a CPU-bearing node. */
static hwloc_obj_t memless_root(hwloc_obj_t o, hwloc_const_bitmap_t with_node)
{
    while (o->parent && o->parent->cpuset && !hwloc_bitmap_intersects(o->parent->cpuset, with_node))
        o = o->parent;
    return o;
}

static unsigned collect(const ng_topology *topo, hwloc_const_bitmap_t allowed, qcore *c)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    int nc = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    hwloc_bitmap_t with_node = hwloc_bitmap_alloc();
    unsigned n = 0;
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++)
        if (ng_topology_numa(topo, i)->has_cpus)
            hwloc_bitmap_or(with_node, with_node, ng_topology_numa(topo, i)->cpus);
    for (int k = 0; k < nc; k++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)k);
        if (!hwloc_bitmap_intersects(core->cpuset, allowed))
            continue;
        hwloc_obj_t pk = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, core);
        c[n] = (qcore){.pus = hwloc_bitmap_alloc(), .pos = n, .pkg = pk ? (int)pk->logical_index : -1};
        hwloc_bitmap_and(c[n].pus, core->cpuset, allowed);
        c[n].node = node_of(topo, c[n].pus);
        c[n].l3 = shared_l3(hw, core);
        c[n].root = c[n].node < 0 ? memless_root(core, with_node) : NULL;
        c[n].dom = c[n].node >= 0 && has_memory(topo, (unsigned)c[n].node) ? c[n].node : -1;
        n++;
    }
    hwloc_bitmap_free(with_node);
    return n;
}

/* Distance from the memoryless group of core @g (its own node, else the
 * NUMA objects hwloc places over its CPUs) to node j; 20 in the same
 * package, 30 across when nothing is known (docs/planner.md, rule 2). */
static unsigned group_dist(const ng_topology *topo, const qcore *c, unsigned n, unsigned g, unsigned j)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned best = ~0u, jos = ng_topology_numa(topo, j)->os_index;
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
        hwloc_obj_t o = hwloc_get_numanode_obj_by_os_index(hw, ng_topology_numa(topo, i)->os_index);
        int src = c[g].node >= 0 ? (int)i == c[g].node : 0;
        for (unsigned k = 0; !src && c[g].node < 0 && o && o->cpuset && k < n; k++)
            src = c[k].root == c[g].root && hwloc_bitmap_intersects(o->cpuset, c[k].pus);
        unsigned d = src ? (i == j ? 10 : ng_topology_distance(topo, ng_topology_numa(topo, i)->os_index, jos)) : ~0u;
        if (d >= 10 && d < best)
            best = d;
    }
    return best != ~0u ? best : pkg_of_node(hw, topo, j) == c[g].pkg ? 20 : 30;
}

/* Memoryless groups attach, in hwloc order, to the nearest node with
 * memory, ties to the one with the fewest cores so far, then the lowest. */
static void attach(const ng_topology *topo, qcore *c, unsigned n)
{
    unsigned nn = ng_topology_numa_count(topo), *held = calloc(nn + 1, sizeof *held);
    for (unsigned k = 0; k < n; k++)
        if (c[k].dom >= 0)
            held[c[k].dom]++;
    for (unsigned g = 0; g < n; g++) {
        if (c[g].dom >= 0)
            continue;
        int best = -1;
        unsigned bd = ~0u, members = 0;
        for (unsigned j = 0; j < nn; j++) {
            if (!has_memory(topo, j))
                continue;
            unsigned d = group_dist(topo, c, n, g, j);
            if (best < 0 || d < bd || (d == bd && held[j] < held[best])) {
                best = (int)j;
                bd = d;
            }
        }
        for (unsigned k = g; k < n; k++)
            if (c[k].dom < 0 && c[k].node == c[g].node && c[k].root == c[g].root) {
                c[k].dom = best;
                members++;
            }
        if (best >= 0)
            held[best] += members;
    }
    free(held);
}

static void distances(const ng_topology *topo, qline *l)
{
    for (unsigned a = 0; a < l->nn; a++)
        for (unsigned b = 0; b < l->nn; b++) {
            unsigned d = a == b ? 10 : ng_topology_distance(topo, ng_topology_numa(topo, a)->os_index,
                                                             ng_topology_numa(topo, b)->os_index);
            l->dist[a * l->nn + b] = d >= 10 ? d : 20;
        }
}

/* The line: domains by their first core, own cores then attached ones;
 * groups a new number wherever the domain, node, root or L3 changes. */
static void lay_out(qline *l, qcore *c, unsigned n, const void **l3)
{
    unsigned m = 0;
    for (unsigned k = 0; k < n; k++) {
        int d = c[k].dom, first = 1;
        for (unsigned j = 0; j < k; j++)
            first &= c[j].dom != d;
        for (int pass = 0; first && pass < 2; pass++)
            for (unsigned j = k; j < n; j++)
                if (c[j].dom == d && (c[j].node == d) == (pass == 0)) {
                    l->pus[m] = c[j].pus;
                    l->node[m] = d;
                    l3[m] = c[j].l3;
                    l->l3obj[m] = c[j].l3;
                    l->grp[m] = m && (d != l->node[m - 1] || c[j].node != c[l->src[m - 1]].node ||
                                      c[j].root != c[l->src[m - 1]].root || c[j].l3 != l3[m - 1])
                                    ? l->grp[m - 1] + 1 : m ? l->grp[m - 1] : 0;
                    l->src[m++] = j;
                }
    }
    l->n = m;
    l->ngrp = m ? l->grp[m - 1] + 1 : 0;
}

int qline_build(const ng_topology *topo, hwloc_const_bitmap_t allowed, qline *l)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    int nc = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    size_t cap = nc > 0 ? (size_t)nc : 1;
    qcore *c = calloc(cap, sizeof *c);
    const void **l3 = calloc(cap, sizeof *l3);
    memset(l, 0, sizeof *l);
    l->nn = ng_topology_numa_count(topo);
    l->pus = calloc(cap, sizeof *l->pus);
    l->node = calloc(cap, sizeof *l->node);
    l->grp = calloc(cap, sizeof *l->grp);
    l->src = calloc(cap, sizeof *l->src);
    l->l3obj = calloc(cap, sizeof *l->l3obj);
    l->dist = calloc((size_t)l->nn * l->nn + 1, sizeof *l->dist);
    unsigned n = collect(topo, allowed, c);
    attach(topo, c, n);
    lay_out(l, c, n, l3);
    distances(topo, l);
    free(c);
    free(l3);
    return 0;
}

void qline_free(qline *l)
{
    for (unsigned i = 0; i < l->n; i++)
        hwloc_bitmap_free(l->pus[i]);
    free(l->pus);
    free(l->node);
    free(l->grp);
    free(l->src);
    free(l->l3obj);
    free(l->dist);
}

double qline_eff(const qline *l, const unsigned *cnt, unsigned memless)
{
    unsigned main = 0;
    for (unsigned i = 0; i < l->nn; i++)
        if (cnt[i] > cnt[main])
            main = i;
    double eff = memless;
    for (unsigned i = 0; i < l->nn; i++)
        eff += cnt[i] * 10.0 / l->dist[main * l->nn + i];
    return eff;
}

/* ---- runs of groups ---------------------------------------------------- */

typedef struct grun {
    unsigned a, n;
} grun;

static unsigned group_runs(const qline *l, const unsigned *grp, unsigned ngrp, grun *r)
{
    for (unsigned g = 0; g < ngrp; g++)
        r[g].n = 0;
    for (unsigned i = 0; i < l->n; i++) {
        if (!r[grp[i]].n)
            r[grp[i]].a = i;
        r[grp[i]].n++;
    }
    return ngrp;
}

/* Effective cores of the groups i..j (for every j, incrementally). */
static void union_effs(const qline *l, const grun *r, unsigned ngrp, unsigned i, double *out,
                       unsigned *cnt)
{
    unsigned memless = 0;
    memset(cnt, 0, l->nn * sizeof *cnt);
    for (unsigned j = i; j < ngrp; j++) {
        for (unsigned k = r[j].a; k < r[j].a + r[j].n; k++) {
            if (l->node[k] >= 0)
                cnt[l->node[k]]++;
            else
                memless++;
        }
        out[j] = qline_eff(l, cnt, memless);
    }
}

static void relax(unsigned *cell, unsigned v)
{
    if (v < *cell)
        *cell = v;
}

/* Cores a task inside one group needs: a group lies in one node, so its
 * effective cores are its cores. */
static unsigned inside_need(unsigned raw, double eff)
{
    unsigned e = (unsigned)eff;
    if ((double)e + EPS < eff)
        e++;
    return e > raw ? e : raw;
}

/* Costs: idle cores, then tasks over two domains (the tie-breaks that
 * rank before groups spanned). */
#define COST(idle, str) (((unsigned long long)(idle) << 24) | (str))
#define CINF (~0ull)

static void crelax(unsigned long long *cell, unsigned long long v)
{
    if (v < *cell)
        *cell = v;
}

/* Groups i..j on the line: one domain or more? */
static unsigned straddle(const qline *l, const grun *r, unsigned i, unsigned j)
{
    return l->node[r[i].a] != l->node[r[j].a + r[j].n - 1];
}

unsigned long long oracle_aligned(const qline *l, const unsigned *grp, unsigned ngrp, unsigned nt,
                                  unsigned raw, double eff)
{
    grun *r = malloc((ngrp + 1) * sizeof *r);
    double *ue = malloc((ngrp + 1) * sizeof *ue);
    unsigned long long *dp = malloc((size_t)(ngrp + 1) * (nt + 1) * sizeof *dp);
    unsigned *cnt = malloc((l->nn + 1) * sizeof *cnt);
    unsigned w = nt + 1, need = inside_need(raw, eff);
    group_runs(l, grp, ngrp, r);
    for (size_t k = 0; k < (size_t)(ngrp + 1) * w; k++)
        dp[k] = CINF;
    dp[0] = 0;
    for (unsigned i = 0; i < ngrp; i++) {
        union_effs(l, r, ngrp, i, ue, cnt);
        for (unsigned t = 0; t <= nt; t++) {
            unsigned long long v = dp[i * w + t];
            if (v == CINF)
                continue;
            crelax(&dp[(i + 1) * w + t], v + COST(r[i].n, 0));   /* group idle */
            for (unsigned k = 1; t + k <= nt && k * need <= r[i].n; k++)
                crelax(&dp[(i + 1) * w + t + k], v);             /* k tasks inside it */
            for (unsigned j = i + 1; j < ngrp && t < nt; j++)    /* one task, whole groups */
                if (r[j].a + r[j].n - r[i].a >= raw && ue[j] >= eff - EPS)
                    crelax(&dp[(j + 1) * w + t + 1], v + straddle(l, r, i, j));
        }
    }
    unsigned long long best = dp[ngrp * w + nt];
    free(r);
    free(ue);
    free(dp);
    free(cnt);
    return best;
}

static void sizes_step(const qline *l, const grun *r, const double *ue, unsigned ngrp, unsigned i,
                       unsigned s, unsigned a, unsigned b, double eff, unsigned long long *dp)
{
    size_t wa = a + 1, wb = b + 1;
    for (unsigned x = 0; x <= a; x++)
        for (unsigned y = 0; y <= b; y++) {
            unsigned long long v = dp[(i * wa + x) * wb + y];
            if (v == CINF)
                continue;
            /* u tasks of s and q of s+1 inside group i, the rest idle */
            for (unsigned u = 0; x + u <= a && u * s <= r[i].n; u++)
                for (unsigned q = 0; y + q <= b && u * s + q * (s + 1) <= r[i].n; q++)
                    crelax(&dp[((i + 1) * wa + x + u) * wb + y + q],
                           v + COST(r[i].n - u * s - q * (s + 1), 0));
            for (unsigned j = i + 1, len = r[i].n; j < ngrp; j++) {
                len += r[j].n;
                if (len > s + 1)
                    break;
                if (ue[j] < eff - EPS)
                    continue;
                if (len == s && x < a)
                    crelax(&dp[((j + 1) * wa + x + 1) * wb + y], v + straddle(l, r, i, j));
                if (len == s + 1 && y < b)
                    crelax(&dp[((j + 1) * wa + x) * wb + y + 1], v + straddle(l, r, i, j));
            }
        }
}

unsigned long long oracle_aligned_sizes(const qline *l, const unsigned *grp, unsigned ngrp,
                                        unsigned s, unsigned a, unsigned b, double eff)
{
    grun *r = malloc((ngrp + 1) * sizeof *r);
    double *ue = malloc((ngrp + 1) * sizeof *ue);
    size_t cells = (size_t)(ngrp + 1) * (a + 1) * (b + 1);
    unsigned long long *dp = malloc(cells * sizeof *dp);
    unsigned *cnt = malloc((l->nn + 1) * sizeof *cnt);
    group_runs(l, grp, ngrp, r);
    for (size_t k = 0; k < cells; k++)
        dp[k] = CINF;
    dp[0] = 0;
    for (unsigned i = 0; i < ngrp; i++) {
        union_effs(l, r, ngrp, i, ue, cnt);
        sizes_step(l, r, ue, ngrp, i, s, a, b, eff, dp);
    }
    unsigned long long best = dp[cells - 1];
    free(r);
    free(ue);
    free(dp);
    free(cnt);
    return best;
}

unsigned oracle_runs(const qline *l, unsigned nt, unsigned raw, double eff)
{
    unsigned w = nt + 1, n = l->n, memless;
    unsigned *dp = malloc((size_t)(n + 1) * w * sizeof *dp), *cnt = malloc((l->nn + 1) * sizeof *cnt);
    for (size_t k = 0; k < (size_t)(n + 1) * w; k++)
        dp[k] = INF;
    dp[0] = 0;
    for (unsigned i = 0; i < n; i++) {
        for (unsigned t = 0; t <= nt; t++)
            if (dp[i * w + t] != INF)
                relax(&dp[(i + 1) * w + t], dp[i * w + t] + 1); /* core i idle */
        memset(cnt, 0, l->nn * sizeof *cnt);
        memless = 0;
        for (unsigned j = i + 1; j <= n; j++) {                  /* one task: [i, j) */
            if (l->node[j - 1] >= 0)
                cnt[l->node[j - 1]]++;
            else
                memless++;
            if (j - i < raw || qline_eff(l, cnt, memless) < eff - EPS)
                continue;
            for (unsigned t = 0; t < nt; t++)
                if (dp[i * w + t] != INF)
                    relax(&dp[j * w + t + 1], dp[i * w + t]);
        }
    }
    unsigned best = dp[n * w + nt];
    free(dp);
    free(cnt);
    return best;
}
