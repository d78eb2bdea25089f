/* numaguard plan: the per-task placement for a job shape on a topology. */
#include "cli.h"
#include "why.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char plan_synopsis[] =
    "usage: numaguard plan --tasks N [--gpus-per-task G | --task-gpus \"0;1;2,3\"]\n"
    "                      [--cpus-per-task C] [--cpus LIST] [--numa-policy P]\n"
    "                      [--omp-guard[=G]] [--net-affinity[=A]] [--net-allow LIST]\n"
    "                      [--net-deny LIST] [--topology FILE] [--json | --map]\n"
    "                      [--svg FILE|-] [--scale F] [--all-nics] [--explain]";

static const cli_opt_doc plan_docs[] = {
    {"--tasks N", "tasks on this node (1-65536; required)"},
    {"--gpus-per-task G", "task i gets the GPUs i*G .. i*G+G-1 in PCI bus order"},
    {"--task-gpus LISTS", "each task's GPUs: ';' between tasks, ',' between GPUs (bus order or bus id; empty: CPU-only)"},
    {"--cpus-per-task C", "each task's logical CPUs, as Slurm's -c (default: the step's cores shared out)"},
    {"--cpus LIST", "the CPUs the step may use, a cpulist of this machine's (default: all it allows)"},
    {"--numa-policy P", "as srun: local (default), prefer, interleave, weighted, none, modifiers; =help: the grammar"},
    {"--omp-guard[=G]", "cap thread pools: auto (bare option), adaptive, N, off (default), ,force, ,bind (after '=')"},
    {"--net-affinity[=A]", "each task's nearest NIC(s): auto (the bare option), N, off (default), ,force, ,nccl-per-rank"},
    {"--net-allow LIST", "NIC names tasks may get, as plugstack.conf's net_allow= (mlx5_0, mlx5_*)"},
    {"--net-deny LIST", "NIC names tasks never get, as plugstack.conf's net_deny="},
    {"--explain", "per task the objective's terms and why; every cut's candidates (docs/planner.md)"},
    CLI_DOC_TOPOLOGY,
    {"--json", "one JSON document (docs/json.md)"},
    CLI_DOC_MAP("the plan"),
    CLI_DOC_SVG("the plan"),
    CLI_DOC_PICTURE,
    CLI_DOC_END};

typedef struct plan_opts {
    common_opts common;
    unsigned tasks, gpus_per_task, cpus_per_task;
    const char *task_gpus, *cpus, *policy, *omp, *net, *net_allow, *net_deny;
    int omp_given, net_given, explain;
    /* "--omp-guard 8": the option seen bare and the word after it. */
    const char *bare_opt, *bare_word;
} plan_opts;

static int parse_count(const char *opt, const char *s, unsigned max, unsigned *out)
{
    long v = ng_parse_uint(s, max);
    if (v < 0)
        return cli_error(2, "plan: invalid value '%.64s' for %s: expected a number 0-%u",
                         s, opt, max);
    *out = (unsigned)v;
    return 0;
}

/* getopt has just returned an optional-value option: bare, with a word
 * after it that is one of its values, it is the "--omp-guard 8" mistake
 * (getopt permutes later; the word is still next to it now). */
static void bare(plan_opts *o, const char *opt, int argc, char **argv)
{
    if (!optarg && optind < argc && cli_is_option_value(opt, argv[optind]))
        o->bare_opt = opt, o->bare_word = argv[optind];
}

