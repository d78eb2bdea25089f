/* The planner: topology + job shape -> one CPU slice, memory policy and
 * thread environment per local task. Pure and deterministic.
 *
 * The orchestrator of lib/plan/: nothing in the module calls back into it.
 * Phases (each in its own file, see lib/private/plan.h and docs/planner.md):
 *  (a) domains:  units (cores) laid out domain by domain   domains.c
 *  (b) seating:  GPU tasks home first, spilling by distance seat.c
 *  (c) sizes:    every task's target size                   here
 *  (d) cutting:  CPU-only tasks by the explicit objective   cut.c
 *  (e) memory:   follows the task's domains                 mem.c
 *  (f) threads:  the thread variables (--omp-guard)         threads.c
 *  (g) network:  each task's NICs (--net-affinity)          net.c
 * Shared by the phases: common.c (warnings, a task's GPUs).
 *
 * Sizes: `-c C` is a size, ceil(C / PUs-per-core) cores per task, whenever
 * the step has that many cores for every task; otherwise (and without -c)
 * the step's cores are shared out evenly (floor(cores / tasks), the cores
 * left over as +1s) so the whole allocation is used. With fewer cores than
 * tasks, tasks share cores (seat.c).
 */
#include "private/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (c) target sizes; see the file comment. */
static void set_sizes(ngi_planner *p)
{
    unsigned nt = p->req->ntasks, n = p->n_units;
    unsigned smt = p->max_smt ? p->max_smt : 1;
    p->cap = p->req->cpus_per_task ? (p->req->cpus_per_task + smt - 1) / smt : 0;
    if (p->cap && (unsigned long)p->cap * nt <= n) {
        p->fixed = 1;
        p->base = p->cap;
        p->extra = 0;
    } else {
        p->base = n / nt;
        p->extra = n % nt;
    }
    for (unsigned t = 0; t < nt; t++)
        p->size[t] = p->base;
}

/* GPU tasks stay on their GPU's package unless -c asks for a size (it may
 * need cores beyond) or the user asks with the wide modifier (bound.c). */
static int keep_on_package(const ngi_planner *p)
{
    if (p->req->cpus_per_task || (p->req->policy.mods & NG_MOD_WIDE))
        return 0;
    for (unsigned t = 0; t < p->req->ntasks; t++)
        if (p->home[t])
            return 1;
    return 0;
}

/* What the explanation needs of the sizing (explain.c). */
static void note_sizing(ngi_planner *p)
{
    ngi_sizing *z = &p->plan->sizing;
    *z = (ngi_sizing){.units = p->n_units, .smt = p->max_smt ? p->max_smt : 1, .base = p->base,
                      .extra = p->extra, .fixed = p->fixed};
    for (unsigned t = 0; p->groups && t < p->req->ntasks; t++) {
        int g = p->groups->of_task[t];
        if (g < 0)
            continue;
        p->plan->tsz[t] = (ngi_task_sizing){.pkg_units = p->groups->cap[g],
                                            .pkg_tasks = p->groups->k[g],
                                            .capped = p->groups->capped[g]};
    }
}

/* (d) CPU-only tasks cut the units nobody took, in task order. */
static int cut_cpu_tasks(ngi_planner *p, char *err, size_t errlen)
{
    unsigned nt = p->req->ntasks, k = 0, n = 0;
    unsigned *tasks = malloc(nt * sizeof *tasks), *units = malloc(p->n_units * sizeof *units);
    if (!tasks || !units) {
        free(tasks);
        free(units);
        return ngi_fail(err, errlen, "out of memory");
    }
    for (unsigned t = 0; t < nt; t++)
        if (!p->home[t])
            tasks[k++] = t;
    for (unsigned u = 0; u < p->n_units; u++)
        if (!hwloc_bitmap_isset(p->used, u))
            units[n++] = u;
    if (k)
        ngi_plan_cut_units(p, units, n, tasks, k, p->base, p->extra < k ? p->extra : k, 0);
    free(tasks);
    free(units);
    return 0;
}

/* ---- assembling the plan ---------------------------------------------- */

