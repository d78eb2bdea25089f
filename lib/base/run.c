/* External commands, never trusted to return (the doctor's nvidia-smi,
 * rocm-smi, slurmd -G and slurmd -V; check's scontrol listpids): each runs
 * in its own process group with stdin from /dev/null, under a keeper
 * process (a child subreaper, below), its output read through a pipe with
 * a deadline; when it exits, past the deadline or past the output bound,
 * every process it started is killed (SIGKILL) and reaped, a setsid()
 * child included. A hung driver or slurmd makes the caller say so instead
 * of hanging the node's health check or the user's check. Several
 * commands at once (check --job): run_many.c. */
#include "private/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* What slurmd's HealthCheckProgram gets: no PATH at all. */
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define MAX_ENV 4096

int ngi_find_program(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = DEFAULT_PATH;
    if (strchr(name, '/'))
        return -1;            /* only bare names: a path is never looked up */
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        struct stat st;
        if (n > 0 && n + strlen(name) + 2 <= len) {
            snprintf(out, len, "%.*s/%s", (int)n, p, name);
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
                return 0;
        }
        p += n + (p[n] == ':');
    }
    out[0] = '\0';
    return -1;
}

/* Milliseconds of CLOCK_MONOTONIC (deadlines here and in run_many.c). */
unsigned long long ngi_run_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

/* The caller's environment with LC_ALL=C (the tools' text is parsed),
 * built before fork: the child only calls async-signal-safe functions.
 * Also run_many.c's starting point. */
char **ngi_run_env(void)
{
    size_t n = 0;
    while (environ && environ[n] && n < MAX_ENV)
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LC_ALL=", 7) != 0)
            env[k++] = environ[i];
    env[k++] = (char *)"LC_ALL=C";
    env[k] = NULL;
    return env;
}

/* What the child runs: a program, or a function of the library that may
 * block in a driver (NVML). */
typedef struct job {
    const char *prog;
    char *const *argv;
    char **env;
    int (*fn)(int fd, void *arg);
    void *arg;
} job;

/* In the tool's process: own process group, stdin /dev/null, both outputs
 * into the pipe, every other descriptor closed, then exec (or the
 * function). Never returns. */
static void child(const job *j, int wfd, int nullfd)
{
    setpgid(0, 0);
    if (dup2(nullfd, 0) < 0 || dup2(wfd, 1) < 0 || dup2(wfd, 2) < 0)
        _exit(127);
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    if (j->fn)
        _exit(j->fn(1, j->arg));
    execve(j->prog, j->argv, j->env);
    _exit(127);
}

/* ---- the keeper: every process the tool starts, found and killed ----
 *
 * A process group is not enough: a child that calls setsid() (a daemon, a
 * driver helper) leaves it, survives the group's SIGKILL and can hold the
 * output pipe open. So the tool runs under a keeper process that is a
 * child subreaper (PR_SET_CHILD_SUBREAPER): whatever the tool starts, and
 * whatever those start, stays in the keeper's subtree even after its
 * parent exits or it calls setsid(), because orphans are reparented to the
 * nearest subreaper instead of init. When the tool exits, or the caller
 * says stop (deadline, output bound, or the caller died: the control pipe
 * closes), the keeper walks /proc for its descendants (the ppid links),
 * SIGKILLs them all and reaps them, again until none is left (a process
 * forked between two walks is found by the next one). */

#define PROC_MAX_PIDS 65536

/* The parent pid of @p pid from /proc/PID/stat (after the ")" that ends
 * the command name, which may hold spaces and parentheses); -1 if gone. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (ngi_read_bounded(path, buf, sizeof buf) <= 0)
        return -1;
    const char *p = strrchr(buf, ')');
    char state;
    int ppid;
    return p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 ? (pid_t)ppid : -1;
}

/* The descendants of @p root into @p out (at most @p max): one pass over
 * /proc for every process's parent, then the ppid links followed down from
 * @p root until nothing is added. */
static unsigned descendants(pid_t root, pid_t *pid, pid_t *ppid, pid_t *out, unsigned max)
{
    unsigned n = 0, found = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) && n < max) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (*end || v <= 0)
            continue;
        pid[n] = (pid_t)v;
        ppid[n++] = parent_of((pid_t)v);
    }
    if (d)
        closedir(d);
    for (int grew = 1; grew;) {
        grew = 0;
        for (unsigned i = 0; i < n && found < max; i++) {
            int mine = ppid[i] == root;
            for (unsigned k = 0; !mine && ppid[i] > 0 && k < found; k++)
                mine = ppid[i] == out[k];
            if (mine && pid[i] != root) {
                out[found++] = pid[i];
                ppid[i] = -1;          /* taken */
                grew = 1;
            }
        }
    }
    return found;
}

