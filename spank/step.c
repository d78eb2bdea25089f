/* The step's view on one node, computed ONCE in slurm_spank_user_init
 * (slurmstepd, before it forks the tasks, so every task inherits the same
 * plan): topology, gres order, the step's CPUs, each task's predicted GPUs,
 * and the plan. No Slurm calls here: numaguard.c passes the inputs in. */
#include "ng_spank.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The step's plan failed; failure says why (logged once per step). */
#define step_fail(step, ...)                                                                 \
    ng_spank_fail(&(step)->failed, (step)->failure, sizeof (step)->failure, __VA_ARGS__)

int ng_step_cores_to_cpus(const ng_topology *topo, const char *cores, hwloc_bitmap_t out,
                          char *err, size_t errlen)
{
    hwloc_topology_t t = ng_topology_hwloc(topo);
    int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    hwloc_bitmap_t idx = hwloc_bitmap_alloc();
    if (!idx)
        return -1;
    hwloc_bitmap_zero(out);
    int rc = ng_list_parse(cores, idx, 1u << 20, err, errlen);
    if (rc == 0 && ncores <= 0) {
        rc = -1;
        snprintf(err, errlen, "the topology has no cores");
    }
    unsigned i;
    hwloc_bitmap_foreach_begin(i, idx)
        if (rc == 0) {
            hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, i);
            if (!core) {
                rc = -1;
                snprintf(err, errlen, "Slurm core %u does not exist in the topology "
                         "(%d cores): node config and hardware differ", i, ncores);
            } else {
                hwloc_bitmap_or(out, out, core->cpuset);
            }
        }
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(idx);
    return rc;
}

/* The step's CPUs: Slurm's core list converted, intersected with what the
 * slurmstepd itself may use (cgroup / affinity); either alone if the other
 * is unknown; the stepd's affinity wins if they do not meet. */
static int step_cpus(ng_step *step, const ng_step_input *in, hwloc_bitmap_t out)
{
    char err[256];
    hwloc_bitmap_t cores = hwloc_bitmap_alloc(), own = hwloc_bitmap_alloc();
    if (!cores || !own) {
        hwloc_bitmap_free(cores);
        hwloc_bitmap_free(own);
        return step_fail(step, "out of memory");
    }
    int given = in->step_cores && *in->step_cores;
    int have_cores = given &&
                     ng_step_cores_to_cpus(step->topo, in->step_cores, cores, err, sizeof err) == 0;
    int have_own = !step->plan_only && ng_current_cpus(own) == 0;
    hwloc_bitmap_copy(out, ng_topology_allowed_cpus(step->topo));
    if (have_cores && have_own && hwloc_bitmap_intersects(cores, own)) {
        hwloc_bitmap_and(out, out, cores);
        hwloc_bitmap_and(out, out, own);
        snprintf(step->cpu_source, sizeof step->cpu_source, "step cores %.40s", in->step_cores);
    } else if (have_own) {
        hwloc_bitmap_and(out, out, own);
        snprintf(step->cpu_source, sizeof step->cpu_source, "slurmstepd affinity");
    } else if (have_cores) {
        hwloc_bitmap_and(out, out, cores);
        snprintf(step->cpu_source, sizeof step->cpu_source, "step cores %.40s", in->step_cores);
    } else {
        snprintf(step->cpu_source, sizeof step->cpu_source, "whole topology");
    }
    hwloc_bitmap_free(cores);
    hwloc_bitmap_free(own);
    /* Slurm's cores that do not fit the topology mean slurm.conf's node
     * line and the hardware (or topology=) differ: the fallback above is
     * still the best guess, but the admin and the user are told. */
    if (given && !have_cores)
        snprintf(step->cpu_warning, sizeof step->cpu_warning,
                 "Slurm's core list %.64s does not fit the topology (%.200s); the step's CPUs "
                 "are taken from %s instead", in->step_cores, err, step->cpu_source);
    if (hwloc_bitmap_iszero(out))
        return step_fail(step, "the step has no CPU in the topology (%s)", step->cpu_source);
    return 0;
}

