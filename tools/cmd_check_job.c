/* numaguard check --job ID (without --local): the whole job, from any host
 * with the Slurm client. Slurm says which nodes the job has and whose it
 * is (ng_slurm_job_query: only its owner or root gets further); then each
 * node runs `numaguard check --job ID --local` as a step of the job
 * (ng_slurm_job_each_node: srun --overlap -N1 -n1 -w NODE, at most
 * --parallel at a time, each bounded by --timeout and killed with its
 * process group), and the answers are shown as one report:
 *
 *   text     each node's own report under a line naming the node and how
 *            it answered; a node that did not answer in time says so
 *   --json   {"job":..., "nodes":[{"name":..., "status":..., "report":{...}}]}
 *            with each node's own --local --json report inside, checked
 *            to be one JSON value first
 *   --map    each node's map under its name
 *   --svg    one picture: a panel per node (ng_draw_svg_job) drawn here
 *            from the node's report and topology (--panel: its hwloc XML),
 *            the tasks in the colours of their global ranks; a node never
 *            sends a picture
 *
 * Who wrote what: each node's answer is printed by a step of the job, and
 * Slurm runs a job's steps as its owner (root's request included), whose
 * other processes can stop that step and write its answer. So everything
 * in a node's report (processes, CPUs, memory, load, its topology) is
 * what the job's owner let it say; the job's owner, its node list and
 * how each node answered come from Slurm and from here. Text and --json
 * say so; every string of a node's is escaped (text: printable ASCII;
 * --json: valid UTF-8, control characters as \uXXXX) and the picture
 * draws facts, never copies markup.
 *
 * The per-node command is this very executable (/proc/self/exe): the
 * same installation on the nodes as here. Fields: docs/check.md. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long scontrol may take to say what the job is. */
#define QUERY_TIMEOUT_MS 10000
/* Most bytes a node's answer may have (a report of thousands of processes
 * with the hwloc XML of a large machine, ~0.5 MiB, stays well below). */
#define ANSWER_MAX (16u * 1024 * 1024)
/* Most bytes of a node's topology XML the picture loads. */
#define TOPOLOGY_XML_MAX (8u * 1024 * 1024)
/* Most processes of a node drawn in its panel (in rank order). */
#define PANEL_PROCS_MAX 256
/* Most saved answers --replay reads (DIR/NODE.json). */
#define REPLAY_NODES_MAX 256
/* The sentence on what a node's report is (text and --json). */
#define OWNER_NOTE "each node's report is what a step of the job printed there; Slurm runs " \
                   "it as the job's owner, whose processes can change it: every fact in it " \
                   "(processes, CPUs, memory, load, topology) is as the owner let it say"

typedef enum mode { MODE_TEXT, MODE_JSON, MODE_MAP, MODE_SVG } mode;

/* A node's answer, read: its report when it gave one. */
typedef struct node_view {
    const ng_node_answer *a;
    int ok;                 /* exit 0 and (JSON modes) one valid JSON object */
    json_span report;
    char why[300];          /* printable: how it failed */
} node_view;

/* Bytes outside printable ASCII (the nodes' text is numaguard's, already
 * escaped; this keeps whatever else came along inert): \xNN. */
static void print_clean(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' || (c >= 0x20 && c < 0x7f))
            putchar(c);
        else
            printf("\\x%02x", c);
    }
    if (n && s[n - 1] != '\n')
        putchar('\n');
}

static void read_answer(const ng_node_answer *a, mode m, node_view *v)
{
    memset(v, 0, sizeof *v);
    v->a = a;
    if (a->status == NG_NODE_NO_ANSWER) {
        snprintf(v->why, sizeof v->why, "no answer: %s", a->why);
        return;
    }
    if (a->status == NG_NODE_FAILED || a->exit_status != 0) {
        if (a->status == NG_NODE_FAILED)
            snprintf(v->why, sizeof v->why, "failed: %s", a->why);
        else
            snprintf(v->why, sizeof v->why, "failed (exit %d)%s%s", a->exit_status,
                     a->why[0] ? ": " : "", a->why);
        return;
    }
    if (m == MODE_JSON || m == MODE_SVG) {
        if (!a->out || json_valid(a->out, a->len, &v->report) < 0 || v->report.p[0] != '{') {
            snprintf(v->why, sizeof v->why,
                     "failed: its answer (%zu bytes) is not a numaguard check report", a->len);
            return;
        }
    }
    v->ok = 1;
}

