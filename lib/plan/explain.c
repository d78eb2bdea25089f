/* ng_plan_explain: why a plan is what it is (docs/planner.md, "Explaining
 * a plan"). Per task the objective's terms, measured on the request's own
 * line of cores (domains, CPU groups, packages as the planner saw them);
 * per cut the candidates the planner scored (ng_plan's cut records) and
 * what decided against the runner-up; per task one sentence (why.c).
 * Nothing here chooses: it reads the plan and the planner's records. */
#include "private/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHY_LEN 1024
#define DECIDED_LEN 96

/* A task's alternatives as the public type reads them. */
typedef struct task_alts {
    ngi_why_alt a[NGI_WHY_TASK_ALTS];
    const char *args[NGI_WHY_TASK_ALTS][2];
    ng_plan_alternative pub[NGI_WHY_TASK_ALTS];
    unsigned n;
} task_alts;

struct ng_plan_explanation {
    unsigned nt;
    ng_task_terms *terms;
    char (*why)[WHY_LEN];
    task_alts *alts;
    unsigned n_cuts;
    ng_plan_cut *cuts;
    ng_cut_candidate *cands;        /* NGI_CUT_FAMILIES per cut */
    char (*decided)[DECIDED_LEN];
    unsigned *task_store;           /* every cut's tasks */
    hwloc_bitmap_t *cut_cpus;       /* per cut */
};

static const char *const what_names[] = {
    [NGI_CUT_WHAT_CPU] = "CPU-only tasks",
    [NGI_CUT_WHAT_HOME] = "GPU tasks on their GPUs' cores",
    [NGI_CUT_WHAT_REGION] = "GPU tasks on their GPUs' cores and the nearest free ones",
    [NGI_CUT_WHAT_NEAREST] = "GPU tasks whose GPUs' cores overlap",
    [NGI_CUT_WHAT_SHARED] = "tasks sharing cores",
    [NGI_CUT_WHAT_MOVED] = "a remote GPU task moved after the cut",
    [NGI_CUT_WHAT_NODES] = "one GPU's remote tasks re-laid whole per node",
    [NGI_CUT_WHAT_SWAP] = "GPU tasks re-laid whole per node, a spill swapped",
    [NGI_CUT_WHAT_L3S] = "GPU tasks of one node re-laid on whole L3s",
};

/* OS indices of the CPU-bearing nodes of task @t's GPUs. */
static void gpu_nodes(const ng_topology *topo, const ng_task_plan *tp, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (unsigned k = 0; k < tp->n_gpus; k++) {
        int os;
        hwloc_bitmap_foreach_begin(os, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->numa_nodes) {
            const ng_numa_info *ni = ng_topology_numa_by_os(topo, (unsigned)os);
            if (ni && ni->has_cpus)
                hwloc_bitmap_set(out, (unsigned)os);
        } hwloc_bitmap_foreach_end();
    }
}

static unsigned os_of_dom(const ngi_planner *p, unsigned d)
{
    return ng_topology_numa(p->topo, (unsigned)p->doms[d].mem)->os_index;
}

/* Topology index and package (logical, -1) of the node with OS index @os. */
static int node_at(const ng_topology *topo, unsigned os, int *pkg)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(hw, os);
    hwloc_obj_t pk = obj ? hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, obj) : NULL;
    *pkg = pk ? (int)pk->logical_index : -1;
    return ngi_numa_index(topo, os);
}

/* Distance from the nearest of @from (OS indices) to domain d, as the
 * planner counts it (its fallback when the topology has none). */
static unsigned dist_from(const ngi_planner *p, hwloc_const_bitmap_t from, unsigned d)
{
    unsigned best = ~0u;
    int os;
    hwloc_bitmap_foreach_begin(os, from) {
        int pkg, i = node_at(p->topo, (unsigned)os, &pkg);
        unsigned x = i < 0 ? ~0u : ngi_plan_node_dist(p, i, p->doms[d].mem, pkg == p->doms[d].pkg);
        if (x < best)
            best = x;
    } hwloc_bitmap_foreach_end();
    return best == ~0u ? 0 : best;
}

