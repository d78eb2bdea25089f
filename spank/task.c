/* The plugin in each task (slurm_spank_task_init, as the user, just before
 * exec; docs/plugin.md): identify the task's real GPUs, exchange them with
 * the step's other tasks and re-plan when they differ from the step's
 * prediction (or keep the CPUs of a user --cpu-bind), apply the task's
 * plan entry through ng_apply_task_with with SPANK's env as the task env,
 * and say what was done (the verbose line; the step's failure and
 * warnings once per node, by local task 0). Moved out of
 * spank/numaguard.c unchanged: it is handed the step (the task's own
 * copy, forked from slurmstepd) and the plugstack.conf arguments. */
#include "ng_spank.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What slurm_spank_task_init handed in: set once per task, at its start. */
static const ng_spank_conf *t_conf;
static ng_step *t_step;   /* the task's copy (forked): a failure is written into it */

typedef struct task_ctx {
    spank_t sp;
} task_ctx;

static int env_is_set(void *ctx, const char *name)
{
    char buf[8];
    spank_err_t rc = spank_getenv(((task_ctx *)ctx)->sp, name, buf, sizeof buf);
    return rc == ESPANK_SUCCESS || rc == ESPANK_NOSPACE;
}

static int env_set(void *ctx, const char *name, const char *value)
{
    return spank_setenv(((task_ctx *)ctx)->sp, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
}

/* A preset value, so the verbose line can name what --omp-guard kept. */
static int env_get(void *ctx, const char *name, char *buf, size_t len)
{
    return spank_getenv(((task_ctx *)ctx)->sp, name, buf, (int)len) == ESPANK_SUCCESS ? 0 : -1;
}

/* One line on the task's stderr (task_init runs in the task process). */
static void task_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void task_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdprintf(2, fmt, ap);
    va_end(ap);
}


/* The task's real GPUs, from the env Slurm gave this task. SLURM_JOB_GPUS
 * is not read: the job's list is no evidence for a step (task_gpus.c). */
static int task_gpus(spank_t sp, int *idx, unsigned *n, char *err, size_t errlen)
{
    static const char *const names[] = {"SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "GPU_DEVICE_ORDINAL"};
    char vals[5][NG_MAX_ARG + 1];
    const char *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = ng_spank_job_env(sp, names[i], vals[i], sizeof vals[i]);
    ng_gpu_env env = {p[0], NULL, p[1], p[2], p[3], p[4]};
    *n = 0;
#ifdef NG_FAULT_INJECTION
    if ((p[0] || p[1] || p[2] || p[3] || p[4]) &&
        ng_fault_gpu_lookup(t_conf->test_fault, err, errlen) < 0)
        return -1;
#endif
    /* The rule (a step without GPUs has none; the devices cgroup; then the
     * variables) is the library's. */
    return ng_step_task_gpus(t_step->topo, t_step->have_order ? &t_step->order : NULL,
                             t_step->n_step_gpus, &env,
                             t_conf->pc.fsroot[0] ? t_conf->pc.fsroot : NULL,
                             idx, NG_MAX_GPUS, n, err, errlen);
}

/* Same set of GPU indices (order ignored; both lists have unique entries). */
static int same_list(const int *a, unsigned na, const int *b, unsigned nb)
{
    if (na != nb)
        return 0;
    for (unsigned i = 0; i < nb; i++) {
        int found = 0;
        for (unsigned j = 0; j < na; j++)
            found |= a[j] == b[i];
        if (!found)
            return 0;
    }
    return 1;
}

static int same_gpus(const ng_task_plan *tp, const int *idx, unsigned n)
{
    return same_list(tp->gpus, tp->n_gpus, idx, n);
}

/* Under a user --cpu-bind: a one-task plan over the CPUs Slurm bound this
 * task to, so memory nodes and thread counts match that mask. */
static int keep_cpus_plan(const int *gpus, unsigned ngpus, ng_plan **out, char *err, size_t len)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (!mine || ng_current_cpus(mine) < 0) {
        hwloc_bitmap_free(mine);
        snprintf(err, len, "cannot read the task's CPU affinity");
        return -1;
    }
    unsigned zero = 0;
    ng_plan_request req = {0};
    req.ntasks = 1;
    req.allowed_cpus = mine;
    if (ngpus) {
        req.task_gpu_count = &ngpus;
        req.task_gpu_offset = &zero;
        req.task_gpus = gpus;
    }
    req.policy = t_step->policy;
    req.omp = t_step->omp;
    req.thread_vars = t_conf->have_thread_vars ? t_conf->thread_vars : NULL;
    req.net = t_step->net;
    req.nic_filter = &t_conf->pc.nic_filter;
    int rc = ng_plan_compute(t_step->topo, &req, out, err, len);
    hwloc_bitmap_free(mine);
    return rc;
}

