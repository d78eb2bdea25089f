/* make plan-quality: placement quality of the planner over the corpus.
 *
 *   quality DIR     every DIR/NAME.xml x job shapes x allocations; one line per
 *                   family with the totals below (tab-separated, for
 *                   bench/quality.sh, which runs this program built against
 *                   the current planner and against the previous release's).
 *   quality --time FILE NTASKS N [cpu]   median ng_plan_compute time in
 *                   microseconds (one GPU per task round robin; cpu: none)
 *
 * Shapes: CPU-only (1, 2, 3, 4, 6, 8, 12, 16 tasks and 1x/2x the NUMA
 * nodes), one GPU per task with 1-8 tasks per GPU, two GPUs per task, one
 * task on each GPU in turn; each shape also with -c as a size that fits
 * (the even share and half of it: the exact-fit family).
 * Allocations: the whole node, the first half of the cores, a window of
 * half the cores starting at a third, every other core, a busy node's
 * 3/8 to 3/4 of the cores.
 * Planner v4 measures: exact-fit -c plans giving a task other than -c,
 * GPU tasks below half the even share while allocated cores sit idle,
 * plans leaving cores idle and those with a warning naming the count, and
 * the figures outside plans with a widened GPU task.
 * Measures per plan (policy local): straddling tasks (CPUs on more than one
 * NUMA node), cross-socket straddles (more than one package), idle
 * allocated cores, GPU tasks with cores off their GPU's package (and how
 * many of those while the package had allocated cores left idle), and the
 * smallest effective slice (a core off the task's main node counts
 * 10/distance) as a share of the even share (cores / tasks); GPU tasks
 * over two packages; and, for CPU-only plans, against exact oracles
 * (bench/quality_oracle.c): tasks over two L3s where a cut aligned on L3s
 * with an equal or better objective exists, plans mixing CPU groups (node,
 * memoryless die, L3) where an aligned cut with the plan's own sizes
 * exists, idle allocated cores where a cut with an equal or better
 * objective leaves fewer idle.
 * Uses only the public API (lib/include/numaguard.h). */
#include "quality.h"
#include "../tests/unit/corpus.h"
#include "../tests/unit/plan/fair.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *cur_name = "";

typedef struct totals {
    unsigned long plans, tasks, straddles, cross_socket, idle, alloc_cores, gpu_tasks, off_socket,
        off_socket_free, gpu_two_pkgs, l3_tasks, l3_avoidable, mixed_plans, mixed_avoidable,
        idle_equal, gpu_l3_tasks, cpu_idle;
    /* planner v4 (issue 26): -c exact in exact-fit plans; GPU tasks below
     * half the even share while allocated cores sit idle; plans leaving
     * cores idle and those of them with a warning naming the count; GPU
     * tasks over two packages while their GPU's package had no idle core
     * left (pkg_short) */
    unsigned long c_plans, c_short, starved, idle_plans, idle_warned, pkg_short;
    /* plans where a GPU task is widened (docs/planner.md, rule 3: this
     * tree says which), and the straddles, cross-socket straddles, GPU
     * tasks off their socket and over two packages of all other plans */
    unsigned long r2_plans, straddles_x, cross_x, off_x, two_x, l3_x;
    /* planner v5 (issue 37), the defect families at 0: GPU tasks off their
     * GPU's package with more than the even share + 1 cores (wide_over)
     * or while that package held half their even share or more
     * (wide_half); remote GPU tasks whose main node keeps fewer unclaimed
     * allocated cores than a node as near their GPU (remote_crowded);
     * local GPU tasks over more nodes than their home and the largest
     * nodes need while a remote GPU task of the plan lies on one node
     * (scattered_local). */
    unsigned long wide_over, wide_half, remote_crowded, scattered_local;
    double eff_share_sum, eff_share_min;
} totals;

/* The -c of the current run (0: none). */
static unsigned cur_cpt;

static unsigned cores_in(hwloc_topology_t hw, hwloc_const_bitmap_t pus)
{
    unsigned n = 0;
    int ncores = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    for (int c = 0; c < ncores; c++)
        n += hwloc_bitmap_intersects(hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)c)->cpuset, pus);
    if (ncores <= 0)
        n = (unsigned)hwloc_bitmap_weight(pus);
    return n;
}

