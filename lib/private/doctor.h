/* The doctor module (lib/doctor/): a node checks the inputs its placements
 * rest on. Private to the library (ngi_* names).
 *
 * Layers inside lib/doctor/ (each file calls only the ones above it):
 *   report.c     the report's storage: checks, findings, evidence
 *   tools.c      the external tools, each run once under the run's deadline
 *   files.c      Slurm's key=value files (Include bounded, '\\' joined),
 *                plugstack.conf lines (include bounded)
 *   elf.c        the Slurm release a plugin was built for (its ELF file)
 *   vendor.c     what nvidia-smi, rocm-smi and `slurmd -G` print, parsed
 *   ch_pci.c     GPU and NIC locality: hwloc against sysfs
 *   ch_gpu.c     the drivers' and vendor tools' views of the GPUs
 *   ch_slurm.c   slurm.conf's node line, TaskPlugin, cgroup.conf
 *   ch_gres.c    gres.conf by the plugin's rules, NVML for AutoDetect, slurmd -G
 *   ch_cores.c   gres.conf Cores= against each GPU's locality (Slurm's indices)
 *   ch_plugin.c  plugstack.conf, the plugin file, its arguments, its release
 *   ch_kernel.c  memory-policy modes, cgroups, SMT, CPUs, memory-only nodes
 *   ch_cache.c   the topology cache
 *   ch_governor.c  the OpenMP governor's install (adaptive)
 *   doctor.c     ng_doctor_run: the inputs, then every check in order
 */
#ifndef NGI_DOCTOR_H
#define NGI_DOCTOR_H

#include <fcntl.h>
#include <limits.h>

#include "base.h"
#include "gpu.h"
#include "sysops.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* ---- report.c ---- */

#define NGI_DOCTOR_MAX_CHECKS 48   /* checks of one report */
#define NGI_DOCTOR_MAX_FACTS 128   /* evidence entries of one check */
#define NGI_DOCTOR_MAX_INPUTS 16

struct ng_doctor_report {
    ng_doctor_check checks[NGI_DOCTOR_MAX_CHECKS];
    unsigned n;
    unsigned problems[NGI_DOCTOR_MAX_CHECKS];  /* problems seen per check */
    ng_doctor_fact inputs[NGI_DOCTOR_MAX_INPUTS];
    unsigned n_inputs;
};

/** Start check @p id of @p group (static strings): status OK, no text.
 *  NULL when the report is full (the callers then skip the check). */
ng_doctor_check *ngi_doctor_begin(ng_doctor_report *r, const char *group, const char *id);
/** A problem of check @p c: kept when it is the first of the worst status
 *  so far (its finding, @p consequence and @p fix become the check's),
 *  counted otherwise. Text is made printable (\\xNN) and bounded. */