static void status_words(const node_view *v, char *buf, size_t len)
{
    if (v->ok)
        snprintf(buf, len, "answered in %.2f s", v->a->ms / 1000.0);
    else
        snprintf(buf, len, "%s", v->why);
}

/* ---------------- text and --map ---------------- */

static void show_text(const ng_slurm_job *job, const node_view *v, unsigned answered)
{
    printf("job %s (uid %u) on %u node%s (%s)%s%s: %u answered\n", job->job_id, job->uid,
           job->n_nodes, job->n_nodes == 1 ? "" : "s", job->nodelist,
           job->sluid[0] ? ", SLUID " : "", job->sluid, answered);
    printf("(%s; uid %u)\n", OWNER_NOTE, job->uid);
    for (unsigned i = 0; i < job->n_nodes; i++) {
        char words[320], name[NG_NODE_NAME_MAX * 4];
        ng_text_escape(v[i].a->name, name, sizeof name);
        status_words(&v[i], words, sizeof words);
        printf("\n== node %s: %s ==\n", name, words);
        if (v[i].ok && v[i].a->out)
            print_clean(v[i].a->out, v[i].a->len);
    }
}

/* ---------------- --json ---------------- */

static void show_json(const ng_slurm_job *job, const node_view *v, unsigned answered)
{
    json_out j = {.f = stdout};
    json_begin_object(&j, NULL);
    json_string(&j, "job", job->job_id);
    json_string(&j, "sluid", job->sluid);
    json_uint(&j, "uid", job->uid);
    json_string(&j, "nodelist", job->nodelist);
    json_uint(&j, "answered", answered);
    json_uint(&j, "reports_written_as_uid", job->uid);
    json_string(&j, "reports_note", OWNER_NOTE);
    json_begin_array(&j, "nodes");
    for (unsigned i = 0; i < job->n_nodes; i++) {
        json_begin_object(&j, NULL);
        json_string(&j, "name", v[i].a->name);
        json_string(&j, "status", v[i].ok ? "ok"
                                  : v[i].a->status == NG_NODE_NO_ANSWER ? "no answer" : "failed");
        json_fixed2(&j, "seconds", v[i].a->ms / 1000.0);
        if (v[i].ok) {   /* re-written: valid UTF-8, control characters escaped */
            json_raw(&j, "report", "", 0);
            json_copy_clean(stdout, v[i].report);
        } else {
            json_string(&j, "error", v[i].why);
        }
        json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
    fputc('\n', stdout);
}

/* ---------------- --svg ---------------- */

/* One node's panel, read from its report: one line per process in
 * global-rank order (processes without a rank, a batch script's shell or
 * srun, after them, grey), their CPUs, the runnable threads per CPU, the
 * piled CPUs and the node's topology. Facts only: the picture is drawn
 * by ng_draw_svg_job. */
typedef struct panel_tasks {
    unsigned n;
    int *rank;
    char **label;
    hwloc_bitmap_t *cpus;
    ng_topology *topo;
    unsigned *runnable;
    unsigned n_runnable;
    hwloc_bitmap_t piled;
    char note[300];
} panel_tasks;

static char *member_string(json_span obj, const char *key)
{
    json_span v;
    return json_member(obj, key, &v) == 0 ? json_string_dup(v) : NULL;
}

static long long member_number(json_span obj, const char *key, long long dflt)
{
    json_span v;
    long long n;
    return json_member(obj, key, &v) == 0 && json_number(v, &n) == 0 ? n : dflt;
}

/* A cpulist member ("cpus") as a new bitmap; NULL when absent or bad. */
static hwloc_bitmap_t member_cpus(json_span obj, const char *key, unsigned max_index)
{
    char *text = member_string(obj, key), err[128];
    hwloc_bitmap_t set = text ? hwloc_bitmap_alloc() : NULL;
    if (set && ng_list_parse(text, set, max_index, err, sizeof err) < 0) {
        hwloc_bitmap_free(set);
        set = NULL;
    }
    free(text);
    return set;
}

static void task_label(json_span p, char *buf, size_t len)
{
    char *comm = member_string(p, "comm"), *cpus = member_string(p, "cpus");
    char *pol = member_string(p, "mem_policy_text"), *nics = member_string(p, "nic_vars");
    json_span gpus, g0, over;
    char gpu[64] = "";
    if (json_member(p, "gpus", &gpus) == 0 && json_element(gpus, 0, &g0) == 0) {
        char *b = json_string_dup(g0);
        snprintf(gpu, sizeof gpu, ", GPU %s%s", b ? b : "?",
                 json_element(gpus, 1, &g0) == 0 ? ",..." : "");
        free(b);
    }
    int oversub = json_member(p, "oversubscribed", &over) == 0 && over.len == 4;
    snprintf(buf, len, "pid %lld (%s): CPUs %s, memory %s%s%s%s, %lld threads, %lld runnable%s",
             member_number(p, "pid", 0), comm ? comm : "?", cpus ? cpus : "?",
             pol && pol[0] ? pol : "?", gpu, nics && nics[0] ? ", " : "", nics ? nics : "",
             member_number(p, "threads", 0), member_number(p, "runnable", 0),
             oversub ? " (oversubscribed)" : "");
    free(comm), free(cpus), free(pol), free(nics);
}

/* The processes: ranked ones first, by rank; then the others in report
 * order. Returns how many have a rank. */
static unsigned panel_procs(json_span report, panel_tasks *t)
{
    json_span procs, p;
    unsigned n = 0, tasks = 0;
    if (json_member(report, "processes", &procs) == 0)
        while (n < PANEL_PROCS_MAX && json_element(procs, n, &p) == 0)
            n++;
    t->rank = calloc(n ? n : 1, sizeof *t->rank);
    t->label = calloc(n ? n : 1, sizeof *t->label);
    t->cpus = calloc(n ? n : 1, sizeof *t->cpus);
    for (int pass = 0; pass < 2 && t->rank && t->label && t->cpus; pass++)
        for (unsigned i = 0; i < n; i++) {
            json_element(procs, i, &p);
            long long r = member_number(p, "global_rank", -1);
            r = r < 0 || r > 0x7fffffff ? -1 : r;
            if ((pass == 0) != (r >= 0))
                continue;
            unsigned k = t->n;
            if (pass == 0)
                while (k > 0 && t->rank[k - 1] > r)
                    k--;
            memmove(t->rank + k + 1, t->rank + k, (t->n - k) * sizeof *t->rank);
            memmove(t->label + k + 1, t->label + k, (t->n - k) * sizeof *t->label);
            memmove(t->cpus + k + 1, t->cpus + k, (t->n - k) * sizeof *t->cpus);
            t->rank[k] = (int)r;
            t->label[k] = malloc(512);
            if (t->label[k])
                task_label(p, t->label[k], 512);
            t->cpus[k] = member_cpus(p, "cpus", NG_MAX_PU_OS_INDEX);
            t->n++;
            tasks += r >= 0;
        }
    return tasks;
}

/* The node's topology from its hwloc XML; NULL, with why, when there is
 * none or hwloc refuses it. */
static ng_topology *panel_topology(json_span report, char *why, size_t len)
{
    json_span x;
    char err[256];
    if (json_member(report, "topology_xml", &x) < 0) {
        snprintf(why, len, "no topology in its answer (an older numaguard there?)");
        return NULL;
    }
    if (x.len > TOPOLOGY_XML_MAX) {
        snprintf(why, len, "its topology is over %u MiB: not drawn", TOPOLOGY_XML_MAX >> 20);
        return NULL;
    }
    char *xml = json_string_dup(x);
    ng_topology_options to = {.xml_buffer = xml, .xml_len = xml ? strlen(xml) : 0};
    ng_topology *topo = NULL;
    if (!xml || ng_topology_load(&topo, &to, err, sizeof err) < 0) {
        char shown[300];
        ng_text_escape(xml ? err : "not a string", shown, sizeof shown);
        snprintf(why, len, "its topology cannot be read: %.200s", shown);
        topo = NULL;
    }
    free(xml);
    return topo;
}

/* Runnable threads per CPU and the piled CPUs, from the report's summary,
 * bounded by the topology's CPUs. */
static void panel_load(json_span report, panel_tasks *t)
{
    json_span sum, cpus, c, overlaps, o;
    if (json_member(report, "summary", &sum) < 0)
        return;
    int last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(ng_topology_hwloc(t->topo)));
    t->n_runnable = last < 0 ? 0 : (unsigned)last + 1;
    t->runnable = calloc(t->n_runnable ? t->n_runnable : 1, sizeof *t->runnable);
    if (t->runnable && json_member(sum, "cpus", &cpus) == 0)
        for (unsigned i = 0; json_element(cpus, i, &c) == 0; i++) {
            long long cpu = member_number(c, "cpu", -1), r = member_number(c, "runnable", 0);
            if (cpu >= 0 && cpu < (long long)t->n_runnable && r >= 0)
                t->runnable[cpu] = r > 1000000 ? 1000000u : (unsigned)r;
        }
    t->piled = hwloc_bitmap_alloc();
    if (t->piled && json_member(sum, "overlaps", &overlaps) == 0)
        for (unsigned i = 0; json_element(overlaps, i, &o) == 0; i++) {
            hwloc_bitmap_t set = member_cpus(o, "cpus", (unsigned)(last < 0 ? 0 : last));
            if (set)
                hwloc_bitmap_or(t->piled, t->piled, set);
            hwloc_bitmap_free(set);
        }
}

