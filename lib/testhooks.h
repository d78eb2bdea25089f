/* Test seams of the library: function pointers that stand between numaguard
 * and the few calls only the kernel or hwloc can make fail. Each one starts
 * as the real call. Unit tests replace them to simulate old kernels,
 * containers and broken discovery; the SPANK plugin replaces them only when
 * the admin's plugstack.conf says test_fault=POINT (spank/faults.c).
 * Not API: not installed, not in numaguard.h. */
#ifndef NG_TESTHOOKS_H
#define NG_TESTHOOKS_H

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>
#include <hwloc.h>

/** set_mempolicy(2) as ng_apply_task calls it (lib/apply.c); returns -1
 *  with errno set on failure. */
extern long (*ng_apply_set_mempolicy_fn)(int mode, const unsigned long *mask,
                                         unsigned long maxnode);

/** sched_setaffinity(2) as ng_apply_task calls it (lib/apply.c), also when
 *  it restores the task's affinity; returns -1 with errno set on failure. */
extern int (*ng_apply_sched_setaffinity_fn)(pid_t pid, size_t size, const cpu_set_t *mask);

/** The hwloc NUMA node after @p prev (NULL: the first), NULL at the end:
 *  the objects ng_topology_load builds its NUMA view from (lib/topology.c).
 *  A replacement returning NULL simulates hwloc finding no NUMA node. */
extern hwloc_obj_t (*ng_topology_next_numa_fn)(hwloc_topology_t hw, hwloc_obj_t prev);

#endif
