/**
 * @file numaguard.h
 * @brief numaguard core library: topology, GPU locality, the user's
 *        options, per-task placement plans, applying them, and inspecting
 *        running processes. The one header to include; it includes the
 *        topic headers numaguard/<topic>.h.
 *
 * Data flows one way:
 *
 *     ng_topology (live or XML)  +  job shape (ng_plan_request)
 *       numaguard/topology.h        numaguard/options.h, gpus.h, launcher.h
 *                 |                          |
 *                 +---------> ng_plan_compute() ---> ng_plan   (numaguard/plan.h)
 *                                                      |
 *                                 ng_apply_task() <----+  (in each task; numaguard/task.h)
 *
 *     ng_inspect() reads running processes back (numaguard/inspect.h).
 *     ng_draw_svg() / ng_draw_map() picture a plan or an inspection
 *     over the machine (numaguard/draw.h).
 *     ng_doctor_run() checks the node's inputs themselves (numaguard/doctor.h).
 *
 * Launcher adapters (the SPANK plugin in spank/, the CLI in tools/) only
 * translate their inputs into these calls; no Slurm header is included here.
 * docs/api.md lists every function with the adapter that calls it.
 *
 * Conventions:
 *  - Functions returning int return 0 on success and -1 on failure, writing
 *    one human-readable line (no trailing newline) into @p err (may be NULL)
 *    bounded by @p errlen.
 *  - Ownership: an object from ng_*_load / ng_*_compute / ng_inspect is the
 *    caller's and is freed by its ng_*_free (NULL is a no-op). Pointers and
 *    sets returned by accessors are owned by their parent object and stay
 *    valid until it is freed.
 *  - CPU and NUMA sets are hwloc bitmaps of OS indices (PU os_index, NUMA
 *    node os_index).
 *  - Threads: the library keeps no global state. Every function is
 *    thread-safe on distinct objects, and a loaded topology, a computed
 *    plan or an inspection may be read by several threads at once. The
 *    exceptions say so: ng_topology_lean_hwloc (setenv), ng_apply_task
 *    (acts on the calling thread).
 *  - Every string that comes from a user, an admin or a file is bounded:
 *    see NG_MAX_* in numaguard/common.h.
 *  - Names: the API is ng_* / NG_*; the library's internal functions are
 *    ngi_* (private headers, not installed).
 *
 * Building against it: libnumaguard is a static library that uses hwloc, so
 * link with `-lnumaguard -lhwloc -ldl`, or take both lines from pkg-config:
 *     cc $(pkg-config --cflags numaguard) app.c $(pkg-config --libs numaguard)
 */
#ifndef NUMAGUARD_H
#define NUMAGUARD_H

/** Release of this header (also debian/changelog, the RPM spec and
 *  numaguard.pc; `numaguard --version` prints the library's, ng_version()). */
#define NUMAGUARD_VERSION_MAJOR 0
#define NUMAGUARD_VERSION_MINOR 1
#define NUMAGUARD_VERSION_PATCH 0
#define NUMAGUARD_VERSION "0.1.0"
/** For #if tests: NUMAGUARD_VERSION_NUMBER >= NUMAGUARD_VERSION_NUM(0, 2, 0). */
#define NUMAGUARD_VERSION_NUM(a, b, c) (((a) << 16) | ((b) << 8) | (c))
#define NUMAGUARD_VERSION_NUMBER                                                  \
    NUMAGUARD_VERSION_NUM(NUMAGUARD_VERSION_MAJOR, NUMAGUARD_VERSION_MINOR,       \
                          NUMAGUARD_VERSION_PATCH)

#include "numaguard/common.h"
#include "numaguard/topology.h"
#include "numaguard/options.h"
#include "numaguard/gpus.h"
#include "numaguard/launcher.h"
#include "numaguard/plan.h"
#include "numaguard/task.h"
#include "numaguard/container.h"
#include "numaguard/inspect.h"
#include "numaguard/draw.h"
#include "numaguard/doctor.h"

#endif /* NUMAGUARD_H */
