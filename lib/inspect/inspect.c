/* Reading running processes from /proc for `numaguard check`.
 *
 * Everything is read as the calling user under fsroot (tests give a fake
 * /proc tree): Cpus_allowed_list, Mems_allowed_list and Threads from
 * /proc/PID/status, each thread's state, last CPU and affinity from
 * /proc/PID/task/TID/{stat,status}, the memory policy and pages per node
 * from /proc/PID/numa_maps (owner or root only; get_mempolicy(2) answers
 * only for the caller), the GPUs, launcher rank, thread caps and Slurm job
 * from /proc/PID/environ and /proc/PID/cgroup. Files are opened with
 * O_NOFOLLOW|O_NONBLOCK, must be regular files, and are read with bounds:
 * `check` may run as root over files other users control. The rules that
 * judge what was read live in inspect_rules.c.
 */
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

#define STATUS_MAX (64 * 1024)
#define NUMA_MAPS_LINES (1u << 20)

/* ------------------------------------------------------------------ */
/* Files                                                                */
/* ------------------------------------------------------------------ */

static int proc_file(char *buf, size_t len, const char *fsroot, int pid, const char *what)
{
    char rel[96];
    int n = snprintf(rel, sizeof rel, "/proc/%d%s%s", pid, *what ? "/" : "", what);
    if (n < 0 || (size_t)n >= sizeof rel)
        return -1;
    return ngi_path(buf, len, fsroot, rel);
}

/* ------------------------------------------------------------------ */
/* status, comm, threads                                                */
/* ------------------------------------------------------------------ */

/* Value after "Key:" and blanks in one status line, or NULL. */
static const char *status_value(const char *line, const char *key)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0 || line[k] != ':')
        return NULL;
    for (line += k + 1; *line == ' ' || *line == '\t'; line++)
        ;
    return line;
}

/* Cpus_allowed_list (and, for a process, Mems_allowed_list and Threads). */
static int parse_status(char *text, hwloc_bitmap_t cpus, ngi_proc *p, ng_notes *errors)
{
    char err[160], *save = NULL;
    int have_cpus = 0;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *v;
        if ((v = status_value(line, "Cpus_allowed_list")) != NULL) {
            have_cpus = 1;
            if (ng_list_parse(v, cpus, NG_MAX_PU_OS_INDEX, err, sizeof err) < 0 && errors)
                ngi_note(errors, "Cpus_allowed_list: %s", err);
        } else if (p && (v = status_value(line, "Mems_allowed_list")) != NULL) {
            ngi_strlcpy(p->v.mems_allowed, v, sizeof p->v.mems_allowed);
        } else if (p && (v = status_value(line, "Threads")) != NULL) {
            p->v.threads = (unsigned)strtoul(v, NULL, 10);
        } else if (p && (v = status_value(line, "PPid")) != NULL) {
            p->v.ppid = (int)strtol(v, NULL, 10);
        }
    }
    return have_cpus ? 0 : -1;
}

static int read_status(const char *fsroot, ngi_proc *p)
{
    char *buf = malloc(STATUS_MAX);
    int rc = -1;
    if (buf && ngi_read_pid_file(fsroot, p->v.pid, "status", buf, STATUS_MAX) >= 0)
        rc = parse_status(buf, p->cpus, p, &p->v.errors);
    free(buf);
    return rc;
}

static void read_comm(const char *fsroot, ngi_proc *p)
{
    char buf[80];
    p->v.comm[0] = '\0';
    if (ngi_read_pid_file(fsroot, p->v.pid, "comm", buf, sizeof buf) < 0)
        return;
    buf[strcspn(buf, "\n")] = '\0';
    ngi_strlcpy(p->v.comm, buf, sizeof p->v.comm);
}

/* "tid (comm) S f4 ... f39 ...": comm may hold ')' and spaces, so the
 * fields start after the LAST ')'; field 39 is the CPU it ran on last. */
