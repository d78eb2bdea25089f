/* ng_plan_explain over every corpus topology and a few job shapes: the
 * terms are the plan's (cores, NUMA nodes, packages of each task's CPUs),
 * every task belongs to a recorded cut whose chosen family scores best by
 * the objective and its tie-breaks, and every alternative a sentence names
 * does what it says when planned: "--cpus-per-task N keeps it on its GPU's
 * node", "keeps every task inside one NUMA node", "would give each task K
 * cores over P packages". Plus the pinned sentences of the cases. */
#include "numaguard.h"
#include "tap.h"
#include "corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_DIR CORPUS_DIR

static unsigned long checked, claims, lines;

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
    int busy;   /* allowed: cores 3/8 to 3/4 of the node (a busy node) */
} shape;

static hwloc_bitmap_t busy_cpus(const ng_topology *topo)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    int n = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    hwloc_bitmap_t out = hwloc_bitmap_alloc();
    for (int i = 3 * n / 8; i < 3 * n / 4; i++)
        hwloc_bitmap_or(out, out, hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)i)->cpuset);
    hwloc_bitmap_and(out, out, ng_topology_allowed_cpus(topo));
    return out;
}

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
    static hwloc_bitmap_t busy;
    hwloc_bitmap_free(busy);
    busy = s->busy ? busy_cpus(topo) : NULL;
    req->allowed_cpus = busy;
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

/* The request with an alternative's arguments in place of the same
 * options, parsed as `numaguard plan` parses them; NULL if it fails. */
static ng_plan *replan(const ng_topology *topo, const ng_plan_request *req,
                       const ng_plan_alternative *a)
{
    ng_plan_request r = *req;
    for (unsigned i = 0; i + 1 < a->n_args; i += 2) {
        if (strcmp(a->args[i], "--cpus-per-task") == 0)
            r.cpus_per_task = (unsigned)strtoul(a->args[i + 1], NULL, 10);
        else if (strcmp(a->args[i], "--numa-policy") == 0) {
            if (ng_policy_parse(a->args[i + 1], &r.policy, NULL, 0) < 0)
                return NULL;
        } else
            return NULL;
    }
    ng_plan *pl = NULL;
    return ng_plan_compute(topo, &r, &pl, NULL, 0) == 0 ? pl : NULL;
}

/* Every alternative, planned again from its arguments: task t gets the
 * CPUs and memory nodes it promises. */
static int check_alternatives(const ng_topology *topo, const ng_plan_request *req, unsigned t,
                              const ng_task_terms *w, char *why, size_t len)
{
    for (unsigned k = 0; k < w->n_alternatives; k++) {
        const ng_plan_alternative *a = &w->alternatives[k];
        ng_plan *pl = replan(topo, req, a);
        char cpus[8192] = "";
        const ng_task_plan *tp = pl ? ng_plan_task(pl, t) : NULL;
        if (tp)
            ng_list_format(tp->cpus, cpus, sizeof cpus);
        int good = tp && strcmp(cpus, a->cpus) == 0 &&
                   (tp->mem_nodes ? hwloc_bitmap_isequal(tp->mem_nodes, a->mem_nodes)
                                  : hwloc_bitmap_iszero(a->mem_nodes)) &&
                   strstr(w->why, a->says) && strstr(a->says, a->args[0]);
        claims++;
        if (!good)
            snprintf(why, len, "task %u: '%s %s' planned gives %s, not %s ('%.80s')", t,
                     a->args[0], a->args[1], cpus, a->cpus, a->says);
        ng_plan_free(pl);
        if (!good)
            return 0;
    }
    return 1;
}

/* Every line at most 100 characters; a sentence counts cores or CPUs,
 * never both; a GPU task's second line starts from its GPU's node. */
