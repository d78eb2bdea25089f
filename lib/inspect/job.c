/* A whole Slurm job, from any host with the Slurm client (a login node):
 * which nodes it has and who owns it (`scontrol -d show job`), then one
 * bounded command per node through Slurm (`srun --jobid=J --overlap -N1
 * -n1 -w NODE CMD`), at most N at a time, each killed with its process
 * group past its time. `numaguard check --job` runs `numaguard check
 * --job J --local --json` this way and shows the answers as one report
 * (tools/cmd_check_job.c). Only the job's owner or root learns anything
 * about the job: for anyone else the query says what it says for a job
 * that does not exist. */
#include "private/hostlist.h"
#include "private/inspect.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Most bytes of `scontrol -d show job` read (a job's record is a few KiB;
 * a long node list or command line more). */
#define SHOW_MAX (256 * 1024)

/* Keys read from the record, each at the start of a line (after the
 * indentation) and exactly once: a job name or comment with a newline
 * and "UserId=..." after it cannot pass for the real line, it makes the
 * record ambiguous and refused. */
typedef struct record_keys {
    const char *job_id, *user_id, *state, *nodes, *sluid;
    size_t job_id_len, user_id_len, state_len, nodes_len, sluid_len;
    int dup;
} record_keys;

static void take(const char *line, const char *key, const char **v, size_t *vlen, int *dup)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0)
        return;
    if (*v)
        *dup = 1;
    *v = line + k;
    *vlen = strcspn(*v, " \n");
}

static void read_keys(const char *rec, record_keys *r)
{
    memset(r, 0, sizeof *r);
    for (const char *l = rec; *l;) {
        const char *s = l + strspn(l, " ");
        take(s, "JobId=", &r->job_id, &r->job_id_len, &r->dup);
        take(s, "UserId=", &r->user_id, &r->user_id_len, &r->dup);
        take(s, "JobState=", &r->state, &r->state_len, &r->dup);
        take(s, "NodeList=", &r->nodes, &r->nodes_len, &r->dup);
        take(s, "SLUID=", &r->sluid, &r->sluid_len, &r->dup);
        l += strcspn(l, "\n");
        l += *l == '\n';
    }
}

/* "name(1000)": the number in parentheses. */
static int user_uid(const char *v, size_t n, unsigned *uid)
{
    const char *open = memchr(v, '(', n);
    if (!open || v[n - 1] != ')')
        return -1;
    char num[16];
    size_t d = (size_t)(v + n - 1 - (open + 1));
    if (!d || d >= sizeof num)
        return -1;
    memcpy(num, open + 1, d);
    num[d] = '\0';
    long u = ng_parse_uint(num, 0xfffffffeu);
    if (u < 0)
        return -1;
    *uid = (unsigned)u;
    return 0;
}

static int add_node(const char *name, void *ctx)
{
    ng_slurm_job *job = ctx;
    if (job->n_nodes >= NG_JOB_MAX_NODES || strlen(name) >= NG_NODE_NAME_MAX)
        return -1;
    ngi_strlcpy(job->nodes[job->n_nodes++], name, NG_NODE_NAME_MAX);
    return 0;
}

/* The record's facts into @p job; -1 (err) when a key is missing,
 * doubled or malformed. */
