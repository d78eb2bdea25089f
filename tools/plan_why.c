/* plan --explain (text and --json) and the terms exec --dry-run --explain
 * shows: the planner's explanation, printed; nothing is decided here. */
#include "why.h"

#include <stdio.h>
#include <string.h>

void why_terms_text(const ng_task_terms *x, int gpu, char *buf, size_t len)
{
    char off[96] = "";
    if (x->off_cores)
        snprintf(off, sizeof off, ", %u off its %s (distance up to %u)", x->off_cores,
                 gpu ? "GPU's node" : "main node", x->off_distance);
    snprintf(buf, len, "%u core%s, effective %.1f, main node %d%s; %u NUMA node%s, %u CPU "
             "group%s, %u package%s", x->cores, x->cores == 1 ? "" : "s", x->effective,
             x->main_node, off, x->nodes,
             x->nodes == 1 ? "" : "s", x->groups, x->groups == 1 ? "" : "s", x->packages,
             x->packages == 1 ? "" : "s");
}

void why_terms_json(json_out *j, const ng_task_terms *x, const char *note)
{
    json_uint(j, "cores", x->cores);
    json_fixed2(j, "effective", x->effective);
    json_int(j, "main_node", x->main_node);
    json_uint(j, "off_cores", x->off_cores);
    json_uint(j, "off_distance", x->off_distance);
    json_uint(j, "nodes", x->nodes);
    json_uint(j, "groups", x->groups);
    json_uint(j, "packages", x->packages);
    json_int(j, "cut", x->cut);
    json_string(j, "why", x->why ? x->why : "");
    json_string(j, "note", note ? note : "");
}

/* "0-3,5": the cut's tasks, runs of consecutive ids as ranges. */
static void task_list(const ng_plan_cut *c, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < c->n_tasks && o + 24 < len;) {
        unsigned e = k;
        while (e + 1 < c->n_tasks && c->tasks[e + 1] == c->tasks[e] + 1)
            e++;
        if (e == k)
            o += (size_t)snprintf(buf + o, len - o, "%s%u", o ? "," : "", c->tasks[k]);
        else
            o += (size_t)snprintf(buf + o, len - o, "%s%u-%u", o ? "," : "", c->tasks[k], c->tasks[e]);
        k = e + 1;
    }
}

static void cut_text(unsigned i, const ng_plan_cut *c)
{
    char tasks[256];
    task_list(c, tasks, sizeof tasks);
    printf("cut %u (%s %s, %u cores): ", i, c->what, tasks, c->cores);
    if (c->chosen < 0) {
        printf("%s\n", c->decided);
        return;
    }
    if (c->n_tasks == 1) {
        printf("one task, the whole line\n");
        return;
    }
    printf("%s (%s)\n", c->candidates[c->chosen].family, c->decided);
    printf("  %-17s %13s %9s %5s %9s %5s\n", "candidate", "min-effective", "min-cores", "idle",
           "straddles", "spans");
    for (unsigned k = 0; k < c->n_candidates; k++) {
        const ng_cut_candidate *a = &c->candidates[k];
        printf("%s %-17s %13.1f %9u %5u %9u %5u\n", (int)k == c->chosen ? "*" : " ", a->family,
               a->min_effective, a->min_cores, a->idle, a->straddles, a->spans);
    }
}

void why_plan_text(const ng_plan *plan, const ng_plan_explanation *x)
{
    char line[512];
    printf("\nwhy (docs/planner.md: the objective, then idle cores, straddles, split groups):\n");
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        const ng_task_terms *w = ng_plan_explain_task(x, t);
        why_terms_text(w, ng_plan_task(plan, t)->n_gpus > 0, line, sizeof line);
        printf("task %u: %s\n  %s\n", t, line, w->why);
    }
    for (unsigned i = 0; i < ng_plan_explain_cut_count(x); i++)
        cut_text(i, ng_plan_explain_cut(x, i));
}

static void cut_json(json_out *j, const ng_plan_cut *c)
{
    json_begin_object(j, NULL);
    json_string(j, "what", c->what);
    json_begin_array(j, "tasks");
    for (unsigned k = 0; k < c->n_tasks; k++)
        json_uint(j, NULL, c->tasks[k]);
    json_end_array(j);
    json_uint(j, "cores", c->cores);
    json_string(j, "chosen", c->chosen >= 0 ? c->candidates[c->chosen].family : "");
    json_string(j, "decided", c->decided);
    json_begin_array(j, "candidates");
    for (unsigned k = 0; k < c->n_candidates; k++) {
        const ng_cut_candidate *a = &c->candidates[k];
        json_begin_object(j, NULL);
        json_string(j, "family", a->family);
        json_fixed2(j, "min_effective", a->min_effective);
        json_uint(j, "min_cores", a->min_cores);
        json_uint(j, "idle", a->idle);
        json_uint(j, "straddles", a->straddles);
        json_uint(j, "spans", a->spans);
        json_end_object(j);
    }
    json_end_array(j);
    json_end_object(j);
}

void why_plan_json(json_out *j, const ng_plan *plan, const ng_plan_explanation *x)
{
    json_begin_object(j, "explain");
    json_begin_array(j, "tasks");
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        json_begin_object(j, NULL);
        json_uint(j, "local_id", t);
        why_terms_json(j, ng_plan_explain_task(x, t), ng_plan_task(plan, t)->note);
        json_end_object(j);
    }
    json_end_array(j);
    json_begin_array(j, "cuts");
    for (unsigned i = 0; i < ng_plan_explain_cut_count(x); i++)
        cut_json(j, ng_plan_explain_cut(x, i));
    json_end_array(j);
    json_end_object(j);
}
