/* What the governor's __kmpc_fork_call stub must keep (tests/e2e/
 * t-omp-adaptive.sh), built with gcc (libgomp) and clang (libomp):
 *
 *  - regions with 4, 8, 9 and 20 shared variables and two firstprivate
 *    values: clang passes each as one more variadic argument of
 *    __kmpc_fork_call (argc of them: 3 in registers, the rest on the
 *    caller's stack, copied by the stub). Every team member checks every
 *    value it was handed and writes through one of the pointers;
 *  - an unwinder (glibc's backtrace(), libgcc's DWARF unwinder) called
 *    from inside a region by the thread that started it reaches the
 *    function that opened the region, through the entry point the
 *    compiler called (the governor's when it is preloaded).
 *
 *  - with "exit" (libomp; libgomp aborts by itself there): a thread
 *    calls pthread_exit inside a 1-thread region it started. The forced
 *    unwind goes through the entry point's frame, and the thread, counted
 *    while inside, is taken off as it exits: the main thread's region
 *    while it is inside ("during", 1 of 2 cores) and right after it
 *    exited ("after", 2).
 *
 *   omp_args [CALLERS [ROUNDS [exit]]]   CALLERS threads (1: the main
 *                                 thread) each run ROUNDS rounds of the
 *                                 four regions
 *
 * Prints "shared N teams MIN-MAX bad B" per count (B: values a team
 * member found wrong, or writes lost), then "unwind caller F via SYM@OBJ
 * ..." (F: 1 when the frame of the function that opened the region was
 * found; the entry points' frames on the way, innermost first), on
 * aarch64 "fpwalk caller F via ..." (the same through the chain of frame
 * records), "exit
 * during N after M" (exit), "done". */
#include <execinfo.h>
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "unwind_via.h"

static unsigned long bad[4];
static unsigned tmin[4] = {~0u, ~0u, ~0u, ~0u}, tmax[4];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* V(i): the value of variable i in round r (distinct everywhere); W(i):
 * the same inside a region, from the base it was handed (a reference to
 * r there would be one more argument). */
#define V(i) (r * 1000L + (i) * 7L + 3L)
#define W(i) (o.base + (i) * 7L)

/* A region's results, one shared variable: V(0), members counted, wrong
 * values seen, the team size. */
struct out {
    long base;
    long hits;
    unsigned long wrong;
    unsigned team;
};

static void member(struct out *o, unsigned long w)
{
#pragma omp atomic
    o->hits++;
#pragma omp atomic
    o->wrong += w;
    if (omp_get_thread_num() == 0)
        o->team = (unsigned)omp_get_num_threads();
}

static void record(int which, const struct out *o)
{
    pthread_mutex_lock(&lock);
    bad[which] += o->wrong + (o->hits != (long)o->team);
    tmin[which] = o->team < tmin[which] ? o->team : tmin[which];
    tmax[which] = o->team > tmax[which] ? o->team : tmax[which];
    pthread_mutex_unlock(&lock);
}

/* 4 arguments: 3 shared values, the results. */
static void four(long r)
{
    long a0 = V(0), a1 = V(1), a2 = V(2);
    struct out o = {V(0), 0, 0, 0};
#pragma omp parallel
    {
        unsigned long w = 0;
        w += a0 != W(0); w += a1 != W(1); w += a2 != W(2);
        member(&o, w);
    }
    record(0, &o);
}

/* 8 arguments: 7 shared values, the results. */
static void eight(long r)
{
    long a0 = V(0), a1 = V(1), a2 = V(2), a3 = V(3), a4 = V(4), a5 = V(5), a6 = V(6);
    struct out o = {V(0), 0, 0, 0};
#pragma omp parallel
    {
        unsigned long w = 0;
        w += a0 != W(0); w += a1 != W(1); w += a2 != W(2); w += a3 != W(3); w += a4 != W(4);
        w += a5 != W(5); w += a6 != W(6);
        member(&o, w);
    }
    record(1, &o);
}

/* 9 arguments: 6 shared values, 2 firstprivate, the results. */
static void nine(long r)
{
    long a0 = V(0), a1 = V(1), a2 = V(2), a3 = V(3), a4 = V(4), a5 = V(5), f0 = V(100),
         f1 = V(101);
    struct out o = {V(0), 0, 0, 0};
#pragma omp parallel firstprivate(f0, f1)
    {
        unsigned long w = 0;
        w += a0 != W(0); w += a1 != W(1); w += a2 != W(2); w += a3 != W(3); w += a4 != W(4);
        w += a5 != W(5); w += f0 != W(100); w += f1 != W(101);
        member(&o, w);
    }
    record(2, &o);
}

