/* What a picture says, before any geometry: for every PU its task(s) or
 * state, for every NUMA node, GPU and NIC the tasks that use it, and for
 * `check` the runnable threads and the piled PUs. The SVG and the map
 * both draw from this, so they cannot disagree. */
#include "private/draw.h"
#include "private/topo.h"

#include <stdlib.h>
#include <string.h>

static hwloc_bitmap_t *sets_alloc(unsigned n)
{
    hwloc_bitmap_t *s = calloc(n ? n : 1, sizeof *s);
    for (unsigned i = 0; s && i < n; i++)
        if (!(s[i] = hwloc_bitmap_alloc())) {
            while (i--)
                hwloc_bitmap_free(s[i]);
            free(s);
            return NULL;
        }
    return s;
}

static void sets_free(hwloc_bitmap_t *s, unsigned n)
{
    for (unsigned i = 0; s && i < n; i++)
        hwloc_bitmap_free(s[i]);
    free(s);
}

/* The PU sets: what hwloc's tree holds, what it does not (offline or
 * disallowed CPUs of the complete set), and the allocation. */
static int cpu_sets(ngi_draw_model *m)
{
    hwloc_const_cpuset_t complete = hwloc_topology_get_complete_cpuset(m->hw);
    m->present = hwloc_bitmap_dup(hwloc_get_root_obj(m->hw)->cpuset);
    m->absent = hwloc_bitmap_alloc();
    m->allowed = hwloc_bitmap_alloc();
    m->piled = hwloc_bitmap_alloc();
    if (!m->present || !m->absent || !m->allowed || !m->piled)
        return -1;
    hwloc_bitmap_andnot(m->absent, complete, m->present);
    hwloc_bitmap_and(m->allowed, m->req->allowed_cpus ? m->req->allowed_cpus
                                                      : ng_topology_allowed_cpus(m->topo),
                     m->present);
    int last = hwloc_bitmap_last(complete);
    int lp = hwloc_bitmap_last(m->present);
    last = lp > last ? lp : last;
    /* PU OS indices are bounded by the loader (NG_MAX_PU_OS_INDEX). */
    m->npu = last < 0 ? 1 : (unsigned)last + 1;
    return 0;
}

static void plan_task(ngi_draw_model *m, unsigned t, const ng_task_plan *tp)
{
    int pu;
    if (tp->cpus)
        hwloc_bitmap_foreach_begin(pu, tp->cpus) {
            if ((unsigned)pu >= m->npu)
                break;
            if (m->pu_task[pu] < 0)
                m->pu_task[pu] = (int)t;
            m->pu_ntasks[pu]++;
        }
        hwloc_bitmap_foreach_end();
    for (unsigned k = 0; k < tp->n_gpus; k++)
        if (tp->gpus[k] >= 0 && (unsigned)tp->gpus[k] < ng_topology_gpu_count(m->topo))
            hwloc_bitmap_set(m->gpu_tasks[tp->gpus[k]], t);
    for (unsigned k = 0; k < tp->n_nics; k++)
        if (tp->nics[k] < ng_topology_nic_count(m->topo))
            hwloc_bitmap_set(m->nic_tasks[tp->nics[k]], t);
    if (tp->mem_mode != NG_MEM_MODE_NONE && tp->mem_nodes)
        hwloc_bitmap_foreach_begin(pu, tp->mem_nodes) {
            int i = ngi_numa_index(m->topo, (unsigned)pu);
            if (i >= 0)
                hwloc_bitmap_set(m->node_tasks[i], t);
        }
        hwloc_bitmap_foreach_end();
}

static void check_fill(ngi_draw_model *m, const ng_inspection *ins)
{
    for (unsigned i = 0; i < ng_inspection_cpu_count(ins); i++) {
        const ng_cpu_view *c = ng_inspection_cpu(ins, i);
        if (c->cpu < m->npu)
            m->pu_runnable[c->cpu] = c->runnable;
    }
    for (unsigned i = 0; i < ng_inspection_overlap_count(ins); i++)
        hwloc_bitmap_or(m->piled, m->piled, ng_inspection_overlap(ins, i)->cpus);
}

/* Which NICs the picture draws (docs/draw.md): all with NG_DRAW_ALL_NICS;
 * in a plan those its tasks use (the rest are no part of the decision: on
 * an 8-GPU node with 32 EFA adapters they filled most of the picture); in
 * topo and check the RDMA ones, small. Ethernet interfaces are never
 * candidates by default (docs/network.md), so they are counted, not drawn. */
