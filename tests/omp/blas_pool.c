/* A BLAS library's own pool under the governor (tests/e2e/
 * t-omp-adaptive.sh, tests/omp/mkl.sh): BLIS 0.9 sizes it by one global
 * count (bli_thread_set_num_threads), MKL per thread
 * (mkl_set_num_threads_local); the governor sets either to the callers'
 * share before each call. Each call here is followed by the library's own
 * answer to "how many threads", the count the call ran with:
 * bli_thread_get_num_threads() (BLIS: while a pool runs every caller's
 * share is the same) or mkl_get_max_threads() (MKL: this thread's; its C
 * function is MKL_Get_Max_Threads, mkl_service.h's macros say).
 *
 *   blas_pool THREADS ROUNDS
 *
 * The main thread makes ROUNDS calls of cblas_dgemm (96x96) alone, then
 * THREADS threads make theirs at the same time (each starts recording
 * once all have made one call, and goes on until all are done, as
 * tests/helpers/omp_teams.c). Prints "alone LO-HI" and "pool LO-HI ones
 * N of M" (the counts after the recorded calls). Linked at test time
 * against the library (Debian's libblis.so.4, LD_LIBRARY_PATH picking
 * its pthreads or OpenMP build; MKL's libmkl_rt.so); declares the few
 * functions it needs itself (no blis.h, no mkl.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef long dim_t;   /* BLIS's dim_t: int64_t on x86-64 */
static dim_t (*bli_count)(void);   /* bli_thread_get_num_threads */
static int (*mkl_count)(void);     /* mkl_get_max_threads (its C name: MKL_Get_Max_Threads) */
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double al, const double *a,
                 int lda, const double *b, int ldb, double be, double *c, int ldc);

#define N 96
#define MAX_THREADS 64
static unsigned nthreads, rounds;
static unsigned arrived, finished;
static unsigned lo[MAX_THREADS + 1], hi[MAX_THREADS + 1], ones[MAX_THREADS + 1];
static pthread_barrier_t start;

static unsigned one_call(void)
{
    static _Thread_local double a[N * N], b[N * N], c[N * N];
    for (unsigned i = 0; i < N * N; i++) {
        a[i] = (double)(i % 7);
        b[i] = (double)(i % 5);
    }
    cblas_dgemm(101, 111, 111, N, N, N, 1.0, a, N, b, N, 0.0, c, N);   /* row major, no trans */
    long n = bli_count ? (long)bli_count() : (long)mkl_count();
    return n > 0 ? (unsigned)n : 1u;
}

static void record(unsigned id, unsigned n)
{
    lo[id] = n < lo[id] ? n : lo[id];
    hi[id] = n > hi[id] ? n : hi[id];
    ones[id] += n == 1;
}

static void calls_until_all(unsigned *count)
{
    __atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(count, __ATOMIC_SEQ_CST) < nthreads)
        one_call();
}

static void *caller(void *arg)
{
    unsigned id = (unsigned)(size_t)arg;
    pthread_barrier_wait(&start);
    one_call();
    calls_until_all(&arrived);
    for (unsigned r = 0; r < rounds; r++)
        record(id, one_call());
    calls_until_all(&finished);
    return NULL;
}

int main(int argc, char **argv)
{
    nthreads = argc > 1 ? (unsigned)atoi(argv[1]) : 8;
    rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 50;
    if (nthreads < 1 || nthreads > MAX_THREADS || rounds < 1) {
        fprintf(stderr, "usage: blas_pool THREADS(1-%d) ROUNDS\n", MAX_THREADS);
        return 2;
    }
    *(void **)&bli_count = dlsym(RTLD_DEFAULT, "bli_thread_get_num_threads");
    *(void **)&mkl_count = dlsym(RTLD_DEFAULT, "MKL_Get_Max_Threads");
    if (!bli_count && !mkl_count) {
        fprintf(stderr, "blas_pool: neither BLIS nor MKL is linked in\n");
        return 2;
    }
    for (unsigned i = 0; i <= MAX_THREADS; i++)
        lo[i] = ~0u;
    for (unsigned r = 0; r < rounds; r++)
        record(MAX_THREADS, one_call());
    printf("alone %u-%u\n", lo[MAX_THREADS], hi[MAX_THREADS]);
    pthread_barrier_init(&start, NULL, nthreads);
    pthread_t t[MAX_THREADS];
    for (unsigned i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, caller, (void *)(size_t)i) != 0)
            return 1;
    unsigned plo = ~0u, phi = 0, pones = 0;
    for (unsigned i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        plo = lo[i] < plo ? lo[i] : plo;
        phi = hi[i] > phi ? hi[i] : phi;
        pones += ones[i];
    }
    printf("pool %u-%u ones %u of %u\n", plo, phi, pones, nthreads * rounds);
    return 0;
}