static unsigned packages_of(hwloc_topology_t hw, hwloc_const_bitmap_t pus, hwloc_bitmap_t out)
{
    unsigned n = 0;
    hwloc_bitmap_zero(out);
    int np = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PACKAGE);
    for (int i = 0; i < np; i++) {
        hwloc_obj_t pk = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PACKAGE, (unsigned)i);
        if (hwloc_bitmap_intersects(pk->cpuset, pus)) {
            hwloc_bitmap_or(out, out, pk->cpuset);
            n++;
        }
    }
    return n;
}

static double effective(const ng_topology *topo, hwloc_const_bitmap_t cpus, unsigned *nodes)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned nn = ng_topology_numa_count(topo), main = 0, cnt[512] = {0};
    hwloc_bitmap_t part = hwloc_bitmap_alloc();
    *nodes = 0;
    for (unsigned i = 0; i < nn && i < 512; i++) {
        const ng_numa_info *ni = ng_topology_numa(topo, i);
        if (!ni->has_cpus)
            continue;
        hwloc_bitmap_and(part, ni->cpus, cpus);
        cnt[i] = cores_in(hw, part);
        *nodes += cnt[i] > 0;
        if (cnt[i] > cnt[main])
            main = i;
    }
    /* CPUs of no CPU-bearing node (offline node, memoryless): local. */
    hwloc_bitmap_copy(part, cpus);
    for (unsigned i = 0; i < nn; i++)
        if (ng_topology_numa(topo, i)->has_cpus)
            hwloc_bitmap_andnot(part, part, ng_topology_numa(topo, i)->cpus);
    double eff = cores_in(hw, part);
    for (unsigned i = 0; i < nn && i < 512; i++) {
        unsigned d = i == main ? 10 : ng_topology_distance(topo, ng_topology_numa(topo, main)->os_index,
                                                          ng_topology_numa(topo, i)->os_index);
        eff += cnt[i] * 10.0 / (d >= 10 ? d : 20);
    }
    hwloc_bitmap_free(part);
    return eff;
}

static const char *list_of(hwloc_const_bitmap_t set)
{
    static char buf[1024];
    ng_list_format(set, buf, sizeof buf);
    return buf;
}

/* The cores of the line task @t owns: per domain counts, per line core. */
static unsigned owned(const qline *l, const ng_plan *plan, unsigned t, unsigned *per_node,
                      unsigned char *mine)
{
    hwloc_const_bitmap_t cpus = ng_plan_task(plan, t)->cpus;
    unsigned n = 0;
    memset(per_node, 0, l->nn * sizeof *per_node);
    for (unsigned i = 0; i < l->n; i++) {
        mine[i] = hwloc_bitmap_intersects(l->pus[i], cpus);
        n += mine[i];
        if (mine[i] && l->node[i] >= 0)
            per_node[l->node[i]]++;
    }
    return n;
}

/* Key indices: per line core the index of its key among the distinct
 * non-NULL keys (-1: none); their sizes. Returns how many. */
static unsigned key_index(const qline *l, const void *const *key, int *kid, unsigned *ksize)
{
    unsigned nk = 0;
    for (unsigned i = 0; i < l->n; i++) {
        kid[i] = -1;
        for (unsigned j = 0; key[i] && j < i && kid[i] < 0; j++)
            if (key[j] == key[i])
                kid[i] = kid[j];
        if (key[i] && kid[i] < 0)
            kid[i] = (int)nk++;
    }
    memset(ksize, 0, (nk + 1) * sizeof *ksize);
    for (unsigned i = 0; i < l->n; i++)
        if (kid[i] >= 0)
            ksize[kid[i]]++;
    return nk;
}

/* Over two keyed groups while owning one of them only in part. */
static int split_groups(const qline *l, const unsigned char *mine, const int *kid,
                        const unsigned *ksize, unsigned nk, unsigned *own)
{
    unsigned touched = 0, partial = 0;
    memset(own, 0, (nk + 1) * sizeof *own);
    for (unsigned i = 0; i < l->n; i++)
        if (mine[i] && kid[i] >= 0)
            own[kid[i]]++;
    for (unsigned k = 0; k < nk; k++) {
        touched += own[k] > 0;
        partial += own[k] > 0 && own[k] < ksize[k];
    }
    return touched > 1 && partial > 0;
}

/* The plan's sizes are s (a tasks) and s+1 (b tasks)? */
static int two_sizes(const unsigned *size, unsigned nt, unsigned *s, unsigned *a, unsigned *b)
{
    unsigned lo = ~0u;
    *a = *b = 0;
    for (unsigned t = 0; t < nt; t++)
        lo = size[t] < lo ? size[t] : lo;
    for (unsigned t = 0; t < nt; t++) {
        if (size[t] != lo && size[t] != lo + 1)
            return 0;
        *a += size[t] == lo;
        *b += size[t] == lo + 1;
    }
    *s = lo;
    return 1;
}

