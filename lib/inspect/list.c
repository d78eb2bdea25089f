/* Which processes to inspect: a user's (/proc/PID owned by them) or a
 * Slurm job's. A job's processes are what the kernel says, never what a
 * process says about itself: its cgroup in Slurm's own layout
 * (ngi_cgroup_job), or, where no cgroup names jobs (proctrack/linuxproc or
 * pgid without task/cgroup) or none names the job, Slurm's own record (`scontrol listpids`,
 * parsed here; the CLI runs it). SLURM_JOB_ID in a process's environment
 * is anybody's to set and is never read. Also each process's owner. */
#include "private/inspect.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A user-space process: its cmdline is not empty (kernel threads). */
static int user_space(const char *fsroot, int pid)
{
    char c[2];
    return ngi_read_pid_file(fsroot, pid, "cmdline", c, sizeof c) > 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

typedef int (*pid_filter)(const char *fsroot, int pid, const void *arg);

static int list_pids(const char *fsroot, int skip_pid, pid_filter keep, const void *arg,
                     int *pids, unsigned max, unsigned *n)
{
    char path[4096];
    *n = 0;
    DIR *d = ngi_opendir_path(path, sizeof path, fsroot, "/proc");
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL && *n < max;) {
        int pid = ngi_pid_of_name(e->d_name);
        if (pid > 0 && pid != skip_pid && user_space(fsroot, pid) && keep(fsroot, pid, arg))
            pids[(*n)++] = pid;
    }
    closedir(d);
    qsort(pids, *n, sizeof *pids, cmp_int);
    return 0;
}

static int owned_by(const char *fsroot, int pid, const void *arg)
{
    char path[4096];
    struct stat st;
    return ngi_proc_path(path, sizeof path, fsroot, pid, "") == 0 && lstat(path, &st) == 0 &&
           st.st_uid == *(const unsigned *)arg;
}

int ng_inspect_list_user(const char *fsroot, unsigned uid, int skip_pid,
                         int *pids, unsigned max, unsigned *n)
{
    return list_pids(fsroot, skip_pid, owned_by, &uid, pids, max, n);
}

/* ---------------- owners ---------------- */

int ngi_proc_owner(const char *fsroot, int pid, unsigned *uid, char *user, size_t len)
{
    char buf[4096];
    user[0] = '\0';
    if (ngi_read_pid_file(fsroot, pid, "status", buf, sizeof buf) < 0)
        return -1;
    const char *u = strstr(buf, "\nUid:");
    if (!u || ngi_status_uid(u + 5, uid) < 0)
        return -1;
    ngi_user_name(*uid, user, len);
    return 0;
}

void ngi_user_name(unsigned uid, char *user, size_t len)
{
    struct passwd pw, *res = NULL;
    char pwbuf[2048];
    user[0] = '\0';
    if (getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof pwbuf, &res) == 0 && res && res->pw_name)
        ngi_strlcpy(user, res->pw_name, len);
}

/* ---------------- jobs ---------------- */

/* Slurm's own slurmstepd, left out of a job's processes though it sits in
 * the job's cgroup: root's, named slurmstepd, and its executable is
 * slurmstepd (Debian installs it as slurmstepd-wlm; " (deleted)" after an
 * upgrade). A job's process that calls itself slurmstepd (prctl) keeps its
 * own executable, so it stays listed; a reader who may not read root's
 * exe link (not root) cannot be shown one root made up. */
static int real_slurmstepd(const char *fsroot, int pid)
{
    char comm[32], path[4096], exe[4096], user[8];
    unsigned uid;
    if (ngi_read_pid_file(fsroot, pid, "comm", comm, sizeof comm) < 0 ||
        strcmp(comm, "slurmstepd\n") != 0)
        return 0;
    if (ngi_proc_owner(fsroot, pid, &uid, user, sizeof user) < 0 || uid != 0)
        return 0;
    if (ngi_proc_path(path, sizeof path, fsroot, pid, "exe") < 0)
        return 0;
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n < 0)
        return errno == EACCES || errno == EPERM;
    exe[n] = '\0';
    const char *base = strrchr(exe, '/');
    return strncmp(base ? base + 1 : exe, "slurmstepd", 10) == 0;
}

/* ---- SLUIDs (Slurm 26.05) ---- */

/* The job number in a slurmstepd's title, "slurmstepd: [77.0]" (also
 * "[77.batch]", "[77.extern]", "[77.0 stepmgr]"): Slurm sets it
 * (setproctitle, _set_job_log_prefix) from the step it serves. 0, or -1
 * when the title has no job number (a step named by its SLUID alone). */