/* Step-level problems are reported by local task 0 only (once per node).
 * The admin's or the node's (logged in slurmd's log) reach only users who
 * asked for placement; under strict a failed task still says why, without
 * the admin's details. */
static int report_step_failure(uint32_t local)
{
    if (local != 0 || t_step->quiet)
        return t_step->strict ? -1 : 0;
    if (t_step->admin_failure && !t_step->asked) {
        if (t_step->strict)
            task_say("numaguard: placement unavailable on this node (the admin's problem, "
                     "in slurmd's log); strict: failing the task\n");
        return t_step->strict ? -1 : 0;
    }
    task_say("numaguard: %s; %s\n", t_step->failure,
             t_step->strict ? "strict: failing the task" : "tasks run as Slurm placed them");
    return t_step->strict ? -1 : 0;
}

static void report_plan_warnings(uint32_t local)
{
    static const char *const pred[] = {"none", "shared out in gres order"};
    if (local != 0)
        return;
    if (t_step->verbose)
        task_say("numaguard: step on this node: %u tasks, topology %s, cpus from %s, gpus %s%s\n",
                 t_step->ntasks, t_conf->pc.topology[0] ? "from topology="
                 : ng_topology_from_cache(t_step->topo) ? "from cache" : "discovered live",
                 t_step->cpu_source, pred[t_step->gpu_prediction],
                 t_step->plan_only ? ", plan only (topology is not this machine)" : "");
    if (t_step->quiet)
        return;
    if (t_step->gres_warning[0])
        task_say("numaguard: warning: %s\n", t_step->gres_warning);
    if (t_step->cpu_warning[0])
        task_say("numaguard: warning: %s\n", t_step->cpu_warning);
    for (unsigned i = 0; i < ng_plan_warning_count(t_step->plan); i++)
        task_say("numaguard: warning: %s\n", ng_plan_warning(t_step->plan, i));
}

/* Overwrite NUMAGUARD_GPUS with the GPUs the task really has. */
static void export_real_gpus(spank_t sp, const int *idx, unsigned n)
{
    char buf[NG_MAX_ARG];
    ng_gpu_list_format(t_step->topo, idx, n, buf, sizeof buf);
    spank_setenv(sp, "NUMAGUARD_GPUS", buf, 1);
}

/* Exchange real GPU lists with the other tasks of the step; if Slurm bound
 * GPUs differently from the prediction (map_gpu, mask_gpu, closest), plan
 * again with the real lists. A task that sees all of the step's GPUs (no
 * per-task binding) keeps its predicted share. Returns 1 with *out set when
 * a new plan was made. */
static int plan_with_real_gpus(uint32_t local, const int *gpus, unsigned n, ng_plan **out)
{
#ifdef NG_FAULT_INJECTION
    if (ng_fault_skip_exchange(t_conf->test_fault, local, t_step->ntasks))
        return 0;
#endif
    if (!ng_exchange_all(t_step->exchange, local, gpus, n, 3000))
        return 0;   /* a task never arrived: keep the prediction */
    unsigned nt = t_step->ntasks, used = 0;
    int differs = 0;
    unsigned *count = calloc(nt, sizeof *count), *offset = calloc(nt, sizeof *offset);
    int *list = calloc((size_t)nt * NG_MAX_GPUS, sizeof *list);
    if (!count || !offset || !list) {
        free(count);
        free(offset);
        free(list);
        return 0;
    }
    const ng_task_plan *pred;
    int theirs[NG_MAX_GPUS];
    unsigned ngpu = ng_topology_gpu_count(t_step->topo);
    for (unsigned t = 0; t < nt; t++) {
        const int *g = theirs;
        unsigned k;
        pred = ng_plan_task(t_step->plan, t);
        if (!ng_exchange_gpus(t_step->exchange, t, ngpu, theirs, &k) ||
            same_list(t_step->step_gpus, t_step->n_step_gpus, g, k)) {
            g = pred->gpus;
            k = pred->n_gpus;
        } else if (!same_list(pred->gpus, pred->n_gpus, g, k)) {
            differs = 1;
        }
        offset[t] = used;
        count[t] = k;
        memcpy(list + used, g, k * sizeof *g);
        used += k;
    }
    char err[512];
    int rc = differs && ng_step_replan(t_step, count, offset, list, out, err, sizeof err) == 0;
    free(count);
    free(offset);
    free(list);
    return rc;
}

