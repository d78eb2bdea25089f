/* Launcher rules, written once for `exec`, `check` and the plugin: this
 * rank's local rank and size from the launcher's variables, the per-rank
 * split of a visible-GPU list, and whether the launcher already bound the
 * rank to part of the CPUs it may use. */
#include "private/gpu.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Environment view                                                  */
/* ---------------------------------------------------------------- */

static const char *env_get(const ng_env_view *env, const char *name)
{
    if (!env || !env->get)
        return getenv(name);
    return env->get(env->ctx, name);
}

/* ---------------------------------------------------------------- */
/* Local rank and size                                               */
/* ---------------------------------------------------------------- */

/* Launchers in priority order: a launcher started INSIDE another one
 * (torchrun under srun, mpirun in a Slurm batch step) sets its own
 * variables, and those describe the process we are, so Slurm's come last. */
static const struct rank_source {
    const char *launcher, *rank, *size, *global;
} rank_sources[] = {
    {"torchrun", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "RANK"},
    {"Open MPI", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
     "OMPI_COMM_WORLD_RANK"},
    {"MPICH", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "PMI_RANK"}, /* also Intel MPI */
    {"PMI", "PMI_LOCAL_RANK", "PMI_LOCAL_SIZE", "PMI_RANK"},
    {"Slurm", "SLURM_LOCALID", NULL, "SLURM_PROCID"},            /* size below */
};

/* Entry @p nodeid of a Slurm tasks-per-node list "2(x3),1"; -1 if none. */
static long slurm_tasks_on_node(const char *list, unsigned long nodeid)
{
    unsigned long seen = 0;
    const char *p = list;
    while (p && *p) {
        char *end;
        if (!isdigit((unsigned char)*p))
            return -1;
        unsigned long n = strtoul(p, &end, 10), rep = 1;
        if (strncmp(end, "(x", 2) == 0) {
            if (!isdigit((unsigned char)end[2]))
                return -1;
            rep = strtoul(end + 2, &end, 10);
            if (*end++ != ')')
                return -1;
        }
        if (nodeid < seen + rep)
            return (n >= 1 && n <= 65536) ? (long)n : -1;
        seen += rep;
        if (*end != ',' && *end != '\0')
            return -1;
        p = *end ? end + 1 : end;
    }
    return -1;
}

/* srun: SLURM_STEP_TASKS_PER_NODE (step), else SLURM_TASKS_PER_NODE (job),
 * the entry for this node (SLURM_NODEID). */
static long slurm_local_size(const ng_env_view *env)
{
    const char *list = env_get(env, "SLURM_STEP_TASKS_PER_NODE");
    if (!list)
        list = env_get(env, "SLURM_TASKS_PER_NODE");
    const char *node = env_get(env, "SLURM_NODEID");
    long id = node ? ng_parse_uint(node, 1u << 20) : 0;
    if (!list || id < 0 || strnlen(list, NG_MAX_ARG + 1) > NG_MAX_ARG)
        return -1;
    return slurm_tasks_on_node(list, (unsigned long)id);
}

int ng_launcher_local_rank(const ng_env_view *env, ng_local_rank *out, char *err, size_t errlen)
{
    if (!out)
        return ngi_fail(err, errlen, "ng_launcher_local_rank: no output");
    memset(out, 0, sizeof *out);
    out->size = 1;
    out->global_rank = -1;
    for (size_t i = 0; i < NGI_ARRAY_LEN(rank_sources); i++) {
        const struct rank_source *s = &rank_sources[i];
        const char *r = env_get(env, s->rank);
        if (!r)
            continue;
        const char *g = env_get(env, s->global);
        out->global_rank = g ? (int)ng_parse_uint(g, 1u << 30) : -1;
        out->launcher = s->launcher;
        out->source = s->rank;
        long rv = ng_parse_uint(r, 65535);
        const char *sz = s->size ? env_get(env, s->size) : NULL;
        long nv = s->size ? (sz ? ng_parse_uint(sz, 65536) : -1) : slurm_local_size(env);
        if (rv < 0 || nv < 1 || rv >= nv) {
            char rs[NGI_SHOW_MAX * 4 + 8], ss[NGI_SHOW_MAX * 4 + 8];
            ngi_show_bytes(r, strnlen(r, NG_MAX_ARG), rs, sizeof rs);
            ngi_show_bytes(sz ? sz : "(unset)", sz ? strnlen(sz, NG_MAX_ARG) : 7, ss, sizeof ss);
            return ngi_fail(err, errlen, "%s=%s with %s=%s is not a valid local rank and size; "
                           "give --local-rank and --local-size", s->rank, rs,
                           s->size ? s->size : "SLURM_STEP_TASKS_PER_NODE",
                           s->size ? ss : "(unusable)");
        }
        out->rank = (unsigned)rv;
        out->size = (unsigned)nv;
        return 0;
    }
    return 0;
}