static int parse_args(int argc, char **argv, plan_opts *o)
{
    static const struct option longopts[] = {
        CLI_OPTS_COMMON,
        {"tasks", required_argument, NULL, 'n'},
        {"gpus-per-task", required_argument, NULL, 'g'},
        {"task-gpus", required_argument, NULL, 'G'},
        {"cpus-per-task", required_argument, NULL, 'c'},
        {"cpus", required_argument, NULL, 'C'},
        {"numa-policy", required_argument, NULL, 'p'},
        {"omp-guard", optional_argument, NULL, 'o'},
        {"net-affinity", optional_argument, NULL, 'N'},
        {"net-allow", required_argument, NULL, 'A'},
        {"net-deny", required_argument, NULL, 'D'},
        {"explain", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int rc = cli_common_option("plan", c, optarg, &o->common);
        if (rc > 0)
            return rc;
        if (rc == 0)
            continue;
        rc = 0;
        switch (c) {
        case 'n': rc = parse_count("--tasks", optarg, 65536, &o->tasks); break;
        case 'g': rc = parse_count("--gpus-per-task", optarg, NG_MAX_GPUS, &o->gpus_per_task); break;
        case 'G': o->task_gpus = optarg; break;
        case 'c': rc = parse_count("--cpus-per-task", optarg, 65536, &o->cpus_per_task); break;
        case 'C': o->cpus = optarg; break;
        case 'p': o->policy = optarg; break;
        case 'o': o->omp = optarg; o->omp_given = 1; bare(o, "--omp-guard", argc, argv); break;
        case 'N':
            o->net = optarg ? optarg : "auto";
            o->net_given = 1;
            bare(o, "--net-affinity", argc, argv);
            break;
        case 'A': o->net_allow = optarg; break;
        case 'D': o->net_deny = optarg; break;
        case 'x': o->explain = 1; break;
        case 'h': cli_usage(stdout, plan_synopsis, plan_docs); exit(0);
        default: cli_usage(stderr, plan_synopsis, plan_docs); return 2;
        }
        if (rc)
            return rc;
    }
    if (optind < argc && argv[optind] == o->bare_word)
        return cli_bare_value("plan", o->bare_opt, o->bare_word, "a stray argument");
    if (optind < argc)
        return cli_error(2, "plan: unexpected argument '%.64s'", argv[optind]);
    if (o->tasks == 0)
        return cli_error(2, "plan: --tasks N (N >= 1) is required");
    if (o->gpus_per_task && o->task_gpus)
        return cli_error(2, "plan: give --gpus-per-task or --task-gpus, not both");
    return cli_draw_check("plan", &o->common);
}

/* One --task-gpus item: a GPU index in bus order, or a bus id. */
static int gpu_item(const ng_topology *topo, const char *item, int *out)
{
    unsigned n = ng_topology_gpu_count(topo);
    char *end;
    if (strchr(item, ':')) {
        *out = ng_topology_gpu_by_busid(topo, item);
        if (*out < 0)
            return cli_error(2, "plan: --task-gpus: no GPU with bus id '%.32s' here", item);
        return 0;
    }
    if (!n)
        return cli_error(2, "plan: --task-gpus: '%.32s': this topology has no GPUs: leave out "
                         "--task-gpus for CPU-only tasks", item);
    errno = 0;
    unsigned long v = strtoul(item, &end, 10);
    if (!isdigit((unsigned char)*item) || *end || errno || v >= n)
        return cli_error(2, "plan: --task-gpus: '%.32s' is not a GPU index (0-%d) or bus id",
                         item, (int)n - 1);
    *out = (int)v;
    return 0;
}

/* More GPUs asked for than the topology has: say what would fit. */
static int too_few_gpus(const plan_opts *o, unsigned ngpu)
{
    unsigned long need = (unsigned long)o->tasks * o->gpus_per_task;
    if (ngpu == 0)
        return cli_error(2, "plan: %u tasks x %u GPUs need %lu GPUs; this topology has none: "
                         "leave out --gpus-per-task for CPU-only tasks", o->tasks,
                         o->gpus_per_task, need);
    if (o->gpus_per_task > ngpu)
        return cli_error(2, "plan: %u tasks x %u GPUs need %lu GPUs; this topology has %u: "
                         "use --gpus-per-task %u or less, or --task-gpus to give tasks GPUs "
                         "by hand (shared: \"0;0\")", o->tasks, o->gpus_per_task, need, ngpu,
                         ngpu);
    return cli_error(2, "plan: %u tasks x %u GPUs need %lu GPUs; this topology has %u: use "
                     "--tasks %u, or --task-gpus to share them (\"0;0;1;1\": two tasks per GPU)",
                     o->tasks, o->gpus_per_task, need, ngpu, ngpu / o->gpus_per_task);
}

/* Fill count/offset/gpus arrays (each sized for tasks * NG_MAX_GPUS max). */
static int task_gpu_lists(const ng_topology *topo, const plan_opts *o, unsigned *count,
                          unsigned *offset, int *gpus)
{
    unsigned ngpu = ng_topology_gpu_count(topo), pos = 0;
    if (o->gpus_per_task) {
        if ((unsigned long)o->tasks * o->gpus_per_task > ngpu)
            return too_few_gpus(o, ngpu);
        for (unsigned t = 0; t < o->tasks; t++) {
            count[t] = o->gpus_per_task;
            offset[t] = pos;
            for (unsigned k = 0; k < o->gpus_per_task; k++, pos++)
                gpus[pos] = (int)pos;
        }
        return 0;
    }
    char buf[NG_MAX_ARG + 1];
    if (strlen(o->task_gpus) > NG_MAX_ARG)
        return cli_error(2, "plan: --task-gpus longer than %d bytes", NG_MAX_ARG);
    strcpy(buf, o->task_gpus);
    unsigned t = 0;
    char *save_task = NULL;
    for (char *grp = buf, *next; grp; grp = next, t++) {
        next = strchr(grp, ';');
        if (next)
            *next++ = '\0';
        if (t >= o->tasks)
            return cli_error(2, "plan: --task-gpus lists more groups than --tasks %u", o->tasks);
        count[t] = 0;
        offset[t] = pos;
        for (char *item = strtok_r(grp, ",", &save_task); item;
             item = strtok_r(NULL, ",", &save_task)) {
            if (count[t] >= NG_MAX_GPUS)
                return cli_error(2, "plan: --task-gpus: too many GPUs for task %u", t);
            if (gpu_item(topo, item, &gpus[pos]))
                return 2;
            pos++;
            count[t]++;
        }
    }
    if (t != o->tasks && t == 1 && strchr(o->task_gpus, ','))
        return cli_error(2, "plan: --task-gpus \"%.64s\" is one group (one task with all of "
                         "those GPUs) but --tasks is %u: ';' separates tasks, ',' one task's GPUs "
                         "(\"0;1;2\": a GPU each)", o->task_gpus, o->tasks);
    if (t != o->tasks)
        return cli_error(2, "plan: --task-gpus lists %u group%s but --tasks is %u: one group per "
                         "task, ';' between them", t, t == 1 ? "" : "s", o->tasks);
    return 0;
}

/* The thread count --omp-guard exports for a task (the plan's count
 * variables all carry it); without --omp-guard, what auto would export:
 * the cores (PUs with smt) the task owns. */
static unsigned task_threads(const ng_task_plan *tp)
{
    for (unsigned k = 0; k < tp->n_env; k++)
        if (!(tp->env[k].flags & NG_ENV_BINDING))
            return (unsigned)strtoul(tp->env[k].value, NULL, 10);
    return tp->threads;
}

static void plan_json(const ng_topology *topo, const ng_plan *plan, const ng_plan_explanation *why)
{
    json_out j = {.f = stdout};
    char list[8192];
    json_begin_object(&j, NULL);
    json_begin_array(&j, "tasks");
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        json_begin_object(&j, NULL);
        json_uint(&j, "local_id", tp->local_id);
        json_begin_array(&j, "gpus");
        for (unsigned k = 0; k < tp->n_gpus; k++)
            json_string(&j, NULL, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->pci_bus_id);
        json_end_array(&j);
        ng_list_format(tp->cpus, list, sizeof(list));
        json_string(&j, "cpus", list);
        json_string(&j, "mem_policy", ng_mem_mode_name(tp->mem_mode));
        json_index_array(&j, "mem_nodes", tp->mem_nodes);
        json_uint(&j, "threads", task_threads(tp));
        json_uint(&j, "cores", tp->threads);
        json_begin_array(&j, "nics");
        for (unsigned k = 0; k < tp->n_nics; k++)
            json_string(&j, NULL, ng_topology_nic(topo, tp->nics[k])->name);
        json_end_array(&j);
        json_begin_object(&j, "env");
        for (unsigned k = 0; k < tp->n_env; k++)
            json_string(&j, tp->env[k].name, tp->env[k].value);
        for (unsigned k = 0; k < tp->n_net_env; k++)
            json_string(&j, tp->net_env[k].name, tp->net_env[k].value);
        json_end_object(&j);
        json_bool(&j, "shares_cores", tp->shares_cores);
        json_bool(&j, "gpu_remote", tp->gpu_remote);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_begin_array(&j, "warnings");
    for (unsigned i = 0; i < ng_plan_warning_count(plan); i++)
        json_string(&j, NULL, ng_plan_warning(plan, i));
    json_end_array(&j);
    if (why)
        why_plan_json(&j, plan, why);
    json_end_object(&j);
}

static void plan_text(const ng_topology *topo, const ng_plan *plan, int net)
{
    char cpus[8192], mems[512], nics[512];
    printf("%-5s %-28s %-24s %-26s %s%s\n", "task", "gpus", "cpus", "memory", net ? "threads " : "threads",
           net ? "nics" : "");
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        char gpus[256];
        if (ng_gpu_list_format(topo, tp->gpus, tp->n_gpus, gpus, sizeof(gpus)) == 0)
            strcpy(gpus, "-");
        ng_list_format(tp->cpus, cpus, sizeof(cpus));
        ng_list_format(tp->mem_nodes, mems, sizeof(mems));
        char memtxt[600];
        snprintf(memtxt, sizeof(memtxt), "%s%s%s", ng_mem_mode_name(tp->mem_mode),
                 *mems ? ":" : "", mems);
        printf("%-5u %-28s %-24s %-26s %-7u%s", t, gpus, tp->cpus ? cpus : "(unchanged)",
               memtxt, task_threads(tp), net ? " " : "\n");
        if (net) {
            ng_nic_list_format(topo, tp->nics, tp->n_nics, nics, sizeof nics);
            printf("%s\n", *nics ? nics : "-");
        }
    }
}

