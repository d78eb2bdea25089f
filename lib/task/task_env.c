/* A task's variables through the caller's env hooks: the thread variables
 * of --omp-guard (lowered to a cgroup v2 CPU quota), the network variables
 * of --net-affinity (the user's values kept unless force), and the
 * NUMAGUARD_* report of what was applied. */
#include "private/cgroup.h"
#include "private/plan.h"
#include "private/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ngi_net_apply_env(const ng_net_env *env, unsigned n, const struct ng_env_ops *ops,
                     char *kept, size_t keptlen, char *err, size_t errlen)
{
    if (kept && keptlen)
        kept[0] = '\0';
    if (!ops || !ops->set)
        return n ? ngi_fail(err, errlen, "network variables: no way to set them") : 0;
    for (unsigned i = 0; env && i < n; i++) {
        const ng_net_env *e = &env[i];
        if (!e->overwrite && ops->is_set && ops->is_set(ops->ctx, e->name)) {
            size_t used = kept ? strnlen(kept, keptlen) : 0;
            if (kept && used + strlen(e->name) + 2 < keptlen)
                snprintf(kept + used, keptlen - used, "%s%s", used ? " " : "", e->name);
            continue;
        }
        if (ops->set(ops->ctx, e->name, e->value) != 0)
            return ngi_fail(err, errlen, "cannot set %s in the task environment", e->name);
    }
    return 0;
}

static int env_set(const ng_env_ops *env, const char *name, const char *value,
                   char *err, size_t errlen)
{
    if (env->set(env->ctx, name, value) != 0)
        return ngi_fail(err, errlen, "cannot set %s in the task environment", name);
    return 0;
}

/* Thread counts the task will see: kept presets and the exported value. */
typedef struct thread_counts {
    unsigned kept_min, kept_max;   /* numeric presets kept (0: none) */
    unsigned quota;                /* cgroup cpu.max in CPUs, rounded up; 0: none */
} thread_counts;

/* Remember a preset variable that was kept ("NAME=value", " "-joined). */
static void note_kept(const ng_env_ops *env, const char *name, ng_apply_result *res,
                      thread_counts *tc)
{
    char val[32] = "", item[112];
    if (env->get && env->get(env->ctx, name, val, sizeof val) != 0)
        val[0] = '\0';
    char *end;
    unsigned long n = strtoul(val, &end, 10);
    if (val[0] >= '1' && val[0] <= '9' && *end == '\0' && n <= NG_MAX_THREADS) {
        tc->kept_min = tc->kept_min && tc->kept_min < n ? tc->kept_min : (unsigned)n;
        tc->kept_max = tc->kept_max > n ? tc->kept_max : (unsigned)n;
    }
    snprintf(item, sizeof item, val[0] ? "%s=%s" : "%s%s", name, val);
    size_t used = strnlen(res->kept, sizeof res->kept);
    if (used + strlen(item) + 3 < sizeof res->kept)
        snprintf(res->kept + used, sizeof res->kept - used, "%s%s", used ? " " : "", item);
}

/* OMP_PROC_BIND (and OMP_PLACES: the task's own CPUs, explicit places) only
 * where numaguard bound the task itself; otherwise libgomp would pin each
 * process's first thread to a place it was never given. */
static int export_binding(const ng_topology *topo, const ng_env_var *v, const ng_policy *pol,
                          hwloc_const_bitmap_t cpus, ng_apply_result *res,
                          const ng_env_ops *env, char *err, size_t errlen)
{
    if (!res->cpus_applied)
        return 0;
    char places[4 * NG_MAX_ARG];
    if (ngi_omp_places_format(topo, cpus, (pol->mods & NG_MOD_SMT) != 0, places,
                             sizeof places) < 0) {
        ngi_result_warn(res, "OMP_PLACES would be too long: OMP_PROC_BIND not set");
        return 0;
    }
    if (env_set(env, "OMP_PLACES", places, err, errlen) != 0)
        return -1;
    return env_set(env, v->name, v->value, err, errlen);
}

/* One count variable: the plan's value, lowered to the CPU quota for
 * --omp-guard=auto (a pool sized to cores the quota never lets it use only
 * adds threads that wait). */
static int export_count(const ng_env_var *v, const thread_counts *tc, ng_apply_result *res,
                        const ng_env_ops *env, char *err, size_t errlen)
{
    unsigned n = (unsigned)strtoul(v->value, NULL, 10);
    if ((v->flags & NG_ENV_COUNT_AUTO) && tc->quota && tc->quota < n) {
        n = tc->quota;
        res->quota_threads = n;
    }
    char value[16];
    snprintf(value, sizeof value, "%u", n);
    if (env_set(env, v->name, value, err, errlen) != 0)
        return -1;
    res->threads = n;
    return 0;
}

