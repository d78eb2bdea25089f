/* Several external commands at once (check --job: one srun per node, at
 * most `parallel` running): each in its own process group with stdin from
 * /dev/null and an environment without SLURM_ and SRUN_ variables, its
 * stdout and stderr read through pipes with one poll for all, past its
 * deadline or its output bound SIGTERM to the group (srun cancels its
 * step) then SIGKILL, and every one reaped before ngi_run_many returns.
 * Moved out of run.c unchanged (one command under a keeper stays there);
 * its clock and base environment are run.c's (ngi_run_now_ms,
 * ngi_run_env). */
#include "private/base.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
/* How long a command that overran its time gets between SIGTERM and
 * SIGKILL: srun cancels its step on SIGTERM (slurmctld then forgets it);
 * past this it is killed with its group anyway. */
#define TERM_GRACE_MS 1000

/* Kill a command of ngi_run_many with its process group and reap it. An
 * srun's step lives under slurmd, not here: its group is all there is to
 * end on this host (srun itself forwards the kill to its step). */
static int many_kill(pid_t pid)
{
    int status = 0;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

/* The caller's environment without the variables that would steer a
 * nested srun into another job's shape (SLURM_*, SRUN_*: a check run
 * inside a job step carries its SLURM_NTASKS, SLURM_CPU_BIND, ...);
 * SLURM_CONF stays (which cluster). LC_ALL=C as for every command. */
static char **clean_env(void)
{
    char **env = ngi_run_env();
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; env[i]; i++) {
        const char *e = env[i];
        int drop = (strncmp(e, "SLURM_", 6) == 0 && strncmp(e, "SLURM_CONF=", 11) != 0) ||
                   strncmp(e, "SRUN_", 5) == 0;
        if (!drop)
            env[k++] = env[i];
    }
    env[k] = NULL;
    return env;
}

typedef struct many_state {
    pid_t pid;
    int fd[2];                  /* stdout, stderr; -1 once at EOF */
    unsigned long long t0, deadline, kill_at;
    int started, done;
} many_state;

static void many_read(ngi_many *c, many_state *s, int which, size_t max)
{
    char buf[4096];
    ssize_t n = read(s->fd[which], buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        close(s->fd[which]);
        s->fd[which] = -1;
        return;
    }
    char *dst = which ? c->err : c->res.out;
    size_t *len = which ? &c->err_len : &c->res.len;
    size_t take = (size_t)n;
    if (*len + take > max) {
        take = max - *len;
        if (!which && !c->res.too_big && !c->res.timed_out) {
            c->res.too_big = 1;
            s->kill_at = ngi_run_now_ms();   /* an output bound overrun ends it at once */
        }
    }
    memcpy(dst + *len, buf, take);
    *len += take;
    dst[*len] = '\0';
}

static int many_start(ngi_many *c, many_state *s, char **env, int nullfd, unsigned timeout_ms)
{
    char prog[PATH_MAX];
    int o[2] = {-1, -1}, e[2] = {-1, -1};
    s->fd[0] = s->fd[1] = -1;
    s->started = 1;
    if (ngi_find_program(c->argv[0], prog, sizeof prog) < 0) {
        c->res.not_found = 1;
        return s->done = 1, -1;
    }
    if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0) {
        for (int i = 0; i < 2; i++)
            if (o[i] >= 0)
                close(o[i]);
        return s->done = 1, -1;
    }
    s->t0 = ngi_run_now_ms();
    s->deadline = s->t0 + timeout_ms;
    gid_t groups[64];
    unsigned ng = c->ngroups < 64 ? c->ngroups : 64;
    for (unsigned i = 0; i < ng; i++)
        groups[i] = (gid_t)c->groups[i];
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        if (dup2(nullfd, 0) < 0 || dup2(o[1], 1) < 0 || dup2(e[1], 2) < 0)
            _exit(127);
        /* Root running a command as a job's owner: every id dropped, or
         * nothing runs. */
        if (c->as_user && (setgroups(ng, groups) < 0 || setgid((gid_t)c->gid) < 0 ||
                           setuid((uid_t)c->uid) < 0 || setuid(0) == 0)) {
            static const char msg[] = "cannot take the job owner's user id\n";
            (void)!write(2, msg, sizeof msg - 1);
            _exit(126);
        }
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        execve(prog, c->argv, env);
        _exit(127);
    }
    close(o[1]);
    close(e[1]);
    if (pid < 0) {
        close(o[0]);
        close(e[0]);
        return s->done = 1, -1;
    }
    setpgid(pid, pid);
    s->pid = pid;
    s->fd[0] = o[0];
    s->fd[1] = e[0];
    return 0;
}