typedef struct qplan {
    unsigned nt, l3_split, mixing, *size;
    qscore sc;
} qplan;

/* The plan on the line: its score (the planner's terms, on its own
 * domains) and its tasks over two L3s / CPU groups. */
static void on_line(const qline *l, const ng_plan *plan, qplan *q)
{
    size_t n1 = l->n + 1;
    unsigned *per = calloc(l->nn + 1, sizeof *per), used = 0, *own = calloc(n1, sizeof *own);
    unsigned *l3size = calloc(n1, sizeof *l3size), *gsize = calloc(n1, sizeof *gsize);
    unsigned char *mine = calloc(n1, 1);
    int *l3id = calloc(n1, sizeof *l3id), *gid = calloc(n1, sizeof *gid);
    unsigned nl3 = key_index(l, l->l3obj, l3id, l3size);
    for (unsigned i = 0; i < l->n; i++)
        gid[i] = (int)l->grp[i];
    for (unsigned i = 0; i < l->n; i++)
        gsize[l->grp[i]]++;
    q->nt = ng_plan_task_count(plan);
    q->size = calloc(q->nt, sizeof *q->size);
    q->sc = (qscore){1e300, ~0u, 0, 0};
    for (unsigned t = 0; t < q->nt; t++) {
        q->size[t] = owned(l, plan, t, per, mine);
        used += q->size[t];
        double e = qline_eff(l, per, 0);
        q->sc.min_eff = e < q->sc.min_eff ? e : q->sc.min_eff;
        q->sc.min_raw = q->size[t] < q->sc.min_raw ? q->size[t] : q->sc.min_raw;
        q->l3_split += split_groups(l, mine, l3id, l3size, nl3, own);
        unsigned doms = 0;
        for (unsigned d = 0; d < l->nn; d++)
            doms += per[d] > 0;
        q->sc.straddles += doms > 1;
        q->mixing += split_groups(l, mine, gid, gsize, l->ngrp, own);
    }
    q->sc.idle = l->n - used;
    free(per);
    free(own);
    free(l3size);
    free(gsize);
    free(mine);
    free(l3id);
    free(gid);
}

/* CPU-only plans against the oracles: L3 straddles, mixed groups, idle
 * cores that a cut at least as good avoids. */
static void against_oracles(const ng_topology *topo, const ng_plan *plan, hwloc_const_bitmap_t allowed,
                            totals *tt)
{
    qline l;
    qplan q = {0};
    unsigned s, a, b;
    int verbose = getenv("NG_QUALITY_VERBOSE") != NULL;
    qline_build(topo, allowed, &l);
    on_line(&l, plan, &q);
    tt->l3_tasks += q.l3_split;
    tt->mixed_plans += q.mixing > 0;
    tt->cpu_idle += q.sc.idle;
    unsigned long long mine = ((unsigned long long)q.sc.idle << 24) | q.sc.straddles;
    if (q.l3_split && oracle_aligned(&l, l.grp, l.ngrp, q.nt, q.sc.min_raw, q.sc.min_eff) <= mine) {
        tt->l3_avoidable += q.l3_split;
        if (verbose)
            fprintf(stderr, "l3-avoidable: %s nt=%u allowed %s: %u tasks\n", cur_name, q.nt,
                    list_of(allowed), q.l3_split);
    }
    if (q.mixing && two_sizes(q.size, q.nt, &s, &a, &b) &&
        oracle_aligned_sizes(&l, l.grp, l.ngrp, s, a, b, q.sc.min_eff) <= mine) {
        tt->mixed_avoidable++;
        if (verbose)
            fprintf(stderr, "mixed-avoidable: %s nt=%u allowed %s\n", cur_name, q.nt, list_of(allowed));
    }
    if (q.sc.idle && oracle_runs(&l, q.nt, q.sc.min_raw, q.sc.min_eff) < q.sc.idle) {
        tt->idle_equal += q.sc.idle;
        if (verbose)
            fprintf(stderr, "idle-avoidable: %s nt=%u allowed %s: %u idle\n", cur_name, q.nt,
                    list_of(allowed), q.sc.idle);
    }
    free(q.size);
    qline_free(&l);
}

/* A GPU task whose GPUs have an allowed local core: over two packages?
 * Off its GPU's package (and while that package had idle cores)? */
