/* numaguard SPANK plugin: --numa-policy, --omp-guard and --net-affinity for
 * srun/sbatch/salloc.
 *
 * Where things happen (details and reasons in docs/plugin.md):
 *  - slurm_spank_init (every context): parse plugstack args, register options.
 *  - option callbacks (srun/sbatch/salloc): validate, refuse bad values early.
 *  - slurm_spank_user_init (slurmstepd, once per step per node, before the
 *    tasks are forked): validate AGAIN, load the topology, plan every local
 *    task. The plan is inherited by the forked tasks.
 *  - slurm_spank_task_init (each task, as the user, just before exec):
 *    check the task's real GPUs, apply its plan entry, export env, report.
 * Never fails user_init (that would drain the node); failures become a
 * warning, or a failed task under strict. Every callback returns 0 or -1
 * (Slurm 25.05+ treats any non-zero value as an error; only option
 * callbacks in srun/sbatch return -1, to refuse a bad value). */
#include "ng_spank.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

SPANK_PLUGIN(numaguard, 1);

#ifdef NG_HAVE_SPANK_FAILURE_MODE
/* Slurm 25.05+ drains the node when a plugin's slurm_spank_init fails,
 * unless the plugin asks for the job to fail instead. numaguard's init
 * never fails (it returns 0 even when disabled), so this only guards
 * against a future mistake. Declared only where the headers have it
 * (compile probe in mk/spank-features.mk). */
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

/* Step ids from slurm.h: batch, extern, interactive, pending (and above). */
#define NG_FIRST_SPECIAL_STEP 0xfffffffaU

enum { OPT_POLICY = 1, OPT_OMP = 2, OPT_NET = 3 };

static int cb_option(int val, const char *optarg, int remote);

/* Its usage text is filled in from the library's policy table at init. */
static char policy_usage[512];
static struct spank_option opt_policy = {
    "numa-policy", "POLICY", policy_usage, 1, OPT_POLICY, cb_option};
static struct spank_option opt_omp = {
    "omp-guard", "[auto|adaptive|N|off][,force][,bind]",
    "Cap OpenMP/BLAS thread pools to the cores each task owns (or N); adaptive also "
    "shares them among threads that start OpenMP regions at once. "
    "Write --omp-guard=N (with '='); keeps values you set unless ,force.",
    2, OPT_OMP, cb_option};
static struct spank_option opt_net = {
    "net-affinity", "[auto|N|off][,force][,nccl-per-rank]",
    "Give each task the network adapter(s) nearest its GPU(s) in UCX_NET_DEVICES, "
    "NVSHMEM_HCA_LIST and OMPI_MCA_btl_openib_if_include, and the node's GPU-near HCAs "
    "in NCCL_IB_HCA. Write --net-affinity=N (with '='); keeps values you set unless ,force.",
    2, OPT_NET, cb_option};

static ng_spank_conf g_conf;
static ng_step g_step;
static int g_conf_logged;

/* ------------------------------------------------------------------ */
/* Options (local side: srun, sbatch, salloc)                          */
/* ------------------------------------------------------------------ */

static int check_policy_local(const char *optarg)
{
    char err[512];
    ng_policy pol;
    if (ng_policy_parse(optarg, &pol, err, sizeof err) < 0) {
        slurm_error("numaguard: %s", err);
        return -1;
    }
    if (pol.mods & NG_MOD_HELP) {
        /* Print the grammar and refuse: exiting 0 would make a script with
         * the option in its env "succeed" without running anything. */
        fprintf(stderr, "%s\n", ng_policy_help());
        slurm_error("numaguard: printed the --numa-policy grammar; nothing was submitted");
        return -1;
    }
    if (!ng_spank_conf_allows(&g_conf, pol.kind)) {
        char allowed[128];
        ng_spank_conf_allowed_text(&g_conf, allowed, sizeof allowed);
        slurm_error("numaguard: --numa-policy=%s is not allowed on this cluster (allowed: %s)",
                    ng_policy_kind_name(pol.kind), allowed);
        return -1;
    }
    return 0;
}

/* A bare --omp-guard reaches plugins as NULL, but sbatch exports it into the
 * batch environment as the text "(null)" (Slurm prints the NULL optarg), so
 * every srun inside the job sees that. Both mean "no value". */
static const char *bare_optarg(const char *optarg)
{
    return optarg && strcmp(optarg, "(null)") != 0 ? optarg : NULL;
}

