/**
 * @file numaguard/inspect.h
 * @brief Inspecting running processes (numaguard check): their CPUs,
 *        memory policy and pages per NUMA node, threads, GPUs and thread
 *        caps, and what is wrong with them alone and together.
 *        Implemented in lib/inspect/ (fields and rules: docs/check.md).
 *
 * /proc is read under fsroot as the calling user (bounded reads,
 * O_NOFOLLOW|O_NONBLOCK, regular files only). Strings copied from /proc
 * (comm, environ values, the kernel's policy text) are raw bytes: escape
 * them (ng_text_escape) before printing them to a terminal. Notes
 * (warnings, errors) are always printable. An ng_inspection is immutable
 * once made (readable from several threads); calls are thread-safe.
 */
#ifndef NUMAGUARD_INSPECT_H
#define NUMAGUARD_INSPECT_H

#include "numaguard/launcher.h"
#include "numaguard/omp_marks.h"

#ifdef __cplusplus
extern "C" {
#endif


/** Most processes one inspection takes. */
#define NG_INSPECT_MAX_PIDS 4096
/** Notes kept per list, and their length. */
#define NG_NOTES_MAX 8
#define NG_NOTE_LEN 240

/** A bounded list of one-line messages (printable ASCII only). */
typedef struct ng_notes {
    unsigned n;
    char text[NG_NOTES_MAX][NG_NOTE_LEN];
} ng_notes;

/** One thread of a process. */
typedef struct ng_thread_view {
    int tid;
    char comm[64];               /**< thread name (raw bytes) */
    char state;                  /**< 'R' running or waiting for a CPU, 'S', 'D', ...; '?' */
    int last_cpu;                /**< CPU it ran on last (stat field 39); -1 unknown */
    hwloc_const_cpuset_t cpus;   /**< its own affinity (Cpus_allowed_list) */
} ng_thread_view;

/** Resident bytes of a process on one NUMA node. */
typedef struct ng_node_bytes {
    unsigned node;
    unsigned long long bytes;
} ng_node_bytes;

/** What one process looks like (read-only, owned by its ng_inspection). */
typedef struct ng_proc_view {
    int pid;
    int gone;                         /**< 1: no such process (exited); nothing else is set */
    int ppid;                         /**< parent (PPid) */
    char comm[64];                    /**< /proc/PID/comm (raw bytes) */
    hwloc_const_cpuset_t cpus;        /**< Cpus_allowed_list (the main thread) */
    char mems_allowed[256];           /**< Mems_allowed_list as written (raw) */
    unsigned cores, pus;              /**< cores with a PU in cpus; PUs in cpus */
    hwloc_const_nodeset_t cpu_nodes;  /**< CPU-bearing nodes of cpus */
    hwloc_const_cpuset_t allowed_cpus;/**< its cpuset cgroup's CPUs, else the topology's allowed */
    int bound;                        /**< 1: cpus is narrower than allowed_cpus */
    unsigned threads, runnable;       /**< all threads; threads in state R */
    unsigned n_thread_views;          /**< per-thread views (first 4096 threads) */
    const ng_thread_view *thread_views;
    const char *mem_policy;           /**< "default","bind",...,"unknown" */
    char mem_policy_text[128];        /**< the kernel's text (raw) */
    hwloc_const_nodeset_t mem_policy_nodes;
    int have_memory;                  /**< numa_maps was read */
    unsigned n_memory;                /**< nodes with resident pages, by node */
    const ng_node_bytes *memory;
    unsigned long long mem_bytes, cpu_local_bytes, gpu_local_bytes;
    unsigned n_gpus;                  /**< the process's GPUs (topology indices) */
    const int *gpus;
    char gpu_source[48];              /**< variable they came from, "none", "environ unreadable" */
    char gpu_rule[256];               /**< how the list was split per rank (printable) */
    hwloc_const_nodeset_t gpu_nodes;  /**< the GPUs' CPU nodes and memory nodes */
    int local_rank, local_size;       /**< from the launcher's variables; -1 unknown */
    char rank_source[40];             /**< the variable the local rank came from, "" none */
    const char *thread_caps;          /**< thread-count variables set in environ,
                                           "OMP_NUM_THREADS=2 ..." (raw values) */
    int numaguard_started;            /**< NUMAGUARD_POLICY in environ */
    int omp_runtime;                  /**< an OpenMP runtime is mapped (libgomp, libomp,
                                           libiomp5; numa_maps): 0 when not readable */
    int omp_governed;                 /**< --omp-guard=adaptive's governor is mapped */
    unsigned omp_ungoverned;          /**< what the governor said it cannot govern in it:
                                           NG_OMP_UNGOVERNED_* bits (numaguard/omp_marks.h;
                                           numa_maps; the process's own claim); 0 none */
    char omp_promised[160];           /**< NUMAGUARD_OMP_GOVERNOR from its environment:
                                           the plugin put the governor in LD_PRELOAD
                                           (raw, cut to 159 bytes); "" none */
    char job_id[24];                  /**< Slurm job number its cgroup names (Slurm's
                                           layout, ng_inspect_list_job; for a SLUID
                                           cgroup the number Slurm's slurmstepd there
                                           serves); "" when none: never from its
                                           environment */
    char sluid[16];                   /**< the SLUID its cgroup is named by (Slurm
                                           26.05's default cgroup v2 layout), else "" */
    int global_rank;                  /**< RANK / OMPI_COMM_WORLD_RANK / PMI_RANK /
                                           SLURM_PROCID from its environment (a label:
                                           the process's own claim); -1 unknown */
    char nic_vars[256];               /**< network-selection variables set in its
                                           environment ("UCX_NET_DEVICES=mlx5_0:1 ...",
                                           raw values, each cut to 64 bytes); "" none */
    unsigned uid;                     /**< owner: the real uid (status Uid:) */
    char user[64];                    /**< the owner's name ("" when the uid has none;
                                           raw bytes from the passwd database) */
    ng_notes warnings, errors;
} ng_proc_view;

/** Threads that last ran on one CPU, across the inspected processes. */
typedef struct ng_cpu_view {
    unsigned cpu;
    unsigned runnable;    /**< threads in state R that last ran here */
    unsigned threads;     /**< all threads that last ran here */
    unsigned bound;       /**< bound processes (ng_proc_view.bound) whose mask has it */
} ng_cpu_view;

/** Bound processes whose masks overlap (a connected group of two or more).
 *  A process with the same mask as its listed parent (a forked worker
 *  inherits it) is not counted: only masks someone chose. */
typedef struct ng_overlap_view {
    unsigned n_pids;
    const int *pids;
    hwloc_const_cpuset_t cpus;   /**< union of their masks */
    unsigned cores;
} ng_overlap_view;

/** Opaque: processes read at one moment, with per-process and shared verdicts. */
typedef struct ng_inspection ng_inspection;

/** Processes of user @p uid under @p fsroot (/proc/PID owned by it), sorted;
 *  kernel threads (empty cmdline) and @p skip_pid left out. */
int ng_inspect_list_user(const char *fsroot, unsigned uid, int skip_pid,
                         int *pids, unsigned max, unsigned *n);

/** ng_inspect_list_job() found no process in the job's cgroup here
 *  (proctrack/linuxproc or pgid without task/cgroup, or no process of it
 *  runs here): the kernel cannot tell; ask Slurm (ng_inspect_list_job_record). */
#define NG_INSPECT_NO_JOB_CGROUPS 1
/** ng_inspect_list_job() found no process of the job, and some process here
 *  is in a SLUID-named job cgroup (Slurm 26.05's cgroup v2) whose job number
 *  no visible slurmstepd tells (/proc mounted hidepid): ask Slurm for the
 *  job's SLUID (ng_slurm_job_query) and list by it. */
#define NG_INSPECT_UNKNOWN_SLUIDS 2

/** Processes of Slurm job @p job_id (digits), from the kernel alone: those
 *  whose /proc/PID/cgroup puts them in the job in Slurm's own layout (the
 *  job_ID level of v1 /slurm[_NODE]/uid_U/job_ID/..., v2 [/system.slice]/
 *  [NODE_]slurmstepd.scope/job_ID/...; not a cgroup the job's user made
 *  below it, not a path with ".."). Never from a process's environment
 *  (anybody can export SLURM_JOB_ID). Slurm's own slurmstepd (root's, its
 *  executable slurmstepd: a process merely named so is listed), kernel
 *  threads and @p skip_pid left out. @p job_id may also be a SLUID
 *  ("sEKNKTV3WPV500"): the processes of the cgroup named so. A job number
 *  finds a SLUID-named cgroup (Slurm 26.05's default cgroup v2 layout,
 *  [/system.slice]/[NODE_]slurmstepd.scope/SLUID/...) through Slurm's own
 *  slurmstepd in it: root's, its executable slurmstepd, its title
 *  "slurmstepd: [JOB.STEP]". Returns 0 (*n > 0),
 *  NG_INSPECT_NO_JOB_CGROUPS or NG_INSPECT_UNKNOWN_SLUIDS (*n = 0) when no
 *  process here is in the job's cgroup, -1 (err) for a malformed id or an
 *  unreadable /proc. */
int ng_inspect_list_job(const char *fsroot, const char *job_id, int skip_pid,
                        int *pids, unsigned max, unsigned *n, char *err, size_t errlen);

/** Slurm's record of job @p job_id's processes on this node: the output
 *  of `scontrol listpids JOB [NODE]` (scontrol from PATH, run as the caller
 *  with LC_ALL=C and stdin /dev/null; NODE is SLURMD_NODENAME of the
 *  caller's environment when set, i.e. inside a step: a host with several
 *  slurmd needs it) into @p buf (at most @p len - 1 bytes,
 *  NUL added). The command is killed with its process group after
 *  @p timeout_ms or past @p len - 1 bytes, so a slurmd that does not answer
 *  cannot hang the caller. 0 when scontrol exited 0; -1 with @p err: a
 *  malformed id, "cannot run scontrol: ...", the time limit or output bound,
 *  or scontrol's first line (escaped). Not thread-safe (forks). */
int ng_inspect_slurm_record(const char *job_id, unsigned timeout_ms, char *buf, size_t len,
                            char *err, size_t errlen);

/** Processes of Slurm job @p job_id by Slurm's own record where no cgroup
 *  names jobs: @p record is the text `scontrol listpids JOB` printed ("PID
 *  JOBID STEPID LOCALID GLOBALID" lines; ng_inspect_slurm_record runs it). Lines of other
 *  jobs and malformed ones, processes gone since, kernel threads, Slurm's
 *  slurmstepd and @p skip_pid left out; sorted, unique. 0, or -1 (err). */
int ng_inspect_list_job_record(const char *fsroot, const char *job_id, const char *record,
                               int skip_pid, int *pids, unsigned max, unsigned *n,
                               char *err, size_t errlen);

/** Leave out of @p pids (@p n of job @p job_id's processes) those of step
 *  @p step ("0", "batch", ...): the step of each is its cgroup's step level
 *  (step_X right below the job's), or, with @p record (what
 *  ng_inspect_list_job_record read), its STEPID there. Used by the
 *  job-wide check for its own step. Returns how many are left (kept in
 *  order). */
unsigned ng_inspect_drop_step(const char *fsroot, const char *job_id, const char *step,
                              const char *record, int *pids, unsigned n);

/* ---- a whole job, from any host with the Slurm client (lib/inspect/job.c) ---- */

/** The owner-or-root rule of `check --job` on one node (--local): root
 *  (@p uid 0) keeps every pid; anybody else only the processes that are
 *  theirs (/proc/PID's owner under @p fsroot), so that another user learns
 *  nothing of a job but what is theirs. Returns how many are left (kept
 *  in order); 0 reads as "no job of yours here". */
unsigned ng_inspect_keep_owned(const char *fsroot, unsigned uid, int *pids, unsigned n);

/** Most nodes of a job ng_slurm_job_query takes; longest node name. */
#define NG_JOB_MAX_NODES 16384
#define NG_NODE_NAME_MAX 128

/** A running Slurm job as `scontrol -d show job` reports it. */
typedef struct ng_slurm_job {
    char job_id[24];              /**< the number asked for */
    char sluid[16];               /**< its SLUID (Slurm 26.05+), "" before */
    unsigned uid;                 /**< its owner (UserId=name(uid)) */
    char state[32];               /**< JobState (RUNNING) */
    char *nodelist;               /**< NodeList as Slurm writes it ("ng[1-2]") */
    unsigned n_nodes;             /**< its nodes, expanded, in Slurm's order */
    char (*nodes)[NG_NODE_NAME_MAX];
} ng_slurm_job;

/** Ask Slurm about job @p job_id (digits): `scontrol -d show job ID` from
 *  PATH, run as the caller, killed with its process group after
 *  @p timeout_ms. Each fact is read from its own line, once (a record with
 *  a key twice, e.g. a job name holding a newline and "UserId=", is
 *  refused). Only the job's owner or root gets an answer: a job of
 *  somebody else gives the same error as a job that does not exist ("no
 *  job ID of yours ..."). A job that is not RUNNING is an error too. 0
 *  (free with ng_slurm_job_clear), or with one printable line
 *  NG_JOB_NO_SLURM (scontrol could not be run, did not answer in time or
 *  said too much: Slurm was not asked) or -1 (any other failure). Not
 *  thread-safe (forks). */
#define NG_JOB_NO_SLURM (-2)
int ng_slurm_job_query(const char *job_id, unsigned timeout_ms, ng_slurm_job *job, char *err,
                       size_t errlen);
void ng_slurm_job_clear(ng_slurm_job *job);

/** How a node answered ng_slurm_job_each_node. */
typedef enum ng_node_status {
    NG_NODE_ANSWERED = 0,   /**< the step ended: exit_status, out, why (its last stderr line) */
    NG_NODE_NO_ANSWER,      /**< not within the time: killed with its process group */
    NG_NODE_FAILED          /**< srun missing, or more output than the bound */
} ng_node_status;

typedef struct ng_node_answer {
    char name[NG_NODE_NAME_MAX];
    ng_node_status status;
    int exit_status;        /**< srun's (the command's) exit status; -1 when killed */
    unsigned ms;            /**< how long it took */
    char *out;              /**< its stdout (NUL-terminated, raw bytes), may be NULL */
    size_t len;
    char why[256];          /**< one printable line: how it ended, or its last stderr line */
} ng_node_answer;

/** Run @p cmd (argv, NULL-terminated) once on every node of @p job as a
 *  step of the job: `srun --jobid=J --overlap --nodes=1 --ntasks=1
 *  --nodelist=NODE --chdir=/ --quiet --cpu-bind=none
 *  --job-name=numaguard-check CMD...` (srun from PATH, the caller's
 *  environment without SLURM_* but SLURM_CONF and SRUN_*), at most
 *  @p parallel at a time, each bounded by @p timeout_ms from its start
 *  (then SIGTERM, srun cancels its step; 1 s later SIGKILL, to the whole
 *  process group) and by @p max_out bytes of stdout. A node that does not
 *  answer in time is reported, never waited for longer. Slurm creates a
 *  step only for the job's own user: run by root, the steps run as the
 *  job's owner (its uid, primary group and groups). *out gets one
 *  answer per node, in the job's order (free with ng_node_answers_free).
 *  0, or -1 (err) on bad arguments or no memory. Not thread-safe (forks). */
int ng_slurm_job_each_node(const ng_slurm_job *job, char *const cmd[], unsigned parallel,
                           unsigned timeout_ms, size_t max_out, ng_node_answer **out, char *err,
                           size_t errlen);
void ng_node_answers_free(ng_node_answer *a, unsigned n);

/** Read and judge @p n processes (at most NG_INSPECT_MAX_PIDS). A process
 *  that does not exist gives a view with gone = 1; what cannot be read
 *  (another user's numa_maps) is an error note in its view. On success
 *  *out is a new inspection the caller frees with ng_inspection_free();
 *  -1 only on bad arguments or no memory. */
int ng_inspect(const ng_topology *topo, const char *fsroot, const int *pids, unsigned n,
               ng_inspection **out, char *err, size_t errlen);
/** Free an inspection and every view it returned. NULL is a no-op. */
void ng_inspection_free(ng_inspection *ins);
/** The processes, in the order of ng_inspect's @p pids. */
unsigned ng_inspection_proc_count(const ng_inspection *ins);
const ng_proc_view *ng_inspection_proc(const ng_inspection *ins, unsigned i);
/** CPUs that are in some process's mask or ran one of its threads, by CPU. */
unsigned ng_inspection_cpu_count(const ng_inspection *ins);
const ng_cpu_view *ng_inspection_cpu(const ng_inspection *ins, unsigned i);
/** Groups of bound processes whose masks overlap. */
unsigned ng_inspection_overlap_count(const ng_inspection *ins);
const ng_overlap_view *ng_inspection_overlap(const ng_inspection *ins, unsigned i);
/** Warnings about the processes together (oversubscription across them,
 *  bound processes piled on fewer cores than they are). */
const ng_notes *ng_inspection_warnings(const ng_inspection *ins);

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_INSPECT_H */
