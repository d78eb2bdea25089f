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
        return ngi_fail(err, errlen, "cannot run scontrol: %s",
                        res.not_found ? "not on PATH (no Slurm client here?)" : "cannot start it");
    }
    if (res.timed_out || res.too_big) {
        char what[160];
        ngi_cmd_describe(&res, what, sizeof what);
        ngi_cmd_free(&res);
        return ngi_fail(err, errlen, "scontrol %s", what);
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
    /* srun --jobid=J --overlap -N1 -n1 -w NODE ... CMD: a step of the job
     * that shares its CPUs (--overlap), on that node alone; --chdir=/
     * (the caller's directory may not exist there), no binding of its own. */
    enum { FIXED = 10 };
    char jobarg[64], (*nodearg)[NG_NODE_NAME_MAX + 16] = calloc(n, sizeof *nodearg);
    char **argvs = calloc((size_t)n * (FIXED + ncmd + 1), sizeof *argvs);
    ngi_many *cmds = calloc(n, sizeof *cmds);
    ng_node_answer *ans = calloc(n, sizeof *ans);
    if (!nodearg || !argvs || !cmds || !ans) {
        free(nodearg), free(argvs), free(cmds), free(ans);
        return ngi_fail(err, errlen, "out of memory");
    }
    snprintf(jobarg, sizeof jobarg, "--jobid=%s", job->job_id);
    for (unsigned i = 0; i < n; i++) {
        char **a = argvs + (size_t)i * (FIXED + ncmd + 1);
        snprintf(nodearg[i], sizeof nodearg[i], "--nodelist=%s", job->nodes[i]);
        const char *fixed[FIXED] = {"srun", jobarg, "--overlap", "--nodes=1", "--ntasks=1",
                                    nodearg[i], "--chdir=/", "--quiet", "--cpu-bind=none",
                                    "--job-name=numaguard-check"};
        for (unsigned k = 0; k < FIXED; k++)
            a[k] = (char *)fixed[k];
        for (unsigned k = 0; k < ncmd; k++)
            a[FIXED + k] = cmd[k];
        cmds[i].argv = a;
        ngi_strlcpy(ans[i].name, job->nodes[i], sizeof ans[i].name);
    }
    /* Slurm creates a step only for the job's own user (stepmgr: "the
     * UID originating the request is identical with step_specs->user_id",
     * root included): root runs the steps as the owner, with the owner's
     * groups; the owner may read every process of the job. */
    unsigned groups[64], ngroups = 0, gid = 0;
    int as_user = getuid() == 0 && job->uid != 0;
    if (as_user && owner_ids(job->uid, &gid, groups, &ngroups) < 0) {
        free(nodearg), free(argvs), free(cmds), free(ans);
        return ngi_fail(err, errlen, "job %s: its owner (uid %u) has no entry in the user "
                        "database here: cannot run a step as them", job->job_id, job->uid);
    }
    for (unsigned i = 0; i < n; i++)
        cmds[i] = (ngi_many){.argv = cmds[i].argv, .as_user = as_user, .uid = job->uid,
                             .gid = gid, .ngroups = ngroups, .groups = groups};
    int rc = ngi_run_many(cmds, n, parallel, timeout_ms, max_out, 16 * 1024);
    for (unsigned i = 0; i < n && rc == 0; i++) {
        ngi_cmd *r = &cmds[i].res;
        ans[i].ms = r->ms;
        ans[i].exit_status = r->exit_status;
        ans[i].out = r->out;
        ans[i].len = r->len;
        r->out = NULL;
        if (r->not_found) {
            ans[i].status = NG_NODE_FAILED;
            snprintf(ans[i].why, sizeof ans[i].why, "cannot run srun: not on PATH");
        } else if (r->timed_out) {
            ans[i].status = NG_NODE_NO_ANSWER;
            ngi_cmd_describe(r, ans[i].why, sizeof ans[i].why);
        } else if (r->too_big) {
            ans[i].status = NG_NODE_FAILED;
            ngi_cmd_describe(r, ans[i].why, sizeof ans[i].why);
        } else {
            ans[i].status = NG_NODE_ANSWERED;
            last_words(cmds[i].err, ans[i].why, sizeof ans[i].why);
        }
    }
    ngi_many_free(cmds, n);
    free(cmds);
    free(argvs);
    free(nodearg);
    if (rc < 0) {
        ng_node_answers_free(ans, n);
        return ngi_fail(err, errlen, "cannot run srun on the job's nodes (no memory?)");
    }
    *out = ans;
    return 0;
}

void ng_node_answers_free(ng_node_answer *a, unsigned n)
{
    for (unsigned i = 0; a && i < n; i++)
        free(a[i].out);
    free(a);
}
