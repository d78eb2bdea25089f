/* `numaguard check`: read each process (proc.c, environ.c, proc_gpus.c),
 * judge it alone, then all of them together (rules.c). The orchestrator of
 * lib/inspect/: nothing in the module calls back into it. Fields and
 * rules: docs/check.md. */
#include "private/inspect.h"

#include <stdlib.h>
#include <string.h>

static unsigned long long bytes_on(const ngi_proc *p, hwloc_const_bitmap_t nodes)
{
    unsigned long long sum = 0;
    for (unsigned i = 0; i < p->v.n_memory; i++)
        if (hwloc_bitmap_isset(nodes, p->memory[i].node))
            sum += p->memory[i].bytes;
    return sum;
}

/* The job its cgroup names; its environment's SLURM_JOB_ID is its own
 * claim, not membership (ng_inspect_list_job). A SLUID cgroup's job number
 * is what Slurm's slurmstepd there serves (the map, made once per
 * inspection and only when some process has a SLUID cgroup). */
static void read_job(const char *fsroot, ngi_proc *p, ngi_sluid_map **map)
{
    char id[NGI_JOB_ID_MAX];
    if (ngi_cgroup_job(fsroot, p->v.pid, id, sizeof id) < 0)
        return;
    if (id[0] != 's') {
        ngi_strlcpy(p->v.job_id, id, sizeof p->v.job_id);
        return;
    }
    ngi_strlcpy(p->v.sluid, id, sizeof p->v.sluid);
    if (!*map && (*map = calloc(1, sizeof **map)) != NULL)
        ngi_sluid_map_build(fsroot, *map);
    const char *job = *map ? ngi_sluid_map_job(*map, id) : NULL;
    if (job)
        ngi_strlcpy(p->v.job_id, job, sizeof p->v.job_id);
}

static void read_environment(const ng_topology *topo, const char *fsroot, ngi_proc *p)
{
    size_t len = 0;
    char *blk = ngi_environ_read(fsroot, p->v.pid, &len);
    if (!blk) {
        ngi_strlcpy(p->v.gpu_source, "environ unreadable", sizeof p->v.gpu_source);
        return;
    }
    ngi_environ_thread_caps(blk, len, p);
    ngi_environ_nic_vars(blk, len, p);
    ngi_inspect_gpus(topo, fsroot, blk, len, p);
    free(blk);
    for (unsigned i = 0; i < p->v.n_gpus; i++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, (unsigned)p->gpus[i]);
        hwloc_bitmap_or(p->gpu_nodes, p->gpu_nodes, g->numa_nodes);
        hwloc_bitmap_or(p->gpu_nodes, p->gpu_nodes, g->memory_nodes);
    }
}

static void inspect_one(const ng_topology *topo, const char *fsroot, ngi_proc *p,
                        ngi_sluid_map **map)
{
    if (ngi_proc_read_status(fsroot, p) < 0) {
        p->v.gone = 1;
        return;
    }
    ngi_proc_read_comm(fsroot, p);
    if (p->have_uid)   /* the owner from the status just read */
        ngi_user_name(p->v.uid, p->v.user, sizeof p->v.user);
    ngi_proc_read_threads(fsroot, p);
    ngi_proc_count_cores(topo, fsroot, p);
    ngi_proc_read_numa_maps(fsroot, p);
    read_job(fsroot, p, map);
    read_environment(topo, fsroot, p);
    p->v.cpu_local_bytes = bytes_on(p, p->cpu_nodes);
    p->v.gpu_local_bytes = bytes_on(p, p->gpu_nodes);
    ngi_judge_proc(p);
}

static int proc_init(ngi_proc *p, int pid)
{
    memset(p, 0, sizeof *p);
    p->v.pid = pid;
    p->v.mem_policy = "unknown";
    p->v.local_rank = p->v.local_size = p->v.global_rank = -1;
    ngi_strlcpy(p->v.gpu_source, "none", sizeof p->v.gpu_source);
    p->cpus = hwloc_bitmap_alloc();
    p->cpu_nodes = hwloc_bitmap_alloc();
    p->policy_nodes = hwloc_bitmap_alloc();
    p->gpu_nodes = hwloc_bitmap_alloc();
    p->allowed = hwloc_bitmap_alloc();
    /* Sized from the table of thread variables: every one fits. */
    p->caps_len = (size_t)ngi_thread_var_count() * NGI_CAP_ENTRY + 1;
    p->caps = calloc(p->caps_len, 1);
    p->v.thread_caps = p->caps ? p->caps : "";   /* never moves: the rules read it early */
    return p->cpus && p->cpu_nodes && p->policy_nodes && p->gpu_nodes && p->allowed && p->caps
               ? 0 : -1;
}

