/* Which processes to inspect: a user's (/proc/PID owned by them) or a
 * Slurm job's (its cgroup, else SLURM_JOB_ID in its environment). */
#include "private/inspect.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* In the job: its cgroup names job_ID, or (cgroup elsewhere, e.g. a
 * process started by hand with the job's variables) SLURM_JOB_ID=ID.
 * slurmstepd sits in the job's cgroup too but is Slurm, not the job. */
static int in_job(const char *fsroot, int pid, const void *arg)
{
    char id[24] = "", comm[32];
    if (ngi_cgroup_job(fsroot, pid, id, sizeof id) < 0) {
        size_t len;
        char *blk = ngi_environ_read(fsroot, pid, &len);
        if (blk)
            ngi_environ_job(blk, len, id, sizeof id);
        free(blk);
    }
    if (strcmp(id, (const char *)arg) != 0)
        return 0;
    if (ngi_read_pid_file(fsroot, pid, "comm", comm, sizeof comm) < 0)
        return 0;
    return strcmp(comm, "slurmstepd\n") != 0;
}

int ng_inspect_list_job(const char *fsroot, const char *job_id, int skip_pid,
                        int *pids, unsigned max, unsigned *n, char *err, size_t errlen)
{
    size_t k = job_id ? strspn(job_id, "0123456789") : 0;
    *n = 0;
    if (!k || job_id[k] || k > 20) {
        char shown[NGI_SHOW_MAX * 4 + 8];
        ngi_show_bytes(job_id ? job_id : "", job_id ? strlen(job_id) : 0, shown, sizeof shown);
        return ngi_fail(err, errlen, "invalid job id '%s': expected a Slurm job number", shown);
    }
    if (list_pids(fsroot, skip_pid, in_job, job_id, pids, max, n) < 0)
        return ngi_fail(err, errlen, "cannot list processes under %s/proc",
                       fsroot && *fsroot ? fsroot : "");
    return 0;
}