static int parse_record(const char *rec, const char *job_id, ng_slurm_job *job, char *err,
                        size_t errlen)
{
    record_keys r;
    read_keys(rec, &r);
    if (r.dup || !r.job_id || !r.user_id || !r.state)
        return ngi_fail(err, errlen, "scontrol's record of job %s is not one job's", job_id);
    if (r.job_id_len != strlen(job_id) || strncmp(r.job_id, job_id, r.job_id_len) != 0)
        return ngi_fail(err, errlen, "scontrol answered for another job than %s", job_id);
    if (user_uid(r.user_id, r.user_id_len, &job->uid) < 0)
        return ngi_fail(err, errlen, "scontrol's record of job %s has no owner", job_id);
    ngi_strlcpy(job->job_id, job_id, sizeof job->job_id);
    snprintf(job->state, sizeof job->state, "%.*s", (int)r.state_len, r.state);
    if (r.sluid && r.sluid_len == NGI_SLUID_LEN) {
        snprintf(job->sluid, sizeof job->sluid, "%.*s", (int)r.sluid_len, r.sluid);
        if (!ngi_is_sluid(job->sluid))
            job->sluid[0] = '\0';
    }
    if (r.nodes && r.nodes_len && strncmp(r.nodes, "(null)", r.nodes_len) != 0) {
        job->nodelist = strndup(r.nodes, r.nodes_len);
        job->nodes = calloc(NG_JOB_MAX_NODES, sizeof *job->nodes);
        if (!job->nodelist || !job->nodes)
            return ngi_fail(err, errlen, "out of memory");
        char herr[256];
        if (ngi_hostlist_foreach(job->nodelist, NG_JOB_MAX_NODES, add_node, job, herr,
                                 sizeof herr) < 0)
            return ngi_fail(err, errlen, "job %s: node list not understood (%s)", job_id, herr);
    }
    return 0;
}

static int digits_only(const char *s)
{
    size_t k = s ? strspn(s, "0123456789") : 0;
    return k && !s[k] && k <= 20;
}

int ng_slurm_job_query(const char *job_id, unsigned timeout_ms, ng_slurm_job *job, char *err,
                       size_t errlen)
{
    memset(job, 0, sizeof *job);
    if (!digits_only(job_id)) {
        char shown[NGI_SHOW_MAX * 4 + 8];
        ngi_show_bytes(job_id ? job_id : "", job_id ? strlen(job_id) : 0, shown, sizeof shown);
        return ngi_fail(err, errlen, "invalid job id '%s': expected a Slurm job number", shown);
    }
    char *argv[] = {"scontrol", "-d", "show", "job", (char *)job_id, NULL};
    ngi_cmd res;
    int rc = ngi_run_bounded(argv, timeout_ms, SHOW_MAX, &res);
    if (rc < 0) {
        ngi_cmd_free(&res);
        ngi_fail(err, errlen, "cannot run scontrol: %s",
                 res.not_found ? "not on PATH (no Slurm client here?)" : "cannot start it");
        return NG_JOB_NO_SLURM;
    }
    if (res.timed_out || res.too_big) {
        char what[160];
        ngi_cmd_describe(&res, what, sizeof what);
        ngi_cmd_free(&res);
        ngi_fail(err, errlen, "scontrol %s", what);
        return NG_JOB_NO_SLURM;
    }
    /* Not found, not parsable, or not the caller's: the same words, so
     * that nobody learns whether somebody else's job exists. */
    unsigned me = (unsigned)getuid();
    char why[256] = "";
    rc = res.exit_status == 0 ? parse_record(res.out, job_id, job, why, sizeof why) : -1;
    ngi_cmd_free(&res);
    if (rc < 0 || (me != 0 && job->uid != me)) {
        ng_slurm_job_clear(job);
        return ngi_fail(err, errlen, "no job %s of yours (only its owner or root may check it)%s%s",
                        job_id, why[0] && me == 0 ? ": " : "", me == 0 ? why : "");
    }
    if (strcmp(job->state, "RUNNING") != 0 || !job->n_nodes) {
        ngi_fail(err, errlen, "job %s is %s, not running: nothing runs to check", job_id,
                 job->state);
        ng_slurm_job_clear(job);
        return -1;
    }
    return 0;
}

unsigned ng_inspect_keep_owned(const char *fsroot, unsigned uid, int *pids, unsigned n)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned owner;
        char user[64];
        /* One whose owner cannot be read (gone, or hidden by hidepid) is
         * not the caller's as far as anybody can tell: left out. */
        if (uid == 0 || (ngi_proc_owner(fsroot, pids[i], &owner, user, sizeof user) == 0 &&
                         owner == uid))
            pids[kept++] = pids[i];
    }
    return kept;
}