static void nic_show(ngi_draw_model *m)
{
    unsigned n = ng_topology_nic_count(m->topo);
    for (unsigned t = 0; t < m->ntasks && !m->nics_asked; t++) {
        const ng_task_plan *tp = ng_plan_task(m->req->plan, t);
        m->nics_asked = tp->n_nics > 0 || tp->n_net_env > 0;
    }
    for (unsigned i = 0; i < n; i++) {
        const ng_nic_info *ni = ng_topology_nic(m->topo, i);
        ngi_nic_show s = NGI_NIC_FULL;
        if (!(m->req->flags & NG_DRAW_ALL_NICS)) {
            if (m->mode == NGI_MODE_PLAN)
                s = hwloc_bitmap_iszero(m->nic_tasks[i]) ? NGI_NIC_HIDDEN : NGI_NIC_FULL;
            else
                s = ni->rdma ? NGI_NIC_SMALL : NGI_NIC_HIDDEN;
        }
        m->nic_shown[i] = (unsigned char)s;
        if (s == NGI_NIC_HIDDEN) {
            m->nic_hidden++;
            m->nic_hidden_eth += !ni->rdma;
        }
    }
}

static int arrays(ngi_draw_model *m)
{
    m->pu_task = malloc(m->npu * sizeof *m->pu_task);
    m->pu_ntasks = calloc(m->npu, sizeof *m->pu_ntasks);
    m->pu_runnable = calloc(m->npu, sizeof *m->pu_runnable);
    m->node_tasks = sets_alloc(ng_topology_numa_count(m->topo));
    m->gpu_tasks = sets_alloc(ng_topology_gpu_count(m->topo));
    m->nic_tasks = sets_alloc(ng_topology_nic_count(m->topo));
    m->nic_shown = calloc(ng_topology_nic_count(m->topo) + 1, 1);
    if (!m->pu_task || !m->pu_ntasks || !m->pu_runnable || !m->node_tasks || !m->gpu_tasks ||
        !m->nic_tasks || !m->nic_shown)
        return -1;
    for (unsigned i = 0; i < m->npu; i++)
        m->pu_task[i] = -1;
    return 0;
}

int ngi_draw_model_build(ngi_draw_model *m, const ng_topology *topo,
                         const ng_draw_request *req, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->topo = topo;
    m->req = req;
    if (!topo || !req)
        return ngi_fail(err, errlen, "draw: no topology or no request");
    if (req->plan && req->inspection)
        return ngi_fail(err, errlen, "draw: a plan or an inspection, not both");
    m->hw = ng_topology_hwloc(topo);
    m->mode = req->plan ? NGI_MODE_PLAN : req->inspection ? NGI_MODE_CHECK : NGI_MODE_TOPO;
    m->ntasks = req->plan ? ng_plan_task_count(req->plan) : 0;
    if (cpu_sets(m) < 0 || arrays(m) < 0) {
        ngi_draw_model_free(m);
        return ngi_fail(err, errlen, "draw: out of memory");
    }
    for (unsigned t = 0; t < m->ntasks; t++)
        plan_task(m, t, ng_plan_task(req->plan, t));
    if (req->inspection)
        check_fill(m, req->inspection);
    nic_show(m);
    return 0;
}

void ngi_draw_model_free(ngi_draw_model *m)
{
    free(m->pu_task);
    free(m->pu_ntasks);
    free(m->pu_runnable);
    free(m->nic_shown);
    hwloc_bitmap_free(m->present);
    hwloc_bitmap_free(m->absent);
    hwloc_bitmap_free(m->allowed);
    hwloc_bitmap_free(m->piled);
    if (m->topo) {
        sets_free(m->node_tasks, ng_topology_numa_count(m->topo));
        sets_free(m->gpu_tasks, ng_topology_gpu_count(m->topo));
        sets_free(m->nic_tasks, ng_topology_nic_count(m->topo));
    }
    memset(m, 0, sizeof *m);
}

ngi_pu_state ngi_draw_pu_state(const ngi_draw_model *m, unsigned pu)
{
    if (!hwloc_bitmap_isset(m->present, pu))
        return NGI_PU_ABSENT;
    if (!hwloc_bitmap_isset(m->allowed, pu))
        return NGI_PU_EXCLUDED;
    if (m->mode != NGI_MODE_PLAN && m->mode != NGI_MODE_JOB)
        return NGI_PU_FREE;
    return pu < m->npu && m->pu_ntasks[pu] ? NGI_PU_TASK : NGI_PU_IDLE;
}

ng_mem_mode ngi_draw_task_mode(const ngi_draw_model *m, unsigned task)
{
    const ng_task_plan *tp = m->req->plan ? ng_plan_task(m->req->plan, task) : NULL;
    return tp ? tp->mem_mode : NG_MEM_MODE_NONE;
}

/* A memory mode in the pictures: the map's letter, the SVG's and the
 * legend's word. One row per mode (designated; a missing one fails the
 * assertion below when the mode is the last). */
