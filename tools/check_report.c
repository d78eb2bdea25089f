/* numaguard check's report of one node's processes, as text or JSON
 * (docs/check.md): each process (threads, memory, GPUs, the context it
 * was placed in) and the summary (CPU views, overlaps, warnings). Moved
 * out of cmd_check.c unchanged: that file chooses the processes and
 * calls these. Every string from /proc is escaped (check_esc): a
 * process's owner controls it, and root may be the one reading. */
#include "check_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string from /proc, made safe for a terminal. */
const char *check_esc(const char *s, char *buf, size_t len)
{
    ng_text_escape(s, buf, len);
    return buf;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

static void json_notes(json_out *j, const char *key, const ng_notes *n)
{
    json_begin_array(j, key);
    for (unsigned i = 0; i < n->n; i++)
        json_string(j, NULL, n->text[i]);
    json_end_array(j);
}

static void json_list(json_out *j, const char *key, hwloc_const_bitmap_t set)
{
    char list[8192];
    ng_list_format(set, list, sizeof list);
    json_string(j, key, list);
}

static void json_threads(json_out *j, const ng_proc_view *p)
{
    char state[2] = "";
    json_begin_array(j, "thread_affinity");
    for (unsigned i = 0; i < p->n_thread_views; i++) {
        const ng_thread_view *t = &p->thread_views[i];
        json_begin_object(j, NULL);
        json_uint(j, "tid", (unsigned)t->tid);
        json_string(j, "comm", t->comm);
        state[0] = t->state;
        json_string(j, "state", state);
        if (t->last_cpu >= 0)
            json_uint(j, "cpu", (unsigned)t->last_cpu);
        json_list(j, "cpus", t->cpus);
        json_end_object(j);
    }
    json_end_array(j);
}

static void json_memory(json_out *j, const ng_proc_view *p)
{
    json_begin_array(j, "memory");
    for (unsigned i = 0; i < p->n_memory; i++) {
        json_begin_object(j, NULL);
        json_uint(j, "node", p->memory[i].node);
        json_uint(j, "bytes", p->memory[i].bytes);
        json_end_object(j);
    }
    json_end_array(j);
    json_uint(j, "mem_bytes", p->mem_bytes);
    json_uint(j, "cpu_local_bytes", p->cpu_local_bytes);
}

static void json_gpus(json_out *j, const ng_topology *topo, const ng_proc_view *p)
{
    json_begin_array(j, "gpus");
    for (unsigned i = 0; i < p->n_gpus; i++)
        json_string(j, NULL, ng_topology_gpu(topo, (unsigned)p->gpus[i])->pci_bus_id);
    json_end_array(j);
    json_string(j, "gpu_source", p->gpu_source);
    json_string(j, "gpu_rule", p->gpu_rule);
    json_index_array(j, "gpu_numa_nodes", p->gpu_nodes);
    json_uint(j, "gpu_local_bytes", p->gpu_local_bytes);
    /* {} when no launcher variable names a local rank. */
    json_begin_object(j, "launcher");
    if (p->local_rank >= 0) {
        json_uint(j, "local_rank", (unsigned)p->local_rank);
        json_uint(j, "local_size", (unsigned)p->local_size);
        json_string(j, "source", p->rank_source);
    }
    json_end_object(j);
}

/* "omp_ungoverned": the kinds the governor said it cannot govern, by
 * their fixed names (numaguard/omp_marks.h), [] for none. */
static void json_ungoverned(json_out *j, unsigned bits)
{
    static const ng_omp_mark kinds[] = NG_OMP_MARK_TABLE;
    json_begin_array(j, "omp_ungoverned");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (bits & kinds[i].bit)
            json_string(j, NULL, kinds[i].kind);
    json_end_array(j);
}

void check_proc_json(json_out *j, const ng_topology *topo, const ng_proc_view *p)
{
    json_begin_object(j, NULL);
    json_uint(j, "pid", (unsigned)p->pid);
    json_string(j, "comm", p->comm);
    json_uint(j, "uid", p->uid);
    json_string(j, "user", p->user);
    json_list(j, "cpus", p->cpus);
    json_uint(j, "cores", p->cores);
    json_uint(j, "pus", p->pus);
    json_list(j, "allowed_cpus", p->allowed_cpus);
    json_bool(j, "bound", p->bound);
    json_index_array(j, "cpu_numa_nodes", p->cpu_nodes);
    json_string(j, "mems_allowed", p->mems_allowed);
    json_string(j, "mem_policy", p->mem_policy);
    json_index_array(j, "mem_policy_nodes", p->mem_policy_nodes);
    json_string(j, "mem_policy_text", p->mem_policy_text);
    json_memory(j, p);
    json_gpus(j, topo, p);
    json_uint(j, "threads", p->threads);
    json_uint(j, "runnable", p->runnable);
    json_bool(j, "oversubscribed", p->runnable > p->cores);
    json_bool(j, "threads_exceed_cores", p->threads > p->cores);
    json_string(j, "thread_caps", p->thread_caps);
    json_ungoverned(j, p->omp_ungoverned);
    json_bool(j, "numaguard_started", p->numaguard_started);
    json_string(j, "job_id", p->job_id);
    json_string(j, "sluid", p->sluid);
    json_int(j, "global_rank", p->global_rank);
    json_string(j, "nic_vars", p->nic_vars);
    json_threads(j, p);
    json_notes(j, "warnings", &p->warnings);
    json_notes(j, "errors", &p->errors);
    json_end_object(j);
}

/* One CPU of the summary: what runs on it. */
static void cpu_view_json(json_out *j, const ng_cpu_view *c)
{
    json_begin_object(j, NULL);
    json_uint(j, "cpu", c->cpu);
    json_uint(j, "runnable", c->runnable);
    json_uint(j, "threads", c->threads);
    json_uint(j, "bound", c->bound);
    json_end_object(j);
}

/* One overlap of the summary: processes bound to the same CPUs. */
static void overlap_json(json_out *j, const ng_overlap_view *o)
{
    json_begin_object(j, NULL);
    json_begin_array(j, "pids");
    for (unsigned k = 0; k < o->n_pids; k++)
        json_uint(j, NULL, (unsigned)o->pids[k]);
    json_end_array(j);
    json_list(j, "cpus", o->cpus);
    json_uint(j, "cores", o->cores);
    json_end_object(j);
}

void check_summary_json(json_out *j, const ng_inspection *ins)
{
    json_begin_object(j, "summary");
    json_begin_array(j, "cpus");
    for (unsigned i = 0; i < ng_inspection_cpu_count(ins); i++)
        cpu_view_json(j, ng_inspection_cpu(ins, i));
    json_end_array(j);
    json_begin_array(j, "overlaps");
    for (unsigned i = 0; i < ng_inspection_overlap_count(ins); i++)
        overlap_json(j, ng_inspection_overlap(ins, i));
    json_end_array(j);
    json_notes(j, "warnings", ng_inspection_warnings(ins));
    json_end_object(j);
}

/* ------------------------------------------------------------------ */
/* Text                                                                 */
/* ------------------------------------------------------------------ */

static void human(unsigned long long b, char *buf, size_t len)
{
    if (b >= (1ull << 30))
        snprintf(buf, len, "%.1f GiB", (double)b / (1ull << 30));
    else if (b >= (1ull << 20))
        snprintf(buf, len, "%.1f MiB", (double)b / (1ull << 20));
    else
        snprintf(buf, len, "%llu KiB", b >> 10);
}

static double share(unsigned long long part, unsigned long long total)
{
    return total ? 100.0 * (double)part / (double)total : 0.0;
}

static void text_notes(FILE *out, const char *label, const ng_notes *n)
{
    for (unsigned i = 0; i < n->n; i++)
        fprintf(out, "  %s: %s\n", label, n->text[i]);
}

static void text_memory(FILE *out, const ng_proc_view *p)
{
    char e[512], h[32];
    fprintf(out, "  memory   policy %s  (allowed nodes %s)\n",
           p->mem_policy_text[0] ? check_esc(p->mem_policy_text, e, sizeof e) : "unknown",
           check_esc(p->mems_allowed, e + 256, 256));
    if (!p->have_memory)
        return;
    human(p->mem_bytes, h, sizeof h);
    fprintf(out, "  pages    %s:", h);
    for (unsigned i = 0; i < p->n_memory; i++)
        fprintf(out, " node %u %.1f%%", p->memory[i].node, share(p->memory[i].bytes, p->mem_bytes));
    fprintf(out, "\n  local    %.1f%% on the CPUs' node(s)\n", share(p->cpu_local_bytes, p->mem_bytes));
}

static void text_gpus(FILE *out, const ng_topology *topo, const ng_proc_view *p)
{
    char nodes[256];
    fprintf(out, "  gpus     ");
    for (unsigned i = 0; i < p->n_gpus; i++)
        fprintf(out, "%s%s", i ? "," : "", ng_topology_gpu(topo, (unsigned)p->gpus[i])->pci_bus_id);
    ng_list_format(p->gpu_nodes, nodes, sizeof nodes);
    /* gpu_rule names the variable and the split; else the variable alone. */
    if (p->n_gpus)
        fprintf(out, " (%s%s; numa %s) %.1f%% of memory there\n", p->gpu_rule[0] ? "" : "from ",
               p->gpu_rule[0] ? p->gpu_rule : p->gpu_source, *nodes ? nodes : "-",
               share(p->gpu_local_bytes, p->mem_bytes));
    else
        fprintf(out, "none (%s)\n", p->gpu_source);
}

/* Launcher rank, thread caps, Slurm job: only when known. */
static void text_context(FILE *out, const ng_proc_view *p)
{
    char e[1024];
    if (p->local_rank >= 0 && p->global_rank >= 0)
        fprintf(out, "  rank     local %d of %d (%s), task %d of the job\n", p->local_rank,
                p->local_size, p->rank_source, p->global_rank);
    else if (p->local_rank >= 0)
        fprintf(out, "  rank     local %d of %d (%s)\n", p->local_rank, p->local_size, p->rank_source);
    if (p->nic_vars[0])
        fprintf(out, "  nics     %s\n", check_esc(p->nic_vars, e, sizeof e));
    if (p->thread_caps[0])
        fprintf(out, "  caps     %s\n", check_esc(p->thread_caps, e, sizeof e));
    if (p->job_id[0] || p->sluid[0])
        fprintf(out, "  job      %s%s%s%s\n", check_esc(p->job_id, e, 300),
                p->job_id[0] && p->sluid[0] ? " " : "",
                p->sluid[0] ? "SLUID " : "", check_esc(p->sluid, e + 512, 300));
}

/* Threads with a mask of their own (e.g. OpenMP places), or all. */
static void text_threads(FILE *out, const ng_proc_view *p, int all)
{
    char list[4096], e[300];
    for (unsigned i = 0; i < p->n_thread_views; i++) {
        const ng_thread_view *t = &p->thread_views[i];
        if (!all && hwloc_bitmap_isequal(t->cpus, p->cpus))
            continue;
        ng_list_format(t->cpus, list, sizeof list);
        fprintf(out, "  thread   %d %c cpu %d  cpus %s  (%s)\n", t->tid, t->state, t->last_cpu,
               list, check_esc(t->comm, e, sizeof e));
    }
}

void check_proc_text(FILE *out, const ng_topology *topo, const ng_proc_view *p, int all_threads)
{
    char list[8192], nodes[256], e[300];
    ng_list_format(p->cpus, list, sizeof list);
    ng_list_format(p->cpu_nodes, nodes, sizeof nodes);
    fprintf(out, "pid %d (%s)\n", p->pid, check_esc(p->comm, e, sizeof e));
    if (p->user[0])
        fprintf(out, "  user     %s (uid %u)\n", check_esc(p->user, e, sizeof e), p->uid);
    else
        fprintf(out, "  user     uid %u\n", p->uid);
    fprintf(out, "  cpus     %s  (%u core%s, %u PU%s; numa %s)\n", list, p->cores,
           p->cores == 1 ? "" : "s", p->pus, p->pus == 1 ? "" : "s", *nodes ? nodes : "-");
    fprintf(out, "  threads  %u, %u runnable\n", p->threads, p->runnable);
    text_memory(out, p);
    text_gpus(out, topo, p);
    text_context(out, p);
    text_threads(out, p, all_threads);
    text_notes(out, "warning", &p->warnings);
    text_notes(out, "error", &p->errors);
}

/* Shown when several processes were read or they share a warning. */
void check_summary_text(FILE *out, const ng_inspection *ins, unsigned shown)
{
    const ng_notes *w = ng_inspection_warnings(ins);
    char list[4096];
    if (shown < 2 && !w->n)
        return;
    fprintf(out, "summary  %u process%s\n", shown, shown == 1 ? "" : "es");
    for (unsigned i = 0; i < ng_inspection_cpu_count(ins); i++) {
        const ng_cpu_view *c = ng_inspection_cpu(ins, i);
        fprintf(out, "  cpu %-4u %u runnable, %u thread%s ran last here, %u bound process%s\n", c->cpu,
               c->runnable, c->threads, c->threads == 1 ? "" : "s", c->bound,
               c->bound == 1 ? "" : "es");
    }
    for (unsigned i = 0; i < ng_inspection_overlap_count(ins); i++) {
        const ng_overlap_view *o = ng_inspection_overlap(ins, i);
        ng_list_format(o->cpus, list, sizeof list);
        fprintf(out, "  overlap  pids");
        for (unsigned k = 0; k < o->n_pids; k++)
            fprintf(out, "%s%d", k ? "," : " ", o->pids[k]);
        fprintf(out, " on cpus %s (%u core%s)\n", list, o->cores, o->cores == 1 ? "" : "s");
    }
    text_notes(out, "warning", w);
}