static void panel_read(const node_view *v, panel_tasks *t)
{
    char why[260] = "";
    memset(t, 0, sizeof *t);
    if (!v->ok) {
        snprintf(t->note, sizeof t->note, "%s", v->why);
        return;
    }
    unsigned tasks = panel_procs(v->report, t);
    t->topo = panel_topology(v->report, why, sizeof why);
    if (t->topo)
        panel_load(v->report, t);
    snprintf(t->note, sizeof t->note, "%u process%s, %u task%s; answered in %.2f s%s%s", t->n,
             t->n == 1 ? "" : "es", tasks, tasks == 1 ? "" : "s", v->a->ms / 1000.0,
             why[0] ? "; " : "", why);
}

static void panel_free(panel_tasks *t)
{
    for (unsigned k = 0; k < t->n; k++) {
        free(t->label[k]);
        hwloc_bitmap_free(t->cpus[k]);
    }
    free(t->label), free(t->rank), free(t->cpus), free(t->runnable);
    hwloc_bitmap_free(t->piled);
    ng_topology_free(t->topo);
}

static int show_svg(const ng_slurm_job *job, const node_view *v, unsigned answered,
                    const char *path)
{
    unsigned n = job->n_nodes;
    panel_tasks *t = calloc(n, sizeof *t);
    ng_draw_panel *panels = calloc(n, sizeof *panels);
    int rc = 0;
    if (!t || !panels) {
        free(t), free(panels);
        return cli_error(1, "check: out of memory");
    }
    for (unsigned i = 0; i < n; i++) {
        panel_read(&v[i], &t[i]);
        panels[i] = (ng_draw_panel){.name = v[i].a->name, .note = t[i].note, .topo = t[i].topo,
                                    .n_tasks = t[i].n, .task_ranks = t[i].rank,
                                    .task_labels = (const char *const *)t[i].label,
                                    .task_cpus = (const hwloc_const_cpuset_t *)t[i].cpus,
                                    .runnable = t[i].runnable, .n_runnable = t[i].n_runnable,
                                    .piled = t[i].piled};
    }
    char title[128], sub[300], err[256];
    snprintf(title, sizeof title, "numaguard check: job %s", job->job_id);
    snprintf(sub, sizeof sub, "%u node%s (%.200s), %u answered%s%s", n, n == 1 ? "" : "s",
             job->nodelist, answered, job->sluid[0] ? "; SLUID " : "", job->sluid);
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    if (!f)
        rc = cli_error(1, "check: --svg: cannot write %s", path);
    else if (ng_draw_svg_job(title, sub, panels, n, f, err, sizeof err) < 0)
        rc = cli_error(1, "check: --svg: %s", err);
    if (f && f != stdout && fclose(f) != 0 && !rc)
        rc = cli_error(1, "check: --svg: cannot write %s", path);
    for (unsigned i = 0; i < n; i++)
        panel_free(&t[i]);
    free(t), free(panels);
    return rc;
}

