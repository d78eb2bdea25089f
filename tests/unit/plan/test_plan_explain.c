/* ng_plan_explain over every corpus topology and a few job shapes: the
 * terms are the plan's (cores, NUMA nodes, packages of each task's CPUs),
 * every task belongs to a recorded cut whose chosen family scores best by
 * the objective and its tie-breaks, and every alternative a sentence names
 * does what it says when planned: "--cpus-per-task N keeps it on its GPU's
 * node", "keeps every task inside one NUMA node", "would give each task K
 * cores over P packages". Plus the pinned sentences of the cases. */
#include "numaguard.h"
#include "tap.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_DIR "tests/topologies"

static unsigned long checked, claims;

static unsigned count_in(const ng_topology *topo, hwloc_obj_type_t type, hwloc_const_bitmap_t cpus)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned n = 0;
    int k = hwloc_get_nbobjs_by_type(hw, type);
    for (int i = 0; i < k; i++)
        n += hwloc_bitmap_intersects(hwloc_get_obj_by_type(hw, type, (unsigned)i)->cpuset, cpus);
    return n;
}

static unsigned cpu_nodes_of(const ng_topology *topo, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
        const ng_numa_info *ni = ng_topology_numa(topo, i);
        if (ni->has_cpus && hwloc_bitmap_intersects(ni->cpus, cpus))
            hwloc_bitmap_set(out, ni->os_index);
    }
    return (unsigned)hwloc_bitmap_weight(out);
}

typedef struct shape {
    unsigned nt, gpt, c;
    const char *policy;
} shape;

static ng_plan *make(const ng_topology *topo, const shape *s, ng_plan_request *req, unsigned *count,
                     unsigned *offset, int *gpus)
{
    unsigned ngpu = ng_topology_gpu_count(topo);
    memset(req, 0, sizeof *req);
    req->ntasks = s->nt;
    req->cpus_per_task = s->c;
    ng_policy_parse(s->policy, &req->policy, NULL, 0);
    if (s->gpt && ngpu) {
        for (unsigned t = 0; t < s->nt; t++) {
            count[t] = s->gpt;
            offset[t] = t * s->gpt;
            for (unsigned k = 0; k < s->gpt; k++)
                gpus[t * s->gpt + k] = (int)((t * s->gpt + k) % ngpu);
        }
        req->task_gpu_count = count;
        req->task_gpu_offset = offset;
        req->task_gpus = gpus;
    }
    ng_plan *p = NULL;
    if (ng_plan_compute(topo, req, &p, NULL, 0) < 0)
        return NULL;
    return p;
}

/* a better than b by the objective and its tie-breaks (docs/planner.md) */
static int better(const ng_cut_candidate *a, const ng_cut_candidate *b)
{
    if (a->min_effective > b->min_effective + 0.005)
        return 1;
    if (a->min_effective < b->min_effective - 0.005)
        return 0;
    if (a->min_cores != b->min_cores)
        return a->min_cores > b->min_cores;
    if (a->idle != b->idle)
        return a->idle < b->idle;
    if (a->straddles != b->straddles)
        return a->straddles < b->straddles;
    return a->spans < b->spans;
}

static int check_cut(const ng_plan_cut *c, char *why, size_t len)
{
    if (c->chosen < 0)
        return 1;
    for (unsigned k = 0; k < c->n_candidates; k++)
        if (better(&c->candidates[k], &c->candidates[c->chosen])) {
            snprintf(why, len, "cut: %s beats the chosen %s", c->candidates[k].family,
                     c->candidates[c->chosen].family);
            return 0;
        }
    return 1;
}

/* Task @t of the request planned with -c @c (and @mods): NULL if it fails. */
static ng_plan *replan(const ng_topology *topo, const ng_plan_request *req, unsigned c, unsigned mods)
{
    ng_plan_request r = *req;
    r.cpus_per_task = c;
    r.policy.mods = mods;
    r.policy.kind = NG_POLICY_LOCAL;
    ng_plan *a = NULL;
    return ng_plan_compute(topo, &r, &a, NULL, 0) == 0 ? a : NULL;
}

static int on_gpu_nodes(const ng_topology *topo, const ng_task_plan *tp)
{
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc(), gpu_nodes = hwloc_bitmap_alloc();
    cpu_nodes_of(topo, tp->cpus, nodes);
    for (unsigned k = 0; k < tp->n_gpus; k++)
        hwloc_bitmap_or(gpu_nodes, gpu_nodes, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->numa_nodes);
    int in = hwloc_bitmap_isincluded(nodes, gpu_nodes);
    hwloc_bitmap_free(nodes);
    hwloc_bitmap_free(gpu_nodes);
    return in;
}