/* --numa-policy=none or --omp-guard=off (valid, asking for nothing). */
static int opts_out(int val, const char *optarg)
{
    ng_policy pol;
    ng_omp_guard g;
    if (val == OPT_POLICY)
        return optarg && ng_policy_parse(optarg, &pol, NULL, 0) == 0 &&
               pol.kind == NG_POLICY_NONE && !(pol.mods & NG_MOD_HELP);
    return ng_omp_guard_parse(optarg, &g, NULL, 0) == 0 && g.mode == NG_OMP_OFF;
}

static int cb_option(int val, const char *optarg, int remote)
{
    char err[512];
    optarg = bare_optarg(optarg);
    /* On the node the values are re-read and re-checked in user_init; a
     * failing remote callback would only log, so never fail here. */
    if (remote)
        return 0;
    if (g_conf.disabled) {
        /* The admin's error (slurmd's log has it): told only to a user who
         * asks for something, not to one opting out. */
        if (!opts_out(val, optarg))
            slurm_error("numaguard: disabled by a plugstack.conf error (%s); option ignored",
                        g_conf.disabled_why);
        return 0;
    }
    if (val == OPT_POLICY)
        return check_policy_local(optarg);
    if (val == OPT_NET) {
        ng_net_affinity a;
        if (ng_net_affinity_parse(optarg ? optarg : "auto", &a, err, sizeof err) < 0) {
            slurm_error("numaguard: %s", err);
            return -1;
        }
        return 0;
    }
    ng_omp_guard g;
    if (ng_omp_guard_parse(optarg, &g, err, sizeof err) < 0) {
        slurm_error("numaguard: %s", err);
        return -1;
    }
    return 0;
}

/* slurmd start (root): discover the node once, with I/O devices, and write
 * the topology cache every step then reads (docs/performance.md). A failure
 * only costs speed: steps fall back to live discovery. */
static void write_topology_cache(int argc, char **argv)
{
    char err[512];
    struct stat st;
    /* The admin's errors, also at slurmd's start: seen before any step asks
     * for placement (steps log them again, once each). stat only: the file
     * is opened by the steps. */
    if (ng_spank_conf_parse(&g_conf, argc, argv) < 0) {
        slurm_error("numaguard: plugstack.conf: %s; plugin disabled", g_conf.disabled_why);
        return;
    }
    if (g_conf.pc.topology[0]) {
        const char *why = NULL;
        if (stat(g_conf.pc.topology, &st) != 0)
            why = strerror(errno);
        else if (!S_ISREG(st.st_mode))
            why = "not a regular file";
        if (why)
            slurm_error("numaguard: topology=%s: %s; steps cannot place tasks",
                        g_conf.pc.topology, why);
    }
    if (g_conf.pc.topology[0] || !g_conf.pc.cache_dir[0])
        return;
    if (ng_topology_cache_write(g_conf.pc.cache_dir, err, sizeof err) < 0)
        slurm_info("numaguard: topology cache %s not written (%s); steps discover the "
                   "topology live", g_conf.pc.cache_dir, err);
}

int slurm_spank_init(spank_t sp, int argc, char **argv)
{
    spank_context_t ctx = spank_context();
    if (ctx == S_CTX_SLURMD) {
        /* slurmd has one thread here (slurmstepd never has): hwloc's lean
         * plugin set goes into its environment, which every slurmstepd
         * inherits; the cache writer below uses it too. */
        ng_topology_lean_hwloc();
        write_topology_cache(argc, argv);
        return 0;
    }
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
        return 0;
    if (ng_spank_conf_parse(&g_conf, argc, argv) < 0 && ctx == S_CTX_REMOTE && !g_conf_logged) {
        /* Logged once per slurmstepd (slurmd log), the plugin then does nothing. */
        slurm_error("numaguard: plugstack.conf: %s; plugin disabled", g_conf.disabled_why);
        g_conf_logged = 1;
    }
#ifdef NG_FAULT_INJECTION
    if (ctx == S_CTX_REMOTE && g_conf.test_fault != NG_FAULT_NONE)
        slurm_info("numaguard: test_fault=%s armed (plugstack.conf): for tests only",
                   ng_fault_name(g_conf.test_fault));
#endif
    /* Register even when disabled: users' scripts with the options keep working. */
    char kinds[384];
    if (ng_policy_usage(kinds, sizeof kinds) < 0)
        kinds[0] = '\0';
    snprintf(policy_usage, sizeof policy_usage, "Bind each task's CPUs and memory near its "
             "GPU(s): %s. --numa-policy=help shows the grammar.", kinds);
    if (spank_option_register(sp, &opt_policy) != ESPANK_SUCCESS ||
        spank_option_register(sp, &opt_omp) != ESPANK_SUCCESS ||
        spank_option_register(sp, &opt_net) != ESPANK_SUCCESS)
        slurm_error("numaguard: cannot register options");
    return 0;
}

