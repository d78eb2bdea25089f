/* Per-task apply cost: ng_apply_task (CPU affinity + memory policy + env)
 * on the live topology, as task_init runs it, many iterations, median.
 *
 *   bench_apply N [none|skip]
 *     (default) policy local: sched_setaffinity + set_mempolicy(MPOL_BIND) + env
 *     none      policy none: env only (thread variables, NUMAGUARD_*)
 *     skip      NG_APPLY_SKIP_SYSCALLS (plan-only path)
 * Output: "median_us=<x> p90_us=<y> n=<N> cpus=<0|1> mem=<0|1> warn=<...>". */
#include "numaguard.h"
#include "benchlib.h"

#include <stdio.h>
#include <string.h>

/* A tiny environment store standing in for spank_setenv/spank_getenv. */
typedef struct envstore {
    char names[64][64];
    char values[64][256];
    unsigned n;
} envstore;

static int env_is_set(void *ctx, const char *name)
{
    envstore *e = ctx;
    for (unsigned i = 0; i < e->n; i++)
        if (strcmp(e->names[i], name) == 0)
            return 1;
    return 0;
}

static int env_set(void *ctx, const char *name, const char *value)
{
    envstore *e = ctx;
    unsigned i = 0;
    while (i < e->n && strcmp(e->names[i], name) != 0)
        i++;
    if (i == 64)
        return -1;
    snprintf(e->names[i], sizeof e->names[i], "%s", name);
    snprintf(e->values[i], sizeof e->values[i], "%s", value);
    e->n += i == e->n;
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    const char *mode = argc > 2 ? argv[2] : "local";
    char err[512];
    ng_topology *t = NULL;
    if (n <= 0 || ng_topology_load(&t, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "bench_apply: %s\n", n <= 0 ? "bad N" : err);
        return 1;
    }
    ng_plan_request r = {.ntasks = 1};
    ng_policy_parse(strcmp(mode, "none") == 0 ? "none" : "local", &r.policy, NULL, 0);
    ng_omp_guard_parse("auto", &r.omp, NULL, 0);
    ng_plan *p = NULL;
    if (ng_plan_compute(t, &r, &p, err, sizeof err) < 0) {
        fprintf(stderr, "bench_apply: plan: %s\n", err);
        return 1;
    }
    unsigned flags = strcmp(mode, "skip") == 0 ? NG_APPLY_SKIP_SYSCALLS : 0;
    double *v = calloc((size_t)n, sizeof *v);
    ng_apply_result res;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        envstore e = {.n = 0};
        ng_env_ops ops = {.is_set = env_is_set, .set = env_set, .ctx = &e};
        double t0 = bench_now_us();
        rc = ng_apply_task(t, p, 0, &r.policy, flags, &ops, &res, err, sizeof err);
        v[i] = bench_now_us() - t0;
    }
    if (rc < 0) {
        fprintf(stderr, "bench_apply: apply: %s\n", err);
        return 1;
    }
    double med = bench_median(v, (size_t)n);
    printf("median_us=%.2f p90_us=%.2f n=%d cpus=%d mem=%d warn=%s\n", med, v[n * 9 / 10], n,
           res.cpus_applied, res.mem_applied, res.warning[0] ? res.warning : "-");
    free(v);
    ng_plan_free(p);
    ng_topology_free(t);
    return 0;
}
