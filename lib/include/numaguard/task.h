/**
 * @file numaguard/task.h
 * @brief In the task: apply its plan (CPU affinity, memory policy,
 *        variables) and describe what was done. Implemented in lib/task/.
 */
#ifndef NUMAGUARD_TASK_H
#define NUMAGUARD_TASK_H

#include "numaguard/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Hooks the caller gives ng_apply_task() to read and write the task's env. */
typedef struct ng_env_ops {
    /** Return 1 if @p name is set in the task's environment. */
    int (*is_set)(void *ctx, const char *name);
    /** Set @p name=@p value (overwrite); 0 on success. */
    int (*set)(void *ctx, const char *name, const char *value);
    void *ctx;
    /** Optional: copy the value of @p name into @p buf; 0 if set, -1 if not.
     *  Lets ng_apply_task name the values it kept; NULL = names only. */
    int (*get)(void *ctx, const char *name, char *buf, size_t len);
} ng_env_ops;

/** What ng_apply_task() did, for the verbose line and NUMAGUARD_* vars. */
typedef struct ng_apply_result {
    int cpus_applied;        /**< sched_setaffinity done */
    int mem_applied;         /**< set_mempolicy done */
    ng_mem_mode mem_mode;    /**< mode actually set (after fallbacks) */
    char warning[256];       /**< warnings ("; "-joined, bounded), "" if none */
    unsigned flags;          /**< the NG_APPLY_* flags it ran with */
    char mem_mode_text[24];  /**< NUMAGUARD_MEM_MODE: mode name after fallbacks,
                                  "preferred" when PREFERRED_MANY fell back */
    unsigned threads;        /**< thread count exported (0: none exported) */
    unsigned quota_threads;  /**< the auto count was lowered to this cgroup v2
                                  cpu.max quota (CPUs, rounded up); 0: not lowered */
    char kept[160];          /**< preset thread variables kept ("OMP_NUM_THREADS=1"),
                                  "" if none */
    char net_kept[160];      /**< preset network variables kept (--net-affinity
                                  without force): names, " "-joined; "" if none */
    int governor;            /**< --omp-guard=adaptive: the governor library was
                                  appended to the task's LD_PRELOAD */
} ng_apply_result;

/** Flags for ng_apply_task(). */
enum {
    NG_APPLY_SKIP_SYSCALLS = 1u << 0, /**< plan only (topology not this system) */
    NG_APPLY_KEEP_CPUS     = 1u << 1, /**< user --cpu-bind: leave affinity alone */
    NG_APPLY_LAUNCHER_MASK = 1u << 2  /**< with KEEP_CPUS: the mask is a launcher's
                                           (pre-bound rank), for the verbose line */
};

/**
 * Apply one task's plan to the calling process: CPU affinity, memory policy
 * (with fallbacks: PREFERRED_MANY -> PREFERRED, WEIGHTED -> INTERLEAVE),
 * thread variables, network variables (--net-affinity; a variable the
 * task already has is kept unless the option said force) and
 * NUMAGUARD_CPUS/MEMS/GPUS/POLICY through @p env.
 * The affinity and the memory policy are the calling THREAD's (Linux
 * sched_setaffinity(0)/set_mempolicy): call it in the task before it
 * starts threads, as the plugin does in task_init. @p res is always
 * filled. A refused memory policy alone is not a failure unless @p pol
 * has strict: the CPU binding and the variables still apply, the mode is
 * "none" and res->warning says why. Returns -1 (err says why) if a step
 * failed (under strict, a failed memory policy also undoes the affinity);
 * the caller decides whether that is fatal (strict) or a warning.
 */
int ng_apply_task(const ng_topology *topo, const ng_plan *plan,
                  unsigned local_id, const ng_policy *pol, unsigned flags,
                  const ng_env_ops *env, ng_apply_result *res,
                  char *err, size_t errlen);

/** Everything ng_apply_task_with() takes: the plan entry of one task and
 *  how to apply it. Zero-initialise, then fill in. */
typedef struct ng_apply_args {
    const ng_topology *topo;
    const ng_plan *plan;
    unsigned local_id;          /**< the task's entry in @c plan */
    const ng_policy *pol;
    unsigned flags;             /**< NG_APPLY_* */
    const ng_env_ops *env;
    /** The governor library --omp-guard=adaptive appends to LD_PRELOAD;
     *  NULL = ng_omp_preload_path(). Used only when it is a regular file
     *  owned by root in directories owned by root, none of them writable
     *  by anyone else; otherwise the task runs without it (a warning). */
    const char *omp_preload;
    /** The governor's identity, recorded by ng_omp_preload_identify() in
     *  the host's namespaces before the task entered a container's (pyxis
     *  joins them in task_init): the same file (device and inode) is
     *  accepted where the owner shows as nobody. NULL: none recorded. */
    const struct ng_file_id *omp_preload_id;
    /** Non-NULL: the governor is not added to LD_PRELOAD, without a
     *  warning per task (a container runtime without the governor's
     *  directory bound: the caller says ng_container_hint() once). */
    const char *omp_preload_skip;
} ng_apply_args;

