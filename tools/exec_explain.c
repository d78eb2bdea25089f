/* numaguard exec --dry-run (--explain): this rank's placement, from the
 * launcher's environment and the current mask, and why; nothing is run.
 * Text (one "key  value" line each) or one JSON document (docs/json.md). */
#include "exec.h"
#include "why.h"

#include <string.h>

typedef struct explain {
    char gpus[NG_MAX_ARG], cpus[NG_MAX_ARG], current[NG_MAX_ARG], allowed[NG_MAX_ARG];
    char excluded[NG_MAX_ARG], mem[NG_MAX_ARG], cpus_why[160];
    hwloc_bitmap_t numa, excl;
} explain;

static void list(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    if (!set)
        buf[0] = '\0';
    else if (ng_list_format(set, buf, len) < 0)
        snprintf(buf, len, "(long list)");
}

/* CPU-bearing NUMA nodes whose CPUs intersect @p cpus. */
static void numa_of(const ng_topology *topo, hwloc_const_cpuset_t cpus, hwloc_bitmap_t out)
{
    for (unsigned i = 0; cpus && i < ng_topology_numa_count(topo); i++) {
        const ng_numa_info *n = ng_topology_numa(topo, i);
        if (n->has_cpus && hwloc_bitmap_intersects(n->cpus, cpus))
            hwloc_bitmap_set(out, n->os_index);
    }
}

static void cpus_why(const exec_state *s, const ng_task_plan *tp, char *buf, size_t len)
{
    if (s->prebound)
        snprintf(buf, len, "the launcher's mask, kept (pre-bound rank)");
    else if (!tp->cpus)
        snprintf(buf, len, "unchanged: policy %s leaves the mask alone",
                 ng_policy_kind_name(s->policy.kind));
    else
        snprintf(buf, len, "slice %u of %u of the allowed CPUs%s%s%s", s->plan_rank + 1,
                 ng_plan_task_count(s->plan), tp->n_gpus && !tp->gpu_remote ? ", GPU-local" : "",
                 tp->gpu_remote ? ", its GPU has no allowed local core" : "",
                 tp->shares_cores ? ", shares cores with another rank" : "");
}

static void fill(const exec_state *s, const ng_task_plan *tp, explain *x)
{
    ng_gpu_list_format(s->topo, tp->gpus, tp->n_gpus, x->gpus, sizeof x->gpus);
    list(tp->cpus ? tp->cpus : s->current, x->cpus, sizeof x->cpus);
    list(s->current, x->current, sizeof x->current);
    list(s->allowed, x->allowed, sizeof x->allowed);
    hwloc_bitmap_zero(x->excl);
    if (s->allowed)
        hwloc_bitmap_andnot(x->excl, hwloc_topology_get_complete_cpuset(
                                         ng_topology_hwloc(s->topo)), s->allowed);
    list(x->excl, x->excluded, sizeof x->excluded);
    numa_of(s->topo, tp->cpus ? tp->cpus : s->current, x->numa);
    char nodes[NG_MAX_ARG];
    list(tp->mem_nodes, nodes, sizeof nodes);
    snprintf(x->mem, sizeof x->mem, "%s%s%s", s->res.mem_mode_text[0] ? s->res.mem_mode_text
             : "none", nodes[0] ? ":" : "", nodes);
    cpus_why(s, tp, x->cpus_why, sizeof x->cpus_why);
}

/* A string from the environment, made safe for a terminal. */
static const char *esc(const char *s, char *buf, size_t len)
{
    ng_text_escape(s, buf, len);
    return buf;
}

static void text_line(const char *key, const char *value)
{
    printf("%-10s %s\n", key, value && value[0] ? value : "none");
}

