/* make plan-quality: placement quality of the planner over the corpus.
 *
 *   quality DIR     every DIR/NAME.xml x job shapes x allocations; one line per
 *                   family with the totals below (tab-separated, for
 *                   bench/quality.sh, which runs this program built against
 *                   the current planner and against the previous release's).
 *   quality --time FILE NTASKS N   median ng_plan_compute time, microseconds
 *
 * Shapes: CPU-only (1, 2, 3, 4, 6, 8, 12, 16 tasks and 1x/2x the NUMA
 * nodes), one GPU per task with 1-8 tasks per GPU, two GPUs per task.
 * Allocations: the whole node, the first half of the cores, a window of
 * half the cores starting at a third, every other core.
 * Measures per plan (policy local): straddling tasks (CPUs on more than one
 * NUMA node), cross-socket straddles (more than one package), idle
 * allocated cores, GPU tasks with cores off their GPU's package (and how
 * many of those while the package had allocated cores left idle), and the
 * smallest effective slice (a core off the task's main node counts
 * 10/distance) as a share of the even share (cores / tasks).
 * Uses only the public API (lib/include/numaguard.h). */
#include "numaguard.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *cur_name = "";

typedef struct totals {
    unsigned long plans, tasks, straddles, cross_socket, idle, alloc_cores, gpu_tasks, off_socket,
        off_socket_free;
    double eff_share_sum, eff_share_min;
} totals;

static unsigned cores_in(hwloc_topology_t hw, hwloc_const_bitmap_t pus)
{
    unsigned n = 0;
    int ncores = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    for (int c = 0; c < ncores; c++)
        n += hwloc_bitmap_intersects(hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)c)->cpuset, pus);
    if (ncores <= 0)
        n = (unsigned)hwloc_bitmap_weight(pus);
    return n;
}

static unsigned packages_of(hwloc_topology_t hw, hwloc_const_bitmap_t pus, hwloc_bitmap_t out)
{
    unsigned n = 0;
    hwloc_bitmap_zero(out);
    int np = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PACKAGE);
    for (int i = 0; i < np; i++) {
        hwloc_obj_t pk = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PACKAGE, (unsigned)i);
        if (hwloc_bitmap_intersects(pk->cpuset, pus)) {
            hwloc_bitmap_or(out, out, pk->cpuset);
            n++;
        }
    }
    return n;
}

static double effective(const ng_topology *topo, hwloc_const_bitmap_t cpus, unsigned *nodes)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned nn = ng_topology_numa_count(topo), main = 0, cnt[512] = {0};
    hwloc_bitmap_t part = hwloc_bitmap_alloc();
    *nodes = 0;
    for (unsigned i = 0; i < nn && i < 512; i++) {
        const ng_numa_info *ni = ng_topology_numa(topo, i);
        if (!ni->has_cpus)
            continue;
        hwloc_bitmap_and(part, ni->cpus, cpus);
        cnt[i] = cores_in(hw, part);
        *nodes += cnt[i] > 0;
        if (cnt[i] > cnt[main])
            main = i;
    }
    /* CPUs of no CPU-bearing node (offline node, memoryless): local. */
    hwloc_bitmap_copy(part, cpus);
    for (unsigned i = 0; i < nn; i++)
        if (ng_topology_numa(topo, i)->has_cpus)
            hwloc_bitmap_andnot(part, part, ng_topology_numa(topo, i)->cpus);
    double eff = cores_in(hw, part);
    for (unsigned i = 0; i < nn && i < 512; i++) {
        unsigned d = i == main ? 10 : ng_topology_distance(topo, ng_topology_numa(topo, main)->os_index,
                                                          ng_topology_numa(topo, i)->os_index);
        eff += cnt[i] * 10.0 / (d >= 10 ? d : 20);
    }
    hwloc_bitmap_free(part);
    return eff;
}

