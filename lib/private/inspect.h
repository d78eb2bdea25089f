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
} ngi_proc;

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

/** Value of NAME in a NUL-separated environ block, or NULL. */
const char *ngi_env_block_get(const char *blk, size_t len, const char *name);

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