/* --net-affinity's variables, after the table and the explanation (v4
 * printed them between: 32 lines before the --explain text). */
static void plan_net_env(const ng_plan *plan)
{
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        for (unsigned k = 0; k < tp->n_net_env; k++)
            printf("env %u %s=%s\n", t, tp->net_env[k].name, tp->net_env[k].value);
    }
}

/* The plan's warnings on stderr, as exec and the plugin say them; the
 * modifier quiet silences them (plan --json lists them in warnings[]). */
static void plan_warnings(const ng_plan *plan, const ng_plan_request *req)
{
    if (req->policy.mods & NG_MOD_QUIET)
        return;
    fflush(stdout);
    for (unsigned i = 0; i < ng_plan_warning_count(plan); i++)
        fprintf(stderr, "numaguard: warning: %s\n", ng_plan_warning(plan, i));
}

/* --cpus naming CPUs the machine does not have (or does not allow): the
 * planner would drop them without a word; say which, and what it has. */
static int foreign_cpus(const ng_topology *topo, const char *text, hwloc_const_cpuset_t cpus)
{
    hwloc_const_cpuset_t mine = ng_topology_allowed_cpus(topo);
    if (hwloc_bitmap_isincluded(cpus, mine))
        return 0;
    hwloc_bitmap_t out = hwloc_bitmap_alloc();
    char extra[256], have[256];
    if (!out)
        return cli_error(1, "plan: out of memory");
    hwloc_bitmap_andnot(out, cpus, mine);
    if (ng_list_format(out, extra, sizeof extra) < 0)
        snprintf(extra, sizeof extra, "(%d CPUs)", hwloc_bitmap_weight(out));
    if (ng_list_format(mine, have, sizeof have) < 0)
        snprintf(have, sizeof have, "(%d CPUs)", hwloc_bitmap_weight(mine));
    int n = hwloc_bitmap_weight(out);
    hwloc_bitmap_free(out);
    return cli_error(2, "plan: --cpus %.64s: CPU%s %s %s not on this machine (its CPUs: %s)", text,
                     n == 1 ? "" : "s", extra, n == 1 ? "is" : "are", have);
}