/* --explain: the planner's terms and reasons for this rank. */
static void why_text(const exec_state *s, const ng_task_plan *tp)
{
    const ng_task_terms *why = s->why && tp ? ng_plan_explain_task(s->why, s->plan_rank) : NULL;
    char buf[512];
    if (!why)
        return;
    why_terms_text(why, tp->n_gpus > 0, buf, sizeof buf);
    text_line("terms", buf);
    /* the first line after the key, the others under it */
    const char *w = why->why ? why->why : "";
    const char *nl = strchr(w, '\n');
    printf("%-10s %.*s\n", "why", (int)(nl ? (size_t)(nl - w) : strlen(w)), w);
    for (const char *p = nl; p && *p;) {
        const char *q = strchr(p + 1, '\n');
        printf("%-10s %.*s\n", "", (int)(q ? (size_t)(q - p - 1) : strlen(p + 1)), p + 1);
        p = q;
    }
    if (tp->note)
        text_line("note", tp->note);
}

static void why_json(json_out *j, const exec_state *s, const ng_task_plan *tp)
{
    const ng_task_terms *why = s->why && tp ? ng_plan_explain_task(s->why, s->plan_rank) : NULL;
    if (!why)
        return;
    json_begin_object(j, "explain");
    why_terms_json(j, why, tp->note);
    json_end_object(j);
}

static void explain_text(const exec_state *s, const explain *x, const char *const *names,
                         const char *const *values, unsigned n, const char *failure)
{
    char buf[NG_MAX_ARG * 2];
    printf("numaguard exec --dry-run: this rank's placement (nothing is run)\n");
    char global[24] = "unknown";
    if (s->lr.global_rank >= 0)
        snprintf(global, sizeof global, "%d", s->lr.global_rank);
    snprintf(buf, sizeof buf, "local %u of %u (from %s%s%s), global rank %s", s->lr.rank,
             s->lr.size, s->lr.launcher ? s->lr.launcher : "", s->lr.launcher ? ": " : "",
             s->lr.source ? s->lr.source : "no launcher variables", global);
    text_line("rank", buf);
    if (!ng_topology_is_this_system(s->topo))
        text_line("topology", "not this machine: plan only, no syscalls");
    snprintf(buf, sizeof buf, "%s; allowed %s; excluded by the allocation: %s",
             x->current[0] ? x->current : "(plan only)", x->allowed[0] ? x->allowed : "all",
             x->excluded[0] ? x->excluded : "none");
    text_line("mask", buf);
    text_line("launcher", s->prebound ? s->prebound_msg : "did not bind this rank");
    snprintf(buf, sizeof buf, "%s (%s)", x->gpus[0] ? x->gpus : "none", s->rg.how);
    text_line("gpus", buf);
    snprintf(buf, sizeof buf, "%s (%s)", x->cpus, x->cpus_why);
    text_line("cpus", buf);
    list(x->numa, buf, sizeof buf);
    text_line("numa", buf);
    text_line("memory", x->mem);
    if (s->res.threads)
        snprintf(buf, sizeof buf, "%u exported", s->res.threads);
    else
        snprintf(buf, sizeof buf, "%s", s->omp.mode == NG_OMP_OFF ? "not capped (no --omp-guard)"
                                                                 : "none exported");
    text_line("threads", buf);
    /* Presets kept are the environment's bytes: escaped (library messages
     * already are). */
    if (s->res.kept[0])
        text_line("kept", esc(s->res.kept, buf, sizeof buf));
    const ng_task_plan *tp = ng_plan_task(s->plan, s->plan_rank);
    if (s->net.mode != NG_NET_OFF) {
        ng_nic_list_format(s->topo, tp->nics, tp->n_nics, buf, sizeof buf);
        text_line("nics", buf[0] ? buf : "none (no NIC the rules allow on this node)");
    }
    if (s->res.net_kept[0])
        text_line("kept", esc(s->res.net_kept, buf, sizeof buf));
    why_text(s, tp);
    for (unsigned i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "%s=%s", names[i], values[i]);
        text_line("env", buf);
    }
    for (unsigned i = 0; i < ng_plan_warning_count(s->plan); i++)
        text_line("warning", ng_plan_warning(s->plan, i));
    if (s->rg.warning[0])
        text_line("warning", s->rg.warning);
    if (s->res.warning[0])
        text_line("warning", s->res.warning);
    if (failure)
        text_line("error", failure);
}

