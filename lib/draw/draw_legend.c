/* The title's summary line and the legend: keys (what the colours and
 * marks mean), then one row per task (GPUs, CPUs, memory, threads, NICs)
 * or per process, then warnings. The SVG and the map print the same rows. */
#include "private/draw.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Rows of tasks or processes shown; the rest are counted in one row. */
#define MAX_ITEMS 256

static ngi_legend_row *row_new(ngi_legend *lg, ngi_swatch sw, unsigned value)
{
    if (lg->n == lg->cap) {
        unsigned cap = lg->cap ? 2 * lg->cap : 32;
        ngi_legend_row *r = realloc(lg->row, cap * sizeof *r);
        if (!r)
            return NULL;
        lg->row = r;
        lg->cap = cap;
    }
    ngi_legend_row *r = &lg->row[lg->n++];
    r->swatch = sw;
    r->value = value;
    r->text[0] = '\0';
    return r;
}

static int row(ngi_legend *lg, ngi_swatch sw, unsigned value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int row(ngi_legend *lg, ngi_swatch sw, unsigned value, const char *fmt, ...)
{
    ngi_legend_row *r = row_new(lg, sw, value);
    if (!r)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->text, sizeof r->text, fmt, ap);
    va_end(ap);
    return 0;
}

static void summary(ngi_legend *lg, const ngi_draw_model *m)
{
    int pus = hwloc_bitmap_weight(m->present), cores = hwloc_get_nbobjs_by_type(m->hw, HWLOC_OBJ_CORE);
    int alloc = hwloc_bitmap_weight(m->allowed);
    char *s = lg->summary;
    size_t len = sizeof lg->summary;
    unsigned nn = ng_topology_numa_count(m->topo), ng = ng_topology_gpu_count(m->topo);
    unsigned nc = ng_topology_nic_count(m->topo);
    cores = cores > 0 ? cores : pus;
    int u = snprintf(s, len, "%d PU%s, %d core%s, %u NUMA node%s, %u GPU%s, %u NIC%s", pus,
                     pus == 1 ? "" : "s", cores, cores == 1 ? "" : "s", nn, nn == 1 ? "" : "s",
                     ng, ng == 1 ? "" : "s", nc, nc == 1 ? "" : "s");
    if (u < 0 || (size_t)u >= len)
        return;
    if (m->nic_hidden)
        u += snprintf(s + u, len - (size_t)u, " (%u not shown)", m->nic_hidden);
    if ((size_t)u >= len)
        return;
    if (m->mode == NGI_MODE_PLAN)
        snprintf(s + u, len - (size_t)u, "; %u task%s on %d allocated PUs", m->ntasks,
                 m->ntasks == 1 ? "" : "s", alloc);
    else if (m->mode == NGI_MODE_CHECK)
        snprintf(s + u, len - (size_t)u, "; %u process%s", ng_inspection_proc_count(m->req->inspection),
                 ng_inspection_proc_count(m->req->inspection) == 1 ? "" : "es");
    else if (alloc != pus)
        snprintf(s + u, len - (size_t)u, "; %d allowed", alloc);
}

/* Which memory modes the plan uses (bit per ng_mem_mode). */
_Static_assert(NG_MEM_MODE_COUNT <= 32, "modes_used: a bit per ng_mem_mode in an unsigned");
static unsigned modes_used(const ngi_draw_model *m)
{
    unsigned used = 0;
    for (unsigned t = 0; t < m->ntasks; t++)
        used |= 1u << ngi_draw_task_mode(m, t);
    return used;
}

static int any_shared(const ngi_draw_model *m)
{
    for (unsigned pu = 0; pu < m->npu; pu++)
        if (m->pu_ntasks[pu] > 1)
            return 1;
    for (hwloc_obj_t c = ngi_draw_next_core(m->hw, NULL); c; c = ngi_draw_next_core(m->hw, c)) {
        ngi_draw_cell cell;
        ngi_draw_cell_of(m, c->cpuset, &cell);
        if (cell.shared)
            return 1;
    }
    return 0;
}

static int any_idle(const ngi_draw_model *m)
{
    int pu;
    hwloc_bitmap_foreach_begin(pu, m->allowed) {
        if ((unsigned)pu < m->npu && !m->pu_ntasks[pu])
            return 1;
    }
    hwloc_bitmap_foreach_end();
    return 0;
}

