/* numaguard check: where running processes really are.
 *
 *   numaguard check [--pid P ...] [--all-mine] [--json] [--topology FILE]
 *
 * Everything comes from /proc, read as the calling user (no privilege is
 * asked for or used): Cpus_allowed_list, Mems_allowed_list and Threads from
 * /proc/PID/status, each thread's state from /proc/PID/task/TID/stat, the
 * memory policy and the pages per NUMA node from /proc/PID/numa_maps (the
 * kernel allows the owner and root only: others get an error entry), the
 * GPUs from /proc/PID/environ. get_mempolicy(2) only answers for the
 * calling process, hence numa_maps. Fields and rules: docs/check.md.
 */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PIDS 4096
#define NODE_SLOTS (NG_MAX_NUMA_OS_INDEX + 1)

static const char check_usage[] =
    "usage: numaguard check [--pid P ...] [--all-mine] [--json] [--topology FILE]\n"
    "  --pid P      a process to check (repeat, or a comma list)\n"
    "  --all-mine   every process of the calling user (kernel threads skipped)\n"
    "  --json       one JSON document (schema: docs/check.md)\n";

typedef struct proc_info {
    int pid;
    char comm[64];
    hwloc_bitmap_t cpus;            /* Cpus_allowed_list */
    char mems_allowed[256];         /* Mems_allowed_list, as the kernel writes it */
    unsigned cores, pus;            /* cores with a PU in cpus; PUs in cpus */
    hwloc_bitmap_t cpu_nodes;       /* CPU-bearing nodes of those CPUs */
    unsigned threads, runnable;
    char policy_text[128];          /* numa_maps policy of the heap (or first line) */
    const char *policy_mode;        /* normalised name */
    hwloc_bitmap_t policy_nodes;
    unsigned long long *node_bytes; /* NODE_SLOTS entries */
    unsigned long long total_bytes;
    int have_memory;
    int gpus[NG_MAX_GPUS];
    unsigned n_gpus;
    char gpu_source[48];
    hwloc_bitmap_t gpu_nodes;       /* the GPUs' CPU nodes and memory nodes */
    char errors[512];               /* "; "-joined */
    char warnings[512];
} proc_info;

static void add_note(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_note(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strnlen(buf, len);
    if (used && used + 3 < len) {
        memcpy(buf + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    if (used < len)
        vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static int proc_path(char *buf, size_t len, int pid, const char *what)
{
    int n = snprintf(buf, len, "/proc/%d/%s", pid, what);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* /proc/PID/status, comm, task/ * /stat                                */
/* ------------------------------------------------------------------ */

static void trim_newline(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

/* Value of "Key:\t..." lines we need. Returns -1 if status is unreadable. */
static int read_status(proc_info *p)
{
    char path[64], line[4096], err[256];
    if (proc_path(path, sizeof path, p->pid, "status") < 0)
        return -1;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        trim_newline(line);
        const char *v = strchr(line, ':');
        if (!v)
            continue;
        for (v++; *v == ' ' || *v == '\t'; v++)
            ;
        if (!strncmp(line, "Cpus_allowed_list:", 18)) {
            if (ng_list_parse(v, p->cpus, 1u << 20, err, sizeof err) < 0)
                add_note(p->errors, sizeof p->errors, "Cpus_allowed_list: %s", err);
        } else if (!strncmp(line, "Mems_allowed_list:", 18)) {
            snprintf(p->mems_allowed, sizeof p->mems_allowed, "%s", v);
        } else if (!strncmp(line, "Threads:", 8)) {
            p->threads = (unsigned)strtoul(v, NULL, 10);
        }
    }
    fclose(f);
    return 0;
}

static void read_comm(proc_info *p)
{
    char path[64];
    p->comm[0] = '\0';
    if (proc_path(path, sizeof path, p->pid, "comm") < 0)
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(p->comm, sizeof p->comm, f))
        trim_newline(p->comm);
    fclose(f);
}

/* Threads in state R (running or waiting for a CPU) at this instant. */
static void count_runnable(proc_info *p)
{
    char path[64], stat[512];
    if (proc_path(path, sizeof path, p->pid, "task") < 0)
        return;
    DIR *d = opendir(path);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!isdigit((unsigned char)e->d_name[0]) || strlen(e->d_name) > 10)
            continue;
        char tpath[96];
        snprintf(tpath, sizeof tpath, "/proc/%d/task/%s/stat", p->pid, e->d_name);
        FILE *f = fopen(tpath, "r");
        if (!f)
            continue;
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = '\0';
        /* "tid (comm) S ...": comm may hold ')' or spaces, so use the last ')'. */
        const char *rp = strrchr(stat, ')');
        if (rp && rp[1] == ' ' && rp[2] == 'R')
            p->runnable++;
    }
    closedir(d);
}

/* Cores with at least one PU in the mask, PUs in the mask, and the
 * CPU-bearing NUMA nodes of those PUs, per the topology. */
static void count_cores(const ng_topology *topo, proc_info *p)
{
    hwloc_topology_t t = ng_topology_hwloc(topo);
    int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    for (int i = 0; i < ncores; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)i);
        if (c && hwloc_bitmap_intersects(c->cpuset, p->cpus))
            p->cores++;
    }
    int w = hwloc_bitmap_weight(p->cpus);
    p->pus = w > 0 ? (unsigned)w : 0;
    if (ncores <= 0)
        p->cores = p->pus;   /* a topology without cores: count PUs */
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
        const ng_numa_info *n = ng_topology_numa(topo, i);
        if (n->has_cpus && hwloc_bitmap_intersects(n->cpus, p->cpus))
            hwloc_bitmap_set(p->cpu_nodes, n->os_index);
    }
}