/* Domains, groups and packages of @units; the main domain and effective cores. */
static void spread(const ngi_planner *p, hwloc_const_bitmap_t units, unsigned *cnt, ng_task_terms *x,
                   unsigned *main_dom)
{
    hwloc_bitmap_t grp = hwloc_bitmap_alloc(), pkg = hwloc_bitmap_alloc();
    int u;
    memset(cnt, 0, p->n_doms * sizeof *cnt);
    hwloc_bitmap_foreach_begin(u, units) {
        cnt[p->units[u].dom]++;
        hwloc_bitmap_set(grp, p->units[u].grp);
        hwloc_bitmap_set(pkg, (unsigned)(p->units[u].pkg + 1));
        x->cores++;
    } hwloc_bitmap_foreach_end();
    *main_dom = 0;
    for (unsigned d = 0; d < p->n_doms; d++) {
        x->nodes += cnt[d] > 0;
        if (cnt[d] > cnt[*main_dom])
            *main_dom = d;
    }
    for (unsigned d = 0; d < p->n_doms; d++)
        x->effective += cnt[d] * 10.0 / p->dist[*main_dom * p->n_doms + d];
    x->groups = (unsigned)(grp ? hwloc_bitmap_weight(grp) : 0);
    x->packages = (unsigned)(pkg ? hwloc_bitmap_weight(pkg) : 0);
    x->main_node = x->cores ? (int)os_of_dom(p, *main_dom) : -1;
    hwloc_bitmap_free(grp);
    hwloc_bitmap_free(pkg);
}

static void terms_of(const ngi_planner *p, const ng_plan *plan, unsigned t, ng_task_terms *x,
                     unsigned *cnt)
{
    hwloc_bitmap_t units = hwloc_bitmap_alloc(), near = hwloc_bitmap_alloc();
    unsigned main_dom;
    memset(x, 0, sizeof *x);
    x->cut = -1;
    ngi_why_units(p, plan, t, units);
    spread(p, units, cnt, x, &main_dom);
    const ng_task_plan *tp = ng_plan_task(plan, t);
    if (tp->n_gpus)
        gpu_nodes(p->topo, tp, near);
    if (hwloc_bitmap_iszero(near))
        hwloc_bitmap_set(near, os_of_dom(p, main_dom));
    for (unsigned d = 0; d < p->n_doms; d++) {
        if (!cnt[d] || hwloc_bitmap_isset(near, os_of_dom(p, d)))
            continue;
        unsigned dist = dist_from(p, near, d);
        x->off_cores += cnt[d];
        if (dist > x->off_distance)
            x->off_distance = dist;
    }
    hwloc_bitmap_free(units);
    hwloc_bitmap_free(near);
}

/* ---- the cuts --------------------------------------------------------- */

/* What made @a better than @b, with @other's plain words ("in task order"). */
static const char *term_phrase(const ngi_cut_score *a, const ngi_cut_score *b, char *buf,
                               size_t len, const char *other)
{
    if (a->min_eff > b->min_eff + 1e-9)
        snprintf(buf, len, "a larger smallest task: %.1f effective cores, %.1f split %s",
                 a->min_eff, b->min_eff, other);
    else if (a->min_raw != b->min_raw)
        snprintf(buf, len, "a larger smallest task: %u cores, %u split %s", a->min_raw, b->min_raw,
                 other);
    else if (a->idle != b->idle)
        snprintf(buf, len, "fewer idle cores: %u, %u split %s", a->idle, b->idle, other);
    else if (a->straddles != b->straddles)
        snprintf(buf, len, "fewer tasks over two NUMA nodes: %u, %u split %s", a->straddles,
                 b->straddles, other);
    else if (a->spans != b->spans)
        snprintf(buf, len, "fewer CPU groups split: %u, %u split %s", a->spans, b->spans, other);
    else
        snprintf(buf, len, "a tie with the split %s: the first found is kept", other);
    return buf;
}

static int same_score(const ngi_cut_score *a, const ngi_cut_score *b)
{
    return !ngi_cut_better(a, b) && !ngi_cut_better(b, a);
}

/* What decided the cut: the chosen family's first better term against the
 * best family that scores differently (families that tie on every term
 * usually made the same cut); a tie only when all do. */
static void decided(const ngi_cut_trace *tr, char *buf, size_t len)
{
    int r = -1, tie = -1;
    if (tr->chosen < 0) {
        snprintf(buf, len, "fewer cores than tasks: one core each, tasks share");
        return;
    }
    const ngi_cut_score *c = &tr->score[tr->chosen];
    for (int f = 0; f < NGI_CUT_FAMILIES; f++) {
        if (f == tr->chosen || !tr->found[f])
            continue;
        if (same_score(&tr->score[f], c))
            tie = tie < 0 ? f : tie;
        else if (r < 0 || ngi_cut_better(&tr->score[f], &tr->score[r]))
            r = f;
    }
    if (r < 0 && tie >= 0)
        snprintf(buf, len, "a tie: every split scores the same, the first found is kept");
    else if (r >= 0)
        term_phrase(c, &tr->score[r], buf, len, ngi_why_family_words(ngi_cut_family_name(r)));
    else if (tie >= 0)
        term_phrase(c, &tr->score[tie], buf, len, ngi_why_family_words(ngi_cut_family_name(tie)));
    else
        snprintf(buf, len, "the only cut these sizes allow");
}

