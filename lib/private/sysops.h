/* Test seams of the library: the few calls only the kernel or hwloc can make
 * fail, reached through an ops table the CALLER passes in (no writable
 * globals: nothing another plugin or a stray write could redirect in a
 * process running as root). Unit tests pass tables that simulate old
 * kernels, containers and broken discovery; the test build of the SPANK
 * plugin (build/numaguard-faults.so, spank/faults.c, -DNG_FAULT_INJECTION)
 * passes them for the admin's test_fault=POINT. The shipped plugin and the
 * CLI never call the ngi_*_sys entry points (declared in task.h and
 * topo.h): they call ng_apply_task and ng_topology_load, which pass no
 * table and so use the real calls.
 * Not API: not installed, not in numaguard.h. */
#ifndef NGI_SYSOPS_H
#define NGI_SYSOPS_H

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>
#include <hwloc.h>

#include "numaguard.h"

/** The calls behind ng_apply_task and ng_topology_load. A NULL table, or a
 *  NULL member, means the real call. */
typedef struct ngi_sys_ops {
    /** set_mempolicy(2) (lib/apply.c); -1 with errno set on failure. */
    long (*set_mempolicy)(int mode, const unsigned long *mask, unsigned long maxnode);
    /** sched_setaffinity(2) (lib/apply.c), also when the task's affinity
     *  is restored after a failed memory policy; -1 with errno on failure. */
    int (*sched_setaffinity)(pid_t pid, size_t size, const cpu_set_t *mask);
    /** The hwloc NUMA node after @p prev (NULL: the first), NULL at the end:
     *  the objects ng_topology_load builds its NUMA view from
     *  (lib/topo/). Returning NULL simulates hwloc finding none. */
    hwloc_obj_t (*next_numa)(hwloc_topology_t hw, hwloc_obj_t prev);
} ngi_sys_ops;

#endif