/* ------------------------------------------------------------------ */
/* /proc/PID/numa_maps                                                  */
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

/* Parse "<addr> <policy>[=flags][:nodes] rest" into the policy text, mode
 * name and nodes. Returns a pointer past the policy, or NULL. */
static const char *parse_policy(const char *line, char *text, size_t len, const char **mode,
                                hwloc_bitmap_t nodes)
{
    const char *p = strchr(line, ' ');
    if (!p)
        return NULL;
    p++;
    for (size_t i = 0; i < sizeof policy_names / sizeof policy_names[0]; i++) {
        size_t k = strlen(policy_names[i].kernel);
        if (strncmp(p, policy_names[i].kernel, k) != 0)
            continue;
        const char *end = p + k + strcspn(p + k, " \n");   /* flags and nodes: no spaces */
        size_t tl = (size_t)(end - p) < len ? (size_t)(end - p) : len - 1;
        memcpy(text, p, tl);
        text[tl] = '\0';
        *mode = policy_names[i].name;
        hwloc_bitmap_zero(nodes);
        const char *colon = memchr(p + k, ':', (size_t)(end - p - (long)k));
        if (colon) {
            char list[256];
            size_t ll = (size_t)(end - colon - 1) < sizeof list ? (size_t)(end - colon - 1)
                                                                 : sizeof list - 1;
            memcpy(list, colon + 1, ll);
            list[ll] = '\0';
            ng_list_parse(list, nodes, NG_MAX_NUMA_OS_INDEX, NULL, 0);
        }
        return end;
    }
    return NULL;
}

/* Add the "N<node>=<pages>" fields of one line, in bytes (pages are of
 * kernelpagesize_kB, which is 2048 or more on huge-page mappings). */
static void add_pages(proc_info *p, const char *rest)
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
        if (*end != '=' || node >= NODE_SLOTS)
            continue;
        unsigned long long pages = strtoull(end + 1, NULL, 10);
        p->node_bytes[node] += pages * kb * 1024;
        p->total_bytes += pages * kb * 1024;
    }
}

