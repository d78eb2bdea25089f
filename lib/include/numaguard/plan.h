/**
 * @file numaguard/plan.h
 * @brief The placement plan of one step on one node: per task its CPUs,
 *        memory nodes and policy, thread and network variables.
 *        Implemented in lib/plan/ (the objective and the rules the tests
 *        check: docs/planner.md).
 */
#ifndef NUMAGUARD_PLAN_H
#define NUMAGUARD_PLAN_H

#include "numaguard/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The job shape on this node (read only during ng_plan_compute). */
typedef struct ng_plan_request {
    unsigned ntasks;                 /**< local tasks on this node (>= 1) */
    /** CPUs the step may use here; NULL = all allowed PUs of the topology. */
    hwloc_const_cpuset_t allowed_cpus;
    /** Per task GPU lists: task i has task_gpu_count[i] topology GPU indices
     *  starting at task_gpus[task_gpu_offset[i]]. All three NULL = no GPUs. */
    const unsigned *task_gpu_count;
    const unsigned *task_gpu_offset;
    const int *task_gpus;
    unsigned cpus_per_task;          /**< Slurm -c (logical CPUs); 0 = unset */
    ng_policy policy;
    ng_omp_guard omp;
    /** Thread-count variables to set (NULL-terminated, e.g. from
     *  ng_thread_vars_parse); NULL = the library's default list. */
    const char *const *thread_vars;
    /** --net-affinity (zero = off: no NIC chosen, nothing exported). */
    ng_net_affinity net;
    const ng_nic_filter *nic_filter; /**< admin's NIC filter; NULL = default */
} ng_plan_request;

/** One task's plan (read-only, owned by the ng_plan). */
typedef struct ng_task_plan {
    unsigned local_id;
    unsigned n_gpus;
    const int *gpus;                 /**< topology GPU indices */
    hwloc_const_cpuset_t cpus;       /**< PUs to bind to; NULL if not binding */
    ng_mem_mode mem_mode;
    hwloc_const_nodeset_t mem_nodes; /**< OS indices; NULL if mode none */
    unsigned threads;                /**< cores (or PUs) owned */
    unsigned n_env;
    const ng_env_var *env;           /**< thread variables (--omp-guard) */
    int shares_cores;                /**< 1 if another task shares a core */
    int gpu_remote;                  /**< 1 if its GPU(s) had no allowed local core */
    /** What the slice alone does not say, for the verbose line (NULL if
     *  nothing): a GPU task kept on its GPU's package while allocated cores
     *  elsewhere stay idle (the plan's warning names the -c or modifier
     *  that would use them), or widened beyond it (rule 2). */
    const char *note;
    /** The node of mem_nodes listed first (OS index), -1 if none: for
     *  prefer its GPU's node, else (and for local) the node holding most of
     *  its cores. The one node to use where only one can be named
     *  (MPOL_PREFERRED on Linux < 5.15). */
    int mem_first;
    /** --net-affinity: the task's NICs (topology NIC indices, nearest
     *  first) and the network variables to export. */
    unsigned n_nics;
    const unsigned *nics;
    unsigned n_net_env;
    const ng_net_env *net_env;
    /** 1 if its GPU's package(s) held less than half its even share of the
     *  step's cores: it took the even share beyond them, nearest first,
     *  memory still on its GPU's node(s) (docs/planner.md, rule 2). */
    int widened;
} ng_task_plan;
/** ng_task_plan has the member widened (planner v4). */
#define NG_PLAN_HAS_WIDENED 1

/** Opaque: the per-task plans of one step on one node, with warnings.
 *  Immutable once computed: readable from several threads at once. */
typedef struct ng_plan ng_plan;

/** Compute the plan. Pure and deterministic: same input, same output (no
 *  I/O, no global state; thread-safe). On success *out is a new plan the
 *  caller frees with ng_plan_free(); -1 (err says why) on a request that
 *  cannot be planned or no memory. */
int ng_plan_compute(const ng_topology *topo, const ng_plan_request *req,
                    ng_plan **out, char *err, size_t errlen);
/** Free a plan and everything its accessors returned. NULL is a no-op. */
void ng_plan_free(ng_plan *plan);
/** Tasks of the plan, then task @p local_id (NULL past the end). */
unsigned ng_plan_task_count(const ng_plan *plan);
const ng_task_plan *ng_plan_task(const ng_plan *plan, unsigned local_id);
/** Warnings for the user (one printable line each, owned by the plan). */
unsigned ng_plan_warning_count(const ng_plan *plan);
const char *ng_plan_warning(const ng_plan *plan, unsigned i);

/* ---- why: the objective's terms of a plan (docs/planner.md) ---------- */

/** An alternative an explanation offers for one task, planned again
 *  before it is offered (docs/planner.md, "Explaining a plan"). */
