/* The task module (lib/task/): applying a plan in the task. Private to the
 * library (ngi_* names). */
#ifndef NGI_TASK_H
#define NGI_TASK_H

#include "base.h"
#include "sysops.h"

/* ---- result.c ---- */

/** Append "; text" (or text) to res->warning, bounded. */
void ngi_result_warn(ng_apply_result *res, const char *text);

/* ---- affinity.c ---- */

/** Bind the calling thread to @p set (a dynamic cpu_set_t: more than
 *  CPU_SETSIZE CPUs work); @p sys NULL = the real sched_setaffinity. */
int ngi_set_affinity(const ngi_sys_ops *sys, hwloc_const_cpuset_t set, char *err,
                     size_t errlen);

/* ---- mempolicy.c ---- */

/** Restrict @p nodes to the task's allowed mems; warn if that drops nodes,
 *  fail if nothing is left. Unknown allowed set: keep @p nodes. */
int ngi_mem_clip_to_allowed(hwloc_bitmap_t nodes, ng_apply_result *res, char *err,
                            size_t errlen);
/** Apply @p mode on @p nodes with the documented fallbacks; sets
 *  res->mem_mode and res->mem_mode_text to what the kernel accepted.
 *  @p first is the plan's mem_first (-1: none). */
int ngi_mem_apply(const ngi_sys_ops *sys, ng_mem_mode mode, hwloc_const_bitmap_t nodes,
                  int first, int strict, ng_apply_result *res, char *err, size_t errlen);
/** The one node MPOL_PREFERRED names when PREFERRED_MANY is refused. */
int ngi_mem_preferred_node(hwloc_const_bitmap_t nodes, int first);
/** Does the running kernel accept memory mode @p mode (the kernel mode of
 *  the table ngi_mem_apply uses)? Probed in a forked child with @p sys's
 *  set_mempolicy (NULL: the real one): 1 yes, 0 refused with EINVAL (the
 *  fallbacks apply), -1 cannot tell. The caller's policy is untouched. */
int ngi_mem_mode_supported(const ngi_sys_ops *sys, ng_mem_mode mode);

/* ---- task_env.c ---- */

/** Thread variables, then the network variables, then the NUMAGUARD_*
 *  report (@p cpus / @p mems: what was applied). */
int ngi_task_export_env(const ng_apply_args *a, const ng_task_plan *tp,
                        hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t mems,
                        ng_apply_result *res, char *err, size_t errlen);

/**
 * Export @p env[0..n) (a task plan's net_env) through @p ops: a variable
 * the task already has is kept unless its entry says overwrite; the kept
 * names are listed in @p kept (" "-joined, bounded; may be NULL). Returns
 * 0, or -1 when setting one failed (err names it).
 */
int ngi_net_apply_env(const ng_net_env *env, unsigned n, const ng_env_ops *ops,
                      char *kept, size_t keptlen, char *err, size_t errlen);

/* ---- preload.c ---- */

/** 0 when @p path may be preloaded into a user's task: absolute, no ':'
 *  or blank in it, a regular file (not a link) owned by root, and every
 *  directory above it owned by root, none writable by group or others.
 *  Else -1 with @p why naming the reason. Internal: lib/task's own check
 *  (ng_omp_preload_identify, ng_omp_preload_trusted_as) and lib/doctor's
 *  governor check; no adapter needs it. */
int ngi_omp_preload_trusted(const char *path, char *why, size_t whylen);

/** Append the governor library a->omp_preload (NULL:
 *  ng_omp_preload_path()) to the task's LD_PRELOAD when
 *  ng_omp_preload_trusted_as accepts it with a->omp_preload_id and
 *  a->omp_preload_skip is NULL (else a warning in @p res), and export
 *  NUMAGUARD_OMP_GOVERNOR=its path (the promise `check` holds the process
 *  to); sets res->governor. -1 only when setting fails. */
int ngi_preload_append(const ng_apply_args *a, ng_apply_result *res, char *err,
                       size_t errlen);

/** ng_apply_task_with with the syscalls of @p sys. */
int ngi_apply_task_args(const ngi_sys_ops *sys, const ng_apply_args *args, ng_apply_result *res,
                        char *err, size_t errlen);

/** ng_apply_task with the syscalls of @p sys. */
int ngi_apply_task_sys(const ngi_sys_ops *sys, const ng_topology *topo, const ng_plan *plan,
                      unsigned local_id, const ng_policy *pol, unsigned flags,
                      const ng_env_ops *env, ng_apply_result *res, char *err, size_t errlen);

#endif