static const struct {
    char letter;
    const char *word;
} draw_modes[] = {
    [NG_MEM_MODE_NONE] = {'-', "none"},
    [NG_MEM_MODE_BIND] = {'B', "bind"},
    [NG_MEM_MODE_PREFERRED_MANY] = {'P', "prefer"},
    [NG_MEM_MODE_INTERLEAVE] = {'I', "interleave"},
    [NG_MEM_MODE_WEIGHTED] = {'W', "weighted"},
};
_Static_assert(NGI_ARRAY_LEN(draw_modes) == NG_MEM_MODE_COUNT,
               "draw_modes: one letter and word per ng_mem_mode");

char ngi_draw_mode_letter(ng_mem_mode mode)
{
    return (unsigned)mode < NG_MEM_MODE_COUNT ? draw_modes[mode].letter : '?';
}

const char *ngi_draw_mode_word(ng_mem_mode mode)
{
    return (unsigned)mode < NG_MEM_MODE_COUNT ? draw_modes[mode].word : "?";
}

/* A core's state is its most telling PU's: a task, else allocated, else
 * free, else excluded, else absent (the enum's order, TASK first). */
static int state_rank(ngi_pu_state s)
{
    static const int rank[] = {[NGI_PU_TASK] = 0, [NGI_PU_IDLE] = 1, [NGI_PU_FREE] = 2,
                               [NGI_PU_EXCLUDED] = 3, [NGI_PU_ABSENT] = 4};
    return rank[s];
}

static void cell_pu(const ngi_draw_model *m, unsigned pu, ngi_draw_cell *c)
{
    ngi_pu_state s = ngi_draw_pu_state(m, pu);
    if (!c->pus || state_rank(s) < state_rank(c->state))
        c->state = s;
    if (!c->pus)
        c->first_pu = pu;
    c->pus++;
    if (pu >= m->npu)
        return;
    int t = m->pu_task[pu];
    if (m->pu_ntasks[pu] > 1 || (t >= 0 && c->task >= 0 && t != c->task))
        c->shared = 1;
    if (t >= 0 && (c->task < 0 || t < c->task))
        c->task = t;
    c->runnable += m->pu_runnable[pu];
}

/* The tasks on a shared core, named in its cell ("0,1"): which tasks share
 * is the point of the mark, not only the legend's. */
static void shared_tasks(const ngi_draw_model *m, hwloc_const_cpuset_t pus, ngi_draw_cell *c)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return;
    for (unsigned t = 0; t < m->ntasks; t++) {
        const ng_task_plan *tp = ng_plan_task(m->req->plan, t);
        if (tp->cpus && hwloc_bitmap_intersects(tp->cpus, pus))
            hwloc_bitmap_set(set, t);
    }
    if (ng_list_format(set, c->tasks, sizeof c->tasks) < 0 || strlen(c->tasks) > 9)
        snprintf(c->tasks, sizeof c->tasks, "%d tasks", hwloc_bitmap_weight(set));
    hwloc_bitmap_free(set);
}

void ngi_draw_cell_of(const ngi_draw_model *m, hwloc_const_cpuset_t pus, ngi_draw_cell *c)
{
    int pu;
    memset(c, 0, sizeof *c);
    c->task = -1;
    hwloc_bitmap_foreach_begin(pu, pus) {
        cell_pu(m, (unsigned)pu, c);
    }
    hwloc_bitmap_foreach_end();
    c->over = (m->mode == NGI_MODE_CHECK || m->mode == NGI_MODE_JOB) && c->runnable > c->pus;
    if (c->shared && m->mode == NGI_MODE_PLAN)
        shared_tasks(m, pus, c);
    c->piled = hwloc_bitmap_intersects(m->piled, pus);
    if ((m->req->flags & NG_DRAW_HIGHLIGHT) && m->req->plan &&
        m->req->highlight_task < m->ntasks) {
        const ng_task_plan *tp = ng_plan_task(m->req->plan, m->req->highlight_task);
        c->highlight = tp->cpus && hwloc_bitmap_intersects(tp->cpus, pus);
    }
}

hwloc_obj_t ngi_draw_core_of(hwloc_obj_t pu)
{
    for (hwloc_obj_t o = pu->parent; o; o = o->parent)
        if (o->type == HWLOC_OBJ_CORE)
            return o;
    return pu;
}

/* PUs of one core are consecutive in hwloc's logical order (a depth-first
 * walk), so the core after @p prev holds the PU after its last PU. */
hwloc_obj_t ngi_draw_next_core(hwloc_topology_t hw, hwloc_obj_t prev)
{
    hwloc_obj_t pu;
    if (!prev) {
        pu = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, 0);
    } else {
        pu = prev;
        while (pu->type != HWLOC_OBJ_PU && pu->last_child)
            pu = pu->last_child;
        pu = pu->type == HWLOC_OBJ_PU ? pu->next_cousin : NULL;
    }
    return pu ? ngi_draw_core_of(pu) : NULL;
}
