/* --net-affinity: the NIC(s) of each task of a node and the variables they
 * get (UCX_NET_DEVICES, OMPI_MCA_btl_openib_if_include, NVSHMEM_HCA_LIST,
 * NCCL_IB_HCA). The planner's last phase (plan.c calls it); pure.
 * docs/network.md has the rules and the libraries' variables. */
#include "private/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NET_VARS 4   /* variables per task at most */

typedef uint64_t nicmask;  /* bit i = topology NIC i (NG_MAX_NICS = 64) */

struct ngi_net_plan {
    unsigned ntasks;
    unsigned *n_nics, *nics;       /* task t: n_nics[t] entries at nics[t * NG_MAX_NICS] */
    unsigned *n_env;
    ng_net_env *env;               /* task t: n_env[t] entries at env[t * NET_VARS] */
    char nccl[NG_NET_VALUE_LEN];
};

/* Tie groups: tasks whose nearest NICs are the same set take them in turn. */
typedef struct tie_counter {
    unsigned n;
    nicmask key[NG_MAX_NICS * 4];
    unsigned next[NG_MAX_NICS * 4];
} tie_counter;

static unsigned tie_take(tie_counter *tc, nicmask set)
{
    unsigned i = 0;
    while (i < tc->n && tc->key[i] != set)
        i++;
    if (i == tc->n && tc->n < NGI_ARRAY_LEN(tc->key)) {
        tc->key[tc->n] = set;
        tc->next[tc->n++] = 0;
    }
    if (i == NGI_ARRAY_LEN(tc->key))
        return 0;
    return tc->next[i]++;
}

/* The k-th NIC (in index order) of set, k taken modulo its size. */
static unsigned mask_nth(nicmask set, unsigned k)
{
    unsigned size = (unsigned)__builtin_popcountll(set);
    k %= size;
    for (unsigned i = 0; i < NG_MAX_NICS; i++)
        if ((set >> i & 1) && k-- == 0)
            return i;
    return 0;
}

/* Candidates at the smallest distance from GPU g (g < 0: from cpus). */
static nicmask nearest(const ng_topology *topo, nicmask cand, int g, hwloc_const_cpuset_t cpus)
{
    nicmask best = 0;
    unsigned bestd = NG_PCI_SYSTEM + 1;
    for (unsigned i = 0; i < NG_MAX_NICS; i++) {
        if (!(cand >> i & 1))
            continue;
        unsigned d = g >= 0 ? ng_topology_gpu_nic_distance(topo, (unsigned)g, i)
                            : ngi_topology_cpus_nic_distance(topo, cpus, i);
        if (d < bestd)
            best = 0, bestd = d;
        if (d == bestd)
            best |= (nicmask)1 << i;
    }
    return best;
}

/* A task's distance to NIC i: the smallest over its GPUs (its CPUs if none). */
static unsigned task_distance(const ng_topology *topo, const int *gpus, unsigned ng,
                              hwloc_const_cpuset_t cpus, unsigned i)
{
    if (!ng)
        return ngi_topology_cpus_nic_distance(topo, cpus, i);
    unsigned best = NG_PCI_SYSTEM;
    for (unsigned k = 0; k < ng; k++) {
        unsigned d = ng_topology_gpu_nic_distance(topo, (unsigned)gpus[k], i);
        best = d < best ? d : best;
    }
    return best;
}

typedef struct task_in {
    const int *gpus;
    unsigned ng;
    hwloc_const_cpuset_t cpus;
} task_in;

/* Append i to list (no duplicates). */
static void list_add(unsigned *list, unsigned *n, unsigned i)
{
    for (unsigned k = 0; k < *n; k++)
        if (list[k] == i)
            return;
    list[(*n)++] = i;
}

/* Stable sort of list by the task's distance (insertion sort, <= 64). */
static void sort_by_distance(const ng_topology *topo, const task_in *ti, unsigned *list, unsigned n)
{
    unsigned d[NG_MAX_NICS];
    for (unsigned k = 0; k < n; k++)
        d[k] = task_distance(topo, ti->gpus, ti->ng, ti->cpus, list[k]);
    for (unsigned a = 1; a < n; a++)
        for (unsigned b = a; b > 0 && d[b - 1] > d[b]; b--) {
            unsigned x = d[b]; d[b] = d[b - 1]; d[b - 1] = x;
            x = list[b]; list[b] = list[b - 1]; list[b - 1] = x;
        }
}