/* The launchers' own processes, by the kernel's name of the process (comm:
 * the executable's or the script's first 15 bytes): their threads are the
 * launcher's (progress, I/O forwarding), not a compute pool to cap. */
const char *ngi_launcher_process(const char *comm)
{
    static const struct { const char *comm, *launcher; } procs[] = {
        {"mpirun", "Open MPI"},  {"orterun", "Open MPI"}, {"prterun", "Open MPI"},
        {"prted", "Open MPI"},   {"orted", "Open MPI"},   {"mpiexec", "MPI"},
        {"mpiexec.hydra", "MPICH"}, {"mpiexec.openmpi", "Open MPI"},
        {"mpirun.openmpi", "Open MPI"}, {"mpirun.mpich", "MPICH"},
        {"hydra_pmi_proxy", "MPICH"}, {"torchrun", "torchrun"}, {"srun", "Slurm"},
    };
    for (size_t i = 0; comm && i < NGI_ARRAY_LEN(procs); i++)
        if (strcmp(comm, procs[i].comm) == 0)
            return procs[i].launcher;
    return NULL;
}

const char *ng_launcher_unbind_hint(const ng_local_rank *lr)
{
    const char *l = lr && lr->launcher ? lr->launcher : "";
    if (strcmp(l, "Open MPI") == 0)
        return "mpirun --bind-to none";
    if (strcmp(l, "MPICH") == 0 || strcmp(l, "PMI") == 0)
        return "mpiexec -bind-to none";
    if (strcmp(l, "Slurm") == 0)
        return "srun --cpu-bind=none";
    return "mpirun --bind-to none, srun --cpu-bind=none";
}

/* ---------------------------------------------------------------- */
/* Pre-bound ranks                                                   */
/* ---------------------------------------------------------------- */

int ng_launcher_prebound(hwloc_const_cpuset_t current, hwloc_const_cpuset_t allowed)
{
    if (!current || !allowed || hwloc_bitmap_iszero(current))
        return 0;
    /* Only the CPUs the process may use count: a mask listing offline or
     * disallowed CPUs is not narrower for that. */
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (!mine)
        return 0;
    hwloc_bitmap_and(mine, current, allowed);
    int narrower = !hwloc_bitmap_iszero(mine) && !hwloc_bitmap_isequal(mine, allowed);
    hwloc_bitmap_free(mine);
    return narrower;
}

/* ---------------------------------------------------------------- */
/* GPUs: the per-rank split                                          */
/* ---------------------------------------------------------------- */

void ng_rank_gpus_free(ng_rank_gpus *rg)
{
    if (!rg)
        return;
    free(rg->count);
    free(rg->offset);
    free(rg->gpus);
    rg->count = rg->offset = NULL;
    rg->gpus = NULL;
}

static int rg_alloc(ng_rank_gpus *rg, unsigned size)
{
    memset(rg, 0, sizeof *rg);
    rg->size = size;
    rg->count = calloc(size, sizeof(unsigned));
    rg->offset = calloc(size, sizeof(unsigned));
    rg->gpus = calloc((size_t)size * NG_MAX_GPUS, sizeof(int));
    return rg->count && rg->offset && rg->gpus ? 0 : -1;
}

