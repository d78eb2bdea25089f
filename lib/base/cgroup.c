/* What a process's cgroups say, read under fsroot like the rest of the
 * library: its Slurm job (the job level of Slurm's own layout: cgroup
 * v1 /slurm[_NODE]/uid_U/job_ID/..., v2 [/system.slice]/[NODE_]slurmstepd.scope/
 * job_ID/... or, Slurm 26.05's default, .../slurmstepd.scope/<SLUID>/...),
 * the CPUs its cpuset
 * cgroup allows (the job's or step's CPUs under Slurm's task/cgroup), and
 * its cgroup v2 CPU quota (cpu.max). One parser of /proc/PID/cgroup serves
 * all three: `check` (lib/inspect/) and --omp-guard (lib/task/task_env.c). */
#include "private/cgroup.h"

#include <stdio.h>
#include <string.h>

#define CGROUP_MAX (16 * 1024)
#define CGROUP_MOUNT "/sys/fs/cgroup"

/* Component @p k (0 = first) of cgroup path @p path ("/a/b/c"): its start
 * and length; -1 when the path has fewer. */
static int component(const char *path, unsigned k, const char **start, size_t *len)
{
    const char *c = path;
    for (unsigned i = 0;; i++) {
        if (*c != '/')
            return -1;
        c++;
        size_t n = strcspn(c, "/");
        if (i == k) {
            *start = c;
            *len = n;
            return n ? 0 : -1;
        }
        c += n;
    }
}

static int is(const char *c, size_t n, const char *word)
{
    return n == strlen(word) && strncmp(c, word, n) == 0;
}

static int has_prefix(const char *c, size_t n, const char *pfx)
{
    return n >= strlen(pfx) && strncmp(c, pfx, strlen(pfx)) == 0;
}

static int has_suffix(const char *c, size_t n, const char *sfx)
{
    size_t k = strlen(sfx);
    return n >= k && strncmp(c + n - k, sfx, k) == 0;
}

/* "<pfx><1-20 digits>" exactly; copies the digits into @p id. */
static int numbered(const char *c, size_t n, const char *pfx, char *id, size_t idlen)
{
    size_t p = strlen(pfx), d = n > p ? n - p : 0;
    if (!has_prefix(c, n, pfx) || !d || d > 20 || d >= idlen || strspn(c + p, "0123456789") < d)
        return -1;
    memcpy(id, c + p, d);
    id[d] = '\0';
    return 0;
}

/* 1 if @p c (length @p n) is a SLUID as Slurm prints it (print_sluid):
 * 's' and 13 characters of Crockford's base32, upper case. */
static int is_sluid(const char *c, size_t n)
{
    static const char b32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    if (n != NGI_SLUID_LEN || c[0] != 's')
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!strchr(b32, c[i]) || c[i] == '\0')
            return 0;
    return 1;
}

/* The v2 job level: job_ID (before 26.05, and with CgroupJobIdPaths=yes)
 * or the job's SLUID (26.05's default: "Slurm cgroup/v2 paths are now
 * constructed using the SLUID instead of the numeric job id"). */
int ngi_is_sluid(const char *s)
{
    return is_sluid(s, strlen(s));
}

static int v2_job_level(const char *c, size_t n, char *id, size_t len)
{
    if (numbered(c, n, "job_", id, len) == 0)
        return 0;
    if (!is_sluid(c, n) || n >= len)
        return -1;
    memcpy(id, c, n);
    id[n] = '\0';
    return 0;
}

/* The job of one cgroup line's path, only where Slurm itself puts a job:
 * v1 (task/cgroup, proctrack/cgroup, in each controller's hierarchy)
 * /slurm[_NODE]/uid_U/job_ID/... (26.05 too: its SLUID paths are v2's
 * only), v2 [/system.slice]/[NODE_]slurmstepd.scope/job_ID|SLUID/....
 * Those top levels are root's; below the job level the job's user may
 * create cgroups (named job_OTHER or like a SLUID too), so only that
 * position counts, and a path with ".." (a cgroup outside the reader's
 * namespace) none. */
/* The step level right below the job level @p k of @p path: "step_X"
 * (X: 0, batch, extern, interactive, ...) into @p step; "" when none. */
