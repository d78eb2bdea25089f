/* numaguard check: where running processes really are.
 *
 *   numaguard check (--pid P ... | --all-mine | --job [ID] [--local]) [--threads] [--json]
 *
 * Options and rendering only: reading /proc and the judgement rules are the
 * library's (lib/inspect/, ng_inspect); --job --local asks Slurm (`scontrol
 * listpids`) only where no cgroup names jobs, and the library reads that.
 * --job without --local is the whole job, every node's --local report
 * through Slurm (cmd_check_job.c). Text output escapes every string
 * that comes from /proc (comm, environ values, the kernel's policy text):
 * a process's owner controls them, and root may be the one reading.
 * Fields and rules: docs/check.md.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char check_synopsis[] =
    "usage: numaguard check (--pid P ... | --all-mine | --job [ID] [--local]) [--threads] [--json]\n"
    "                       [--map] [--svg FILE|-] [--scale F] [--all-nics] [--topology FILE]\n"
    "                       [--timeout SECONDS] [--parallel N]";

static const cli_opt_doc check_docs[] = {
    {"--pid P", "a process to check (repeat, or a comma list)"},
    {"--all-mine", "every process of the calling user (kernel threads skipped)"},
    {"--job [ID]", "job ID on all its nodes, a srun --overlap step each (owner or root; no ID: SLURM_JOB_ID)"},
    {"--local", "with --job: this node only, by the job's cgroup, else scontrol listpids"},
    {"--timeout SECONDS", "with --job: the seconds each node may take (default 30); a late node is named"},
    {"--parallel N", "with --job: nodes asked at once (default 32)"},
    {"--threads", "text: one line per thread (default: only threads with their own mask)"},
    {"--json", "one JSON document (docs/check.md)"},
    CLI_DOC_MAP("runnable threads per core"),
    CLI_DOC_SVG("runnable threads per core"),
    CLI_DOC_PICTURE,
    CLI_DOC_TOPOLOGY,
    CLI_DOC_END};

typedef struct check_opts {
    common_opts common;
    int all, job, threads, local, panel;
    unsigned timeout_s, parallel;
    const char *job_id;
    const char *skip_step;    /* --skip-step: the job-wide check's own step */
    const char *replay;       /* --replay DIR: saved node answers */
    const char *membership;   /* --job: "cgroup" or "scontrol listpids" */
    char sluid[16];           /* --job --local: the SLUID its cgroups are named by */
    int *pids;
    unsigned npids;
} check_opts;

/* A string from /proc, made safe for a terminal. */
static const char *esc(const char *s, char *buf, size_t len)
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

static void proc_json(json_out *j, const ng_topology *topo, const ng_proc_view *p)
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

static void summary_json(json_out *j, const ng_inspection *ins)
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
           p->mem_policy_text[0] ? esc(p->mem_policy_text, e, sizeof e) : "unknown",
           esc(p->mems_allowed, e + 256, 256));
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
        fprintf(out, "  nics     %s\n", esc(p->nic_vars, e, sizeof e));
    if (p->thread_caps[0])
        fprintf(out, "  caps     %s\n", esc(p->thread_caps, e, sizeof e));
    if (p->job_id[0] || p->sluid[0])
        fprintf(out, "  job      %s%s%s%s\n", esc(p->job_id, e, 300), p->job_id[0] && p->sluid[0] ? " " : "",
                p->sluid[0] ? "SLUID " : "", esc(p->sluid, e + 512, 300));
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
               list, esc(t->comm, e, sizeof e));
    }
}