static void measure(const ng_topology *topo, const ng_plan *plan, hwloc_const_bitmap_t allowed,
                    totals *tt)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned nt = ng_plan_task_count(plan), alloc = cores_in(hw, allowed);
    if (alloc < nt)
        return; /* sharing: not comparable */
    hwloc_bitmap_t used = hwloc_bitmap_alloc(), pk = hwloc_bitmap_alloc(), local = hwloc_bitmap_alloc();
    double min_eff = 1e300;
    for (unsigned t = 0; t < nt; t++)
        hwloc_bitmap_or(used, used, ng_plan_task(plan, t)->cpus);
    for (unsigned t = 0; t < nt; t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        unsigned nodes;
        double e = effective(topo, tp->cpus, &nodes);
        if (e < min_eff)
            min_eff = e;
        tt->straddles += nodes > 1;
        tt->cross_socket += packages_of(hw, tp->cpus, pk) > 1;
        if (tp->n_gpus && !tp->gpu_remote) {
            hwloc_bitmap_zero(local);
            for (unsigned k = 0; k < tp->n_gpus; k++)
                hwloc_bitmap_or(local, local, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->cpus);
            packages_of(hw, local, pk);
            tt->gpu_tasks++;
            int off = !hwloc_bitmap_isincluded(tp->cpus, pk);
            tt->off_socket += off;
            /* ... while its package still had allocated cores nobody used */
            hwloc_bitmap_and(pk, pk, allowed);
            int free_left = off && !hwloc_bitmap_isincluded(pk, used);
            tt->off_socket_free += free_left;
            if (off && getenv("NG_QUALITY_VERBOSE")) {
                char c[256], a[256];
                ng_list_format(tp->cpus, c, sizeof c);
                ng_list_format(allowed, a, sizeof a);
                fprintf(stderr, "off-socket%s: %s nt=%u task %u gpu %d cpus %s allowed %s\n",
                        free_left ? " (package not full)" : "", cur_name, nt, t, tp->gpus[0], c, a);
            }
        }
    }
    tt->plans++;
    tt->tasks += nt;
    tt->alloc_cores += alloc;
    unsigned idle = alloc - cores_in(hw, used);
    tt->idle += idle;
    if (idle && getenv("NG_QUALITY_VERBOSE"))
        fprintf(stderr, "idle: %s nt=%u gpus=%u: %u of %u cores\n", cur_name, nt,
                ng_plan_task(plan, 0)->n_gpus, idle, alloc);
    double share = min_eff / ((double)alloc / nt);
    tt->eff_share_sum += share;
    if (share < tt->eff_share_min)
        tt->eff_share_min = share;
    hwloc_bitmap_free(used);
    hwloc_bitmap_free(pk);
    hwloc_bitmap_free(local);
}

static void allocation(const ng_topology *topo, int kind, hwloc_bitmap_t out)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    int n = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    hwloc_bitmap_zero(out);
    for (int i = 0; i < n; i++) {
        int take = kind == 0 || (kind == 1 && i < n / 2) || (kind == 2 && i >= n / 3 && i < n / 3 + n / 2) ||
                   (kind == 3 && i % 2 == 0);
        if (take)
            hwloc_bitmap_or(out, out, hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)i)->cpuset);
    }
    if (n <= 0)
        hwloc_bitmap_copy(out, ng_topology_allowed_cpus(topo));
    hwloc_bitmap_and(out, out, ng_topology_allowed_cpus(topo));
}

static int run(const ng_topology *topo, unsigned nt, unsigned gpt, hwloc_const_bitmap_t allowed, totals *tt)
{
    unsigned ngpu = ng_topology_gpu_count(topo);
    unsigned *count = calloc(nt, sizeof *count), *offset = calloc(nt, sizeof *offset);
    int *gpus = calloc((size_t)nt * (gpt + 1), sizeof *gpus);
    ng_plan_request req = {.ntasks = nt, .allowed_cpus = allowed};
    ng_policy_parse("local", &req.policy, NULL, 0);
    if (gpt) {
        for (unsigned t = 0; t < nt; t++) {
            count[t] = gpt;
            offset[t] = t * gpt;
            for (unsigned k = 0; k < gpt; k++)
                gpus[t * gpt + k] = (int)((t * gpt + k) % ngpu);
        }
        req.task_gpu_count = count;
        req.task_gpu_offset = offset;
        req.task_gpus = gpus;
    }
    ng_plan *plan = NULL;
    int rc = ng_plan_compute(topo, &req, &plan, NULL, 0);
    if (rc == 0)
        measure(topo, plan, allowed, tt);
    ng_plan_free(plan);
    free(count);
    free(offset);
    free(gpus);
    return rc;
}

enum { F_CPU, F_GPU1, F_GPU2, F_PARTIAL, F_N };
static const char *const fam_name[F_N] = {"cpu-only", "1-gpu-per-task", "2-gpus-per-task",
                                          "partial-allocations"};

