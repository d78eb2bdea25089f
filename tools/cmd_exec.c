/* numaguard exec: place this rank like the SPANK plugin would, then exec.
 *
 *   numaguard exec [--numa-policy P] [--omp-guard[=G]] [--local-rank R
 *                  --local-size N] [--gpus LIST|all|none] [--topology F]
 *                  [--verbose] -- CMD [ARGS...]
 *
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
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char exec_usage[] =
    "usage: numaguard exec [--numa-policy P] [--omp-guard[=G]] [--local-rank R --local-size N]\n"
    "                      [--gpus LIST|all|none] [--topology FILE] [--verbose] -- CMD [ARGS...]\n"
    "  --numa-policy  as srun --numa-policy (default local; 'help' prints the grammar)\n"
    "  --omp-guard    cap thread pools: auto (bare option), N, off (default), ,force, ,bind\n"
    "  --local-rank/--local-size  this rank and the number of ranks on this node;\n"
    "                 default from LOCAL_RANK/LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_*,\n"
    "                 MPI_LOCALRANKID/MPI_LOCALNRANKS, PMI_LOCAL_RANK/PMI_LOCAL_SIZE,\n"
    "                 SLURM_LOCALID/SLURM_STEP_TASKS_PER_NODE, else 0 of 1\n"
    "  --gpus         the GPUs the ranks see: indices in bus order or bus ids, 'all' or\n"
    "                 'none' (default: CUDA_VISIBLE_DEVICES, else ROCR_VISIBLE_DEVICES);\n"
    "                 when the list has exactly local-size entries, rank r owns entry r\n"
    "  --verbose      one line on stderr saying where this rank went\n";

typedef struct exec_opts {
    common_opts common;
    const char *policy, *omp, *gpus;
    int omp_given, verbose;
    int have_rank, have_size;
    unsigned rank, size;
    char **cmd;
} exec_opts;

/* A decimal in [0, max]; -1 if not one (no sign, no spaces, no junk). */
static long parse_uint(const char *s, unsigned long max)
{
    if (!s || !isdigit((unsigned char)*s) || strlen(s) > 10)
        return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    return (errno || *end || v > max) ? -1 : (long)v;
}