static ng_plan *plan_alloc(unsigned nt)
{
    ng_plan *plan = calloc(1, sizeof(*plan));
    if (!plan)
        return NULL;
    plan->ntasks = nt;
    plan->tasks = calloc(nt, sizeof(ng_task_plan));
    plan->cpus = calloc(nt, sizeof(hwloc_bitmap_t));
    plan->mems = calloc(nt, sizeof(hwloc_bitmap_t));
    plan->env_store = calloc((size_t)nt * NG_MAX_ENV, sizeof(ng_env_var));
    plan->tsz = calloc(nt, sizeof *plan->tsz);
    if (!plan->tasks || !plan->cpus || !plan->mems || !plan->env_store || !plan->tsz) {
        ng_plan_free(plan);
        return NULL;
    }
    return plan;
}

static int copy_gpus(ngi_planner *p)
{
    const ng_plan_request *req = p->req;
    unsigned total = 0;
    for (unsigned t = 0; t < req->ntasks; t++) {
        unsigned n;
        ngi_plan_req_gpus(req, t, &n);
        total += n;
    }
    p->plan->gpu_store = calloc(total ? total : 1, sizeof(int));
    if (!p->plan->gpu_store)
        return -1;
    unsigned pos = 0;
    for (unsigned t = 0; t < req->ntasks; t++) {
        unsigned n;
        const int *g = ngi_plan_req_gpus(req, t, &n);
        p->plan->tasks[t].gpus = p->plan->gpu_store + pos;
        p->plan->tasks[t].n_gpus = n;
        if (n)
            memcpy(p->plan->gpu_store + pos, g, n * sizeof(int));
        pos += n;
    }
    return 0;
}

static int finish_task(ngi_planner *p, unsigned t, char *err, size_t errlen)
{
    ng_plan *plan = p->plan;
    ng_task_plan *tp = &plan->tasks[t];
    hwloc_bitmap_t cpus = plan->cpus[t] = hwloc_bitmap_alloc();
    unsigned cores = 0;
    int u;
    hwloc_bitmap_foreach_begin(u, p->slice[t]) {
        hwloc_bitmap_or(cpus, cpus, p->units[u].pus);
        cores++;
    } hwloc_bitmap_foreach_end();
    int smt = (p->req->policy.mods & NG_MOD_SMT) != 0;
    tp->local_id = t;
    tp->widened = ngi_plan_released(p, t);
    tp->threads = smt ? (unsigned)hwloc_bitmap_weight(cpus) : cores;
    plan->mems[t] = hwloc_bitmap_alloc();
    tp->mem_mode = ngi_plan_memory(p, t, plan->mems[t]);
    tp->mem_nodes = tp->mem_mode == NG_MEM_MODE_NONE ? NULL : plan->mems[t];
    /* Policy none leaves affinity as Slurm set it; the slice still sizes threads. */
    const ngi_policy_info *pi = ngi_policy_info_of(p->req->policy.kind);
    tp->cpus = pi && pi->binds_cpus ? cpus : NULL;
    if (tp->mem_mode != NG_MEM_MODE_NONE && hwloc_bitmap_iszero(plan->mems[t]))
        return ngi_fail(err, errlen, "task %u: the policy leaves no NUMA node for memory", t);
    ng_env_var *env = plan->env_store + (size_t)t * NG_MAX_ENV;
    int n = ngi_thread_env(&p->req->omp, tp->threads, smt, p->req->thread_vars, env, NG_MAX_ENV);
    if (n < 0)
        return ngi_fail(err, errlen, "too many thread variables (at most %d)", NG_MAX_ENV - 2);
    tp->env = env;
    tp->n_env = (unsigned)n;
    return 0;
}

/* A NIC filter (net_allow / net_deny) that leaves a task without a NIC
 * on a node that has RDMA NICs: said once (the p5 model's EFA devices are
 * rdmap*, so --net-allow mlx5_0 keeps none), with some of the names it
 * could have kept. */
