/* The field reports' workload (docs/performance.md, issue 11): a main thread
 * that starts the OpenMP runtime and forks worker processes (a DataLoader),
 * and a pool of pthread workers that each run small OpenMP regions (an
 * environment pool).
 *
 *   omp_pool [WORKERS [SECONDS [CHILDREN [ELEMS [WARMUP]]]]]
 *                                        defaults 16 1.0 2 256 0
 *
 * ELEMS is each region's loop length (doubles in each worker's array). The
 * default, 256, is the field report's case: regions so small that a team
 * costs more than it saves. bench/adaptive.sh passes a larger one for its
 * single-caller rows, where the regions must be worth a team.
 * WARMUP > 0: the workers run regions, uncounted, until WARMUP seconds
 * after they were started, then count for SECONDS; the rate is the steps
 * counted over the time from that common start to the last join. With 0
 * each worker counts from its first region (after it, 1 step) for
 * SECONDS, the rate over the time from creating the workers to the last
 * join.
 *
 * Prints, one per line:
 *   main cpus=<list>                   affinity after the first OpenMP region
 *   child <i> cpus=<list>              each forked child (the affinity it inherited)
 *   worker <i> cpus=<list>             each pthread worker, after its first region
 *   steps=<n> rate=<steps/s> omp_threads=<omp_get_max_threads()>
 * A "step" is one OpenMP parallel-for over a small array. Built with
 * -fopenmp by the Makefile's rule for tests/helpers/omp_*.c. */
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 256
#define MAX_ELEMS (1L << 24)

static double seconds;
static long elems = 256;
static double warmup;
static double begin;   /* WARMUP > 0: when counting starts, for every worker */
static char lines[MAX_WORKERS][4096];
static unsigned long steps[MAX_WORKERS];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The calling thread's affinity as "<label> cpus=<list>" ("0-3,8") into
 * buf; thread-safe (workers call it concurrently). */
static void affinity_line(const char *label, char *buf, size_t len)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    int used = snprintf(buf, len, "%s cpus=", label);
    const char *sep = "";
    for (int i = 0; i < CPU_SETSIZE && used > 0 && (size_t)used < len; i++) {
        if (!CPU_ISSET(i, &set))
            continue;
        int j = i;
        while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, &set))
            j++;
        used += j > i ? snprintf(buf + used, len - (size_t)used, "%s%d-%d", sep, i, j)
                      : snprintf(buf + used, len - (size_t)used, "%s%d", sep, i);
        sep = ",";
        i = j;
    }
}

/* One OpenMP region over @p elems doubles; returns a value so it is not
 * optimised away. */
static double region(double *a)
{
    double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (long i = 0; i < elems; i++) {
        a[i] = a[i] * 0.999 + 1.0;
        sum += a[i];
    }
    return sum;
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(size_t)arg;
    double *a = calloc((size_t)elems, sizeof *a);
    if (!a)
        return (void *)1;
    volatile double sink = region(a);
    char label[32];
    snprintf(label, sizeof label, "worker %u", id);
    affinity_line(label, lines[id], sizeof lines[id]);
    unsigned long n = 1;
    double end = now_s() + seconds;
    if (warmup > 0) {
        while (now_s() < begin)
            sink += region(a);
        n = 0;
        end = begin + seconds;
    }
    while (now_s() < end) {
        for (int k = 0; k < 16; k++)
            sink += region(a);
        n += 16;
    }
    (void)sink;
    free(a);
    steps[id] = n;
    return NULL;
}

/* Fork children after the runtime started (a DataLoader): each reports the
 * affinity it inherited and exits. */
static int fork_children(unsigned n)
{
    fflush(stdout);
    for (unsigned i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return -1;
        if (pid == 0) {
            /* No OpenMP here: libgomp's thread pool does not survive fork
             * (a region would wait for threads the child does not have);
             * data-loader children run plain code. */
            char label[32], line[4096];
            snprintf(label, sizeof label, "child %u", i);
            affinity_line(label, line, sizeof line);
            printf("%s\n", line);
            fflush(stdout);
            _exit(0);
        }
        int st;
        if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned nw = argc > 1 ? (unsigned)atoi(argv[1]) : 16;
    seconds = argc > 2 ? atof(argv[2]) : 1.0;
    unsigned nc = argc > 3 ? (unsigned)atoi(argv[3]) : 2;
    elems = argc > 4 ? atol(argv[4]) : 256;
    warmup = argc > 5 ? atof(argv[5]) : 0;
    if (nw < 1 || nw > MAX_WORKERS || seconds <= 0 || seconds > 600 || nc > 64 || elems < 1 ||
        elems > MAX_ELEMS || !(warmup >= 0 && warmup <= 600)) {
        fprintf(stderr,
                "usage: omp_pool [WORKERS 1-256 [SECONDS [CHILDREN 0-64 [ELEMS 1-%ld [WARMUP 0-600]]]]]\n",
                MAX_ELEMS);
        return 2;
    }
    double *a = calloc((size_t)elems, sizeof *a);
    if (!a)
        return 1;
    volatile double sink = region(a); /* the runtime starts here */
    (void)sink;
    free(a);
    char line[4096];
    affinity_line("main", line, sizeof line);
    printf("%s\n", line);
    if (fork_children(nc) < 0) {
        fprintf(stderr, "omp_pool: a child failed\n");
        return 1;
    }
    pthread_t t[MAX_WORKERS];
    double t0 = now_s();
    begin = t0 + warmup;
    if (warmup > 0)
        t0 = begin;
    for (unsigned i = 0; i < nw; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(size_t)i) != 0)
            return 1;
    unsigned long total = 0;
    for (unsigned i = 0; i < nw; i++) {
        void *ret;
        pthread_join(t[i], &ret);
        if (ret) {
            fprintf(stderr, "omp_pool: out of memory for %ld elements\n", elems);
            return 1;
        }
        total += steps[i];
    }
    double dt = now_s() - t0;
    for (unsigned i = 0; i < nw; i++)
        printf("%s\n", lines[i]);
    printf("steps=%lu rate=%.0f omp_threads=%d\n", total, (double)total / dt,
           omp_get_max_threads());
    return 0;
}
