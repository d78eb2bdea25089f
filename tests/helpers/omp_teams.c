/* Team sizes under --omp-guard=adaptive (tests/e2e/t-omp-adaptive.sh):
 * CALLERS threads (the main thread when 1) start outermost OpenMP regions
 * at the same time, and each region records omp_get_num_threads().
 *
 *   omp_teams CALLERS REGIONS [MODE [K]]
 *     MODE plain     #pragma omp parallel (the default)
 *          setnum K  each caller first calls omp_set_num_threads(K)
 *          clause K  num_threads(K) on every region
 *          clausemax num_threads(M) on every region, M = omp_get_max_threads()
 *                    asked once by the main thread before the callers start
 *                    (scikit-learn's pattern): "clausemax M" is printed
 *          tail MS   as plain; then, when every caller is done, the others
 *                    return and caller 0 goes on alone for MS ms of short
 *                    regions (the pool's last caller): its teams in the
 *                    second half of that time, "tail N ones M last L"
 *          nested    each region opens an inner region (nesting enabled):
 *                    the inner teams are reported
 *          maxthr    work sized by omp_get_max_threads() before each region,
 *                    one slot per thread number: checks every slot was done
 *          long MS   every region lasts MS ms (each team member spins until
 *                    then); caller I starts I*MS/2 ms after caller 0, so the
 *                    callers' regions overlap half-way; each caller also
 *                    prints "seq I T1 T2 ..." (its teams, in order). When
 *                    all are done, the others stay (idle) while caller 0
 *                    waits 250 ms (longer than the governor's window) and
 *                    runs one more region alone: "alone T"
 *          longnest MS  the same, each region's first thread opening one
 *                    short nested region as the region starts
 *          relay     the main thread runs REGIONS regions, then the callers
 *                    run theirs one after another (each thread starts when
 *                    the one before it has returned): never two at once,
 *                    as numpy's main thread then one pool worker
 *          start MS  the same as long, through the entry points of GCC
 *                    before 4.9: GOMP_parallel_start, the body called by
 *                    the caller itself, GOMP_parallel_end (libgomp, and
 *                    libomp's GOMP layer)
 *
 * Except in the long modes, every caller starts with unrecorded regions
 * until all have started one, and goes on (unrecorded) until all are
 * done, so each recorded region ran while all the callers were calling.
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
#include <time.h>

#define MAX_CALLERS 256

static unsigned regions;
static const char *mode = "plain";
static int k = 1;
static pthread_barrier_t start, after, gone;
static unsigned alone;
static unsigned tmin[MAX_CALLERS], tmax[MAX_CALLERS], tlast[MAX_CALLERS], tones[MAX_CALLERS];
#define MAX_SEQ 64
static unsigned tseq[MAX_CALLERS][MAX_SEQ];
static unsigned long missed;
static int clausemax;
static unsigned tail_n, tail_ones, tail_last;
static unsigned arrived, finished, ncallers;

static volatile double sink;

static void spin(void)
{
    double x = 0;
    for (int i = 0; i < 20000; i++)
        x += i * 0.5;
    sink = x;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* A region of k ms whatever its team: time, not work, sets its length
 * (the test asserts teams, not speed). */
struct lctx {
    double until;
    unsigned n;
    int nest;
};

static void long_body(void *p)
{
    struct lctx *c = p;
    if (omp_get_thread_num() == 0) {
        c->n = (unsigned)omp_get_num_threads();
        if (c->nest) {
#pragma omp parallel
            spin();
        }
    }
    while (now_s() < c->until)
        spin();
}

/* GCC's ABI before 4.9 (still in libgomp and libomp). */
void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned n);
void GOMP_parallel_end(void);

static int long_mode(void)
{
    return strcmp(mode, "long") == 0 || strcmp(mode, "longnest") == 0 ||
           strcmp(mode, "start") == 0;
}