static int title_job(const char *title, char *job, size_t len)
{
    const char *b = strstr(title, ": [");
    if (!b)
        return -1;
    b += 3;
    size_t k = strspn(b, "0123456789");
    if (!k || k > 20 || k >= len || (b[k] != '.' && b[k] != ']'))
        return -1;
    memcpy(job, b, k);
    job[k] = '\0';
    return 0;
}

void ngi_sluid_map_build(const char *fsroot, ngi_sluid_map *map)
{
    char path[4096];
    map->n = 0;
    DIR *d = ngi_opendir_path(path, sizeof path, fsroot, "/proc");
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL && map->n < NGI_SLUID_MAP_MAX;) {
        int pid = ngi_pid_of_name(e->d_name);
        char id[NGI_JOB_ID_MAX], title[256];
        if (pid <= 0 || !real_slurmstepd(fsroot, pid) ||
            ngi_cgroup_job(fsroot, pid, id, sizeof id) < 0 || id[0] != 's')
            continue;
        long n = ngi_read_pid_file(fsroot, pid, "cmdline", title, sizeof title);
        if (n <= 0)
            continue;
        for (long i = 0; i < n; i++)   /* argv's NULs: one string */
            title[i] = title[i] ? title[i] : ' ';
        ngi_sluid_pair *p = &map->pair[map->n];
        if (title_job(title, p->job, sizeof p->job) == 0) {
            memcpy(p->sluid, id, sizeof p->sluid);
            map->n++;
        }
    }
    closedir(d);
}

const char *ngi_sluid_map_job(const ngi_sluid_map *map, const char *sluid)
{
    for (unsigned i = 0; i < map->n; i++)
        if (strcmp(map->pair[i].sluid, sluid) == 0)
            return map->pair[i].job;
    return NULL;
}

/* What in_job compares: the job asked for (digits or a SLUID) and, for a
 * number, the SLUIDs of this node's jobs. */
typedef struct job_match {
    const char *job_id;
    int unmapped;         /* some SLUID cgroup here has no known job number */
    ngi_sluid_map map;
} job_match;

/* In the job: its cgroup (Slurm's layout) names job_ID, or a SLUID that
 * is the job's (asked for by SLUID, or Slurm's own slurmstepd in that
 * cgroup serves the job number asked for); slurmstepd is Slurm, not the
 * job. */
static int in_job(const char *fsroot, int pid, const void *arg)
{
    job_match *m = (job_match *)arg;
    char id[NGI_JOB_ID_MAX];
    if (ngi_cgroup_job(fsroot, pid, id, sizeof id) < 0)
        return 0;
    const char *job = id[0] == 's' && m->job_id[0] != 's' ? ngi_sluid_map_job(&m->map, id) : id;
    if (!job)
        m->unmapped = 1;
    return job && strcmp(job, m->job_id) == 0 && !real_slurmstepd(fsroot, pid);
}

static int bad_job_id(const char *job_id, char *err, size_t errlen)
{
    size_t k = job_id ? strspn(job_id, "0123456789") : 0;
    if (k && !job_id[k] && k <= 20)
        return 0;
    if (job_id && ngi_is_sluid(job_id))
        return 0;
    char shown[NGI_SHOW_MAX * 4 + 8];
    ngi_show_bytes(job_id ? job_id : "", job_id ? strlen(job_id) : 0, shown, sizeof shown);
    return ngi_fail(err, errlen, "invalid job id '%s': expected a Slurm job number", shown);
}

int ng_inspect_list_job(const char *fsroot, const char *job_id, int skip_pid,
                        int *pids, unsigned max, unsigned *n, char *err, size_t errlen)
{
    *n = 0;
    if (bad_job_id(job_id, err, errlen) < 0)
        return -1;
    /* A job number may name a SLUID cgroup (26.05): which SLUID, Slurm's
     * slurmstepd of that cgroup says (a root process, its title). */
    job_match *m = calloc(1, sizeof *m);
    if (!m)
        return ngi_fail(err, errlen, "out of memory");
    m->job_id = job_id;
    if (job_id[0] != 's')
        ngi_sluid_map_build(fsroot, &m->map);
    int rc = list_pids(fsroot, skip_pid, in_job, m, pids, max, n);
    int unmapped = m->unmapped;
    free(m);
    if (rc < 0)
        return ngi_fail(err, errlen, "cannot list processes under %s/proc",
                       fsroot && *fsroot ? fsroot : "");
    /* No cgroup names the job here: proctrack without cgroups (or none of
     * its processes runs here); whether other jobs have cgroups says
     * nothing about this one. */
    if (*n)
        return 0;
    return unmapped ? NG_INSPECT_UNKNOWN_SLUIDS : NG_INSPECT_NO_JOB_CGROUPS;
}

/* Slurm's record is asked of scontrol (from PATH, as the caller), which
 * waits on slurmd: a daemon that does not answer must not hang check, so
 * the command is bounded (lib/base/run.c) and killed with its group. */