/* ---------------- main ---------------- */

/* Show the answers in the mode asked for; frees them and the job. 0, or
 * 1 when some node did not answer or failed (each named on stderr). */
static int show(ng_slurm_job *job_p, ng_node_answer *ans, mode m, const common_opts *o)
{
    ng_slurm_job job = *job_p;
    node_view *v = calloc(job.n_nodes, sizeof *v);
    int rc = 0;
    unsigned answered = 0;
    for (unsigned i = 0; v && i < job.n_nodes; i++) {
        read_answer(&ans[i], m, &v[i]);
        answered += (unsigned)v[i].ok;
    }
    if (!v)
        rc = cli_error(1, "check: out of memory");
    else if (m == MODE_JSON)
        show_json(&job, v, answered);
    else if (m == MODE_SVG) {
        rc = show_svg(&job, v, answered, o->svg);
        if (strcmp(o->svg, "-") != 0)   /* the picture in a file: the nodes here */
            for (unsigned i = 0; i < job.n_nodes; i++) {
                char words[320], name[NG_NODE_NAME_MAX * 4];
                ng_text_escape(v[i].a->name, name, sizeof name);
                status_words(&v[i], words, sizeof words);
                printf("node %s: %s\n", name, words);
            }
    } else
        show_text(&job, v, answered);
    /* Every node named; the exit status says whether all answered. */
    for (unsigned i = 0; v && i < job.n_nodes; i++)
        if (!v[i].ok) {
            char name[NG_NODE_NAME_MAX * 4];
            ng_text_escape(ans[i].name, name, sizeof name);
            fprintf(stderr, "numaguard: check: job %s: node %s: %s\n", job.job_id, name, v[i].why);
            rc = 1;
        }
    free(v);
    ng_node_answers_free(ans, job.n_nodes);
    ng_slurm_job_clear(job_p);
    return rc;
}