static void sweep(const ng_topology *topo, totals *fam)
{
    unsigned ngpu = ng_topology_gpu_count(topo), nnuma = 0;
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++)
        nnuma += ng_topology_numa(topo, i)->has_cpus;
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    static const unsigned cpu_tasks[] = {1, 2, 3, 4, 6, 8, 12, 16};
    for (int kind = 0; kind < 4; kind++) {
        allocation(topo, kind, allowed);
        totals *cpu = kind ? &fam[F_PARTIAL] : &fam[F_CPU];
        for (unsigned i = 0; i < sizeof cpu_tasks / sizeof *cpu_tasks; i++)
            run(topo, cpu_tasks[i], 0, allowed, cpu);
        run(topo, nnuma, 0, allowed, cpu);
        run(topo, 2 * nnuma, 0, allowed, cpu);
        for (unsigned per = 1; ngpu && per <= 8; per++)
            run(topo, ngpu * per, 1, allowed, kind ? &fam[F_PARTIAL] : &fam[F_GPU1]);
        if (ngpu >= 2)
            run(topo, ngpu / 2, 2, allowed, kind ? &fam[F_PARTIAL] : &fam[F_GPU2]);
    }
    hwloc_bitmap_free(allowed);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int sweep_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "quality: cannot open %s\n", dir);
        return 1;
    }
    char *names[256];
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256)
        if (strstr(e->d_name, ".xml"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    totals fam[F_N];
    memset(fam, 0, sizeof fam);
    for (int f = 0; f < F_N; f++)
        fam[f].eff_share_min = 1e300;
    for (unsigned i = 0; i < n; i++) {
        char path[1024], err[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        ng_topology_options o = {.xml_path = path};
        ng_topology *topo = NULL;
        cur_name = names[i];
        if (ng_topology_load(&topo, &o, err, sizeof err) == 0)
            sweep(topo, fam);
        ng_topology_free(topo);
        free(names[i]);
    }
    printf("family\tplans\ttasks\tstraddling\tcross_socket\tidle_cores\talloc_cores\tgpu_tasks\t"
           "off_gpu_socket\toff_gpu_socket_free\tmean_min_eff_share\tworst_min_eff_share\n");
    for (int f = 0; f < F_N; f++)
        printf("%s\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%lu\t%.3f\t%.3f\n", fam_name[f],
               fam[f].plans, fam[f].tasks, fam[f].straddles, fam[f].cross_socket, fam[f].idle,
               fam[f].alloc_cores, fam[f].gpu_tasks, fam[f].off_socket, fam[f].off_socket_free,
               fam[f].plans ? fam[f].eff_share_sum / (double)fam[f].plans : 0,
               fam[f].plans ? fam[f].eff_share_min : 0);
    return 0;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median time of one plan of @nt tasks (GPUs spread round robin). */
static int time_plan(const char *xml, unsigned nt, int reps)
{
    ng_topology_options o = {.xml_path = xml};
    ng_topology *topo = NULL;
    char err[256];
    if (ng_topology_load(&topo, &o, err, sizeof err) < 0) {
        fprintf(stderr, "quality: %s\n", err);
        return 1;
    }
    unsigned ngpu = ng_topology_gpu_count(topo);
    unsigned *count = calloc(nt, sizeof *count), *offset = calloc(nt, sizeof *offset);
    int *gpus = calloc(nt, sizeof *gpus);
    ng_plan_request req = {.ntasks = nt};
    ng_policy_parse("local", &req.policy, NULL, 0);
    if (ngpu) {
        for (unsigned t = 0; t < nt; t++) {
            count[t] = 1;
            offset[t] = t;
            gpus[t] = (int)(t % ngpu);
        }
        req.task_gpu_count = count;
        req.task_gpu_offset = offset;
        req.task_gpus = gpus;
    }
    double *us = calloc((size_t)reps, sizeof *us);
    for (int r = 0; r < reps; r++) {
        ng_plan *p = NULL;
        double t0 = now_us();
        ng_plan_compute(topo, &req, &p, NULL, 0);
        us[r] = now_us() - t0;
        ng_plan_free(p);
    }
    qsort(us, (size_t)reps, sizeof *us, cmp_dbl);
    printf("%.1f\n", us[reps / 2]);
    free(us);
    free(count);
    free(offset);
    free(gpus);
    ng_topology_free(topo);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--time") == 0)
        return time_plan(argv[2], (unsigned)atoi(argv[3]), atoi(argv[4]));
    if (argc == 2)
        return sweep_dir(argv[1]);
    fprintf(stderr, "usage: quality DIR | quality --time FILE NTASKS N\n");
    return 2;
}
