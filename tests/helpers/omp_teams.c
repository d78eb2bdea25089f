/* Team sizes under --omp-guard=adaptive (tests/e2e/t-omp-adaptive.sh):
 * CALLERS threads (the main thread when 1) start outermost OpenMP regions
 * at the same time, and each region records omp_get_num_threads().
 *
 *   omp_teams CALLERS REGIONS [MODE [K]]
 *     MODE plain     #pragma omp parallel (the default)
 *          setnum K  each caller first calls omp_set_num_threads(K)
 *          clause K  num_threads(K) on every region
 *          nested    each region opens an inner region (nesting enabled):
 *                    the inner teams are reported
 *          maxthr    work sized by omp_get_max_threads() before each region,
 *                    one slot per thread number: checks every slot was done
 *
 * Every caller goes on (unrecorded) until all are done, so each recorded
 * region ran while all the callers were calling.
 * Prints one line per caller, "caller I teams MIN-MAX last L ones N" (N:
 * its regions with a team of 1), then
 * "all MIN-MAX max_threads M" (omp_get_max_threads() of the main thread
 * at the end), "slots_missed N" (maxthr) and "ones N of M" (regions with a
 * team of 1, of all recorded). Built with gcc (libgomp) and
 * clang (libomp) by mk/omp-adaptive.mk. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CALLERS 256

static unsigned regions;
static const char *mode = "plain";
static int k = 1;
static pthread_barrier_t start;
static unsigned tmin[MAX_CALLERS], tmax[MAX_CALLERS], tlast[MAX_CALLERS], tones[MAX_CALLERS];
static unsigned long missed;
static unsigned finished, ncallers;

static volatile double sink;

static void spin(void)
{
    double x = 0;
    for (int i = 0; i < 20000; i++)
        x += i * 0.5;
    sink = x;
}

static unsigned one_region(void)
{
    unsigned n = 0;
    if (strcmp(mode, "clause") == 0) {
#pragma omp parallel num_threads(k)
        {
#pragma omp single
            n = (unsigned)omp_get_num_threads();
            spin();
        }
    } else if (strcmp(mode, "nested") == 0) {
        unsigned inner = 0;
#pragma omp parallel
        {
#pragma omp parallel
            {
#pragma omp single
                {
#pragma omp critical
                    if ((unsigned)omp_get_num_threads() > inner)
                        inner = (unsigned)omp_get_num_threads();
                }
                spin();
            }
        }
        n = inner;
    } else if (strcmp(mode, "maxthr") == 0) {
        int m = omp_get_max_threads();
        char *done = calloc((size_t)m, 1);
#pragma omp parallel
        {
            /* Sloppy but common: thread t does slot t, assuming a team of m. */
            int t = omp_get_thread_num();
            if (t < m)
                done[t] = 1;
#pragma omp single
            n = (unsigned)omp_get_num_threads();
            spin();
        }
        for (int i = 0; i < m; i++)
            if (!done[i]) {
#pragma omp atomic
                missed++;
            }
        free(done);
    } else {
#pragma omp parallel
        {
#pragma omp single
            n = (unsigned)omp_get_num_threads();
            spin();
        }
    }
    return n;
}

static void *caller(void *arg)
{
    unsigned id = (unsigned)(size_t)arg;
    if (strcmp(mode, "setnum") == 0)
        omp_set_num_threads(k);
    pthread_barrier_wait(&start);
    tmin[id] = ~0u;
    for (unsigned r = 0; r < regions; r++) {
        unsigned n = one_region();
        tmin[id] = n < tmin[id] ? n : tmin[id];
        tmax[id] = n > tmax[id] ? n : tmax[id];
        tlast[id] = n;
        tones[id] += n == 1;
    }
    /* Keep calling (not recorded) until every caller is done: each
     * recorded region ran while all the callers were there. */
    __atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&finished, __ATOMIC_SEQ_CST) < ncallers)
        one_region();
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned nc = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
    regions = argc > 2 ? (unsigned)atoi(argv[2]) : 100;
    mode = argc > 3 ? argv[3] : "plain";
    k = argc > 4 ? atoi(argv[4]) : 1;
    if (nc < 1 || nc > MAX_CALLERS || regions < 1 || k < 1) {
        fprintf(stderr, "usage: omp_teams CALLERS(1-256) REGIONS [plain|setnum K|clause K|nested|maxthr]\n");
        return 2;
    }
    if (strcmp(mode, "nested") == 0)
        omp_set_max_active_levels(2);
    ncallers = nc;
    pthread_barrier_init(&start, NULL, nc);
    pthread_t t[MAX_CALLERS];
    if (nc == 1) {
        caller((void *)0);
    } else {
        for (unsigned i = 0; i < nc; i++)
            if (pthread_create(&t[i], NULL, caller, (void *)(size_t)i) != 0)
                return 1;
        for (unsigned i = 0; i < nc; i++)
            pthread_join(t[i], NULL);
    }
    unsigned lo = ~0u, hi = 0, ones = 0;
    for (unsigned i = 0; i < nc; i++) {
        printf("caller %u teams %u-%u last %u ones %u\n", i, tmin[i], tmax[i], tlast[i], tones[i]);
        ones += tones[i];
        lo = tmin[i] < lo ? tmin[i] : lo;
        hi = tmax[i] > hi ? tmax[i] : hi;
    }
    printf("all %u-%u max_threads %d\n", lo, hi, omp_get_max_threads());
    printf("slots_missed %lu\n", missed);
    printf("ones %u of %u\n", ones, nc * regions);
    return 0;
}