/* Every rank planned with the same list (shared GPUs, or CPU-only). */
static void same_for_all(ng_rank_gpus *rg, const int *list, unsigned n)
{
    for (unsigned r = 0; r < rg->size; r++) {
        rg->count[r] = n;
        rg->offset[r] = r * n;
        if (n)
            memcpy(rg->gpus + (size_t)r * n, list, n * sizeof *list);
    }
    rg->any = n > 0;
}

/* "--gpus" items: "all", "none", or indices in bus order / bus ids.
 * Returns 0 or -2 (bad value, err says which item). */
static int gpus_from_option(const ng_topology *topo, const char *text, int *list, unsigned *n,
                            char *err, size_t errlen)
{
    unsigned ngpu = ng_topology_gpu_count(topo);
    *n = 0;
    if (!strcmp(text, "none") || !*text)
        return 0;
    if (!strcmp(text, "all")) {
        for (unsigned i = 0; i < ngpu && i < NG_MAX_GPUS; i++)
            list[(*n)++] = (int)i;
        return 0;
    }
    if (strlen(text) > NG_MAX_ARG) {
        ngi_fail(err, errlen, "--gpus longer than %d bytes", NG_MAX_ARG);
        return -2;
    }
    char buf[NG_MAX_ARG + 1], *save = NULL;
    memcpy(buf, text, strlen(text) + 1);
    for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        long v = strchr(it, ':') ? ng_topology_gpu_by_busid(topo, it) : ng_parse_uint(it, ngpu);
        if (v < 0 || (unsigned long)v >= ngpu) {
            char show[NGI_SHOW_MAX * 4 + 8];
            ngi_show_bytes(it, strlen(it), show, sizeof show);
            if (!ngpu) /* "(0--1)" named no index: say there is none */
                ngi_fail(err, errlen, "--gpus: '%s': this machine has no GPUs (none in its "
                        "topology): leave out --gpus, or give --gpus none", show);
            else
                ngi_fail(err, errlen, "--gpus: '%s' is not a GPU index (0-%d) or bus id of this "
                        "topology", show, (int)ngpu - 1);
            return -2;
        }
        if (*n >= NG_MAX_GPUS) {
            ngi_fail(err, errlen, "--gpus: more than %d GPUs", NG_MAX_GPUS);
            return -2;
        }
        list[(*n)++] = (int)v;
    }
    return 0;
}

/* The visible-devices variable that applies (CUDA first, then ROCm). */
static const char *visible_var(const ng_env_view *env, const char **name)
{
    static const char *const names[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};
    for (int i = 0; i < 2; i++) {
        const char *v = env_get(env, names[i]);
        if (v) {
            *name = names[i];
            return v;
        }
    }
    return NULL;
}

static int resolve_visible(const ng_topology *topo, const char *name, const char *value,
                           const char *fsroot, int *out, unsigned *n, char *err, size_t len)
{
    ng_gpu_env genv = {0};
    if (!strcmp(name, "CUDA_VISIBLE_DEVICES"))
        genv.cuda_visible_devices = value;
    else
        genv.rocr_visible_devices = value;
    return ngi_gpus_from_env(topo, NULL, &genv, fsroot, out, NG_MAX_GPUS, n, err, len);
}

/* Number of comma-separated entries of a visible-devices list, stopping at
 * "-1" (CUDA's "nothing after this"); 0 for "". */
static unsigned count_entries(const char *v)
{
    unsigned n = 0;
    const char *p = v;
    while (*p) {
        size_t k = strcspn(p, ",");
        if (k == 2 && !strncmp(p, "-1", 2))
            break;
        n++;
        p += k;
        if (*p == ',')
            p++;
    }
    return n;
}

/* The "one entry per rank" rule: when the list has exactly size entries
 * (>= 2), rank r owns entry r: torchrun and mpirun give every rank all the
 * node's GPUs and each rank uses device <local rank>. Every rank computes
 * the same lists, hence the same plan. */