/* A split that no chooser made: what the pass after the cuts did. */
static int relaid(const ngi_cut_record *rec, char *buf, size_t len)
{
    const char *level = rec->what == NGI_CUT_WHAT_L3S ? "L3s" : "NUMA nodes";
    if (rec->what == NGI_CUT_WHAT_NEAREST)
        snprintf(buf, len, "no split: each task takes its own GPUs' free cores first, then the "
                 "nearest");
    else if (rec->what == NGI_CUT_WHAT_MOVED)
        snprintf(buf, len, "moved to the node as near its GPU with the most cores no other task "
                 "holds");
    else if (rec->what == NGI_CUT_WHAT_NODES || rec->what == NGI_CUT_WHAT_L3S ||
             rec->what == NGI_CUT_WHAT_SWAP)
        snprintf(buf, len, "re-laid after the cut: fewer tasks over two %s: %u, %u as cut", level,
                 rec->after, rec->before);
    else
        return 0;
    return 1;
}

static void fill_cut(ng_plan_explanation *x, const ngi_planner *p, const ngi_cut_record *rec,
                     unsigned i, unsigned *store)
{
    ng_plan_cut *c = &x->cuts[i];
    ng_cut_candidate *cand = x->cands + (size_t)i * NGI_CUT_FAMILIES;
    int u;
    memcpy(store, rec->tasks, rec->nt * sizeof *store);
    x->cut_cpus[i] = hwloc_bitmap_alloc();
    hwloc_bitmap_foreach_begin(u, rec->set) {
        if (x->cut_cpus[i] && (unsigned)u < p->n_units)
            hwloc_bitmap_or(x->cut_cpus[i], x->cut_cpus[i], p->units[u].pus);
    } hwloc_bitmap_foreach_end();
    *c = (ng_plan_cut){.what = what_names[rec->what], .n_tasks = rec->nt, .tasks = store,
                       .cores = rec->units, .candidates = cand, .chosen = -1,
                       .decided = x->decided[i], .cpus = x->cut_cpus[i],
                       .moved = rec->cut_nt - rec->nt};
    for (int f = 0; f < NGI_CUT_FAMILIES; f++) {
        if (!rec->trace.found[f])
            continue;
        const ngi_cut_score *sc = &rec->trace.score[f];
        if (f == rec->trace.chosen)
            c->chosen = (int)c->n_candidates;
        cand[c->n_candidates++] = (ng_cut_candidate){
            .family = ngi_cut_family_name(f), .min_effective = sc->min_eff,
            .min_cores = sc->min_raw, .idle = sc->idle, .straddles = sc->straddles,
            .spans = sc->spans};
    }
    if (!relaid(rec, x->decided[i], DECIDED_LEN))
        decided(&rec->trace, x->decided[i], DECIDED_LEN);
    for (unsigned k = 0; k < rec->nt; k++)
        if (rec->tasks[k] < x->nt)
            x->terms[rec->tasks[k]].cut = (int)i;
}

/* ---- the explanation ---------------------------------------------------- */

static ng_plan_explanation *alloc_explanation(const ng_plan *plan)
{
    ng_plan_explanation *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    size_t stored = 0;
    for (unsigned i = 0; i < plan->n_cuts; i++)
        stored += plan->cuts[i].nt;
    x->nt = plan->ntasks;
    x->n_cuts = plan->n_cuts;
    x->terms = calloc(x->nt, sizeof *x->terms);
    x->why = calloc(x->nt, sizeof *x->why);
    x->alts = calloc(x->nt, sizeof *x->alts);
    x->cuts = calloc(x->n_cuts + 1, sizeof *x->cuts);
    x->cands = calloc((size_t)(x->n_cuts + 1) * NGI_CUT_FAMILIES, sizeof *x->cands);
    x->decided = calloc(x->n_cuts + 1, sizeof *x->decided);
    x->task_store = calloc(stored + 1, sizeof *x->task_store);
    x->cut_cpus = calloc(x->n_cuts + 1, sizeof *x->cut_cpus);
    if (!x->terms || !x->why || !x->alts || !x->cuts || !x->cands || !x->decided || !x->task_store ||
        !x->cut_cpus) {
        ng_plan_explanation_free(x);
        return NULL;
    }
    return x;
}

/* The slices to measure: the plan's own, or (policy none binds nothing)
 * the same request with local's binding, which cuts the same slices. */
