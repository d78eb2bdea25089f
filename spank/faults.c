/* test_fault=POINT: failures only the kernel or hwloc could produce,
 * injected where the plugin calls the library, so that
 * tests/hardening/t-faults.sh can check through real srun that each has
 * its documented outcome (docs/hardening.md). Only the admin's
 * plugstack.conf (root-owned) can arm one; without it nothing here runs.
 * The syscall and NUMA faults go through the library's seams
 * (lib/testhooks.h); the others fail at the plugin's call site with the
 * same error path a real failure takes. The POINT names are parsed in
 * spank/config.c (which the fuzzers link alone). */
#include "ng_spank.h"
#include "testhooks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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

/* Runs in the forked task only (task_init), so slurmstepd keeps the real
 * calls; the task execs the user's program right after. */
void ng_fault_arm_syscalls(ng_fault fault)
{
    if (fault == NG_FAULT_MEMPOLICY_EINVAL)
        ng_apply_set_mempolicy_fn = mempolicy_einval;
    else if (fault == NG_FAULT_MEMPOLICY_EPERM)
        ng_apply_set_mempolicy_fn = mempolicy_eperm;
    else if (fault == NG_FAULT_AFFINITY_EINVAL)
        ng_apply_sched_setaffinity_fn = affinity_einval;
}

static hwloc_obj_t no_numa(hwloc_topology_t hw, hwloc_obj_t prev)
{
    (void)hw;
    (void)prev;
    return NULL;
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
    /* The library's own check must catch it: only hide the nodes, and only
     * for this one load. */
    hwloc_obj_t (*saved)(hwloc_topology_t, hwloc_obj_t) = ng_topology_next_numa_fn;
    ng_topology_next_numa_fn = no_numa;
    int rc = ng_topology_load(out, opts, err, errlen);
    ng_topology_next_numa_fn = saved;
    if (rc < 0 && errlen && strnlen(err, errlen) + 40 < errlen)
        strncat(err, " (injected by test_fault=no_numa)", errlen - strlen(err) - 1);
    return rc;
}

int ng_fault_gpu_lookup(char *err, size_t errlen)
{
    snprintf(err, errlen, "GPU lookup failed (injected by test_fault=gpu_lookup)");
    return -1;
}
