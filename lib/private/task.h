/* The task module (lib/task/): applying a plan in the task. Private to the
 * library (ngi_* names). */
#ifndef NGI_TASK_H
#define NGI_TASK_H

#include "base.h"
#include "sysops.h"

/**
 * Export @p env[0..n) (a task plan's net_env) through @p ops: a variable
 * the task already has is kept unless its entry says overwrite; the kept
 * names are listed in @p kept (" "-joined, bounded; may be NULL). Returns
 * 0, or -1 when setting one failed (err names it).
 */
int ngi_net_apply_env(const ng_net_env *env, unsigned n, const ng_env_ops *ops,
                      char *kept, size_t keptlen, char *err, size_t errlen);

/** ng_apply_task with the syscalls of @p sys. */
int ngi_apply_task_sys(const ngi_sys_ops *sys, const ng_topology *topo, const ng_plan *plan,
                      unsigned local_id, const ng_policy *pol, unsigned flags,
                      const ng_env_ops *env, ng_apply_result *res, char *err, size_t errlen);

#endif
