/* Reading one process from /proc for `numaguard check`: its status
 * (Cpus_allowed_list, Mems_allowed_list, Threads), comm, each thread's
 * state, last CPU and affinity (/proc/PID/task/TID/{stat,status}), the
 * cores of its mask, and its memory policy and pages per node
 * (/proc/PID/numa_maps: owner or root only; get_mempolicy(2) answers only
 * for the caller).
 *
 * Everything is read as the calling user under fsroot (tests give a fake
 * /proc tree). Files are opened with O_NOFOLLOW|O_NONBLOCK, must be
 * regular files, and are read with bounds: `check` may run as root over
 * files other users control. */
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

int ngi_proc_path(char *buf, size_t len, const char *fsroot, int pid, const char *what)
{
    char rel[96];
    int n = snprintf(rel, sizeof rel, "/proc/%d%s%s", pid, *what ? "/" : "", what);
    if (n < 0 || (size_t)n >= sizeof rel)
        return -1;
    return ngi_path(buf, len, fsroot, rel);
}

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

/* "Uid:\treal\teffective\tsaved\tfs": the real uid, who started it (the
 * effective one of a setuid program is the program's owner). */
int ngi_status_uid(const char *value, unsigned *uid)
{
    char *end;
    unsigned long v = strtoul(value, &end, 10);
    if (end == value || v > 0xfffffffful)
        return -1;
    *uid = (unsigned)v;
    return 0;
}

/* Cpus_allowed_list (and, for a process, Mems_allowed_list, Threads, PPid
 * and the owner's Uid). */
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
        } else if (p && !p->have_uid && (v = status_value(line, "Uid")) != NULL) {
            p->have_uid = ngi_status_uid(v, &p->v.uid) == 0;
        }
    }
    return have_cpus ? 0 : -1;
}

int ngi_proc_read_status(const char *fsroot, ngi_proc *p)
{
    char *buf = malloc(STATUS_MAX);
    int rc = -1;
    if (buf && ngi_read_pid_file(fsroot, p->v.pid, "status", buf, STATUS_MAX) >= 0)
        rc = parse_status(buf, p->cpus, p, &p->v.errors);
    free(buf);
    return rc;
}

void ngi_proc_read_comm(const char *fsroot, ngi_proc *p)
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

int ngi_pid_of_name(const char *name)
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

void ngi_proc_read_threads(const char *fsroot, ngi_proc *p)
{
    char path[4096];
    char *buf = malloc(STATUS_MAX);
    DIR *d = NULL;
    if (buf && ngi_proc_path(path, sizeof path, fsroot, p->v.pid, "task") == 0)
        d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        int tid = ngi_pid_of_name(e->d_name);
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
void ngi_proc_count_cores(const ng_topology *topo, const char *fsroot, ngi_proc *p)
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

/* The governor's marks (numaguard/omp_marks.h): the path "/memfd:" +
 * prefix + a kind, then the end of the name (numa_maps escapes the space before
 * "(deleted)" as \040). Only these fixed names are matched. */
static unsigned ungoverned_mark(const char *path, size_t n)
{
    static const ng_omp_mark kinds[] = NG_OMP_MARK_TABLE;
    static const char pre[] = "/memfd:" NG_OMP_MARK_PREFIX;   /* a memfd's whole path */
    if (n < sizeof pre - 1 || strncmp(path, pre, sizeof pre - 1) != 0)
        return 0;
    path += sizeof pre - 1;
    n -= sizeof pre - 1;
    for (size_t i = 0; i < NGI_ARRAY_LEN(kinds); i++) {
        size_t k = strlen(kinds[i].kind);
        if (n >= k && strncmp(path, kinds[i].kind, k) == 0 &&
            (n == k || path[k] == '\\' || path[k] == ' '))
            return kinds[i].bit;
    }
    return 0;
}

/* The OpenMP runtime or the governor among the files a line maps, and
 * the governor's marks. */
static void note_runtime(ngi_proc *p, const char *line)
{
    const char *f = strstr(line, " file=");
    if (!f)
        return;
    f += 6;
    size_t n = strcspn(f, " \n");
    const char *base = f;
    for (const char *c = f; c < f + n; c++)
        if (*c == '/')
            base = c + 1;
    if (!strncmp(base, "libgomp", 7) || !strncmp(base, "libomp", 6) || !strncmp(base, "libiomp", 7))
        p->v.omp_runtime = 1;
    else if (!strncmp(base, "libnumaguard-omp.so", 19))
        p->v.omp_governed = 1;
    else
        p->v.omp_ungoverned |= ungoverned_mark(f, n);
}

/* One numa_maps line: pages, and the policy of the heap (which shows the
 * process policy unless mbind() changed that range: the best single
 * answer) or, until a heap is seen, of the first mapping. */
static void numa_maps_line(ngi_proc *p, const char *line, policy_seen *cur, int *have_heap)
{
    note_runtime(p, line);
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

void ngi_proc_read_numa_maps(const char *fsroot, ngi_proc *p)
{
    char path[4096];
    policy_seen cur = {.nodes = hwloc_bitmap_alloc()};
    int fd = -1, have_heap = 0;
    FILE *f = NULL;
    if (cur.nodes && ngi_proc_path(path, sizeof path, fsroot, p->v.pid, "numa_maps") == 0)
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