static int plan_keys(ngi_legend *lg, const ngi_draw_model *m)
{
    int rc = any_idle(m) ? row(lg, NGI_SW_STATE, NGI_PU_IDLE, "allocated, no task") : 0;
    if (!hwloc_bitmap_isequal(m->allowed, m->present) || !hwloc_bitmap_iszero(m->absent))
        rc |= row(lg, NGI_SW_STATE, NGI_PU_EXCLUDED, "not allocated, offline or disallowed");
    if (any_shared(m))
        rc |= row(lg, NGI_SW_SHARED, 0, "shared core (its tasks)");
    unsigned used = modes_used(m);
    for (unsigned k = 0; k < NG_MEM_MODE_COUNT; k++)
        if (k != NG_MEM_MODE_NONE && used >> k & 1)
            rc |= row(lg, NGI_SW_MODE, k, "memory %s", ngi_draw_mode_word((ng_mem_mode)k));
    if (m->req->flags & NG_DRAW_HIGHLIGHT && m->req->highlight_task < m->ntasks)
        rc |= row(lg, NGI_SW_HIGHLIGHT, m->req->highlight_task, "this rank (task %u)",
                  m->req->highlight_task);
    return rc;
}

static int check_keys(ngi_legend *lg, const ngi_draw_model *m)
{
    int rc = row(lg, NGI_SW_NONE, 0, "runnable threads per core:");
    for (unsigned h = 0; h < NGI_HEAT_LEVELS; h++)
        rc |= row(lg, NGI_SW_HEAT, h, "%s", "");
    rc |= row(lg, NGI_SW_OVER, 0, "more runnable threads than PUs");
    rc |= row(lg, NGI_SW_PILED, 0, "bound processes overlap");
    if (!hwloc_bitmap_isequal(m->allowed, m->present) || !hwloc_bitmap_iszero(m->absent))
        rc |= row(lg, NGI_SW_STATE, NGI_PU_EXCLUDED, "offline or disallowed");
    return rc;
}

/* The job-wide picture's one legend (every node's cores read alike). */
static int job_keys(ngi_legend *lg)
{
    int rc = row(lg, NGI_SW_NONE, 0, "a core in its task's colour (the number: the task's rank)");
    rc |= row(lg, NGI_SW_STATE, NGI_PU_IDLE, "no task");
    rc |= row(lg, NGI_SW_SHARED, 0, "several tasks");
    rc |= row(lg, NGI_SW_STATE, NGI_PU_EXCLUDED, "offline or disallowed");
    rc |= row(lg, NGI_SW_NONE, 0, "the small squares, one per PU: its runnable threads");
    for (unsigned h = 0; h < NGI_HEAT_LEVELS; h++)
        rc |= row(lg, NGI_SW_HEAT, h, "%s", "");
    rc |= row(lg, NGI_SW_OVER, 0, "more runnable threads than PUs");
    rc |= row(lg, NGI_SW_PILED, 0, "bound processes overlap");
    return rc;
}

static int topo_keys(ngi_legend *lg, const ngi_draw_model *m)
{
    int rc = row(lg, NGI_SW_STATE, NGI_PU_FREE, "core (its first CPU number)");
    if (!hwloc_bitmap_isequal(m->allowed, m->present) || !hwloc_bitmap_iszero(m->absent))
        rc |= row(lg, NGI_SW_STATE, NGI_PU_EXCLUDED, "not allowed, offline or disallowed");
    return rc;
}

/* The count --omp-guard exports (its count variables carry it), else the
 * cores (PUs with smt) the task owns: what `plan` prints as threads. */
static unsigned task_threads(const ng_task_plan *tp)
{
    for (unsigned k = 0; k < tp->n_env; k++)
        if (!(tp->env[k].flags & NG_ENV_BINDING))
            return (unsigned)strtoul(tp->env[k].value, NULL, 10);
    return tp->threads;
}

static int task_row(ngi_legend *lg, const ngi_draw_model *m, unsigned t)
{
    const ng_task_plan *tp = ng_plan_task(m->req->plan, t);
    char gpus[160], cpus[200], nodes[100], nics[100];
    if (ng_gpu_list_format(m->topo, tp->gpus, tp->n_gpus, gpus, sizeof gpus) <= 0)
        snprintf(gpus, sizeof gpus, "none");
    if (tp->cpus)
        ngi_draw_list(tp->cpus, cpus, sizeof cpus);
    else
        snprintf(cpus, sizeof cpus, "unchanged");
    ngi_draw_list(tp->mem_nodes, nodes, sizeof nodes);
    if (ng_nic_list_format(m->topo, tp->nics, tp->n_nics, nics, sizeof nics) <= 0)
        snprintf(nics, sizeof nics, "none");
    return row(lg, NGI_SW_TASK, t, "task %u: GPUs %s; CPUs %s; memory %s%s%s; threads %u%s%s", t,
               gpus, cpus, ngi_draw_mode_word(tp->mem_mode), tp->mem_nodes ? ":" : "",
               tp->mem_nodes ? nodes : "", task_threads(tp), tp->n_nics ? "; NICs " : "",
               tp->n_nics ? nics : "");
}