/* ------------------------------------------------------------------ */
/* Node side: once per step                                             */
/* ------------------------------------------------------------------ */

/* Copy of a job env variable (the step env, not slurmd's) or NULL. */
static const char *job_env(spank_t sp, const char *name, char *buf, int len)
{
    if (spank_getenv(sp, name, buf, len) != ESPANK_SUCCESS)
        return NULL;
    return buf;
}

static int is_special_step(spank_t sp)
{
    uint32_t stepid = 0;
    if (spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS)
        return 1;
    return stepid >= NG_FIRST_SPECIAL_STEP;
}

static int step_failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int step_failure(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_step.failure, sizeof g_step.failure, fmt, ap);
    va_end(ap);
    return -1;
}

/* An option value that did not parse can still say "strict": one of its
 * comma-separated items is exactly that word (bogus,strict set through
 * _SLURM_SPANK_OPTION_numaguard_numa_policy, which srun does not check).
 * Such a user asked for failure over an unplaced task, so the task fails
 * (docs/plugin.md). */
static int names_strict(const char *text)
{
    size_t n = strlen("strict");
    for (const char *p = text; p && *p; p += strcspn(p, ","), p += *p == ',')
        if (strncmp(p, "strict", n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The option texts a step has on the node: the user's (srun/sbatch, or
 * the environment, unchecked), else the admin's defaults. */
typedef struct node_texts {
    const char *policy, *omp, *net;   /* NULL: not given, no default */
    int have_p, have_o;               /* given by the user */
} node_texts;

static void read_texts(spank_t sp, node_texts *t)
{
    char *val = NULL;
    t->have_p = spank_option_getopt(sp, &opt_policy, &val) == ESPANK_SUCCESS;
    t->policy = t->have_p ? (val ? val : "") : NULL;
    val = NULL;
    t->have_o = spank_option_getopt(sp, &opt_omp, &val) == ESPANK_SUCCESS;
    t->omp = t->have_o ? (bare_optarg(val) ? val : "") : NULL;
    val = NULL;
    /* A bare --net-affinity (the node sees "") means auto, as a bare
     * --omp-guard does; "" alone would parse as off. */
    t->net = NULL;
    if (spank_option_getopt(sp, &opt_net, &val) == ESPANK_SUCCESS)
        t->net = bare_optarg(val) && *val ? val : "auto";
    else if (g_conf.pc.have_default_net)
        t->net = g_conf.pc.default_net;
    if (!t->have_p && g_conf.pc.have_default_policy)
        t->policy = g_conf.pc.default_policy;
    if (!t->have_o && g_conf.pc.have_default_omp)
        t->omp = g_conf.pc.default_omp;
}

/* The policy, the admin's allowed kinds aside; sets strict, verbose, quiet. */
static int node_policy(const node_texts *t)
{
    char err[512];
    g_step.strict = g_conf.pc.strict;
    g_step.verbose = g_conf.pc.verbose;
    /* --omp-guard or --net-affinity alone: leave placement to Slurm. */
    if (ng_policy_parse(t->policy ? t->policy : "none", &g_step.policy, err, sizeof err) < 0) {
        g_step.strict |= names_strict(t->policy);
        return step_failure("invalid --numa-policy on the node: %s", err);
    }
    g_step.strict |= (g_step.policy.mods & NG_MOD_STRICT) != 0;
    g_step.verbose |= (g_step.policy.mods & NG_MOD_VERBOSE) != 0;
    g_step.quiet = (g_step.policy.mods & NG_MOD_QUIET) != 0;
    return 0;
}

/* Read and validate the option values on the node (never trust srun:
 * values also arrive through the environment, unchecked). The policy first:
 * its strict decides what a bad value of another option does. */
static int node_options(spank_t sp, int *any)
{
    char err[512];
    node_texts t;
    read_texts(sp, &t);
    if (node_policy(&t) < 0)
        return -1;
    g_step.net.mode = NG_NET_OFF;
    if (t.net && ng_net_affinity_parse(t.net, &g_step.net, err, sizeof err) < 0)
        return step_failure("invalid --net-affinity on the node: %s", err);
    g_step.omp.mode = NG_OMP_OFF;
    if (t.omp && ng_omp_guard_parse(t.omp, &g_step.omp, err, sizeof err) < 0)
        return step_failure("invalid --omp-guard on the node: %s", err);
    /* "off" (given or the admin's default) asks for nothing by itself. */
    *any = t.policy || t.omp || g_step.net.mode != NG_NET_OFF;
    if (!*any)
        return 0;
    if (g_step.policy.mods & NG_MOD_HELP)
        return step_failure("--numa-policy=help is not a policy");
    if (!ng_spank_conf_allows(&g_conf, g_step.policy.kind)) {
        char allowed[128];
        ng_spank_conf_allowed_text(&g_conf, allowed, sizeof allowed);
        return step_failure("--numa-policy=%s is not allowed on this cluster (allowed: %s)",
                            ng_policy_kind_name(g_step.policy.kind), allowed);
    }
    /* The user's own request, not the admin's defaults nor an opt-out:
     * only such users hear of the admin's or the node's problems. */
    g_step.asked = (t.have_p && g_step.policy.kind != NG_POLICY_NONE) ||
                   (t.have_o && g_step.omp.mode != NG_OMP_OFF);
    return 0;
}

/* Did the user ask srun for a CPU binding (other than none)? Read from the
 * STEP env in user_init: srun exports SLURM_CPU_BIND_TYPE only when the user
 * gave --cpu-bind (or SLURM_CPU_BIND); in the task env task/affinity always
 * writes its own automatic binding (mask_cpu:), so that cannot tell. */
static int user_cpu_bind(spank_t sp)
{
    char type[128];
    if (spank_getenv(sp, "SLURM_CPU_BIND_TYPE", type, sizeof type) != ESPANK_SUCCESS)
        return 0;
    return type[0] && strstr(type, "none") == NULL;
}

/* This node's Slurm name for gres.conf NodeName= records. Read from
 * slurmstepd's OWN environment (getenv): slurmstepd sets SLURMD_NODENAME
 * there from slurmd's configuration, one value per slurmd even with several
 * on one host (seen on 22.05, 24.11 and 26.05: t-slurm-sharedgres.sh).
 * Never the job's environment (spank_getenv): in user_init that still holds
 * whatever the user exported; slurmstepd writes the task's copy later.
 * Fallback: the short host name, slurmd's default node name. */
static const char *stepd_node_name(char *buf, size_t len)
{
    const char *n = getenv("SLURMD_NODENAME");
    if (n && *n && strlen(n) < len) {
        memcpy(buf, n, strlen(n) + 1);
        return buf;
    }
    if (gethostname(buf, len) != 0)
        return NULL;
    buf[len - 1] = '\0';
    buf[strcspn(buf, ".")] = '\0';
    return buf[0] ? buf : NULL;
}

int slurm_spank_user_init(spank_t sp, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int any = 0;
    if (!spank_remote(sp) || g_conf.disabled || is_special_step(sp))
        return 0;
    if (node_options(sp, &any) < 0) {
        g_step.active = 1;
        g_step.failed = 1;
        return 0;
    }
    if (!any)
        return 0;   /* nothing asked, nothing done */
    g_step.active = 1;
    uint32_t ntasks = 1;
    uint32_t cpt = 0;   /* S_STEP_CPUS_PER_TASK takes a uint32_t * */
    char *cores = NULL;
    char gpus[NG_MAX_ARG + 1], node[256];
    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks);
    /* Slurm reports 1 CPU per task when the user gave no -c: only a real -c
     * (SLURM_CPUS_PER_TASK in the step env) caps the slices. */
    char cpt_env[32];
    if (job_env(sp, "SLURM_CPUS_PER_TASK", cpt_env, sizeof cpt_env))
        spank_get_item(sp, S_STEP_CPUS_PER_TASK, &cpt);
    if (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) != ESPANK_SUCCESS)
        cores = NULL;
    ng_step_input in = {0};
    in.ntasks = ntasks;
    in.cpus_per_task = cpt;
    in.step_cores = cores;
    in.step_gpus = job_env(sp, "SLURM_STEP_GPUS", gpus, sizeof gpus);
    in.node_name = stepd_node_name(node, sizeof node);
    g_step.user_cpu_bind = user_cpu_bind(sp);
    ng_step_plan(&g_step, &g_conf, &in);   /* failure recorded in g_step */
    if (g_step.omp.mode == NG_OMP_ADAPTIVE)
        ng_spank_governor_identify(&g_conf);   /* before pyxis's task_init */
    /* The admin's and the node's problems go to the slurmd log, once per
     * step (user_init runs once per step on each node). slurm_info, not
     * slurm_error: slurmstepd also copies errors to the user's srun. */
    if (g_step.failed && g_step.admin_failure)
        slurm_info("numaguard: node %s: error: %s; tasks run as Slurm placed them%s", node,
                   g_step.failure, g_step.strict ? " (strict: tasks fail)" : "");
    if (g_step.cache_note[0])
        slurm_info("numaguard: node %s: %s", node, g_step.cache_note);
    if (g_step.gres_warning[0])   /* for the admin (slurmd log); task 0 tells the user */
        slurm_info("numaguard: node %s: %s", node, g_step.gres_warning);
    if (g_step.cpu_warning[0])
        slurm_info("numaguard: node %s: %s", node, g_step.cpu_warning);
    return 0;
}

