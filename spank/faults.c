/* test_fault=POINT, in the TEST BUILD of the plugin only
 * (build/numaguard-faults.so, compiled with -DNG_FAULT_INJECTION; the
 * shipped numaguard.so has none of this file and treats test_fault= as an
 * unknown argument). Failures only the kernel or hwloc could produce,
 * injected where the plugin calls the library, so that
 * tests/hardening/t-faults.sh can check through real srun that each has
 * its documented outcome (docs/hardening.md).
 * The syscall and NUMA faults go through an ngi_sys_ops table passed to the
 * library (lib/private/sysops.h: no writable global); the others fail at the
 * plugin's call site with the same error path a real failure takes. */
#ifndef NG_FAULT_INJECTION
#error "spank/faults.c belongs to the test build of the plugin only (-DNG_FAULT_INJECTION)"
#endif
#include "ng_spank.h"
#include "private/task.h"
#include "private/topo.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* POINT names, in ng_fault order. */
static const char *const fault_names[] = {
    [NG_FAULT_NONE] = "none",
    [NG_FAULT_MEMPOLICY_EINVAL] = "mempolicy_einval",
    [NG_FAULT_MEMPOLICY_EPERM] = "mempolicy_eperm",
    [NG_FAULT_AFFINITY_EINVAL] = "affinity_einval",
    [NG_FAULT_TOPOLOGY_LOAD] = "topology_load",
    [NG_FAULT_NO_NUMA] = "no_numa",
    [NG_FAULT_GPU_LOOKUP] = "gpu_lookup",
    [NG_FAULT_EXCHANGE_ABSENT] = "exchange_absent",
    [NG_FAULT_ENV_EXPORT] = "env_export",
};

int ng_fault_parse(const char *name, ng_fault *out)
{
    /* "none" is not accepted: an argument that does nothing is a typo. */
    for (int f = NG_FAULT_NONE + 1; f <= NG_FAULT_ENV_EXPORT; f++)
        if (strcmp(name, fault_names[f]) == 0) {
            *out = (ng_fault)f;
            return 0;
        }
    return -1;
}

const char *ng_fault_name(ng_fault fault)
{
    return (unsigned)fault <= NG_FAULT_ENV_EXPORT ? fault_names[fault] : "?";
}

static long mempolicy_einval(int mode, const unsigned long *mask, unsigned long maxnode)
{
    (void)mode;
    (void)mask;
    (void)maxnode;
    errno = EINVAL;
    return -1;
}

static long mempolicy_eperm(int mode, const unsigned long *mask, unsigned long maxnode)
{
    (void)mode;
    (void)mask;
    (void)maxnode;
    errno = EPERM;
    return -1;
}

static int affinity_einval(pid_t pid, size_t size, const cpu_set_t *mask)
{
    (void)pid;
    (void)size;
    (void)mask;
    errno = EINVAL;
    return -1;
}

static hwloc_obj_t no_numa(hwloc_topology_t hw, hwloc_obj_t prev)
{
    (void)hw;
    (void)prev;
    return NULL;
}

/* The table for @p fault; NULL (the real calls) for the other points. */
static const ngi_sys_ops *fault_ops(ng_fault fault)
{
    static const ngi_sys_ops einval = {.set_mempolicy = mempolicy_einval};
    static const ngi_sys_ops eperm = {.set_mempolicy = mempolicy_eperm};
    static const ngi_sys_ops affinity = {.sched_setaffinity = affinity_einval};
    static const ngi_sys_ops hide_numa = {.next_numa = no_numa};
    switch (fault) {
    case NG_FAULT_MEMPOLICY_EINVAL: return &einval;
    case NG_FAULT_MEMPOLICY_EPERM: return &eperm;
    case NG_FAULT_AFFINITY_EINVAL: return &affinity;
    case NG_FAULT_NO_NUMA: return &hide_numa;
    default: return NULL;
    }
}

/* env_export: the task's variables cannot be set, as when spank_setenv
 * fails; the other variables go through. */
static int env_set_refused(void *ctx, const char *name, const char *value)
{
    const ng_env_ops *real = ctx;
    if (strncmp(name, "NUMAGUARD_", 10) == 0)
        return -1;
    return real->set(real->ctx, name, value);
}

static int env_is_set_through(void *ctx, const char *name)
{
    const ng_env_ops *real = ctx;
    return real->is_set ? real->is_set(real->ctx, name) : 0;
}

static int env_get_through(void *ctx, const char *name, char *buf, size_t len)
{
    const ng_env_ops *real = ctx;
    return real->get ? real->get(real->ctx, name, buf, len) : -1;
}

int ng_fault_apply_task(ng_fault fault, const ng_apply_args *args, ng_apply_result *res,
                        char *err, size_t errlen)
{
    ng_apply_args a = *args;
    ng_env_ops refusing = {env_is_set_through, env_set_refused, (void *)args->env,
                           env_get_through};
    if (fault == NG_FAULT_ENV_EXPORT && a.env)
        a.env = &refusing;
    return ngi_apply_task_args(fault_ops(fault), &a, res, err, errlen);
}

int ng_fault_topology_load(ng_fault fault, ng_topology **out, const ng_topology_options *opts,
                           char *err, size_t errlen)
{
    if (fault == NG_FAULT_TOPOLOGY_LOAD) {
        *out = NULL;
        snprintf(err, errlen, "hwloc could not load the topology "
                 "(injected by test_fault=topology_load)");
        return -1;
    }
    if (fault != NG_FAULT_NO_NUMA)
        return ng_topology_load(out, opts, err, errlen);
    /* The library's own check must catch it: only the walk is replaced. */
    int rc = ngi_topology_load_sys(fault_ops(fault), out, opts, err, errlen);
    if (rc < 0 && errlen && strnlen(err, errlen) + 40 < errlen)
        strncat(err, " (injected by test_fault=no_numa)", errlen - strlen(err) - 1);
    return rc;
}

int ng_fault_gpu_lookup(ng_fault fault, char *err, size_t errlen)
{
    if (fault != NG_FAULT_GPU_LOOKUP)
        return 0;
    snprintf(err, errlen, "GPU lookup failed (injected by test_fault=gpu_lookup)");
    return -1;
}

/* The last local task is the last one slurmstepd forks: every other task
 * is already waiting for it, for the whole bounded wait. */
int ng_fault_skip_exchange(ng_fault fault, unsigned local, unsigned ntasks)
{
    if (fault != NG_FAULT_EXCHANGE_ABSENT || local + 1 != ntasks)
        return 0;
    dprintf(2, "numaguard: local task %u: not joining the GPU exchange "
            "(injected by test_fault=exchange_absent)\n", local);
    return 1;
}