static int split_visible(const ng_topology *topo, const char *name, const char *value,
                         const char *fsroot, ng_rank_gpus *rg, char *err, size_t len)
{
    char buf[NG_MAX_ARG + 1], *save = NULL;
    memcpy(buf, value, strlen(value) + 1);
    unsigned r = 0, pos = 0;
    for (char *it = strtok_r(buf, ",", &save); it && r < rg->size;
         it = strtok_r(NULL, ",", &save), r++) {
        unsigned got = 0;
        if (resolve_visible(topo, name, it, fsroot, rg->gpus + pos, &got, err, len) < 0)
            return -1;
        rg->count[r] = got;
        rg->offset[r] = pos;
        pos += got;
    }
    rg->any = pos > 0;
    snprintf(rg->how, sizeof rg->how, "%s, one entry per rank", name);
    return 0;
}

/* A visible list that names no GPU this node has: "-1", "" (the runtime
 * then sees none), or a node without GPUs. Plan CPU-only and say so. */
static int visible_cpu_only(const ng_topology *topo, const char *name, const char *value,
                            ng_rank_gpus *rg)
{
    char show[NGI_SHOW_MAX * 4 + 8];
    ngi_show_bytes(value, strlen(value), show, sizeof show);
    if (count_entries(value) == 0)
        snprintf(rg->warning, sizeof rg->warning, "%s=%.80s hides every GPU: planning CPU-only",
                 name, show);
    else if (ng_topology_gpu_count(topo) == 0)
        snprintf(rg->warning, sizeof rg->warning, "%s=%.80s but this node has no GPU: planning "
                 "CPU-only", name, show);
    else
        return 0;
    snprintf(rg->how, sizeof rg->how, "none (%s=%.80s)", name, show);
    same_for_all(rg, NULL, 0);
    return 1;
}

static int from_visible(const ng_topology *topo, const char *name, const char *value,
                        const char *fsroot, ng_rank_gpus *rg, char *err, size_t len)
{
    if (strnlen(value, NG_MAX_ARG + 1) > NG_MAX_ARG)
        return ngi_fail(err, len, "%s longer than %d bytes", name, NG_MAX_ARG);
    if (visible_cpu_only(topo, name, value, rg))
        return 0;
    if (rg->size >= 2 && count_entries(value) == rg->size)
        return split_visible(topo, name, value, fsroot, rg, err, len);
    int list[NG_MAX_GPUS];
    unsigned n = 0;
    if (resolve_visible(topo, name, value, fsroot, list, &n, err, len) < 0)
        return -1;
    snprintf(rg->how, sizeof rg->how, "%s, shared by %u rank(s)", name, rg->size);
    same_for_all(rg, list, n);
    return 0;
}

int ng_launcher_rank_gpus(const ng_topology *topo, const ng_env_view *env, const char *fsroot,
                          const char *gpus_option, unsigned size, ng_rank_gpus *rg,
                          char *err, size_t errlen)
{
    if (!topo || !rg || size < 1)
        return ngi_fail(err, errlen, "ng_launcher_rank_gpus: missing argument");
    if (rg_alloc(rg, size) < 0) {
        ng_rank_gpus_free(rg);
        return ngi_fail(err, errlen, "out of memory");
    }
    const char *name = NULL, *value = NULL;
    if (gpus_option) {
        int list[NG_MAX_GPUS];
        unsigned n = 0;
        if (gpus_from_option(topo, gpus_option, list, &n, err, errlen) < 0)
            return -2;
        if (n == size && n >= 2) {
            for (unsigned r = 0; r < n; r++) {
                rg->count[r] = 1;
                rg->offset[r] = r;
                rg->gpus[r] = list[r];
            }
            rg->any = 1;
            snprintf(rg->how, sizeof rg->how, "--gpus, one entry per rank");
            return 0;
        }
        snprintf(rg->how, sizeof rg->how, "--gpus, shared by %u rank(s)", size);
        same_for_all(rg, list, n);
        return 0;
    }
    if ((value = visible_var(env, &name)) != NULL)
        return from_visible(topo, name, value, fsroot, rg, err, errlen);
    snprintf(rg->how, sizeof rg->how, "none visible (no CUDA_VISIBLE_DEVICES/"
             "ROCR_VISIBLE_DEVICES; --gpus all to use every GPU)");
    same_for_all(rg, NULL, 0);
    return 0;
}