int slurm_spank_exit(spank_t sp, int argc, char **argv)
{
    (void)sp;
    (void)argc;
    (void)argv;
    ng_step_free(&g_step);
    return 0;
}

/* ------------------------------------------------------------------ */
/* In the task: apply                                                   */
/* ------------------------------------------------------------------ */

typedef struct task_ctx {
    spank_t sp;
} task_ctx;

static int env_is_set(void *ctx, const char *name)
{
    char buf[8];
    spank_err_t rc = spank_getenv(((task_ctx *)ctx)->sp, name, buf, sizeof buf);
    return rc == ESPANK_SUCCESS || rc == ESPANK_NOSPACE;
}

static int env_set(void *ctx, const char *name, const char *value)
{
    return spank_setenv(((task_ctx *)ctx)->sp, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
}

/* A preset value, so the verbose line can name what --omp-guard kept. */
static int env_get(void *ctx, const char *name, char *buf, size_t len)
{
    return spank_getenv(((task_ctx *)ctx)->sp, name, buf, (int)len) == ESPANK_SUCCESS ? 0 : -1;
}

/* One line on the task's stderr (task_init runs in the task process). */
static void task_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void task_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdprintf(2, fmt, ap);
    va_end(ap);
}


/* The task's real GPUs, from the env Slurm gave this task. SLURM_JOB_GPUS
 * is not read: the job's list is no evidence for a step (task_gpus.c). */
