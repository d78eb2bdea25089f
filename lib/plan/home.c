/* Phase (b1): each GPU task's home. A GPU task's home is the allowed units
 * local to its GPUs; a task whose GPUs have none ("remote") gets ONE
 * nearest domain by NUMA distance (ties: the domain holding the most
 * allocated cores in no other home, then the fewest tasks already calling
 * it home, then the lowest). seat.c seats the tasks from their homes; once
 * every slice is cut, ngi_plan_settle_remote may move a remote task to an
 * equally near domain with more cores to spare, and ngi_plan_warn_remote
 * says where each remote GPU's tasks went. */
#include "private/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG 0x7fffffff

/* 1 if @set holds a unit of domain d (hwloc 2.9 has no range query). */
int ngi_plan_touches(const ngi_planner *p, hwloc_const_bitmap_t set, unsigned d)
{
    int u = hwloc_bitmap_next(set, (int)p->doms[d].first - 1);
    return u >= 0 && (unsigned)u < p->doms[d].first + p->doms[d].count;
}

static void units_in(const ngi_planner *p, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (unsigned u = 0; u < p->n_units; u++)
        if (hwloc_bitmap_intersects(p->units[u].pus, cpus))
            hwloc_bitmap_set(out, u);
}

/* Per domain: tasks whose home touches it (claim), and its allocated
 * units no home task will take (left: the units less the share of each
 * task calling it home, the even share or -c's cores, a home over several
 * domains claiming from its first domains first, as its cut fills them);
 * kept as homes are set. A local home
 * claims its tasks' share, not the whole node: the GH200 model with
 * cores 62-133 has node 0's 10 cores and node 1's 62 each claimed by one
 * task of 18; node 1 keeps 44 for the remote tasks, node 0 none. */
typedef struct claims {
    unsigned *claim, *left;
    unsigned share;        /* the even share: units / tasks, at least 1 */
} claims;

static void add_claims(const ngi_planner *p, hwloc_const_bitmap_t home, claims *c)
{
    unsigned want = c->share;
    for (unsigned d = 0; d < p->n_doms; d++) {
        if (!ngi_plan_touches(p, home, d))
            continue;
        c->claim[d]++;
        unsigned take = c->left[d] < want ? c->left[d] : want;
        c->left[d] -= take;
        want -= take;
    }
}

/* Distance from the nearest of @src (OS indices) to domain d; ~0u unknown. */
static unsigned dist_to(const ngi_planner *p, hwloc_const_bitmap_t src, unsigned d)
{
    unsigned dist = ~0u;
    int os;
    hwloc_bitmap_foreach_begin(os, src) {
        unsigned x = ng_topology_distance(p->topo, (unsigned)os,
                                          ng_topology_numa(p->topo, (unsigned)p->doms[d].mem)->os_index);
        if (x && x < dist)
            dist = x;
    } hwloc_bitmap_foreach_end();
    return dist;
}

/* Rule 5: among domains equally near, the one holding more of the
 * allocation that no home task will take (XE8640, GPU 0 remote, cores
 * 24-39: node 2's 12 rather than node 1's 4; GH200, cores 62-133: node 1's
 * 62 shared by one task rather than node 0's 10), then the fewest tasks
 * calling it home (twin remote GPUs spread), then the lowest. */
static int nearer(unsigned dist, unsigned left, unsigned claim, unsigned bdist, unsigned bleft,
                  unsigned bclaim)
{
    if (dist != bdist)
        return dist < bdist;
    if (left != bleft)
        return left > bleft;
    return claim < bclaim;
}

/* The NUMA nodes of task @t's GPUs (OS indices) into @src. */
static void gpu_nodes(const ngi_planner *p, unsigned t, hwloc_bitmap_t src)
{
    unsigned n;
    const int *gpus = ngi_plan_req_gpus(p->req, t, &n);
    hwloc_bitmap_zero(src);
    for (unsigned i = 0; i < n; i++)
        hwloc_bitmap_or(src, src, ng_topology_gpu(p->topo, (unsigned)gpus[i])->numa_nodes);
}

