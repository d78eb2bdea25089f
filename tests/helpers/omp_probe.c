/* OpenMP probe for the launcher tests (tests/e2e/t-launchers.sh): one
 * parallel region whose threads spin for SECONDS, then each reports where
 * it was allowed to run and where it ran.
 *
 *   omp_probe [SECONDS]      default 0.3
 *
 * Prints:
 *   env <NAME>=<value>      OMP_NUM_THREADS OMP_PROC_BIND OMP_PLACES NUMAGUARD_CPUS
 *                           and the launchers' rank variables ("" when unset)
 *   threads=<n>             the team size
 *   thread <i> cpus=<list> cpu=<c>   affinity of OpenMP thread i, and the CPU it
 *                           was on at the end of the spin
 */
#include "bitlist.h"

#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cpu_isset(const void *set, int i)
{
    return CPU_ISSET(i, (const cpu_set_t *)set);
}

int main(int argc, char **argv)
{
    double spin = argc > 1 ? atof(argv[1]) : 0.3;
    if (spin < 0 || spin > 60)
        return 2;
    static const char *const vars[] = {
        "OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "NUMAGUARD_CPUS",
        "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_RANK", "LOCAL_RANK", NULL};
    for (const char *const *v = vars; *v; v++) {
        const char *val = getenv(*v);
        printf("env %s=%s\n", *v, val ? val : "");
    }
    volatile unsigned long sink = 0;
#pragma omp parallel
    {
        double end = now_s() + spin;
        while (now_s() < end)
            sink++;
        cpu_set_t set;
        CPU_ZERO(&set);
        sched_getaffinity(0, sizeof set, &set);
        int cpu = sched_getcpu();
#pragma omp critical
        {
            if (omp_get_thread_num() == 0)
                printf("threads=%d\n", omp_get_num_threads());
            printf("thread %d cpus=", omp_get_thread_num());
            print_bitlist(cpu_isset, &set, CPU_SETSIZE);
            printf(" cpu=%d\n", cpu);
        }
    }
    (void)sink;   /* read once: gcc 16 (Debian sid) rejects a volatile only ever written */
    return 0;
}