static int task_gpus(spank_t sp, int *idx, unsigned *n, char *err, size_t errlen)
{
    static const char *const names[] = {"SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "GPU_DEVICE_ORDINAL"};
    char vals[5][NG_MAX_ARG + 1];
    const char *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = job_env(sp, names[i], vals[i], sizeof vals[i]);
    ng_gpu_env env = {p[0], NULL, p[1], p[2], p[3], p[4]};
    *n = 0;
#ifdef NG_FAULT_INJECTION
    if ((p[0] || p[1] || p[2] || p[3] || p[4]) &&
        ng_fault_gpu_lookup(g_conf.test_fault, err, errlen) < 0)
        return -1;
#endif
    /* The rule (a step without GPUs has none; the devices cgroup; then the
     * variables) is the library's. */
    return ng_step_task_gpus(g_step.topo, g_step.have_order ? &g_step.order : NULL,
                             g_step.n_step_gpus, &env, g_conf.pc.fsroot[0] ? g_conf.pc.fsroot : NULL,
                             idx, NG_MAX_GPUS, n, err, errlen);
}

/* Same set of GPU indices (order ignored; both lists have unique entries). */
static int same_list(const int *a, unsigned na, const int *b, unsigned nb)
{
    if (na != nb)
        return 0;
    for (unsigned i = 0; i < nb; i++) {
        int found = 0;
        for (unsigned j = 0; j < na; j++)
            found |= a[j] == b[i];
        if (!found)
            return 0;
    }
    return 1;
}

static int same_gpus(const ng_task_plan *tp, const int *idx, unsigned n)
{
    return same_list(tp->gpus, tp->n_gpus, idx, n);
}

/* Under a user --cpu-bind: a one-task plan over the CPUs Slurm bound this
 * task to, so memory nodes and thread counts match that mask. */
static int keep_cpus_plan(const int *gpus, unsigned ngpus, ng_plan **out, char *err, size_t len)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (!mine || ng_current_cpus(mine) < 0) {
        hwloc_bitmap_free(mine);
        snprintf(err, len, "cannot read the task's CPU affinity");
        return -1;
    }
    unsigned zero = 0;
    ng_plan_request req = {0};
    req.ntasks = 1;
    req.allowed_cpus = mine;
    if (ngpus) {
        req.task_gpu_count = &ngpus;
        req.task_gpu_offset = &zero;
        req.task_gpus = gpus;
    }
    req.policy = g_step.policy;
    req.omp = g_step.omp;
    req.thread_vars = g_conf.have_thread_vars ? g_conf.thread_vars : NULL;
    req.net = g_step.net;
    req.nic_filter = &g_conf.pc.nic_filter;
    int rc = ng_plan_compute(g_step.topo, &req, out, err, len);
    hwloc_bitmap_free(mine);
    return rc;
}