/* Task @t's home: domain @d's units (a home is allocated when it has none). */
void ngi_plan_home_at(ngi_planner *p, unsigned t, unsigned d)
{
    if (!p->home[t])
        p->home[t] = hwloc_bitmap_alloc();
    else
        hwloc_bitmap_zero(p->home[t]);
    hwloc_bitmap_set_range(p->home[t], p->doms[d].first,
                           (int)(p->doms[d].first + p->doms[d].count - 1));
}

static void remote_home(ngi_planner *p, unsigned t, claims *cl)
{
    hwloc_bitmap_t src = hwloc_bitmap_alloc();
    gpu_nodes(p, t, src);
    unsigned best_d = ~0u;
    int best = -1;
    for (unsigned d = 0; d < p->n_doms; d++) {
        unsigned dist = dist_to(p, src, d);
        if (best < 0 || nearer(dist, cl->left[d], cl->claim[d], best_d, cl->left[best],
                               cl->claim[best])) {
            best = (int)d;
            best_d = dist;
        }
    }
    ngi_plan_home_at(p, t, (unsigned)best);
    cl->claim[best]++;
    cl->left[best] = cl->left[best] > cl->share ? cl->left[best] - cl->share : 0;
    hwloc_bitmap_free(src);
}

/* The home domain's node (OS index) of remote task @t. */
static unsigned home_node(const ngi_planner *p, unsigned t)
{
    unsigned d = (unsigned)p->units[hwloc_bitmap_first(p->home[t])].dom;
    return ng_topology_numa(p->topo, (unsigned)p->doms[d].mem)->os_index;
}

/* 1 if tasks @a and @b ask for the same GPU list. */
int ngi_plan_same_gpus(const ngi_planner *p, unsigned a, unsigned b)
{
    unsigned na, nb;
    const int *ga = ngi_plan_req_gpus(p->req, a, &na), *gb = ngi_plan_req_gpus(p->req, b, &nb);
    return na == nb && (na == 0 || memcmp(ga, gb, na * sizeof *ga) == 0);
}

/* Each remote GPU's warning, naming its node and its tasks' home nodes;
 * said once the homes are final (ngi_plan_settle_remote may move a task,
 * so one GPU's tasks can use two nodes: "its tasks use NUMA nodes 4-5"). */
void ngi_plan_warn_remote(ngi_planner *p)
{
    hwloc_bitmap_t src = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    for (unsigned t = 0; t < p->req->ntasks; t++) {
        if (!p->plan->tasks[t].gpu_remote || !p->home[t])
            continue;
        int said = 0;
        hwloc_bitmap_zero(nodes);
        for (unsigned o = 0; o < p->req->ntasks; o++)
            if (p->plan->tasks[o].gpu_remote && p->home[o] && ngi_plan_same_gpus(p, t, o)) {
                said |= o < t;
                hwloc_bitmap_set(nodes, home_node(p, o));
            }
        if (said)
            continue;
        unsigned n;
        const int *gpus = ngi_plan_req_gpus(p->req, t, &n);
        gpu_nodes(p, t, src);
        int known = 0;
        for (unsigned e = 0; e < p->n_doms; e++)
            known |= dist_to(p, src, e) != ~0u;
        char names[128], on[48] = "", uses[64];
        ng_gpu_list_format(p->topo, gpus, n, names, sizeof(names));
        int gos = hwloc_bitmap_first(src);
        if (gos >= 0)
            snprintf(on, sizeof on, " (on NUMA node %d)", gos);
        char list[48];
        hwloc_bitmap_list_snprintf(list, sizeof list, nodes);
        snprintf(uses, sizeof uses, hwloc_bitmap_weight(nodes) > 1 ? "its tasks use NUMA nodes %s"
                                                                   : "its task uses NUMA node %s", list);
        if (known)
            ngi_plan_warn(p->plan, "GPU %s%s: no allowed core is local to it; %s, the nearest with "
                                  "the most cores to spare", names, on, uses);
        else
            ngi_plan_warn(p->plan, "GPU %s%s: no allowed core is local to it and NUMA "
                                  "distances cannot tell which is nearest: %s", names, on, uses);
    }
    hwloc_bitmap_free(src);
    hwloc_bitmap_free(nodes);
}