static void step_below(const char *path, unsigned k, char *step, size_t len)
{
    const char *c;
    size_t n;
    if (!step)
        return;
    step[0] = '\0';
    if (component(path, k + 1, &c, &n) == 0 && has_prefix(c, n, "step_") && n > 5 &&
        n - 5 < len) {
        memcpy(step, c + 5, n - 5);
        step[n - 5] = '\0';
    }
}

static int job_of_path(const char *path, int v2, char *id, size_t len, char *step,
                       size_t steplen)
{
    const char *c;
    size_t n;
    if (strstr(path, "/..") || component(path, 0, &c, &n) < 0)
        return -1;
    if (!v2) {
        const char *u;
        size_t un;
        char uid[24];
        if (!is(c, n, "slurm") && !has_prefix(c, n, "slurm_"))
            return -1;
        if (component(path, 1, &u, &un) < 0 || numbered(u, un, "uid_", uid, sizeof uid) < 0 ||
            component(path, 2, &c, &n) < 0 || numbered(c, n, "job_", id, len) < 0)
            return -1;
        step_below(path, 2, step, steplen);
        return 0;
    }
    unsigned k = is(c, n, "system.slice") ? 1 : 0;
    if (k && component(path, 1, &c, &n) < 0)
        return -1;
    if (!has_suffix(c, n, "slurmstepd.scope") || component(path, k + 1, &c, &n) < 0 ||
        v2_job_level(c, n, id, len) < 0)
        return -1;
    step_below(path, k + 1, step, steplen);
    return 0;
}

/* Which line names the job when several do: the v2 line, then v1
 * freezer (proctrack/cgroup), cpuset (task/cgroup), then any other. */
static int line_rank(const char *ctrls)
{
    if (!*ctrls)
        return 0;
    if (strstr(ctrls, "freezer"))
        return 1;
    if (strstr(ctrls, "cpuset"))
        return 2;
    return 3;
}

int ngi_cgroup_job_step(const char *fsroot, int pid, char *id, size_t len, char *step,
                        size_t steplen)
{
    char buf[CGROUP_MAX], *save = NULL, best[NGI_JOB_ID_MAX], best_step[32] = "";
    int best_rank = 99;
    if (ngi_read_pid_file(fsroot, pid, "cgroup", buf, sizeof buf) < 0)
        return -1;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, got[NGI_JOB_ID_MAX];
        char got_step[32];
        if (!c2)
            continue;
        *c2 = '\0';
        int rank = line_rank(c1 + 1);
        if (rank < best_rank &&
            job_of_path(c2 + 1, rank == 0, got, sizeof got, got_step, sizeof got_step) == 0) {
            best_rank = rank;
            memcpy(best, got, sizeof got);
            memcpy(best_step, got_step, sizeof got_step);
        }
    }
    if (best_rank == 99 || strlen(best) >= len)
        return -1;
    memcpy(id, best, strlen(best) + 1);
    if (step)
        ngi_strlcpy(step, best_step, steplen);
    return 0;
}

int ngi_cgroup_job(const char *fsroot, int pid, char *id, size_t len)
{
    return ngi_cgroup_job_step(fsroot, pid, id, len, NULL, 0);
}

/* 1 if the comma list @p ctrls names controller @p name. */
static int has_controller(const char *ctrls, const char *name)
{
    size_t n = strlen(name);
    for (const char *c = ctrls; c && *c; c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL)
        if (strncmp(c, name, n) == 0 && (c[n] == ',' || c[n] == '\0'))
            return 1;
    return 0;
}

/* Split one line "ID:CONTROLLERS:PATH" in place. Refuses paths that are
 * not absolute or climb with "..": we stay under the cgroup mount. */
static int split_line(char *line, char **ctrls, char **path)
{
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || c2[1] != '/' || strstr(c2 + 1, "/.."))
        return -1;
    *c2 = '\0';
    *ctrls = c1 + 1;
    *path = c2 + 1;
    return 0;
}

/* Call @p fn on each well-formed line of the process's /proc/PID/cgroup
 * until it returns 0; returns that 0, or -1 when none did. */
static int each_line(const char *fsroot, int pid,
                     int (*fn)(const char *fsroot, const char *ctrls, const char *path,
                               void *arg),
                     void *arg)
{
    char buf[CGROUP_MAX], *save = NULL, *ctrls, *path;
    if (ngi_read_pid_file(fsroot, pid, "cgroup", buf, sizeof buf) < 0)
        return -1;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (split_line(line, &ctrls, &path) == 0 && fn(fsroot, ctrls, path, arg) == 0)
            return 0;
    return -1;
}

