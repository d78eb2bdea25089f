/**
 * @file numaguard/launcher.h
 * @brief Launchers outside Slurm's SPANK path (torchrun, mpirun, srun
 *        without the plugin): this rank's local rank and size, the GPUs
 *        each rank owns, and whether the launcher already bound the rank.
 *        Implemented in lib/gpu/launcher.c: one set of rules for
 *        `numaguard exec`, `numaguard check` and the plugin. Thread-safe
 *        unless an ng_env_view's own get() is not.
 */
#ifndef NUMAGUARD_LAUNCHER_H
#define NUMAGUARD_LAUNCHER_H

#include "numaguard/gpus.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Read-only view of an environment. NULL view (or NULL get) = this
 *  process's environment (getenv). */
typedef struct ng_env_view {
    /** Value of @p name, or NULL if unset. */
    const char *(*get)(void *ctx, const char *name);
    void *ctx;
} ng_env_view;

/** This rank's place among the ranks of its node. */
typedef struct ng_local_rank {
    unsigned rank;          /**< local rank (0 when no launcher found) */
    unsigned size;          /**< ranks on this node (1 when no launcher found) */
    int global_rank;        /**< RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID; -1 unknown */
    const char *launcher;   /**< "torchrun","Open MPI","MPICH","PMI","Slurm"; NULL if none */
    const char *source;     /**< the variable the rank came from ("LOCAL_RANK"...); NULL if none */
} ng_local_rank;

/**
 * Local rank and size from the first launcher whose rank variable is set,
 * in this order (an inner launcher describes the process better than an
 * outer one): torchrun LOCAL_RANK/LOCAL_WORLD_SIZE; Open MPI
 * OMPI_COMM_WORLD_LOCAL_RANK/_SIZE; MPICH/Intel MPI MPI_LOCALRANKID/
 * MPI_LOCALNRANKS; PMI_LOCAL_RANK/PMI_LOCAL_SIZE; Slurm SLURM_LOCALID with
 * this node's entry (SLURM_NODEID) of SLURM_STEP_TASKS_PER_NODE, else
 * SLURM_TASKS_PER_NODE ("2(x3),1"). None set: rank 0 of 1, launcher NULL.
 * Returns -1 (err names the variables) when the values are not a rank
 * below a size >= 1; *out still names the launcher.
 */
int ng_launcher_local_rank(const ng_env_view *env, ng_local_rank *out, char *err, size_t errlen);

/** The launcher option that leaves ranks unbound, for messages:
 *  "mpirun --bind-to none", "mpiexec -bind-to none", "srun --cpu-bind=none",
 *  or both of the common ones when the launcher is unknown. */
const char *ng_launcher_unbind_hint(const ng_local_rank *lr);

/**
 * 1 if the launcher already bound this rank: its CPU mask @p current (e.g.
 * ng_current_cpus) covers only part of the CPUs it may use, @p allowed
 * (the cgroup cpuset: ng_topology_allowed_cpus of a live topology).
 * 0 otherwise (the same set, or nothing in common).
 */
int ng_launcher_prebound(hwloc_const_cpuset_t current, hwloc_const_cpuset_t allowed);

/** Per-rank GPU lists of the ranks of one node: rank r owns count[r]
 *  topology GPU indices starting at gpus[offset[r]] (the plan request's
 *  three arrays). Free with ng_rank_gpus_free. */
typedef struct ng_rank_gpus {
    unsigned size;         /**< ranks */
    unsigned *count, *offset;
    int *gpus;
    int any;               /**< some rank has a GPU */
    char how[160];         /**< where the lists came from, for messages */
    char warning[256];     /**< "" or why the ranks are planned CPU-only */
} ng_rank_gpus;

/**
 * The GPUs each of @p size ranks owns. From @p gpus_option when not NULL
 * ("all", "none", or indices in bus order / bus ids), else from
 * CUDA_VISIBLE_DEVICES, else ROCR_VISIBLE_DEVICES of @p env. When the list
 * has exactly @p size entries (>= 2), rank r owns entry r (torchrun and
 * mpirun give every rank all GPUs and each uses device <local rank>);
 * otherwise every rank shares the whole list. A visible list that hides
 * every GPU ("-1", "") or names GPUs on a node that has none gives a
 * CPU-only split with rg->warning set. Returns 0; -1 when the environment
 * names a GPU that cannot be identified; -2 when @p gpus_option is invalid
 * (a usage error). err says why. Call ng_rank_gpus_free after every return.
 */
int ng_launcher_rank_gpus(const ng_topology *topo, const ng_env_view *env, const char *fsroot,
                          const char *gpus_option, unsigned size, ng_rank_gpus *rg,
                          char *err, size_t errlen);
void ng_rank_gpus_free(ng_rank_gpus *rg);

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_LAUNCHER_H */
