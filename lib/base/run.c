/* External commands, never trusted to return (the doctor's nvidia-smi,
 * rocm-smi, slurmd -G and slurmd -V; check's scontrol listpids): each runs
 * in its own process group with stdin from /dev/null, its output read
 * through a pipe with a deadline; past the deadline, or past the output
 * bound, the whole group is killed (SIGKILL) and reaped. A hung driver or
 * slurmd makes the caller say so instead of hanging the node's health
 * check or the user's check. */
#include "private/base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static unsigned long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

/* The caller's environment with LC_ALL=C (the tools' text is parsed),
 * built before fork: the child only calls async-signal-safe functions. */
static char **child_env(void)
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

/* In the child: own process group, stdin /dev/null, both outputs into the
 * pipe, every other descriptor closed, then exec (or the function). Never
 * returns. */
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

/* Kill the command's whole group (grandchildren too) and reap it. */
static int kill_and_reap(pid_t pid)
{
    int status = 0;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

/* Read the pipe until EOF, the deadline or the bound. 1 = EOF. */
static int drain(int fd, unsigned long long deadline, size_t max_out, ngi_cmd *res)
{
    for (;;) {
        unsigned long long t = now_ms();
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

/* After EOF: wait for the exit until the deadline (a command may close
 * its output and go on running). */
static int wait_exit(pid_t pid, unsigned long long deadline, ngi_cmd *res)
{
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        /* WNOWAIT: the exited child stays a zombie, so its pid (the
         * group's id) cannot be reused while leftovers of its group are
         * killed; then it is reaped. */
        int w = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
        if (w == 0 && si.si_pid == pid)
            return kill_and_reap(pid);
        if (w < 0 && errno != EINTR)
            return -1;
        if (now_ms() >= deadline) {
            res->timed_out = 1;
            return kill_and_reap(pid);
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Fork @p j with its output into a pipe read until the deadline. */
static int run_job(job *j, unsigned timeout_ms, size_t max_out, ngi_cmd *res)
{
    res->limit_ms = timeout_ms;
    res->out = malloc(max_out + 1);
    int pfd[2] = {-1, -1}, nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (!res->out || nullfd < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
        if (nullfd >= 0)
            close(nullfd);
        return -1;
    }
    res->out[0] = '\0';
    unsigned long long t0 = now_ms(), deadline = t0 + timeout_ms;
    pid_t pid = fork();
    if (pid == 0)
        child(j, pfd[1], nullfd);
    close(pfd[1]);
    close(nullfd);
    if (pid < 0) {
        close(pfd[0]);
        return -1;
    }
    setpgid(pid, pid);             /* no race with the child's own call */
    int eof = drain(pfd[0], deadline, max_out, res);
    close(pfd[0]);
    int status = eof ? wait_exit(pid, deadline, res) : kill_and_reap(pid);
    if (!res->timed_out && !res->too_big && status >= 0 && WIFEXITED(status))
        res->exit_status = WEXITSTATUS(status);
    res->ms = (unsigned)(now_ms() - t0);
    return 0;
}

int ngi_run_bounded(char *const argv[], unsigned timeout_ms, size_t max_out, ngi_cmd *res)
{
    char prog[PATH_MAX];
    memset(res, 0, sizeof *res);
    res->exit_status = -1;
    if (ngi_find_program(argv[0], prog, sizeof prog) < 0)
        return res->not_found = 1, -1;
    job j = {.prog = prog, .argv = argv, .env = child_env()};
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
