/* A barrier-heavy OpenMP loop (libgomp): ITERS "parallel for" regions over
 * a small array, each region ending in an implicit barrier.
 *
 *   omp_barrier [ITERS [ELEMS [MAX_SECONDS]]]   defaults 20000 2048 3
 *
 * Stops after MAX_SECONDS even if unfinished (oversubscribed runs can be
 * ~1000x slower), and prints "rate=<regions/s> threads=<n> done=<k>". */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    long elems = argc > 2 ? atol(argv[2]) : 2048;
    double max_s = argc > 3 ? atof(argv[3]) : 3.0;
    if (iters <= 0 || elems <= 0 || max_s <= 0)
        return 2;
    double *a = malloc((size_t)elems * sizeof *a);
    if (!a)
        return 1;
    for (long i = 0; i < elems; i++)
        a[i] = (double)i;
    double t0 = now_s(), t = t0;
    long done = 0;
    while (done < iters && t - t0 < max_s) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < elems; i++)
            a[i] = a[i] * 0.999999 + 1.0;
        done++;
        if ((done & 15) == 0 || done == iters)
            t = now_s();
    }
    t = now_s();
    double sum = 0;
    for (long i = 0; i < elems; i++)
        sum += a[i];
    printf("rate=%.0f threads=%d done=%ld check=%.0f\n", done / (t - t0), omp_get_max_threads(),
           done, sum > 0 ? 1.0 : 0.0);
    free(a);
    return 0;
}