/* Kill every descendant of this keeper and reap them (bounded: 2 s). */
static void kill_descendants(void)
{
    pid_t *pid = calloc(3 * (size_t)PROC_MAX_PIDS, sizeof *pid);
    unsigned long long until = ngi_run_now_ms() + 2000;
    for (;;) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        unsigned n = pid ? descendants(getpid(), pid, pid + PROC_MAX_PIDS,
                                       pid + 2 * PROC_MAX_PIDS, PROC_MAX_PIDS) : 0;
        if (!n || ngi_run_now_ms() >= until)
            break;
        for (unsigned i = 0; i < n; i++)
            kill(pid[2 * PROC_MAX_PIDS + i], SIGKILL);
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    free(pid);
}

/* The first process of the tool's PID namespace (as root, below): it dies
 * with the keeper (PR_SET_PDEATHSIG), starts the tool, reaps whatever is
 * left to it and exits with the tool's status (128 + the signal when the
 * tool was killed). When it ends, for whatever reason, the kernel kills
 * every other process of the namespace, a setsid() child included. */
static void ns_init(const job *j, int wfd, int nullfd)
{
    prctl(PR_SET_PDEATHSIG, (unsigned long)SIGKILL, 0UL, 0UL, 0UL);
    pid_t tool = fork();
    if (tool == 0)
        child(j, wfd, nullfd);
    close(wfd);
    close(nullfd);
    int st, code = 127;
    for (pid_t p; tool > 0 && ((p = wait(&st)) > 0 || errno == EINTR);)
        if (p == tool) {
            code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
    _exit(code);
}

/* The keeper's life: start the tool, wait for it to exit or for the caller
 * to close @p ctl, kill everything left, report the tool's wait status on
 * @p stfd. Never returns.
 *
 * What survives a SIGKILL of the caller: the keeper leaves the caller's
 * process group, so a supervisor killing that whole group (kill -9 -PGID,
 * slurmd ending its HealthCheckProgram) kills the caller only; its end
 * closes the control pipe and the keeper kills the rest. As root the tool
 * also runs in a PID namespace of its own (unshare(CLONE_NEWPID)) under
 * ns_init, which dies with the keeper: so even a SIGKILL of the keeper
 * itself leaves nothing behind. Where a namespace cannot be made (not
 * root, a container that forbids it) the subreaper walk alone remains. */
static void keeper(const job *j, int wfd, int nullfd, int ctl, int stfd)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL);   /* all five: valgrind 3.24 checks arg4 */
    setpgid(0, 0);
    int ns = unshare(CLONE_NEWPID) == 0;
    pid_t tool = fork();
    if (tool == 0 && ns)
        ns_init(j, wfd, nullfd);
    if (tool == 0)
        child(j, wfd, nullfd);
    close(wfd);
    close(nullfd);
    int status = 0, have = 0;
    while (tool > 0 && !have) {
        int st;
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0)
            if (p == tool)
                status = st, have = 1;
        struct pollfd pf = {.fd = ctl, .events = POLLIN};
        if (!have && poll(&pf, 1, 10) > 0)
            break;                     /* the caller says stop, or is gone */
    }
    kill_descendants();
    if (have && write(stfd, &status, sizeof status) != (ssize_t)sizeof status)
        _exit(1);
    _exit(0);
}

/* Wait for the keeper to report the tool's exit, until the deadline. 1
 * with *status, 0 at the deadline, -1 when it ended without a status. */
static int wait_status(int fd, unsigned long long deadline, int *status)
{
    for (;;) {
        unsigned long long t = ngi_run_now_ms();
        if (t >= deadline)
            return 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)(deadline - t));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            return 0;
        ssize_t n = read(fd, status, sizeof *status);
        if (n < 0 && errno == EINTR)
            continue;
        return n == (ssize_t)sizeof *status ? 1 : -1;
    }
}

/* The keeper has been told to stop (its control pipe is closed): reap it.
 * Its cleanup takes milliseconds; should it hang, it is killed itself. */
