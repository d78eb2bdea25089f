/* The one-line verbose report of a task (ng_task_describe), in the spirit
 * of srun --cpu-bind=verbose: GPUs, NUMA nodes, CPUs, memory policy after
 * fallbacks, the thread count exported and presets kept, flags, warnings. */
#include "private/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* CPU-bearing NUMA nodes whose CPUs intersect @p cpus. */
static void numa_of_cpus(const ng_topology *topo, hwloc_const_cpuset_t cpus, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    if (!cpus)
        return;
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
        const ng_numa_info *n = ng_topology_numa(topo, i);
        if (n && n->has_cpus && hwloc_bitmap_intersects(n->cpus, cpus))
            hwloc_bitmap_set(out, n->os_index);
    }
}

/* Bounded appender: keeps going after truncation, remembers it. */
typedef struct sbuf {
    char *buf;
    size_t len, used;
    int truncated;
} sbuf;

static void sb_printf(sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *sb, const char *fmt, ...)
{
    if (sb->truncated || sb->used >= sb->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(sb->buf + sb->used, sb->len - sb->used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sb->len - sb->used) {
        sb->truncated = 1;
        sb->used = sb->len - 1;
    } else {
        sb->used += (size_t)n;
    }
}

static void sb_list(sbuf *sb, const char *label, hwloc_const_bitmap_t set)
{
    char list[NG_MAX_ARG];
    if (!set || hwloc_bitmap_iszero(set))
        sb_printf(sb, " %s none", label);
    else if (ng_list_format(set, list, sizeof list) < 0)
        sb_printf(sb, " %s (long list)", label);
    else
        sb_printf(sb, " %s %s", label, list);
}

int ng_task_describe(const ng_topology *topo, const ng_plan *plan,
                     unsigned local_id, int global_rank,
                     const ng_apply_result *res, char *buf, size_t len)
{
    if (!buf || !len)
        return -1;
    buf[0] = '\0';
    const ng_task_plan *tp = (topo && plan) ? ng_plan_task(plan, local_id) : NULL;
    if (!tp)
        return -1;
    sbuf sb = {buf, len, 0, 0};
    if (global_rank >= 0)
        sb_printf(&sb, "numaguard: rank %d (local %u):", global_rank, local_id);
    else
        sb_printf(&sb, "numaguard: task %u:", local_id);
    char gpus[NG_MAX_ARG];
    ng_gpu_list_format(topo, tp->gpus, tp->n_gpus, gpus, sizeof gpus);
    sb_printf(&sb, " gpus %s", gpus[0] ? gpus : "none");
    hwloc_bitmap_t numa = hwloc_bitmap_alloc();
    if (!numa)
        return -1;
    numa_of_cpus(topo, tp->cpus, numa);
    sb_list(&sb, "numa", numa);
    hwloc_bitmap_free(numa);
    if (tp->cpus)
        sb_list(&sb, "cpus", tp->cpus);
    else
        sb_printf(&sb, " cpus unchanged");
    const char *mode = res ? res->mem_mode_text : ng_mem_mode_name(tp->mem_mode);
    if (!mode[0] || strcmp(mode, "none") == 0 || !tp->mem_nodes) {
        sb_printf(&sb, " mem none");
    } else {
        char list[NG_MAX_ARG];
        if (ng_list_format(tp->mem_nodes, list, sizeof list) < 0)
            ngi_strlcpy(list, "(long list)", sizeof list);
        sb_printf(&sb, " mem %s:%s", mode, list);
    }
    if (res && res->threads)
        sb_printf(&sb, " threads %u%s", res->threads,
                  res->quota_threads ? " (cgroup cpu.max quota)" : "");
    else if (!res && tp->n_env)
        sb_printf(&sb, " threads %s", tp->env[0].value);
    if (res && res->kept[0])
        sb_printf(&sb, " (kept %s)", res->kept);
    if (tp->n_nics) {
        char nics[NG_MAX_ARG];
        ng_nic_list_format(topo, tp->nics, tp->n_nics, nics, sizeof nics);
        sb_printf(&sb, " nics %s", nics);
    }
    if (res && res->net_kept[0])
        sb_printf(&sb, " (kept %s)", res->net_kept);
    if (!res || (res->flags & NG_APPLY_SKIP_SYSCALLS))
        sb_printf(&sb, " (plan only)");
    else if (res->flags & NG_APPLY_LAUNCHER_MASK)
        sb_printf(&sb, " (cpus kept from the launcher)");
    else if (res->flags & NG_APPLY_KEEP_CPUS)
        sb_printf(&sb, " (cpus kept from --cpu-bind)");
    if (tp->shares_cores)
        sb_printf(&sb, " (shares cores)");
    if (tp->gpu_remote)
        sb_printf(&sb, " (gpu has no local cores here)");
    if (tp->note)
        sb_printf(&sb, " (%s)", tp->note);
    if (res && res->warning[0])
        sb_printf(&sb, " [%s]", res->warning);
    return sb.truncated ? -1 : (int)sb.used;
}
