/* libnumaguard-omp.so, the governor of OpenMP teams that
 * --omp-guard=adaptive preloads into a task (docs/omp-adaptive.md).
 *
 * It interposes the entry points compilers call to start a parallel
 * region (libgomp's GOMP_parallel*, LLVM/Intel libomp's __kmpc_fork_call
 * with __kmpc_push_num_threads) and omp_get_max_threads /
 * omp_set_num_threads, and sizes each OUTERMOST team: the task's cores
 * (NUMAGUARD_OMP_CORES) divided by the number of threads inside outermost
 * regions or just out of one, at least 1, at most what the runtime would
 * have given. Everything else is forwarded to the runtime the caller was
 * linked against, found per call site (several runtimes in one process).
 *
 * Internal to the preload library: every name here is hidden (ngo_*);
 * only the interposed OpenMP symbols are exported (preload/numaguard-omp.map).
 * The library depends on libc alone: no hwloc, no libnumaguard. */
#ifndef NGO_GOV_H
#define NGO_GOV_H

#include <stdint.h>

#include "../lib/include/numaguard/omp_marks.h"

#define NGO_HIDDEN __attribute__((visibility("hidden")))
#define NGO_EXPORT __attribute__((visibility("default")))

/* The files call downward only, in this order (no circle; a shared piece
 * goes into the lowest file that needs it):
 *   api.c blas.c gomp.c kmp.c (+ kmp_stub_*.S)  the interposed entry points
 *   gov.c                                        the decision
 *   runtimes.c load.c                            the runtime behind a site; the load
 *   say.c                                        the one line on stderr */

/* ---- say.c: the one line on stderr ---- */

/** One line on stderr, "numaguard-omp: " first (bounded, one write). */
NGO_HIDDEN void ngo_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Tell `numaguard check` that this process has a runtime or pool of
 *  @p kind (NG_OMP_MARK_*) the governor cannot govern: an empty memfd
 *  named for it, mapped (numaguard/omp_marks.h). Once per kind where it
 *  can (a second mark of a kind is one more page of address space). */
NGO_HIDDEN void ngo_publish(const char *kind);

/* ---- runtimes.c: the OpenMP runtime behind a call site ---- */

/** The runtime's own entry points, looked up in the runtime's object. */
enum ngo_sym {
    /* libgomp's (also in libomp, its GOMP compatibility layer) */
    NGO_GOMP_PARALLEL = 0,
    NGO_GOMP_PARALLEL_START,
    NGO_GOMP_PARALLEL_END,
    NGO_GOMP_PARALLEL_REDUCTIONS,
    NGO_GOMP_PARALLEL_SECTIONS,
    NGO_GOMP_PARALLEL_SECTIONS_START,
    NGO_GOMP_PARALLEL_LOOP_STATIC,
    NGO_GOMP_PARALLEL_LOOP_DYNAMIC,
    NGO_GOMP_PARALLEL_LOOP_GUIDED,
    NGO_GOMP_PARALLEL_LOOP_RUNTIME,
    NGO_GOMP_PARALLEL_LOOP_NONMONOTONIC_DYNAMIC,
    NGO_GOMP_PARALLEL_LOOP_NONMONOTONIC_GUIDED,
    NGO_GOMP_PARALLEL_LOOP_NONMONOTONIC_RUNTIME,
    NGO_GOMP_PARALLEL_LOOP_MAYBE_NONMONOTONIC_RUNTIME,
    NGO_GOMP_PARALLEL_LOOP_STATIC_START,
    NGO_GOMP_PARALLEL_LOOP_DYNAMIC_START,
    NGO_GOMP_PARALLEL_LOOP_GUIDED_START,
    NGO_GOMP_PARALLEL_LOOP_RUNTIME_START,
    /* libomp's */
    NGO_KMPC_FORK_CALL,
    NGO_KMPC_FORK_CALL_IF,
    NGO_KMPC_PUSH_NUM_THREADS,
    NGO_KMPC_GLOBAL_THREAD_NUM,
    /* the OpenMP API (both) */
    NGO_OMP_GET_MAX_THREADS,
    NGO_OMP_SET_NUM_THREADS,
    NGO_OMP_GET_LEVEL,
    NGO_OMP_GET_ACTIVE_LEVEL,
    NGO_OMP_GET_MAX_ACTIVE_LEVELS,
    NGO_OMP_GET_TEAM_SIZE,
    /* BLAS entry points that run a library's own pool (blas.c) */
    NGO_CBLAS_SGEMM,
    NGO_CBLAS_DGEMM,
    NGO_CBLAS_CGEMM,
    NGO_CBLAS_ZGEMM,
    NGO_CBLAS_SSYRK,
    NGO_CBLAS_DSYRK,
    NGO_CBLAS_CSYRK,
    NGO_CBLAS_ZSYRK,
    NGO_SGEMM,
    NGO_DGEMM,
    NGO_SGESV,
    NGO_DGESV,
    NGO_CGESV,
    NGO_ZGESV,
    /* the program's own count for OpenBLAS's pool */
    NGO_OPENBLAS_SET_NUM_THREADS,
    NGO_SYM_COUNT
};