static void reap_keeper(pid_t pid)
{
    unsigned long long until = ngi_run_now_ms() + 3000;
    while (waitpid(pid, NULL, WNOHANG) == 0) {
        if (ngi_run_now_ms() >= until) {
            kill(pid, SIGKILL);
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
            return;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Read the pipe until EOF, the deadline or the bound. 1 = EOF. */
static int drain(int fd, unsigned long long deadline, size_t max_out, ngi_cmd *res)
{
    for (;;) {
        unsigned long long t = ngi_run_now_ms();
        if (t >= deadline)
            return res->timed_out = 1, 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)(deadline - t));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return res->timed_out = (rc == 0), 0;
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return 1;
        size_t take = (size_t)n;
        if (res->len + take > max_out) {
            take = max_out - res->len;
            res->too_big = 1;
        }
        memcpy(res->out + res->len, buf, take);
        res->len += take;
        res->out[res->len] = '\0';
        if (res->too_big)
            return 0;
    }
}

static void close_pipes(int p[][2], unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            if (p[i][k] >= 0)
                close(p[i][k]), p[i][k] = -1;
}

/* Fork the keeper of @p j; read the tool's output until EOF, the deadline
 * or the bound; then its exit status (until the deadline: a tool may close
 * its output and go on running); then stop the keeper, which kills all
 * that is left. */
static int run_job(job *j, unsigned timeout_ms, size_t max_out, ngi_cmd *res)
{
    enum { OUT, CTL, ST };
    int p[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    res->limit_ms = timeout_ms;
    res->out = malloc(max_out + 1);
    int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (!res->out || nullfd < 0 || pipe2(p[OUT], O_CLOEXEC) < 0 ||
        pipe2(p[CTL], O_CLOEXEC) < 0 || pipe2(p[ST], O_CLOEXEC) < 0) {
        if (nullfd >= 0)
            close(nullfd);
        close_pipes(p, 3);
        return -1;
    }
    res->out[0] = '\0';
    unsigned long long t0 = ngi_run_now_ms(), deadline = t0 + timeout_ms;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[OUT][0]), close(p[CTL][1]), close(p[ST][0]);
        keeper(j, p[OUT][1], nullfd, p[CTL][0], p[ST][1]);
    }
    close(p[OUT][1]), close(p[CTL][0]), close(p[ST][1]);
    p[OUT][1] = p[CTL][0] = p[ST][1] = -1;
    close(nullfd);
    if (pid < 0) {
        close_pipes(p, 3);
        return -1;
    }
    int status = 0, got = 0;
    if (drain(p[OUT][0], deadline, max_out, res) == 1)
        got = wait_status(p[ST][0], deadline, &status);
    if (got == 0 && !res->too_big)
        res->timed_out = 1;
    close_pipes(p, 3);                 /* CTL closed: the keeper kills the rest */
    reap_keeper(pid);
    if (got == 1 && !res->timed_out && !res->too_big && WIFEXITED(status))
        res->exit_status = WEXITSTATUS(status);
    res->ms = (unsigned)(ngi_run_now_ms() - t0);
    return 0;
}

int ngi_run_bounded(char *const argv[], unsigned timeout_ms, size_t max_out, ngi_cmd *res)
{
    char prog[PATH_MAX];
    memset(res, 0, sizeof *res);
    res->exit_status = -1;
    if (ngi_find_program(argv[0], prog, sizeof prog) < 0)
        return res->not_found = 1, -1;
    job j = {.prog = prog, .argv = argv, .env = ngi_run_env()};
    if (!j.env)
        return -1;
    int rc = run_job(&j, timeout_ms, max_out, res);
    free(j.env);
    return rc;
}

int ngi_run_child(int (*fn)(int fd, void *arg), void *arg, unsigned timeout_ms,
                  size_t max_out, ngi_cmd *res)
{
    memset(res, 0, sizeof *res);
    res->exit_status = -1;
    job j = {.fn = fn, .arg = arg};
    return run_job(&j, timeout_ms, max_out, res);
}

void ngi_cmd_free(ngi_cmd *res)
{
    free(res->out);
    res->out = NULL;
    res->len = 0;
}

void ngi_cmd_describe(const ngi_cmd *res, char *buf, size_t len)
{
    if (res->not_found)
        snprintf(buf, len, "not installed (not on PATH)");
    else if (res->timed_out && res->limit_ms % 1000 == 0)
        snprintf(buf, len, "did not answer within %u s (killed with its process group)",
                 res->limit_ms / 1000);
    else if (res->timed_out)
        snprintf(buf, len, "did not answer within %u ms (killed with its process group)",
                 res->limit_ms);
    else if (res->too_big)
        snprintf(buf, len, "printed more than %zu bytes (killed)", res->len);
    else if (res->exit_status != 0)
        snprintf(buf, len, "exit status %d", res->exit_status);
    else
        snprintf(buf, len, "exit status 0");
}