static void read_numa_maps(proc_info *p)
{
    char path[64], first_text[128] = "";
    const char *first_mode = NULL;
    hwloc_bitmap_t first_nodes = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    int have_heap = 0;
    FILE *f = NULL;
    if (!first_nodes || !nodes || proc_path(path, sizeof path, p->pid, "numa_maps") < 0)
        goto out;
    if (!(f = fopen(path, "r"))) {
        add_note(p->errors, sizeof p->errors, "numa_maps: %s", strerror(errno));
        goto out;
    }
    char *line = NULL;
    size_t cap = 0;
    errno = 0;
    while (getline(&line, &cap, f) > 0) {
        char text[128];
        const char *mode = NULL;
        const char *rest = parse_policy(line, text, sizeof text, &mode, nodes);
        if (!rest)
            continue;
        p->have_memory = 1;
        if (!first_mode) {
            first_mode = mode;
            snprintf(first_text, sizeof first_text, "%s", text);
            hwloc_bitmap_copy(first_nodes, nodes);
        }
        /* The heap's line shows the process policy unless mbind() changed
         * that range: it is the best single answer. */
        if (!have_heap && strstr(rest, " heap")) {
            have_heap = 1;
            p->policy_mode = mode;
            snprintf(p->policy_text, sizeof p->policy_text, "%s", text);
            hwloc_bitmap_copy(p->policy_nodes, nodes);
        }
        add_pages(p, rest);
    }
    free(line);
    /* Reading another user's numa_maps fails at the first read (EACCES). */
    if (ferror(f) && !p->have_memory)
        add_note(p->errors, sizeof p->errors, "numa_maps: %s", strerror(errno));
    if (!have_heap && first_mode) {
        p->policy_mode = first_mode;
        snprintf(p->policy_text, sizeof p->policy_text, "%s", first_text);
        hwloc_bitmap_copy(p->policy_nodes, first_nodes);
    }
out:
    if (f)
        fclose(f);
    hwloc_bitmap_free(first_nodes);
    hwloc_bitmap_free(nodes);
}

/* ------------------------------------------------------------------ */
/* GPUs from /proc/PID/environ                                          */
/* ------------------------------------------------------------------ */

#define ENVIRON_MAX (256 * 1024)

/* Value of NAME in a NUL-separated environ block, or NULL. */
static const char *env_lookup(const char *blk, size_t len, const char *name)
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

/* NUMAGUARD_GPUS (bus ids, exact: what numaguard applied). */
static void gpus_from_numaguard(const ng_topology *topo, proc_info *p, const char *v)
{
    char buf[NG_MAX_ARG + 1], *save = NULL;
    snprintf(p->gpu_source, sizeof p->gpu_source, "NUMAGUARD_GPUS");
    snprintf(buf, sizeof buf, "%s", v);
    for (char *it = strtok_r(buf, ",", &save); it && p->n_gpus < NG_MAX_GPUS;
         it = strtok_r(NULL, ",", &save)) {
        int g = ng_topology_gpu_by_busid(topo, it);
        if (g < 0)
            add_note(p->errors, sizeof p->errors, "NUMAGUARD_GPUS: no GPU %.32s here", it);
        else
            p->gpus[p->n_gpus++] = g;
    }
}

/* Entry LOCAL_RANK of the list when it has LOCAL_WORLD_SIZE entries (the
 * torchrun convention, as numaguard exec applies it); else the whole list. */
static void pick_local_entry(const char *blk, size_t len, const char *v, char *out, size_t olen)
{
    const char *r = env_lookup(blk, len, "LOCAL_RANK");
    const char *s = env_lookup(blk, len, "LOCAL_WORLD_SIZE");
    snprintf(out, olen, "%s", v);
    if (!r || !s)
        return;
    unsigned long rank = strtoul(r, NULL, 10), size = strtoul(s, NULL, 10), n = 1;
    for (const char *c = v; *c; c++)
        n += *c == ',';
    if (size < 2 || n != size || rank >= size || !*v)
        return;
    const char *e = v;
    for (unsigned long i = 0; i < rank; i++)
        e = strchr(e, ',') + 1;
    size_t el = strcspn(e, ",");
    snprintf(out, olen, "%.*s", (int)el, e);
}