/* The plugin's gres.conf: gres_conf=, else beside SLURM_CONF when
 * slurmstepd has it, else /etc/slurm/gres.conf (ng_gres_conf_path, the rule
 * doctor uses too). Admin paths only (never from the user's env). */
static void gres_conf_path(const ng_spank_conf *conf, char *buf, size_t len)
{
    /* slurmstepd's own env, set by the admin */
    if (ng_gres_conf_path(conf->pc.gres_conf, getenv("SLURM_CONF"), buf, len) < 0)
        snprintf(buf, len, "/etc/slurm/gres.conf");
}

/* gres.conf unusable: GPU indices are then read as positions in PCI bus
 * order (AutoDetect's order), which a hand-written File= order need not
 * be, so say so. No gres.conf at all (AutoDetect-only sites without one,
 * nodes without GPUs) stays quiet. */
static void gres_conf_warning(ng_step *step, const char *path, const char *err)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return;
    snprintf(step->gres_warning, sizeof step->gres_warning,
             "%s; GPU indices are read in PCI bus order instead", err);
}

/* Predict each task's GPUs from the step-level view (see docs/plugin.md):
 * srun does not pass --gpus-per-task/--gpu-bind to the step env, so the
 * step's GPUs (gres order) are shared out by local task id, the way Slurm's
 * per-task binding hands them out (ng_gpus_share_out). Every task computes
 * the same thing, so the slices stay disjoint. */
static int predict_gpus(ng_step *step, const ng_spank_conf *conf, const ng_step_input *in)
{
    char err[512];
    unsigned nt = step->ntasks, ng = 0;
    if (in->step_gpus && *in->step_gpus &&
        ng_step_gpus(step->topo, step->have_order ? &step->order : NULL, in->step_gpus,
                     conf->pc.fsroot[0] ? conf->pc.fsroot : NULL, step->step_gpus, NG_MAX_GPUS, &ng,
                     err, sizeof err) < 0)
        return step_fail(step, "%s", err);
    step->n_step_gpus = ng;
    if (ng == 0)
        return 0;
    step->pred_count = calloc(nt, sizeof *step->pred_count);
    step->pred_offset = calloc(nt, sizeof *step->pred_offset);
    step->pred_gpus = calloc((size_t)nt + ng, sizeof *step->pred_gpus);
    if (!step->pred_count || !step->pred_offset || !step->pred_gpus)
        return step_fail(step, "out of memory");
    ng_gpus_share_out(step->step_gpus, ng, nt, step->pred_count, step->pred_offset,
                      step->pred_gpus);
    step->gpu_prediction = 1;
    return 0;
}

/* Why live discovery ran although a cache is configured, for the admin
 * (numaguard.c logs it once per step): the same checks the load made,
 * re-run only on this fallback path. */
static void cache_note(ng_step *step, const char *dir)
{
    char why[512];
    step->cache_note[0] = '\0';
    if (!dir || ng_topology_from_cache(step->topo))
        return;
    if (ng_topology_cache_valid(dir, why, sizeof why) == 1)
        snprintf(why, sizeof why, "valid now, not at load time");
    snprintf(step->cache_note, sizeof step->cache_note,
             "topology cache %s not used (%s); topology discovered live", dir, why);
}

/* The planner's request for this step: its tasks, CPUs, options and the
 * admin's lists as kept in the step; each task's GPUs as given (NULL:
 * none known). The first plan and the re-plan ask exactly this. */