/* Past its deadline (or its output bound): SIGTERM to the group, then,
 * TERM_GRACE_MS later, SIGKILL. Returns 1 once it has been reaped. */
static int many_tick(ngi_many *c, many_state *s, unsigned long long t)
{
    if (s->fd[0] < 0 && s->fd[1] < 0) {
        int status;
        pid_t w = waitpid(s->pid, &status, WNOHANG);
        if (w == s->pid) {
            kill(-s->pid, SIGKILL);   /* leftovers of its group */
            if (!c->res.timed_out && !c->res.too_big && WIFEXITED(status))
                c->res.exit_status = WEXITSTATUS(status);
            c->res.ms = (unsigned)(t - s->t0);
            return 1;
        }
    }
    if (!s->kill_at && t >= s->deadline) {
        c->res.timed_out = 1;
        s->kill_at = t + TERM_GRACE_MS;
        kill(-s->pid, SIGTERM);
    }
    if (s->kill_at && t >= s->kill_at) {
        c->res.ms = (unsigned)(t - s->t0);
        for (int i = 0; i < 2; i++)
            if (s->fd[i] >= 0) {
                close(s->fd[i]);
                s->fd[i] = -1;
            }
        many_kill(s->pid);
        return 1;
    }
    return 0;
}

/* The next moment something must happen (a deadline, a kill), capped at
 * 50 ms while some command has closed its output but not exited. */
static int many_wait_ms(const many_state *st, unsigned n, unsigned long long t)
{
    unsigned long long next = t + 1000;
    for (unsigned i = 0; i < n; i++) {
        const many_state *s = &st[i];
        if (!s->started || s->done)
            continue;
        unsigned long long at = s->kill_at ? s->kill_at : s->deadline;
        if (at < next)
            next = at;
        if (s->fd[0] < 0 && s->fd[1] < 0 && t + 50 < next)
            next = t + 50;
    }
    return next > t ? (int)(next - t) : 0;
}

/* One ngi_run_many call: its commands, their states and the poll set
 * (two descriptors for each command that may run at once). */
typedef struct many_run {
    ngi_many *cmds;
    many_state *st;
    struct pollfd *pfd;
    many_state **who;           /* whose descriptor pfd[k] is */
    char **env;
    int nullfd;
    unsigned n, parallel, timeout_ms;
    size_t max_out, max_err;
} many_run;

/* Every result starts empty, "not run" (exit status -1) and with its
 * buffers; returns -1 when one could not be allocated (each result is
 * still reset, so ngi_many_free is safe on all of them). */
static int many_results_init(many_run *r)
{
    int rc = 0;
    for (unsigned i = 0; i < r->n; i++) {
        ngi_many *c = &r->cmds[i];
        memset(&c->res, 0, sizeof c->res);
        c->res.exit_status = -1;
        c->res.limit_ms = r->timeout_ms;
        c->res.out = malloc(r->max_out + 1);
        c->err = malloc(r->max_err + 1);
        c->err_len = 0;
        if (c->res.out)
            c->res.out[0] = '\0';
        if (c->err)
            c->err[0] = '\0';
        if (!c->res.out || !c->err)
            rc = -1;
    }
    return rc;
}

/* Start commands while fewer than `parallel` run; a command that cannot
 * start (not found, no pipe, no fork) counts as finished at once. */