static void parse_stat(const char *stat, ng_thread_view *t)
{
    const char *lp = strchr(stat, '('), *rp = strrchr(stat, ')');
    t->state = '?';
    t->last_cpu = -1;
    if (!lp || !rp || rp < lp || rp[1] != ' ')
        return;
    size_t cl = (size_t)(rp - lp - 1) < sizeof t->comm ? (size_t)(rp - lp - 1) : sizeof t->comm - 1;
    memcpy(t->comm, lp + 1, cl);
    t->comm[cl] = '\0';
    t->state = rp[2] ? rp[2] : '?';
    const char *f = rp + 2;
    for (int field = 3; field < 39 && f; field++) {
        f = strchr(f, ' ');
        if (f)
            f++;
    }
    if (f && isdigit((unsigned char)*f))
        t->last_cpu = (int)strtol(f, NULL, 10);
}

static ng_thread_view *thread_slot(ngi_proc *p)
{
    if (p->v.n_thread_views >= NGI_THREAD_VIEWS_MAX)
        return NULL;
    if (p->v.n_thread_views == p->threads_cap) {
        unsigned cap = p->threads_cap ? p->threads_cap * 2 : 16;
        ng_thread_view *t = realloc(p->threads, cap * sizeof *t);
        if (!t)
            return NULL;
        p->threads = t;
        p->threads_cap = cap;
    }
    ng_thread_view *t = &p->threads[p->v.n_thread_views];
    memset(t, 0, sizeof *t);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return NULL;
    t->cpus = set;
    p->v.n_thread_views++;
    return t;
}

static void read_thread(const char *fsroot, ngi_proc *p, int tid, char *buf)
{
    char what[48];
    snprintf(what, sizeof what, "task/%d/stat", tid);
    if (ngi_read_pid_file(fsroot, p->v.pid, what, buf, 1024) < 0)
        return;   /* the thread exited meanwhile */
    ng_thread_view tv = {.tid = tid};
    parse_stat(buf, &tv);
    if (tv.state == 'R')
        p->v.runnable++;
    ng_thread_view *t = thread_slot(p);
    if (!t)
        return;
    hwloc_bitmap_t cpus = (hwloc_bitmap_t)t->cpus;
    tv.cpus = cpus;
    *t = tv;
    snprintf(what, sizeof what, "task/%d/status", tid);
    if (ngi_read_pid_file(fsroot, p->v.pid, what, buf, STATUS_MAX) < 0 ||
        parse_status(buf, cpus, NULL, NULL) < 0)
        hwloc_bitmap_copy(cpus, p->cpus);   /* unreadable: the process's mask */
}

static int tid_of(const char *name)
{
    if (!isdigit((unsigned char)name[0]) || strlen(name) > 10)
        return -1;
    long v = strtol(name, NULL, 10);
    return v > 0 && v <= 0x3fffffff ? (int)v : -1;
}

static int cmp_tid(const void *a, const void *b)
{
    int x = ((const ng_thread_view *)a)->tid, y = ((const ng_thread_view *)b)->tid;
    return (x > y) - (x < y);
}

static void read_threads(const char *fsroot, ngi_proc *p)
{
    char path[4096];
    char *buf = malloc(STATUS_MAX);
    DIR *d = NULL;
    if (buf && proc_file(path, sizeof path, fsroot, p->v.pid, "task") == 0)
        d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        int tid = tid_of(e->d_name);
        if (tid > 0)
            read_thread(fsroot, p, tid, buf);
    }
    if (d)
        closedir(d);
    free(buf);
    if (p->v.n_thread_views)   /* readdir order is arbitrary: show them by tid */
        qsort(p->threads, p->v.n_thread_views, sizeof *p->threads, cmp_tid);
}

/* Bound = narrower than what the process may use: its cgroup's cpuset
 * (a job's CPUs under Slurm's task/cgroup), else the topology's allowed
 * CPUs. A batch script's shell has the whole job cpuset: not bound. */