static void read_gpus(const ng_topology *topo, const char *fsroot, proc_info *p)
{
    char path[64], err[256];
    snprintf(p->gpu_source, sizeof p->gpu_source, "none");
    if (proc_path(path, sizeof path, p->pid, "environ") < 0)
        return;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(p->gpu_source, sizeof p->gpu_source, "environ unreadable");
        return;
    }
    char *blk = malloc(ENVIRON_MAX);
    size_t len = blk ? fread(blk, 1, ENVIRON_MAX - 1, f) : 0;
    fclose(f);
    if (!blk)
        return;
    blk[len] = '\0';
    const char *v = env_lookup(blk, len, "NUMAGUARD_GPUS");
    if (v && strlen(v) <= NG_MAX_ARG) {
        gpus_from_numaguard(topo, p, v);
    } else {
        static const char *const names[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};
        for (int i = 0; i < 2 && !v; i++) {
            v = env_lookup(blk, len, names[i]);
            if (!v || strlen(v) > NG_MAX_ARG)
                continue;
            char entry[NG_MAX_ARG + 1];
            pick_local_entry(blk, len, v, entry, sizeof entry);
            ng_gpu_env env = {0};
            if (i == 0)
                env.cuda_visible_devices = entry;
            else
                env.rocr_visible_devices = entry;
            snprintf(p->gpu_source, sizeof p->gpu_source, "%s", names[i]);
            if (ng_task_gpus(topo, NULL, &env, fsroot, p->gpus, NG_MAX_GPUS, &p->n_gpus,
                             err, sizeof err) < 0)
                add_note(p->errors, sizeof p->errors, "%s", err);
        }
    }
    free(blk);
    for (unsigned i = 0; i < p->n_gpus; i++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, (unsigned)p->gpus[i]);
        hwloc_bitmap_or(p->gpu_nodes, p->gpu_nodes, g->numa_nodes);
        hwloc_bitmap_or(p->gpu_nodes, p->gpu_nodes, g->memory_nodes);
    }
}

/* ------------------------------------------------------------------ */
/* One process                                                          */
/* ------------------------------------------------------------------ */

static unsigned long long bytes_on(const proc_info *p, hwloc_const_bitmap_t nodes)
{
    unsigned long long sum = 0;
    unsigned i;
    hwloc_bitmap_foreach_begin(i, nodes)
        if (i < NODE_SLOTS)
            sum += p->node_bytes[i];
    hwloc_bitmap_foreach_end();
    return sum;
}

/* The thread rule (docs/check.md): runnable threads above the cores owned
 * is oversubscription NOW; more threads than cores but few runnable is
 * usually idle pool threads (harmless until they all wake up at once). */
static void judge(proc_info *p)
{
    if (p->runnable > p->cores)
        add_note(p->warnings, sizeof p->warnings,
                 "oversubscribed: %u runnable threads on %u core(s)", p->runnable, p->cores);
    else if (p->threads > p->cores)
        add_note(p->warnings, sizeof p->warnings,
                 "%u threads for %u core(s), %u runnable now: idle pool threads? "
                 "cap OMP_NUM_THREADS & co (--omp-guard)", p->threads, p->cores, p->runnable);
    if (p->n_gpus && p->total_bytes && !hwloc_bitmap_iszero(p->gpu_nodes) &&
        bytes_on(p, p->gpu_nodes) * 2 < p->total_bytes)
        add_note(p->warnings, sizeof p->warnings, "most memory is not on the GPU's NUMA node(s)");
    if (p->n_gpus && !hwloc_bitmap_iszero(p->gpu_nodes) &&
        !hwloc_bitmap_intersects(p->cpu_nodes, p->gpu_nodes))
        add_note(p->warnings, sizeof p->warnings, "no CPU of the process is on the GPU's NUMA node(s)");
}

static int inspect(const ng_topology *topo, const char *fsroot, proc_info *p)
{
    if (read_status(p) < 0)
        return -1;
    read_comm(p);
    count_runnable(p);
    count_cores(topo, p);
    read_numa_maps(p);
    read_gpus(topo, fsroot, p);
    judge(p);
    return 0;
}

static int proc_alloc(proc_info *p, int pid)
{
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->policy_mode = "unknown";
    p->cpus = hwloc_bitmap_alloc();
    p->cpu_nodes = hwloc_bitmap_alloc();
    p->policy_nodes = hwloc_bitmap_alloc();
    p->gpu_nodes = hwloc_bitmap_alloc();
    p->node_bytes = calloc(NODE_SLOTS, sizeof *p->node_bytes);
    return p->cpus && p->cpu_nodes && p->policy_nodes && p->gpu_nodes && p->node_bytes ? 0 : -1;
}

static void proc_free(proc_info *p)
{
    hwloc_bitmap_free(p->cpus);
    hwloc_bitmap_free(p->cpu_nodes);
    hwloc_bitmap_free(p->policy_nodes);
    hwloc_bitmap_free(p->gpu_nodes);
    free(p->node_bytes);
}

/* ------------------------------------------------------------------ */
/* Output                                                               */
/* ------------------------------------------------------------------ */