static unsigned one_region(void)
{
    unsigned n = 0;
    if (long_mode()) {
        struct lctx c = {now_s() + k * 1e-3, 0, strcmp(mode, "longnest") == 0};
        if (strcmp(mode, "start") == 0) {
            GOMP_parallel_start(long_body, &c, 0);
            long_body(&c);
            GOMP_parallel_end();
        } else {
#pragma omp parallel
            long_body(&c);
        }
        n = c.n;
    } else if (strcmp(mode, "clause") == 0 || strcmp(mode, "clausemax") == 0) {
        int want = clausemax ? clausemax : k;
#pragma omp parallel num_threads(want)
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

/* This caller is counted in @count; unrecorded regions until every caller
 * is. */
static void regions_until_all(unsigned *count)
{
    __atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(count, __ATOMIC_SEQ_CST) < ncallers)
        one_region();
}

static void *caller(void *arg)
{
    unsigned id = (unsigned)(size_t)arg;
    if (strcmp(mode, "setnum") == 0)
        omp_set_num_threads(k);
    pthread_barrier_wait(&start);
    if (long_mode()) {
        sleep_ms((int)id * k / 2);
    } else {
        /* Unrecorded regions until every caller has started one: a
         * region is tens of microseconds, so the first thread scheduled
         * after the barrier could otherwise run a hundred of them alone
         * (rightly with all the cores) before the others arrive. */
        one_region();
        regions_until_all(&arrived);
    }
    tmin[id] = ~0u;
    for (unsigned r = 0; r < regions; r++) {
        unsigned n = one_region();
        if (r < MAX_SEQ)
            tseq[id][r] = n;
        tmin[id] = n < tmin[id] ? n : tmin[id];
        tmax[id] = n > tmax[id] ? n : tmax[id];
        tlast[id] = n;
        tones[id] += n == 1;
    }
    /* Keep calling (not recorded) until every caller is done: each
     * recorded region ran while all the callers were there. */
    regions_until_all(&finished);
    if (strcmp(mode, "tail") == 0 && id == 0) {
        /* The pool's last caller: alone from now on (the others return). */
        double t0 = now_s(), end = t0 + k * 1e-3, half = t0 + k * 0.5e-3;
        for (double t = t0; t < end; t = now_s()) {
            unsigned n = one_region();
            if (t >= half) {
                tail_n++;
                tail_ones += n == 1;
                tail_last = n;
            }
        }
    }
    if (long_mode()) {
        /* The others stay, outside any region; caller 0 is alone once
         * their last regions are older than the window. */
        pthread_barrier_wait(&after);
        if (id == 0) {
            sleep_ms(250);
            alone = one_region();
        }
        pthread_barrier_wait(&gone);
    }
    return NULL;
}

/* relay: one caller at a time, each recording all its regions. */
static void *relay_caller(void *arg)
{
    unsigned id = (unsigned)(size_t)arg;
    tmin[id] = ~0u;
    for (unsigned r = 0; r < regions; r++) {
        unsigned n = one_region();
        tmin[id] = n < tmin[id] ? n : tmin[id];
        tmax[id] = n > tmax[id] ? n : tmax[id];
        tlast[id] = n;
        tones[id] += n == 1;
    }
    return NULL;
}

static int relay(unsigned nc)
{
    for (unsigned r = 0; r < regions; r++)
        one_region();
    for (unsigned i = 0; i < nc; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, relay_caller, (void *)(size_t)i) != 0)
            return -1;
        pthread_join(t, NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned nc = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
    regions = argc > 2 ? (unsigned)atoi(argv[2]) : 100;
    mode = argc > 3 ? argv[3] : "plain";
    k = argc > 4 ? atoi(argv[4]) : 1;
    if (nc < 1 || nc > MAX_CALLERS || regions < 1 || k < 1) {
        fprintf(stderr, "usage: omp_teams CALLERS(1-256) REGIONS [plain|setnum K|clause K|clausemax|nested|maxthr|long MS|longnest MS|start MS|tail MS|relay]\n");
        return 2;
    }
    if (strcmp(mode, "nested") == 0)
        omp_set_max_active_levels(2);
    if (strcmp(mode, "clausemax") == 0) {
        clausemax = omp_get_max_threads();
        printf("clausemax %d\n", clausemax);
    }
    ncallers = nc;
    pthread_barrier_init(&start, NULL, nc);
    pthread_barrier_init(&after, NULL, nc);
    pthread_barrier_init(&gone, NULL, nc);
    pthread_t t[MAX_CALLERS];
    if (strcmp(mode, "relay") == 0) {
        if (relay(nc) != 0)
            return 1;
    } else if (nc == 1) {
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
        if (long_mode()) {
            printf("seq %u", i);
            for (unsigned r = 0; r < regions && r < MAX_SEQ; r++)
                printf(" %u", tseq[i][r]);
            printf("\n");
        }
        ones += tones[i];
        lo = tmin[i] < lo ? tmin[i] : lo;
        hi = tmax[i] > hi ? tmax[i] : hi;
    }
    if (long_mode())
        printf("alone %u\n", alone);
    if (strcmp(mode, "tail") == 0)
        printf("tail %u ones %u last %u\n", tail_n, tail_ones, tail_last);
    printf("all %u-%u max_threads %d\n", lo, hi, omp_get_max_threads());
    printf("slots_missed %lu\n", missed);
    printf("ones %u of %u\n", ones, nc * regions);
    return 0;
}
