/* What every phase of the planner shares and the orchestrator (plan.c)
 * must not be called back for: the plan's warnings and a task's GPUs in
 * the request. */
#include "private/plan.h"

#include <stdarg.h>
#include <stdio.h>

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
