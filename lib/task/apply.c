/* Applying one task's plan to the calling process: CPU affinity
 * (affinity.c), memory policy (mempolicy.c), then the variables
 * (task_env.c). Each part applies on its own: a refused memory policy
 * leaves the CPU binding, the variables and the governor preload in place
 * (a warning in the result); under strict the syscalls are all or nothing. The orchestrator of lib/task/ with
 * describe.c (the verbose line) beside it. */
#include "private/task.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* ng_apply_task                                                      */
/* ---------------------------------------------------------------- */

typedef struct apply_sets {
    hwloc_bitmap_t cpus;      /* what NUMAGUARD_CPUS reports */
    hwloc_bitmap_t mems;      /* what NUMAGUARD_MEMS reports */
    hwloc_bitmap_t saved;     /* affinity before we changed it */
    int have_saved;
    const ngi_sys_ops *sys;    /* the syscalls (NULL: the real ones) */
} apply_sets;

static void sets_free(apply_sets *s)
{
    hwloc_bitmap_free(s->cpus);
    hwloc_bitmap_free(s->mems);
    hwloc_bitmap_free(s->saved);
}

/* CPU part. Reported CPUs: the plan's set when we bind or only plan; the
 * current affinity when we keep the user's --cpu-bind or the plan does not
 * bind (policy none), because that is what the task really has. */
static int apply_cpus(const ng_task_plan *tp, unsigned flags, apply_sets *s,
                      ng_apply_result *res, char *err, size_t errlen)
{
    if (flags & NG_APPLY_SKIP_SYSCALLS) {
        if (tp->cpus)
            hwloc_bitmap_copy(s->cpus, tp->cpus);
        return 0;
    }
    s->have_saved = ng_current_cpus(s->saved) == 0;
    if (!tp->cpus || (flags & NG_APPLY_KEEP_CPUS)) {
        if (s->have_saved)
            hwloc_bitmap_copy(s->cpus, s->saved);
        return 0;
    }
    if (ngi_set_affinity(s->sys, tp->cpus, err, errlen) != 0)
        return -1;
    hwloc_bitmap_copy(s->cpus, tp->cpus);
    res->cpus_applied = 1;
    return 0;
}

static int apply_mem(const ng_task_plan *tp, const ng_policy *pol, unsigned flags,
                     apply_sets *s, ng_apply_result *res, char *err, size_t errlen)
{
    if (tp->mem_mode == NG_MEM_MODE_NONE || !tp->mem_nodes) {
        res->mem_mode = NG_MEM_MODE_NONE;
        ngi_strlcpy(res->mem_mode_text, "none", sizeof res->mem_mode_text);
        return 0;
    }
    hwloc_bitmap_copy(s->mems, tp->mem_nodes);
    res->mem_mode = tp->mem_mode;
    ngi_strlcpy(res->mem_mode_text, ng_mem_mode_name(tp->mem_mode), sizeof res->mem_mode_text);
    if (flags & NG_APPLY_SKIP_SYSCALLS)
        return 0;
    if (ngi_mem_clip_to_allowed(s->mems, res, err, errlen) != 0)
        return -1;
    if (ngi_mem_apply(s->sys, tp->mem_mode, s->mems, tp->mem_first,
                        (pol->mods & NG_MOD_STRICT) != 0, res, err, errlen) != 0)
        return -1;
    res->mem_applied = 1;
    if (strcmp(res->mem_mode_text, "preferred") == 0)
        hwloc_bitmap_only(s->mems, (unsigned)ngi_mem_preferred_node(s->mems, tp->mem_first));
    return 0;
}

/* The memory policy was refused (EPERM in a container, ENOSYS under an
 * emulator or a seccomp filter, nodes outside cpuset.mems). Strict: all
 * or nothing, the task runs where Slurm placed it (-1). Otherwise the
 * memory part alone is dropped: no policy, NUMAGUARD_MEM_MODE=none and an
 * empty NUMAGUARD_MEMS, and the CPU binding, the variables and the
 * governor still apply, with the reason as a warning (0). */
static int mem_failed(const ng_policy *pol, apply_sets *s, ng_apply_result *res,
                      const char *err)
{
    if (pol->mods & NG_MOD_STRICT) {
        if (res->cpus_applied && s->have_saved)
            ngi_set_affinity(s->sys, s->saved, NULL, 0);
        res->cpus_applied = 0;
        return -1;
    }
    char msg[sizeof res->warning];
    snprintf(msg, sizeof msg, "%s; CPU binding and variables kept", err && err[0] ? err :
             "memory policy not applied");
    hwloc_bitmap_zero(s->mems);
    res->mem_mode = NG_MEM_MODE_NONE;
    res->mem_applied = 0;
    ngi_strlcpy(res->mem_mode_text, "none", sizeof res->mem_mode_text);
    ngi_result_warn(res, msg);
    return 0;
}

int ng_apply_task(const ng_topology *topo, const ng_plan *plan,
                  unsigned local_id, const ng_policy *pol, unsigned flags,
                  const ng_env_ops *env, ng_apply_result *res,
                  char *err, size_t errlen)
{
    return ngi_apply_task_sys(NULL, topo, plan, local_id, pol, flags, env, res, err, errlen);
}

int ng_apply_task_with(const ng_apply_args *args, ng_apply_result *res, char *err,
                       size_t errlen)
{
    return ngi_apply_task_args(NULL, args, res, err, errlen);
}

int ngi_apply_task_sys(const ngi_sys_ops *sys, const ng_topology *topo, const ng_plan *plan,
                      unsigned local_id, const ng_policy *pol, unsigned flags,
                      const ng_env_ops *env, ng_apply_result *res, char *err, size_t errlen)
{
    ng_apply_args a = {topo, plan, local_id, pol, flags, env, NULL, NULL, NULL};
    return ngi_apply_task_args(sys, &a, res, err, errlen);
}

int ngi_apply_task_args(const ngi_sys_ops *sys, const ng_apply_args *a, ng_apply_result *res,
                        char *err, size_t errlen)
{
    ng_apply_result local_res;
    if (!res)
        res = &local_res;
    memset(res, 0, sizeof *res);
    ngi_strlcpy(res->mem_mode_text, "none", sizeof res->mem_mode_text);
    if (!a || !a->topo || !a->plan || !a->pol || !a->env || !a->env->set)
        return ngi_fail(err, errlen, "ng_apply_task: missing argument");
    res->flags = a->flags;
    const ng_task_plan *tp = ng_plan_task(a->plan, a->local_id);
    if (!tp)
        return ngi_fail(err, errlen, "no plan for local task %u (plan has %u tasks)",
                       a->local_id, ng_plan_task_count(a->plan));
    apply_sets s = {hwloc_bitmap_alloc(), hwloc_bitmap_alloc(), hwloc_bitmap_alloc(), 0, sys};
    if (!s.cpus || !s.mems || !s.saved) {
        sets_free(&s);
        return ngi_fail(err, errlen, "out of memory");
    }
    int rc = apply_cpus(tp, a->flags, &s, res, err, errlen);
    if (rc == 0 && apply_mem(tp, a->pol, a->flags, &s, res, err, errlen) != 0)
        rc = mem_failed(a->pol, &s, res, err);
    if (rc == 0)
        rc = ngi_task_export_env(a, tp, s.cpus, s.mems, res, err, errlen);
    sets_free(&s);
    return rc;
}
