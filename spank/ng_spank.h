/* Internal declarations shared by the SPANK plugin's files (spank/).
 * The plugin is a thin adapter: Slurm items and env in, ng_plan out,
 * ng_apply_task in each task. See docs/plugin.md for the design. */
#ifndef NG_SPANK_H
#define NG_SPANK_H

#include <limits.h>
#include <slurm/spank.h>

#include "numaguard.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#ifdef NG_FAULT_INJECTION
/** Failure points the admin's test_fault=POINT argument injects: only in
 *  the test build of the plugin (numaguard-faults.so, spank/faults.c,
 *  docs/hardening.md); the shipped numaguard.so has no such argument. */
typedef enum ng_fault {
    NG_FAULT_NONE = 0,
    NG_FAULT_MEMPOLICY_EINVAL,   /**< set_mempolicy fails with EINVAL */
    NG_FAULT_MEMPOLICY_EPERM,    /**< set_mempolicy fails with EPERM */
    NG_FAULT_AFFINITY_EINVAL,    /**< sched_setaffinity fails with EINVAL */
    NG_FAULT_TOPOLOGY_LOAD,      /**< the topology load fails as if hwloc failed */
    NG_FAULT_NO_NUMA,            /**< hwloc reports no NUMA node */
    NG_FAULT_GPU_LOOKUP,         /**< identifying the task's GPUs fails */
    NG_FAULT_EXCHANGE_ABSENT,    /**< the step's last local task never joins the GPU exchange */
    NG_FAULT_ENV_EXPORT          /**< setting NUMAGUARD_* in the task env fails (after the
                                      affinity and memory policy are set) */
} ng_fault;

/** POINT name -> fault; -1 if unknown. */
int ng_fault_parse(const char *name, ng_fault *out);
/** "mempolicy_einval", ...; "none" for NG_FAULT_NONE. */
const char *ng_fault_name(ng_fault fault);
/** ng_apply_task_with with the syscalls failing as @p fault says. */
int ng_fault_apply_task(ng_fault fault, const ng_apply_args *args, ng_apply_result *res,
                        char *err, size_t errlen);
/** ng_topology_load, failing as @p fault says (topology_load, no_numa). */
int ng_fault_topology_load(ng_fault fault, ng_topology **out, const ng_topology_options *opts,
                           char *err, size_t errlen);
/** -1 with the injected error line under gpu_lookup, else 0. */
int ng_fault_gpu_lookup(ng_fault fault, char *err, size_t errlen);
/** 1 if local task @p local must stay away from the GPU exchange
 *  (exchange_absent: the last of @p ntasks, which says so on stderr). */
int ng_fault_skip_exchange(ng_fault fault, unsigned local, unsigned ntasks);
#endif

/** plugstack.conf arguments, parsed once per process in slurm_spank_init:
 *  the library's parse (ng_plugin_conf, the one rule of which arguments
 *  exist) and what the plugin derives from it. */
typedef struct ng_spank_conf {
    int disabled;                    /**< malformed args: the plugin does nothing */
    char disabled_why[256];
    ng_plugin_conf pc;               /**< the arguments (ng_plugin_conf_parse) */
    int have_thread_vars;            /**< omp_vars= given */
    const char *thread_vars[NG_MAX_ENV + 1]; /**< pointers into pc.thread_vars, NULL-ended */
#ifdef NG_FAULT_INJECTION
    ng_fault test_fault;             /**< test_fault=POINT (test build only) */
    char test_omp_preload[PATH_MAX]; /**< test_omp_preload=PATH (test build only) */
#endif
} ng_spank_conf;

/** The plugin's one "failed, and why": *flag = 1, the message printed
 *  into why (bounded by len); returns -1 (config.c). */
