/* The step's GPU exchange (spank/exchange.c): 512 tasks (processes, like
 * slurmstepd's) publish their GPUs and wait for each other. When one task
 * never arrives, every other one gives up after the timeout measured by
 * the clock (not 10x later), sleeping meanwhile (little CPU, read from
 * getrusage); when all arrive, everyone returns at once with every list. */
#include "tap.h"

#if __has_include(<slurm/spank.h>)
#include "../../../spank/exchange.c"

#include <sys/resource.h>
#include <sys/wait.h>

#define NTASKS 512
#define TIMEOUT_MS 3000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(const struct rusage *r)
{
    return (double)r->ru_utime.tv_sec + r->ru_utime.tv_usec / 1e6 +
           (double)r->ru_stime.tv_sec + r->ru_stime.tv_usec / 1e6;
}

/* Fork tasks 0..arrive-1, each publishing GPU (i % 8) and waiting; returns
 * how many saw everyone (exit 1) and fills wall time and children's CPU. */
static int run(ng_exchange *x, unsigned arrive, unsigned timeout_ms, double *wall, double *cpu,
               int *checked)
{
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    double t0 = now_s();
    for (unsigned i = 0; i < arrive; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            int g = (int)(i % 8), all = ng_exchange_all(x, i, &g, 1, timeout_ms);
            /* A task that saw everyone reads every list back. */
            for (unsigned t = 0; all && t < NTASKS; t++) {
                int got[NG_MAX_GPUS];
                unsigned n = 0;
                if (!ng_exchange_gpus(x, t, 8, got, &n) || n != 1 || got[0] != (int)(t % 8))
                    _exit(3);
            }
            _exit(all ? 1 : 0);
        }
        if (pid < 0)
            return -1;
    }
    int saw_all = 0, st;
    *checked = 1;
    while (wait(&st) > 0) {
        saw_all += WIFEXITED(st) && WEXITSTATUS(st) == 1;
        *checked &= WIFEXITED(st) && WEXITSTATUS(st) <= 1;
    }
    *wall = now_s() - t0;
    getrusage(RUSAGE_CHILDREN, &after);
    *cpu = cpu_s(&after) - cpu_s(&before);
    return saw_all;
}

int main(void)
{
    double wall, cpu;
    int checked;
    ng_exchange *x = ng_exchange_create(NTASKS);
    ok(x != NULL, "exchange for %d tasks", NTASKS);
    if (!x)
        return tap_done();
    int all = run(x, NTASKS - 1, TIMEOUT_MS, &wall, &cpu, &checked);
    ok(all == 0 && checked, "one task never arrives: all %d others time out (%d saw everyone)",
       NTASKS - 1, all);
    ok(wall >= TIMEOUT_MS / 1000.0 && wall < TIMEOUT_MS / 1000.0 + 2.0,
       "%d waiting tasks give up after %.2f s (timeout %.1f s)", NTASKS - 1, wall,
       TIMEOUT_MS / 1000.0);
    ok(cpu < 1.5, "they slept: %.2f CPU-seconds in all for %.2f s of waiting", cpu, wall);
    ng_exchange_destroy(x);

    x = ng_exchange_create(NTASKS);
    all = run(x, NTASKS, TIMEOUT_MS, &wall, &cpu, &checked);
    ok(all == NTASKS && checked, "all %d arrive: every task saw everyone and read every list (%d)",
       NTASKS, all);
    ok(wall < 2.0, "... and returned at once (%.2f s, %.2f CPU-seconds)", wall, cpu);
    ng_exchange_destroy(x);

    x = ng_exchange_create(2);
    double t0 = now_s();
    ok(ng_exchange_all(x, 0, NULL, 0, 0) == 0 && now_s() - t0 < 0.1, "timeout 0: returns at once");
    ok(ng_exchange_all(x, 5, NULL, 0, 1000) == 0, "task index out of range: refused");
    ng_exchange_destroy(x);
    ok(ng_exchange_create(0) == NULL && ng_exchange_create(4097) == NULL,
       "0 or more than 4096 tasks: no exchange");
    return tap_done();
}
#else
int main(void)
{
    printf("1..0 # SKIP Slurm headers (slurm/spank.h) not installed\n");
    return 0;
}
#endif