/* What a failed ng_apply_task left in place, exactly: a refused memory
 * policy alone is not a failure unless strict, where it undoes the
 * affinity; the variables come last, so a failure there leaves the task
 * placed but its NUMAGUARD_* and thread variables not all set. */
static void apply_failure_tail(const ng_apply_result *res, const ng_plan *plan, unsigned id,
                               char *buf, size_t len)
{
    const ng_task_plan *tp = ng_plan_task(plan, id);
    char cpus[256] = "";
    if (!res->cpus_applied && !res->mem_applied) {
        snprintf(buf, len, "task runs as Slurm placed it");
        return;
    }
    if (res->cpus_applied && tp && tp->cpus && ng_list_format(tp->cpus, cpus, sizeof cpus) < 0)
        snprintf(cpus, sizeof cpus, "(long list)");
    if (res->cpus_applied && res->mem_applied)
        snprintf(buf, len, "CPU affinity (cpus %s) and memory policy (%s) set, "
                 "its environment variables not all", cpus, res->mem_mode_text);
    else if (res->cpus_applied)
        snprintf(buf, len, "CPU affinity (cpus %s) set, no memory policy, its environment "
                 "variables not all", cpus);
    else
        snprintf(buf, len, "memory policy (%s) set, CPU affinity left as Slurm set it, its "
                 "environment variables not all", res->mem_mode_text);
}

/* One task's apply: which plan entry, with which flags, and what it knows
 * better than the plan (its real GPUs). */
typedef struct task_apply {
    uint32_t local;
    int rank;
    int gpus[NG_MAX_GPUS];       /* the task's real GPUs (have_real) */
    unsigned ngpus;
    int have_real;
    const ng_plan *plan;         /* the step's plan, or own */
    ng_plan *own;                /* a re-plan (real GPUs, --cpu-bind), freed after */
    unsigned id;                 /* the task's entry in plan */
    unsigned flags;              /* NG_APPLY_* */
    int mismatch;                /* real GPUs differ from the plan's */
} task_apply;

/* The task's real GPUs. Unidentified: it keeps the step-level prediction
 * (its share of SLURM_STEP_GPUS, as Slurm's default binding hands them
 * out); strict wants the real ones, so the task fails (-1). */
static int identify_gpus(spank_t sp, task_apply *t)
{
    char err[512];
    t->have_real = task_gpus(sp, t->gpus, &t->ngpus, err, sizeof err) == 0;
    if (!t->have_real && !t_step->quiet)
        task_say("numaguard: rank %d: cannot identify this task's GPUs (%s); %s\n", t->rank, err,
                 t_step->strict ? "strict: failing the task"
                                : "placed by the step's GPU prediction");
    if (!t->have_real)
        t->ngpus = 0;
    return !t->have_real && t_step->strict ? -1 : 0;
}

/* The plan entry to apply: under a user --cpu-bind a one-task plan over
 * Slurm's mask; else the step's plan, re-planned when the tasks' real GPUs
 * differ from the prediction. 1: stop here (already reported). */
static int choose_plan(task_apply *t)
{
    char err[512];
    t->flags = t_step->plan_only ? NG_APPLY_SKIP_SYSCALLS : 0;
    t->plan = t_step->plan;
    t->id = t->local;
    if (!t_step->plan_only && t_step->user_cpu_bind) {
        if (keep_cpus_plan(t->gpus, t->ngpus, &t->own, err, sizeof err) < 0) {
            task_say("numaguard: %s\n", err);
            return 1;
        }
        t->plan = t->own;
        t->id = 0;
        t->flags |= NG_APPLY_KEEP_CPUS;
        return 0;
    }
    if (t_step->exchange &&
        plan_with_real_gpus(t->local, t->have_real ? t->gpus : NULL, t->ngpus, &t->own))
        t->plan = t->own;
    /* Seeing all of the step's GPUs (no per-task binding) is expected: the
     * task is placed near its share. Anything else that differs from the
     * prediction keeps the (disjoint) slice and says so. */
    const ng_task_plan *tp = ng_plan_task(t->plan, t->id);
    t->mismatch = t->have_real && !same_gpus(tp, t->gpus, t->ngpus);
    if (t->mismatch && !same_list(t_step->step_gpus, t_step->n_step_gpus, t->gpus, t->ngpus) &&
        !t_step->quiet)
        task_say("numaguard: rank %d: its GPUs differ from the step-level prediction; "
                 "keeping its disjoint CPU slice (not necessarily GPU-local)\n", t->rank);
    return 0;
}