static void gpu_task(const ng_topology *topo, const ng_task_plan *tp, unsigned t, unsigned nt,
                     hwloc_const_bitmap_t allowed, hwloc_const_bitmap_t used, totals *tt)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    hwloc_bitmap_t pk = hwloc_bitmap_alloc(), pk2 = hwloc_bitmap_alloc(), local = hwloc_bitmap_alloc();
    int verbose = getenv("NG_QUALITY_VERBOSE") != NULL;
    for (unsigned k = 0; k < tp->n_gpus; k++)
        hwloc_bitmap_or(local, local, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->cpus);
    packages_of(hw, local, pk);
    tt->gpu_tasks++;

    unsigned two = packages_of(hw, tp->cpus, pk2) > 1;
    tt->gpu_two_pkgs += two;
    if (two && verbose)
        fprintf(stderr, "two-packages: %s nt=%u -c %u task %u gpus %u allowed %s\n", cur_name, nt,
                cur_cpt, t, tp->n_gpus, list_of(allowed));
    int off = !hwloc_bitmap_isincluded(tp->cpus, pk);
    {
        hwloc_bitmap_t a = hwloc_bitmap_alloc();
        hwloc_bitmap_and(a, pk, allowed);
        /* over two packages while its GPU's package(s) had no idle core left */
        tt->pkg_short += two && hwloc_bitmap_isincluded(a, used);
        hwloc_bitmap_free(a);
    }
    tt->off_socket += off;
    /* ... while its package still had allocated cores nobody used */
    hwloc_bitmap_and(pk, pk, allowed);
    int free_left = off && !hwloc_bitmap_isincluded(pk, used);
    tt->off_socket_free += free_left;
    if (off && verbose) {
        char c[256];
        ng_list_format(tp->cpus, c, sizeof c);
        fprintf(stderr, "off-socket%s: %s nt=%u task %u gpu %d cpus %s allowed %s\n",
                free_left ? " (package not full)" : "", cur_name, nt, t, tp->gpus[0], c,
                list_of(allowed));
    }
    hwloc_bitmap_free(pk);
    hwloc_bitmap_free(pk2);
    hwloc_bitmap_free(local);
}

/* Planner v5's defect families (issue 37): tests/unit/plan/fair.h; the
 * widening ones without -c only (-c may ask a task off its package). */
static void v5_defects(const ng_topology *topo, const ng_plan *plan, hwloc_const_bitmap_t allowed,
                       totals *tt)
{
    char why[256] = "";
    int verbose = getenv("NG_QUALITY_VERBOSE") != NULL;
    unsigned long *fam[4] = {&tt->wide_over, &tt->wide_half, &tt->remote_crowded, &tt->scattered_local};
    static const char *const name[4] = {"wide-over", "wide-half", "remote-crowded", "scattered-local"};
    for (int f = 0; f < 4; f++) {
        why[0] = 0;
        unsigned n = f == 2 ? fair_remote(topo, plan, allowed, why, sizeof why)
                   : f == 3 ? fair_scattered(topo, plan, allowed, why, sizeof why)
                   : cur_cpt ? 0 : fair_widened(topo, plan, allowed, f, why, sizeof why);
        *fam[f] += n;
        if (n && verbose)
            fprintf(stderr, "%s: %s nt=%u -c %u allowed %s: %s\n", name[f], cur_name,
                    ng_plan_task_count(plan), cur_cpt, list_of(allowed), why);
    }
}

/* GPU plans: their tasks over two L3s (no oracle: GPU homes fix sizes). */
static void gpu_l3(const ng_topology *topo, const ng_plan *plan, hwloc_const_bitmap_t allowed,
                   totals *tt)
{
    qline l;
    qplan q = {0};
    qline_build(topo, allowed, &l);
    on_line(&l, plan, &q);
    tt->gpu_l3_tasks += q.l3_split;
    if (q.l3_split && getenv("NG_QUALITY_VERBOSE"))
        fprintf(stderr, "gpu-l3: %s nt=%u allowed %s: %u tasks\n", cur_name, q.nt,
                list_of(allowed), q.l3_split);
    free(q.size);
    qline_free(&l);
}

/* Plans where a GPU task is widened beyond its package (docs/planner.md, rule 3):
 * a planner with ng_task_plan.widened says so per task and writes the
 * plans' numbers to NG_QUALITY_R2_OUT; bench/quality.sh hands every run
 * the union of all planners' (NG_QUALITY_R2_IN), so every planner is
 * measured on the same plans. */
static unsigned long plan_no;
static unsigned char *r2_in;
static size_t r2_in_n;
static FILE *r2_out;