static void count_cores(const ng_topology *topo, const char *fsroot, ngi_proc *p)
{
    int w = hwloc_bitmap_weight(p->cpus);
    p->v.pus = w > 0 ? (unsigned)w : 0;
    p->v.cores = ngi_set_cores(topo, p->cpus);
    if (ngi_cgroup_cpus(fsroot, p->v.pid, p->allowed) < 0)
        hwloc_bitmap_copy(p->allowed, ng_topology_allowed_cpus(topo));
    p->v.bound = !hwloc_bitmap_iszero(p->cpus) && !hwloc_bitmap_isincluded(p->allowed, p->cpus);
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
        const ng_numa_info *n = ng_topology_numa(topo, i);
        if (n->has_cpus && hwloc_bitmap_intersects(n->cpus, p->cpus))
            hwloc_bitmap_set(p->cpu_nodes, n->os_index);
    }
}

/* ------------------------------------------------------------------ */
/* numa_maps                                                            */
/* ------------------------------------------------------------------ */

/* The kernel's mode names (mm/mempolicy.c, policy_modes[]); two contain a
 * space, so they are matched as prefixes, longest first. */
static const struct {
    const char *kernel, *name;
} policy_names[] = {
    {"weighted interleave", "weighted_interleave"},
    {"prefer (many)", "preferred_many"},
    {"interleave", "interleave"},
    {"default", "default"},
    {"prefer", "preferred"},
    {"local", "local"},
    {"bind", "bind"},
};

typedef struct policy_seen {
    char text[128];
    const char *mode;
    hwloc_bitmap_t nodes;
} policy_seen;

/* Parse "<addr> <policy>[=flags][:nodes] rest" into @p out; returns a
 * pointer past the policy, or NULL when the line has no known policy. */
static const char *parse_policy(const char *line, policy_seen *out)
{
    const char *p = strchr(line, ' ');
    if (!p)
        return NULL;
    p++;
    for (size_t i = 0; i < NGI_ARRAY_LEN(policy_names); i++) {
        size_t k = strlen(policy_names[i].kernel);
        if (strncmp(p, policy_names[i].kernel, k) != 0)
            continue;
        const char *end = p + k + strcspn(p + k, " \n");   /* flags and nodes: no spaces */
        size_t tl = (size_t)(end - p) < sizeof out->text ? (size_t)(end - p) : sizeof out->text - 1;
        memcpy(out->text, p, tl);
        out->text[tl] = '\0';
        out->mode = policy_names[i].name;
        hwloc_bitmap_zero(out->nodes);
        const char *colon = memchr(p + k, ':', (size_t)(end - p) - k);
        if (colon) {
            char list[256];
            size_t ll = (size_t)(end - colon - 1) < sizeof list ? (size_t)(end - colon - 1)
                                                                 : sizeof list - 1;
            memcpy(list, colon + 1, ll);
            list[ll] = '\0';
            ng_list_parse(list, out->nodes, NG_MAX_NUMA_OS_INDEX, NULL, 0);
        }
        return end;
    }
    return NULL;
}

static void add_node_bytes(ngi_proc *p, unsigned node, unsigned long long bytes)
{
    unsigned i = 0;
    while (i < p->v.n_memory && p->memory[i].node < node)
        i++;
    if (i < p->v.n_memory && p->memory[i].node == node) {
        p->memory[i].bytes += bytes;
        return;
    }
    if (p->v.n_memory == p->memory_cap) {
        unsigned cap = p->memory_cap ? p->memory_cap * 2 : 8;
        ng_node_bytes *m = realloc(p->memory, cap * sizeof *m);
        if (!m)
            return;
        p->memory = m;
        p->memory_cap = cap;
    }
    memmove(p->memory + i + 1, p->memory + i, (p->v.n_memory - i) * sizeof *p->memory);
    p->memory[i] = (ng_node_bytes){node, bytes};
    p->v.n_memory++;
}

/* Add the "N<node>=<pages>" fields of one line, in bytes (pages are of
 * kernelpagesize_kB, which is 2048 or more on huge-page mappings). */
