/**
 * @file numaguard/gpus.h
 * @brief Which GPUs a Slurm step and each of its tasks have, as topology
 *        GPU indices: Slurm's gres order (gres.conf), the devices cgroup
 *        and the launcher's variables. Implemented in lib/gpu/ (the rules
 *        and their Slurm sources: docs/gpu-order.md).
 *
 * Nothing here opens a GPU: device files are stat()ed or access()ed,
 * driver files under /proc and /sys read (bounded), and NVML, when
 * installed, is dlopen()ed for UUID lookups and closed again. All calls
 * are thread-safe (no global state).
 */
#ifndef NUMAGUARD_GPUS_H
#define NUMAGUARD_GPUS_H

#include "numaguard/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Environment view for GPU identification: the variables a launcher gave
 * the task. Any field may be NULL (unset). Read only during the call.
 */
typedef struct ng_gpu_env {
    const char *slurm_step_gpus;      /**< SLURM_STEP_GPUS: global gres indices */
    const char *slurm_job_gpus;       /**< SLURM_JOB_GPUS: the JOB's global gres indices;
                                           never evidence for a step's task (ng_task_gpus
                                           ignores it: every step of a GPU job has it) */
    const char *cuda_visible_devices; /**< indices, GPU-/MIG- UUIDs */
    const char *rocr_visible_devices; /**< indices or GPU- UUIDs */
    const char *ze_affinity_mask;     /**< "0", "0.1", "1,2" */
    const char *gpu_device_ordinal;   /**< GPU_DEVICE_ORDINAL (Slurm, AMD) */
} ng_gpu_env;

/**
 * The node's gres GPU list in Slurm's index order: entry i is the device
 * file of gres GPU index i (e.g. "/dev/nvidia3", "/dev/dri/renderD129").
 */
typedef struct ng_gres_order {
    unsigned count;
    char **device_files;      /**< count entries, owned (ng_gres_order_free) */
} ng_gres_order;

/**
 * Read the node's gres GPU order from a gres.conf file: the Name=gpu lines
 * that apply to @p node_name (NULL = any), File= values expanded in order.
 * Fails (naming the node) when Name=gpu records exist only for other nodes.
 * AutoDetect lines are resolved by the rule in docs/gpu-order.md using the
 * device files and driver information under @p fsroot. The file describes
 * the node whose root is @p fsroot: File= paths are taken under it (tests
 * give the plugin a gres.conf naming /dev/nvidiaN inside their fake root).
 * On success the caller frees @p out with ng_gres_order_free(); on failure
 * (-1, err says why) there is nothing to free.
 */
int ng_gres_order_from_conf(ng_gres_order *out, const char *gres_conf_path,
                            const char *node_name, const char *fsroot,
                            char *err, size_t errlen);
/**
 * The gres.conf the plugin reads (one rule for the plugin and doctor):
 * @p plugin_arg (plugstack.conf's gres_conf=) when given; else gres.conf
 * beside @p slurm_conf when that is an absolute path (slurmstepd's
 * SLURM_CONF, or the slurm.conf doctor judges); else /etc/slurm/gres.conf.
 * 0, or -1 when it does not fit in @p len.
 */
int ng_gres_conf_path(const char *plugin_arg, const char *slurm_conf, char *buf, size_t len);
/** Free the device list of @p order and zero it (safe on a zeroed order). */
void ng_gres_order_free(ng_gres_order *order);

/**
 * The GPUs of ONE task of a Slurm step, by the one rule of docs/gpu-order.md,
 * from step-level evidence only:
 *  1. none of @p env's step variables is set (SLURM_STEP_GPUS,
 *     CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK,
 *     GPU_DEVICE_ORDINAL): no GPU. SLURM_JOB_GPUS is never read: Slurm keeps
 *     it in a step that has no GPU of its own (srun --gres=none or --gpus=0
 *     inside a GPU job);
 *  2. @p order given and this process's devices cgroup (task/cgroup with
 *     ConstrainDevices=yes) denies some of its device files: the ones it
 *     allows (checked with access(2), never opened), none when it denies
 *     them all. Slurm then renumbers the task's variables from 0, so the
 *     cgroup is the only evidence that names the devices;
 *  3. else the variables: SLURM_STEP_GPUS through @p order when given
 *     (Slurm's gres index order); else CUDA_VISIBLE_DEVICES /
 *     ROCR_VISIBLE_DEVICES / ZE_AFFINITY_MASK (UUIDs via NVML when
 *     available or /proc/driver/nvidia; plain indices as positions among
 *     the topology's GPUs of that vendor in bus order).
 * @p out_idx receives up to @p max topology GPU indices (sorted, unique) and
 * @p n_out their number (0 = the task has no GPU). Returns 0, or -1 when a
 * listed GPU cannot be identified (err says which, values escaped).
 */
int ng_task_gpus(const ng_topology *topo, const ng_gres_order *order,
                 const ng_gpu_env *env, const char *fsroot,
                 int *out_idx, unsigned max, unsigned *n_out,
                 char *err, size_t errlen);

/**
 * The GPUs of one task of a step that has @p n_step_gpus GPUs on this node
 * (ng_step_gpus of the step's SLURM_STEP_GPUS; 0 when the step has none):
 * no GPU at all when the step has none (a CPU-only step, also inside a GPU
 * job, whatever the task's environment inherited), else ng_task_gpus().
 * Same outputs and errors as ng_task_gpus().
 */
int ng_step_task_gpus(const ng_topology *topo, const ng_gres_order *order,
                      unsigned n_step_gpus, const ng_gpu_env *env, const char *fsroot,
                      int *out_idx, unsigned max, unsigned *n_out, char *err, size_t errlen);

/**
 * The GPUs of a whole step on this node, in Slurm's gres index order:
 * @p step_gpus is SLURM_STEP_GPUS ("2,0,1"); entry k of @p out_idx is the
 * topology index of its k-th gres index (looked up through @p order when
 * given, else by bus order). Returns 0, or -1 naming the entry that cannot
 * be identified (or a list that is too long).
 */
int ng_step_gpus(const ng_topology *topo, const ng_gres_order *order, const char *step_gpus,
                 const char *fsroot, int *out_idx, unsigned max, unsigned *n_out,
                 char *err, size_t errlen);

/**
 * Share a step's GPUs out among its @p ntasks local tasks the way Slurm's
 * per-task binding and local-rank device selection do (docs/plugin.md):
 * with G = @p gpus[0..n) in gres order, task i gets G[floor(i*n/ntasks) ..
 * floor((i+1)*n/ntasks) - 1] when n >= ntasks, else the single
 * G[floor(i*n/ntasks)]. Fills @p count[ntasks], @p offset[ntasks] and
 * @p out (room for ntasks + n entries: the plan request's three arrays).
 * Pure; every task computes the same. Returns the entries written.
 */
unsigned ng_gpus_share_out(const int *gpus, unsigned n, unsigned ntasks, unsigned *count,
                           unsigned *offset, int *out);

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_GPUS_H */
