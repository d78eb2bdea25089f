/* numaguard exec: place this rank like the SPANK plugin would, then exec.
 *
 *   numaguard exec [--numa-policy P] [--omp-guard[=G]] [--net-affinity[=A]]
 *                  [--local-rank R --local-size N] [--gpus LIST|all|none]
 *                  [--topology F] [--verbose] [--dry-run [--json]] -- CMD [ARGS...]
 *
 * A thin front end: the launcher rules (local rank and size, the per-rank
 * GPU split, pre-bound ranks) are the library's (lib/gpu/launcher.c).
 * For launchers without the plugin (torchrun, mpirun, a workstation shell).
 * Every local rank computes the SAME plan for all local ranks (same
 * topology, same CPUs, same GPU lists), so the slices are disjoint without
 * any communication; each rank then applies only its own entry with
 * ng_apply_task() and replaces itself with the command (no wrapper process
 * stays behind). Rules, and why, in docs/user-guide.md ("numaguard exec").
 *
 * Exit status: 2 bad command line (nothing run); 1 placement failed under
 * strict; 126/127 the command could not be executed; otherwise the
 * command's own status (we exec it). Placement problems without strict are
 * one warning line and the command runs where it was.
 */
#include "exec.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char exec_synopsis[] =
    "usage: numaguard exec [--numa-policy P] [--omp-guard[=G]] [--net-affinity[=A]]\n"
    "                      [--net-allow LIST] [--net-deny LIST] [--local-rank R --local-size N]\n"
    "                      [--gpus LIST|all|none] [--topology FILE] [--verbose]\n"
    "                      [--dry-run | --explain [--json | --map] [--svg FILE|-] [--scale F]\n"
    "                      [--all-nics]] -- CMD [ARGS...]";

static const cli_opt_doc exec_docs[] = {
    {"--numa-policy P", "as srun: local (default), prefer, interleave, weighted, none, modifiers; =help: the grammar"},
    {"--omp-guard[=G]", "cap thread pools: auto (bare option), adaptive, N, off (default), ,force, ,bind (after '=')"},
    {"--net-affinity[=A]", "the rank's nearest NIC(s): auto (the bare option), N, off (default), ,force, ,nccl-per-rank"},
    {"--net-allow LIST", "NIC names ranks may get (mlx5_0, mlx5_*)"},
    {"--net-deny LIST", "NIC names ranks never get"},
    {"--local-rank R", "this rank on this node (default: LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, ..., else 0)"},
    {"--local-size N", "ranks on this node (default: LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE, ..., else 1)"},
    {"--gpus LIST", "the ranks' GPUs: bus-order indices or bus ids, all or none (default: CUDA/ROCR_VISIBLE_DEVICES)"},
    {"--verbose", "one line on stderr saying where this rank went"},
    {"--dry-run", "print this rank's placement and why; run nothing"},
    {"--explain", "--dry-run plus the planner's terms and reasons for this rank"},
    {"--json", "with --dry-run: one JSON document (docs/json.md)"},
    CLI_DOC_MAP("with --dry-run: every local rank's slice"),
    {"--svg FILE", "with --dry-run: every local rank's slice, this rank outlined, as SVG (- for stdout)"},
    CLI_DOC_PICTURE,
    CLI_DOC_TOPOLOGY,
    CLI_DOC_END};

/* "--omp-guard 4": getopt gives the bare option (auto) and "4" becomes the
 * command. A first word that is a value of the bare option, without "--"
 * before it, is that mistake (the same with "--net-affinity 2"). */
static int value_as_command(int argc, char **argv, const exec_opts *o)
{
    if (optind >= argc || !strcmp(argv[optind - 1], "--"))
        return 0;
    const char *w = argv[optind];
    if (o->omp_given && !o->omp && cli_is_option_value("--omp-guard", w))
        return cli_bare_value("exec", "--omp-guard", w, "a command to run");
    if (o->net_given && !o->net && cli_is_option_value("--net-affinity", w))
        return cli_bare_value("exec", "--net-affinity", w, "a command to run");
    return 0;
}

