/* A fork from a thread inside an OpenMP region (tests/e2e/t-omp-adaptive.sh,
 * under a time limit): THREADS pthreads each run regions; inside one, a
 * team member forks. The child asks the runtime (through the governor,
 * which resets its table of callers in the child) for its count, starts a
 * fresh pthread that runs a region of its own, and exits; the parent
 * waits for it and finishes its regions.
 *
 *   omp_fork [THREADS [REGIONS]]     prints "child teams N" and "done" */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned regions = 50;

static void *child_region(void *arg)
{
    int *n = arg;
#pragma omp parallel
    {
#pragma omp single
        *n = omp_get_num_threads();
    }
    return NULL;
}

static void fork_here(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int n = 0, max = omp_get_max_threads();
        pthread_t t;
        if (pthread_create(&t, NULL, child_region, &n) == 0)
            pthread_join(t, NULL);
        printf("child teams %d max_threads %d\n", n, max);
        fflush(stdout);
        _exit(n >= 1 ? 0 : 1);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        printf("child failed\n");
}

static void *worker(void *arg)
{
    int forker = arg != NULL;
    for (unsigned r = 0; r < regions; r++) {
#pragma omp parallel
        {
            if (forker && r == regions / 2 && omp_get_thread_num() == omp_get_num_threads() - 1)
                fork_here();
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned nt = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    regions = argc > 2 ? (unsigned)atoi(argv[2]) : 50;
    if (nt < 1 || nt > 64 || regions < 2) {
        fprintf(stderr, "usage: omp_fork [THREADS 1-64 [REGIONS >= 2]]\n");
        return 2;
    }
    pthread_t t[64];
    for (unsigned i = 0; i < nt; i++)
        pthread_create(&t[i], NULL, worker, i == 0 ? (void *)1 : NULL);
    for (unsigned i = 0; i < nt; i++)
        pthread_join(t[i], NULL);
    printf("done\n");
    return 0;
}