/* --replay DIR: answers saved as DIR/NODE.json (each what --local --json
 * --panel printed there), in name order, as if the nodes had answered:
 * the pictures of the documentation, drawn without a cluster. */
static int names_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* One saved answer: a regular file of at most ANSWER_MAX bytes, sized
 * (fstat) before anything is read, opened without following a link. The
 * bytes, NUL-terminated, or NULL with why. */
static char *replay_read(const char *path, size_t *len, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    char *buf = NULL;
    *len = 0;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(why, whylen, "cannot read its saved answer (%s)", strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "its saved answer is not a regular file");
    } else if ((unsigned long long)st.st_size > ANSWER_MAX) {
        snprintf(why, whylen, "its saved answer is over %u MiB", ANSWER_MAX >> 20);
    } else if (!(buf = malloc((size_t)st.st_size + 1))) {
        snprintf(why, whylen, "out of memory");
    } else {
        ssize_t r = 1;
        while (*len < (size_t)st.st_size &&
               (r = read(fd, buf + *len, (size_t)st.st_size - *len)) > 0)
            *len += (size_t)r;
        buf[*len] = '\0';
        if (r < 0) {
            snprintf(why, whylen, "cannot read its saved answer (%s)", strerror(errno));
            free(buf);
            buf = NULL;
        }
    }
    if (fd >= 0)
        close(fd);
    return buf;
}