static int check_args(int argc, char **argv, exec_opts *o)
{
    if (o->have_rank != o->have_size)
        return cli_error(2, "exec: give --local-rank and --local-size together");
    if (o->have_rank && o->rank >= o->size)
        return cli_error(2, "exec: --local-rank %u is not below --local-size %u", o->rank, o->size);
    if (o->gpus && strlen(o->gpus) > NG_MAX_ARG)
        return cli_error(2, "exec: --gpus longer than %d bytes", NG_MAX_ARG);
    if (o->common.json && !o->dry_run)
        return cli_error(2, "exec: --json goes with --dry-run (exec replaces itself with the "
                         "command; use --verbose for a line on stderr)");
    if ((o->common.svg || o->common.map) && !o->dry_run)
        return cli_error(2, "exec: --svg and --map go with --dry-run");
    if (cli_draw_check("exec", &o->common))
        return 2;
    if (value_as_command(argc, argv, o))
        return 2;
    if (optind >= argc && !o->dry_run)
        return cli_error(2, "exec: no command given (numaguard exec [options] -- CMD [ARGS...])");
    o->cmd = optind < argc ? argv + optind : NULL;
    return 0;
}

static int parse_args(int argc, char **argv, exec_opts *o)
{
    static const struct option longopts[] = {
        CLI_OPTS_COMMON,
        {"numa-policy", required_argument, NULL, 'p'},
        {"omp-guard", optional_argument, NULL, 'o'},
        {"net-affinity", optional_argument, NULL, 'a'},
        {"net-allow", required_argument, NULL, 'A'},
        {"net-deny", required_argument, NULL, 'D'},
        {"local-rank", required_argument, NULL, 'R'},
        {"local-size", required_argument, NULL, 'N'},
        {"gpus", required_argument, NULL, 'g'},
        {"verbose", no_argument, NULL, 'v'},
        {"dry-run", no_argument, NULL, 'n'},
        {"explain", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    long v;
    optind = 1;
    /* '+': stop at the first non-option, so the command's own options are
     * never taken for ours even without "--". */
    while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
        int rc = cli_common_option("exec", c, optarg, &o->common);
        if (rc > 0)
            return rc;
        if (rc == 0)
            continue;
        switch (c) {
        case 'p': o->policy = optarg; break;
        case 'o': o->omp = optarg; o->omp_given = 1; break;
        case 'a': o->net = optarg; o->net_given = 1; break;
        case 'A': o->net_allow = optarg; break;
        case 'D': o->net_deny = optarg; break;
        case 'g': o->gpus = optarg; break;
        case 'v': o->verbose = 1; break;
        case 'n': o->dry_run = 1; break;
        case 'x': o->dry_run = o->explain = 1; break;
        case 'R':
            if ((v = ng_parse_uint(optarg, 65535)) < 0)
                return cli_error(2, "exec: invalid --local-rank '%.64s': expected 0-65535", optarg);
            o->rank = (unsigned)v;
            o->have_rank = 1;
            break;
        case 'N':
            if ((v = ng_parse_uint(optarg, 65536)) < 1)
                return cli_error(2, "exec: invalid --local-size '%.64s': expected 1-65536", optarg);
            o->size = (unsigned)v;
            o->have_size = 1;
            break;
        case 'h': cli_usage(stdout, exec_synopsis, exec_docs); exit(0);
        default: cli_usage(stderr, exec_synopsis, exec_docs); return 2;
        }
    }
    return check_args(argc, argv, o);
}

/* ------------------------------------------------------------------ */
/* The task environment: the real one, or a record of it (--dry-run)   */
/* ------------------------------------------------------------------ */

#define REC_MAX 64
typedef struct env_record {
    unsigned n;
    char names[REC_MAX][64];
    char *values[REC_MAX];
} env_record;

static int env_is_set(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name) != NULL;
}

static int env_set(void *ctx, const char *name, const char *value)
{
    env_record *rec = ctx;
    if (!rec)
        return setenv(name, value, 1);
    if (rec->n >= REC_MAX || !(rec->values[rec->n] = strdup(value)))
        return -1;
    snprintf(rec->names[rec->n], sizeof rec->names[0], "%s", name);
    rec->n++;
    return 0;
}