typedef struct ngo_rt {
    uintptr_t base;              /* load address of the runtime's object */
    void *handle;                /* held open: the runtime is never unloaded under us */
    const char *kind;            /* "libgomp", "libomp", or the object's name */
    char name[64];               /* its file name, for messages */
    void *fn[NGO_SYM_COUNT];     /* NULL where this runtime lacks the symbol */
    _Atomic int blas;            /* blas.c: which BLAS pool it runs (0: not looked at yet) */
    void *blas_ctl[3];           /* blas.c: its pool's controls, from it or its dependencies */
} ngo_rt;

/** The runtime whose @p sym the code at return address @p site would have
 *  called without the preload (cached per call site). Never NULL: when no
 *  runtime defines @p sym the process is told once and exits 127, as the
 *  dynamic linker would have for an undefined symbol. */
NGO_HIDDEN const ngo_rt *ngo_rt_for_site(uintptr_t site, enum ngo_sym sym);
/** 1 when this thread is inside a parallel region of a libgomp met so far. */
NGO_HIDDEN int ngo_in_gomp_region(void);
/** Called once from the constructor: say (once) which loaded objects carry
 *  an OpenMP runtime linked in statically, whose regions are not governed. */
NGO_HIDDEN void ngo_rt_scan_static(void);

/* ---- load.c: the task's cores, as others use them ---- */

/** Called once from the constructor: the process's CPUs, the tick. */
NGO_HIDDEN void ngo_load_init(void);
/** Called once from the constructor where the load will be looked at:
 *  the first sample starts now (the process's start). */
NGO_HIDDEN void ngo_load_start(void);
/** Of @p budget cores, those others leave free (at least 1): the load on
 *  the process's CPUs that is not this process's, sampled at most every
 *  100 ms by one caller (@p now: ms), 3/4 of a core free counting as free
 *  (in the first sample, from the process's start, 50 ms or more: 1/4);
 *  over a sample in which the process had more @p callers than cores,
 *  others' demand as the scheduler's sharing by thread tells it. */
NGO_HIDDEN unsigned ngo_free_cores(uint64_t now, unsigned budget, unsigned callers);
/** The cores the process's cgroup CPU quota allows (cgroup v2 cpu.max,
 *  v1 cpu.cfs_quota_us, the lowest on the way up), at least 1; 0 = none. */
NGO_HIDDEN unsigned ngo_quota_cores(void);

/* ---- gov.c: the decision ---- */

/** Requests of a region, as the caller made them. */
typedef struct ngo_ask {
    const ngo_rt *rt;
    const char *entry;           /* the interposed entry point, for the debug line */
    unsigned clause;             /* num_threads(k) of the region: k; 0 = none */
} ngo_ask;

/** The team size to request for the region @p a is about to start: 0 =
 *  leave it to the runtime (the program's own request stands). */
NGO_HIDDEN unsigned ngo_decide(const ngo_ask *a);
/** The region this thread last asked ngo_decide() about has returned (the
 *  runtime's entry point came back, or for libgomp's combined forms this
 *  thread's own call of the region's function): when it was the thread's outermost,
 *  the thread counts for the window from now on, then no longer. Called
 *  on the same thread, once per ngo_decide() of a region that ran. */
NGO_HIDDEN void ngo_region_end(void);
/** A BLAS call that may run its library's own pool begins on this thread:
 *  it counts as a caller as an outermost region does. Returns the pool
 *  size to use for it: the share of the cores; 1 inside an OpenMP region
 *  or another BLAS call (a team's work).
 *  *@p counted: 1 when ngo_region_end() must be called once the call
 *  returned, 0 (a thread of a libgomp team) when not. */
NGO_HIDDEN unsigned ngo_blas_enter(int *counted);
/** omp_get_max_threads() as the governor answers it. */
NGO_HIDDEN int ngo_max_threads(const ngo_rt *rt);
/** omp_set_num_threads(n): 1 if it must reach the runtime, 0 if it only
 *  echoes what omp_get_max_threads told this thread (OpenBLAS does that). */
NGO_HIDDEN int ngo_set_num_threads(int n);
/** libomp's num_threads clause (__kmpc_push_num_threads): remembered for
 *  the fork that follows it on this thread. */
NGO_HIDDEN void ngo_note_clause(int n);
/** The clause noted on this thread, cleared (0 = none). */
NGO_HIDDEN unsigned ngo_take_clause(void);
/** 1 when NUMAGUARD_OMP_DEBUG asks for each decision. */
NGO_HIDDEN int ngo_debug_on(void);

#endif