/* Auto gives a task every NIC equally near each of its GPUs, at most this
 * many per GPU (per task without GPUs): on an AWS p5 each H100 has 4 EFA
 * adapters behind its PCIe switch, and aws-ofi-nccl pairs the GPU with all
 * of them. The cap keeps a CPU-only task, or a GPU with no switch-near
 * adapter, from being handed every adapter of a socket (docs/network.md). */
#define NET_AUTO_PER_GPU 4

/* Add the NICs of set to out, from its k-th (tie rotation) on, around,
 * at most max of them. */
static void add_rotated(unsigned *out, unsigned *n, nicmask set, unsigned k, unsigned max)
{
    unsigned size = (unsigned)__builtin_popcountll(set);
    for (unsigned j = 0; j < size && j < max; j++)
        list_add(out, n, mask_nth(set, k + j));
}

/* One task's NICs, nearest first. Per GPU (or for its CPUs) the candidates
 * at the smallest distance: first one of them per GPU, taken in turn among
 * the tasks that tie on the same set (the lists of tasks sharing adapters
 * start on different ones), then the rest of each set in the same turn,
 * up to NET_AUTO_PER_GPU per GPU. With a count, then the other candidates
 * by distance, and the list is cut at count instead. */
static unsigned task_nics(const ng_topology *topo, const ng_net_affinity *a, nicmask cand,
                          const task_in *ti, tie_counter *tc, unsigned *out)
{
    unsigned n = 0, ng = ti->ng ? ti->ng : 1, first[NG_MAX_GPUS + 1];
    nicmask near[NG_MAX_GPUS + 1];
    for (unsigned k = 0; k < ng && k <= NG_MAX_GPUS; k++) {
        near[k] = nearest(topo, cand, ti->ng ? ti->gpus[k] : -1, ti->cpus);
        first[k] = near[k] ? tie_take(tc, near[k]) : 0;
        if (near[k])
            list_add(out, &n, mask_nth(near[k], first[k]));
    }
    unsigned per = a->mode == NG_NET_COUNT ? NG_MAX_NICS : NET_AUTO_PER_GPU;
    for (unsigned k = 0; k < ng && k <= NG_MAX_GPUS; k++)
        if (near[k])
            add_rotated(out, &n, near[k], first[k], per);
    sort_by_distance(topo, ti, out, n);
    if (a->mode != NG_NET_COUNT)
        return n;
    unsigned rest[NG_MAX_NICS], nr = 0;
    for (unsigned i = 0; i < NG_MAX_NICS; i++)
        if (cand >> i & 1)
            list_add(rest, &nr, i);
    sort_by_distance(topo, ti, rest, nr);
    for (unsigned k = 0; k < nr; k++)
        list_add(out, &n, rest[k]);
    return n < a->count ? n : a->count;
}

/* Ports to name: those found ACTIVE, else every known port, else port 1. */
static uint32_t export_ports(const ng_nic_info *ni)
{
    if (ni->ports_active)
        return ni->ports_active;
    return ni->ports ? ni->ports : 1u << 1;
}

/* Append NIC entries ("mlx5_0:1", or a plain interface name) to buf;
 * an entry that does not fit is dropped whole. */
static void append_nic(char *buf, size_t len, const ng_nic_info *ni)
{
    uint32_t ports = ni->rdma ? export_ports(ni) : 1u << 1;
    for (unsigned p = 1; p < 32; p++) {
        if (!(ports >> p & 1))
            continue;
        char e[NG_NIC_NAME_LEN + 16];
        if (ni->rdma)
            snprintf(e, sizeof e, "%s:%u", ni->name, p);
        else
            snprintf(e, sizeof e, "%s", ni->netdev[0] ? ni->netdev : ni->name);
        size_t used = strlen(buf), need = strlen(e) + (used ? 1 : 0);
        if (used + need < len)
            snprintf(buf + used, len - used, "%s%s", used ? "," : "", e);
    }
}