static int env_get(void *ctx, const char *name, char *buf, size_t len)
{
    (void)ctx;
    const char *v = getenv(name);
    if (!v)
        return -1;
    snprintf(buf, len, "%s", v);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Decide                                                               */
/* ------------------------------------------------------------------ */

static int parse_values(exec_state *s)
{
    char err[512];
    if (ng_policy_parse(s->o.policy, &s->policy, err, sizeof err) < 0)
        return cli_error(2, "exec: %s", err);
    if (s->policy.mods & NG_MOD_HELP) {
        puts(ng_policy_help());
        exit(0);
    }
    s->omp.mode = NG_OMP_OFF;
    if (s->o.omp_given && ng_omp_guard_parse(s->o.omp, &s->omp, err, sizeof err) < 0)
        return cli_error(2, "exec: %s", err);
    /* A bare --net-affinity means auto (as a bare --omp-guard does). */
    if (s->o.net_given &&
        ng_net_affinity_parse(s->o.net ? s->o.net : "auto", &s->net, err, sizeof err) < 0)
        return cli_error(2, "exec: %s", err);
    if (ng_nic_filter_parse(s->o.net_allow, s->o.net_deny, &s->nic_filter, err, sizeof err) < 0)
        return cli_error(2, "exec: %s", err);
    /* --verbose is exec's own switch: it is not part of the policy the task
     * is told about (NUMAGUARD_POLICY). */
    s->verbose = s->o.verbose || (s->policy.mods & NG_MOD_VERBOSE);
    s->quiet = (s->policy.mods & NG_MOD_QUIET) != 0;
    if (s->verbose && s->quiet)
        return cli_error(2, "exec: --verbose and the quiet modifier exclude each other");
    s->strict = (s->policy.mods & NG_MOD_STRICT) != 0;
    return 0;
}

/* Local rank and size: the command line, else the launcher's variables.
 * Returns 0 or 1 (err says why). */
static int local_rank(exec_state *s, char *err, size_t len)
{
    char ignored[256];
    /* With --local-rank the launcher's values only name the global rank:
     * an inconsistency there is not ours to report. */
    int rc = ng_launcher_local_rank(NULL, &s->lr, s->o.have_rank ? ignored : err,
                                    s->o.have_rank ? sizeof ignored : len);
    if (!s->o.have_rank)
        return rc < 0 ? 1 : 0;
    s->lr.rank = s->o.rank;
    s->lr.size = s->o.size;
    s->lr.source = "command line";
    return 0;
}

/* This process's mask and the CPUs it may use (live topology only). */
static int read_masks(exec_state *s, char *err, size_t len)
{
    if (!ng_topology_is_this_system(s->topo))
        return 0;
    s->current = hwloc_bitmap_alloc();
    s->allowed = hwloc_bitmap_dup(ng_topology_allowed_cpus(s->topo));
    if (!s->current || !s->allowed || ng_current_cpus(s->current) < 0) {
        snprintf(err, len, "cannot read this process's CPU affinity");
        return 1;
    }
    /* A launcher's binding is kept: planning every rank inside one rank's
     * mask would pile them up or leave cores idle (docs/user-guide.md). */
    s->prebound = s->lr.launcher && !s->o.have_rank &&
                  ng_launcher_prebound(s->current, s->allowed);
    if (s->prebound) {
        char cur[256], all[256];
        if (ng_list_format(s->current, cur, sizeof cur) < 0)
            snprintf(cur, sizeof cur, "(long list)");
        if (ng_list_format(s->allowed, all, sizeof all) < 0)
            snprintf(all, sizeof all, "(long list)");
        snprintf(s->prebound_msg, sizeof s->prebound_msg,
                 "%s already bound local rank %u to CPUs %s of the allowed %s: keeping the "
                 "launcher's mask, threads capped to it; to let numaguard place the ranks, "
                 "run %s", s->lr.launcher, s->lr.rank, cur, all,
                 ng_launcher_unbind_hint(&s->lr));
    }
    return 0;
}

/* The plan request: every local rank (the same plan in each), or only
 * this rank inside the launcher's mask when it was pre-bound. */
static int compute_plan(exec_state *s, char *err, size_t len)
{
    ng_plan_request req = {0};
    unsigned r = s->lr.rank;
    req.ntasks = s->prebound ? 1 : s->lr.size;
    req.allowed_cpus = s->current;
    if (s->rg.any) {
        req.task_gpu_count = s->prebound ? s->rg.count + r : s->rg.count;
        req.task_gpu_offset = s->prebound ? s->rg.offset + r : s->rg.offset;
        req.task_gpus = s->rg.gpus;
    }
    req.policy = s->policy;
    req.omp = s->omp;
    req.net = s->net;
    req.nic_filter = &s->nic_filter;
    s->plan_rank = s->prebound ? 0 : r;
    if (ng_plan_compute(s->topo, &req, &s->plan, err, len) < 0)
        return 1;
    /* --explain: the planner's reasons; a failure only leaves them out. */
    if (s->o.explain && ng_plan_explain(s->topo, &req, s->plan, &s->why, NULL, 0) < 0)
        s->why = NULL;
    return 0;
}

/* Topology, masks, GPUs, plan. Returns 0, 2 (usage) or 1 (err says why). */
static int make_plan(exec_state *s, char *err, size_t len)
{
    s->topo = cli_load_topology(&s->o.common);
    if (!s->topo) {
        if (s->o.common.topology) /* a file named on the command line: bad input */
            return 2;
        snprintf(err, len, "topology not loaded");
        return 1;
    }
    if (ng_policy_check_nodes(&s->policy, s->topo, err, len) < 0)
        return cli_error(2, "exec: %s", err);
    if (read_masks(s, err, len))
        return 1;
    int rc = ng_launcher_rank_gpus(s->topo, NULL, s->o.common.fsroot, s->o.gpus, s->lr.size,
                                   &s->rg, err, len);
    if (rc == -2)
        return cli_error(2, "exec: %s", err);
    if (rc < 0)
        return 1;
    return compute_plan(s, err, len);
}

/* The governor of --omp-guard=adaptive: the one beside this executable
 * when there is one (a build tree: build/numaguard and
 * build/libnumaguard-omp.so, so a developer's build never runs an
 * installed release's governor), else the installed one (an installed
 * numaguard in $(BINDIR) has none beside it). The library checks that
 * root owns the file it is given, and says so when it refuses it. */
static const char *governor_path(char *buf, size_t len)
{
    const char *installed = ng_omp_preload_path();
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    char *slash = n > 0 ? memrchr(buf, '/', (size_t)n) : NULL;
    if (!slash || (size_t)(slash - buf) + sizeof "/libnumaguard-omp.so" > len)
        return installed;
    memcpy(slash, "/libnumaguard-omp.so", sizeof "/libnumaguard-omp.so");
    return access(buf, F_OK) == 0 ? buf : installed;
}

static unsigned apply_flags(const exec_state *s)
{
    unsigned flags = 0;
    if (!ng_topology_is_this_system(s->topo) || s->o.dry_run)
        flags |= NG_APPLY_SKIP_SYSCALLS;
    if (s->prebound)
        flags |= NG_APPLY_KEEP_CPUS | NG_APPLY_LAUNCHER_MASK;
    return flags;
}

/* ------------------------------------------------------------------ */
/* Report                                                               */
/* ------------------------------------------------------------------ */

static void warn(const exec_state *s, const char *text)
{
    if (!s->quiet && text && text[0])
        fprintf(stderr, "numaguard: warning: %s\n", text);
}

/* The verbose line. A pre-bound rank was planned alone (plan entry 0):
 * its line names its real local rank. */
static void verbose_line(const exec_state *s)
{
    ng_task_summary sum;
    char raw[2048], line[4 * 2048];
    if (ng_task_summary_of(s->topo, s->plan, s->plan_rank, s->lr.global_rank, &s->res, &sum) < 0)
        return;
    if (s->prebound)
        sum.local_id = s->lr.rank;
    if (ng_task_summary_format(s->topo, &sum, raw, sizeof raw) < 0)
        return;
    /* It names presets kept as the environment has them: escaped. */
    ng_text_escape(raw, line, sizeof line);
    fprintf(stderr, "%s\n", line);
}

static void report(const exec_state *s)
{
    if (s->verbose)
        fprintf(stderr, "numaguard: exec: local rank %u of %u (from %s), gpus from %s%s\n",
                s->lr.rank, s->lr.size, s->lr.source ? s->lr.source : "default", s->rg.how,
                ng_topology_is_this_system(s->topo) ? "" : ", plan only (topology is not "
                "this machine)");
    /* Warnings about the whole node are the same in every rank: local rank
     * 0 prints them, once. */
    if (s->lr.rank == 0) {
        for (unsigned i = 0; i < ng_plan_warning_count(s->plan); i++)
            warn(s, ng_plan_warning(s->plan, i));
        warn(s, s->rg.warning);
        warn(s, s->prebound_msg);
    }
    if (!s->verbose)
        warn(s, s->res.warning);
    if (s->verbose)
        verbose_line(s);
}

/* Plan and apply (or record, with --dry-run); returns 0 (placed, or not
 * placed but not strict), 1 (strict failure) or 2 (usage). */
static int place(exec_state *s, env_record *rec, char *err, size_t len)
{
    int rc = parse_values(s);
    if (rc)
        return rc;
    rc = local_rank(s, err, len);
    if (rc == 0)
        rc = make_plan(s, err, len);
    if (rc == 2)
        return 2;
    if (rc == 0) {
        ng_env_ops ops = {env_is_set, env_set, rec, env_get};
        char preload[NG_MAX_ARG];
        ng_apply_args a = {s->topo, s->plan, s->plan_rank, &s->policy, apply_flags(s), &ops,
                           governor_path(preload, sizeof preload), NULL, NULL};
        if (ng_apply_task_with(&a, &s->res, err, len) < 0)
            rc = 1;
        else if (!s->o.dry_run)
            report(s);
    }
    if (rc == 0 || s->o.dry_run)
        return rc == 0 || !s->strict ? 0 : 1;
    if (!s->quiet || s->strict)
        fprintf(stderr, "numaguard: exec: %s; %s\n", err[0] ? err : "placement failed",
                s->strict ? "strict: not running the command" : "running the command unplaced");
    return s->strict ? 1 : 0;
}

static void state_free(exec_state *s, env_record *rec)
{
    ng_plan_explanation_free(s->why);
    ng_plan_free(s->plan);
    hwloc_bitmap_free(s->current);
    hwloc_bitmap_free(s->allowed);
    ng_rank_gpus_free(&s->rg);
    ng_topology_free(s->topo);
    for (unsigned i = 0; i < rec->n; i++)
        free(rec->values[i]);
}

/* --dry-run --map / --svg: every local rank's slice, this rank outlined. */
static int draw(const exec_state *s)
{
    char name[300], title[400], sub[400];
    if (!s->plan || !(s->o.common.map || s->o.common.svg))
        return 0;
    snprintf(title, sizeof title, "numaguard exec --dry-run: %s, local rank %u of %u",
             cli_topology_name(&s->o.common, name, sizeof name), s->lr.rank, s->lr.size);
    snprintf(sub, sizeof sub, "--numa-policy %.200s; ranks from %s; GPUs from %.120s",
             s->o.policy && s->o.policy[0] ? s->o.policy : "local",
             s->lr.source ? s->lr.source : "no launcher variables", s->rg.how);
    ng_draw_request req = {.plan = s->plan, .allowed_cpus = s->current, .title = title,
                           .subtitle = sub, .flags = NG_DRAW_HIGHLIGHT,
                           .highlight_task = s->plan_rank};
    return cli_draw("exec", &s->o.common, s->topo, &req);
}

/* --dry-run: the report, and the exit status (1 when placement failed). */
static int dry_run(exec_state *s, const env_record *rec, const char *err, int failed)
{
    const char *names[REC_MAX], *values[REC_MAX];
    for (unsigned i = 0; i < rec->n; i++) {
        names[i] = rec->names[i];
        values[i] = rec->values[i];
    }
    if (!cli_draw_stdout(&s->o.common))
        exec_explain(s, names, values, rec->n, failed ? (err[0] ? err : "placement failed") : NULL);
    else if (failed)
        cli_error(1, "exec: %s", err[0] ? err : "placement failed");
    return draw(s) || failed ? 1 : 0;
}

int cmd_exec(int argc, char **argv)
{
    exec_state s;
    env_record rec;
    char err[512] = "";
    memset(&s, 0, sizeof s);
    memset(&rec, 0, sizeof rec);
    int rc = parse_args(argc, argv, &s.o);
    if (rc)
        return rc;
    rc = place(&s, s.o.dry_run ? &rec : NULL, err, sizeof err);
    if (rc != 2 && s.o.dry_run)
        rc = dry_run(&s, &rec, err, s.plan == NULL || err[0] != '\0');
    state_free(&s, &rec);
    if (rc || s.o.dry_run)
        return rc;
    fflush(NULL);
    execvp(s.o.cmd[0], s.o.cmd);
    int e = errno;
    return cli_error(e == ENOENT ? 127 : 126, "exec: cannot run '%.200s': %s", s.o.cmd[0],
                     strerror(e));
}