/* Step-level problems are reported by local task 0 only (once per node).
 * The admin's or the node's (logged in slurmd's log) reach only users who
 * asked for placement; under strict a failed task still says why, without
 * the admin's details. */
static int report_step_failure(uint32_t local)
{
    if (local != 0 || g_step.quiet)
        return g_step.strict ? -1 : 0;
    if (g_step.admin_failure && !g_step.asked) {
        if (g_step.strict)
            task_say("numaguard: placement unavailable on this node (the admin's problem, "
                     "in slurmd's log); strict: failing the task\n");
        return g_step.strict ? -1 : 0;
    }
    task_say("numaguard: %s; %s\n", g_step.failure,
             g_step.strict ? "strict: failing the task" : "tasks run as Slurm placed them");
    return g_step.strict ? -1 : 0;
}

static void report_plan_warnings(uint32_t local)
{
    static const char *const pred[] = {"none", "shared out in gres order"};
    if (local != 0)
        return;
    if (g_step.verbose)
        task_say("numaguard: step on this node: %u tasks, topology %s, cpus from %s, gpus %s%s\n",
                 g_step.ntasks, g_conf.pc.topology[0] ? "from topology="
                 : ng_topology_from_cache(g_step.topo) ? "from cache" : "discovered live",
                 g_step.cpu_source, pred[g_step.gpu_prediction],
                 g_step.plan_only ? ", plan only (topology is not this machine)" : "");
    if (g_step.quiet)
        return;
    if (g_step.gres_warning[0])
        task_say("numaguard: warning: %s\n", g_step.gres_warning);
    if (g_step.cpu_warning[0])
        task_say("numaguard: warning: %s\n", g_step.cpu_warning);
    for (unsigned i = 0; i < ng_plan_warning_count(g_step.plan); i++)
        task_say("numaguard: warning: %s\n", ng_plan_warning(g_step.plan, i));
}

/* Overwrite NUMAGUARD_GPUS with the GPUs the task really has. */
static void export_real_gpus(spank_t sp, const int *idx, unsigned n)
{
    char buf[NG_MAX_ARG];
    ng_gpu_list_format(g_step.topo, idx, n, buf, sizeof buf);
    spank_setenv(sp, "NUMAGUARD_GPUS", buf, 1);
}

/* Exchange real GPU lists with the other tasks of the step; if Slurm bound
 * GPUs differently from the prediction (map_gpu, mask_gpu, closest), plan
 * again with the real lists. A task that sees all of the step's GPUs (no
 * per-task binding) keeps its predicted share. Returns 1 with *out set when
 * a new plan was made. */
static int plan_with_real_gpus(uint32_t local, const int *gpus, unsigned n, ng_plan **out)
{
#ifdef NG_FAULT_INJECTION
    if (ng_fault_skip_exchange(g_conf.test_fault, local, g_step.ntasks))
        return 0;
#endif
    if (!ng_exchange_all(g_step.exchange, local, gpus, n, 3000))
        return 0;   /* a task never arrived: keep the prediction */
    unsigned nt = g_step.ntasks, used = 0;
    int differs = 0;
    unsigned *count = calloc(nt, sizeof *count), *offset = calloc(nt, sizeof *offset);
    int *list = calloc((size_t)nt * NG_MAX_GPUS, sizeof *list);
    if (!count || !offset || !list) {
        free(count);
        free(offset);
        free(list);
        return 0;
    }
    const ng_task_plan *pred;
    int theirs[NG_MAX_GPUS];
    unsigned ngpu = ng_topology_gpu_count(g_step.topo);
    for (unsigned t = 0; t < nt; t++) {
        const int *g = theirs;
        unsigned k;
        pred = ng_plan_task(g_step.plan, t);
        if (!ng_exchange_gpus(g_step.exchange, t, ngpu, theirs, &k) ||
            same_list(g_step.step_gpus, g_step.n_step_gpus, g, k)) {
            g = pred->gpus;
            k = pred->n_gpus;
        } else if (!same_list(pred->gpus, pred->n_gpus, g, k)) {
            differs = 1;
        }
        offset[t] = used;
        count[t] = k;
        memcpy(list + used, g, k * sizeof *g);
        used += k;
    }
    char err[512];
    int rc = differs && ng_step_replan(&g_step, count, offset, list, out, err, sizeof err) == 0;
    free(count);
    free(offset);
    free(list);
    return rc;
}