static void list_value(const ng_topology *topo, const unsigned *nics, unsigned n, int rdma_only,
                       char *buf, size_t len)
{
    buf[0] = '\0';
    for (unsigned k = 0; k < n; k++) {
        const ng_nic_info *ni = ng_topology_nic(topo, nics[k]);
        if (ni && (ni->rdma || !rdma_only))
            append_nic(buf, len, ni);
    }
}

/* NCCL's exact-match form: "=" then the list (room kept for the "="). */
static void nccl_form(char *buf, size_t len, const char *list)
{
    buf[0] = '\0';
    if (*list && len > 1) {
        buf[0] = '=';
        ngi_strlcpy(buf + 1, list, len - 1);
    }
}

static void env_add(ng_net_env *env, unsigned *n, const char *name, const char *value, int force)
{
    if (!*value)
        return;
    ng_net_env *e = &env[(*n)++];
    ngi_strlcpy(e->name, name, sizeof e->name);
    ngi_strlcpy(e->value, value, sizeof e->value);
    e->overwrite = force;
}

static void task_env(const ng_topology *topo, const ngi_net_plan *np, const ng_net_affinity *a,
                     const unsigned *nics, unsigned n, int has_gpu, ng_net_env *env,
                     unsigned *nenv)
{
    char v[NG_NET_VALUE_LEN], nccl[NG_NET_VALUE_LEN];
    *nenv = 0;
    list_value(topo, nics, n, 0, v, sizeof v);
    env_add(env, nenv, "UCX_NET_DEVICES", v, a->force);
    list_value(topo, nics, n, 1, v, sizeof v - 1);
    env_add(env, nenv, "OMPI_MCA_btl_openib_if_include", v, a->force);
    if (has_gpu)
        env_add(env, nenv, "NVSHMEM_HCA_LIST", v, a->force);
    /* "=" makes NCCL match names exactly (mlx5_1 would also match mlx5_10). */
    if (a->nccl_per_rank)
        nccl_form(nccl, sizeof nccl, v);
    else
        snprintf(nccl, sizeof nccl, "%s", np->nccl);
    env_add(env, nenv, "NCCL_IB_HCA", nccl, a->force);
}

/* The node's NCCL_IB_HCA: the admitted RDMA NICs nearest to some GPU of
 * the topology (every GPU, not only the step's: the same on every node
 * alike, whatever a step holds), in NIC order. "" on a node without GPUs. */
static void node_nccl(const ng_topology *topo, nicmask cand, char *buf, size_t len)
{
    nicmask rdma = 0, all = 0;
    for (unsigned i = 0; i < NG_MAX_NICS; i++)
        if ((cand >> i & 1) && ng_topology_nic(topo, i)->rdma)
            rdma |= (nicmask)1 << i;
    for (unsigned g = 0; rdma && g < ng_topology_gpu_count(topo); g++)
        all |= nearest(topo, rdma, (int)g, NULL);
    unsigned list[NG_MAX_NICS], n = 0;
    for (unsigned i = 0; i < NG_MAX_NICS; i++)
        if (all >> i & 1)
            list[n++] = i;
    char v[NG_NET_VALUE_LEN];
    list_value(topo, list, n, 1, v, sizeof v - 1);
    nccl_form(buf, len, v);
}

void ngi_net_plan_free(ngi_net_plan *np)
{
    if (!np)
        return;
    free(np->n_nics);
    free(np->nics);
    free(np->n_env);
    free(np->env);
    free(np);
}

static ngi_net_plan *plan_alloc(unsigned ntasks)
{
    ngi_net_plan *np = calloc(1, sizeof *np);
    if (!np)
        return NULL;
    np->ntasks = ntasks;
    np->n_nics = calloc(ntasks, sizeof *np->n_nics);
    np->nics = calloc((size_t)ntasks * NG_MAX_NICS, sizeof *np->nics);
    np->n_env = calloc(ntasks, sizeof *np->n_env);
    np->env = calloc((size_t)ntasks * NET_VARS, sizeof *np->env);
    if (!np->n_nics || !np->nics || !np->n_env || !np->env) {
        ngi_net_plan_free(np);
        return NULL;
    }
    return np;
}