static int every_task_in_one_node(const ng_topology *topo, const ng_plan *a, int cpuless)
{
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    int good = 1;
    /* One domain: CPUs of at most one node, memory bound to one (CPUs of
     * no node, memoryless, belong to the node they attach to). */
    for (unsigned o = 0; good && o < ng_plan_task_count(a); o++) {
        const ng_task_plan *tp = ng_plan_task(a, o);
        good = cpu_nodes_of(topo, tp->cpus, nodes) <= 1 &&
               (cpuless || hwloc_bitmap_weight(tp->mem_nodes) == 1);
    }
    hwloc_bitmap_free(nodes);
    return good;
}

static int gives(const ng_topology *topo, const ng_plan *a, unsigned t, unsigned cores, unsigned pkgs)
{
    const ng_task_plan *tp = a ? ng_plan_task(a, t) : NULL;
    return tp && tp->threads == cores && count_in(topo, HWLOC_OBJ_PACKAGE, tp->cpus) == pkgs;
}

/* One "--cpus-per-task C <claim>" of a sentence, planned. */
static int check_claim(const ng_topology *topo, const ng_plan_request *req, unsigned t, unsigned c,
                       const char *rest)
{
    unsigned mods = req->policy.mods, k, pk;
    ng_plan *a = replan(topo, req, c, mods), *w = NULL;
    int good = a != NULL;
    if (good && strncmp(rest, " keeps it on its GPU's node", 27) == 0)
        good = on_gpu_nodes(topo, ng_plan_task(a, t));
    else if (good && strncmp(rest, " keeps every task inside one NUMA node", 38) == 0)
        good = every_task_in_one_node(topo, a, (mods & NG_MOD_CPULESS) != 0);
    else if (good && sscanf(rest, " or the modifier wide would give each task %u cores over %u",
                            &k, &pk) == 2) {
        w = replan(topo, req, 0, mods | NG_MOD_WIDE);
        good = gives(topo, a, t, k, pk) && gives(topo, w, t, k, pk);
    } else if (good && sscanf(rest, " would give this task %u cores over %u", &k, &pk) == 2)
        good = gives(topo, a, t, k, pk);
    ng_plan_free(a);
    ng_plan_free(w);
    return good;
}

/* Every "--cpus-per-task C ..." a sentence names: plan it and see. */
static int check_claims(const ng_topology *topo, const ng_plan_request *req, unsigned t,
                        const char *sentence, char *why, size_t len)
{
    for (const char *m = strstr(sentence, "--cpus-per-task "); m; m = strstr(m + 1, "--cpus-per-task ")) {
        char *end;
        unsigned long c = strtoul(m + 16, &end, 10);
        if (end == m + 16)
            continue; /* "--cpus-per-task leaves ...": no value */
        claims++;
        if (!check_claim(topo, req, t, (unsigned)c, end)) {
            snprintf(why, len, "task %u: planned with -c %lu, not what '%.90s' says", t, c, m);
            return 0;
        }
    }
    return 1;
}

static int check_task(const ng_topology *topo, const ng_plan_request *req, const ng_plan *plan,
                      const ng_plan_explanation *x, unsigned t, char *why, size_t len)
{
    const ng_task_plan *tp = ng_plan_task(plan, t);
    const ng_task_terms *w = ng_plan_explain_task(x, t);
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    /* Policy none binds nothing: the terms are those of the slice it sized. */
    unsigned n = tp->cpus ? cpu_nodes_of(topo, tp->cpus, nodes) : 0;
    unsigned pk = tp->cpus ? count_in(topo, HWLOC_OBJ_PACKAGE, tp->cpus) : w->packages;
    int good = 1;
    hwloc_bitmap_free(nodes);
    if (w->cores != tp->threads || w->packages != pk ||
        (n && w->nodes < n) || !w->why || strlen(w->why) < 10 || w->off_cores > w->cores) {
        snprintf(why, len, "task %u: terms (%u cores, %u nodes, %u packages) against the plan (%u, %u, %u)",
                 t, w->cores, w->nodes, w->packages, tp->threads, n, pk);
        good = 0;
    } else if (w->cut < 0 || (unsigned)w->cut >= ng_plan_explain_cut_count(x)) {
        snprintf(why, len, "task %u: cut %d of %u", t, w->cut, ng_plan_explain_cut_count(x));
        good = 0;
    }
    return good && check_claims(topo, req, t, w->why, why, len);
}