static void r2_load(void)
{
    const char *in = getenv("NG_QUALITY_R2_IN"), *out = getenv("NG_QUALITY_R2_OUT");
    FILE *f = in ? fopen(in, "r") : NULL;
    unsigned long k;
    while (f && fscanf(f, "%lu", &k) == 1) {
        if (k >= r2_in_n) {
            size_t n = (k + 1) * 2;
            r2_in = realloc(r2_in, n);
            memset(r2_in + r2_in_n, 0, n - r2_in_n);
            r2_in_n = n;
        }
        r2_in[k] = 1;
    }
    if (f)
        fclose(f);
    r2_out = out ? fopen(out, "w") : NULL;
}

static int rule2_plan(const ng_plan *plan)
{
    int r2 = plan_no < r2_in_n && r2_in[plan_no];
#ifdef NG_PLAN_HAS_WIDENED
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++)
        r2 |= ng_plan_task(plan, t)->widened;
#else
    (void)plan;
#endif
    if (r2 && r2_out)
        fprintf(r2_out, "%lu\n", plan_no);
    return r2;
}

static void measure_one(const ng_topology *topo, const ng_plan *plan, hwloc_const_bitmap_t allowed,
                        totals *tt);

/* NG_QUALITY_PLANS=FILE: one line per measured plan (its number, family,
 * topology, shape, the figures it adds and its tasks' CPUs), so that two
 * planners' outputs can be diffed plan by plan (bench/quality_diff.sh). */
static FILE *plans_out;
static const totals *fam_base;

static void plan_dump(const ng_plan *plan, hwloc_const_bitmap_t allowed, const totals *tt,
                      const totals *one)
{
    if (!plans_out)
        return;
    fprintf(plans_out, "%lu\t%d\t%s\tnt=%u\tc=%u\t%s\tidle=%lu\tstr=%lu\tcross=%lu\tgl3=%lu\tl3x=%lu"
            "\tcrossx=%lu\ttwo=%lu\tr2=%lu\tmin=%.4f\t", plan_no, (int)(tt - fam_base), cur_name,
            ng_plan_task_count(plan), cur_cpt, list_of(allowed), one->idle, one->straddles,
            one->cross_socket, one->gpu_l3_tasks, one->l3_x, one->cross_x, one->gpu_two_pkgs,
            one->r2_plans, one->eff_share_min);
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        char c[512];
        ng_list_format(ng_plan_task(plan, t)->cpus, c, sizeof c);
        fprintf(plans_out, "%s%s", t ? "|" : "", c);
    }
    fputc('\n', plans_out);
}

/* One plan's totals, added to @tt; outside rule-2 plans also the _x ones. */
static void measure(const ng_topology *topo, const ng_plan *plan, hwloc_const_bitmap_t allowed,
                    totals *tt)
{
    totals one;
    memset(&one, 0, sizeof one);
    one.eff_share_min = 1e300;
    measure_one(topo, plan, allowed, &one);
    if (!one.plans)
        return;
    if (rule2_plan(plan)) {
        one.r2_plans = 1;
        if (getenv("NG_QUALITY_VERBOSE"))
            fprintf(stderr, "widened: %s nt=%u allowed %s\n", cur_name, ng_plan_task_count(plan),
                    list_of(allowed));
    }
    else {
        one.straddles_x = one.straddles;
        one.cross_x = one.cross_socket;
        one.off_x = one.off_socket;
        one.two_x = one.gpu_two_pkgs;
        one.l3_x = one.l3_tasks + one.gpu_l3_tasks;
    }
    plan_dump(plan, allowed, tt, &one);
    unsigned long *a = (unsigned long *)tt, *b = (unsigned long *)&one;
    for (size_t i = 0; i < offsetof(totals, eff_share_sum) / sizeof *a; i++)
        a[i] += b[i];
    tt->eff_share_sum += one.eff_share_sum;
    tt->eff_share_min = one.eff_share_min < tt->eff_share_min ? one.eff_share_min : tt->eff_share_min;
}