static ng_plan_request step_request(const ng_step *step, const unsigned *count,
                                    const unsigned *offset, const int *gpus)
{
    return (ng_plan_request){.ntasks = step->ntasks,
                             .allowed_cpus = step->cpus,
                             .task_gpu_count = count,
                             .task_gpu_offset = offset,
                             .task_gpus = gpus,
                             .cpus_per_task = step->cpus_per_task,
                             .policy = step->policy,
                             .omp = step->omp,
                             .thread_vars = step->thread_vars,
                             .net = step->net,
                             .nic_filter = step->nic_filter};
}

int ng_step_plan(ng_step *step, const ng_spank_conf *conf, const ng_step_input *in)
{
    char err[512], path[PATH_MAX];
    ng_topology_options topt = {0};
    topt.xml_path = conf->pc.topology[0] ? conf->pc.topology : NULL;
    topt.fsroot = conf->pc.fsroot[0] ? conf->pc.fsroot : NULL;
    topt.cache_dir = !topt.xml_path && conf->pc.cache_dir[0] ? conf->pc.cache_dir : NULL;
    /* hwloc's lean plugin set (~2 ms per step) is already in slurmstepd's
     * environment, inherited from slurmd (slurm_spank_init): setenv here
     * would race with slurmstepd's threads. */
    /* ng_topology_load (the test build may inject a failure here). */
    if (ng_spank_topology_load(conf, &step->topo, &topt, err, sizeof err) < 0) {
        /* A node or admin problem (topology= file, hwloc), not the user's. */
        step->admin_failure = 1;
        return step_fail(step, "cannot load the topology: %s", err);
    }
    cache_note(step, topt.cache_dir);
    step->plan_only = !ng_topology_is_this_system(step->topo);
    step->ntasks = in->ntasks ? in->ntasks : 1;
    /* The gres order is only needed when the step has GPUs (zero cost otherwise). */
    if (in->step_gpus && *in->step_gpus) {
        gres_conf_path(conf, path, sizeof path);
        if (ng_gres_order_from_conf(&step->order, path, in->node_name,
                                    conf->pc.fsroot[0] ? conf->pc.fsroot : NULL, err, sizeof err) == 0)
            step->have_order = 1;
        else
            gres_conf_warning(step, path, err);
    }
    if (predict_gpus(step, conf, in) < 0)
        return -1;
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    if (!cpus)
        return step_fail(step, "out of memory");
    if (step_cpus(step, in, cpus) < 0) {
        hwloc_bitmap_free(cpus);
        return -1;
    }
    /* Kept in the step: the re-plan asks the same with the real GPUs. */
    step->nic_filter = &conf->pc.nic_filter;
    step->cpus = cpus;
    step->cpus_per_task = in->cpus_per_task;
    step->thread_vars = conf->have_thread_vars ? conf->thread_vars : NULL;
    ng_plan_request req;
    if (step->gpu_prediction)
        req = step_request(step, step->pred_count, step->pred_offset, step->pred_gpus);
    else
        req = step_request(step, NULL, NULL, NULL);
    if (ng_plan_compute(step->topo, &req, &step->plan, err, sizeof err) < 0)
        return step_fail(step, "planning failed: %s", err);
    /* With GPUs and several tasks, tasks check the prediction together. */
    if (step->gpu_prediction && step->ntasks > 1 && !step->user_cpu_bind)
        step->exchange = ng_exchange_create(step->ntasks);
    return 0;
}

int ng_step_replan(const ng_step *step, const unsigned *count, const unsigned *offset,
                   const int *gpus, ng_plan **out, char *err, size_t errlen)
{
    ng_plan_request req = step_request(step, count, offset, gpus);
    return ng_plan_compute(step->topo, &req, out, err, errlen);
}

void ng_step_free(ng_step *step)
{
    ng_plan_free(step->plan);
    ng_exchange_destroy(step->exchange);
    hwloc_bitmap_free(step->cpus);
    if (step->have_order)
        ng_gres_order_free(&step->order);
    ng_topology_free(step->topo);
    free(step->pred_gpus);
    free(step->pred_count);
    free(step->pred_offset);
    memset(step, 0, sizeof *step);
}
