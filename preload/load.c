/* The load on the task's cores that is not this process's, and the CPU
 * quota of its cgroup (docs/omp-adaptive.md, "A lone caller gets more
 * threads only where they pay"). A caller gets a wider team only where
 * the cores are free to run it. A wider team on a core another thread
 * holds waits for its partner at every barrier (milliseconds per region),
 * and loses to a team of 1.
 *
 * Others' load = (busy time of the process's CPUs, from /proc/stat) -
 * (this process's CPU time, CLOCK_PROCESS_CPUTIME_ID), over the last
 * sample (at least SAMPLE_MS; one thread samples at a time, the others
 * read the last answer). /proc/stat counts in ticks (10 ms): over 100 ms
 * on 2 cores that is 5% of a core, enough to tell a spinning process.
 *
 * The first sample starts when the governor does (the process's start)
 * and may end FIRST_MS later: a program's first regions (numpy's first
 * product, 50-150 ms after Python starts) then already see a spinning
 * process. Over so short a sample each CPU's count is off by up to a
 * tick (a fifth of a core over 50 ms), so there a core counts as busy
 * only when others hold 3/4 of it, not 1/4. Before FIRST_MS nothing is
 * known: the cores count as free.
 *
 * A process that runs more callers than it has cores (a pool of teams of
 * 1) squeezes the others: a spinning process beside 8 callers on 2 cores
 * gets 2/9 of a core, and its usage would say the cores are free just
 * before the pool's last caller, alone, would need them (its team of 2
 * then waits for the spinner at every barrier: PyTorch's pool 0.75-0.85x
 * of OMP_NUM_THREADS=1 in some runs). Over such a sample others' demand
 * is estimated as the scheduler shares a CPU, by thread: others got u
 * cores, this process o with its C callers runnable, so others had about
 * C * u / o threads runnable (at most the cores). That is a lower bound
 * at best (threads that wake often get more than their share; a tick is
 * a tenth of a core over 100 ms on 2 CPUs): such a sample may raise the
 * busy cores, never lower them. They come down with the first sample
 * after the crowd (the pool's last callers), at most 100 ms later. */
#include "gov.h"

#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_MS 100
#define FIRST_MS 50
#define STAT_MAX (256 * 1024)   /* the cpu lines come first; the rest is not read */

static cpu_set_t g_cpus;                /* the process's CPUs, at start */
static long g_tick_ns = 10000000;       /* USER_HZ */
static _Atomic uint64_t g_next_sample;  /* ms */
static _Atomic unsigned g_busy;         /* cores others' load holds, at the last sample */
static _Atomic unsigned g_crowd;        /* the most callers since the last sample */
static uint64_t g_last_busy_ticks, g_last_own_ns, g_last_ns;   /* the sampling thread's */
static char g_stat[STAT_MAX];

static uint64_t mono_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ngo_load_init(void)
{
    CPU_ZERO(&g_cpus);
    if (sched_getaffinity(0, sizeof g_cpus, &g_cpus) != 0)
        CPU_ZERO(&g_cpus);
    long hz = sysconf(_SC_CLK_TCK);
    if (hz > 0)
        g_tick_ns = 1000000000L / hz;
}

/* The cores others' load holds: hundredths of a core @p pct over a
 * sample of @p ms (see the top). */
static unsigned busy_cores(unsigned pct, uint64_t ms)
{
    return (pct + (ms >= SAMPLE_MS ? 75 : 25)) / 100;
}

/* "cpuN user nice system idle iowait irq softirq steal ...": the busy
 * ticks (all but idle and iowait) of the line at @p s, when N is one of
 * the process's CPUs; else 0. */
static uint64_t busy_of_line(const char *s)
{
    char *end;
    unsigned long cpu = strtoul(s + 3, &end, 10);
    if (end == s + 3 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &g_cpus))
        return 0;
    uint64_t busy = 0;
    for (int f = 0; f < 8; f++) {
        const char *p = end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p)
            break;
        if (f != 3 && f != 4)   /* idle, iowait */
            busy += v;
    }
    return busy;
}

