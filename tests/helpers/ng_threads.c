/* Test helper for `numaguard check` (tests/e2e/t-check.sh):
 *   ng_threads BUSY IDLE KIB
 * starts BUSY threads that spin, IDLE threads that block forever, touches
 * KIB KiB of heap memory (first touch decides its NUMA node), prints
 * "ready" on stdout and waits to be killed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;

static void *spin(void *arg)
{
    (void)arg;
    for (;;)
        sink++;
    return NULL;
}

static void *block(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int start(unsigned n, void *(*fn)(void *))
{
    for (unsigned i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, fn, NULL) != 0)
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
    if (busy > 256 || idle > 256 || kib > (1u << 22)) {
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
    if (start(busy, spin) < 0 || start(idle, block) < 0) {
        fprintf(stderr, "ng_threads: pthread_create failed\n");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