static void measure_one(const ng_topology *topo, const ng_plan *plan, hwloc_const_bitmap_t allowed,
                        totals *tt)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned nt = ng_plan_task_count(plan), alloc = cores_in(hw, allowed), gpu = 0;
    if (alloc < nt)
        return; /* sharing: not comparable */
    hwloc_bitmap_t used = hwloc_bitmap_alloc(), pk = hwloc_bitmap_alloc();
    double min_eff = 1e300;
    for (unsigned t = 0; t < nt; t++) {
        hwloc_bitmap_or(used, used, ng_plan_task(plan, t)->cpus);
        gpu |= ng_plan_task(plan, t)->n_gpus > 0;
    }
    for (unsigned t = 0; t < nt; t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        unsigned nodes;
        double e = effective(topo, tp->cpus, &nodes);
        min_eff = e < min_eff ? e : min_eff;
        tt->straddles += nodes > 1;
        tt->cross_socket += packages_of(hw, tp->cpus, pk) > 1;
        if (tp->n_gpus && !tp->gpu_remote)
            gpu_task(topo, tp, t, nt, allowed, used, tt);
    }
    unsigned idle = alloc - cores_in(hw, used);
    if (cur_cpt) {
        /* -c as a size: exact-fit plans, every task exactly its cores */
        unsigned smt = 1, cap;
        for (int c = 0; c < hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE); c++) {
            hwloc_bitmap_t x = hwloc_bitmap_alloc();
            hwloc_bitmap_and(x, hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)c)->cpuset, allowed);
            unsigned w = (unsigned)hwloc_bitmap_weight(x);
            smt = w > smt ? w : smt;
            hwloc_bitmap_free(x);
        }
        cap = (cur_cpt + smt - 1) / smt;
        if ((unsigned long)cap * nt <= alloc) {
            int shortc = 0;
            tt->c_plans++;
            for (unsigned t = 0; t < nt; t++)
                shortc |= cores_in(hw, ng_plan_task(plan, t)->cpus) != cap;
            tt->c_short += shortc;
            if (shortc && getenv("NG_QUALITY_VERBOSE"))
                fprintf(stderr, "c-short: %s nt=%u -c %u allowed %s\n", cur_name, nt, cur_cpt,
                        list_of(allowed));
        }
    } else if (idle) {
        char want[32];
        int warned = 0;
        snprintf(want, sizeof want, "%u allocated core", idle);
        for (unsigned i = 0; i < ng_plan_warning_count(plan); i++)
            warned |= strstr(ng_plan_warning(plan, i), want) != NULL;
        tt->idle_plans++;
        tt->idle_warned += warned;
        for (unsigned t = 0; t < nt; t++) {
            const ng_task_plan *tp = ng_plan_task(plan, t);
            /* below half by a whole core: a package holding exactly half
             * the even share gives some tasks its floor (JUSUF, 3 tasks on
             * 64 of 128 cores: 21, 21 and 22 of 42.67), not starving */
            int starved = tp->n_gpus && 2ul * (cores_in(hw, tp->cpus) + 1) * nt <= alloc;
            tt->starved += starved;
            if (starved && getenv("NG_QUALITY_VERBOSE"))
                fprintf(stderr, "starved: %s nt=%u task %u gpu %d: %u cores of %u, %u idle\n",
                        cur_name, nt, t, tp->gpus[0], cores_in(hw, tp->cpus), alloc, idle);
        }
    }
    tt->plans++;
    tt->tasks += nt;
    tt->alloc_cores += alloc;
    tt->idle += idle;
    if (idle && getenv("NG_QUALITY_VERBOSE"))
        fprintf(stderr, "idle: %s nt=%u gpus=%u: %u of %u cores\n", cur_name, nt,
                ng_plan_task(plan, 0)->n_gpus, idle, alloc);
    if (gpu) {
        gpu_l3(topo, plan, allowed, tt);
        v5_defects(topo, plan, allowed, tt);
    }
    else
        against_oracles(topo, plan, allowed, tt);
    double share = min_eff / ((double)alloc / nt);
    tt->eff_share_sum += share;
    tt->eff_share_min = share < tt->eff_share_min ? share : tt->eff_share_min;
    hwloc_bitmap_free(used);
    hwloc_bitmap_free(pk);
}

/* One plan: @nt tasks of @gpt GPUs each (round robin from GPU @first),
 * -c @cpt (0: none). */