/* The busy ticks of the process's CPUs; 0 when /proc/stat cannot be read. */
static uint64_t busy_ticks(void)
{
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t len = 0;
    ssize_t n;
    while (len < sizeof g_stat - 1 && (n = read(fd, g_stat + len, sizeof g_stat - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    g_stat[len] = '\0';
    uint64_t busy = 0;
    for (char *line = g_stat; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, "cpu", 3) != 0)
            break;   /* past the cpu lines */
        if (line[3] >= '0' && line[3] <= '9')
            busy += busy_of_line(line);
    }
    return busy;
}

/* Others' demand, in cores: their usage @p others, unless this process
 * ran more than @p budget callers (@p crowd) and used @p mine (see the top). */
static double demand(double others, double mine, unsigned crowd, unsigned budget)
{
    if (crowd <= budget || mine <= 0 || others <= 0)
        return others;
    double d = others * crowd / mine;
    return d > others ? (d < budget ? d : budget) : others;
}

static void sample(unsigned budget)
{
    uint64_t t = mono_ns(CLOCK_MONOTONIC), own = mono_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t busy = busy_ticks();
    unsigned crowd = atomic_exchange_explicit(&g_crowd, 0, memory_order_relaxed);
    if (g_last_ns && busy >= g_last_busy_ticks && t > g_last_ns) {
        double span = (double)(t - g_last_ns);
        double all = (double)(busy - g_last_busy_ticks) * (double)g_tick_ns;
        double mine = (double)(own - g_last_own_ns) / span, others = all / span - mine;
        double d = demand(others, mine, crowd, budget);
        unsigned pct = d > 0 ? (unsigned)(d * 100) : 0;
        unsigned b = busy_cores(pct, (t - g_last_ns) / 1000000u);
        /* crowded: a lower bound, which may say others came, never that
         * they left (see the top) */
        unsigned was = atomic_load_explicit(&g_busy, memory_order_relaxed);
        if (crowd > budget && was > b)
            b = was;
        atomic_store_explicit(&g_busy, b, memory_order_relaxed);
    }
    g_last_busy_ticks = busy;
    g_last_own_ns = own;
    g_last_ns = t;
}

void ngo_load_start(void)
{
    sample(0);
    atomic_store(&g_next_sample, g_last_ns / 1000000u + FIRST_MS);
}

unsigned ngo_free_cores(uint64_t now, unsigned budget, unsigned callers)
{
    /* written only when the count grows: once per sample in a steady pool */
    if (callers > atomic_load_explicit(&g_crowd, memory_order_relaxed))
        atomic_store_explicit(&g_crowd, callers, memory_order_relaxed);
    uint64_t due = atomic_load_explicit(&g_next_sample, memory_order_relaxed);
    if (now >= due && atomic_compare_exchange_strong(&g_next_sample, &due, now + SAMPLE_MS))
        sample(budget);
    unsigned busy = atomic_load_explicit(&g_busy, memory_order_relaxed);
    return busy < budget ? budget - busy : 1;
}

/* ---------------------------------------------------------------- */
/* The cgroup's CPU quota                                             */
/* ---------------------------------------------------------------- */

/* The first line of @p path into @p buf (bounded); 0 when unreadable. */
static int read_line(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n > 0;
}

/* Cores a quota allows: floor(quota / period), at least 1; 0 = no quota. */
static unsigned quota_cores(long long quota, long long period)
{
    if (quota <= 0 || period <= 0)
        return 0;
    long long c = quota / period;
    return c < 1 ? 1 : c > 65536 ? 65536 : (unsigned)c;
}

/* One cgroup's quota: v2 cpu.max ("max 100000" or "50000 100000") under
 * /sys/fs/cgroup@dir, else v1 cpu.cfs_quota_us / cpu.cfs_period_us under
 * /sys/fs/cgroup/cpu@dir. */
static unsigned quota_of(const char *v2dir, const char *v1dir)
{
    char path[512], buf[64];
    long long q = 0, p = 0;
    if (v2dir) {
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", v2dir);
        if (read_line(path, buf, sizeof buf))
            return sscanf(buf, "%lld %lld", &q, &p) == 2 ? quota_cores(q, p) : 0;
    }
    if (v1dir) {
        snprintf(path, sizeof path, "/sys/fs/cgroup/cpu%s/cpu.cfs_quota_us", v1dir);
        if (read_line(path, buf, sizeof buf))
            q = atoll(buf);
        snprintf(path, sizeof path, "/sys/fs/cgroup/cpu%s/cpu.cfs_period_us", v1dir);
        if (read_line(path, buf, sizeof buf))
            p = atoll(buf);
    }
    return quota_cores(q, p);
}

/* The lowest quota on the path from @p dir up to the root (each level
 * limits its subtree); 0 = none. @p v2: which hierarchy. */
static unsigned lowest_quota(char *dir, int v2)
{
    unsigned low = 0;
    for (int depth = 0; depth < 32; depth++) {
        unsigned c = v2 ? quota_of(dir, NULL) : quota_of(NULL, dir);
        if (c && (!low || c < low))
            low = c;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            break;
        *slash = '\0';
    }
    return low;
}

/* Does the v1 controller list @p list ("cpu,cpuacct") name "cpu"? */
static int lists_cpu(const char *list)
{
    for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
        if (strncmp(p, "cpu", 3) == 0 && (p[3] == ',' || p[3] == '\0'))
            return 1;
    return 0;
}

unsigned ngo_quota_cores(void)
{
    char buf[4096];
    if (!read_line("/proc/self/cgroup", buf, sizeof buf))
        return 0;
    unsigned low = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        /* "0::/path" (v2), "N:cpu,cpuacct:/path" or "N:cpu:/path" (v1) */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c2 = '\0';
        int v2 = c1[1] == '\0';
        if (!v2 && !lists_cpu(c1 + 1))
            continue;
        char dir[512];
        snprintf(dir, sizeof dir, "%s", strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1);
        unsigned c = dir[0] ? lowest_quota(dir, v2) : (v2 ? quota_of("", NULL) : quota_of(NULL, ""));
        if (c && (!low || c < low))
            low = c;
    }
    return low;
}
