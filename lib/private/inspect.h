/* Private to lib/inspect*.c: the inspection object behind the public
 * ng_proc_view / ng_inspection accessors. Not installed. */
#ifndef NGI_INSPECT_H
#define NGI_INSPECT_H

#include "cgroup.h"
#include "gpu.h"
#include "options.h"
#include "topo.h"

/** Largest environ block read from /proc/PID/environ. */
#define NGI_ENVIRON_MAX (256 * 1024)
/** Per-thread views kept per process (threads beyond are still counted). */
#define NGI_THREAD_VIEWS_MAX 4096

/** One process: the public view plus the storage it points into. */
typedef struct ngi_proc {
    ng_proc_view v;
    hwloc_bitmap_t cpus, cpu_nodes, policy_nodes, gpu_nodes, allowed;
    ng_thread_view *threads;       /* v.n_thread_views used */
    unsigned threads_cap;
    ng_node_bytes *memory;         /* v.n_memory used, sorted by node */
    unsigned memory_cap;
    int gpus[NG_MAX_GPUS];
    char *caps;                    /* v.thread_caps: room for every thread variable */
    size_t caps_len;
    int have_uid;                  /* status had a Uid: line (v.uid is its real uid) */
} ngi_proc;

/** Room one "NAME=value" of v.thread_caps takes: a name (< 64), '=', the
 *  value cut to 16 bytes, a space. */
#define NGI_CAP_ENTRY (64 + 1 + 16 + 1)

struct ng_inspection {
    ngi_proc *procs;
    unsigned n_procs;
    ng_cpu_view *cpus;
    unsigned n_cpus;
    ng_overlap_view *overlaps;
    unsigned n_overlaps;
    int *overlap_pids;             /* storage of every overlap's pids */
    hwloc_bitmap_t *overlap_sets;  /* n_overlaps sets */
    ng_notes warnings;
};

/** Append one note; control bytes and non-ASCII become \xNN so a note is
 *  always one printable line, whatever /proc held (issue: terminal escapes
 *  through check). Dropped when the list is full. */
void ngi_note(ng_notes *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- list.c: which processes; owners ---- */

/** The real uid of process @p pid (status "Uid:") and its user name ("" if
 *  the passwd database has none). 0, or -1 when the process is gone. */
int ngi_proc_owner(const char *fsroot, int pid, unsigned *uid, char *user, size_t len);
/** @p uid's user name into @p user ("" if the passwd database has none). */
void ngi_user_name(unsigned uid, char *user, size_t len);

/** The jobs of a node's SLUID cgroups (Slurm 26.05's default v2 layout):
 *  each pair from Slurm's own slurmstepd in such a cgroup (root's, its
 *  executable slurmstepd) and the job number of its title
 *  ("slurmstepd: [77.0]"). Never from a process's environment. */
#define NGI_SLUID_MAP_MAX 256
typedef struct ngi_sluid_pair {
    char sluid[NGI_JOB_ID_MAX];
    char job[NGI_JOB_ID_MAX];
} ngi_sluid_pair;
typedef struct ngi_sluid_map {
    unsigned n;
    ngi_sluid_pair pair[NGI_SLUID_MAP_MAX];
} ngi_sluid_map;
/** Scan fsroot/proc for Slurm's slurmstepd of SLUID cgroups (map->n = 0
 *  when none, or when /proc shows root's processes to nobody: hidepid). */
void ngi_sluid_map_build(const char *fsroot, ngi_sluid_map *map);
/** The job number of @p sluid, or NULL when the map has none. */
const char *ngi_sluid_map_job(const ngi_sluid_map *map, const char *sluid);

/* ---- proc.c: one process from /proc (each fills its part of @p p) ---- */
/** The real uid on a status "Uid:" line's value ("real effective saved
 *  fs"); -1 when it does not start with one. */
int ngi_status_uid(const char *value, unsigned *uid);

/** fsroot/proc/PID/WHAT into @p buf; -1 if too long. */
int ngi_proc_path(char *buf, size_t len, const char *fsroot, int pid, const char *what);
/** A /proc entry's name as a pid or tid ("123"), -1 if it is not one. */
int ngi_pid_of_name(const char *name);

/** Status (CPUs, mems, threads, ppid); -1 when the process is gone. */
int ngi_proc_read_status(const char *fsroot, ngi_proc *p);
void ngi_proc_read_comm(const char *fsroot, ngi_proc *p);
/** Each thread's state, last CPU and affinity (the first NGI_THREAD_VIEWS_MAX). */
void ngi_proc_read_threads(const char *fsroot, ngi_proc *p);
/** Cores and PUs of its mask, its CPU nodes, its cpuset cgroup's CPUs. */
void ngi_proc_count_cores(const ng_topology *topo, const char *fsroot, ngi_proc *p);
/** Memory policy and resident pages per node (numa_maps). */
void ngi_proc_read_numa_maps(const char *fsroot, ngi_proc *p);

/* ---- environ.c: the environment block ---- */

/** Value of NAME in a NUL-separated environ block, or NULL. */
const char *ngi_env_block_get(const char *blk, size_t len, const char *name);
/** /proc/PID/environ (bounded, malloc'd, *len bytes), or NULL if unreadable. */
char *ngi_environ_read(const char *fsroot, int pid, size_t *len);
/** The thread-count variables set in the block ("OMP_NUM_THREADS=2 ..."). */
void ngi_environ_thread_caps(const char *blk, size_t len, ngi_proc *p);
/** The NIC-selection variables set in the block (v.nic_vars). */
void ngi_environ_nic_vars(const char *blk, size_t len, ngi_proc *p);

/** Cores of @p topo with a PU in @p set (PUs when the topology has no cores). */
unsigned ngi_set_cores(const ng_topology *topo, hwloc_const_bitmap_t set);

/** The process's launcher rank and GPUs from its environ block
 *  (inspect_gpus.c): fills local_rank/size, rank_source, gpus, gpu_source,
 *  gpu_rule, and errors for GPUs that cannot be identified. */
void ngi_inspect_gpus(const ng_topology *topo, const char *fsroot, const char *blk, size_t len,
                     ngi_proc *p);

/** Rules (inspect_rules.c): one process's warnings, then the cross-process
 *  summary (per-CPU counts, overlapping bound masks, shared warnings). */
void ngi_judge_proc(ngi_proc *p);
int ngi_judge_all(const ng_topology *topo, ng_inspection *ins);

#endif