static int run_c(const ng_topology *topo, unsigned nt, unsigned gpt, unsigned first, unsigned cpt,
                 hwloc_const_bitmap_t allowed, totals *tt)
{
    unsigned ngpu = ng_topology_gpu_count(topo);
    unsigned *count = calloc(nt, sizeof *count), *offset = calloc(nt, sizeof *offset);
    int *gpus = calloc((size_t)nt * (gpt + 1), sizeof *gpus);
    ng_plan_request req = {.ntasks = nt, .allowed_cpus = allowed, .cpus_per_task = cpt};
    ng_policy_parse("local", &req.policy, NULL, 0);
    cur_cpt = cpt;
    if (gpt) {
        for (unsigned t = 0; t < nt; t++) {
            count[t] = gpt;
            offset[t] = t * gpt;
            for (unsigned k = 0; k < gpt; k++)
                gpus[t * gpt + k] = (int)((first + t * gpt + k) % ngpu);
        }
        req.task_gpu_count = count;
        req.task_gpu_offset = offset;
        req.task_gpus = gpus;
    }
    ng_plan *plan = NULL;
    int rc = ng_plan_compute(topo, &req, &plan, NULL, 0);
    if (rc == 0)
        measure(topo, plan, allowed, tt);
    plan_no++;
    ng_plan_free(plan);
    free(count);
    free(offset);
    free(gpus);
    return rc;
}

static int run(const ng_topology *topo, unsigned nt, unsigned gpt, hwloc_const_bitmap_t allowed, totals *tt)
{
    return run_c(topo, nt, gpt, 0, 0, allowed, tt);
}

enum { F_CPU, F_GPU1, F_GPU2, F_PARTIAL, F_LONE, F_EXACT, F_N };
static const char *const fam_name[F_N] = {"cpu-only", "1-gpu-per-task", "2-gpus-per-task",
                                          "partial-allocations", "one-gpu-task",
                                          "cpus-per-task-exact-fit"};

/* The same shape with -c as a size that fits: the even share (cores /
 * tasks, in PUs), and half of it. */
static void with_c(const ng_topology *topo, unsigned nt, unsigned gpt, hwloc_const_bitmap_t allowed,
                   totals *tt)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned cores = cores_in(hw, allowed), pus = (unsigned)hwloc_bitmap_weight(allowed);
    unsigned smt = cores ? (pus + cores - 1) / cores : 1, even = cores / nt;
    if (even >= 1)
        run_c(topo, nt, gpt, 0, even * smt, allowed, tt);
    if (even >= 4)
        run_c(topo, nt, gpt, 0, even / 2 * smt, allowed, tt);
}

static void sweep(const ng_topology *topo, totals *fam)
{
    unsigned ngpu = ng_topology_gpu_count(topo), nnuma = 0;
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++)
        nnuma += ng_topology_numa(topo, i)->has_cpus;
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    static const unsigned cpu_tasks[] = {1, 2, 3, 4, 6, 8, 12, 16};
    for (int kind = 0; kind < CORPUS_ALLOCATIONS; kind++) {
        corpus_allocation(topo, kind, allowed);
        totals *cpu = kind ? &fam[F_PARTIAL] : &fam[F_CPU];
        for (unsigned i = 0; i < sizeof cpu_tasks / sizeof *cpu_tasks; i++) {
            run(topo, cpu_tasks[i], 0, allowed, cpu);
            with_c(topo, cpu_tasks[i], 0, allowed, &fam[F_EXACT]);
        }
        run(topo, nnuma, 0, allowed, cpu);
        run(topo, 2 * nnuma, 0, allowed, cpu);
        with_c(topo, nnuma, 0, allowed, &fam[F_EXACT]);
        for (unsigned per = 1; ngpu && per <= 8; per++) {
            run(topo, ngpu * per, 1, allowed, kind ? &fam[F_PARTIAL] : &fam[F_GPU1]);
            with_c(topo, ngpu * per, 1, allowed, &fam[F_EXACT]);
        }
        if (ngpu >= 2) {
            run(topo, ngpu / 2, 2, allowed, kind ? &fam[F_PARTIAL] : &fam[F_GPU2]);
            with_c(topo, ngpu / 2, 2, allowed, &fam[F_EXACT]);
        }
        /* one task on one GPU (sbatch --gpus 1): each GPU in turn */
        for (unsigned g = 0; g < ngpu; g++)
            run_c(topo, 1, 1, g, 0, allowed, &fam[F_LONE]);
    }
    hwloc_bitmap_free(allowed);
}

/* One corpus topology (corpus_each): its shapes into the families. */
static int sweep_one(const ng_topology *topo, const char *name, void *fam)
{
    cur_name = name;
    sweep(topo, fam);
    cur_name = "";   /* corpus_each frees the name */
    return 1;
}