static void proc_text(FILE *out, const ng_topology *topo, const ng_proc_view *p, int all_threads)
{
    char list[8192], nodes[256], e[300];
    ng_list_format(p->cpus, list, sizeof list);
    ng_list_format(p->cpu_nodes, nodes, sizeof nodes);
    fprintf(out, "pid %d (%s)\n", p->pid, esc(p->comm, e, sizeof e));
    if (p->user[0])
        fprintf(out, "  user     %s (uid %u)\n", esc(p->user, e, sizeof e), p->uid);
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
static void summary_text(FILE *out, const ng_inspection *ins, unsigned shown)
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

/* ------------------------------------------------------------------ */
/* Which processes                                                      */
/* ------------------------------------------------------------------ */

static int add_pids(const char *text, check_opts *o)
{
    char buf[256], *save = NULL;
    if (strlen(text) >= sizeof buf)
        return cli_error(2, "check: --pid value too long");
    memcpy(buf, text, strlen(text) + 1);
    for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *end, shown[300];
        errno = 0;
        long v = isdigit((unsigned char)*it) ? strtol(it, &end, 10) : 0;
        if (!isdigit((unsigned char)*it) || *end || errno || v < 1 || v > 0x3fffffff)
            return cli_error(2, "check: invalid --pid '%.32s': expected a process id",
                             esc(it, shown, sizeof shown));
        if (o->npids >= NG_INSPECT_MAX_PIDS)
            return cli_error(2, "check: more than %d processes", NG_INSPECT_MAX_PIDS);
        o->pids[o->npids++] = (int)v;
    }
    return 0;
}

/* --timeout / --parallel: a whole number in [1, max]. */
static int bounded_number(const char *opt, const char *text, unsigned max, unsigned *out)
{
    char shown[300];
    long v = ng_parse_uint(text, max);
    if (v < 1)
        return cli_error(2, "check: invalid %s '%.32s': expected a whole number from 1 to %u",
                         opt, esc(text, shown, sizeof shown), max);
    *out = (unsigned)v;
    return 0;
}

/* One of check's own options (the common ones are cli_common_option's):
 * 0, 2 with the message, or -1 after --help (the caller exits 0). */
static int check_option(int c, const char *arg, check_opts *o)
{
    switch (c) {
    case 'p': return add_pids(arg, o);
    case 'a': o->all = 1; return 0;
    case 'J': o->job = 1; o->job_id = arg; return 0;
    case 'L': o->local = 1; return 0;
    case 'W': return bounded_number("--timeout", arg, 3600, &o->timeout_s);
    case 'P': return bounded_number("--parallel", arg, 1024, &o->parallel);
    case 'Q': o->panel = 1; return 0;
    case 'K': o->skip_step = arg; return 0;
    case 'R': o->replay = arg; return 0;
    case 'T': o->threads = 1; return 0;
    case 'h': cli_usage(stdout, check_synopsis, check_docs); return -1;
    default: cli_usage(stderr, check_synopsis, check_docs); return 2;
    }
}

/* What to look at: exactly one of --pid, --all-mine, --job; the options
 * that only make sense with --job (or --job --local) refused without it. */
static int check_combination(const check_opts *o)
{
    if (o->all + o->job + (o->npids > 0) != 1)
        return cli_error(2, "check: give --pid P (one or more), --all-mine or --job [ID]");
    if ((o->local || o->panel || o->skip_step) && !o->job)
        return cli_error(2, "check: --local goes with --job");
    if (o->panel && !(o->local && o->common.json))
        return cli_error(2, "check: --panel goes with --job ID --local --json (what the "
                         "job-wide check asks each node)");
    if (o->replay && (!o->job || o->local || !(o->common.json || o->common.svg)))
        return cli_error(2, "check: --replay DIR goes with --job ID and --json or --svg");
    return 0;
}