static void add_pages(ngi_proc *p, const char *rest)
{
    unsigned long long kb = 4;
    const char *k = strstr(rest, "kernelpagesize_kB=");
    if (k)
        kb = strtoull(k + 18, NULL, 10);
    for (const char *q = rest; (q = strstr(q, " N")) != NULL; q++) {
        if (!isdigit((unsigned char)q[2]))
            continue;
        char *end;
        unsigned long node = strtoul(q + 2, &end, 10);
        if (*end != '=' || node > NG_MAX_NUMA_OS_INDEX)
            continue;
        unsigned long long bytes = strtoull(end + 1, NULL, 10) * kb * 1024;
        add_node_bytes(p, (unsigned)node, bytes);
        p->v.mem_bytes += bytes;
    }
}

static void keep_policy(ngi_proc *p, const policy_seen *s)
{
    p->v.mem_policy = s->mode;
    ngi_strlcpy(p->v.mem_policy_text, s->text, sizeof p->v.mem_policy_text);
    hwloc_bitmap_copy(p->policy_nodes, s->nodes);
}

/* One numa_maps line: pages, and the policy of the heap (which shows the
 * process policy unless mbind() changed that range: the best single
 * answer) or, until a heap is seen, of the first mapping. */
static void numa_maps_line(ngi_proc *p, const char *line, policy_seen *cur, int *have_heap)
{
    const char *rest = parse_policy(line, cur);
    if (!rest)
        return;
    if (!p->v.have_memory || (!*have_heap && strstr(rest, " heap"))) {
        *have_heap = strstr(rest, " heap") != NULL;
        keep_policy(p, cur);
    }
    p->v.have_memory = 1;
    add_pages(p, rest);
}