static void json_notes(json_out *j, const char *key, const char *notes)
{
    char buf[512], *save = NULL;
    json_begin_array(j, key);
    snprintf(buf, sizeof buf, "%s", notes);
    for (char *it = strtok_r(buf, ";", &save); it; it = strtok_r(NULL, ";", &save))
        json_string(j, NULL, it + (*it == ' '));
    json_end_array(j);
}

static void proc_json(json_out *j, const ng_topology *topo, const proc_info *p)
{
    char list[8192];
    json_begin_object(j, NULL);
    json_uint(j, "pid", (unsigned)p->pid);
    json_string(j, "comm", p->comm);
    ng_list_format(p->cpus, list, sizeof list);
    json_string(j, "cpus", list);
    json_uint(j, "cores", p->cores);
    json_uint(j, "pus", p->pus);
    json_index_array(j, "cpu_numa_nodes", p->cpu_nodes);
    json_string(j, "mems_allowed", p->mems_allowed);
    json_string(j, "mem_policy", p->policy_mode);
    json_index_array(j, "mem_policy_nodes", p->policy_nodes);
    json_string(j, "mem_policy_text", p->policy_text);
    json_begin_array(j, "memory");
    for (unsigned n = 0; n < NODE_SLOTS; n++) {
        if (!p->node_bytes[n])
            continue;
        json_begin_object(j, NULL);
        json_uint(j, "node", n);
        json_uint(j, "bytes", p->node_bytes[n]);
        json_end_object(j);
    }
    json_end_array(j);
    json_uint(j, "mem_bytes", p->total_bytes);
    json_uint(j, "cpu_local_bytes", bytes_on(p, p->cpu_nodes));
    json_begin_array(j, "gpus");
    for (unsigned i = 0; i < p->n_gpus; i++)
        json_string(j, NULL, ng_topology_gpu(topo, (unsigned)p->gpus[i])->pci_bus_id);
    json_end_array(j);
    json_string(j, "gpu_source", p->gpu_source);
    json_index_array(j, "gpu_numa_nodes", p->gpu_nodes);
    json_uint(j, "gpu_local_bytes", bytes_on(p, p->gpu_nodes));
    json_uint(j, "threads", p->threads);
    json_uint(j, "runnable", p->runnable);
    json_bool(j, "oversubscribed", p->runnable > p->cores);
    json_bool(j, "threads_exceed_cores", p->threads > p->cores);
    json_notes(j, "warnings", p->warnings);
    json_notes(j, "errors", p->errors);
    json_end_object(j);
}

static void human(unsigned long long b, char *buf, size_t len)
{
    if (b >= (1ull << 30))
        snprintf(buf, len, "%.1f GiB", (double)b / (1ull << 30));
    else if (b >= (1ull << 20))
        snprintf(buf, len, "%.1f MiB", (double)b / (1ull << 20));
    else
        snprintf(buf, len, "%llu KiB", b >> 10);
}

static double share(unsigned long long part, unsigned long long total)
{
    return total ? 100.0 * (double)part / (double)total : 0.0;
}

static void proc_text(const ng_topology *topo, const proc_info *p)
{
    char list[8192], nodes[256], h[32];
    ng_list_format(p->cpus, list, sizeof list);
    ng_list_format(p->cpu_nodes, nodes, sizeof nodes);
    printf("pid %d (%s)\n", p->pid, p->comm);
    printf("  cpus     %s  (%u core%s, %u PU%s; numa %s)\n", list, p->cores,
           p->cores == 1 ? "" : "s", p->pus, p->pus == 1 ? "" : "s", *nodes ? nodes : "-");
    printf("  threads  %u, %u runnable\n", p->threads, p->runnable);
    printf("  memory   policy %s  (allowed nodes %s)\n",
           p->policy_text[0] ? p->policy_text : "unknown", p->mems_allowed);
    if (p->have_memory) {
        human(p->total_bytes, h, sizeof h);
        printf("  pages    %s:", h);
        for (unsigned n = 0; n < NODE_SLOTS; n++)
            if (p->node_bytes[n])
                printf(" node %u %.1f%%", n, share(p->node_bytes[n], p->total_bytes));
        printf("\n  local    %.1f%% on the CPUs' node(s)\n",
               share(bytes_on(p, p->cpu_nodes), p->total_bytes));
    }
    printf("  gpus     ");
    for (unsigned i = 0; i < p->n_gpus; i++)
        printf("%s%s", i ? "," : "", ng_topology_gpu(topo, (unsigned)p->gpus[i])->pci_bus_id);
    ng_list_format(p->gpu_nodes, nodes, sizeof nodes);
    if (p->n_gpus)
        printf(" (from %s; numa %s) %.1f%% of memory there\n", p->gpu_source,
               *nodes ? nodes : "-", share(bytes_on(p, p->gpu_nodes), p->total_bytes));
    else
        printf("none (%s)\n", p->gpu_source);
    if (p->warnings[0])
        printf("  warning: %s\n", p->warnings);
    if (p->errors[0])
        printf("  error: %s\n", p->errors);
}