static int plan_rows(ngi_legend *lg, const ngi_draw_model *m)
{
    int rc = 0;
    for (unsigned t = 0; t < m->ntasks && t < MAX_ITEMS; t++)
        rc |= task_row(lg, m, t);
    if (m->ntasks > MAX_ITEMS)
        rc |= row(lg, NGI_SW_NONE, 0, "... and %u more tasks", m->ntasks - MAX_ITEMS);
    for (unsigned i = 0; i < ng_plan_warning_count(m->req->plan); i++)
        rc |= row(lg, NGI_SW_NONE, 0, "warning: %s", ng_plan_warning(m->req->plan, i));
    return rc;
}

static int proc_row(ngi_legend *lg, const ng_proc_view *p)
{
    char cpus[200];
    ngi_draw_list(p->cpus, cpus, sizeof cpus);
    return row(lg, NGI_SW_NONE, 0, "pid %d (%.63s): CPUs %s (%u core%s); %u of %u threads runnable%s",
               p->pid, p->comm, cpus, p->cores, p->cores == 1 ? "" : "s", p->runnable, p->threads,
               p->runnable > p->cores ? ", oversubscribed" : "");
}

static int check_rows(ngi_legend *lg, const ng_inspection *ins)
{
    int rc = 0;
    unsigned shown = 0;
    for (unsigned i = 0; i < ng_inspection_proc_count(ins); i++) {
        const ng_proc_view *p = ng_inspection_proc(ins, i);
        if (!p->gone && shown++ < MAX_ITEMS)
            rc |= proc_row(lg, p);
    }
    if (shown > MAX_ITEMS)
        rc |= row(lg, NGI_SW_NONE, 0, "... and %u more processes", shown - MAX_ITEMS);
    for (unsigned i = 0; i < ng_inspection_overlap_count(ins); i++) {
        const ng_overlap_view *o = ng_inspection_overlap(ins, i);
        char pids[160] = "", cpus[200];
        for (unsigned k = 0, u = 0; k < o->n_pids && u + 12 < sizeof pids; k++)
            u += (unsigned)snprintf(pids + u, sizeof pids - u, "%s%d", k ? "," : "", o->pids[k]);
        ngi_draw_list(o->cpus, cpus, sizeof cpus);
        rc |= row(lg, NGI_SW_PILED, 0, "piled: pids %s on CPUs %s (%u core%s)", pids, cpus,
                  o->cores, o->cores == 1 ? "" : "s");
    }
    const ng_notes *w = ng_inspection_warnings(ins);
    for (unsigned i = 0; i < w->n; i++)
        rc |= row(lg, NGI_SW_NONE, 0, "warning: %s", w->text[i]);
    return rc;
}

int ngi_draw_legend(ngi_legend *lg, const ngi_draw_model *m, char *err, size_t errlen)
{
    int rc;
    memset(lg, 0, sizeof *lg);
    if (m->topo)   /* the job-wide legend has no one machine to sum up */
        summary(lg, m);
    if (m->mode == NGI_MODE_PLAN)
        rc = plan_keys(lg, m);
    else if (m->mode == NGI_MODE_CHECK)
        rc = check_keys(lg, m);
    else if (m->mode == NGI_MODE_JOB)
        rc = job_keys(lg);
    else
        rc = topo_keys(lg, m);
    lg->nkeys = lg->n;
    if (!rc && m->mode == NGI_MODE_PLAN)
        rc = plan_rows(lg, m);
    else if (!rc && m->mode == NGI_MODE_CHECK)
        rc = check_rows(lg, m->req->inspection);
    if (rc) {
        ngi_draw_legend_free(lg);
        return ngi_fail(err, errlen, "draw: out of memory");
    }
    return 0;
}

void ngi_draw_legend_free(ngi_legend *lg)
{
    free(lg->row);
    memset(lg, 0, sizeof *lg);
}