void ng_slurm_job_clear(ng_slurm_job *job)
{
    if (!job)
        return;
    free(job->nodes);
    free(job->nodelist);
    memset(job, 0, sizeof *job);
}

/* ---- one bounded step per node ---- */

/* The last line of srun's stderr that says something, printable. */
static void last_words(const char *text, char *out, size_t len)
{
    const char *best = NULL;
    size_t best_len = 0;
    for (const char *l = text ? text : ""; *l;) {
        size_t n = strcspn(l, "\n");
        if (n && l[strspn(l, " \t")] != '\n') {
            best = l;
            best_len = n;
        }
        l += n + (l[n] == '\n');
    }
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(best_len < 400 ? best_len : 400), best ? best : "");
    ng_text_escape(line, out, len);
}

/* The owner's primary group and groups (the user database). */
static int owner_ids(unsigned uid, unsigned *gid, unsigned *groups, unsigned *n)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &res) != 0 || !res)
        return -1;
    gid_t g[64];
    int ng = 64;
    if (getgrouplist(pw.pw_name, pw.pw_gid, g, &ng) < 0) {
        g[0] = pw.pw_gid;   /* more than 64 groups: the primary one alone */
        ng = 1;
    }
    *gid = (unsigned)pw.pw_gid;
    for (int i = 0; i < ng; i++)
        groups[i] = (unsigned)g[i];
    *n = (unsigned)ng;
    return 0;
}

/* srun --jobid=J --overlap -N1 -n1 -w NODE ... CMD: a step of the job
 * that shares its CPUs (--overlap), on that node alone; --chdir=/ (the
 * caller's directory may not exist there), no binding of its own. */
enum { STEP_FIXED = 10 };

/* The buffers of one each_node call: argument vectors (STEP_FIXED + ncmd
 * + the NULL each), their --nodelist= words, the commands, the answers. */
typedef struct node_steps {
    char jobarg[64];
    char (*nodearg)[NG_NODE_NAME_MAX + 16];
    char **argvs;
    ngi_many *cmds;
    ng_node_answer *ans;
} node_steps;

static void steps_free(node_steps *s)
{
    free(s->nodearg);
    free(s->argvs);
    free(s->cmds);
    free(s->ans);
}

/* Node i's srun command line into its slice of s->argvs; the fixed words
 * point at s (jobarg, nodearg), the command's at the caller's cmd. */
static void step_argv(node_steps *s, const ng_slurm_job *job, unsigned i, char *const cmd[],
                      unsigned ncmd)
{
    char **a = s->argvs + (size_t)i * (STEP_FIXED + ncmd + 1);
    snprintf(s->nodearg[i], sizeof s->nodearg[i], "--nodelist=%s", job->nodes[i]);
    const char *fixed[STEP_FIXED] = {"srun", s->jobarg, "--overlap", "--nodes=1", "--ntasks=1",
                                     s->nodearg[i], "--chdir=/", "--quiet", "--cpu-bind=none",
                                     "--job-name=numaguard-check"};
    for (unsigned k = 0; k < STEP_FIXED; k++)
        a[k] = (char *)fixed[k];
    for (unsigned k = 0; k < ncmd; k++)
        a[STEP_FIXED + k] = cmd[k];
    s->cmds[i].argv = a;
    ngi_strlcpy(s->ans[i].name, job->nodes[i], sizeof s->ans[i].name);
}

/* One node's answer from its command's result; its output moves over.
 * A step past its time did not answer; one whose output overran its
 * bound failed; otherwise srun's last words say what happened. */