static void read_numa_maps(const char *fsroot, ngi_proc *p)
{
    char path[4096];
    policy_seen cur = {.nodes = hwloc_bitmap_alloc()};
    int fd = -1, have_heap = 0;
    FILE *f = NULL;
    if (cur.nodes && proc_file(path, sizeof path, fsroot, p->v.pid, "numa_maps") == 0)
        fd = ngi_open_regular(path);
    if (fd < 0 || !(f = fdopen(fd, "r"))) {
        ngi_note(&p->v.errors, "numa_maps: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        hwloc_bitmap_free(cur.nodes);
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    errno = 0;
    for (unsigned n = 0; n < NUMA_MAPS_LINES && getline(&line, &cap, f) > 0; n++)
        numa_maps_line(p, line, &cur, &have_heap);
    /* Reading another user's numa_maps fails at the first read (EACCES). */
    if (ferror(f) && !p->v.have_memory)
        ngi_note(&p->v.errors, "numa_maps: %s", strerror(errno));
    free(line);
    fclose(f);
    hwloc_bitmap_free(cur.nodes);
}

/* ------------------------------------------------------------------ */
/* environ and cgroup                                                   */
/* ------------------------------------------------------------------ */

const char *ngi_env_block_get(const char *blk, size_t len, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < len;) {
        const char *e = blk + i;
        size_t el = strnlen(e, len - i);
        if (el > nl && !strncmp(e, name, nl) && e[nl] == '=')
            return e + nl + 1;
        i += el + 1;
    }
    return NULL;
}

/* The job id of SLURM_JOB_ID when it is 1-20 digits. */
static int job_from_env(const char *blk, size_t len, char *id, size_t idlen)
{
    const char *v = ngi_env_block_get(blk, len, "SLURM_JOB_ID");
    size_t n = v ? strspn(v, "0123456789") : 0;
    if (!n || v[n] || n > 20 || n >= idlen)
        return -1;
    memcpy(id, v, n + 1);
    return 0;
}

/* Read environ into a fresh block (NUL-terminated); NULL when unreadable. */
static char *read_environ(const char *fsroot, int pid, size_t *len)
{
    char *blk = malloc(NGI_ENVIRON_MAX);
    long n = blk ? ngi_read_pid_file(fsroot, pid, "environ", blk, NGI_ENVIRON_MAX) : -1;
    if (n < 0) {
        free(blk);
        return NULL;
    }
    *len = (size_t)n;
    return blk;
}

/* The thread-count variables the process started with ("" if none). */
static void read_thread_caps(const char *blk, size_t len, ngi_proc *p)
{
    char *out = p->v.thread_caps;
    size_t used = 0, cap = sizeof p->v.thread_caps;
    out[0] = '\0';
    for (const char *const *v = ngi_default_thread_vars; *v; v++) {
        const char *val = ngi_env_block_get(blk, len, *v);
        if (!val)
            continue;
        int w = snprintf(out + used, cap - used, "%s%s=%.16s", used ? " " : "", *v, val);
        if (w < 0 || (size_t)w >= cap - used) {
            out[used] = '\0';
            break;
        }
        used += (size_t)w;
    }
    p->v.numaguard_started = ngi_env_block_get(blk, len, "NUMAGUARD_POLICY") != NULL;
}

/* ------------------------------------------------------------------ */
/* Listing processes                                                    */
/* ------------------------------------------------------------------ */

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
        int pid = tid_of(e->d_name);
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
    return proc_file(path, sizeof path, fsroot, pid, "") == 0 && lstat(path, &st) == 0 &&
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
        char *blk = read_environ(fsroot, pid, &len);
        if (blk)
            job_from_env(blk, len, id, sizeof id);
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

/* ------------------------------------------------------------------ */
/* One process                                                          */
/* ------------------------------------------------------------------ */

static unsigned long long bytes_on(const ngi_proc *p, hwloc_const_bitmap_t nodes)
{
    unsigned long long sum = 0;
    for (unsigned i = 0; i < p->v.n_memory; i++)
        if (hwloc_bitmap_isset(nodes, p->memory[i].node))
            sum += p->memory[i].bytes;
    return sum;
}

static void read_environment(const ng_topology *topo, const char *fsroot, ngi_proc *p)
{
    size_t len = 0;
    char *blk = read_environ(fsroot, p->v.pid, &len);
    if (ngi_cgroup_job(fsroot, p->v.pid, p->v.job_id, sizeof p->v.job_id) < 0 && blk)
        job_from_env(blk, len, p->v.job_id, sizeof p->v.job_id);
    if (!blk) {
        ngi_strlcpy(p->v.gpu_source, "environ unreadable", sizeof p->v.gpu_source);
        return;
    }
    read_thread_caps(blk, len, p);
    ngi_inspect_gpus(topo, fsroot, blk, len, p);
    free(blk);
    for (unsigned i = 0; i < p->v.n_gpus; i++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, (unsigned)p->gpus[i]);
        hwloc_bitmap_or(p->gpu_nodes, p->gpu_nodes, g->numa_nodes);
        hwloc_bitmap_or(p->gpu_nodes, p->gpu_nodes, g->memory_nodes);
    }
}

static void inspect_one(const ng_topology *topo, const char *fsroot, ngi_proc *p)
{
    if (read_status(fsroot, p) < 0) {
        p->v.gone = 1;
        return;
    }
    read_comm(fsroot, p);
    read_threads(fsroot, p);
    count_cores(topo, fsroot, p);
    read_numa_maps(fsroot, p);
    read_environment(topo, fsroot, p);
    p->v.cpu_local_bytes = bytes_on(p, p->cpu_nodes);
    p->v.gpu_local_bytes = bytes_on(p, p->gpu_nodes);
    ngi_judge_proc(p);
}

static int proc_init(ngi_proc *p, int pid)
{
    memset(p, 0, sizeof *p);
    p->v.pid = pid;
    p->v.mem_policy = "unknown";
    p->v.local_rank = p->v.local_size = -1;
    ngi_strlcpy(p->v.gpu_source, "none", sizeof p->v.gpu_source);
    p->cpus = hwloc_bitmap_alloc();
    p->cpu_nodes = hwloc_bitmap_alloc();
    p->policy_nodes = hwloc_bitmap_alloc();
    p->gpu_nodes = hwloc_bitmap_alloc();
    p->allowed = hwloc_bitmap_alloc();
    return p->cpus && p->cpu_nodes && p->policy_nodes && p->gpu_nodes && p->allowed ? 0 : -1;
}