int ngi_plan_homes(ngi_planner *p, char *err, size_t errlen)
{
    unsigned nt = p->req->ntasks, ngpu = ng_topology_gpu_count(p->topo);
    claims cl = {calloc(p->n_doms, sizeof *cl.claim), calloc(p->n_doms, sizeof *cl.left), 1};
    hwloc_bitmap_t local = hwloc_bitmap_alloc();
    if (!cl.claim || !cl.left || !local) {
        free(cl.claim);
        free(cl.left);
        hwloc_bitmap_free(local);
        return ngi_fail(err, errlen, "out of memory");
    }
    for (unsigned d = 0; d < p->n_doms; d++)
        cl.left[d] = p->doms[d].count;
    cl.share = p->n_units / nt ? p->n_units / nt : 1;
    /* -c as a size (plan.c's set_sizes): each task claims -c's cores. */
    unsigned smt = p->max_smt ? p->max_smt : 1;
    unsigned cap = p->req->cpus_per_task ? (p->req->cpus_per_task + smt - 1) / smt : 0;
    if (cap && (unsigned long)cap * nt <= p->n_units)
        cl.share = cap;
    /* Local homes first, so remote tasks see them when spreading. */
    for (int pass = 0; pass < 2; pass++)
        for (unsigned t = 0; t < nt; t++) {
            unsigned n;
            const int *gpus = ngi_plan_req_gpus(p->req, t, &n);
            if (n == 0 || (pass == 1 && !p->plan->tasks[t].gpu_remote))
                continue;
            if (pass == 1) {
                remote_home(p, t, &cl);
                continue;
            }
            hwloc_bitmap_zero(local);
            for (unsigned i = 0; i < n; i++) {
                if (gpus[i] < 0 || (unsigned)gpus[i] >= ngpu) {
                    hwloc_bitmap_free(local);
                    free(cl.claim);
                    free(cl.left);
                    return ngi_fail(err, errlen, "task %u: GPU index %d is not a GPU of this "
                                                "topology (it has %u)", t, gpus[i], ngpu);
                }
                hwloc_bitmap_or(local, local, ng_topology_gpu(p->topo, (unsigned)gpus[i])->cpus);
            }
            p->home[t] = hwloc_bitmap_alloc();
            units_in(p, local, p->home[t]);
            if (hwloc_bitmap_iszero(p->home[t])) {
                hwloc_bitmap_free(p->home[t]);
                p->home[t] = NULL;
                p->plan->tasks[t].gpu_remote = 1;
            } else {
                add_claims(p, p->home[t], &cl);
            }
        }
    hwloc_bitmap_free(local);
    free(cl.claim);
    free(cl.left);
    return 0;
}

/* ---- settling remote tasks (after every slice is cut) ------------------ */

/* Per domain: @own, task t's units there; @avail, its units there that no
 * other task holds (its own and the idle ones). Returns its main domain
 * (the most of its units; ties: the lowest). */
static unsigned domain_counts(const ngi_planner *p, unsigned t, unsigned *own, unsigned *avail)
{
    unsigned main = 0;
    for (unsigned d = 0; d < p->n_doms; d++) {
        own[d] = avail[d] = 0;
        for (unsigned u = p->doms[d].first; u < p->doms[d].first + p->doms[d].count; u++) {
            int mine = hwloc_bitmap_isset(p->slice[t], u);
            own[d] += (unsigned)mine;
            avail[d] += (unsigned)(mine || !hwloc_bitmap_isset(p->used, u));
        }
        if (own[d] > own[main])
            main = d;
    }
    return main;
}

/* Task t's slice again: @take units of domain d that no other task holds
 * (the most compact run of them), the rest of its old units nearest d. */
