/* What every phase of the planner shares and the orchestrator (plan.c)
 * must not be called back for: the plan's warnings and a task's GPUs in
 * the request. */
#include "private/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void ngi_plan_warn(ng_plan *plan, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    for (unsigned i = 0; i < plan->n_warnings; i++)
        if (strcmp(plan->warnings[i], line) == 0)
            return;
    if (plan->n_warnings < NGI_MAX_WARNINGS)
        memcpy(plan->warnings[plan->n_warnings++], line, sizeof(line));
}

const int *ngi_plan_req_gpus(const ng_plan_request *req, unsigned t, unsigned *n)
{
    if (!req->task_gpu_count || !req->task_gpu_offset || !req->task_gpus) {
        *n = 0;
        return NULL;
    }
    *n = req->task_gpu_count[t];
    return req->task_gpus + req->task_gpu_offset[t];
}

static int find_root(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* Union-find over the GPU tasks (p->home[t] set) whose @sets intersect;
 * the lower root wins, so groups are numbered in order of their first task. */
int ngi_plan_group_tasks(const ngi_planner *p, const hwloc_bitmap_t *sets, int *id)
{
    return ngi_plan_group_tasks_apart(p, sets, id, 0);
}

int ngi_plan_group_tasks_apart(const ngi_planner *p, const hwloc_bitmap_t *sets, int *id,
                               int remote_apart)
{
    unsigned nt = p->req->ntasks, n = 0;
    int *parent = malloc((nt ? nt : 1) * sizeof *parent);
    if (!parent)
        return -1;
    for (unsigned a = 0; a < nt; a++) {
        parent[a] = (int)a;
        id[a] = -1;
        for (unsigned b = 0; b < a && p->home[a]; b++)
            if (p->home[b] && hwloc_bitmap_intersects(sets[a], sets[b]) &&
                (!remote_apart || p->plan->tasks[a].gpu_remote == p->plan->tasks[b].gpu_remote)) {
                int ra = find_root(parent, (int)a), rb = find_root(parent, (int)b);
                parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
            }
    }
    for (unsigned t = 0; t < nt; t++) {
        if (!p->home[t])
            continue;
        int r = find_root(parent, (int)t);
        id[t] = id[r] >= 0 && (unsigned)r < t ? id[r] : (int)n++;
    }
    free(parent);
    return (int)n;
}