/* Point the view at the storage (after every realloc is done). */
static void proc_publish(ngi_proc *p)
{
    p->v.cpus = p->cpus;
    p->v.cpu_nodes = p->cpu_nodes;
    p->v.mem_policy_nodes = p->policy_nodes;
    p->v.gpu_nodes = p->gpu_nodes;
    p->v.allowed_cpus = p->allowed;
    p->v.thread_views = p->threads;
    p->v.memory = p->memory;
    p->v.gpus = p->gpus;
}

static void proc_free(ngi_proc *p)
{
    hwloc_bitmap_free(p->cpus);
    hwloc_bitmap_free(p->cpu_nodes);
    hwloc_bitmap_free(p->policy_nodes);
    hwloc_bitmap_free(p->gpu_nodes);
    hwloc_bitmap_free(p->allowed);
    for (unsigned i = 0; i < p->v.n_thread_views; i++)
        hwloc_bitmap_free((hwloc_bitmap_t)p->threads[i].cpus);
    free(p->threads);
    free(p->memory);
}

int ng_inspect(const ng_topology *topo, const char *fsroot, const int *pids, unsigned n,
               ng_inspection **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!topo || (n && !pids) || n > NG_INSPECT_MAX_PIDS)
        return ngi_fail(err, errlen, "ng_inspect: bad arguments (at most %d processes)",
                       NG_INSPECT_MAX_PIDS);
    ng_inspection *ins = calloc(1, sizeof *ins);
    if (!ins || !(ins->procs = calloc(n ? n : 1, sizeof *ins->procs))) {
        free(ins);
        return ngi_fail(err, errlen, "out of memory");
    }
    for (unsigned i = 0; i < n; i++, ins->n_procs++) {
        ngi_proc *p = &ins->procs[i];
        if (proc_init(p, pids[i]) < 0)
            break;
        inspect_one(topo, fsroot, p);
        proc_publish(p);
    }
    if (ins->n_procs < n || ngi_judge_all(topo, ins) < 0) {
        ng_inspection_free(ins);
        return ngi_fail(err, errlen, "out of memory");
    }
    *out = ins;
    return 0;
}

void ng_inspection_free(ng_inspection *ins)
{
    if (!ins)
        return;
    for (unsigned i = 0; i < ins->n_procs; i++)
        proc_free(&ins->procs[i]);
    free(ins->procs);
    free(ins->cpus);
    for (unsigned i = 0; i < ins->n_overlaps; i++)
        hwloc_bitmap_free(ins->overlap_sets[i]);
    free(ins->overlap_sets);
    free(ins->overlaps);
    free(ins->overlap_pids);
    free(ins);
}

unsigned ng_inspection_proc_count(const ng_inspection *ins) { return ins ? ins->n_procs : 0; }

const ng_proc_view *ng_inspection_proc(const ng_inspection *ins, unsigned i)
{
    return ins && i < ins->n_procs ? &ins->procs[i].v : NULL;
}

unsigned ng_inspection_cpu_count(const ng_inspection *ins) { return ins ? ins->n_cpus : 0; }

const ng_cpu_view *ng_inspection_cpu(const ng_inspection *ins, unsigned i)
{
    return ins && i < ins->n_cpus ? &ins->cpus[i] : NULL;
}

unsigned ng_inspection_overlap_count(const ng_inspection *ins) { return ins ? ins->n_overlaps : 0; }

const ng_overlap_view *ng_inspection_overlap(const ng_inspection *ins, unsigned i)
{
    return ins && i < ins->n_overlaps ? &ins->overlaps[i] : NULL;
}

const ng_notes *ng_inspection_warnings(const ng_inspection *ins)
{
    return ins ? &ins->warnings : NULL;
}