typedef struct ng_plan_alternative {
    unsigned n_args;
    /** `numaguard plan` arguments that replace the same options of the
     *  request, e.g. {"--cpus-per-task", "28"} or {"--numa-policy",
     *  "local,wide"} ("--cpus-per-task", "0": without -c). */
    const char *const *args;
    const char *cpus;                /**< the task's CPUs then (a list, "0-13") */
    hwloc_const_nodeset_t mem_nodes; /**< its memory nodes then (OS indices) */
    const char *says;                /**< the line of the explanation offering it */
} ng_plan_alternative;

/** One task's part in the objective. */
typedef struct ng_task_terms {
    unsigned cores;          /**< cores owned */
    double effective;        /**< effective cores: one off its main node counts 10/distance */
    int main_node;           /**< OS index of the node holding most of its cores (-1: none) */
    /** A GPU task: cores off its GPUs' CPU-bearing node(s); a CPU-only task:
     *  cores off its main node. */
    unsigned off_cores;
    unsigned off_distance;   /**< the farthest of those (NUMA distance; 0: none) */
    unsigned nodes;          /**< NUMA nodes its cores span */
    unsigned groups;         /**< CPU groups (an L3, a memoryless die, in a node) spanned */
    unsigned packages;       /**< packages spanned */
    int cut;                 /**< the cut that placed it (ng_plan_explain_cut), -1: none */
    /** Why this slice, computed from the terms and from re-planned
     *  alternatives: lines of at most 100 characters separated by '\n'.
     *  The first is the plain reason in one sentence; then where its
     *  cores are, how the cores were split, what stays idle, and one line
     *  per alternative. Alike tasks get the same text (no task's own
     *  numbers in it: the plan's table has its CPUs and nodes). Terms:
     *  docs/planner.md, "Glossary". */
    const char *why;
    unsigned n_alternatives;
    const ng_plan_alternative *alternatives;
} ng_task_terms;

/** A candidate of a cut: a family of cuts and its score. */
typedef struct ng_cut_candidate {
    const char *family;      /**< consecutive, moved, numa-aligned, package-aligned, group-aligned */
    double min_effective;    /**< 1st term: the smallest task's effective cores */
    unsigned min_cores;      /**< 2nd term: the smallest task's cores */
    unsigned idle;           /**< tie-breaks: idle cores, */
    unsigned straddles;      /**< tasks over two NUMA nodes or more, */
    unsigned spans;          /**< CPU groups split: held in part by a task over two or more */
} ng_cut_candidate;

/** One cut the planner made: a line of cores shared by some tasks. */
typedef struct ng_plan_cut {
    /** "CPU-only tasks", "GPU tasks on their GPUs' cores", "GPU tasks on
     *  their GPUs' cores and the nearest free ones", "GPU tasks whose GPUs'
     *  cores overlap" (no candidates: each takes its own GPUs' free cores,
     *  then the nearest), "tasks sharing cores" (none either), or a pass
     *  after the cuts that re-laid tasks (none): "a remote GPU task moved
     *  after the cut", "one GPU's remote tasks re-laid whole per node",
     *  "GPU tasks re-laid whole per node, a spill swapped", "GPU tasks of
     *  one node re-laid on whole L3s". A task is in
     *  the last split that laid out its cores, a core in the last split
     *  that held it: tasks and cores describe the plan as it is. */
    const char *what;
    unsigned n_tasks;
    const unsigned *tasks;   /**< local ids, in slice order */
    unsigned cores;          /**< its cores: its tasks' there and the ones it left idle */
    unsigned n_candidates;
    const ng_cut_candidate *candidates;
    int chosen;              /**< index into candidates; -1: too few cores, tasks share */
    /** What decided against the runner-up, e.g. "fewer CPU groups split
     *  (0 against 16 for the consecutive cut)". */
    const char *decided;
    hwloc_const_cpuset_t cpus; /**< the allowed PUs of its cores */
    unsigned moved;          /**< its tasks a later split re-laid (candidates scored
                                  n_tasks + moved) */
} ng_plan_cut;

/** Opaque: the explanation of one plan. */
typedef struct ng_plan_explanation ng_plan_explanation;

/** Explain @p plan, computed by ng_plan_compute() from @p topo and @p req
 *  (both read only during the call): per task the objective's terms and
 *  one sentence, per cut its candidates and scores. Alternatives (another
 *  -c, the wide modifier) are planned again to be checked before a
 *  sentence names them. Pure, thread-safe. *out is freed with
 *  ng_plan_explanation_free(); -1 (err says why) without memory or when
 *  the request cannot be planned again. */
int ng_plan_explain(const ng_topology *topo, const ng_plan_request *req, const ng_plan *plan,
                    ng_plan_explanation **out, char *err, size_t errlen);
void ng_plan_explanation_free(ng_plan_explanation *x);
/** Task @p local_id's terms (NULL past the end); owned by @p x. */
const ng_task_terms *ng_plan_explain_task(const ng_plan_explanation *x, unsigned local_id);
/** The cuts, in the order the planner made them; owned by @p x. */
unsigned ng_plan_explain_cut_count(const ng_plan_explanation *x);
const ng_plan_cut *ng_plan_explain_cut(const ng_plan_explanation *x, unsigned i);

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_PLAN_H */
