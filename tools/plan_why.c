/* plan --explain (text and --json) and the terms exec --dry-run --explain
 * shows: the planner's explanation, printed; nothing is decided here. */
#include "why.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void why_terms_text(const ng_task_terms *x, int gpu, char *buf, size_t len)
{
    char off[64] = "";
    if (x->off_cores)
        snprintf(off, sizeof off, "; %u off %s", x->off_cores,
                 gpu ? "its GPU's node" : "the node holding most");
    snprintf(buf, len, "%u core%s, %.1f effective; %u NUMA node%s, %u CPU group%s, %u socket%s%s",
             x->cores, x->cores == 1 ? "" : "s", x->effective, x->nodes, x->nodes == 1 ? "" : "s",
             x->groups, x->groups == 1 ? "" : "s", x->packages, x->packages == 1 ? "" : "s", off);
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
    json_begin_array(j, "alternatives");
    for (unsigned k = 0; k < x->n_alternatives; k++) {
        const ng_plan_alternative *a = &x->alternatives[k];
        json_begin_object(j, NULL);
        json_begin_array(j, "args");
        for (unsigned i = 0; i < a->n_args; i++)
            json_string(j, NULL, a->args[i]);
        json_end_array(j);
        json_string(j, "cpus", a->cpus);
        json_index_array(j, "mem_nodes", a->mem_nodes);
        json_string(j, "says", a->says);
        json_end_object(j);
    }
    json_end_array(j);
}

/* "0-3,5": @ids[0..n), runs of consecutive ids as ranges. */
static void id_list(const unsigned *ids, unsigned n, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < n && o + 24 < len;) {
        unsigned e = k;
        while (e + 1 < n && ids[e + 1] == ids[e] + 1)
            e++;
        if (e == k)
            o += (size_t)snprintf(buf + o, len - o, "%s%u", o ? "," : "", ids[k]);
        else
            o += (size_t)snprintf(buf + o, len - o, "%s%u-%u", o ? "," : "", ids[k], ids[e]);
        k = e + 1;
    }
}

/* A cut: its tasks and cores on one line, what won and why on the next,
 * then the candidates' table (every line under 100 characters). */
static void cut_text(unsigned i, const ng_plan_cut *c)
{
    char tasks[256];
    id_list(c->tasks, c->n_tasks, tasks, sizeof tasks);
    printf("split %u: %s %.40s%s, %u cores\n", i, c->what, tasks, strlen(tasks) > 40 ? "..." : "",
           c->cores);
    if (c->moved)
        printf("  cut among %u tasks: %u of them %s re-laid after, by a later split\n",
               c->n_tasks + c->moved, c->moved, c->moved == 1 ? "was" : "were");
    if (c->chosen < 0) {
        printf("  %s\n", c->decided);
        return;
    }
    /* Every candidate scoring the same: the table says nothing the tasks'
     * lines ("that split won by a tie") do not (planner v5: 28 of 40
     * lines of the 64-task GH200 case were such tables). JSON keeps it. */
    const ng_cut_candidate *w = &c->candidates[c->chosen];
    int tie = 1;
    for (unsigned k = 0; k < c->n_candidates && tie; k++) {
        const ng_cut_candidate *a = &c->candidates[k];
        tie = a->min_effective == w->min_effective && a->min_cores == w->min_cores &&
              a->idle == w->idle && a->straddles == w->straddles && a->spans == w->spans;
    }
    if (tie) {
        printf("  %u candidates tie on every term: %s kept, the first found\n", c->n_candidates,
               c->candidates[c->chosen].family);
        return;
    }

    printf("  %s won by %s\n", c->candidates[c->chosen].family, c->decided);
    printf("  %-17s %13s %9s %5s %9s %5s\n", "candidate", "min-effective", "min-cores", "idle",
           "straddles", "spans");
    for (unsigned k = 0; k < c->n_candidates; k++) {
        const ng_cut_candidate *a = &c->candidates[k];
        printf("%s %-17s %13.1f %9u %5u %9u %5u\n", (int)k == c->chosen ? "*" : " ", a->family,
               a->min_effective, a->min_cores, a->idle, a->straddles, a->spans);
    }
}

/* One group of alike tasks (the same lines): "tasks 0-3: reason", then
 * the other lines indented; the reason on its own line when the label
 * would push it past 100 characters. */
static void group_text(const unsigned *ids, unsigned n, const char *why)
{
    char label[160];
    id_list(ids, n, label, sizeof label);
    const char *nl = strchr(why, '\n');
    size_t first = nl ? (size_t)(nl - why) : strlen(why);
    int lab = printf("%s %s:", n > 1 ? "tasks" : "task", label);
    if ((size_t)lab + 1 + first > 100)
        printf("\n ");
    printf(" %.*s\n", (int)first, why);
    for (const char *p = nl; p && *p;) {
        const char *q = strchr(p + 1, '\n');
        size_t l = q ? (size_t)(q - p - 1) : strlen(p + 1);
        printf("  %.*s\n", (int)l, p + 1);
        p = q;
    }
}

void why_plan_text(const ng_plan *plan, const ng_plan_explanation *x)
{
    unsigned nt = ng_plan_task_count(plan);
    unsigned *ids = malloc((nt ? nt : 1) * sizeof *ids);
    unsigned char *done = calloc(nt ? nt : 1, 1);
    printf("\nwhy (terms: docs/planner.md, \"Glossary\"):\n");
    for (unsigned t = 0; ids && done && t < nt; t++) {
        if (done[t])
            continue;
        const char *w = ng_plan_explain_task(x, t)->why;
        unsigned n = 0;
        for (unsigned o = t; o < nt; o++)
            if (!done[o] && strcmp(ng_plan_explain_task(x, o)->why, w) == 0) {
                ids[n++] = o;
                done[o] = 1;
            }
        group_text(ids, n, w);
    }
    free(ids);
    free(done);
    /* A one-task split says nothing the task's lines do not (JSON has it). */
    for (unsigned i = 0; i < ng_plan_explain_cut_count(x); i++)
        if (ng_plan_explain_cut(x, i)->n_tasks > 1)
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
    char cpus[8192];
    json_string(j, "cpus", ng_list_format(c->cpus, cpus, sizeof cpus) < 0 ? "" : cpus);
    json_uint(j, "moved", c->moved);
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