/* Point the view at the storage (after every realloc is done). */
static void proc_publish(ngi_proc *p)
{
    p->v.cpus = p->cpus;
    p->v.cpu_nodes = p->cpu_nodes;
    p->v.mem_policy_nodes = p->policy_nodes;
    p->v.gpu_nodes = p->gpu_nodes;
    p->v.allowed_cpus = p->allowed;
    p->v.thread_views = p->threads;
    p->v.memory = p->memory;
    p->v.gpus = p->gpus;
}

static void proc_free(ngi_proc *p)
{
    hwloc_bitmap_free(p->cpus);
    hwloc_bitmap_free(p->cpu_nodes);
    hwloc_bitmap_free(p->policy_nodes);
    hwloc_bitmap_free(p->gpu_nodes);
    hwloc_bitmap_free(p->allowed);
    for (unsigned i = 0; i < p->v.n_thread_views; i++)
        hwloc_bitmap_free((hwloc_bitmap_t)p->threads[i].cpus);
    free(p->threads);
    free(p->memory);
    free(p->caps);
}

int ng_inspect(const ng_topology *topo, const char *fsroot, const int *pids, unsigned n,
               ng_inspection **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!topo || (n && !pids) || n > NG_INSPECT_MAX_PIDS)
        return ngi_fail(err, errlen, "ng_inspect: bad arguments (at most %d processes)",
                       NG_INSPECT_MAX_PIDS);
    ng_inspection *ins = calloc(1, sizeof *ins);
    if (!ins || !(ins->procs = calloc(n ? n : 1, sizeof *ins->procs))) {
        free(ins);
        return ngi_fail(err, errlen, "out of memory");
    }
    ngi_sluid_map *map = NULL;
    for (unsigned i = 0; i < n; i++, ins->n_procs++) {
        ngi_proc *p = &ins->procs[i];
        if (proc_init(p, pids[i]) < 0)
            break;
        inspect_one(topo, fsroot, p, &map);
        proc_publish(p);
    }
    free(map);
    if (ins->n_procs < n || ngi_judge_all(topo, ins) < 0) {
        ng_inspection_free(ins);
        return ngi_fail(err, errlen, "out of memory");
    }
    *out = ins;
    return 0;
}

void ng_inspection_free(ng_inspection *ins)
{
    if (!ins)
        return;
    for (unsigned i = 0; i < ins->n_procs; i++)
        proc_free(&ins->procs[i]);
    free(ins->procs);
    free(ins->cpus);
    for (unsigned i = 0; i < ins->n_overlaps; i++)
        hwloc_bitmap_free(ins->overlap_sets[i]);
    free(ins->overlap_sets);
    free(ins->overlaps);
    free(ins->overlap_pids);
    free(ins);
}

unsigned ng_inspection_proc_count(const ng_inspection *ins) { return ins ? ins->n_procs : 0; }

const ng_proc_view *ng_inspection_proc(const ng_inspection *ins, unsigned i)
{
    return ins && i < ins->n_procs ? &ins->procs[i].v : NULL;
}

unsigned ng_inspection_cpu_count(const ng_inspection *ins) { return ins ? ins->n_cpus : 0; }

const ng_cpu_view *ng_inspection_cpu(const ng_inspection *ins, unsigned i)
{
    return ins && i < ins->n_cpus ? &ins->cpus[i] : NULL;
}

unsigned ng_inspection_overlap_count(const ng_inspection *ins) { return ins ? ins->n_overlaps : 0; }

const ng_overlap_view *ng_inspection_overlap(const ng_inspection *ins, unsigned i)
{
    return ins && i < ins->n_overlaps ? &ins->overlaps[i] : NULL;
}

const ng_notes *ng_inspection_warnings(const ng_inspection *ins)
{
    return ins ? &ins->warnings : NULL;
}