/* 20 arguments: 19 shared values, the results. */
static void twenty(long r)
{
    long a0 = V(0), a1 = V(1), a2 = V(2), a3 = V(3), a4 = V(4), a5 = V(5), a6 = V(6),
         a7 = V(7), a8 = V(8), a9 = V(9), a10 = V(10), a11 = V(11), a12 = V(12), a13 = V(13),
         a14 = V(14), a15 = V(15), a16 = V(16), a17 = V(17), a18 = V(18);
    struct out o = {V(0), 0, 0, 0};
#pragma omp parallel
    {
        unsigned long w = 0;
        w += a0 != W(0); w += a1 != W(1); w += a2 != W(2); w += a3 != W(3); w += a4 != W(4);
        w += a5 != W(5); w += a6 != W(6); w += a7 != W(7); w += a8 != W(8); w += a9 != W(9);
        w += a10 != W(10); w += a11 != W(11); w += a12 != W(12); w += a13 != W(13);
        w += a14 != W(14); w += a15 != W(15); w += a16 != W(16); w += a17 != W(17);
        w += a18 != W(18);
        member(&o, w);
    }
    record(3, &o);
}

/* ---- unwinding from inside a region ---- */

static void *want;              /* a return address into opens_region's caller */
static int found = -1, fp_found = -1;
static char via[160], fp_via[160];

#if defined(__aarch64__)
/* The chain of AArch64 frame records (x29 -> {caller's x29, x30}), as a
 * profiler's frame-pointer call graph walks it: the other way from a
 * region to its caller, where DWARF unwinding stops at a runtime frame
 * whose unwind entry is empty (libomp's __kmp_invoke_microtask on
 * aarch64). Bounded by this thread's stack, each record above the last. */
static void fp_walk(void)
{
    pthread_attr_t a;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return;
    pthread_attr_getstack(&a, &lo, &size);
    pthread_attr_destroy(&a);
    uintptr_t bottom = (uintptr_t)lo, top = bottom + size;
    uintptr_t *fp = __builtin_frame_address(0);
    fp_found = 0;
    for (int i = 0; i < 64; i++) {
        uintptr_t at = (uintptr_t)fp;
        if (at < bottom || at + 16 > top || (at & 7) != 0)
            break;
        /* a return address with pointer authentication: the address bits */
        void *ra = (void *)(fp[1] & 0x0000ffffffffffffULL);
        if (ra == want)
            fp_found = 1;
        ng_unwind_via(fp_via, sizeof fp_via, ra);
        if (fp[0] <= at)
            break;
        fp = (uintptr_t *)fp[0];
    }
}
#else
static void fp_walk(void) { }
#endif

static __attribute__((noinline)) void look(void)
{
    void *frames[64];
    int n = backtrace(frames, 64);
    found = 0;
    for (int i = 0; i < n; i++) {
        if (frames[i] == want)
            found = 1;
        ng_unwind_via(via, sizeof via, frames[i]);
    }
    fp_walk();
}

static __attribute__((noinline)) void opens_region(void)
{
    want = __builtin_return_address(0);
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0)
            look();
    }
}

/* ---- a thread that exits inside its region ---- */

static sem_t inside, go;

static void *exits_inside(void *arg)
{
    (void)arg;
#pragma omp parallel num_threads(1)
    {
        sem_post(&inside);
        sem_wait(&go);
        pthread_exit(NULL);
    }
    return NULL;
}

static unsigned team_now(void)
{
    unsigned n = 0;
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0)
            n = (unsigned)omp_get_num_threads();
    }
    return n;
}

static void exit_inside(void)
{
    pthread_t t;
    sem_init(&inside, 0, 0);
    sem_init(&go, 0, 0);
    if (pthread_create(&t, NULL, exits_inside, NULL) != 0)
        return;
    sem_wait(&inside);
    unsigned during = team_now();
    sem_post(&go);
    pthread_join(t, NULL);
    printf("exit during %u after %u\n", during, team_now());
}

static unsigned rounds = 20;

static void *caller(void *arg)
{
    (void)arg;
    for (long r = 0; r < (long)rounds; r++) {
        four(r);
        eight(r);
        nine(r);
        twenty(r);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned nc = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
    rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 20;
    if (nc < 1 || nc > 64 || rounds < 1) {
        fprintf(stderr, "usage: omp_args [CALLERS(1-64) [ROUNDS [exit]]]\n");
        return 2;
    }
    void *warm[4];
    backtrace(warm, 4);   /* loads the unwinder before any region */
    if (nc == 1) {
        caller(NULL);
    } else {
        pthread_t t[64];
        for (unsigned i = 0; i < nc; i++)
            if (pthread_create(&t[i], NULL, caller, NULL) != 0)
                return 1;
        for (unsigned i = 0; i < nc; i++)
            pthread_join(t[i], NULL);
    }
    static const int counts[4] = {4, 8, 9, 20};
    for (int i = 0; i < 4; i++)
        printf("shared %d teams %u-%u bad %lu\n", counts[i], tmin[i], tmax[i], bad[i]);
    opens_region();
    printf("unwind caller %d via %s\n", found, via[0] ? via : "-");
    if (fp_found >= 0)
        printf("fpwalk caller %d via %s\n", fp_found, fp_via[0] ? fp_via : "-");
    if (argc > 3 && strcmp(argv[3], "exit") == 0)
        exit_inside();
    printf("done\n");
    return 0;
}
