/* What one OpenMP region costs a single thread: BATCHES batches of PER
 * "parallel for" regions over 256 doubles (the pool probe's regions,
 * tests/helpers/omp_pool.c), each batch timed; prints the fastest batch's
 * and the median batch's nanoseconds per region. The fastest batch is the
 * least disturbed by other work on the machine, so two builds or settings
 * compare best by it, run in turns:
 *
 *   cc -O2 -fopenmp -o omp_region_cost bench/omp_region_cost.c
 *   OMP_NUM_THREADS=1 ./omp_region_cost
 *   OMP_NUM_THREADS=1 NUMAGUARD_OMP_CORES=2 \
 *       LD_PRELOAD=$PWD/build/libnumaguard-omp.so ./omp_region_cost
 *
 * The difference is the governor's work per region (docs/omp-adaptive.md,
 * "Measured").
 *
 *   omp_region_cost [BATCHES [PER]]   defaults 100 10000 */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ELEMS 256
#define MAX_BATCHES 100000

static double a[ELEMS];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int by_value(const void *x, const void *y)
{
    double d = *(const double *)x - *(const double *)y;
    return (d > 0) - (d < 0);
}

/* One batch of @p per regions: nanoseconds per region. */
static double batch(long per, double *sink)
{
    double t0 = now_s(), s = 0;
    for (long i = 0; i < per; i++) {
#pragma omp parallel for reduction(+ : s) schedule(static)
        for (int j = 0; j < ELEMS; j++)
            s += a[j] * 1.0001;
    }
    *sink += s;
    return (now_s() - t0) * 1e9 / (double)per;
}

int main(int argc, char **argv)
{
    long nb = argc > 1 ? atol(argv[1]) : 100;
    long per = argc > 2 ? atol(argv[2]) : 10000;
    if (nb < 1 || nb > MAX_BATCHES || per < 1 || per > 100000000) {
        fprintf(stderr, "usage: omp_region_cost [BATCHES 1-%d [PER 1-100000000]]\n", MAX_BATCHES);
        return 2;
    }
    double *ns = malloc((size_t)nb * sizeof *ns), sink = 0;
    if (!ns)
        return 1;
    for (long k = 0; k < nb; k++)
        ns[k] = batch(per, &sink);
    qsort(ns, (size_t)nb, sizeof *ns, by_value);
    printf("fastest=%.1f median=%.1f ns/region (%ld batches of %ld)%s\n", ns[0], ns[nb / 2], nb,
           per, sink > 1e300 ? " " : "");
    free(ns);
    return 0;
}
