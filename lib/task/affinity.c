/* The calling thread's CPU affinity (sched_setaffinity through the test
 * seam's table when one is passed, ngi_apply_task_sys). */
#include "private/task.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

static int sys_setaffinity(const ngi_sys_ops *sys, size_t size, const cpu_set_t *mask)
{
    if (sys && sys->sched_setaffinity)
        return sys->sched_setaffinity(0, size, mask);
    return sched_setaffinity(0, size, mask);
}

/* Bind the calling thread (= the task before exec) to @p set. A dynamic
 * cpu_set_t is used so machines with more than CPU_SETSIZE (1024) CPUs work. */
int ngi_set_affinity(const ngi_sys_ops *sys, hwloc_const_cpuset_t set, char *err,
                        size_t errlen)
{
    int last = hwloc_bitmap_last(set);
    if (hwloc_bitmap_iszero(set) || last < 0)
        return ngi_fail(err, errlen, "empty CPU set, affinity not changed");
    size_t ncpus = (size_t)last + 1;
    cpu_set_t *mask = CPU_ALLOC(ncpus);
    if (!mask)
        return ngi_fail(err, errlen, "out of memory for a CPU mask");
    size_t size = CPU_ALLOC_SIZE(ncpus);
    CPU_ZERO_S(size, mask);
    unsigned i;
    hwloc_bitmap_foreach_begin(i, set)
        CPU_SET_S(i, size, mask);
    hwloc_bitmap_foreach_end();
    int rc = sys_setaffinity(sys, size, mask);
    int e = errno;
    CPU_FREE(mask);
    if (rc != 0) {
        char list[128];
        if (ng_list_format(set, list, sizeof list) < 0)
            ngi_strlcpy(list, "(long list)", sizeof list);
        if (e == EINVAL)   /* no allowed online CPU in the mask */
            return ngi_fail(err, errlen, "sched_setaffinity(%s) refused (EINVAL): CPUs offline "
                           "or outside the task's cpuset? affinity not changed", list);
        return ngi_fail(err, errlen, "sched_setaffinity(%s) failed: %s", list, strerror(e));
    }
    return 0;
}