/* What srun refuses, refused here too (exit 2, the reason): a
 * --cpus-per-task larger than the step's CPUs, or tasks x -c beyond them.
 * Slurm allocates -c in whole cores (ceil(C / threads per core) each), so
 * the step's cores are counted, at the PUs per core it has. The planner
 * itself keeps its fallback (the even share) for a step srun did start. */
static int slurm_refuses(const plan_opts *o, const ng_topology *topo, hwloc_const_cpuset_t given)
{
    if (!o->cpus_per_task)
        return 0;
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    hwloc_const_cpuset_t step = given ? given : ng_topology_allowed_cpus(topo);
    unsigned pus = (unsigned)hwloc_bitmap_weight(step), cores = 0, smt = 1;
    hwloc_bitmap_t x = hwloc_bitmap_alloc();
    int n = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    for (int c = 0; c < n; c++) {
        hwloc_bitmap_and(x, hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)c)->cpuset, step);
        unsigned w = (unsigned)hwloc_bitmap_weight(x);
        cores += w > 0;
        smt = w > smt ? w : smt;
    }
    hwloc_bitmap_free(x);
    if (n <= 0)
        cores = pus;
    const char *where = given ? "the CPUs --cpus gives" : "this machine's CPUs";
    if (o->cpus_per_task > pus)
        return cli_error(2, "plan: --cpus-per-task %u is more than the %u CPUs of the step (%s): "
                         "srun refuses it; at most --cpus-per-task %u", o->cpus_per_task, pus,
                         where, pus);
    unsigned long per = (o->cpus_per_task + smt - 1) / smt, need = per * o->tasks;
    if (need <= cores)
        return 0;
    unsigned fit_c = (unsigned)(cores / o->tasks) * smt, fit_n = (unsigned)(cores / per);
    char alt[96] = "";
    if (fit_c)
        snprintf(alt, sizeof alt, "--cpus-per-task %u or ", fit_c);
    return cli_error(2, "plan: --tasks %u x --cpus-per-task %u need %lu cores (%lu each, %u CPU%s "
                     "per core), but the step has %u cores, %u CPUs (%s): srun refuses it; use "
                     "%s--tasks %u", o->tasks, o->cpus_per_task, need, per, smt, smt == 1 ? "" : "s",
                     cores, pus, where, alt, fit_n);
}