static int parse_args(int argc, char **argv, check_opts *o)
{
    static const struct option longopts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"all-mine", no_argument, NULL, 'a'},
        {"job", optional_argument, NULL, 'J'},
        {"local", no_argument, NULL, 'L'},
        {"timeout", required_argument, NULL, 'W'},
        {"parallel", required_argument, NULL, 'P'},
        {"panel", no_argument, NULL, 'Q'},
        {"skip-step", required_argument, NULL, 'K'},
        {"replay", required_argument, NULL, 'R'},
        {"threads", no_argument, NULL, 'T'},
        CLI_OPTS_COMMON,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        rc = cli_common_option("check", c, optarg, &o->common);
        if (rc < 0)
            rc = check_option(c, optarg, o);
        if (rc)
            return rc;
    }
    /* "--job ID" (with a space): the ID is left as an operand. */
    if (o->job && !o->job_id && optind < argc && isdigit((unsigned char)argv[optind][0]))
        o->job_id = argv[optind++];
    if (optind < argc) {
        char shown[300];
        return cli_error(2, "check: unexpected argument '%.64s'", esc(argv[optind], shown, 256));
    }
    if ((rc = check_combination(o)) != 0)
        return rc;
    /* A --fsroot tree has no Slurm to ask: its one "node" is the job. */
    if (o->common.fsroot && o->job)
        o->local = 1;
    return cli_draw_check("check", &o->common);
}

/* Most bytes of `scontrol listpids` read (a line per process: 4096
 * processes fit). */
#define RECORD_MAX (512 * 1024)
/* How long scontrol may take (it waits on slurmd, which may be down). */
#define RECORD_TIMEOUT_MS 10000

/* The owner-or-root rule's one answer to anybody but root (docs/check.md):
 * the same words for a job of somebody else's as for no job at all. */
static int not_yours(const check_opts *o)
{
    char shown[300];
    return cli_error(1, "check: no job %s of yours here (only its owner or root may check it)",
                     esc(o->job_id, shown, sizeof shown));
}

/* No cgroup names the job here: Slurm's record instead of a guess (never
 * a process's own SLURM_JOB_ID). Only for the live /proc: a --fsroot tree
 * has no slurmd to ask. */
static int list_job_record(check_opts *o)
{
    char err[256], why[512];
    const char *root = o->common.fsroot;
    fprintf(stderr, "numaguard: check: no cgroup on this node names job %s (proctrack without "
            "cgroups?): its processes from Slurm's record (scontrol listpids %s)\n",
            o->job_id, o->job_id);
    char *rec = malloc(RECORD_MAX);
    if (!rec)
        return cli_error(1, "check: out of memory");
    int rc = root && *root && strcmp(root, "/") != 0 ? -1 : 0;
    if (rc < 0)
        snprintf(why, sizeof why, "not asked for the processes under --fsroot %.200s", root);
    else
        rc = ng_inspect_slurm_record(o->job_id, RECORD_TIMEOUT_MS, rec, RECORD_MAX, why,
                                     sizeof why);
    if (rc == 0)
        rc = ng_inspect_list_job_record(root, o->job_id, rec, (int)getpid(), o->pids,
                                        NG_INSPECT_MAX_PIDS, &o->npids, err, sizeof err);
    if (rc == 0 && o->skip_step)
        o->npids = ng_inspect_drop_step(root, o->job_id, o->skip_step, rec, o->pids, o->npids);
    free(rec);
    if (rc < 0 && getuid() != 0)   /* Slurm's words would tell whether the job exists */
        return not_yours(o);
    if (rc < 0)
        return cli_error(1, "check: Slurm's record is unavailable (scontrol listpids %s: %s): "
                         "cannot tell job %s's processes", o->job_id, why, o->job_id);
    o->membership = "scontrol listpids";
    return 0;
}

/* Slurm 26.05 names cgroup v2 job directories by the job's SLUID. Where
 * no slurmstepd of the job is visible here (hidepid), its number does not
 * lead to its SLUID: Slurm says which (`scontrol -d show job`, which
 * answers only the owner or root), then the SLUID's cgroup is read. 1
 * when that found processes. */
