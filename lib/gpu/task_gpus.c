/* A task's and a step's GPUs: the one rule of docs/gpu-order.md (the
 * devices cgroup first, then the environment), the step's GPUs in gres
 * order, and how a step's GPUs are shared out among its tasks. The
 * plugin asks here; it keeps no GPU rule of its own. */
#include "private/gpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---------- the devices cgroup as evidence (ConstrainDevices) ---------- */

/* access(2) consults the devices cgroup (v1 list or v2 BPF program) after
 * the file mode: EPERM there means "not this cgroup's device", without
 * opening it (opening a real GPU can start the driver). 1 allowed, 0
 * denied by the cgroup, -1 cannot tell (mode bits, missing file). */
static int cgroup_allows(const char *device_file)
{
    if (access(device_file, R_OK) == 0)
        return 1;
    return errno == EPERM ? 0 : -1;
}

/* Every device file once: MIG records share their parent /dev/nvidiaN,
 * which then says nothing about which slice a task has. */
static int order_has_duplicates(const ng_gres_order *o)
{
    for (unsigned i = 0; i < o->count; i++)
        for (unsigned j = i + 1; j < o->count; j++)
            if (strcmp(o->device_files[i], o->device_files[j]) == 0)
                return 1;
    return 0;
}

int ngi_task_gpus_from_cgroup(const ng_topology *topo, const ng_gres_order *order,
                             const char *fsroot, int *out_idx, unsigned max,
                             unsigned *n_out, char *err, size_t errlen)
{
    unsigned char allowed[NG_MAX_GPUS];
    unsigned denied = 0;
    *n_out = 0;
    if (!order || !order->count || order->count > NG_MAX_GPUS || order_has_duplicates(order))
        return 0;
    for (unsigned i = 0; i < order->count; i++) {
        int a = cgroup_allows(order->device_files[i]);
        if (a < 0)
            return 0;
        allowed[i] = (unsigned char)a;
        denied += !a;
    }
    if (!denied)
        return 0;   /* devices not constrained: the environment decides */
    for (unsigned i = 0; i < order->count; i++) {
        char bus[NG_BUSID_LEN];
        if (!allowed[i])
            continue;
        if (ngi_device_file_busid(fsroot, order->device_files[i], bus, err, errlen) < 0)
            return -1;
        int idx = ng_topology_gpu_by_busid(topo, bus);
        if (idx < 0)
            return ngi_fail(err, errlen, "%s (GPU %s) is not in the topology",
                           order->device_files[i], bus);
        if (*n_out >= max)
            return ngi_fail(err, errlen, "more than %u GPUs allowed", max);
        unsigned k = (*n_out)++;   /* sorted, as ngi_gpus_from_env answers */
        while (k > 0 && out_idx[k - 1] > idx) {
            out_idx[k] = out_idx[k - 1];
            k--;
        }
        out_idx[k] = idx;
    }
    return 1;
}


/* ---------- the rule ---------- */

/* Only step-level evidence names a step's GPUs: SLURM_JOB_GPUS is the
 * job's list, and Slurm keeps it in every step of a GPU job, also in one
 * that has no GPU (srun --gres=none or --gpus=0 inside sbatch --gres=gpu:2:
 * SLURM_STEP_GPUS and CUDA_VISIBLE_DEVICES unset there, measured on 22.05
 * by t-slurm-gpus.sh and t-slurm-cgroup.sh). */
static ng_gpu_env step_evidence(const ng_gpu_env *e)
{
    ng_gpu_env s = *e;
    s.slurm_job_gpus = NULL;
    return s;
}

static int env_empty(const ng_gpu_env *e)
{
    return !e->slurm_step_gpus && !e->cuda_visible_devices && !e->rocr_visible_devices &&
           !e->ze_affinity_mask && !e->gpu_device_ordinal;
}

int ng_task_gpus(const ng_topology *topo, const ng_gres_order *order,
                 const ng_gpu_env *env, const char *fsroot,
                 int *out_idx, unsigned max, unsigned *n_out,
                 char *err, size_t errlen)
{
    *n_out = 0;
    if (!env)
        return 0;
    ng_gpu_env step = step_evidence(env);
    if (env_empty(&step))
        return 0;
    /* ConstrainDevices: the devices cgroup names the task's GPUs (one that
     * denies every GPU: none); Slurm's variables are then renumbered from 0
     * (t-slurm-cgroup.sh). */
    int cg = order ? ngi_task_gpus_from_cgroup(topo, order, fsroot, out_idx, max, n_out,
                                               err, errlen) : 0;
    if (cg != 0)
        return cg < 0 ? -1 : 0;
    return ngi_gpus_from_env(topo, order, &step, fsroot, out_idx, max, n_out, err, errlen);
}

int ng_step_task_gpus(const ng_topology *topo, const ng_gres_order *order,
                      unsigned n_step_gpus, const ng_gpu_env *env, const char *fsroot,
                      int *out_idx, unsigned max, unsigned *n_out, char *err, size_t errlen)
{
    *n_out = 0;
    /* A step without a GPU on this node is CPU-only, whatever its tasks'
     * environment still holds from the job. */
    if (n_step_gpus == 0)
        return 0;
    return ng_task_gpus(topo, order, env, fsroot, out_idx, max, n_out, err, errlen);
}

/* One lookup per index keeps SLURM_STEP_GPUS's order (the environment's
 * answer for a whole list is sorted by topology index). */
int ng_step_gpus(const ng_topology *topo, const ng_gres_order *order, const char *step_gpus,
                 const char *fsroot, int *out_idx, unsigned max, unsigned *n_out,
                 char *err, size_t errlen)
{
    char buf[NG_MAX_ARG + 1], why[256];
    *n_out = 0;
    if (!step_gpus)
        return 0;
    if (strnlen(step_gpus, sizeof buf) >= sizeof buf)
        return ngi_fail(err, errlen, "SLURM_STEP_GPUS too long");
    memcpy(buf, step_gpus, strlen(step_gpus) + 1);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        ng_gpu_env env = {0};
        env.slurm_step_gpus = tok;
        int idx[4];
        unsigned got = 0;
        why[0] = '\0';
        if (ngi_gpus_from_env(topo, order, &env, fsroot, idx, 4, &got, why, sizeof why) < 0 ||
            got != 1)
            return ngi_fail(err, errlen, "cannot identify the step's GPU %s: %s", tok,
                            got != 1 && !why[0] ? "not found" : why);
        if (*n_out >= max)
            return ngi_fail(err, errlen, "more than %u GPUs in the step", max);
        out_idx[(*n_out)++] = idx[0];
    }
    return 0;
}

unsigned ng_gpus_share_out(const int *gpus, unsigned n, unsigned ntasks, unsigned *count,
                           unsigned *offset, int *out)
{
    unsigned used = 0;
    for (unsigned t = 0; n && t < ntasks; t++) {
        unsigned first = (unsigned)((unsigned long long)t * n / ntasks);
        unsigned last = (unsigned)((unsigned long long)(t + 1) * n / ntasks);
        if (last <= first)
            last = first + 1;
        offset[t] = used;
        count[t] = last - first;
        for (unsigned j = first; j < last; j++)
            out[used++] = gpus[j];
    }
    return used;
}