static void explain_json(const exec_state *s, const explain *x, const char *const *names,
                         const char *const *values, unsigned n, const char *failure)
{
    json_out j = {.f = stdout};
    const ng_task_plan *tp = ng_plan_task(s->plan, s->plan_rank);
    json_begin_object(&j, NULL);
    json_uint(&j, "local_rank", s->lr.rank);
    json_uint(&j, "local_size", s->lr.size);
    if (s->lr.global_rank >= 0)
        json_uint(&j, "global_rank", (unsigned)s->lr.global_rank);
    json_string(&j, "launcher", s->lr.launcher ? s->lr.launcher : "");
    json_string(&j, "rank_from", s->lr.source ? s->lr.source : "");
    json_bool(&j, "plan_only", !ng_topology_is_this_system(s->topo));
    json_string(&j, "current_cpus", x->current);
    json_string(&j, "allowed_cpus", x->allowed);
    json_string(&j, "excluded_cpus", x->excluded);
    json_bool(&j, "prebound", s->prebound);
    json_begin_array(&j, "gpus");
    for (unsigned k = 0; tp && k < tp->n_gpus; k++)
        json_string(&j, NULL, ng_topology_gpu(s->topo, (unsigned)tp->gpus[k])->pci_bus_id);
    json_end_array(&j);
    json_string(&j, "gpus_from", s->rg.how);
    json_string(&j, "cpus", x->cpus);
    json_string(&j, "cpus_why", x->cpus_why);
    json_index_array(&j, "numa_nodes", x->numa);
    json_string(&j, "mem_policy", s->res.mem_mode_text[0] ? s->res.mem_mode_text : "none");
    json_index_array(&j, "mem_nodes", tp ? tp->mem_nodes : NULL);
    json_uint(&j, "threads", s->res.threads);
    json_string(&j, "kept", s->res.kept);
    json_begin_array(&j, "nics");
    for (unsigned k = 0; tp && k < tp->n_nics; k++)
        json_string(&j, NULL, ng_topology_nic(s->topo, tp->nics[k])->name);
    json_end_array(&j);
    json_string(&j, "net_kept", s->res.net_kept);
    why_json(&j, s, tp);
    json_begin_object(&j, "env");
    for (unsigned i = 0; i < n; i++)
        json_string(&j, names[i], values[i]);
    json_end_object(&j);
    json_begin_array(&j, "warnings");
    for (unsigned i = 0; s->plan && i < ng_plan_warning_count(s->plan); i++)
        json_string(&j, NULL, ng_plan_warning(s->plan, i));
    if (s->rg.warning[0])
        json_string(&j, NULL, s->rg.warning);
    if (s->prebound_msg[0])
        json_string(&j, NULL, s->prebound_msg);
    if (s->res.warning[0])
        json_string(&j, NULL, s->res.warning);
    json_end_array(&j);
    if (failure)
        json_string(&j, "error", failure);
    json_end_object(&j);
    fputc('\n', stdout);
}

void exec_explain(const exec_state *s, const char *const *env_names,
                  const char *const *env_values, unsigned n_env, const char *failure)
{
    explain x;
    memset(&x, 0, sizeof x);
    x.numa = hwloc_bitmap_alloc();
    x.excl = hwloc_bitmap_alloc();
    const ng_task_plan *tp = s->plan ? ng_plan_task(s->plan, s->plan_rank) : NULL;
    if (!x.numa || !x.excl) {
        failure = "out of memory";
    } else if (tp) {
        fill(s, tp, &x);
    } else if (s->o.common.json) {
        json_out j = {.f = stdout};
        json_begin_object(&j, NULL);
        json_string(&j, "error", failure ? failure : "no plan");
        json_end_object(&j);
        fputc('\n', stdout);
    } else {
        text_line("error", failure ? failure : "no plan");
    }
    if (tp && s->o.common.json)
        explain_json(s, &x, env_names, env_values, n_env, failure);
    else if (tp)
        explain_text(s, &x, env_names, env_values, n_env, failure);
    hwloc_bitmap_free(x.numa);
    hwloc_bitmap_free(x.excl);
}
