/**
 * @file numaguard/doctor.h
 * @brief A node checks itself: the inputs every placement rests on
 *        (hwloc's and the drivers' locality, Slurm's gres order and
 *        configuration, the plugin's installation and arguments, the
 *        kernel's memory-policy features, the topology cache), each judged
 *        OK, WARN or FAIL with its evidence. Implemented in lib/doctor/
 *        (docs/admin-guide.md, "Before the first job on a new node type").
 *
 * Read-only: nothing is written, no GPU is opened or changed (`slurmd -G`,
 * Slurm's own query, may refresh slurmd's hwloc_topo_whole.xml in its
 * SlurmdSpoolDir, as every slurmd start does). Files are
 * read bounded (regular files only, opened non-blocking), each once per
 * run; the vendor tools (nvidia-smi, NVML, rocm-smi) and `slurmd -G`/`-V`
 * are run once each, with a time limit per tool and one for the whole run
 * (killed after it with every process they started, found through a
 * child-subreaper keeper and /proc) and a bound on their output. The
 * kernel's memory-policy modes are probed in a short-lived child process,
 * so the caller's own policy is never touched.
 */
#ifndef NUMAGUARD_DOCTOR_H
#define NUMAGUARD_DOCTOR_H

#include "numaguard/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A check's verdict. FAIL: placement on this node would be wrong or the
 *  plugin would not work (a health check drains the node); WARN: placement
 *  is degraded or relies on a fallback; OK: nothing to fix. */
typedef enum ng_check_status {
    NG_CHECK_OK = 0,
    NG_CHECK_WARN,
    NG_CHECK_FAIL
} ng_check_status;

/** "OK", "WARN", "FAIL" ("?" for anything else; static storage). */
const char *ng_check_status_name(ng_check_status status);

/** One piece of evidence: what was read and from where. */
typedef struct ng_doctor_fact {
    const char *key;    /**< e.g. "0000:4e:00.0", "TaskPlugin", "plugin_version" */
    const char *value;  /**< what was found (escaped: printable ASCII only) */
} ng_doctor_fact;

/** One check's result (owned by its report). Text fields are one line
 *  each, printable ASCII (anything else from a file arrives \\xNN-escaped). */
typedef struct ng_doctor_check {
    const char *id;            /**< stable name, "pci.numa_node" (static storage) */
    const char *group;         /**< "pci", "gpu", "slurm", "plugin", "kernel", "cache" */
    ng_check_status status;
    const char *finding;       /**< what was found */
    const char *consequence;   /**< WARN/FAIL: what it means for placement; "" when OK */
    const char *fix;           /**< WARN/FAIL: how to fix it; "" when OK */
    const ng_doctor_fact *facts;  /**< the evidence, n_facts entries */
    unsigned n_facts;
} ng_doctor_check;

/** Inputs of ng_doctor_run(). Zero-initialise, then set what differs from
 *  the node's own defaults. Every path is an admin's (absolute or relative
 *  to the working directory). */
typedef struct ng_doctor_options {
    /** Root of /sys, /proc and /dev (tests); NULL: the plugin's fsroot=
     *  argument in plugstack.conf, else "/". */
    const char *fsroot;
    /** slurm.conf; NULL: $SLURM_CONF, else /etc/slurm/slurm.conf. */
    const char *slurm_conf;
    /** gres.conf; NULL: the plugin's gres_conf= argument, else gres.conf
     *  beside slurm.conf (the plugin's own default). */
    const char *gres_conf;
    /** plugstack.conf; NULL: slurm.conf's PlugStackConfig=, else
     *  plugstack.conf beside slurm.conf. */
    const char *plugstack;
    /** cgroup.conf; NULL: beside slurm.conf. */
    const char *cgroup_conf;
    /** Topology cache directory; NULL: the plugin's topology_cache=
     *  argument ("off" honoured), else NG_TOPOLOGY_CACHE_DIR. */
    const char *cache_dir;
    /** hwloc XML to judge instead of what the plugin would load (tests);
     *  NULL: the plugin's topology= argument, else the cache when valid,
     *  else live discovery, as the plugin does. */
    const char *topology;
    /** This node's Slurm name; NULL: $SLURMD_NODENAME (slurmd sets it for
     *  its HealthCheckProgram), else the short host name. */
    const char *node_name;
    /** Limit for each external command in ms; 0: 10000. A command that
     *  does not finish in time is killed with every process it started
     *  (a setsid() child included) and the check says so (a second call
     *  of the same tool is then skipped). */
    unsigned command_timeout_ms;
    /** Limit for the whole run in ms; 0: 30000 (below the 40 s of
     *  numaguard-healthcheck). Each tool gets at most what is left of it;
     *  with under a second left, a tool is not started and its check says
     *  so. */
    unsigned deadline_ms;
    /** 1: judged for a health check (--health): a tool that does not
     *  answer within its limit (a hung driver, NVML or slurmd) is a FAIL
     *  naming the tool, so the node is drained; 0: a WARN. */
    int health;
    /** The governor library (--omp-guard=adaptive) to check; NULL: the
     *  installed one the plugin adds (ng_omp_preload_path()). */
    const char *omp_preload;
    /** A program that, run as `PROGRAM doctor --omp-probe` with the
     *  governor and libgomp in LD_PRELOAD, runs one OpenMP region and
     *  prints "ran an OpenMP region of N threads" (the CLI passes itself);
     *  NULL: the governor is only loaded (dlopen), no region is run. */
    const char *omp_probe;
} ng_doctor_options;

/** Opaque: the checks of one run, in a fixed order. */
typedef struct ng_doctor_report ng_doctor_report;

/**
 * Run every check (never fails because a check finds a problem: that is
 * a FAIL in the report). On success *out is a report the caller frees
 * with ng_doctor_free(); -1 (err says why) only when the report cannot be
 * built at all (out of memory, a path longer than PATH_MAX). Takes a few
 * milliseconds plus the external commands (bounded: each by
 * options->command_timeout_ms, all together by options->deadline_ms).
 * Thread-safe on distinct reports;
 * it forks, so call it where forking is safe.
 */
int ng_doctor_run(ng_doctor_report **out, const ng_doctor_options *options, char *err,
                  size_t errlen);

/** The checks of @p report: count, then check @p i (NULL past the end). */
unsigned ng_doctor_count(const ng_doctor_report *report);
const ng_doctor_check *ng_doctor_check_at(const ng_doctor_report *report, unsigned i);

/** The worst status in @p report (NG_CHECK_OK when empty). */
ng_check_status ng_doctor_worst(const ng_doctor_report *report);

/** The node name, fsroot and files the run used, as "key"/"value" facts
 *  (slurm.conf, gres.conf, plugstack.conf, cgroup.conf, cache, node,
 *  fsroot, topology): @p n receives their number. Owned by @p report. */
const ng_doctor_fact *ng_doctor_inputs(const ng_doctor_report *report, unsigned *n);

/** Free a report and everything its accessors returned. NULL is a no-op. */
void ng_doctor_free(ng_doctor_report *report);

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_DOCTOR_H */
