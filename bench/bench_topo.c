/* Topology load (live, cache, XML) and ng_plan_compute timings.
 *
 *   bench_topo live N                 N live loads (ng_topology_load), median ms
 *   bench_topo cache DIR N            N loads with cache_dir=DIR (must hit)
 *   bench_topo xml FILE N             N loads of an hwloc XML
 *   bench_topo first live|cache DIR|xml FILE
 *                                     one load in this fresh process, ms (the
 *                                     per-step cost: hwloc loads its plugins
 *                                     once per process)
 *   bench_topo plan FILE NTASKS N     N plans of NTASKS tasks (GPUs spread
 *                                     over tasks in bus order), median ms
 *   bench_topo write DIR              write the cache, print ms
 *   bench_topo draw FILE NTASKS N     N pictures (ng_draw_svg, then N maps,
 *                                     ng_draw_map) of a plan of NTASKS
 *                                     tasks into /dev/null, median ms of each
 * Output: one line "median_ms=<x> n=<N> <details>". */
#include "numaguard.h"
#include "benchlib.h"

#include <stdio.h>
#include <string.h>

static char err[512];

static double load_once(const char *xml, const char *cache, int *from_cache)
{
    ng_topology_options o = {.xml_path = xml, .cache_dir = cache};
    ng_topology *t = NULL;
    double t0 = bench_now_us();
    if (ng_topology_load(&t, &o, err, sizeof err) < 0) {
        fprintf(stderr, "bench_topo: %s\n", err);
        exit(1);
    }
    double us = bench_now_us() - t0;
    *from_cache = ng_topology_from_cache(t);
    ng_topology_free(t);
    return us;
}

static int run_loads(const char *xml, const char *cache, int n)
{
    double *v = calloc((size_t)n, sizeof *v);
    int hits = 0, fc = 0;
    for (int i = 0; i < n; i++) {
        v[i] = load_once(xml, cache, &fc);
        hits += fc;
    }
    printf("median_ms=%.3f n=%d from_cache=%d\n", bench_median(v, (size_t)n) / 1e3, n, hits);
    free(v);
    return cache && hits != n;
}

/* The plan bench_topo times and draws: NTASKS tasks, GPUs spread over
 * them in bus order, policy local, omp-guard auto. */
static ng_plan *plan_once(const ng_topology *t, unsigned ntasks, double *us)
{
    unsigned ng = ng_topology_gpu_count(t);
    unsigned *cnt = calloc(ntasks, sizeof *cnt), *off = calloc(ntasks, sizeof *off);
    int *gpus = calloc(ntasks, sizeof *gpus);
    for (unsigned i = 0; i < ntasks; i++) {
        cnt[i] = ng ? 1 : 0;
        off[i] = i;
        gpus[i] = ng ? (int)(i * ng / ntasks) : 0;
    }
    ng_plan_request r = {.ntasks = ntasks};
    if (ng) {
        r.task_gpu_count = cnt;
        r.task_gpu_offset = off;
        r.task_gpus = gpus;
    }
    ng_policy_parse("local", &r.policy, NULL, 0);
    ng_omp_guard_parse("auto", &r.omp, NULL, 0);
    ng_plan *p = NULL;
    double t0 = bench_now_us();
    if (ng_plan_compute(t, &r, &p, err, sizeof err) < 0)
        fprintf(stderr, "bench_topo: plan: %s\n", err);
    *us = bench_now_us() - t0;
    free(cnt);
    free(off);
    free(gpus);
    return p;
}

static int run_draw(const char *xml, unsigned ntasks, int n)
{
    ng_topology_options o = {.xml_path = xml};
    ng_topology *t = NULL;
    double us;
    if (ng_topology_load(&t, &o, err, sizeof err) < 0) {
        fprintf(stderr, "bench_topo: %s\n", err);
        return 1;
    }
    ng_plan *p = plan_once(t, ntasks, &us);
    FILE *f = fopen("/dev/null", "w");
    double *svg = calloc((size_t)n, sizeof *svg), *map = calloc((size_t)n, sizeof *map);
    ng_draw_request req = {.plan = p, .title = xml};
    int rc = !p || !f;
    for (int i = 0; i < n && !rc; i++) {
        double t0 = bench_now_us();
        rc |= ng_draw_svg(t, &req, f, err, sizeof err) < 0;
        svg[i] = bench_now_us() - t0;
        t0 = bench_now_us();
        rc |= ng_draw_map(t, &req, f, err, sizeof err) < 0;
        map[i] = bench_now_us() - t0;
    }
    if (rc)
        fprintf(stderr, "bench_topo: draw: %s\n", err);
    else
        printf("median_ms=%.3f n=%d map_ms=%.3f ntasks=%u pus=%d\n",
               bench_median(svg, (size_t)n) / 1e3, n, bench_median(map, (size_t)n) / 1e3, ntasks,
               hwloc_bitmap_weight(ng_topology_allowed_cpus(t)));
    if (f)
        fclose(f);
    free(svg);
    free(map);
    ng_plan_free(p);
    ng_topology_free(t);
    return rc;
}

static int run_plan(const char *xml, unsigned ntasks, int n)
{
    ng_topology_options o = {.xml_path = xml};
    ng_topology *t = NULL;
    if (ng_topology_load(&t, &o, err, sizeof err) < 0) {
        fprintf(stderr, "bench_topo: %s\n", err);
        return 1;
    }
    double *v = calloc((size_t)n, sizeof *v);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        ng_plan *p = plan_once(t, ntasks, &v[i]);
        rc = p == NULL;
        ng_plan_free(p);
    }
    if (!rc)
        printf("median_ms=%.3f n=%d ntasks=%u gpus=%u pus=%d\n", bench_median(v, (size_t)n) / 1e3,
               n, ntasks, ng_topology_gpu_count(t), hwloc_bitmap_weight(ng_topology_allowed_cpus(t)));
    free(v);
    ng_topology_free(t);
    return rc != 0;
}

int main(int argc, char **argv)
{
    int fc = 0;
    if (argc == 3 && strcmp(argv[1], "live") == 0)
        return run_loads(NULL, NULL, atoi(argv[2]));
    if (argc == 4 && strcmp(argv[1], "cache") == 0)
        return run_loads(NULL, argv[2], atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "xml") == 0)
        return run_loads(argv[2], NULL, atoi(argv[3]));
    if (argc == 5 && strcmp(argv[1], "plan") == 0)
        return run_plan(argv[2], (unsigned)atoi(argv[3]), atoi(argv[4]));
    if (argc == 5 && strcmp(argv[1], "draw") == 0)
        return run_draw(argv[2], (unsigned)atoi(argv[3]), atoi(argv[4]));
    if (argc >= 3 && strcmp(argv[1], "first") == 0) {
        const char *what = argv[2], *arg = argc > 3 ? argv[3] : NULL;
        double us = load_once(strcmp(what, "xml") == 0 ? arg : NULL,
                              strcmp(what, "cache") == 0 ? arg : NULL, &fc);
        printf("ms=%.3f from_cache=%d\n", us / 1e3, fc);
        return strcmp(what, "cache") == 0 && !fc;
    }
    if (argc == 3 && strcmp(argv[1], "write") == 0) {
        double t0 = bench_now_us();
        if (ng_topology_cache_write(argv[2], err, sizeof err) < 0) {
            fprintf(stderr, "bench_topo: %s\n", err);
            return 1;
        }
        printf("ms=%.3f\n", (bench_now_us() - t0) / 1e3);
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top of bench/bench_topo.c\n");
    return 2;
}