static int parse_args(int argc, char **argv, exec_opts *o)
{
    static const struct option longopts[] = {
        {"topology", required_argument, NULL, 't'},
        {"fsroot", required_argument, NULL, 'r'},
        {"numa-policy", required_argument, NULL, 'p'},
        {"omp-guard", optional_argument, NULL, 'o'},
        {"local-rank", required_argument, NULL, 'R'},
        {"local-size", required_argument, NULL, 'N'},
        {"gpus", required_argument, NULL, 'g'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    long v;
    optind = 1;
    /* '+': stop at the first non-option, so the command's own options are
     * never taken for ours even without "--". */
    while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
        switch (c) {
        case 't': o->common.topology = optarg; break;
        case 'r': o->common.fsroot = optarg; break;
        case 'p': o->policy = optarg; break;
        case 'o': o->omp = optarg; o->omp_given = 1; break;
        case 'g': o->gpus = optarg; break;
        case 'v': o->verbose = 1; break;
        case 'R':
            if ((v = parse_uint(optarg, 65535)) < 0)
                return cli_error(2, "exec: invalid --local-rank '%.64s': expected 0-65535", optarg);
            o->rank = (unsigned)v;
            o->have_rank = 1;
            break;
        case 'N':
            if ((v = parse_uint(optarg, 65536)) < 1)
                return cli_error(2, "exec: invalid --local-size '%.64s': expected 1-65536", optarg);
            o->size = (unsigned)v;
            o->have_size = 1;
            break;
        case 'h': fputs(exec_usage, stdout); exit(0);
        default: fputs(exec_usage, stderr); return 2;
        }
    }
    if (o->have_rank != o->have_size)
        return cli_error(2, "exec: give --local-rank and --local-size together");
    if (o->have_rank && o->rank >= o->size)
        return cli_error(2, "exec: --local-rank %u is not below --local-size %u", o->rank, o->size);
    if (o->gpus && strlen(o->gpus) > NG_MAX_ARG)
        return cli_error(2, "exec: --gpus longer than %d bytes", NG_MAX_ARG);
    if (optind >= argc)
        return cli_error(2, "exec: no command given (numaguard exec [options] -- CMD [ARGS...])");
    o->cmd = argv + optind;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Local rank and size from the launcher's environment                  */
/* ------------------------------------------------------------------ */

/* Launchers in priority order: a launcher started INSIDE another one (torchrun
 * under srun, mpirun in a Slurm batch step) sets its own variables, and those
 * describe the process we are, so Slurm's come last. */
static const struct rank_source {
    const char *rank, *size, *global;
} rank_sources[] = {
    {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "RANK"},                     /* torchrun */
    {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_RANK"},
    {"MPI_LOCALRANKID", "MPI_LOCALNRANKS", "PMI_RANK"},             /* MPICH, Intel MPI */
    {"PMI_LOCAL_RANK", "PMI_LOCAL_SIZE", "PMI_RANK"},
    {"SLURM_LOCALID", NULL, "SLURM_PROCID"},                        /* srun: size below */
};

/* Entry SLURM_NODEID of a Slurm tasks-per-node list "2(x3),1" ("" if none). */
static long slurm_tasks_on_node(const char *list, unsigned long nodeid)
{
    unsigned long seen = 0;
    const char *p = list;
    while (p && *p) {
        char *end;
        if (!isdigit((unsigned char)*p))
            return -1;
        unsigned long n = strtoul(p, &end, 10), rep = 1;
        if (strncmp(end, "(x", 2) == 0) {
            if (!isdigit((unsigned char)end[2]))
                return -1;
            rep = strtoul(end + 2, &end, 10);
            if (*end++ != ')')
                return -1;
        }
        if (nodeid < seen + rep)
            return (n >= 1 && n <= 65536) ? (long)n : -1;
        seen += rep;
        if (*end != ',' && *end != '\0')
            return -1;
        p = *end ? end + 1 : end;
    }
    return -1;
}

/* srun: SLURM_STEP_TASKS_PER_NODE (step), else SLURM_TASKS_PER_NODE (job),
 * the entry for this node (SLURM_NODEID). */
static long slurm_local_size(void)
{
    const char *list = getenv("SLURM_STEP_TASKS_PER_NODE");
    if (!list)
        list = getenv("SLURM_TASKS_PER_NODE");
    const char *node = getenv("SLURM_NODEID");
    long id = node ? parse_uint(node, 1u << 20) : 0;
    if (!list || id < 0 || strlen(list) > NG_MAX_ARG)
        return -1;
    return slurm_tasks_on_node(list, (unsigned long)id);
}

/* Fill o->rank/o->size (unless given) and *global; *src names the source.
 * Returns 0, or 1 with one line in err when the environment is inconsistent. */
static int detect_rank(exec_opts *o, int *global, const char **src, char *err, size_t len)
{
    *global = -1;
    *src = o->have_rank ? "command line" : "default";
    for (size_t i = 0; i < sizeof rank_sources / sizeof rank_sources[0]; i++) {
        const struct rank_source *s = &rank_sources[i];
        const char *r = getenv(s->rank);
        if (!r)
            continue;
        const char *g = getenv(s->global);
        long gv = g ? parse_uint(g, 1u << 30) : -1;
        *global = (int)gv;
        if (o->have_rank)
            return 0;
        long rv = parse_uint(r, 65535);
        const char *sz = s->size ? getenv(s->size) : NULL;
        long nv = s->size ? (sz ? parse_uint(sz, 65536) : -1) : slurm_local_size();
        if (rv < 0 || nv < 1 || rv >= nv) {
            snprintf(err, len, "%s=%.32s with %s=%.32s is not a valid local rank and size; "
                     "give --local-rank and --local-size", s->rank, r,
                     s->size ? s->size : "SLURM_STEP_TASKS_PER_NODE",
                     s->size ? (sz ? sz : "(unset)") : "(unusable)");
            return 1;
        }
        o->rank = (unsigned)rv;
        o->size = (unsigned)nv;
        *src = s->rank;
        return 0;
    }
    if (!o->have_rank) {
        o->rank = 0;
        o->size = 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* GPUs                                                                 */
/* ------------------------------------------------------------------ */

/* Per-rank GPU lists for the plan request (task r: count[r] entries at
 * gpus[offset[r]]). Room: size * NG_MAX_GPUS entries in gpus. */
typedef struct rank_gpus {
    unsigned *count, *offset;
    int *gpus;
    int any;             /* some rank has a GPU */
    char how[160];       /* for the verbose line */
} rank_gpus;

/* --gpus items: "all", "none", or indices in bus order / bus ids. */
static int gpus_from_option(const ng_topology *topo, const char *text, int *list, unsigned *n)
{
    unsigned ngpu = ng_topology_gpu_count(topo);
    *n = 0;
    if (!strcmp(text, "none") || !*text)
        return 0;
    if (!strcmp(text, "all")) {
        for (unsigned i = 0; i < ngpu && i < NG_MAX_GPUS; i++)
            list[(*n)++] = (int)i;
        return 0;
    }
    char buf[NG_MAX_ARG + 1], *save = NULL;
    memcpy(buf, text, strlen(text) + 1);
    for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        long v = strchr(it, ':') ? ng_topology_gpu_by_busid(topo, it) : parse_uint(it, ngpu);
        if (v < 0 || (unsigned long)v >= ngpu)
            return cli_error(2, "exec: --gpus: '%.32s' is not a GPU index (0-%d) or bus id "
                             "of this topology", it, (int)ngpu - 1);
        if (*n >= NG_MAX_GPUS)
            return cli_error(2, "exec: --gpus: more than %d GPUs", NG_MAX_GPUS);
        list[(*n)++] = (int)v;
    }
    return 0;
}

/* The visible-devices variable to use, as an ng_gpu_env with only it set. */
static const char *visible_var(const char **name)
{
    static const char *const names[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        if (v) {
            *name = names[i];
            return v;
        }
    }
    return NULL;
}

static int resolve_visible(const ng_topology *topo, const char *name, const char *value,
                           const char *fsroot, int *out, unsigned *n, char *err, size_t len)
{
    ng_gpu_env env = {0};
    if (!strcmp(name, "CUDA_VISIBLE_DEVICES"))
        env.cuda_visible_devices = value;
    else
        env.rocr_visible_devices = value;
    return ng_task_gpus(topo, NULL, &env, fsroot, out, NG_MAX_GPUS, n, err, len);
}

/* Number of comma-separated entries of a visible-devices list, stopping at
 * "-1" (CUDA's "nothing after this"); 0 for "". */
static unsigned count_entries(const char *v)
{
    unsigned n = 0;
    const char *p = v;
    while (*p) {
        size_t k = strcspn(p, ",");
        if (k == 2 && !strncmp(p, "-1", 2))
            break;
        n++;
        p += k;
        if (*p == ',')
            p++;
    }
    return n;
}

/* The "one entry per rank" rule for the environment list: when it has
 * exactly local-size entries (>= 2), rank r owns entry r: torchrun and
 * mpirun give every rank all the node's GPUs and each rank uses device
 * <local rank>. Every rank computes the same lists, hence the same plan. */
static int split_visible(const ng_topology *topo, const exec_opts *o, const char *name,
                         const char *value, rank_gpus *rg, char *err, size_t len)
{
    char buf[NG_MAX_ARG + 1], *save = NULL;
    memcpy(buf, value, strlen(value) + 1);
    unsigned r = 0, pos = 0;
    for (char *it = strtok_r(buf, ",", &save); it && r < o->size;
         it = strtok_r(NULL, ",", &save), r++) {
        unsigned got = 0;
        if (resolve_visible(topo, name, it, o->common.fsroot, rg->gpus + pos, &got, err, len) < 0)
            return -1;
        rg->count[r] = got;
        rg->offset[r] = pos;
        pos += got;
    }
    snprintf(rg->how, sizeof rg->how, "%s entry %u of %u", name, o->rank, o->size);
    return 0;
}

/* Every rank planned with the same list (shared GPUs, or CPU-only). */
static void same_for_all(const exec_opts *o, rank_gpus *rg, const int *list, unsigned n)
{
    for (unsigned r = 0; r < o->size; r++) {
        rg->count[r] = n;
        rg->offset[r] = r * n;
        memcpy(rg->gpus + (size_t)r * n, list, n * sizeof *list);
    }
}

/* Returns 0, 2 (bad --gpus: usage error) or 1 (environment: err says why). */
static int build_rank_gpus(const ng_topology *topo, const exec_opts *o, rank_gpus *rg,
                           char *err, size_t len)
{
    int list[NG_MAX_GPUS];
    unsigned n = 0;
    const char *name = NULL, *value = NULL;
    if (o->gpus) {
        if (gpus_from_option(topo, o->gpus, list, &n))
            return 2;
        if (n == o->size && n >= 2) {
            for (unsigned r = 0; r < n; r++) {
                rg->count[r] = 1;
                rg->offset[r] = r;
                rg->gpus[r] = list[r];
            }
            snprintf(rg->how, sizeof rg->how, "--gpus entry %u of %u", o->rank, o->size);
            rg->any = 1;
            return 0;
        }
        snprintf(rg->how, sizeof rg->how, "--gpus, shared by %u rank(s)", o->size);
    } else if ((value = visible_var(&name)) != NULL) {
        if (strlen(value) > NG_MAX_ARG) {
            snprintf(err, len, "%s longer than %d bytes", name, NG_MAX_ARG);
            return 1;
        }
        if (o->size >= 2 && count_entries(value) == o->size) {
            if (split_visible(topo, o, name, value, rg, err, len) < 0)
                return 1;
            rg->any = 1;
            return 0;
        }
        if (resolve_visible(topo, name, value, o->common.fsroot, list, &n, err, len) < 0)
            return 1;
        snprintf(rg->how, sizeof rg->how, "%s, shared by %u rank(s)", name, o->size);
    } else {
        snprintf(rg->how, sizeof rg->how, "none visible (no CUDA_VISIBLE_DEVICES/"
                 "ROCR_VISIBLE_DEVICES; --gpus all to use every GPU)");
    }
    same_for_all(o, rg, list, n);
    rg->any = n > 0;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Plan, apply, exec                                                    */
/* ------------------------------------------------------------------ */

static int env_is_set(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name) != NULL;
}

static int env_set(void *ctx, const char *name, const char *value)
{
    (void)ctx;
    return setenv(name, value, 1);
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

typedef struct exec_state {
    exec_opts o;
    ng_policy policy;
    ng_omp_guard omp;
    int strict, quiet, verbose, global;
    const char *rank_src;
    ng_topology *topo;
    ng_plan *plan;
    hwloc_bitmap_t cpus;
    rank_gpus rg;
} exec_state;

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
    if (s->o.verbose)
        s->policy.mods |= NG_MOD_VERBOSE;
    if ((s->policy.mods & NG_MOD_VERBOSE) && (s->policy.mods & NG_MOD_QUIET))
        return cli_error(2, "exec: --verbose and the quiet modifier exclude each other");
    s->strict = (s->policy.mods & NG_MOD_STRICT) != 0;
    s->quiet = (s->policy.mods & NG_MOD_QUIET) != 0;
    s->verbose = (s->policy.mods & NG_MOD_VERBOSE) != 0;
    return 0;
}

/* The CPUs the ranks may use: this process's affinity (what the launcher
 * or the shell gave us). Plan-only topologies use all of theirs. */
static int allowed_cpus(exec_state *s, char *err, size_t len)
{
    if (!ng_topology_is_this_system(s->topo))
        return 0;
    s->cpus = hwloc_bitmap_alloc();
    if (!s->cpus || hwloc_get_cpubind(ng_topology_hwloc(s->topo), s->cpus,
                                      HWLOC_CPUBIND_THREAD) < 0) {
        snprintf(err, len, "cannot read this process's CPU affinity");
        return -1;
    }
    return 0;
}

/* Topology, GPUs, plan. Returns 0, 2 (usage) or 1 (err says why). */
static int make_plan(exec_state *s, char *err, size_t len)
{
    s->topo = cli_load_topology(&s->o.common);
    if (!s->topo) {
        snprintf(err, len, "topology not loaded");
        return 1;
    }
    size_t n = s->o.size;
    s->rg.count = calloc(n, sizeof(unsigned));
    s->rg.offset = calloc(n, sizeof(unsigned));
    s->rg.gpus = calloc(n * NG_MAX_GPUS, sizeof(int));
    if (!s->rg.count || !s->rg.offset || !s->rg.gpus) {
        snprintf(err, len, "out of memory");
        return 1;
    }
    int rc = build_rank_gpus(s->topo, &s->o, &s->rg, err, len);
    if (rc)
        return rc;
    if (allowed_cpus(s, err, len) < 0)
        return 1;
    ng_plan_request req = {0};
    req.ntasks = s->o.size;
    req.allowed_cpus = s->cpus;
    if (s->rg.any) {
        req.task_gpu_count = s->rg.count;
        req.task_gpu_offset = s->rg.offset;
        req.task_gpus = s->rg.gpus;
    }
    req.policy = s->policy;
    req.omp = s->omp;
    if (ng_plan_compute(s->topo, &req, &s->plan, err, len) < 0)
        return 1;
    return 0;
}

static void report(exec_state *s, const ng_apply_result *res)
{
    char line[2048];
    if (s->verbose) {
        fprintf(stderr, "numaguard: exec: local rank %u of %u (from %s), gpus from %s%s\n",
                s->o.rank, s->o.size, s->rank_src, s->rg.how,
                ng_topology_is_this_system(s->topo) ? "" : ", plan only (topology is not "
                "this machine)");
    }
    /* Plan warnings are the same in every rank: local rank 0 prints them. */
    if (!s->quiet && s->o.rank == 0)
        for (unsigned i = 0; i < ng_plan_warning_count(s->plan); i++)
            fprintf(stderr, "numaguard: warning: %s\n", ng_plan_warning(s->plan, i));
    if (res->warning[0] && !s->quiet && !s->verbose)
        fprintf(stderr, "numaguard: warning: %s\n", res->warning);
    if (s->verbose && ng_task_describe(s->topo, s->plan, s->o.rank, s->global, res, line,
                                       sizeof line) >= 0)
        fprintf(stderr, "%s\n", line);
}

/* Plan and apply; returns 0 (placed, or not placed but not strict), 1
 * (strict failure) or 2 (usage). */
static int place(exec_state *s)
{
    char err[512] = "";
    int rc = parse_values(s);
    if (rc)
        return rc;
    if (detect_rank(&s->o, &s->global, &s->rank_src, err, sizeof err) == 0)
        rc = make_plan(s, err, sizeof err);
    else
        rc = 1;
    if (rc == 2)
        return 2;
    ng_apply_result res;
    memset(&res, 0, sizeof res);
    if (rc == 0) {
        ng_env_ops ops = {env_is_set, env_set, NULL, env_get};
        unsigned flags = ng_topology_is_this_system(s->topo) ? 0 : NG_APPLY_SKIP_SYSCALLS;
        if (ng_apply_task(s->topo, s->plan, s->o.rank, &s->policy, flags, &ops, &res,
                          err, sizeof err) < 0)
            rc = 1;
        else
            report(s, &res);
    }
    if (rc == 0)
        return 0;
    if (!s->quiet || s->strict)
        fprintf(stderr, "numaguard: exec: %s; %s\n", err[0] ? err : "placement failed",
                s->strict ? "strict: not running the command" : "running the command unplaced");
    return s->strict ? 1 : 0;
}

static void state_free(exec_state *s)
{
    ng_plan_free(s->plan);
    hwloc_bitmap_free(s->cpus);
    free(s->rg.count);
    free(s->rg.offset);
    free(s->rg.gpus);
    ng_topology_free(s->topo);
}

int cmd_exec(int argc, char **argv)
{
    exec_state s;
    memset(&s, 0, sizeof s);
    int rc = parse_args(argc, argv, &s.o);
    if (rc)
        return rc;
    rc = place(&s);
    state_free(&s);
    if (rc)
        return rc;
    fflush(NULL);
    execvp(s.o.cmd[0], s.o.cmd);
    int e = errno;
    return cli_error(e == ENOENT ? 127 : 126, "exec: cannot run '%.200s': %s", s.o.cmd[0],
                     strerror(e));
}