static void many_fill(many_run *r, unsigned *next, unsigned *running, unsigned *finished)
{
    while (*running < r->parallel && *next < r->n) {
        if (many_start(&r->cmds[*next], &r->st[*next], r->env, r->nullfd, r->timeout_ms) == 0)
            (*running)++;
        else
            (*finished)++;
        (*next)++;
    }
}

/* One poll over the open outputs of the first `next` commands, bounded by
 * the nearest deadline, then read what is ready. Returns -1 when poll
 * fails for a reason other than a signal. */
static int many_poll(many_run *r, unsigned next)
{
    nfds_t np = 0;
    for (unsigned i = 0; i < next; i++)
        for (int k = 0; k < 2 && !r->st[i].done; k++)
            if (r->st[i].fd[k] >= 0) {
                r->pfd[np] = (struct pollfd){.fd = r->st[i].fd[k], .events = POLLIN};
                r->who[np++] = &r->st[i];
            }
    int pr = poll(r->pfd, np, many_wait_ms(r->st, next, ngi_run_now_ms()));
    if (pr < 0)
        return errno == EINTR ? 0 : -1;
    for (nfds_t k = 0; pr > 0 && k < np; k++) {
        if (!r->pfd[k].revents)
            continue;
        many_state *s = r->who[k];
        int which = r->pfd[k].fd == s->fd[0] ? 0 : 1;
        many_read(&r->cmds[s - r->st], s, which, which ? r->max_err : r->max_out);
    }
    return 0;
}

/* Reap or kill what is due among the first `next` commands; returns how
 * many finished now. */
static unsigned many_reap(many_run *r, unsigned next)
{
    unsigned long long t = ngi_run_now_ms();
    unsigned done = 0;
    for (unsigned i = 0; i < next; i++) {
        many_state *s = &r->st[i];
        if (s->started && !s->done && s->pid > 0 && many_tick(&r->cmds[i], s, t)) {
            s->done = 1;
            done++;
        }
    }
    return done;
}

/* On an error midway, nothing is left running. */
static void many_abort(many_run *r)
{
    for (unsigned i = 0; r->st && i < r->n; i++) {
        many_state *s = &r->st[i];
        if (!s->started || s->done || s->pid <= 0)
            continue;
        for (int k = 0; k < 2; k++)
            if (s->fd[k] >= 0)
                close(s->fd[k]);
        many_kill(s->pid);
    }
}

/* Run them, at most `parallel` at once, until every one has finished. */
static int many_loop(many_run *r)
{
    unsigned next = 0, running = 0, finished = 0;
    while (finished < r->n) {
        many_fill(r, &next, &running, &finished);
        if (many_poll(r, next) < 0)
            return -1;
        unsigned done = many_reap(r, next);
        running -= done;
        finished += done;
    }
    return 0;
}

int ngi_run_many(ngi_many *cmds, unsigned n, unsigned parallel, unsigned timeout_ms,
                 size_t max_out, size_t max_err)
{
    size_t slots = 2 * (size_t)(parallel ? parallel : 1);
    many_run r = {.cmds = cmds, .n = n, .parallel = parallel, .timeout_ms = timeout_ms,
                  .max_out = max_out, .max_err = max_err};
    r.st = calloc(n ? n : 1, sizeof *r.st);
    r.pfd = calloc(slots, sizeof *r.pfd);
    r.who = calloc(slots, sizeof *r.who);
    r.env = clean_env();
    r.nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int rc = many_results_init(&r);
    if (!r.st || !r.pfd || !r.who || !r.env || r.nullfd < 0 || !parallel)
        rc = -1;
    if (rc == 0)
        rc = many_loop(&r);
    many_abort(&r);
    if (r.nullfd >= 0)
        close(r.nullfd);
    free(r.env);
    free(r.who);
    free(r.pfd);
    free(r.st);
    return rc;
}

void ngi_many_free(ngi_many *cmds, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        ngi_cmd_free(&cmds[i].res);
        free(cmds[i].err);
        cmds[i].err = NULL;
    }
}