static int check_request(const ng_topology *topo, const ngi_net_request *r, char *err,
                         size_t errlen)
{
    if (!topo || !r || r->ntasks < 1 || r->ntasks > 65536)
        return ngi_fail(err, errlen, "network plan: no topology or no tasks");
    if (!r->task_gpu_count)
        return 0;
    if (!r->task_gpu_offset || !r->task_gpus)
        return ngi_fail(err, errlen, "network plan: incomplete per-task GPU lists");
    for (unsigned t = 0; t < r->ntasks; t++)
        for (unsigned k = 0; k < r->task_gpu_count[t]; k++) {
            int g = r->task_gpus[r->task_gpu_offset[t] + k];
            if (g < 0 || (unsigned)g >= ng_topology_gpu_count(topo))
                return ngi_fail(err, errlen, "network plan: task %u names GPU %d, the topology "
                               "has %u", t, g, ng_topology_gpu_count(topo));
        }
    return 0;
}

static nicmask candidates(const ng_topology *topo, const ng_nic_filter *f)
{
    nicmask cand = 0;
    for (unsigned i = 0; i < ng_topology_nic_count(topo) && i < NG_MAX_NICS; i++)
        if (ng_nic_filter_admits(f, ng_topology_nic(topo, i)))
            cand |= (nicmask)1 << i;
    return cand;
}

int ngi_net_plan_compute(const ng_topology *topo, const ngi_net_request *r, ngi_net_plan **out,
                        char *err, size_t errlen)
{
    if (!out)
        return ngi_fail(err, errlen, "network plan: no output pointer");
    *out = NULL;
    if (check_request(topo, r, err, errlen) < 0)
        return -1;
    ngi_net_plan *np = plan_alloc(r->ntasks);
    tie_counter *tc = calloc(1, sizeof *tc);
    if (!np || !tc) {
        free(tc);
        ngi_net_plan_free(np);
        return ngi_fail(err, errlen, "out of memory");
    }
    nicmask cand = r->aff.mode == NG_NET_OFF ? 0 : candidates(topo, r->filter);
    if (cand)
        node_nccl(topo, cand, np->nccl, sizeof np->nccl);
    for (unsigned t = 0; cand && t < r->ntasks; t++) {
        task_in ti = {NULL, 0, ng_topology_allowed_cpus(topo)};
        if (r->task_gpu_count) {
            ti.ng = r->task_gpu_count[t];
            ti.gpus = r->task_gpus + r->task_gpu_offset[t];
        }
        if (r->task_cpus && r->task_cpus[t] && !hwloc_bitmap_iszero(r->task_cpus[t]))
            ti.cpus = r->task_cpus[t];
        unsigned *nics = np->nics + (size_t)t * NG_MAX_NICS;
        np->n_nics[t] = task_nics(topo, &r->aff, cand, &ti, tc, nics);
        task_env(topo, np, &r->aff, nics, np->n_nics[t], ti.ng > 0,
                 np->env + (size_t)t * NET_VARS, &np->n_env[t]);
    }
    free(tc);
    *out = np;
    return 0;
}

unsigned ngi_net_plan_task_nics(const ngi_net_plan *np, unsigned task, const unsigned **nics)
{
    if (!np || task >= np->ntasks) {
        if (nics)
            *nics = NULL;
        return 0;
    }
    if (nics)
        *nics = np->nics + (size_t)task * NG_MAX_NICS;
    return np->n_nics[task];
}

unsigned ngi_net_plan_task_env(const ngi_net_plan *np, unsigned task, const ng_net_env **env)
{
    if (!np || task >= np->ntasks) {
        if (env)
            *env = NULL;
        return 0;
    }
    if (env)
        *env = np->env + (size_t)task * NET_VARS;
    return np->n_env[task];
}

const char *ngi_net_plan_nccl_hca(const ngi_net_plan *np)
{
    return np ? np->nccl : "";
}