static int check_lines(const ng_task_plan *tp, const char *text, char *why, size_t len)
{
    for (const char *l = text; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        char one[256];
        snprintf(one, sizeof one, "%.*s", (int)(n < 255 ? n : 255), l);
        lines++;
        if (n > 100 || n == 0 || (strstr(one, " CPUs") && strstr(one, " core"))) {
            snprintf(why, len, "task %u: line '%.120s' (%zu characters)", tp->local_id, one, n);
            return 0;
        }
        if (l != text && l == strchr(text, '\n') + 1 && tp->n_gpus && !tp->shares_cores &&
            !strstr(one, "its GPU") && !tp->gpu_remote) {
            snprintf(why, len, "task %u: '%.100s' not from its GPU's node", tp->local_id, one);
            return 0;
        }
        l = e ? e + 1 : NULL;
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
    return good && check_lines(tp, w->why, why, len) &&
           check_alternatives(topo, req, t, w, why, len);
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

/* The shapes below on one corpus topology; 0 (stop) at the first that
 * fails, said with the file's name. */
static int explain_one(const ng_topology *topo, const char *name, void *good)
{
    unsigned ngpu = ng_topology_gpu_count(topo);
    char why[512] = "";
    shape shapes[] = {{1, 0, 0, "local", 0}, {3, 0, 0, "local", 0}, {8, 0, 0, "prefer", 0},
                      {4, 0, 4, "local", 0}, {ngpu, 1, 0, "local", 0},
                      {ngpu ? ngpu * 2 : 0, 1, 0, "local", 0}, {ngpu, 1, 8, "local", 0},
                      {ngpu, 1, 0, "local,wide", 0}, {2, 0, 0, "none", 0},
                      {1, 1, 0, "local", 0}, {1, 1, 0, "local", 1}, {ngpu, 1, 0, "prefer", 1},
                      {3, 0, 0, "local", 1}, {3, 0, 8, "local,cpuless", 1},
                      {ngpu ? ngpu * 3 : 0, 1, 0, "local", 1}};
    int ok_so_far = 1;
    for (unsigned k = 0; ok_so_far && k < sizeof shapes / sizeof *shapes; k++)
        if (shapes[k].nt && shapes[k].nt <= 64 && (!shapes[k].gpt || ngpu))
            ok_so_far = run_shape(topo, &shapes[k], why, sizeof why);
    if (!ok_so_far)
        tap_diag("%s: %s", name, why);
    *(int *)good = ok_so_far;
    return ok_so_far;
}

static void corpus(void)
{
    int good = 1;
    int topos = corpus_each(CORPUS_DIR, explain_one, &good);
    ok(good && topos >= 40, "corpus: terms are the plan's, the chosen cut scores best, lines of "
       "at most 100 characters, every alternative planned again from its arguments gives the "
       "CPUs and memory nodes it promises (%d topologies, %lu plans, %lu lines, %lu alternatives "
       "re-planned, all equal)", topos, checked, lines, claims);
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
    char got[1024] = "", said[512];
    /* one TAP line: the lines joined by " / " */
    for (size_t i = 0, o = 0; w && w->why[i] && o + 4 < sizeof got; i++)
        o += (size_t)snprintf(got + o, sizeof got - o, "%s", w->why[i] == '\n' ? " / " : (char[]){w->why[i], 0});
    for (size_t i = 0, o = 0; want[i] && o + 4 < sizeof said; i++)
        o += (size_t)snprintf(said + o, sizeof said - o, "%s", want[i] == '\n' ? " / " : (char[]){want[i], 0});
    ok(w && strstr(w->why, want), "%s, %u tasks: task %u says '%s'%s%s", file, s.nt, t, said,
       w ? "; got: " : "", got);
    ng_plan_explanation_free(x);
    ng_plan_free(plan);
    ng_topology_free(topo);
}

int main(void)
{
    corpus();
    pinned("xe8640-4xh100-spr8480-snc4.xml", (shape){4, 1, 0, "local", 0}, 0,
           "28 cores: its GPU's socket has 56 allocated cores for 2 GPU tasks\n14 on its GPU's "
           "node, 14 on the next node: the same socket (distance 12)\n--cpus-per-task 28 would "
           "keep it on its GPU's node: 28 CPUs");
    pinned("witherspoon-p9-6xv100-gpumem-numa.xml", (shape){2, 1, 0, "local,cpuless", 0}, 1,
           "4 allocated cores on other sockets stay idle (the plan warns)\n--cpus-per-task 16 "
           "would use them: 16 CPUs for it, over 2 sockets\n--numa-policy local,cpuless,wide "
           "would use them: 4 cores for it, over 2 sockets");
    pinned("witherspoon-p9-6xv100-gpumem-numa.xml", (shape){2, 1, 0, "local,wide", 0}, 0,
           "--numa-policy local (no wide) would keep it on one socket: 2 cores");
    pinned("juwels-booster-4xa100-epyc7402-nps4.xml", (shape){32, 0, 0, "local", 0}, 5,
           "the 48 cores were split among 32 tasks, in task order, the +1s moved\nthat split won "
           "by fewer CPU groups split: 0, 10 split in task order");
    pinned("r630-offline-cpus-offline-node0.xml", (shape){4, 0, 0, "local", 0}, 2,
           "5 cores: the even share of 17 allocated cores over 4 tasks, plus one left over\n"
           "inside one NUMA node");
    pinned("corona-naples-4xmi50-opencl.xml", (shape){3, 0, 32, "local", 0}, 0,
           "32 CPUs, as --cpus-per-task 32 asks");
    return tap_done();
}