int ng_spank_fail(int *flag, char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** Parse plugstack.conf argv into @p conf. On a bad argument, conf->disabled
 *  is set and disabled_why names it; returns -1. Never exits or logs. */
int ng_spank_conf_parse(ng_spank_conf *conf, int argc, char **argv);

/** 1 if the admin allows policy kind @p kind. */
int ng_spank_conf_allows(const ng_spank_conf *conf, ng_policy_kind kind);

/** The allowed kinds as "local,prefer" for messages. */
void ng_spank_conf_allowed_text(const ng_spank_conf *conf, char *buf, size_t len);

/** Opaque: shared memory through which a step's tasks publish their real
 *  GPUs (spank/exchange.c). */
typedef struct ng_exchange ng_exchange;

/** Map the exchange for @p ntasks tasks (in slurmstepd, before fork). */
ng_exchange *ng_exchange_create(unsigned ntasks);
void ng_exchange_destroy(ng_exchange *x);
/** Publish task @p local's GPUs (@p gpus NULL = unknown) and wait up to
 *  @p timeout_ms for every task; 1 if all arrived. */
int ng_exchange_all(ng_exchange *x, unsigned local, const int *gpus, unsigned n,
                    unsigned timeout_ms);
/** Copy task @p task's published GPUs into @p gpus (room for NG_MAX_GPUS);
 *  0 if it published none, or a list that is not valid GPU indices below
 *  @p ngpus_max (the page is writable by the user's tasks). */
int ng_exchange_gpus(const ng_exchange *x, unsigned task, unsigned ngpus_max,
                     int *gpus, unsigned *n);

/** Everything the step needs on this node, computed once in user_init. */
typedef struct ng_step {
    int active;                      /**< 1: tasks apply the plan */
    int failed;                      /**< 1: planning failed (strict fails tasks) */
    char failure[512];               /**< why, for the once-per-step message */
    int admin_failure;               /**< the failure is the node's or the admin's
                                          (topology): slurmd log, users only if asked */
    int asked;                       /**< the user gave --numa-policy (not none) or
                                          --omp-guard (not off): not only defaults */
    char cache_note[640];            /**< why the topology cache was not used ("" = used
                                          or off), for the slurmd log */
    int strict, verbose, quiet;
    int plan_only;                   /**< topology is not this machine */
    int user_cpu_bind;               /**< srun --cpu-bind other than none: keep Slurm's CPUs */
    ng_policy policy;
    ng_omp_guard omp;
    ng_net_affinity net;             /**< --net-affinity (off unless asked) */
    ng_topology *topo;
    ng_gres_order order;
    int have_order;
    ng_plan *plan;
    unsigned ntasks;
    int *pred_gpus;                  /**< predicted GPUs, per plan request layout */
    unsigned *pred_count, *pred_offset;
    int gpu_prediction;              /**< 0 no GPUs, 1 step GPUs shared out in gres order */
    int step_gpus[NG_MAX_GPUS];      /**< the step's GPUs here (topology indices, gres order) */
    unsigned n_step_gpus;
    char cpu_source[96];             /**< where the step's CPUs came from */
    char gres_warning[640];          /**< gres.conf unusable here ("" = fine) */
    char cpu_warning[512];           /**< Slurm's core list does not fit the topology
                                          (node config and hardware differ; "" = fine) */
    hwloc_bitmap_t cpus;             /**< the step's CPUs here (kept for re-planning) */
    unsigned cpus_per_task;
    const char *const *thread_vars;
    const ng_nic_filter *nic_filter; /**< the admin's (kept for re-planning) */
    ng_exchange *exchange;           /**< tasks publish their real GPUs; NULL if no GPUs */
} ng_step;

/** Inputs read from Slurm in user_init. */
typedef struct ng_step_input {
    unsigned ntasks;
    unsigned cpus_per_task;
    const char *step_cores;          /**< S_STEP_ALLOC_CORES (abstract), may be NULL */
    const char *step_gpus;           /**< SLURM_STEP_GPUS of the step env */
    const char *node_name;           /**< this node's Slurm name (slurmstepd's own env) */
} ng_step_input;

/** Build the step's plan (topology, gres order, CPUs, predicted GPUs).
 *  On failure step->failed is set and step->failure says why; returns -1. */
int ng_step_plan(ng_step *step, const ng_spank_conf *conf, const ng_step_input *in);

/** Plan again with the GPUs each task really has (same CPUs, policy and
 *  options as the step's plan). Deterministic: every task gets the same. */
int ng_step_replan(const ng_step *step, const unsigned *count, const unsigned *offset,
                   const int *gpus, ng_plan **out, char *err, size_t errlen);

/** Free everything the step holds. */
void ng_step_free(ng_step *step);

/** Convert a Slurm abstract core list ("0-3,8") into PUs of @p topo: abstract
 *  core i is the i-th core in hwloc logical order (how slurmd numbers them
 *  when its node config matches the hardware). -1 if an index is out of
 *  range (node config does not match the topology). */
int ng_step_cores_to_cpus(const ng_topology *topo, const char *cores, hwloc_bitmap_t out,
                          char *err, size_t errlen);

/* The library calls the plugin makes where the test build injects faults
 * (spank/faults.c). In the shipped build these are the plain calls: no
 * branch on a test argument is compiled in. */
static inline int ng_spank_apply_task(const ng_spank_conf *conf, const ng_apply_args *args,
                                      ng_apply_result *res, char *err, size_t errlen)
{
#ifdef NG_FAULT_INJECTION
    return ng_fault_apply_task(conf->test_fault, args, res, err, errlen);
#else
    (void)conf;
    return ng_apply_task_with(args, res, err, errlen);
#endif
}

/* The governor library of --omp-guard=adaptive: the installed one (NULL);
 * the test build takes the admin's test_omp_preload=PATH, for suites that
 * run from a build tree (the library still checks that root owns it). */
static inline const char *ng_spank_omp_preload(const ng_spank_conf *conf)
{
#ifdef NG_FAULT_INJECTION
    return conf->test_omp_preload[0] ? conf->test_omp_preload : NULL;
#else
    (void)conf;
    return NULL;
#endif
}

static inline int ng_spank_topology_load(const ng_spank_conf *conf, ng_topology **out,
                                         const ng_topology_options *opts, char *err,
                                         size_t errlen)
{
#ifdef NG_FAULT_INJECTION
    return ng_fault_topology_load(conf->test_fault, out, opts, err, errlen);
#else
    (void)conf;
    return ng_topology_load(out, opts, err, errlen);
#endif
}

/* ---- container.c: a task that starts a container ---- */

/** What the task's command says about its container (lib's rules). */
typedef struct ng_spank_container {
    ng_container_view view;
    const char *governor;   /**< the governor's path under adaptive, else NULL */
    char skip[256];         /**< why the governor is not added ("" = added) */
} ng_spank_container;

/** In user_init (host namespaces): record the governor's identity. */
void ng_spank_governor_identify(const ng_spank_conf *conf);
/** The identity recorded (valid 0 when none). */
const ng_file_id *ng_spank_governor_id(void);
/** In task_init, before the apply: read the task's argv. */
void ng_spank_container_view(spank_t sp, const ng_spank_conf *conf, const ng_step *step,
                             ng_spank_container *c);
/** After the apply: the runtime's env channel, and local task 0's hint. */
void ng_spank_container_after(spank_t sp, const ng_spank_container *c, uint32_t local,
                              int quiet);

/* ---- env.c: the step's environment ---- */

/** Copy of job variable @p name (the step env, not slurmd's) into @p buf;
 *  NULL when unset or longer than @p len. */
const char *ng_spank_job_env(spank_t sp, const char *name, char *buf, int len);

/* ---- task.c: the plugin in each task ---- */

/** slurm_spank_task_init's work: in a remote task of an active step,
 *  apply the task's plan entry (the real GPUs checked first) or report
 *  the step's failure. -1 when strict says the task must not run. */
int ng_spank_task_init(spank_t sp, const ng_spank_conf *conf, ng_step *step);

#endif
