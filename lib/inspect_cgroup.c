/* A process's cgroups, for `numaguard check`: its Slurm job (a job_<id>
 * path component, cgroup v1 .../slurm/uid_U/job_ID/... or v2
 * .../job_ID/...) and the CPUs its cpuset cgroup allows (the job's or
 * step's CPUs under Slurm's task/cgroup), read under fsroot like the rest
 * of the library. */
#include "inspect.h"

#include <stdio.h>
#include <string.h>

#define CGROUP_MAX (16 * 1024)

/* "job_<digits>" as a whole component of a cgroup path; copies the id. */
static int job_in_path(const char *path, char *id, size_t len)
{
    for (const char *c = strstr(path, "/job_"); c; c = strstr(c + 1, "/job_")) {
        const char *d = c + 5;
        size_t n = strspn(d, "0123456789");
        if (n && n < len && n <= 20 && (d[n] == '/' || d[n] == '\n' || d[n] == '\0')) {
            memcpy(id, d, n);
            id[n] = '\0';
            return 0;
        }
    }
    return -1;
}

int ng_cgroup_job(const char *fsroot, int pid, char *id, size_t len)
{
    char buf[CGROUP_MAX];
    if (ng_read_pid_file(fsroot, pid, "cgroup", buf, sizeof buf) < 0)
        return -1;
    return job_in_path(buf, id, len);
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

/* Parse the first readable cpuset file DIR/NAME of @p names into @p set. */
static int read_cpuset(const char *fsroot, const char *dir, const char *const *names,
                       hwloc_bitmap_t set)
{
    char rel[4096], path[4096], buf[8192];
    for (; *names; names++) {
        if (snprintf(rel, sizeof rel, "%s/%s", dir, *names) >= (int)sizeof rel ||
            ng_path(path, sizeof path, fsroot, rel) < 0 || ng_read_bounded(path, buf, sizeof buf) < 0)
            continue;
        buf[strcspn(buf, "\n")] = '\0';
        if (ng_list_parse(buf, set, NG_MAX_PU_OS_INDEX, NULL, 0) == 0 && !hwloc_bitmap_iszero(set))
            return 0;
    }
    return -1;
}

/* One /proc/PID/cgroup line "ID:CONTROLLERS:PATH": the cpuset of a v1
 * cpuset hierarchy line or of the v2 line (empty controller list). */
static int cpuset_of_line(const char *fsroot, char *line, hwloc_bitmap_t set)
{
    static const char *const v1[] = {"cpuset.effective_cpus", "cpuset.cpus", NULL};
    static const char *const v2[] = {"cpuset.cpus.effective", NULL};
    char dir[4096];
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || c2[1] != '/' || strstr(c2 + 1, "/.."))   /* stay under the cgroup mount */
        return -1;
    *c2 = '\0';
    if (has_controller(c1 + 1, "cpuset")) {
        if (snprintf(dir, sizeof dir, "/sys/fs/cgroup/cpuset%s", c2 + 1) >= (int)sizeof dir)
            return -1;
        return read_cpuset(fsroot, dir, v1, set);
    }
    if (c1[1] != '\0' || snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", c2 + 1) >= (int)sizeof dir)
        return -1;
    /* v2: a cgroup without the cpuset controller has its parent's CPUs. */
    for (;;) {
        if (read_cpuset(fsroot, dir, v2, set) == 0)
            return 0;
        char *slash = strrchr(dir, '/');
        if (!slash || slash <= dir + strlen("/sys/fs/cgroup"))
            return -1;
        *slash = '\0';
    }
}

int ng_cgroup_cpus(const char *fsroot, int pid, hwloc_bitmap_t set)
{
    char buf[CGROUP_MAX], *save = NULL;
    if (ng_read_pid_file(fsroot, pid, "cgroup", buf, sizeof buf) < 0)
        return -1;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (cpuset_of_line(fsroot, line, set) == 0)
            return 0;
    return -1;
}
