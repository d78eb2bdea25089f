/* Test helper for `numaguard check` (tests/e2e/t-check.sh):
 *   ng_threads BUSY IDLE KIB
 * starts BUSY threads that spin, IDLE threads that block forever, touches
 * KIB KiB of heap memory (first touch decides its NUMA node), prints
 * "ready" on stdout and waits to be killed.
 *
 * "ready" means settled: every thread that does not spin (the IDLE ones
 * and, with BUSY > 0, the main thread too) is already asleep in pause(),
 * so a check run the moment "ready" shows counts exactly BUSY runnable
 * threads. A thread just created is runnable until it first runs, and a
 * thread that printed is runnable until it reaches pause(): under load
 * (a 2-core CI VM, spinners on the same CPU) a check could see those as
 * runnable. So with BUSY > 0 the first spinner prints, once the others
 * sleep (its own state is R before and after). With BUSY = 0 the main
 * thread prints after the IDLE threads sleep, and is runnable for the few
 * instructions up to pause(): tests/e2e/lib.sh's start waits for that. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#define MAX_THREADS 256

static volatile unsigned long sink;
static unsigned n_idle;
static pid_t idle_tid[MAX_THREADS], main_tid;
static atomic_uint n_blocking;        /* IDLE threads past their last step before pause() */
static atomic_int main_blocking;      /* the main thread likewise */

static pid_t tid_now(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* 1 if thread @p tid of this process sleeps (state S in its stat). */
static int asleep(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');   /* the name may hold spaces and ')' */
    return p && p[1] == ' ' && p[2] == 'S';
}

/* Wait until every IDLE thread (and, if @p with_main, the main thread)
 * has announced it blocks and sleeps. Bounded (30 s): a helper that never
 * settles still prints "ready", and the test's assertion says what it saw. */
static void wait_settled(int with_main)
{
    struct timespec ms = {0, 1000 * 1000};
    for (unsigned tries = 0; tries < 30000; tries++) {
        int all = atomic_load(&n_blocking) == n_idle &&
                  (!with_main || atomic_load(&main_blocking));
        for (unsigned i = 0; all && i < n_idle; i++)
            all = asleep(idle_tid[i]);
        if (all && (!with_main || asleep(main_tid)))
            return;
        nanosleep(&ms, NULL);
    }
}

static void say_ready(void)
{
    printf("ready\n");
    fflush(stdout);
}

static void *spin(void *arg)
{
    if (arg)                       /* the first spinner: the one that says ready */
        wait_settled(1), say_ready();
    for (;;)
        sink++;
    return NULL;
}

static void *block(void *arg)
{
    idle_tid[(uintptr_t)arg] = tid_now();
    atomic_fetch_add(&n_blocking, 1);
    for (;;)
        pause();
    return NULL;
}

static int start(unsigned n, void *(*fn)(void *), int spinners)
{
    for (unsigned i = 0; i < n; i++) {
        pthread_t t;
        /* block: its slot; spin: non-NULL for the first one only */
        void *arg = spinners ? (void *)(uintptr_t)(i == 0) : (void *)(uintptr_t)i;
        if (pthread_create(&t, NULL, fn, arg) != 0)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: ng_threads BUSY IDLE KIB\n");
        return 2;
    }
    unsigned busy = (unsigned)atoi(argv[1]), idle = (unsigned)atoi(argv[2]);
    size_t kib = (size_t)atol(argv[3]);
    if (busy > MAX_THREADS || idle > MAX_THREADS || kib > (1u << 22)) {
        fprintf(stderr, "ng_threads: at most 256 threads of each kind and 4 GiB\n");
        return 2;
    }
    /* malloc below the mmap threshold lands on the heap, which is the
     * line `numaguard check` reads the policy from. */
    for (size_t done = 0; done < kib; done += 64) {
        char *p = malloc(64 * 1024 - 64);
        if (!p)
            return 1;
        memset(p, 1, 64 * 1024 - 64);
    }
    main_tid = tid_now();
    n_idle = idle;
    if (start(idle, block, 0) < 0 || start(busy, spin, 1) < 0) {
        fprintf(stderr, "ng_threads: pthread_create failed\n");
        return 1;
    }
    if (busy == 0)
        wait_settled(0), say_ready();
    atomic_store(&main_blocking, 1);
    for (;;)
        pause();
}