static int list_job_sluid(check_opts *o)
{
    char err[256];
    ng_slurm_job job;
    if (o->job_id[0] == 's' || (o->common.fsroot && strcmp(o->common.fsroot, "/") != 0) ||
        ng_slurm_job_query(o->job_id, RECORD_TIMEOUT_MS, &job, err, sizeof err) < 0)
        return 0;
    int found = 0;
    if (job.sluid[0] &&
        ng_inspect_list_job(o->common.fsroot, job.sluid, (int)getpid(), o->pids,
                            NG_INSPECT_MAX_PIDS, &o->npids, err, sizeof err) == 0) {
        memcpy(o->sluid, job.sluid, sizeof o->sluid);
        found = 1;
    }
    ng_slurm_job_clear(&job);
    return found;
}

/* --job --local: the job's processes on this node. */
static int list_job(check_opts *o)
{
    char err[256];
    int rc = ng_inspect_list_job(o->common.fsroot, o->job_id, (int)getpid(), o->pids,
                                 NG_INSPECT_MAX_PIDS, &o->npids, err, sizeof err);
    if (rc < 0)
        return cli_error(2, "check: --job: %s", err);
    o->membership = "cgroup";
    if (rc == NG_INSPECT_UNKNOWN_SLUIDS && list_job_sluid(o))
        rc = 0;
    if (rc == 0 && o->skip_step)
        o->npids = ng_inspect_drop_step(o->common.fsroot, o->job_id, o->skip_step, NULL, o->pids,
                                        o->npids);
    else if (rc != 0 && (rc = list_job_record(o)) != 0)
        return rc;
    /* The owner-or-root rule of check --job (docs/check.md): anybody but
     * root sees only their own processes of the job; none of theirs gets
     * the same words whether the job has processes here or not. */
    o->npids = ng_inspect_keep_owned(o->common.fsroot, (unsigned)getuid(), o->pids, o->npids);
    if (!o->npids && getuid() != 0)
        return not_yours(o);
    if (!o->npids)
        return cli_error(1, "check: no process of job %s here", o->job_id);
    return 0;
}

static int select_pids(check_opts *o)
{
    if (o->job)
        return list_job(o);
    if (o->all &&
        ng_inspect_list_user(o->common.fsroot, (unsigned)getuid(), (int)getpid(), o->pids,
                             NG_INSPECT_MAX_PIDS, &o->npids) < 0)
        return cli_error(1, "check: cannot list processes");
    return 0;
}

/* ------------------------------------------------------------------ */
/* Main                                                                 */
/* ------------------------------------------------------------------ */

/* Where --job's list came from, in words (R1 of the security review:
 * Slurm's record has a blind spot, and the report says so). */
static const char *membership_note(const check_opts *o)
{
    if (o->membership && !strcmp(o->membership, "scontrol listpids"))
        return "Slurm's record (scontrol listpids): no cgroup names the job here; it leaves "
               "out every process named slurmstepd, so a job's process that renamed itself "
               "so is not shown";
    return "the kernel: each process's cgroup is the job's in Slurm's own layout (job_ID, or "
           "its SLUID on Slurm 26.05's cgroup v2); never a process's own SLURM_JOB_ID";
}

static void host_name(char *buf, size_t len)
{
    if (gethostname(buf, len - 1) != 0)
        buf[0] = '\0';
    buf[len - 1] = '\0';
}

/* What the job-wide picture needs of this node beyond the report
 * (--panel): its topology as hwloc XML, serial numbers left out. The
 * picture is drawn by the caller from these facts (docs/check.md): a
 * node never sends a picture. */
static int panel_json(json_out *j, const ng_topology *topo)
{
    char *xml = NULL, err[256];
    size_t len = 0;
    if (ng_topology_export_xml(topo, &xml, &len, err, sizeof err) < 0)
        return cli_error(1, "check: --panel: %s", err);
    json_string(j, "topology_xml", xml);
    free(xml);
    return 0;
}