static void warn_filtered_out(ngi_planner *p)
{
    const ng_plan_request *req = p->req;
    unsigned none = 0, nn = ng_topology_nic_count(p->topo), rdma = 0;
    if (!req->nic_filter)
        return;
    for (unsigned t = req->ntasks; t-- > 0;)
        none += !p->plan->tasks[t].n_nics;
    char names[96] = "";
    size_t u = 0;
    for (unsigned i = 0; i < nn; i++) {
        const ng_nic_info *ni = ng_topology_nic(p->topo, i);
        if (!ni->rdma)
            continue;
        if (rdma++ < 3 && u < sizeof names)
            u += (size_t)snprintf(names + u, sizeof names - u, "%s%s", u ? ", " : "", ni->name);
    }
    if (!none || !rdma)
        return;
    ngi_plan_warn(p->plan, "the NIC filter (net_allow/net_deny) leaves %s without a NIC: this "
                          "node's RDMA NICs are %s%s (%u)", none == req->ntasks ? "every task"
                          : none == 1 ? "a task" : "some tasks", names, rdma > 3 ? ", ..." : "",
                  rdma);
}

/* (f) network: each task's NICs from its GPUs (its CPUs without GPUs),
 * lib/options/net_affinity.c, lib/plan/net.c. Off (the default) costs nothing. */
static int plan_network(ngi_planner *p, char *err, size_t errlen)
{
    const ng_plan_request *req = p->req;
    ng_plan *plan = p->plan;
    if (req->net.mode == NG_NET_OFF)
        return 0;
    hwloc_const_cpuset_t *cpus = calloc(req->ntasks, sizeof *cpus);
    if (!cpus)
        return ngi_fail(err, errlen, "out of memory");
    for (unsigned t = 0; t < req->ntasks; t++)
        cpus[t] = plan->tasks[t].cpus;
    ngi_net_request nr = {.aff = req->net, .filter = req->nic_filter, .ntasks = req->ntasks,
                         .task_gpu_count = req->task_gpu_count,
                         .task_gpu_offset = req->task_gpu_offset, .task_gpus = req->task_gpus,
                         .task_cpus = cpus};
    if (!req->task_gpu_offset || !req->task_gpus)
        nr.task_gpu_count = NULL;
    int rc = ngi_net_plan_compute(p->topo, &nr, &plan->net, err, errlen);
    free(cpus);
    for (unsigned t = 0; rc == 0 && t < req->ntasks; t++) {
        ng_task_plan *tp = &plan->tasks[t];
        tp->n_nics = ngi_net_plan_task_nics(plan->net, t, &tp->nics);
        tp->n_net_env = ngi_net_plan_task_env(plan->net, t, &tp->net_env);
    }
    if (rc == 0)
        warn_filtered_out(p);
    return rc;
}

static void planner_free(ngi_planner *p)
{
    ngi_plan_free_domains(p);
    for (unsigned t = 0; p->home && t < p->req->ntasks; t++)
        hwloc_bitmap_free(p->home[t]);
    for (unsigned t = 0; p->slice && t < p->req->ntasks; t++)
        hwloc_bitmap_free(p->slice[t]);
    free(p->home);
    free(p->slice);
    free(p->size);
    hwloc_bitmap_free(p->used);
    ngi_plan_free_groups(p->groups, p->req->ntasks);
}

/* Rule 3: allocated cores no task got are said, once, in the plan's
 * warnings (JSON warnings[], the CLI's stderr, the plugin's task-0 line),
 * with the option that would use them: the modifier wide when GPU tasks
 * were kept on their packages, --cpus-per-task N (N the even share) when
 * it leaves fewer idle. Cores -c leaves idle as asked are not warned
 * about (plan --explain says it). */
static void warn_idle(ngi_planner *p)
{
    unsigned nt = p->req->ntasks, idle = p->n_units - (unsigned)hwloc_bitmap_weight(p->used);
    if (!idle || p->fixed)
        return;
    unsigned even = p->n_units / nt, smt = p->max_smt ? p->max_smt : 1, smallest = ~0u;
    for (unsigned t = 0; t < nt; t++)
        smallest = p->size[t] < smallest ? p->size[t] : smallest;
    int by_c = even > smallest && p->n_units - even * nt < idle;
    int by_wide = p->groups != NULL;
    char c[64] = "";
    if (by_c || !by_wide)
        snprintf(c, sizeof c, "--cpus-per-task %u", even * smt);
    ngi_plan_warn(p->plan, "%u allocated core%s idle: %s%s%s would use %s", idle,
                  idle == 1 ? " stays" : "s stay", c, by_wide && *c ? " or " : "",
                  by_wide ? "the modifier wide" : "", idle == 1 ? "it" : "them");
}