static int replay(const char *job_id, const char *dir, ng_slurm_job *job, ng_node_answer **out)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_error(1, "check: --replay: cannot read %s", dir);
    memset(job, 0, sizeof *job);
    snprintf(job->job_id, sizeof job->job_id, "%s", job_id);
    snprintf(job->state, sizeof job->state, "RUNNING");
    job->uid = (unsigned)getuid();
    job->nodes = calloc(REPLAY_NODES_MAX, sizeof *job->nodes);
    for (struct dirent *e; job->nodes && (e = readdir(d)) != NULL &&
                           job->n_nodes < REPLAY_NODES_MAX;) {
        size_t n = strlen(e->d_name);
        if (n > 5 && n < NG_NODE_NAME_MAX && !strcmp(e->d_name + n - 5, ".json"))
            snprintf(job->nodes[job->n_nodes++], NG_NODE_NAME_MAX, "%.*s", (int)(n - 5),
                     e->d_name);
    }
    closedir(d);
    if (!job->nodes || !job->n_nodes)
        return cli_error(1, "check: --replay: no NODE.json in %s", dir);
    qsort(job->nodes, job->n_nodes, sizeof *job->nodes, names_cmp);
    size_t listlen = (size_t)job->n_nodes * NG_NODE_NAME_MAX;
    job->nodelist = calloc(1, listlen);
    *out = calloc(job->n_nodes, sizeof **out);
    if (!job->nodelist || !*out)
        return cli_error(1, "check: out of memory");
    for (unsigned i = 0; i < job->n_nodes; i++) {
        ng_node_answer *a = &(*out)[i];
        char path[4096];
        snprintf(a->name, sizeof a->name, "%s", job->nodes[i]);
        snprintf(job->nodelist + strlen(job->nodelist), listlen - strlen(job->nodelist), "%s%s",
                 i ? "," : "", job->nodes[i]);
        snprintf(path, sizeof path, "%s/%s.json", dir, job->nodes[i]);
        a->out = replay_read(path, &a->len, a->why, sizeof a->why);
        a->status = a->out ? NG_NODE_ANSWERED : NG_NODE_FAILED;
        a->exit_status = a->out ? 0 : -1;
        if (a->out)
            a->why[0] = '\0';
    }
    return 0;
}

int cmd_check_job(const char *job_id, const common_opts *o, int threads, unsigned timeout_s,
                  unsigned parallel, const char *replay_dir)
{
    char err[512], self[4096];
    ng_slurm_job job;
    ng_node_answer *ans = NULL;
    mode m = o->json ? MODE_JSON : o->svg ? MODE_SVG : o->map ? MODE_MAP : MODE_TEXT;
    if (replay_dir) {
        if (replay(job_id, replay_dir, &job, &ans) != 0) {
            ng_node_answers_free(ans, job.n_nodes);
            ng_slurm_job_clear(&job);
            return 1;
        }
        return show(&job, ans, m, o);
    }
    int qrc = ng_slurm_job_query(job_id, QUERY_TIMEOUT_MS, &job, err, sizeof err);
    if (qrc < 0)   /* Slurm not asked: --local needs no Slurm client */
        return cli_error(1, "check: %s%s", err,
                         qrc == NG_JOB_NO_SLURM
                             ? " (--local: this node alone, without asking Slurm)" : "");
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        ng_slurm_job_clear(&job);
        return cli_error(1, "check: cannot tell where numaguard is installed (/proc/self/exe)");
    }
    self[sl] = '\0';
    char *cmd[16];
    unsigned k = 0;
    cmd[k++] = self;
    cmd[k++] = "check";
    cmd[k++] = "--job";
    cmd[k++] = job.job_id;
    cmd[k++] = "--local";
    if (m == MODE_JSON || m == MODE_SVG)
        cmd[k++] = "--json";
    if (m == MODE_SVG)
        cmd[k++] = "--panel";
    if (m == MODE_MAP)
        cmd[k++] = "--map";
    if (threads && m == MODE_TEXT)
        cmd[k++] = "--threads";
    /* Run inside a step of this job (--job without ID in a job script or
     * an srun): that step (this check and its sruns) is left out of the
     * report; its SLURM_STEP_ID is the caller's own. */
    const char *my_job = getenv("SLURM_JOB_ID"), *my_step = getenv("SLURM_STEP_ID");
    if (my_job && my_step && !strcmp(my_job, job.job_id) && *my_step &&
        strlen(my_step) < 16 && strspn(my_step, "0123456789") == strlen(my_step)) {
        cmd[k++] = "--skip-step";
        cmd[k++] = (char *)my_step;
    }
    if (o->topology) {   /* the same path on every node (a shared file system) */
        cmd[k++] = "--topology";
        cmd[k++] = (char *)o->topology;
    }
    cmd[k] = NULL;
    if (ng_slurm_job_each_node(&job, cmd, parallel, timeout_s * 1000, ANSWER_MAX, &ans, err,
                               sizeof err) < 0) {
        ng_slurm_job_clear(&job);
        return cli_error(1, "check: %s", err);
    }
    return show(&job, ans, m, o);
}