static int build_request(const plan_opts *o, const ng_topology *topo, ng_plan_request *req,
                         hwloc_bitmap_t cpus, unsigned *count, unsigned *offset, int *gpus,
                         ng_nic_filter *filter)
{
    char err[512];
    req->ntasks = o->tasks;
    req->cpus_per_task = o->cpus_per_task;
    if (ng_policy_parse(o->policy, &req->policy, err, sizeof(err)) < 0)
        return cli_error(2, "%s", err);
    if (ng_policy_check_nodes(&req->policy, topo, err, sizeof err) < 0)
        return cli_error(2, "plan: %s", err);
    if (!o->omp_given)
        req->omp.mode = NG_OMP_OFF;
    else if (ng_omp_guard_parse(o->omp, &req->omp, err, sizeof(err)) < 0)
        return cli_error(2, "%s", err);
    if (o->net_given && ng_net_affinity_parse(o->net, &req->net, err, sizeof err) < 0)
        return cli_error(2, "%s", err);
    if (o->net_allow || o->net_deny) {
        if (ng_nic_filter_parse(o->net_allow, o->net_deny, filter, err, sizeof err) < 0)
            return cli_error(2, "plan: %s", err);
        req->nic_filter = filter;
    }
    if (o->cpus) {
        if (ng_list_parse(o->cpus, cpus, 1u << 20, err, sizeof(err)) < 0)
            return cli_error(2, "plan: --cpus: %s", err);
        if (foreign_cpus(topo, o->cpus, cpus))
            return 2;
        req->allowed_cpus = cpus;
    }
    if (slurm_refuses(o, topo, req->allowed_cpus))
        return 2;
    if (o->gpus_per_task || o->task_gpus) {
        if (task_gpu_lists(topo, o, count, offset, gpus))
            return 2;
        req->task_gpu_count = count;
        req->task_gpu_offset = offset;
        req->task_gpus = gpus;
    }
    return 0;
}