static void move_to(ngi_planner *p, unsigned t, unsigned d, unsigned take)
{
    unsigned first = p->doms[d].first, cnt = p->doms[d].count, n = 0, best = 0;
    unsigned s = (unsigned)hwloc_bitmap_weight(p->slice[t]);
    unsigned *cand = malloc((cnt ? cnt : 1) * sizeof *cand);
    hwloc_bitmap_t old = hwloc_bitmap_dup(p->slice[t]);
    if (!cand || !old) {
        free(cand);
        hwloc_bitmap_free(old);
        return;
    }
    for (unsigned u = first; u < first + cnt; u++)
        if (hwloc_bitmap_isset(old, u) || !hwloc_bitmap_isset(p->used, u))
            cand[n++] = u;
    for (unsigned i = 1; i + take <= n; i++)
        if (cand[i + take - 1] - cand[i] < cand[best + take - 1] - cand[best])
            best = i;
    hwloc_bitmap_andnot(p->used, p->used, old);
    hwloc_bitmap_zero(p->slice[t]);
    for (unsigned i = best; i < best + take; i++)
        hwloc_bitmap_set(p->slice[t], cand[i]);
    /* The rest: the old units off d, nearest d first (distance, then place
     * on the line). */
    for (unsigned k = take; k < s; k++) {
        int pick = -1, u;
        hwloc_bitmap_foreach_begin(u, old) {
            unsigned du = (unsigned)p->units[u].dom;
            if (du == d || hwloc_bitmap_isset(p->slice[t], (unsigned)u))
                continue;
            unsigned dp = pick < 0 ? 0 : (unsigned)p->units[pick].dom;
            if (pick < 0 || p->dist[d * p->n_doms + du] < p->dist[d * p->n_doms + dp])
                pick = u;
        } hwloc_bitmap_foreach_end();
        if (pick < 0)
            break;
        hwloc_bitmap_set(p->slice[t], (unsigned)pick);
    }
    hwloc_bitmap_or(p->used, p->used, p->slice[t]);
    ngi_plan_home_at(p, t, d);
    free(cand);
    hwloc_bitmap_free(old);
}

/* One remote task: moved to the domain as near its GPU as its main one
 * that holds the most units no other task holds, where it can be that
 * domain's main task (more than half its cores there). 1 if moved. */
static int settle_one(ngi_planner *p, unsigned t, unsigned *own, unsigned *avail, hwloc_bitmap_t src)
{
    unsigned m = domain_counts(p, t, own, avail), s = (unsigned)hwloc_bitmap_weight(p->slice[t]);
    gpu_nodes(p, t, src);
    unsigned dm = dist_to(p, src, m);
    int best = -1;
    for (unsigned d = 0; d < p->n_doms && dm != ~0u; d++) {
        unsigned take = avail[d] < s ? avail[d] : s;
        if (d != m && dist_to(p, src, d) == dm && avail[d] > avail[m] && take > s - take &&
            (best < 0 || avail[d] > avail[best]))
            best = (int)d;
    }
    if (best < 0)
        return 0;
    move_to(p, t, (unsigned)best, avail[best] < s ? avail[best] : s);
    ngi_plan_record_relaid(p, &t, 1, NGI_CUT_WHAT_MOVED, 0, 0);
    return 1;
}

/* docs/planner.md rule 4, once the slices are cut: a remote task's domain was chosen from
 * the even shares and -c's claims, before the local tasks were seated;
 * what they left can make an equally near domain the one with the most
 * cores to spare (Corona, cores 18-35,66-83, 16 tasks -c 2: GPU 3's task
 * on node 4 with 1 core no other task holds, node 5 as near with 2). Such
 * a task moves there; a move only ever goes to more spare cores, and the
 * passes are bounded. Sizes and the idle count stay as they are. */
void ngi_plan_settle_remote(ngi_planner *p)
{
    unsigned nt = p->req->ntasks;
    unsigned *own = calloc(p->n_doms, sizeof *own), *avail = calloc(p->n_doms, sizeof *avail);
    hwloc_bitmap_t src = hwloc_bitmap_alloc();
    int moved = 1;
    for (unsigned pass = 0; own && avail && src && moved && pass < 4; pass++) {
        moved = 0;
        for (unsigned t = 0; t < nt; t++)
            if (p->plan->tasks[t].gpu_remote && p->home[t] && !hwloc_bitmap_iszero(p->slice[t]))
                moved |= settle_one(p, t, own, avail, src);
    }
    free(own);
    free(avail);
    hwloc_bitmap_free(src);
}

