/* What a task got, as data (ng_task_summary_of) and as the one-line
 * verbose report in the spirit of srun --cpu-bind=verbose
 * (ng_task_summary_format): GPUs, NUMA nodes, CPUs, memory policy after
 * fallbacks, the thread count exported and presets kept, flags, warnings.
 * Adapters correct the data they know better (the task's real local id,
 * its real GPUs) between the two; ng_task_describe does both at once. */
#include "private/plan.h"

#include <stdarg.h>
#include <stdlib.h>
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

/* "none", the list, or "(long list)". */
static void list_text(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    if (!set || hwloc_bitmap_iszero(set))
        ngi_strlcpy(buf, "none", len);
    else if (ng_list_format(set, buf, len) < 0)
        ngi_strlcpy(buf, "(long list)", len);
}

static void summary_numa(const ng_topology *topo, const ng_task_plan *tp, ng_task_summary *out)
{
    hwloc_bitmap_t numa = hwloc_bitmap_alloc();
    if (!numa) {
        ngi_strlcpy(out->numa, "(unknown)", sizeof out->numa);
        return;
    }
    numa_of_cpus(topo, tp->cpus, numa);
    list_text(numa, out->numa, sizeof out->numa);
    hwloc_bitmap_free(numa);
}

static void summary_mem(const ng_task_plan *tp, const ng_apply_result *res, ng_task_summary *out)
{
    const char *mode = res ? res->mem_mode_text : ng_mem_mode_name(tp->mem_mode);
    if (!mode[0] || strcmp(mode, "none") == 0 || !tp->mem_nodes) {
        ngi_strlcpy(out->mem, "none", sizeof out->mem);
        return;
    }
    char list[NG_MAX_ARG];
    list_text(tp->mem_nodes, list, sizeof list);
    snprintf(out->mem, sizeof out->mem, "%s:%s", mode, list);
}

/* The thread counts and variables: what apply exported, else the plan's. */
static void summary_threads(const ng_task_plan *tp, const ng_apply_result *res,
                            ng_task_summary *out)
{
    if (!res) {
        out->threads = tp->n_env ? (unsigned)strtoul(tp->env[0].value, NULL, 10) : 0;
        for (unsigned i = 0; i < tp->n_env; i++)
            out->governor |= (tp->env[i].flags & NG_ENV_GOVERNOR) != 0;
        return;
    }
    out->threads = res->threads;
    out->quota_threads = res->quota_threads != 0;
    out->governor = res->governor;
    ngi_strlcpy(out->kept, res->kept, sizeof out->kept);
    ngi_strlcpy(out->net_kept, res->net_kept, sizeof out->net_kept);
    ngi_strlcpy(out->warning, res->warning, sizeof out->warning);
}

static const char *cpu_source(const ng_apply_result *res)
{
    if (!res || (res->flags & NG_APPLY_SKIP_SYSCALLS))
        return "plan only";
    if (res->flags & NG_APPLY_LAUNCHER_MASK)
        return "cpus kept from the launcher";
    if (res->flags & NG_APPLY_KEEP_CPUS)
        return "cpus kept from --cpu-bind";
    return NULL;
}

int ng_task_summary_of(const ng_topology *topo, const ng_plan *plan, unsigned local_id,
                       int global_rank, const ng_apply_result *res, ng_task_summary *out)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    const ng_task_plan *tp = (topo && plan) ? ng_plan_task(plan, local_id) : NULL;
    if (!tp)
        return -1;
    out->global_rank = global_rank;
    out->local_id = local_id;
    out->n_gpus = tp->n_gpus <= NG_MAX_GPUS ? tp->n_gpus : NG_MAX_GPUS;
    memcpy(out->gpus, tp->gpus, out->n_gpus * sizeof *out->gpus);
    summary_numa(topo, tp, out);
    if (tp->cpus)
        list_text(tp->cpus, out->cpus, sizeof out->cpus);
    else
        ngi_strlcpy(out->cpus, "unchanged", sizeof out->cpus);
    summary_mem(tp, res, out);
    summary_threads(tp, res, out);
    if (tp->n_nics)
        ng_nic_list_format(topo, tp->nics, tp->n_nics, out->nics, sizeof out->nics);
    out->cpu_source = cpu_source(res);
    out->shares_cores = tp->shares_cores;
    out->gpu_remote = tp->gpu_remote;
    if (tp->note)
        ngi_strlcpy(out->note, tp->note, sizeof out->note);
    return 0;
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

/* " threads N (...)", " (kept ...)", " nics ...", " (kept ...)". */
static void format_vars(sbuf *sb, const ng_task_summary *s)
{
    if (s->threads)
        sb_printf(sb, " threads %u%s%s", s->threads,
                  s->quota_threads ? " (cgroup cpu.max quota)" : "",
                  s->governor ? " (adaptive: teams shared by their callers)" : "");
    if (s->kept[0])
        sb_printf(sb, " (kept %s)", s->kept);
    if (s->nics[0])
        sb_printf(sb, " nics %s", s->nics);
    if (s->net_kept[0])
        sb_printf(sb, " (kept %s)", s->net_kept);
}

int ng_task_summary_format(const ng_topology *topo, const ng_task_summary *s, char *buf,
                           size_t len)
{
    if (!buf || !len)
        return -1;
    buf[0] = '\0';
    if (!s)
        return -1;
    sbuf sb = {buf, len, 0, 0};
    if (s->global_rank >= 0)
        sb_printf(&sb, "numaguard: rank %d (local %u):", s->global_rank, s->local_id);
    else
        sb_printf(&sb, "numaguard: task %u:", s->local_id);
    char gpus[NG_MAX_ARG];
    ng_gpu_list_format(topo, s->gpus, s->n_gpus, gpus, sizeof gpus);
    sb_printf(&sb, " gpus %s numa %s cpus %s mem %s", gpus[0] ? gpus : "none", s->numa,
              s->cpus, s->mem);
    format_vars(&sb, s);
    if (s->cpu_source)
        sb_printf(&sb, " (%s)", s->cpu_source);
    if (s->shares_cores)
        sb_printf(&sb, " (shares cores)");
    if (s->gpu_remote)
        sb_printf(&sb, " (gpu has no local cores here)");
    if (s->note[0])
        sb_printf(&sb, " (%s)", s->note);
    if (s->warning[0])
        sb_printf(&sb, " [%s]", s->warning);
    return sb.truncated ? -1 : (int)sb.used;
}

int ng_task_describe(const ng_topology *topo, const ng_plan *plan,
                     unsigned local_id, int global_rank,
                     const ng_apply_result *res, char *buf, size_t len)
{
    ng_task_summary s;
    if (buf && len)
        buf[0] = '\0';
    if (!buf || !len || ng_task_summary_of(topo, plan, local_id, global_rank, res, &s) < 0)
        return -1;
    return ng_task_summary_format(topo, &s, buf, len);
}