/* The picture's title: the topology, then the job shape as given. */
static int draw(const plan_opts *o, const ng_topology *topo, const ng_plan *plan,
                hwloc_const_cpuset_t cpus)
{
    char name[300], title[340], shape[1200];
    snprintf(title, sizeof title, "numaguard plan: %s",
             cli_topology_name(&o->common, name, sizeof name));
    int u = snprintf(shape, sizeof shape, "%u task%s", o->tasks, o->tasks == 1 ? "" : "s");
    if (o->gpus_per_task)
        u += snprintf(shape + u, sizeof shape - u, ", %u GPU%s per task", o->gpus_per_task,
                      o->gpus_per_task == 1 ? "" : "s");
    if (o->task_gpus)
        u += snprintf(shape + u, sizeof shape - u, ", GPUs %.200s", o->task_gpus);
    if (o->cpus_per_task)
        u += snprintf(shape + u, sizeof shape - u, ", %u CPUs per task", o->cpus_per_task);
    if (o->cpus)
        u += snprintf(shape + u, sizeof shape - u, ", CPUs %.200s", o->cpus);
    snprintf(shape + u, sizeof shape - u, ", --numa-policy %.200s%s%.64s",
             o->policy && o->policy[0] ? o->policy : "local", o->omp_given ? ", --omp-guard=" : "",
             o->omp_given ? (o->omp ? o->omp : "auto") : "");
    ng_draw_request req = {.plan = plan, .allowed_cpus = o->cpus ? cpus : NULL, .title = title,
                           .subtitle = shape};
    return cli_draw("plan", &o->common, topo, &req);
}

int cmd_plan(int argc, char **argv)
{
    plan_opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    ng_topology *topo = cli_load_topology(&o.common);
    if (!topo)
        return 1;
    unsigned *count = calloc(o.tasks, sizeof(unsigned));
    unsigned *offset = calloc(o.tasks, sizeof(unsigned));
    /* --task-gpus items are bounded by its length; --gpus-per-task by the GPU count. */
    int *gpus = calloc((size_t)o.tasks + NG_MAX_ARG + NG_MAX_GPUS, sizeof(int));
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    ng_plan_request req = {0};
    ng_plan *plan = NULL;
    ng_plan_explanation *why = NULL;
    char err[512];
    static ng_nic_filter filter; /* 2 KB: not on the stack */
    rc = build_request(&o, topo, &req, cpus, count, offset, gpus, &filter);
    if (!rc && ng_plan_compute(topo, &req, &plan, err, sizeof(err)) < 0)
        rc = cli_error(1, "plan: %s", err);
    if (!rc && o.explain && ng_plan_explain(topo, &req, plan, &why, err, sizeof err) < 0)
        rc = cli_error(1, "plan: --explain: %s", err);
    if (!rc) {
        if (o.common.json)
            plan_json(topo, plan, why);
        else if (!cli_draw_stdout(&o.common))
            plan_text(topo, plan, req.net.mode != NG_NET_OFF);
        if (why && !o.common.json && !cli_draw_stdout(&o.common))
            why_plan_text(plan, why);
        if (!o.common.json && !cli_draw_stdout(&o.common) && req.net.mode != NG_NET_OFF)
            plan_net_env(plan);
        if (!o.common.json)
            plan_warnings(plan, &req);
        rc = draw(&o, topo, plan, cpus);
    }
    ng_plan_explanation_free(why);
    ng_plan_free(plan);
    hwloc_bitmap_free(cpus);
    free(count);
    free(offset);
    free(gpus);
    ng_topology_free(topo);
    return rc;
}
