/* numaguard check: where running processes really are.
 *
 *   numaguard check (--pid P ... | --all-mine | --job [ID] [--local]) [--threads] [--json]
 *
 * Options, which processes, and the picture; the report itself (text,
 * JSON) is check_report.c. Reading /proc and the judgement rules are the
 * library's (lib/inspect/, ng_inspect); --job --local asks Slurm (`scontrol
 * listpids`) only where no cgroup names jobs, and the library reads that.
 * --job without --local is the whole job, every node's --local report
 * through Slurm (cmd_check_job.c). Text output escapes every string
 * that comes from /proc (comm, environ values, the kernel's policy text):
 * a process's owner controls them, and root may be the one reading.
 * Fields and rules: docs/check.md.
 */
#include "cli.h"
#include "check_report.h"

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
                             check_esc(it, shown, sizeof shown));
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
                         opt, check_esc(text, shown, sizeof shown), max);
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
        return cli_error(2, "check: unexpected argument '%.64s'", check_esc(argv[optind], shown, 256));
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
                     check_esc(o->job_id, shown, sizeof shown));
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
        fprintf(stdout, "job %s on %s: processes from %s\n", check_esc(o->job_id, e, 256),
                check_esc(host, e + 512, 300), membership_note(o));
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
            check_proc_json(&j, topo, p);
        else
            check_proc_text(stdout, topo, p, o->threads);
    }
    if (o->common.json) {
        json_end_array(&j);
        check_summary_json(&j, ins);
        if (o->panel)
            rc |= panel_json(&j, topo);
        json_end_object(&j);
    } else if (!shown && o->all) {
        /* --all-mine that finds nothing says so (an empty output read as
         * "numaguard did nothing"). */
        printf("no process of uid %u but this check is running\n", (unsigned)getuid());
    } else {
        check_summary_text(stdout, ins, shown);
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
                         "SLUID goes with --local)", check_esc(o.job_id, shown, sizeof shown));
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
