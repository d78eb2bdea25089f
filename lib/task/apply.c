/* Applying one task's plan to the calling process: CPU affinity, memory
 * policy (raw set_mempolicy, with kernel-version fallbacks), thread variables
 * and the NUMAGUARD_* report variables. The verbose line: describe.c. */
#include "private/cgroup.h"
#include "private/options.h"
#include "private/plan.h"
#include "private/task.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MPOL_DEFAULT
#define MPOL_DEFAULT 0
#endif
#ifndef MPOL_PREFERRED
#define MPOL_PREFERRED 1
#endif
#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif
#ifndef MPOL_INTERLEAVE
#define MPOL_INTERLEAVE 3
#endif
#ifndef MPOL_F_MEMS_ALLOWED
#define MPOL_F_MEMS_ALLOWED (1 << 2)
#endif
/* Linux 5.15 and 6.9; glibc/libnuma headers of older distros lack them. */
#define NG_MPOL_PREFERRED_MANY 5
#define NG_MPOL_WEIGHTED_INTERLEAVE 6

/* Node masks passed to the kernel: room for NG_MAX_NUMA_OS_INDEX plus one
 * spare word (the kernel's historical "maxnode - 1" convention). */
#define NG_MASK_BITS (NG_MAX_NUMA_OS_INDEX + 1)
#define NG_ULONG_BITS (8 * sizeof(unsigned long))
#define NG_MASK_WORDS (NG_MASK_BITS / NG_ULONG_BITS + 1)

static long ng_sys_set_mempolicy(int mode, const unsigned long *mask, unsigned long maxnode)
{
    return syscall(SYS_set_mempolicy, mode, mask, maxnode);
}

/* The real calls behind ng_apply_task. Tests reach others only through
 * ngi_apply_task_sys (lib/testhooks.h): a table the caller passes in, never
 * a writable global. */
static long sys_set_mempolicy(const ngi_sys_ops *sys, int mode, const unsigned long *mask,
                              unsigned long maxnode)
{
    if (sys && sys->set_mempolicy)
        return sys->set_mempolicy(mode, mask, maxnode);
    return ng_sys_set_mempolicy(mode, mask, maxnode);
}

static int sys_setaffinity(const ngi_sys_ops *sys, size_t size, const cpu_set_t *mask)
{
    if (sys && sys->sched_setaffinity)
        return sys->sched_setaffinity(0, size, mask);
    return sched_setaffinity(0, size, mask);
}

/* ---------------------------------------------------------------- */
/* CPU affinity                                                       */
/* ---------------------------------------------------------------- */

/* Bind the calling thread (= the task before exec) to @p set. A dynamic
 * cpu_set_t is used so machines with more than CPU_SETSIZE (1024) CPUs work. */