/* ---------------- cpuset ---------------- */

/* Parse the first readable cpuset file DIR/NAME of @p names into @p set. */
static int read_cpuset(const char *fsroot, const char *dir, const char *const *names,
                       hwloc_bitmap_t set)
{
    char rel[4096], path[4096], buf[8192];
    for (; *names; names++) {
        if (snprintf(rel, sizeof rel, "%s/%s", dir, *names) >= (int)sizeof rel ||
            ngi_path(path, sizeof path, fsroot, rel) < 0 || ngi_read_bounded(path, buf, sizeof buf) < 0)
            continue;
        buf[strcspn(buf, "\n")] = '\0';
        if (ng_list_parse(buf, set, NG_MAX_PU_OS_INDEX, NULL, 0) == 0 && !hwloc_bitmap_iszero(set))
            return 0;
    }
    return -1;
}

/* The cpuset of a v1 cpuset hierarchy line or of the v2 line (empty
 * controller list); other lines do not answer. */
static int cpuset_of_line(const char *fsroot, const char *ctrls, const char *cg, void *arg)
{
    static const char *const v1[] = {"cpuset.effective_cpus", "cpuset.cpus", NULL};
    static const char *const v2[] = {"cpuset.cpus.effective", NULL};
    hwloc_bitmap_t set = arg;
    char dir[4096];
    if (has_controller(ctrls, "cpuset")) {
        if (snprintf(dir, sizeof dir, CGROUP_MOUNT "/cpuset%s", cg) >= (int)sizeof dir)
            return -1;
        return read_cpuset(fsroot, dir, v1, set);
    }
    if (*ctrls || snprintf(dir, sizeof dir, CGROUP_MOUNT "%s", cg) >= (int)sizeof dir)
        return -1;
    /* v2: a cgroup without the cpuset controller has its parent's CPUs. */
    for (;;) {
        if (read_cpuset(fsroot, dir, v2, set) == 0)
            return 0;
        char *slash = strrchr(dir, '/');
        if (!slash || slash <= dir + strlen(CGROUP_MOUNT))
            return -1;
        *slash = '\0';
    }
}

int ngi_cgroup_cpus(const char *fsroot, int pid, hwloc_bitmap_t set)
{
    return each_line(fsroot, pid, cpuset_of_line, set);
}

/* ---------------- cgroup v2 CPU quota ---------------- */

/* ceil(quota / period) of one cpu.max file ("max 100000", "150000 100000");
 * 0 when unlimited, absent or malformed. */
static unsigned cpu_max_file(const char *path)
{
    char buf[64];
    unsigned long long quota, period;
    if (ngi_read_bounded(path, buf, sizeof buf) < 0 ||
        sscanf(buf, "%llu %llu", &quota, &period) != 2 || period == 0 || quota == 0)
        return 0;
    unsigned long long cpus = (quota + period - 1) / period;
    return cpus > NG_MAX_THREADS ? NG_MAX_THREADS : (unsigned)cpus;
}

/* The smallest quota on the way up from the v2 line's cgroup to the root
 * ("/a/b", "/a", ""): at most one step per '/' of a bounded path. */
static int quota_of_line(const char *fsroot, const char *ctrls, const char *cg, void *arg)
{
    unsigned *cpus = arg;
    char rel[1100], dir[4096], file[4200];
    if (*ctrls || ngi_strlcpy(rel, strcmp(cg, "/") == 0 ? "" : cg, sizeof rel) < 0 ||
        ngi_path(dir, sizeof dir, fsroot, CGROUP_MOUNT) < 0)
        return -1;
    for (;;) {
        int n = snprintf(file, sizeof file, "%s%s/cpu.max", dir, rel);
        unsigned q = (n > 0 && (size_t)n < sizeof file) ? cpu_max_file(file) : 0;
        if (q && (!*cpus || q < *cpus))
            *cpus = q;
        char *slash = strrchr(rel, '/');
        if (!slash)
            return 0;
        *slash = '\0';
    }
}

int ngi_cgroup_cpu_quota(const char *fsroot, unsigned *cpus)
{
    *cpus = 0;
    each_line(fsroot, 0, quota_of_line, cpus);
    return *cpus ? 1 : 0;
}