static void step_answer(ngi_many *c, ng_node_answer *a)
{
    ngi_cmd *r = &c->res;
    a->ms = r->ms;
    a->exit_status = r->exit_status;
    a->out = r->out;
    a->len = r->len;
    r->out = NULL;
    if (r->not_found) {
        a->status = NG_NODE_FAILED;
        snprintf(a->why, sizeof a->why, "cannot run srun: not on PATH");
    } else if (r->timed_out || r->too_big) {
        a->status = r->timed_out ? NG_NODE_NO_ANSWER : NG_NODE_FAILED;
        ngi_cmd_describe(r, a->why, sizeof a->why);
    } else {
        a->status = NG_NODE_ANSWERED;
        last_words(c->err, a->why, sizeof a->why);
    }
}

/* Slurm creates a step only for the job's own user (stepmgr: "the UID
 * originating the request is identical with step_specs->user_id", root
 * included): root runs the steps as the owner, with the owner's groups;
 * the owner may read every process of the job. `groups` must outlive the
 * run (the commands point at it). */
static int steps_as_owner(node_steps *s, const ng_slurm_job *job, unsigned groups[64],
                          char *err, size_t errlen)
{
    unsigned ngroups = 0, gid = 0;
    int as_user = getuid() == 0 && job->uid != 0;
    if (as_user && owner_ids(job->uid, &gid, groups, &ngroups) < 0)
        return ngi_fail(err, errlen, "job %s: its owner (uid %u) has no entry in the user "
                        "database here: cannot run a step as them", job->job_id, job->uid);
    for (unsigned i = 0; i < job->n_nodes; i++)
        s->cmds[i] = (ngi_many){.argv = s->cmds[i].argv, .as_user = as_user, .uid = job->uid,
                                .gid = gid, .ngroups = ngroups, .groups = groups};
    return 0;
}

int ng_slurm_job_each_node(const ng_slurm_job *job, char *const cmd[], unsigned parallel,
                           unsigned timeout_ms, size_t max_out, ng_node_answer **out, char *err,
                           size_t errlen)
{
    *out = NULL;
    unsigned n = job ? job->n_nodes : 0, ncmd = 0;
    while (cmd && cmd[ncmd] && ncmd < 64)
        ncmd++;
    if (!n || !ncmd || cmd[ncmd] || !parallel || !timeout_ms)
        return ngi_fail(err, errlen, "ng_slurm_job_each_node: bad arguments");
    node_steps s = {.nodearg = calloc(n, sizeof *s.nodearg),
                    .argvs = calloc((size_t)n * (STEP_FIXED + ncmd + 1), sizeof *s.argvs),
                    .cmds = calloc(n, sizeof *s.cmds),
                    .ans = calloc(n, sizeof *s.ans)};
    if (!s.nodearg || !s.argvs || !s.cmds || !s.ans) {
        steps_free(&s);
        return ngi_fail(err, errlen, "out of memory");
    }
    snprintf(s.jobarg, sizeof s.jobarg, "--jobid=%s", job->job_id);
    for (unsigned i = 0; i < n; i++)
        step_argv(&s, job, i, cmd, ncmd);
    unsigned groups[64];
    if (steps_as_owner(&s, job, groups, err, errlen) < 0) {
        steps_free(&s);
        return -1;
    }
    int rc = ngi_run_many(s.cmds, n, parallel, timeout_ms, max_out, 16 * 1024);
    for (unsigned i = 0; i < n && rc == 0; i++)
        step_answer(&s.cmds[i], &s.ans[i]);
    ngi_many_free(s.cmds, n);
    if (rc < 0) {
        ng_node_answers_free(s.ans, n);
        s.ans = NULL;
        steps_free(&s);
        return ngi_fail(err, errlen, "cannot run srun on the job's nodes (no memory?)");
    }
    *out = s.ans;
    s.ans = NULL;
    steps_free(&s);
    return 0;
}

void ng_node_answers_free(ng_node_answer *a, unsigned n)
{
    for (unsigned i = 0; a && i < n; i++)
        free(a[i].out);
    free(a);
}