int ng_inspect_slurm_record(const char *job_id, unsigned timeout_ms, char *buf, size_t len,
                            char *err, size_t errlen)
{
    if (bad_job_id(job_id, err, errlen) < 0)
        return -1;
    if (job_id[0] == 's')
        return ngi_fail(err, errlen, "scontrol listpids takes a job number, not a SLUID");
    if (len < 2)
        return ngi_fail(err, errlen, "no room for Slurm's record");
    /* A step on a host with several slurmd (Slurm's MULTIPLE_SLURMD: test
     * clusters) names its node in SLURMD_NODENAME; scontrol would pick one
     * of the host's slurmd "more-or-less at random" without it. The
     * caller's own environment, not a process's claim about a job. */
    const char *node = getenv("SLURMD_NODENAME");
    if (node && (!*node || strlen(node) >= NG_NODE_NAME_MAX ||
                 strspn(node, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                     strlen(node)))
        node = NULL;
    char *argv[] = {"scontrol", "listpids", (char *)job_id, (char *)node, NULL};
    ngi_cmd res;
    int rc = ngi_run_bounded(argv, timeout_ms, len - 1, &res);
    buf[0] = '\0';
    if (res.out)
        memcpy(buf, res.out, res.len + 1);
    ngi_cmd_free(&res);
    if (rc < 0)
        return ngi_fail(err, errlen, "cannot run scontrol: %s",
                        res.not_found ? strerror(ENOENT) : "cannot start it");
    if (res.timed_out || res.too_big) {
        char what[160];
        ngi_cmd_describe(&res, what, sizeof what);
        return ngi_fail(err, errlen, "scontrol %s", what);
    }
    if (res.exit_status == 0)
        return 0;
    /* scontrol's own words (first line), escaped: "Job 7 does not exist
     * on this node". */
    char first[256];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(buf, "\n"), buf);
    ng_text_escape(first[0] ? first : "failed", err, errlen);
    return -1;
}

/* One line of `scontrol listpids`: "PID JOBID STEPID LOCALID GLOBALID";
 * the pid when JOBID is @p job_id (and its STEPID into @p step when not
 * NULL), else 0 (header, other jobs, junk). */
static int record_line(const char *line, const char *job_id, char *step, size_t steplen)
{
    char pid[24], job[32], st[32] = "";
    if (sscanf(line, "%23s %31s %31s", pid, job, st) < 2 ||
        strspn(pid, "0123456789") != strlen(pid) || strlen(pid) > 9 || strcmp(job, job_id) != 0)
        return 0;
    if (step)
        ngi_strlcpy(step, st, steplen);
    return atoi(pid);
}

int ng_inspect_list_job_record(const char *fsroot, const char *job_id, const char *record,
                               int skip_pid, int *pids, unsigned max, unsigned *n,
                               char *err, size_t errlen)
{
    *n = 0;
    if (bad_job_id(job_id, err, errlen) < 0)
        return -1;
    if (!record)
        return ngi_fail(err, errlen, "no record of Slurm's given");
    for (const char *l = record; *l && *n < max;) {
        size_t len = strcspn(l, "\n");
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
        int pid = record_line(line, job_id, NULL, 0);
        int dup = 0;
        for (unsigned i = 0; i < *n; i++)
            dup |= pids[i] == pid;
        /* Gone since, a kernel thread, slurmstepd or the caller: not shown. */
        if (pid > 0 && pid != skip_pid && !dup && user_space(fsroot, pid) &&
            !real_slurmstepd(fsroot, pid))
            pids[(*n)++] = pid;
        l += len + (l[len] == '\n');
    }
    qsort(pids, *n, sizeof *pids, cmp_int);
    return 0;
}

/* ---- a step left out (check's own) ---- */

/* The step of @p pid: its cgroup's step level, or its record line's STEPID. */
static void step_of(const char *fsroot, const char *job_id, const char *record, int pid,
                    char *step, size_t len)
{
    char id[NGI_JOB_ID_MAX];
    step[0] = '\0';
    if (!record) {
        ngi_cgroup_job_step(fsroot, pid, id, sizeof id, step, len);
        return;
    }
    for (const char *l = record; *l;) {
        size_t n = strcspn(l, "\n");
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), l);
        if (record_line(line, job_id, step, len) == pid)
            return;
        step[0] = '\0';
        l += n + (l[n] == '\n');
    }
}

unsigned ng_inspect_drop_step(const char *fsroot, const char *job_id, const char *step,
                              const char *record, int *pids, unsigned n)
{
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++) {
        char st[32];
        step_of(fsroot, job_id, record, pids[i], st, sizeof st);
        if (!step || !*step || strcmp(st, step) != 0)
            pids[k++] = pids[i];
    }
    return k;
}
