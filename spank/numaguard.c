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
    if (ng_spank_job_env(sp, "SLURM_CPUS_PER_TASK", cpt_env, sizeof cpt_env))
        spank_get_item(sp, S_STEP_CPUS_PER_TASK, &cpt);
    if (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) != ESPANK_SUCCESS)
        cores = NULL;
    ng_step_input in = {0};
    in.ntasks = ntasks;
    in.cpus_per_task = cpt;
    in.step_cores = cores;
    in.step_gpus = ng_spank_job_env(sp, "SLURM_STEP_GPUS", gpus, sizeof gpus);
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

/* strict: the task must not run. Returning -1 fails it only when the
 * plugin is `required` in plugstack.conf (Slurm ignores an `optional`
 * plugin's error), so the task process ends itself: task_init runs in the
 * forked task, before exec, and slurmstepd sees exit status 1. */
static int fail_task(void)
{
    _exit(1);
}

int slurm_spank_task_init(spank_t sp, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return ng_spank_task_init(sp, &g_conf, &g_step) < 0 ? fail_task() : 0;
}