/* What a failed ng_apply_task left in place, exactly: a refused memory
 * policy alone is not a failure unless strict, where it undoes the
 * affinity; the variables come last, so a failure there leaves the task
 * placed but its NUMAGUARD_* and thread variables not all set. */
static void apply_failure_tail(const ng_apply_result *res, const ng_plan *plan, unsigned id,
                               char *buf, size_t len)
{
    const ng_task_plan *tp = ng_plan_task(plan, id);
    char cpus[256] = "";
    if (!res->cpus_applied && !res->mem_applied) {
        snprintf(buf, len, "task runs as Slurm placed it");
        return;
    }
    if (res->cpus_applied && tp && tp->cpus && ng_list_format(tp->cpus, cpus, sizeof cpus) < 0)
        snprintf(cpus, sizeof cpus, "(long list)");
    if (res->cpus_applied && res->mem_applied)
        snprintf(buf, len, "CPU affinity (cpus %s) and memory policy (%s) set, "
                 "its environment variables not all", cpus, res->mem_mode_text);
    else if (res->cpus_applied)
        snprintf(buf, len, "CPU affinity (cpus %s) set, no memory policy, its environment "
                 "variables not all", cpus);
    else
        snprintf(buf, len, "memory policy (%s) set, CPU affinity left as Slurm set it, its "
                 "environment variables not all", res->mem_mode_text);
}

/* One task's apply: which plan entry, with which flags, and what it knows
 * better than the plan (its real GPUs). */
typedef struct task_apply {
    uint32_t local;
    int rank;
    int gpus[NG_MAX_GPUS];       /* the task's real GPUs (have_real) */
    unsigned ngpus;
    int have_real;
    const ng_plan *plan;         /* the step's plan, or own */
    ng_plan *own;                /* a re-plan (real GPUs, --cpu-bind), freed after */
    unsigned id;                 /* the task's entry in plan */
    unsigned flags;              /* NG_APPLY_* */
    int mismatch;                /* real GPUs differ from the plan's */
} task_apply;

/* The task's real GPUs. Unidentified: it keeps the step-level prediction
 * (its share of SLURM_STEP_GPUS, as Slurm's default binding hands them
 * out); strict wants the real ones, so the task fails (-1). */
static int identify_gpus(spank_t sp, task_apply *t)
{
    char err[512];
    t->have_real = task_gpus(sp, t->gpus, &t->ngpus, err, sizeof err) == 0;
    if (!t->have_real && !g_step.quiet)
        task_say("numaguard: rank %d: cannot identify this task's GPUs (%s); %s\n", t->rank, err,
                 g_step.strict ? "strict: failing the task" : "placed by the step's GPU prediction");
    if (!t->have_real)
        t->ngpus = 0;
    return !t->have_real && g_step.strict ? -1 : 0;
}

/* The plan entry to apply: under a user --cpu-bind a one-task plan over
 * Slurm's mask; else the step's plan, re-planned when the tasks' real GPUs
 * differ from the prediction. 1: stop here (already reported). */
static int choose_plan(task_apply *t)
{
    char err[512];
    t->flags = g_step.plan_only ? NG_APPLY_SKIP_SYSCALLS : 0;
    t->plan = g_step.plan;
    t->id = t->local;
    if (!g_step.plan_only && g_step.user_cpu_bind) {
        if (keep_cpus_plan(t->gpus, t->ngpus, &t->own, err, sizeof err) < 0) {
            task_say("numaguard: %s\n", err);
            return 1;
        }
        t->plan = t->own;
        t->id = 0;
        t->flags |= NG_APPLY_KEEP_CPUS;
        return 0;
    }
    if (g_step.exchange &&
        plan_with_real_gpus(t->local, t->have_real ? t->gpus : NULL, t->ngpus, &t->own))
        t->plan = t->own;
    /* Seeing all of the step's GPUs (no per-task binding) is expected: the
     * task is placed near its share. Anything else that differs from the
     * prediction keeps the (disjoint) slice and says so. */
    const ng_task_plan *tp = ng_plan_task(t->plan, t->id);
    t->mismatch = t->have_real && !same_gpus(tp, t->gpus, t->ngpus);
    if (t->mismatch && !same_list(g_step.step_gpus, g_step.n_step_gpus, t->gpus, t->ngpus) &&
        !g_step.quiet)
        task_say("numaguard: rank %d: its GPUs differ from the step-level prediction; "
                 "keeping its disjoint CPU slice (not necessarily GPU-local)\n", t->rank);
    return 0;
}