static int render(const ng_topology *topo, const ng_inspection *ins, const check_opts *o)
{
    json_out j = {.f = stdout};
    unsigned shown = 0;
    int rc = 0;
    char host[256], e[1024];
    host_name(host, sizeof host);
    if (o->common.json) {
        json_begin_object(&j, NULL);
        /* --job: which job, where, and who said which processes are its. */
        if (o->job) {
            json_string(&j, "job", o->job_id);
            json_string(&j, "node", host);
            json_string(&j, "membership", o->membership);
            json_string(&j, "membership_note", membership_note(o));
            if (o->sluid[0])
                json_string(&j, "sluid", o->sluid);
        }
        json_begin_array(&j, "processes");
    } else if (o->job) {
        fprintf(stdout, "job %s on %s: processes from %s\n", esc(o->job_id, e, 256),
                esc(host, e + 512, 300), membership_note(o));
    }
    for (unsigned i = 0; i < ng_inspection_proc_count(ins); i++) {
        const ng_proc_view *p = ng_inspection_proc(ins, i);
        if (p->gone) {
            /* Gone between listing and reading is normal with --all-mine/--job. */
            if (o->npids && !o->all && !o->job)
                rc = cli_error(1, "check: no process %d", p->pid);
            continue;
        }
        shown++;
        if (o->common.json)
            proc_json(&j, topo, p);
        else
            proc_text(stdout, topo, p, o->threads);
    }
    if (o->common.json) {
        json_end_array(&j);
        summary_json(&j, ins);
        if (o->panel)
            rc |= panel_json(&j, topo);
        json_end_object(&j);
    } else if (!shown && o->all) {
        /* --all-mine that finds nothing says so (an empty output read as
         * "numaguard did nothing"). */
        printf("no process of uid %u but this check is running\n", (unsigned)getuid());
    } else {
        summary_text(stdout, ins, shown);
    }
    return rc;
}

/* --map / --svg: runnable threads per core, piles, oversubscription. */
static int draw(const ng_topology *topo, const ng_inspection *ins, const check_opts *o)
{
    char name[300], title[400], sub[64];
    if (!o->common.map && !o->common.svg)
        return 0;
    snprintf(title, sizeof title, "numaguard check: %s",
             cli_topology_name(&o->common, name, sizeof name));
    if (o->job)
        snprintf(sub, sizeof sub, "processes of job %.32s", o->job_id);
    else
        snprintf(sub, sizeof sub, "%s", o->all ? "all my processes" : "processes by --pid");
    ng_draw_request req = {.inspection = ins, .title = title, .subtitle = sub};
    return cli_draw("check", &o->common, topo, &req);
}

int cmd_check(int argc, char **argv)
{
    static int pids[NG_INSPECT_MAX_PIDS];
    check_opts o = {.pids = pids, .timeout_s = 30, .parallel = 32};
    char err[256];
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (o.job && !o.job_id && !(o.job_id = getenv("SLURM_JOB_ID")))
        return cli_error(2, "check: --job without an ID needs SLURM_JOB_ID (give --job ID)");
    if (o.job && !o.local && strspn(o.job_id, "0123456789") != strlen(o.job_id)) {
        char shown[300];
        return cli_error(2, "check: invalid --job '%.64s': expected a Slurm job number (a "
                         "SLUID goes with --local)", esc(o.job_id, shown, sizeof shown));
    }
    if (o.job && !o.local)
        return cmd_check_job(o.job_id, &o.common, o.threads, o.timeout_s, o.parallel,
                             o.replay);
    /* What check --job asks each node (docs/check.md): --panel and
     * --skip-step are its, not a user's. */
    if ((rc = select_pids(&o)) != 0)
        return rc;
    ng_topology *topo = cli_load_topology(&o.common);
    if (!topo)
        return 1;
    ng_inspection *ins = NULL;
    if (ng_inspect(topo, o.common.fsroot, o.pids, o.npids, &ins, err, sizeof err) < 0) {
        ng_topology_free(topo);
        return cli_error(1, "check: %s", err);
    }
    if (!cli_draw_stdout(&o.common))
        rc = render(topo, ins, &o);
    rc |= draw(topo, ins, &o);
    ng_inspection_free(ins);
    ng_topology_free(topo);
    return rc;
}