/* Warnings about the thread counts: more threads than CPUs, and presets
 * kept that disagree with each other or with the cores owned (> 2x). */
static void thread_warnings(const ng_task_plan *tp, hwloc_const_bitmap_t cpus,
                            const thread_counts *tc, int fixed, ng_apply_result *res)
{
    char msg[256];
    int pus = cpus ? hwloc_bitmap_weight(cpus) : 0;
    if (fixed && pus > 0 && res->threads > (unsigned)pus) {
        snprintf(msg, sizeof msg, "--omp-guard=%u exceeds the %d CPU%s this task owns: each "
                 "pool's threads will share CPUs", res->threads, pus, pus == 1 ? "" : "s");
        ngi_result_warn(res, msg);
    }
    unsigned owned = tp->threads ? tp->threads : 1;
    if (tc->kept_max && (tc->kept_max > 2 * tc->kept_min || tc->kept_max > 2 * owned ||
                         2 * tc->kept_min < owned)) {
        snprintf(msg, sizeof msg, "preset thread values kept (%.100s) disagree with each other "
                 "or with the %u core%s this task owns by more than 2x; --omp-guard=...,force "
                 "replaces them", res->kept, owned, owned == 1 ? "" : "s");
        ngi_result_warn(res, msg);
    }
}

/* Thread variables, keeping values the user set unless overwrite; the
 * governor's budget (adaptive) brings the governor library with it. */
static int export_threads(const ng_apply_args *a, const ng_task_plan *tp,
                          hwloc_const_bitmap_t cpus, ng_apply_result *res, char *err,
                          size_t errlen)
{
    const ng_topology *topo = a->topo;
    const ng_env_ops *env = a->env;
    thread_counts tc = {0, 0, 0};
    int fixed = 0;
    if (tp->n_env && (tp->env[0].flags & NG_ENV_COUNT_AUTO) && ng_topology_is_this_system(topo))
        ngi_cgroup_cpu_quota(ngi_topology_fsroot(topo), &tc.quota);
    for (unsigned i = 0; i < tp->n_env; i++) {
        const ng_env_var *v = &tp->env[i];
        int preset = env->is_set && env->is_set(env->ctx, v->name);
        if (!v->overwrite && preset) {
            note_kept(env, v->name, res, &tc);
            continue;
        }
        if (v->flags & NG_ENV_BINDING) {
            if (export_binding(topo, v, a->pol, cpus, res, env, err, errlen) != 0)
                return -1;
            continue;
        }
        fixed = !(v->flags & NG_ENV_COUNT_AUTO);
        if (export_count(v, &tc, res, env, err, errlen) != 0)
            return -1;
        if ((v->flags & NG_ENV_GOVERNOR) &&
            ngi_preload_append(a, res, err, errlen) != 0)
            return -1;
    }
    thread_warnings(tp, cpus, &tc, fixed, res);
    return 0;
}

/* Thread variables first, then the network variables (--net-affinity),
 * then the NUMAGUARD_* report, which always reflects what was applied. */
int ngi_task_export_env(const ng_apply_args *a, const ng_task_plan *tp,
                        hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t mems,
                        ng_apply_result *res, char *err, size_t errlen)
{
    const ng_topology *topo = a->topo;
    const ng_policy *pol = a->pol;
    const ng_env_ops *env = a->env;
    if (export_threads(a, tp, cpus, res, err, errlen) != 0)
        return -1;
    if (ngi_net_apply_env(tp->net_env, tp->n_net_env, env, res->net_kept, sizeof res->net_kept,
                         err, errlen) != 0)
        return -1;
    char buf[NG_MAX_ARG];
    if (ng_list_format(cpus, buf, sizeof buf) < 0)
        return ngi_fail(err, errlen, "CPU list too long for NUMAGUARD_CPUS");
    if (env_set(env, "NUMAGUARD_CPUS", buf, err, errlen) != 0)
        return -1;
    if (ng_list_format(mems, buf, sizeof buf) < 0)
        return ngi_fail(err, errlen, "node list too long for NUMAGUARD_MEMS");
    if (env_set(env, "NUMAGUARD_MEMS", buf, err, errlen) != 0)
        return -1;
    ng_gpu_list_format(topo, tp->gpus, tp->n_gpus, buf, sizeof buf);
    if (env_set(env, "NUMAGUARD_GPUS", buf, err, errlen) != 0)
        return -1;
    if (ngi_policy_format(pol, buf, sizeof buf) < 0)
        ngi_strlcpy(buf, ng_policy_kind_name(pol->kind), sizeof buf);
    if (env_set(env, "NUMAGUARD_POLICY", buf, err, errlen) != 0)
        return -1;
    return env_set(env, "NUMAGUARD_MEM_MODE", res->mem_mode_text, err, errlen);
}