void ngi_doctor_problem(ng_doctor_report *r, ng_doctor_check *c, ng_check_status st,
                        const char *consequence, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/** Finish check @p c: with no problem its finding is @p fmt (OK); with
 *  several, " (and N more)" is added to the finding. */
void ngi_doctor_end(ng_doctor_report *r, ng_doctor_check *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Add one piece of evidence to @p c (at most NGI_DOCTOR_MAX_FACTS). */
void ngi_doctor_fact(ng_doctor_check *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Record one input of the run (a path, the node name). */
void ngi_doctor_input(ng_doctor_report *r, const char *key, const char *value);
void ngi_doctor_report_free(ng_doctor_report *r);

/* ---- files.c ---- */

/** Read an admin file (the library's regular-file reader: O_NONBLOCK, a
 *  final symlink followed, regular files only) of at most @p max bytes. */
#define NGI_DOCTOR_READ(path, max, out, len, why, whylen)                                 \
    ngi_read_regular_at(AT_FDCWD, (path), NGI_FILE_FOLLOW, (max), (out), (len), NULL, (why), \
                        (whylen))
/** The Include limits: nesting depth, files and bytes read in all. */
#define NGI_CONF_INCLUDE_DEPTH 8
#define NGI_CONF_INCLUDE_FILES 64
/** Replace each "Include PATTERN" line of slurm.conf text *text (read
 *  from @p path) by the files it names (glob, in order; relative to
 *  slurm.conf's directory), as slurmd reads them, and join '\\'
 *  continuation lines. Bounded: nested at most NGI_CONF_INCLUDE_DEPTH deep,
 *  at most NGI_CONF_INCLUDE_FILES files and @p max bytes in all; the first
 *  limit reached stops the reading (no glob after it) and is named in
 *  @p limit ("" when none was). Unreadable includes are left out. Linear in
 *  what is read. 0, or -1 when out of memory (*text unchanged). */
int ngi_conf_includes(char **text, const char *path, size_t max, char *limit,
                      size_t limitlen);
/** Value of the last top-level "Key=Value" line of a Slurm config text
 *  (key case-insensitive, '#' comments, quotes stripped); 0 or -1. */
int ngi_conf_value(const char *text, const char *key, char *out, size_t len);
/** Value of Key= on the NodeName= line naming @p node (Slurm hostlists,
 *  the same matching as gres.conf), else on the last NodeName=DEFAULT
 *  line before it; 1 found, 0 not, -1 when no NodeName line names the node. */
int ngi_conf_node_value(const char *text, const char *node, const char *key, char *out,
                        size_t len);

/** The numaguard line of a plugstack.conf (include globs followed). */
typedef struct ngi_plugstack {
    int found;                 /**< lines naming numaguard*.so */
    char kind[16];             /**< "required" / "optional" */
    char path[PATH_MAX];       /**< as written */
    char file[PATH_MAX];       /**< where it resolves ("" = not found) */
    int argc;
    char *argv[64];            /**< its arguments (malloc'd) */
    char where[PATH_MAX + 16]; /**< "file:line" of the first one */
    unsigned files;            /**< plugstack files read */
    char limit[PATH_MAX + 96]; /**< "" or which include limit stopped the reading */
} ngi_plugstack;
/** Read plugstack.conf @p path; relative plugin paths are searched in
 *  @p plugin_dirs (colon list, may be NULL). 0, or -1 with @p why. */
int ngi_plugstack_read(const char *path, const char *plugin_dirs, ngi_plugstack *ps,
                       char *why, size_t whylen);
void ngi_plugstack_free(ngi_plugstack *ps);

/** The 32-bit value of the initialised dynamic symbol @p name of the ELF
 *  shared object @p path (SPANK_PLUGIN's plugin_version), read from the
 *  file without loading it. 0, or -1 with @p why. */
int ngi_elf_u32_symbol(const char *path, const char *name, uint32_t *value, char *why,
                       size_t whylen);
/** The same from a file already in memory (unit tests, fuzzing). */
int ngi_elf_u32_symbol_mem(const unsigned char *buf, size_t len, const char *name,
                           uint32_t *value, char *why, size_t whylen);

/* ---- vendor.c: the vendor tools' text ---- */

/** One GPU row of `nvidia-smi topo -m`. */
typedef struct ngi_smi_topo_row {
    unsigned index;        /**< N of "GPUN" */
    char cpus[256];        /**< "CPU Affinity" ("" or "N/A" when none) */
    char numa[32];         /**< "NUMA Affinity" ("" when the column is absent) */
} ngi_smi_topo_row;
/** Parse `nvidia-smi topo -m` (tabs, the header's SGR escapes, NIC rows
 *  and the legends skipped). The number of GPU rows, or -1 when no
 *  "CPU Affinity" column is found. */
int ngi_smi_topo_parse(const char *text, ngi_smi_topo_row *rows, unsigned max);

/** One GPU of `nvidia-smi -q`, in its index order. */
typedef struct ngi_smi_gpu {
    char bus[NG_BUSID_LEN];    /**< from its "GPU 00000000:4E:00.0" header */
    int minor;                 /**< "Minor Number", -1 when N/A */
} ngi_smi_gpu;
int ngi_smi_query_parse(const char *text, ngi_smi_gpu *gpus, unsigned max);

/** One GPU of `rocm-smi --showbus --showtoponuma`. */
typedef struct ngi_rocm_gpu {
    unsigned index;
    char bus[NG_BUSID_LEN];
    int numa;                  /**< "(Topology) Numa Node", -2 when not shown */
} ngi_rocm_gpu;
int ngi_rocm_parse(const char *text, ngi_rocm_gpu *gpus, unsigned max);

/** `slurmd -G`: the gpu device files in slurmd's index order (File= of
 *  each "Gres Name=gpu ... Index=I ... File=F" line, expanded), into
 *  @p order. 0, or -1 with @p why. */
int ngi_slurmd_gres_parse(const char *text, ng_gres_order *order, char *why, size_t whylen);

/** "slurm 22.05.8" / "slurm-wlm 22.05.8" -> SLURM_VERSION_NUM; 0 if none. */
uint32_t ngi_slurm_version_parse(const char *text);

/* ---- the checks (ch_*.c) ---- */

/** The external tools, each run at most once per run (tools.c). */
typedef enum ngi_tool_id {
    NGI_TOOL_SMI_Q,
    NGI_TOOL_SMI_TOPO,
    NGI_TOOL_NVML,
    NGI_TOOL_ROCM,
    NGI_TOOL_SLURMD_G,
    NGI_TOOL_SLURMD_V,
    NGI_TOOL_SRUN_V,
    NGI_TOOL_GOVERNOR,
    NGI_TOOL_COUNT
} ngi_tool_id;

typedef struct ngi_tool_run {
    int ran;                       /**< asked for once (res or skip below) */
    int skipped;                   /**< not started: why in skip */
    char skip[160];
    ngi_cmd res;
} ngi_tool_run;

/** What every check reads: the run's inputs and what was loaded once. */
typedef struct ngi_doctor_ctx {
    const ngi_sys_ops *sys;
    ng_doctor_report *r;
    const char *fsroot;            /**< NULL = "/" */
    int live;                      /**< fsroot is "/" (NVML, the kernel probe apply) */
    unsigned timeout_ms;           /**< one tool's limit */
    unsigned deadline_ms;          /**< the whole run's limit */
    unsigned long long deadline;   /**< when it ends (monotonic ms) */
    int health;                    /**< a health check: a hung tool is a FAIL */
    const char *omp_preload;       /**< the governor library judged */
    const char *omp_probe;         /**< the program running one region under it, or NULL */
    const char *cause;             /**< the root-cause check that failed, or NULL */
    char cause_what[320];          /**< its finding, short */
    ngi_tool_run tools[NGI_TOOL_COUNT];
    char node[256];
    char slurm_conf[PATH_MAX];
    char *slurm_text;              /**< slurm.conf with its includes, NULL when unreadable */
    char slurm_why[256];
    char slurm_limit[PATH_MAX + 128]; /**< "" or which Include limit stopped the reading */
    char *cgroup_text;             /**< cgroup.conf, NULL when unreadable */
    char cgroup_why[256];
    char gres_conf[PATH_MAX];
    int gres_exists;               /**< a file is there (lstat) */
    struct ngi_gres_conf *gres;    /**< gres.conf parsed once for the node, or NULL */
    char gres_why[512];            /**< why it did not parse */
    int gres_other_nodes;          /**< the failure is "no record names this node" */
    ngi_gres_summary gsum;         /**< its records (valid when gres) */
    ng_gres_order gorder;          /**< the plugin's index order */
    int gorder_ok;
    char gorder_why[512];
    char plugstack[PATH_MAX];
    char cgroup_conf[PATH_MAX];
    char cache_dir[PATH_MAX];      /**< "" = topology_cache=off */
    char cache_why[512];           /**< why the load did not use the cache ("" = it did / not tried) */
    int cache_tried;               /**< the topology load tried the cache */
    char topology[PATH_MAX];       /**< XML judged instead of live ("" = none) */
    int plugin_topology;           /**< it is the plugin's topology= (no cache read) */
    ngi_plugstack ps;
    int ps_read;                   /**< plugstack.conf was read */
    char ps_why[256];
    ng_plugin_conf pconf;          /**< the plugin's arguments */
    int pconf_ok;                  /**< they parse (ps.found) */
    char pconf_why[512];
    ng_topology *topo;             /**< NULL when it did not load */
    char topo_why[512];
} ngi_doctor_ctx;

/* ---- tools.c ---- */

unsigned long long ngi_doctor_now_ms(void);
/** Tool @p id's result: run on the first call (bounded by the per-tool and
 *  the whole-run limit), the same result after; NULL when it was not run
 *  (the run's limit, or its program hung before: ngi_doctor_tool_describe
 *  says which). */
const ngi_cmd *ngi_doctor_tool(ngi_doctor_ctx *x, ngi_tool_id id);
/** How tool @p id ended, one phrase ("did not answer within 10 s ...",
 *  "not run: ..."). */
void ngi_doctor_tool_describe(const ngi_doctor_ctx *x, ngi_tool_id id, char *buf, size_t len);
/** The status of a problem with tool @p id: a hang (killed after its
 *  limit) is a FAIL in a health check and a WARN otherwise; anything else
 *  (an exit status, not run) is @p other. */
ng_check_status ngi_doctor_tool_status(const ngi_doctor_ctx *x, ngi_tool_id id,
                                       ng_check_status other);
/** Record check @p id as the root cause (@p fmt: what it found): the
 *  checks after it that fail only because of it say so and are WARN. The
 *  first one recorded stays. */
void ngi_doctor_cause(ngi_doctor_ctx *x, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** 1 when tool @p id ran and exited 0 in time. */
int ngi_doctor_tool_ok(const ngi_doctor_ctx *x, ngi_tool_id id);
void ngi_doctor_tools_free(ngi_doctor_ctx *x);

/** NVML on this host (ch_gpu.c; the probe runs once): 1 loaded and
 *  initialised, 0 not (the loader's or NVML's message in @p why), -1 the
 *  probe did not answer. */
int ngi_doctor_nvml(ngi_doctor_ctx *x, char *why, size_t len);
/** slurm.conf's gpu count for the node (ch_gres.c): the sum of its
 *  gpu[:type]:N entries of Gres=, the text in @p text. 0, or -1 when
 *  slurm.conf gives the node no Gres=. */
int ngi_doctor_slurm_gpus(const ngi_doctor_ctx *x, unsigned *n, char *text, size_t len);

/** "<fsroot><abs>" into @p buf; -1 if too long. */
int ngi_doctor_path(const ngi_doctor_ctx *x, const char *abs, char *buf, size_t len);

void ngi_check_pci_numa_node(ngi_doctor_ctx *x);
void ngi_check_pci_locality(ngi_doctor_ctx *x);
void ngi_check_nvidia_driver(ngi_doctor_ctx *x);
void ngi_check_nvidia_smi(ngi_doctor_ctx *x);
void ngi_check_nvml(ngi_doctor_ctx *x);
void ngi_check_rocm_smi(ngi_doctor_ctx *x);
void ngi_check_slurm_conf(ngi_doctor_ctx *x);
void ngi_check_task_plugin(ngi_doctor_ctx *x);
void ngi_check_cgroup_conf(ngi_doctor_ctx *x);
void ngi_check_gres(ngi_doctor_ctx *x);
void ngi_check_gres_cores(ngi_doctor_ctx *x);
void ngi_check_slurmd_gres(ngi_doctor_ctx *x);
void ngi_check_plugstack(ngi_doctor_ctx *x);
void ngi_check_plugin_file(ngi_doctor_ctx *x);
void ngi_check_plugin_args(ngi_doctor_ctx *x);
void ngi_check_plugin_release(ngi_doctor_ctx *x);
/** ch_pyxis.c: pyxis and numaguard in plugstack.conf, in which order. */
void ngi_check_pyxis(ngi_doctor_ctx *x);
void ngi_check_kernel_mempolicy(ngi_doctor_ctx *x);
void ngi_check_kernel_cgroup(ngi_doctor_ctx *x);
void ngi_check_kernel_cpus(ngi_doctor_ctx *x);
void ngi_check_memory_nodes(ngi_doctor_ctx *x);
void ngi_check_cache(ngi_doctor_ctx *x);
void ngi_check_governor(ngi_doctor_ctx *x);

/* ---- doctor.c ---- */

/** ng_doctor_run with the kernel probe's syscalls from @p sys (tests
 *  simulate kernels without MPOL_PREFERRED_MANY or weighted interleave). */
int ngi_doctor_run_sys(const ngi_sys_ops *sys, ng_doctor_report **out,
                       const ng_doctor_options *opts, char *err, size_t errlen);

#endif