static int measured_plan(const ng_topology *topo, const ng_plan_request *req, const ng_plan *plan,
                         ng_plan **own, char *err, size_t errlen)
{
    *own = NULL;
    for (unsigned t = 0; t < plan->ntasks; t++)
        if (!plan->tasks[t].cpus) {
            ng_plan_request r = *req;
            r.policy.kind = NG_POLICY_LOCAL;
            r.policy.has_nodes = 0;
            r.net.mode = NG_NET_OFF;
            return ng_plan_compute(topo, &r, own, err, errlen);
        }
    return 0;
}

static int explain_steps(ng_plan_explanation *x, const ng_topology *topo,
                         const ng_plan_request *req, const ng_plan *plan, char *err, size_t errlen)
{
    ngi_planner p = {.topo = topo, .req = req};
    ng_plan *own = NULL;
    unsigned *cnt = NULL;
    int rc = ngi_plan_build_domains(&p, err, errlen);
    if (rc == 0)
        rc = measured_plan(topo, req, plan, &own, err, errlen);
    const ng_plan *m = own ? own : plan;
    if (rc == 0 && !(cnt = calloc(p.n_doms, sizeof *cnt)))
        rc = ngi_fail(err, errlen, "out of memory");
    for (unsigned t = 0; rc == 0 && t < x->nt; t++)
        terms_of(&p, m, t, &x->terms[t], cnt);
    unsigned *store = x->task_store;
    for (unsigned i = 0; rc == 0 && i < x->n_cuts; i++) {
        fill_cut(x, &p, &plan->cuts[i], i, store);
        store += plan->cuts[i].nt;
    }
    ngi_why w = {.topo = topo, .req = req, .plan = m, .p = &p, .terms = x->terms, .cuts = x->cuts};
    for (unsigned t = 0; rc == 0 && t < x->nt; t++) {
        task_alts *ta = &x->alts[t];
        ta->n = ngi_why_task(&w, t, x->why[t], WHY_LEN, ta->a);
        for (unsigned k = 0; k < ta->n; k++) {
            ta->args[k][0] = ta->a[k].opt;
            ta->args[k][1] = ta->a[k].val;
            ta->pub[k] = (ng_plan_alternative){.n_args = 2, .args = ta->args[k],
                                               .cpus = ta->a[k].cpus, .mem_nodes = ta->a[k].mems,
                                               .says = ta->a[k].says};
        }
        x->terms[t].why = x->why[t];
        x->terms[t].n_alternatives = ta->n;
        x->terms[t].alternatives = ta->pub;
    }
    ngi_why_free(&w);
    free(cnt);
    ng_plan_free(own);
    ngi_plan_free_domains(&p);
    return rc;
}

int ng_plan_explain(const ng_topology *topo, const ng_plan_request *req, const ng_plan *plan,
                    ng_plan_explanation **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!topo || !req || !plan || req->ntasks != plan->ntasks)
        return ngi_fail(err, errlen, "explain: no topology, request or plan, or a plan of "
                                    "another request");
    ng_plan_explanation *x = alloc_explanation(plan);
    if (!x)
        return ngi_fail(err, errlen, "out of memory");
    if (explain_steps(x, topo, req, plan, err, errlen) < 0) {
        ng_plan_explanation_free(x);
        return -1;
    }
    *out = x;
    return 0;
}

void ng_plan_explanation_free(ng_plan_explanation *x)
{
    if (!x)
        return;
    for (unsigned t = 0; x->alts && t < x->nt; t++)
        for (unsigned k = 0; k < x->alts[t].n; k++) {
            free(x->alts[t].a[k].cpus);
            hwloc_bitmap_free(x->alts[t].a[k].mems);
        }
    free(x->alts);
    free(x->terms);
    free(x->why);
    free(x->cuts);
    free(x->cands);
    free(x->decided);
    free(x->task_store);
    for (unsigned i = 0; x->cut_cpus && i < x->n_cuts; i++)
        hwloc_bitmap_free(x->cut_cpus[i]);
    free(x->cut_cpus);
    free(x);
}

const ng_task_terms *ng_plan_explain_task(const ng_plan_explanation *x, unsigned local_id)
{
    return x && local_id < x->nt ? &x->terms[local_id] : NULL;
}

unsigned ng_plan_explain_cut_count(const ng_plan_explanation *x)
{
    return x ? x->n_cuts : 0;
}

const ng_plan_cut *ng_plan_explain_cut(const ng_plan_explanation *x, unsigned i)
{
    return x && i < x->n_cuts ? &x->cuts[i] : NULL;
}