/* The verbose line: the library's data, with the task's real local id and
 * real GPUs where the adapter knows them better than the plan entry. */
static void say_applied(const task_apply *t, const ng_apply_result *res)
{
    ng_task_summary sum;
    char line[1024], shown[4 * sizeof line];
    if (ng_task_summary_of(g_step.topo, t->plan, t->id, t->rank, res, &sum) < 0)
        return;
    sum.local_id = t->local;
    if (t->mismatch || ((t->flags & NG_APPLY_KEEP_CPUS) && t->have_real)) {
        sum.n_gpus = t->ngpus;
        memcpy(sum.gpus, t->gpus, t->ngpus * sizeof *t->gpus);
    }
    if (ng_task_summary_format(g_step.topo, &sum, line, sizeof line) < 0)
        return;
    /* It names presets kept as the task's environment has them. */
    ng_text_escape(line, shown, sizeof shown);
    task_say("%s\n", shown);
}

static void say_failed(const task_apply *t, const ng_apply_result *res, const char *err)
{
    char tail[512] = "";
    if (res->cpus_applied || res->mem_applied || !g_step.strict)
        apply_failure_tail(res, t->plan, t->id, tail, sizeof tail);
    task_say("numaguard: rank %d: %s; %s%s%s\n", t->rank, err, tail,
             tail[0] && g_step.strict ? "; " : "", g_step.strict ? "strict: failing the task" : "");
}

static int apply_in_task(spank_t sp, uint32_t local, int rank)
{
    task_apply t = {.local = local, .rank = rank};
    if (!ng_plan_task(g_step.plan, local)) {
        step_failure("no plan for local task %u", local);
        return report_step_failure(0);
    }
    if (identify_gpus(sp, &t) < 0)
        return -1;
    if (choose_plan(&t))
        return g_step.strict ? -1 : 0;
    char err[512];
    task_ctx tc = {sp};
    ng_env_ops ops = {.is_set = env_is_set, .set = env_set, .ctx = &tc, .get = env_get};
    ng_spank_container ct;
    ng_spank_container_view(sp, &g_conf, &g_step, &ct);
    ng_apply_args args = {g_step.topo, t.plan, t.id, &g_step.policy, t.flags, &ops,
                          ng_spank_omp_preload(&g_conf), ng_spank_governor_id(),
                          ct.skip[0] ? ct.skip : NULL};
    ng_apply_result res;
    int rc = ng_spank_apply_task(&g_conf, &args, &res, err, sizeof err);
    if (rc == 0 && (t.mismatch || (t.flags & NG_APPLY_KEEP_CPUS)) && t.have_real)
        export_real_gpus(sp, t.gpus, t.ngpus);
    if (rc < 0 && !g_step.quiet)
        say_failed(&t, &res, err);
    else if (res.warning[0] && !g_step.quiet && !g_step.verbose)
        task_say("numaguard: rank %d: warning: %s\n", rank, res.warning);
    if (rc == 0 && g_step.verbose)
        say_applied(&t, &res);
    ng_spank_container_after(sp, &ct, local, g_step.quiet);
    ng_plan_free(t.own);
    return rc < 0 && g_step.strict ? -1 : 0;
}

/* strict: the task must not run. Returning -1 fails it only when the
 * plugin is `required` in plugstack.conf (Slurm ignores an `optional`
 * plugin's error), so the task process ends itself: task_init runs in the
 * forked task, before exec, and slurmstepd sees exit status 1. */
static int fail_task(void)
{
    _exit(1);
}

static int task_init_body(spank_t sp)
{
    if (!spank_remote(sp) || !g_step.active)
        return 0;
    uint32_t local = 0, rank = 0;
    int tid = 0;
    if (spank_get_item(sp, S_TASK_ID, &tid) == ESPANK_SUCCESS && tid >= 0)
        local = (uint32_t)tid;
    spank_get_item(sp, S_TASK_GLOBAL_ID, &rank);
    if (g_step.failed)
        return report_step_failure(local);
    report_plan_warnings(local);
    return apply_in_task(sp, local, (int)rank);
}

int slurm_spank_task_init(spank_t sp, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return task_init_body(sp) < 0 ? fail_task() : 0;
}