static int set_affinity(const ngi_sys_ops *sys, hwloc_const_cpuset_t set, char *err,
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

/* ---------------------------------------------------------------- */
/* Memory policy                                                      */
/* ---------------------------------------------------------------- */

static void bitmap_to_mask(hwloc_const_bitmap_t set, unsigned long *mask)
{
    memset(mask, 0, NG_MASK_WORDS * sizeof *mask);
    unsigned i;
    hwloc_bitmap_foreach_begin(i, set)
        if (i < NG_MASK_BITS)
            mask[i / NG_ULONG_BITS] |= 1ul << (i % NG_ULONG_BITS);
    hwloc_bitmap_foreach_end();
}

/* Nodes this task may allocate from (cgroup cpuset.mems / Mems_allowed).
 * -1 if the kernel would not tell (then the caller does not filter). */
static int mems_allowed(hwloc_bitmap_t set)
{
    unsigned long mask[NG_MASK_WORDS];
    int mode = 0;
    memset(mask, 0, sizeof mask);
    if (syscall(SYS_get_mempolicy, &mode, mask, (unsigned long)NG_MASK_BITS + 1, NULL,
                (unsigned long)MPOL_F_MEMS_ALLOWED) != 0)
        return -1;
    hwloc_bitmap_zero(set);
    for (unsigned i = 0; i < NG_MASK_BITS; i++)
        if (mask[i / NG_ULONG_BITS] & (1ul << (i % NG_ULONG_BITS)))
            hwloc_bitmap_set(set, i);
    return 0;
}

/* Append "; text" (or text) to the result's warning, bounded. */
static void add_warning(ng_apply_result *res, const char *text)
{
    size_t used = strnlen(res->warning, sizeof res->warning);
    if (used == 0) {
        ngi_strlcpy(res->warning, text, sizeof res->warning);
        return;
    }
    if (used + 3 < sizeof res->warning)
        snprintf(res->warning + used, sizeof res->warning - used, "; %s", text);
}

static int set_policy(const ngi_sys_ops *sys, int mode, hwloc_const_bitmap_t nodes)
{
    unsigned long mask[NG_MASK_WORDS];
    bitmap_to_mask(nodes, mask);
    return sys_set_mempolicy(sys, mode, mask, (unsigned long)NG_MASK_BITS + 1) == 0 ? 0 : -1;
}

static int mempolicy_error(int e, const char *what, hwloc_const_bitmap_t nodes,
                           char *err, size_t errlen)
{
    char list[128];
    if (ng_list_format(nodes, list, sizeof list) < 0)
        ngi_strlcpy(list, "(long list)", sizeof list);
    if (e == EPERM)
        return ngi_fail(err, errlen,
                       "set_mempolicy(%s:%s) refused (EPERM): a container without "
                       "CAP_SYS_NICE? memory policy not applied", what, list);
    /* EINVAL after the mode fallbacks: the nodes, not the mode, were refused
     * (outside cpuset.mems, offline) or the kernel predates the mode. */
    if (e == EINVAL)
        return ngi_fail(err, errlen,
                       "set_mempolicy(%s:%s) refused (EINVAL): nodes outside the task's "
                       "cpuset.mems or a kernel without this mode? memory policy not applied",
                       what, list);
    return ngi_fail(err, errlen, "set_mempolicy(%s:%s) failed: %s", what, list, strerror(e));
}

/* The one node MPOL_PREFERRED names when PREFERRED_MANY is refused: the
 * plan's first node (prefer: the GPU's node) while it survived the clip to
 * the allowed mems, else the lowest remaining one. */
static int preferred_node(hwloc_const_bitmap_t nodes, int first)
{
    if (first >= 0 && hwloc_bitmap_isset(nodes, (unsigned)first))
        return first;
    return hwloc_bitmap_first(nodes);
}

/* Apply @p mode on @p nodes with the documented fallbacks. Sets
 * res->mem_mode and res->mem_mode_text to what the kernel accepted.
 * @p first is the plan's mem_first (-1: none). */
static int apply_mempolicy(const ngi_sys_ops *sys, ng_mem_mode mode, hwloc_const_bitmap_t nodes, int first,
                           int strict, ng_apply_result *res, char *err, size_t errlen)
{
    int kmode;
    switch (mode) {
    case NG_MEM_MODE_BIND: kmode = MPOL_BIND; break;
    case NG_MEM_MODE_PREFERRED_MANY: kmode = NG_MPOL_PREFERRED_MANY; break;
    case NG_MEM_MODE_INTERLEAVE: kmode = MPOL_INTERLEAVE; break;
    case NG_MEM_MODE_WEIGHTED: kmode = NG_MPOL_WEIGHTED_INTERLEAVE; break;
    default: return ngi_fail(err, errlen, "unknown memory mode %d", (int)mode);
    }
    if (set_policy(sys, kmode, nodes) == 0) {
        res->mem_mode = mode;
        ngi_strlcpy(res->mem_mode_text, ng_mem_mode_name(mode), sizeof res->mem_mode_text);
        return 0;
    }
    int e = errno;
    if (e == EINVAL && mode == NG_MEM_MODE_PREFERRED_MANY) {
        /* Linux < 5.15: MPOL_PREFERRED takes one node; use the plan's first. */
        int node = preferred_node(nodes, first);
        hwloc_bitmap_t one = hwloc_bitmap_alloc();
        if (!one)
            return ngi_fail(err, errlen, "out of memory");
        hwloc_bitmap_only(one, (unsigned)node);
        int rc = set_policy(sys, MPOL_PREFERRED, one);
        e = errno;
        if (rc == 0) {
            res->mem_mode = NG_MEM_MODE_PREFERRED_MANY;
            ngi_strlcpy(res->mem_mode_text, "preferred", sizeof res->mem_mode_text);
            if (hwloc_bitmap_weight(nodes) > 1) {
                char msg[160];
                snprintf(msg, sizeof msg, "MPOL_PREFERRED_MANY unsupported (Linux < 5.15): "
                         "preferring node %d only", node);
                add_warning(res, msg);
            }
        }
        hwloc_bitmap_free(one);
        return rc == 0 ? 0 : mempolicy_error(e, "preferred", nodes, err, errlen);
    }
    if (e == EINVAL && mode == NG_MEM_MODE_WEIGHTED) {
        if (strict)
            return ngi_fail(err, errlen, "weighted interleave needs Linux >= 6.9 "
                           "(set_mempolicy: EINVAL); strict: not falling back");
        if (set_policy(sys, MPOL_INTERLEAVE, nodes) != 0)
            return mempolicy_error(errno, "interleave", nodes, err, errlen);
        res->mem_mode = NG_MEM_MODE_INTERLEAVE;
        ngi_strlcpy(res->mem_mode_text, ng_mem_mode_name(NG_MEM_MODE_INTERLEAVE),
                   sizeof res->mem_mode_text);
        add_warning(res, "weighted interleave needs Linux >= 6.9: using plain interleave");
        return 0;
    }
    return mempolicy_error(e, ng_mem_mode_name(mode), nodes, err, errlen);
}

/* Restrict @p nodes to the task's allowed mems; warn if that drops nodes,
 * fail if nothing is left. Unknown allowed set: keep @p nodes as they are. */
static int clip_to_allowed(hwloc_bitmap_t nodes, ng_apply_result *res, char *err, size_t errlen)
{
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (!allowed)
        return ngi_fail(err, errlen, "out of memory");
    int rc = 0;
    if (mems_allowed(allowed) == 0 && !hwloc_bitmap_isincluded(nodes, allowed)) {
        char want[96], ok[96], msg[256];
        if (ng_list_format(nodes, want, sizeof want) < 0)
            ngi_strlcpy(want, "(long list)", sizeof want);
        if (ng_list_format(allowed, ok, sizeof ok) < 0)
            ngi_strlcpy(ok, "(long list)", sizeof ok);
        hwloc_bitmap_and(nodes, nodes, allowed);
        if (hwloc_bitmap_iszero(nodes)) {
            rc = ngi_fail(err, errlen, "memory nodes %s are all outside this task's "
                         "allowed nodes %s; memory policy not applied", want, ok);
        } else {
            snprintf(msg, sizeof msg, "memory nodes %s restricted to allowed nodes %s",
                     want, ok);
            add_warning(res, msg);
        }
    }
    hwloc_bitmap_free(allowed);
    return rc;
}

/* ---------------------------------------------------------------- */
/* Environment                                                        */
/* ---------------------------------------------------------------- */

static int env_set(const ng_env_ops *env, const char *name, const char *value,
                   char *err, size_t errlen)
{
    if (env->set(env->ctx, name, value) != 0)
        return ngi_fail(err, errlen, "cannot set %s in the task environment", name);
    return 0;
}

/* Thread counts the task will see: kept presets and the exported value. */
typedef struct thread_counts {
    unsigned kept_min, kept_max;   /* numeric presets kept (0: none) */
    unsigned quota;                /* cgroup cpu.max in CPUs, rounded up; 0: none */
} thread_counts;

/* Remember a preset variable that was kept ("NAME=value", " "-joined). */
static void note_kept(const ng_env_ops *env, const char *name, ng_apply_result *res,
                      thread_counts *tc)
{
    char val[32] = "", item[112];
    if (env->get && env->get(env->ctx, name, val, sizeof val) != 0)
        val[0] = '\0';
    char *end;
    unsigned long n = strtoul(val, &end, 10);
    if (val[0] >= '1' && val[0] <= '9' && *end == '\0' && n <= NG_MAX_THREADS) {
        tc->kept_min = tc->kept_min && tc->kept_min < n ? tc->kept_min : (unsigned)n;
        tc->kept_max = tc->kept_max > n ? tc->kept_max : (unsigned)n;
    }
    snprintf(item, sizeof item, val[0] ? "%s=%s" : "%s%s", name, val);
    size_t used = strnlen(res->kept, sizeof res->kept);
    if (used + strlen(item) + 3 < sizeof res->kept)
        snprintf(res->kept + used, sizeof res->kept - used, "%s%s", used ? " " : "", item);
}

/* OMP_PROC_BIND (and OMP_PLACES: the task's own CPUs, explicit places) only
 * where numaguard bound the task itself; otherwise libgomp would pin each
 * process's first thread to a place it was never given. */
static int export_binding(const ng_topology *topo, const ng_env_var *v, const ng_policy *pol,
                          hwloc_const_bitmap_t cpus, ng_apply_result *res,
                          const ng_env_ops *env, char *err, size_t errlen)
{
    if (!res->cpus_applied)
        return 0;
    char places[4 * NG_MAX_ARG];
    if (ngi_omp_places_format(topo, cpus, (pol->mods & NG_MOD_SMT) != 0, places,
                             sizeof places) < 0) {
        add_warning(res, "OMP_PLACES would be too long: OMP_PROC_BIND not set");
        return 0;
    }
    if (env_set(env, "OMP_PLACES", places, err, errlen) != 0)
        return -1;
    return env_set(env, v->name, v->value, err, errlen);
}

/* One count variable: the plan's value, lowered to the CPU quota for
 * --omp-guard=auto (a pool sized to cores the quota never lets it use only
 * adds threads that wait). */
static int export_count(const ng_env_var *v, const thread_counts *tc, ng_apply_result *res,
                        const ng_env_ops *env, char *err, size_t errlen)
{
    unsigned n = (unsigned)strtoul(v->value, NULL, 10);
    if ((v->flags & NG_ENV_COUNT_AUTO) && tc->quota && tc->quota < n) {
        n = tc->quota;
        res->quota_threads = n;
    }
    char value[16];
    snprintf(value, sizeof value, "%u", n);
    if (env_set(env, v->name, value, err, errlen) != 0)
        return -1;
    res->threads = n;
    return 0;
}

/* Warnings about the thread counts: more threads than CPUs, and presets
 * kept that disagree with each other or with the cores owned (> 2x). */
static void thread_warnings(const ng_task_plan *tp, hwloc_const_bitmap_t cpus,
                            const thread_counts *tc, int fixed, ng_apply_result *res)
{
    char msg[256];
    int pus = cpus ? hwloc_bitmap_weight(cpus) : 0;
    if (fixed && pus > 0 && res->threads > (unsigned)pus) {
        snprintf(msg, sizeof msg, "--omp-guard=%u exceeds the %d CPU%s this task owns: each "
                 "pool's threads will share CPUs", res->threads, pus, pus == 1 ? "" : "s");
        add_warning(res, msg);
    }
    unsigned owned = tp->threads ? tp->threads : 1;
    if (tc->kept_max && (tc->kept_max > 2 * tc->kept_min || tc->kept_max > 2 * owned ||
                         2 * tc->kept_min < owned)) {
        snprintf(msg, sizeof msg, "preset thread values kept (%.100s) disagree with each other "
                 "or with the %u core%s this task owns by more than 2x; --omp-guard=...,force "
                 "replaces them", res->kept, owned, owned == 1 ? "" : "s");
        add_warning(res, msg);
    }
}

/* Thread variables, keeping values the user set unless overwrite. */
static int export_threads(const ng_topology *topo, const ng_task_plan *tp, const ng_policy *pol,
                          hwloc_const_bitmap_t cpus, ng_apply_result *res,
                          const ng_env_ops *env, char *err, size_t errlen)
{
    thread_counts tc = {0, 0, 0};
    int fixed = 0;
    if (tp->n_env && (tp->env[0].flags & NG_ENV_COUNT_AUTO) && ng_topology_is_this_system(topo))
        ngi_cgroup_cpu_quota(ngi_topology_fsroot(topo), &tc.quota);
    for (unsigned i = 0; i < tp->n_env; i++) {
        const ng_env_var *v = &tp->env[i];
        int preset = env->is_set && env->is_set(env->ctx, v->name);
        if (!v->overwrite && preset) {
            note_kept(env, v->name, res, &tc);
            continue;
        }
        if (v->flags & NG_ENV_BINDING) {
            if (export_binding(topo, v, pol, cpus, res, env, err, errlen) != 0)
                return -1;
            continue;
        }
        fixed = !(v->flags & NG_ENV_COUNT_AUTO);
        if (export_count(v, &tc, res, env, err, errlen) != 0)
            return -1;
    }
    thread_warnings(tp, cpus, &tc, fixed, res);
    return 0;
}

/* Thread variables first, then the network variables (--net-affinity),
 * then the NUMAGUARD_* report, which always reflects what was applied. */
static int export_env(const ng_topology *topo, const ng_task_plan *tp, const ng_policy *pol,
                      hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t mems,
                      ng_apply_result *res, const ng_env_ops *env,
                      char *err, size_t errlen)
{
    if (export_threads(topo, tp, pol, cpus, res, env, err, errlen) != 0)
        return -1;
    if (ngi_net_apply_env(tp->net_env, tp->n_net_env, env, res->net_kept, sizeof res->net_kept,
                         err, errlen) != 0)
        return -1;
    char buf[NG_MAX_ARG];
    if (ng_list_format(cpus, buf, sizeof buf) < 0)
        return ngi_fail(err, errlen, "CPU list too long for NUMAGUARD_CPUS");
    if (env_set(env, "NUMAGUARD_CPUS", buf, err, errlen) != 0)
        return -1;
    if (ng_list_format(mems, buf, sizeof buf) < 0)
        return ngi_fail(err, errlen, "node list too long for NUMAGUARD_MEMS");
    if (env_set(env, "NUMAGUARD_MEMS", buf, err, errlen) != 0)
        return -1;
    ng_gpu_list_format(topo, tp->gpus, tp->n_gpus, buf, sizeof buf);
    if (env_set(env, "NUMAGUARD_GPUS", buf, err, errlen) != 0)
        return -1;
    if (ngi_policy_format(pol, buf, sizeof buf) < 0)
        ngi_strlcpy(buf, ng_policy_kind_name(pol->kind), sizeof buf);
    if (env_set(env, "NUMAGUARD_POLICY", buf, err, errlen) != 0)
        return -1;
    return env_set(env, "NUMAGUARD_MEM_MODE", res->mem_mode_text, err, errlen);
}

/* ---------------------------------------------------------------- */
/* ng_apply_task                                                      */
/* ---------------------------------------------------------------- */

typedef struct apply_sets {
    hwloc_bitmap_t cpus;      /* what NUMAGUARD_CPUS reports */
    hwloc_bitmap_t mems;      /* what NUMAGUARD_MEMS reports */
    hwloc_bitmap_t saved;     /* affinity before we changed it */
    int have_saved;
    const ngi_sys_ops *sys;    /* the syscalls (NULL: the real ones) */
} apply_sets;

static void sets_free(apply_sets *s)
{
    hwloc_bitmap_free(s->cpus);
    hwloc_bitmap_free(s->mems);
    hwloc_bitmap_free(s->saved);
}

/* CPU part. Reported CPUs: the plan's set when we bind or only plan; the
 * current affinity when we keep the user's --cpu-bind or the plan does not
 * bind (policy none), because that is what the task really has. */
static int apply_cpus(const ng_task_plan *tp, unsigned flags, apply_sets *s,
                      ng_apply_result *res, char *err, size_t errlen)
{
    if (flags & NG_APPLY_SKIP_SYSCALLS) {
        if (tp->cpus)
            hwloc_bitmap_copy(s->cpus, tp->cpus);
        return 0;
    }
    s->have_saved = ng_current_cpus(s->saved) == 0;
    if (!tp->cpus || (flags & NG_APPLY_KEEP_CPUS)) {
        if (s->have_saved)
            hwloc_bitmap_copy(s->cpus, s->saved);
        return 0;
    }
    if (set_affinity(s->sys, tp->cpus, err, errlen) != 0)
        return -1;
    hwloc_bitmap_copy(s->cpus, tp->cpus);
    res->cpus_applied = 1;
    return 0;
}

static int apply_mem(const ng_task_plan *tp, const ng_policy *pol, unsigned flags,
                     apply_sets *s, ng_apply_result *res, char *err, size_t errlen)
{
    if (tp->mem_mode == NG_MEM_MODE_NONE || !tp->mem_nodes) {
        res->mem_mode = NG_MEM_MODE_NONE;
        ngi_strlcpy(res->mem_mode_text, "none", sizeof res->mem_mode_text);
        return 0;
    }
    hwloc_bitmap_copy(s->mems, tp->mem_nodes);
    res->mem_mode = tp->mem_mode;
    ngi_strlcpy(res->mem_mode_text, ng_mem_mode_name(tp->mem_mode), sizeof res->mem_mode_text);
    if (flags & NG_APPLY_SKIP_SYSCALLS)
        return 0;
    if (clip_to_allowed(s->mems, res, err, errlen) != 0)
        return -1;
    if (apply_mempolicy(s->sys, tp->mem_mode, s->mems, tp->mem_first,
                        (pol->mods & NG_MOD_STRICT) != 0, res, err, errlen) != 0)
        return -1;
    res->mem_applied = 1;
    if (strcmp(res->mem_mode_text, "preferred") == 0)
        hwloc_bitmap_only(s->mems, (unsigned)preferred_node(s->mems, tp->mem_first));
    return 0;
}

int ng_apply_task(const ng_topology *topo, const ng_plan *plan,
                  unsigned local_id, const ng_policy *pol, unsigned flags,
                  const ng_env_ops *env, ng_apply_result *res,
                  char *err, size_t errlen)
{
    return ngi_apply_task_sys(NULL, topo, plan, local_id, pol, flags, env, res, err, errlen);
}

int ngi_apply_task_sys(const ngi_sys_ops *sys, const ng_topology *topo, const ng_plan *plan,
                      unsigned local_id, const ng_policy *pol, unsigned flags,
                      const ng_env_ops *env, ng_apply_result *res, char *err, size_t errlen)
{
    ng_apply_result local_res;
    if (!res)
        res = &local_res;
    memset(res, 0, sizeof *res);
    res->flags = flags;
    ngi_strlcpy(res->mem_mode_text, "none", sizeof res->mem_mode_text);
    if (!topo || !plan || !pol || !env || !env->set)
        return ngi_fail(err, errlen, "ng_apply_task: missing argument");
    const ng_task_plan *tp = ng_plan_task(plan, local_id);
    if (!tp)
        return ngi_fail(err, errlen, "no plan for local task %u (plan has %u tasks)",
                       local_id, ng_plan_task_count(plan));
    apply_sets s = {hwloc_bitmap_alloc(), hwloc_bitmap_alloc(), hwloc_bitmap_alloc(), 0, sys};
    if (!s.cpus || !s.mems || !s.saved) {
        sets_free(&s);
        return ngi_fail(err, errlen, "out of memory");
    }
    int rc = apply_cpus(tp, flags, &s, res, err, errlen);
    if (rc == 0 && apply_mem(tp, pol, flags, &s, res, err, errlen) != 0) {
        /* All or nothing for the syscalls: a task whose memory policy failed
         * runs where Slurm placed it, not half-moved. */
        if (res->cpus_applied && s.have_saved)
            set_affinity(sys, s.saved, NULL, 0);
        res->cpus_applied = 0;
        rc = -1;
    }
    if (rc == 0)
        rc = export_env(topo, tp, pol, s.cpus, s.mems, res, env, err, errlen);
    sets_free(&s);
    return rc;
}