static int run_shape(const ng_topology *topo, const shape *s, char *why, size_t len)
{
    unsigned count[64], offset[64];
    int gpus[256];
    ng_plan_request req;
    ng_plan *plan = make(topo, s, &req, count, offset, gpus);
    ng_plan_explanation *x = NULL;
    char err[256];
    if (!plan)
        return 1; /* not a shape this machine can plan: nothing to explain */
    int good = ng_plan_explain(topo, &req, plan, &x, err, sizeof err) == 0;
    if (!good)
        snprintf(why, len, "explain failed: %s", err);
    for (unsigned i = 0; good && i < ng_plan_explain_cut_count(x); i++)
        good = check_cut(ng_plan_explain_cut(x, i), why, len);
    for (unsigned t = 0; good && t < s->nt; t++)
        good = check_task(topo, &req, plan, x, t, why, len);
    checked++;
    ng_plan_explanation_free(x);
    ng_plan_free(plan);
    return good;
}

static void corpus(void)
{
    DIR *d = opendir(TOPO_DIR);
    struct dirent *e;
    unsigned topos = 0;
    int good = 1;
    char why[512] = "";
    while (d && (e = readdir(d)) && good) {
        if (!strstr(e->d_name, ".xml"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", TOPO_DIR, e->d_name);
        ng_topology_options o = {.xml_path = path};
        ng_topology *topo = NULL;
        if (ng_topology_load(&topo, &o, NULL, 0) < 0)
            continue;
        unsigned ngpu = ng_topology_gpu_count(topo);
        shape shapes[] = {{1, 0, 0, "local"}, {3, 0, 0, "local"}, {8, 0, 0, "prefer"},
                          {4, 0, 4, "local"}, {ngpu, 1, 0, "local"}, {ngpu ? ngpu * 2 : 0, 1, 0, "local"},
                          {ngpu, 1, 8, "local"}, {ngpu, 1, 0, "local,wide"}, {2, 0, 0, "none"}};
        for (unsigned k = 0; good && k < sizeof shapes / sizeof *shapes; k++)
            if (shapes[k].nt && shapes[k].nt <= 64 && (!shapes[k].gpt || ngpu))
                good = run_shape(topo, &shapes[k], why, sizeof why);
        if (!good)
            tap_diag("%s: %s", e->d_name, why);
        topos++;
        ng_topology_free(topo);
    }
    if (d)
        closedir(d);
    ok(good && topos >= 40, "corpus: terms are the plan's, the chosen cut scores best, every "
       "alternative named does what it says (%u topologies, %lu plans, %lu claims planned)", topos,
       checked, claims);
}

/* The sentence of task @t for a shape on a corpus topology contains @want. */
static void pinned(const char *file, shape s, unsigned t, const char *want)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TOPO_DIR, file);
    ng_topology_options o = {.xml_path = path};
    ng_topology *topo = NULL;
    unsigned count[64], offset[64];
    int gpus[256];
    ng_plan_request req;
    ng_plan *plan = NULL;
    ng_plan_explanation *x = NULL;
    if (ng_topology_load(&topo, &o, NULL, 0) == 0 && (plan = make(topo, &s, &req, count, offset, gpus)))
        ng_plan_explain(topo, &req, plan, &x, NULL, 0);
    const ng_task_terms *w = ng_plan_explain_task(x, t);
    ok(w && strstr(w->why, want), "%s, %u tasks: task %u says '%s'%s%s", file, s.nt, t, want,
       w ? "; got: " : "", w ? w->why : "");
    ng_plan_explanation_free(x);
    ng_plan_free(plan);
    ng_topology_free(topo);
}

int main(void)
{
    corpus();
    pinned("xe8640-4xh100-spr8480-snc4.xml", (shape){4, 1, 0, "local"}, 0,
           "14 on its GPU's node 3 and 14 on node 2 (distance 12, same package), the nearest free "
           "cores; --cpus-per-task 28 keeps it on its GPU's node (14 cores)");
    pinned("witherspoon-p9-6xv100-gpumem-numa.xml", (shape){2, 1, 0, "local,cpuless"}, 1,
           "4 allocated cores stay idle on other packages: --cpus-per-task 16 or the modifier wide "
           "would give each task 4 cores over 2 packages");
    pinned("witherspoon-p9-6xv100-gpumem-numa.xml", (shape){2, 1, 0, "local,wide"}, 0,
           "without wide it keeps to its GPU's package (2 cores)");
    pinned("juwels-booster-4xa100-epyc7402-nps4.xml", (shape){32, 0, 0, "local"}, 5,
           "the moved cut of 48 cores among 32 tasks won (the same slices, fewer CPU groups "
           "split: 0 against 10 for the consecutive cut)");
    pinned("r630-offline-cpus-offline-node0.xml", (shape){4, 0, 0, "local"}, 2,
           "5 cores: the even share of the 17 allocated cores over 4 tasks is 4, +1 of the cores "
           "left over; inside node 1");
    return tap_done();
}