/** ng_apply_task() with its inputs in one struct (and the governor's path). */
int ng_apply_task_with(const ng_apply_args *args, ng_apply_result *res, char *err,
                       size_t errlen);

/** Where `make install` put the governor of --omp-guard=adaptive
 *  (LIBDIR/libnumaguard-omp.so, fixed when the library was built). */
const char *ng_omp_preload_path(void);

/** A file's identity: what stays the same when a user namespace shows the
 *  owner as nobody and a bind mount shows the directory elsewhere. */
typedef struct ng_file_id {
    unsigned long long dev, ino;
    int valid;
} ng_file_id;

/** 0 when @p path may be preloaded into a user's task (absolute, no ':'
 *  or blank in it, a regular file, not a link, owned by root, and every
 *  directory above it owned by root, none writable by group or others;
 *  else -1 with @p why naming the reason), and on success the file's
 *  identity in @p id (id->valid 1). Called where the host's namespaces are still ours
 *  (slurmstepd, before any task enters a container). */
int ng_omp_preload_identify(const char *path, ng_file_id *id, char *why, size_t whylen);

/** Accepted as ng_omp_preload_identify() accepts, or else: the file at
 *  @p path (not a link, a regular file nobody but its owner may write) is
 *  the one @p id recorded (same device and inode). 0 when accepted. */
int ng_omp_preload_trusted_as(const char *path, const ng_file_id *id, char *why,
                              size_t whylen);

/** What a task got, as data: ng_task_summary() fills it from the plan
 *  and ng_apply_task's result. An adapter corrects what it knows better
 *  (the task's real local id, the GPUs it really has) and formats it with
 *  ng_task_summary_format(), the verbose line. */
typedef struct ng_task_summary {
    int global_rank;             /**< -1: none ("task N:" instead of "rank R (local N):") */
    unsigned local_id;
    int gpus[NG_MAX_GPUS];       /**< topology GPU indices */
    unsigned n_gpus;
    char numa[NG_MAX_ARG];       /**< CPU-bearing NUMA nodes of its CPUs; "none" */
    char cpus[NG_MAX_ARG];       /**< its CPUs; "unchanged" when the plan has none */
    char mem[NG_MAX_ARG + 32];   /**< "mode:nodes" after fallbacks, or "none" */
    unsigned threads;            /**< thread count exported (plan: planned); 0 none */
    int quota_threads;           /**< the count is a cgroup cpu.max quota */
    int governor;                /**< adaptive: the governor is preloaded */
    char kept[160];              /**< thread variables kept ("" none) */
    char nics[NG_MAX_ARG];       /**< its NICs ("" none) */
    char net_kept[160];          /**< network variables kept ("" none) */
    const char *cpu_source;      /**< "plan only", "cpus kept from the launcher",
                                      "cpus kept from --cpu-bind" or NULL (static) */
    int shares_cores;            /**< the plan had to let tasks share cores */
    int gpu_remote;              /**< its GPU has no local cores here */
    char note[160];              /**< the planner's note ("" none) */
    char warning[256];           /**< apply's warnings ("" none) */
} ng_task_summary;

/** Fill @p out for task @p local_id of @p plan; @p res: what ng_apply_task
 *  did (NULL: plan only). -1 when @p local_id is not in the plan. */
int ng_task_summary_of(const ng_topology *topo, const ng_plan *plan, unsigned local_id,
                       int global_rank, const ng_apply_result *res, ng_task_summary *out);

/** The verbose line of @p s (no newline), bounded: its length, or -1 when
 *  it was cut. @p topo names the GPUs. */
int ng_task_summary_format(const ng_topology *topo, const ng_task_summary *s, char *buf,
                           size_t len);

/** One verbose line for a task (no newline), in the spirit of --cpu-bind=verbose,
 *  written into @p buf (bounded). @p res: what ng_apply_task did (NULL: plan
 *  only). Returns the length, or -1 when @p local_id is not in the plan. */
int ng_task_describe(const ng_topology *topo, const ng_plan *plan,
                     unsigned local_id, int global_rank,
                     const ng_apply_result *res, char *buf, size_t len);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_TASK_H */