/* ------------------------------------------------------------------ */
/* Which processes                                                      */
/* ------------------------------------------------------------------ */

static int add_pids(const char *text, int *pids, unsigned *n)
{
    char buf[256], *save = NULL;
    if (strlen(text) >= sizeof buf)
        return cli_error(2, "check: --pid value too long");
    memcpy(buf, text, strlen(text) + 1);
    for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        long v = isdigit((unsigned char)*it) ? strtol(it, &end, 10) : 0;
        if (!isdigit((unsigned char)*it) || *end || errno || v < 1 || v > 0x3fffffff)
            return cli_error(2, "check: invalid --pid '%.32s': expected a process id", it);
        if (*n >= MAX_PIDS)
            return cli_error(2, "check: more than %d processes", MAX_PIDS);
        pids[(*n)++] = (int)v;
    }
    return 0;
}

/* Processes whose /proc directory the caller owns; kernel threads (empty
 * cmdline) and this process are skipped. */
static void my_pids(int *pids, unsigned *n)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    uid_t me = getuid();
    for (struct dirent *e; (e = readdir(d)) != NULL && *n < MAX_PIDS;) {
        if (!isdigit((unsigned char)e->d_name[0]) || strlen(e->d_name) > 10)
            continue;
        int pid = atoi(e->d_name);
        char path[64], c;
        struct stat st;
        snprintf(path, sizeof path, "/proc/%d", pid);
        if (pid == getpid() || stat(path, &st) < 0 || st.st_uid != me)
            continue;
        snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
        FILE *f = fopen(path, "r");
        int user_space = f && fread(&c, 1, 1, f) == 1;
        if (f)
            fclose(f);
        if (user_space)
            pids[(*n)++] = pid;
    }
    closedir(d);
}

int cmd_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"all-mine", no_argument, NULL, 'a'},
        {"json", no_argument, NULL, 'j'},
        {"topology", required_argument, NULL, 't'},
        {"fsroot", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    common_opts o = {0};
    static int pids[MAX_PIDS];
    unsigned npids = 0;
    int all = 0, c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if ((rc = add_pids(optarg, pids, &npids)) != 0)
                return rc;
            break;
        case 'a': all = 1; break;
        case 'j': o.json = 1; break;
        case 't': o.topology = optarg; break;
        case 'r': o.fsroot = optarg; break;
        case 'h': fputs(check_usage, stdout); return 0;
        default: fputs(check_usage, stderr); return 2;
        }
    }
    if (optind < argc)
        return cli_error(2, "check: unexpected argument '%.64s'", argv[optind]);
    if (all == (npids > 0))
        return cli_error(2, "check: give --pid P (one or more) or --all-mine");
    if (all)
        my_pids(pids, &npids);
    ng_topology *topo = cli_load_topology(&o);
    if (!topo)
        return 1;
    json_out j = {.f = stdout};
    if (o.json) {
        json_begin_object(&j, NULL);
        json_begin_array(&j, "processes");
    }
    rc = 0;
    for (unsigned i = 0; i < npids; i++) {
        proc_info p;
        if (proc_alloc(&p, pids[i]) < 0) {
            proc_free(&p);
            rc = cli_error(1, "check: out of memory");
            break;
        }
        if (inspect(topo, o.fsroot, &p) < 0) {
            /* Gone between listing and reading is normal with --all-mine. */
            if (!all)
                rc = cli_error(1, "check: no process %d", pids[i]);
        } else if (o.json) {
            proc_json(&j, topo, &p);
        } else {
            proc_text(topo, &p);
        }
        proc_free(&p);
    }
    if (o.json) {
        json_end_array(&j);
        json_end_object(&j);
        fputc('\n', stdout);
    }
    ng_topology_free(topo);
    return rc;
}