/* The verbose line: the library's data, with the task's real local id and
 * real GPUs where the adapter knows them better than the plan entry. */
static void say_applied(const task_apply *t, const ng_apply_result *res)
{
    ng_task_summary sum;
    char line[1024], shown[4 * sizeof line];
    if (ng_task_summary_of(t_step->topo, t->plan, t->id, t->rank, res, &sum) < 0)
        return;
    sum.local_id = t->local;
    if (t->mismatch || ((t->flags & NG_APPLY_KEEP_CPUS) && t->have_real)) {
        sum.n_gpus = t->ngpus;
        memcpy(sum.gpus, t->gpus, t->ngpus * sizeof *t->gpus);
    }
    if (ng_task_summary_format(t_step->topo, &sum, line, sizeof line) < 0)
        return;
    /* It names presets kept as the task's environment has them. */
    ng_text_escape(line, shown, sizeof shown);
    task_say("%s\n", shown);
}

static void say_failed(const task_apply *t, const ng_apply_result *res, const char *err)
{
    char tail[512] = "";
    if (res->cpus_applied || res->mem_applied || !t_step->strict)
        apply_failure_tail(res, t->plan, t->id, tail, sizeof tail);
    task_say("numaguard: rank %d: %s; %s%s%s\n", t->rank, err, tail,
             tail[0] && t_step->strict ? "; " : "",
             t_step->strict ? "strict: failing the task" : "");
}

static int apply_in_task(spank_t sp, uint32_t local, int rank)
{
    task_apply t = {.local = local, .rank = rank};
    if (!ng_plan_task(t_step->plan, local)) {
        snprintf(t_step->failure, sizeof t_step->failure, "no plan for local task %u", local);
        return report_step_failure(0);
    }
    if (identify_gpus(sp, &t) < 0)
        return -1;
    if (choose_plan(&t))
        return t_step->strict ? -1 : 0;
    char err[512];
    task_ctx tc = {sp};
    ng_env_ops ops = {.is_set = env_is_set, .set = env_set, .ctx = &tc, .get = env_get};
    ng_spank_container ct;
    ng_spank_container_view(sp, t_conf, t_step, &ct);
    ng_apply_args args = {t_step->topo, t.plan, t.id, &t_step->policy, t.flags, &ops,
                          ng_spank_omp_preload(t_conf), ng_spank_governor_id(),
                          ct.skip[0] ? ct.skip : NULL};
    ng_apply_result res;
    int rc = ng_spank_apply_task(t_conf, &args, &res, err, sizeof err);
    if (rc == 0 && (t.mismatch || (t.flags & NG_APPLY_KEEP_CPUS)) && t.have_real)
        export_real_gpus(sp, t.gpus, t.ngpus);
    if (rc < 0 && !t_step->quiet)
        say_failed(&t, &res, err);
    else if (res.warning[0] && !t_step->quiet && !t_step->verbose)
        task_say("numaguard: rank %d: warning: %s\n", rank, res.warning);
    if (rc == 0 && t_step->verbose)
        say_applied(&t, &res);
    ng_spank_container_after(sp, &ct, local, t_step->quiet);
    ng_plan_free(t.own);
    return rc < 0 && t_step->strict ? -1 : 0;
}

int ng_spank_task_init(spank_t sp, const ng_spank_conf *conf, ng_step *step)
{
    t_conf = conf;
    t_step = step;
    if (!spank_remote(sp) || !t_step->active)
        return 0;
    uint32_t local = 0, rank = 0;
    int tid = 0;
    if (spank_get_item(sp, S_TASK_ID, &tid) == ESPANK_SUCCESS && tid >= 0)
        local = (uint32_t)tid;
    spank_get_item(sp, S_TASK_GLOBAL_ID, &rank);
    if (t_step->failed)
        return report_step_failure(local);
    report_plan_warnings(local);
    return apply_in_task(sp, local, (int)rank);
}