static int plan_steps(ngi_planner *p, char *err, size_t errlen)
{
    unsigned nt = p->req->ntasks;
    if (ngi_plan_build_domains(p, err, errlen) < 0 || copy_gpus(p) < 0)
        return -1;
    p->home = calloc(nt, sizeof(hwloc_bitmap_t));
    p->slice = calloc(nt, sizeof(hwloc_bitmap_t));
    p->size = calloc(nt, sizeof(unsigned));
    p->used = hwloc_bitmap_alloc();
    if (!p->home || !p->slice || !p->size || !p->used)
        return ngi_fail(err, errlen, "out of memory");
    for (unsigned t = 0; t < nt; t++)
        p->slice[t] = hwloc_bitmap_alloc();
    if (ngi_plan_homes(p, err, errlen) < 0)
        return -1;
    if (p->n_units < nt) {
        p->plan->sizing = (ngi_sizing){.units = p->n_units, .smt = p->max_smt, .shared = 1};
        ngi_plan_warn_remote(p);
        if (ngi_plan_share_cores(p, err, errlen) < 0)
            return -1;
    } else {
        set_sizes(p);
        if (keep_on_package(p) && ngi_plan_bound_sizes(p) < 0)
            return ngi_fail(err, errlen, "out of memory");
        note_sizing(p);
        if (ngi_plan_seat_gpus(p, err, errlen) < 0 || cut_cpu_tasks(p, err, errlen) < 0)
            return -1;
        ngi_plan_settle_remote(p);
        ngi_plan_pack_remote(p);
        ngi_plan_warn_remote(p);
        ngi_plan_note_idle(p);
        warn_idle(p);
    }
    ngi_plan_final_cuts(p);
    for (unsigned t = 0; t < nt; t++)
        if (finish_task(p, t, err, errlen) < 0)
            return -1;
    return plan_network(p, err, errlen);
}

int ng_plan_compute(const ng_topology *topo, const ng_plan_request *req,
                    ng_plan **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!topo || !req)
        return ngi_fail(err, errlen, "no topology or request");
    if (req->ntasks == 0 || req->ntasks > NGI_MAX_TASKS)
        return ngi_fail(err, errlen, "number of tasks %u out of range (1-%d)",
                       req->ntasks, NGI_MAX_TASKS);
    ngi_planner p = {.topo = topo, .req = req};
    p.plan = plan_alloc(req->ntasks);
    if (!p.plan)
        return ngi_fail(err, errlen, "out of memory");
    int rc = plan_steps(&p, err, errlen);
    planner_free(&p);
    if (rc < 0) {
        ng_plan_free(p.plan);
        return -1;
    }
    *out = p.plan;
    return 0;
}

void ng_plan_free(ng_plan *plan)
{
    if (!plan)
        return;
    for (unsigned t = 0; t < plan->ntasks; t++) {
        if (plan->cpus)
            hwloc_bitmap_free(plan->cpus[t]);
        if (plan->mems)
            hwloc_bitmap_free(plan->mems[t]);
    }
    free(plan->cpus);
    free(plan->mems);
    free(plan->tasks);
    free(plan->gpu_store);
    free(plan->env_store);
    free(plan->tsz);
    ngi_plan_free_cuts(plan);
    ngi_net_plan_free(plan->net);
    free(plan);
}

unsigned ng_plan_task_count(const ng_plan *plan)
{
    return plan ? plan->ntasks : 0;
}

const ng_task_plan *ng_plan_task(const ng_plan *plan, unsigned local_id)
{
    return plan && local_id < plan->ntasks ? &plan->tasks[local_id] : NULL;
}

unsigned ng_plan_warning_count(const ng_plan *plan)
{
    return plan ? plan->n_warnings : 0;
}

const char *ng_plan_warning(const ng_plan *plan, unsigned i)
{
    return plan && i < plan->n_warnings ? plan->warnings[i] : NULL;
}
