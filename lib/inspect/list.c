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
    if (ngi_path(path, sizeof path, fsroot, "/proc") < 0)
        return -1;
    DIR *d = opendir(path);
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

/* In the job: its cgroup (Slurm's layout) names job_ID; slurmstepd is
 * Slurm, not the job. */
static int in_job(const char *fsroot, int pid, const void *arg)
{
    char id[24];
    return ngi_cgroup_job(fsroot, pid, id, sizeof id) == 0 && strcmp(id, arg) == 0 &&
           !real_slurmstepd(fsroot, pid);
}

static int bad_job_id(const char *job_id, char *err, size_t errlen)
{
    size_t k = job_id ? strspn(job_id, "0123456789") : 0;
    if (k && !job_id[k] && k <= 20)
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
    if (list_pids(fsroot, skip_pid, in_job, job_id, pids, max, n) < 0)
        return ngi_fail(err, errlen, "cannot list processes under %s/proc",
                       fsroot && *fsroot ? fsroot : "");
    /* No cgroup names the job here: proctrack without cgroups (or none of
     * its processes runs here); whether other jobs have cgroups says
     * nothing about this one. */
    return *n ? 0 : NG_INSPECT_NO_JOB_CGROUPS;
}

/* Slurm's record is asked of scontrol (from PATH, as the caller), which
 * waits on slurmd: a daemon that does not answer must not hang check, so
 * the command is bounded (lib/base/run.c) and killed with its group. */
int ng_inspect_slurm_record(const char *job_id, unsigned timeout_ms, char *buf, size_t len,
                            char *err, size_t errlen)
{
    if (bad_job_id(job_id, err, errlen) < 0)
        return -1;
    if (len < 2)
        return ngi_fail(err, errlen, "no room for Slurm's record");
    char *argv[] = {"scontrol", "listpids", (char *)job_id, NULL};
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
 * the pid when JOBID is @p job_id, else 0 (header, other jobs, junk). */
static int record_line(const char *line, const char *job_id)
{
    char pid[24], job[32];
    if (sscanf(line, "%23s %31s", pid, job) != 2 || strspn(pid, "0123456789") != strlen(pid) ||
        strlen(pid) > 9 || strcmp(job, job_id) != 0)
        return 0;
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
        int pid = record_line(line, job_id);
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