static int sweep_dir(const char *dir)
{
    totals fam[F_N];
    memset(fam, 0, sizeof fam);
    fam_base = fam;
    if (getenv("NG_QUALITY_PLANS"))
        plans_out = fopen(getenv("NG_QUALITY_PLANS"), "w");
    for (int f = 0; f < F_N; f++)
        fam[f].eff_share_min = 1e300;
    if (corpus_each(dir, sweep_one, fam) < 0) {
        fprintf(stderr, "quality: cannot open %s\n", dir);
        return 1;
    }
    printf("family\tplans\ttasks\tstraddling\tcross_socket\tidle_cores\talloc_cores\tgpu_tasks\t"
           "off_gpu_socket\toff_gpu_socket_free\tmean_min_eff_share\tworst_min_eff_share\t"
           "gpu_two_packages\tl3_straddles\tl3_avoidable\tmixed_plans\tmixed_avoidable\t"
           "idle_equal_objective\tgpu_l3_straddles\tcpu_only_idle\tc_plans\tc_short\tstarved\t"
           "idle_plans\tidle_warned\tpkg_short\tr2_plans\tstraddling_x\tcross_socket_x\t"
           "off_gpu_socket_x\tgpu_two_packages_x\tl3_straddles_x\twide_over\twide_half\t"
           "remote_crowded\tscattered_local\n");
    for (int f = 0; f < F_N; f++)
        printf("%s\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%.3f\t%.3f\t%lu\t%lu\t%lu\t%lu\t"
               "%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\n",
               fam_name[f],
               fam[f].plans, fam[f].tasks, fam[f].straddles, fam[f].cross_socket, fam[f].idle,
               fam[f].alloc_cores, fam[f].gpu_tasks, fam[f].off_socket, fam[f].off_socket_free,
               fam[f].plans ? fam[f].eff_share_sum / (double)fam[f].plans : 0,
               fam[f].plans ? fam[f].eff_share_min : 0, fam[f].gpu_two_pkgs, fam[f].l3_tasks,
               fam[f].l3_avoidable, fam[f].mixed_plans, fam[f].mixed_avoidable, fam[f].idle_equal,
               fam[f].gpu_l3_tasks, fam[f].cpu_idle, fam[f].c_plans, fam[f].c_short,
               fam[f].starved, fam[f].idle_plans, fam[f].idle_warned, fam[f].pkg_short,
               fam[f].r2_plans, fam[f].straddles_x, fam[f].cross_x, fam[f].off_x, fam[f].two_x, fam[f].l3_x,
               fam[f].wide_over, fam[f].wide_half, fam[f].remote_crowded, fam[f].scattered_local);
    return 0;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median time of one plan of @nt tasks (GPUs spread round robin, or none
 * with @cpu_only). */
static int time_plan(const char *xml, unsigned nt, int reps, int cpu_only)
{
    ng_topology_options o = {.xml_path = xml};
    ng_topology *topo = NULL;
    char err[256];
    if (ng_topology_load(&topo, &o, err, sizeof err) < 0) {
        fprintf(stderr, "quality: %s\n", err);
        return 1;
    }
    unsigned ngpu = ng_topology_gpu_count(topo);
    unsigned *count = calloc(nt, sizeof *count), *offset = calloc(nt, sizeof *offset);
    int *gpus = calloc(nt, sizeof *gpus);
    ng_plan_request req = {.ntasks = nt};
    ng_policy_parse("local", &req.policy, NULL, 0);
    if (ngpu && !cpu_only) {
        for (unsigned t = 0; t < nt; t++) {
            count[t] = 1;
            offset[t] = t;
            gpus[t] = (int)(t % ngpu);
        }
        req.task_gpu_count = count;
        req.task_gpu_offset = offset;
        req.task_gpus = gpus;
    }
    double *us = calloc((size_t)reps, sizeof *us);
    for (int r = 0; r < reps; r++) {
        ng_plan *p = NULL;
        double t0 = now_us();
        ng_plan_compute(topo, &req, &p, NULL, 0);
        us[r] = now_us() - t0;
        ng_plan_free(p);
    }
    qsort(us, (size_t)reps, sizeof *us, cmp_dbl);
    printf("%.1f\n", us[reps / 2]);
    free(us);
    free(count);
    free(offset);
    free(gpus);
    ng_topology_free(topo);
    return 0;
}

int main(int argc, char **argv)
{
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "--time") == 0)
        return time_plan(argv[2], (unsigned)atoi(argv[3]), atoi(argv[4]),
                         argc == 6 && strcmp(argv[5], "cpu") == 0);
    if (argc == 2) {
        r2_load();
        int rc = sweep_dir(argv[1]);
        if (plans_out)
            fclose(plans_out);
        if (r2_out)
            fclose(r2_out);
        return rc;
    }
    fprintf(stderr, "usage: quality DIR | quality --time FILE NTASKS N [cpu]\n");
    return 2;
}
