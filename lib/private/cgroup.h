/* lib/base/cgroup.c: what a process's cgroups say (pid <= 0: the caller).
 * One /proc/PID/cgroup parser for the job, the cpuset and the cpu.max
 * quota. Private to the library. */
#ifndef NGI_CGROUP_H
#define NGI_CGROUP_H

#include "base.h"

/** Length of a SLUID as Slurm prints it: "s" and 13 base32 characters. */
#define NGI_SLUID_LEN 14
/** Room for a job id from a cgroup: 20 digits or a SLUID, and the NUL. */
#define NGI_JOB_ID_MAX 24
/** 1 if @p s is a SLUID as Slurm prints it ("s" + 13 of Crockford's
 *  base32, upper case: "sEKNKTV3WPV500"). */
int ngi_is_sluid(const char *s);

/** Slurm job of a process from /proc/PID/cgroup: the job level of Slurm's
 *  own layout in one line (v1 /slurm[_NODE]/uid_U/job_ID/..., v2
 *  [/system.slice]/[NODE_]slurmstepd.scope/job_ID/... or .../SLUID/...
 *  (Slurm 26.05's default); the v2 line first, then v1 freezer, cpuset,
 *  other controllers); never a deeper component (the job's user may
 *  create cgroups there) nor a path with "..". @p id gets the digits of
 *  job_ID or the SLUID ("sEKNKTV3WPV500"). 0, or -1 when no line names a
 *  job. */
int ngi_cgroup_job(const char *fsroot, int pid, char *id, size_t len);
/** The same, and the step level right below the job's ("step_0" gives
 *  "0", "step_batch" "batch"; "" when the path has none) into @p step. */
int ngi_cgroup_job_step(const char *fsroot, int pid, char *id, size_t len, char *step,
                        size_t steplen);
/** The CPUs the process's cpuset cgroup allows (v1 cpuset hierarchy,
 *  else v2), under fsroot/sys/fs/cgroup. 0, or -1 when unknown. */
int ngi_cgroup_cpus(const char *fsroot, int pid, hwloc_bitmap_t set);
/** The calling process's cgroup v2 CPU quota as whole CPUs: the smallest
 *  ceil(quota / period) of cpu.max in its v2 cgroup and its ancestors.
 *  Returns 1 and sets *cpus when a quota is set, 0 when none (cgroup v1,
 *  "max", unreadable). */
int ngi_cgroup_cpu_quota(const char *fsroot, unsigned *cpus);

#endif
