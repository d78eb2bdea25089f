/* Judging inspected processes (`numaguard check`), alone and together.
 *
 * One process: runnable threads above the cores it owns is
 * oversubscription now; more threads than cores with few runnable is
 * usually idle pool threads (advice to cap them only when the process has
 * no thread caps yet); memory and CPUs far from its GPUs.
 * Together: runnable threads of several processes whose masks overlap,
 * against the cores of those masks (4 processes x 2 busy threads on 2
 * cores is oversubscribed although each one alone is not), and bound
 * processes piled on fewer cores than there are processes. Rules and
 * messages: docs/check.md.
 */
#include "private/inspect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Notes and escaping                                                   */
/* ------------------------------------------------------------------ */

/* Notes are our sentences with values from /proc inside; the backslash is
 * kept so values already shown as \xNN by other messages stay readable. */
void ngi_note(ng_notes *notes, const char *fmt, ...)
{
    char raw[NG_NOTE_LEN];
    va_list ap;
    if (notes->n >= NG_NOTES_MAX)
        return;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    ngi_escape_bytes(raw, strlen(raw), notes->text[notes->n++], NG_NOTE_LEN, 0);
}

unsigned ngi_set_cores(const ng_topology *topo, hwloc_const_bitmap_t set)
{
    hwloc_topology_t t = ng_topology_hwloc(topo);
    int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    unsigned n = 0;
    if (ncores <= 0) {   /* a topology without cores: count PUs */
        int w = hwloc_bitmap_weight(set);
        return w > 0 ? (unsigned)w : 0;
    }
    for (int i = 0; i < ncores; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)i);
        if (c && hwloc_bitmap_intersects(c->cpuset, set))
            n++;
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* One process                                                          */
/* ------------------------------------------------------------------ */

/* The first "NAME=value" of the thread caps, for a message. */
static void first_cap(const char *caps, char *out, size_t len)
{
    size_t n = strcspn(caps, " ");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), caps);
}

/* A thread cap above the cores owned: the process will oversubscribe its
 * cores as soon as that pool is busy (torchrun/user presets kept as is). */
static void judge_caps(ng_proc_view *v)
{
    char *buf = strdup(v->thread_caps), *save = NULL;
    for (char *it = buf ? strtok_r(buf, " ", &save) : NULL; it && v->cores;
         it = strtok_r(NULL, " ", &save)) {
        const char *eq = strchr(it, '=');
        char *end;
        unsigned long n = eq && eq[1] >= '0' && eq[1] <= '9' ? strtoul(eq + 1, &end, 10) : 0;
        if (n > v->cores && !*end) {
            ngi_note(&v->warnings, "%s asks for more threads than the %u core(s) the process has",
                    it, v->cores);
            break;
        }
    }
    free(buf);
}

/* Every pool --omp-guard caps is capped: started under numaguard with
 * thread variables (its guard), or all of them set by hand. A launcher's
 * lone preset (torchrun's OMP_NUM_THREADS=1) leaves the other pools open. */
static int fully_capped(const ng_proc_view *v)
{
    unsigned set = 0, all = 0;
    for (const char *c = v->thread_caps; *c; c++)
        set += *c == '=';
    all = ngi_thread_var_count();
    return (v->numaguard_started && set) || set >= all;
}

/* More threads than cores, few runnable: advice only when the process
 * does not follow it already. */
static void judge_pool(ng_proc_view *v)
{
    char cap[80];
    first_cap(v->thread_caps, cap, sizeof cap);
    if (!v->thread_caps[0])
        ngi_note(&v->warnings, "%u threads for %u core(s), %u runnable now: idle pool threads? "
                "cap OMP_NUM_THREADS & co (--omp-guard)", v->threads, v->cores, v->runnable);
    else if (!fully_capped(v))
        ngi_note(&v->warnings, "%u threads for %u core(s), %u runnable now: idle pool threads? "
                "%s caps only some pools (--omp-guard caps the others)", v->threads, v->cores,
                v->runnable, cap);
    else
        ngi_note(&v->warnings, "%u threads for %u core(s), %u runnable now: idle pool threads? "
                "(thread caps already set: %s)", v->threads, v->cores, v->runnable, cap);
}

/* The largest thread count the process's variables ask for (0: none). */
static unsigned largest_cap(const char *caps)
{
    unsigned most = 0;
    for (const char *c = strchr(caps, '='); c; c = strchr(c + 1, '=')) {
        unsigned long n = strtoul(c + 1, NULL, 10);
        most = n > most && n <= NG_MAX_THREADS ? (unsigned)n : most;
    }
    return most;
}

/* Nested pools: an OpenMP runtime and at least twice the threads one team
 * of the cores (or of the largest cap) would need, so several threads of
 * the process each run a team (libgomp keeps a team's threads per calling
 * thread). The governor of --omp-guard=adaptive shares the cores among
 * them; a process it already governs is not told. 1 when said. */
static int judge_nested(ng_proc_view *v)
{
    unsigned cap = largest_cap(v->thread_caps), team = cap > v->cores ? cap : v->cores;
    if (!v->omp_runtime || v->omp_governed || !v->cores || v->threads < 2 * team + 2)
        return 0;
    ngi_note(&v->warnings, "%u threads for %u core(s) with an OpenMP runtime loaded: several "
            "threads each run an OpenMP team (nested pools)? --omp-guard=adaptive shares the "
            "cores among them", v->threads, v->cores);
    return 1;
}

static void judge_threads(ng_proc_view *v)
{
    int nested = judge_nested(v);
    if (v->runnable > v->cores)
        ngi_note(&v->warnings, "oversubscribed: %u runnable threads on %u core(s)", v->runnable,
                v->cores);
    else if (!nested && v->threads > v->cores && !ngi_launcher_process(v->comm))
        /* A launcher's (mpirun, prted, torchrun, srun) idle threads are
         * its own: no pool to cap, so no --omp-guard advice. */
        judge_pool(v);
    judge_caps(v);
}

/* --omp-guard=adaptive promised the governor (NUMAGUARD_OMP_GOVERNOR) and
 * the process has its maps read but no governor in them: LD_PRELOAD did
 * not load it (a container without its directory at that path, or a
 * runtime that dropped LD_PRELOAD), so its teams are not governed. */
static void judge_promise(ng_proc_view *v)
{
    if (!v->omp_promised[0] || v->omp_governed || !v->have_memory)
        return;
    ngi_note(&v->warnings, "governor promised but not loaded: NUMAGUARD_OMP_GOVERNOR=%s is not "
             "mapped (a container without that directory at the same path, or without "
             "LD_PRELOAD? docs/containers.md)", v->omp_promised);
}

/* What the governor said, in the process, it cannot govern (its marks,
 * numaguard/omp_marks.h): one warning each, this text alone. */
static void judge_ungoverned(ng_proc_view *v)
{
    static const struct {
        unsigned bit;
        const char *text;
    } says[] = {
        {NG_OMP_UNGOVERNED_STATIC, "an OpenMP runtime linked in statically: the governor "
                                   "cannot govern its regions (link with -fopenmp against the "
                                   "shared runtime, or --omp-guard=auto/1)"},
        {NG_OMP_UNGOVERNED_STATIC_LIB, "a loaded library carries its own OpenMP runtime "
                                       "(linked in statically): the governor cannot govern that "
                                       "library's own regions (its name: the governor's line on "
                                       "the task's stderr)"},
        {NG_OMP_UNGOVERNED_BLIS, "BLIS sizes its loops one by one (BLIS_JC_NT, ...): the "
                                 "governor leaves its calls alone (BLIS_NUM_THREADS alone, "
                                 "without the ways, lets it govern them)"},
        {NG_OMP_UNGOVERNED_LIBOMP_ARCH, "libomp's regions cannot be governed on this "
                                        "architecture (no entry stub): they keep the runtime's "
                                        "team sizes"},
    };
    for (size_t i = 0; i < NGI_ARRAY_LEN(says); i++)
        if (v->omp_ungoverned & says[i].bit)
            ngi_note(&v->warnings, "%s", says[i].text);
}

void ngi_judge_proc(ngi_proc *p)
{
    ng_proc_view *v = &p->v;
    judge_threads(v);
    judge_promise(v);
    judge_ungoverned(v);
    if (v->n_gpus && v->mem_bytes && !hwloc_bitmap_iszero(p->gpu_nodes) &&
        v->gpu_local_bytes * 2 < v->mem_bytes)
        ngi_note(&v->warnings, "most memory is not on the GPU's NUMA node(s)");
    if (v->n_gpus && !hwloc_bitmap_iszero(p->gpu_nodes) &&
        !hwloc_bitmap_intersects(p->cpu_nodes, p->gpu_nodes))
        ngi_note(&v->warnings, "no CPU of the process is on the GPU's NUMA node(s)");
}

/* ------------------------------------------------------------------ */
/* Groups of overlapping masks (union-find)                             */
/* ------------------------------------------------------------------ */

static unsigned uf_find(unsigned *parent, unsigned i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

/* parent[i] = group root of set i, sets joined when they intersect. */
static void group_overlapping(hwloc_const_bitmap_t *sets, unsigned n, unsigned *parent)
{
    for (unsigned i = 0; i < n; i++)
        parent[i] = i;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++)
            if (hwloc_bitmap_intersects(sets[i], sets[j]))
                parent[uf_find(parent, j)] = uf_find(parent, i);
}

/* "a,b,c" of at most 8 pids, then ",...". */
static void pid_list(const int *pids, unsigned n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < n && used + 16 < len; i++) {
        if (i == 8) {
            snprintf(out + used, len - used, ",...");
            return;
        }
        used += (size_t)snprintf(out + used, len - used, "%s%d", i ? "," : "", pids[i]);
    }
}

/* ------------------------------------------------------------------ */
/* Runnable threads across processes                                    */
/* ------------------------------------------------------------------ */

typedef struct runnable_set {
    hwloc_const_bitmap_t *masks;   /* one per runnable thread */
    unsigned *proc;                /* its process index */
    unsigned n;
} runnable_set;

static int collect_runnable(const ng_inspection *ins, runnable_set *rs)
{
    unsigned cap = 0;
    for (unsigned i = 0; i < ins->n_procs; i++)
        cap += ins->procs[i].v.n_thread_views;
    rs->n = 0;
    rs->masks = malloc((cap ? cap : 1) * sizeof *rs->masks);
    rs->proc = malloc((cap ? cap : 1) * sizeof *rs->proc);
    if (!rs->masks || !rs->proc)
        return -1;
    for (unsigned i = 0; i < ins->n_procs; i++)
        for (unsigned t = 0; t < ins->procs[i].v.n_thread_views; t++)
            if (ins->procs[i].threads[t].state == 'R') {
                rs->masks[rs->n] = ins->procs[i].threads[t].cpus;
                rs->proc[rs->n++] = i;
            }
    return 0;
}

/* Runnable threads whose mask lies inside @p set, how many processes they
 * belong to, and the last of those processes. */
static unsigned runnable_inside(const runnable_set *rs,
                                hwloc_const_bitmap_t set, unsigned *nprocs, unsigned *only)
{
    unsigned n = 0, last = (unsigned)-1;
    *nprocs = 0;
    for (unsigned i = 0; i < rs->n; i++) {
        if (!hwloc_bitmap_isincluded(rs->masks[i], set))
            continue;
        n++;
        if (rs->proc[i] != last) {   /* threads of a process are consecutive */
            (*nprocs)++;
            last = rs->proc[i];
        }
    }
    *only = last;
    return n;
}

/* One verdict on a CPU set: more runnable threads inside it than cores.
 * A lone process already told "oversubscribed" on its own is not repeated. */
static void judge_set(const ng_topology *topo, ng_inspection *ins, const runnable_set *rs,
                      hwloc_const_bitmap_t set)
{
    unsigned nprocs, only, cores = ngi_set_cores(topo, set);
    unsigned n = runnable_inside(rs, set, &nprocs, &only);
    char list[256];
    if (n <= cores)
        return;
    if (nprocs == 1 && ins->procs[only].v.runnable > ins->procs[only].v.cores)
        return;
    ng_list_format(set, list, sizeof list);
    ngi_note(&ins->warnings, "oversubscribed: %u runnable threads of %u process(es) on %u "
            "core(s) (cpus %s)", n, nprocs, cores, list);
}

/* Each group of overlapping runnable masks as a whole, then each distinct
 * narrower mask inside it (threads pinned to one CPU within a wider group). */
static int judge_runnable(const ng_topology *topo, ng_inspection *ins)
{
    runnable_set rs;
    int rc = collect_runnable(ins, &rs);
    unsigned *parent = rs.n ? malloc(rs.n * sizeof *parent) : NULL;
    hwloc_bitmap_t u = hwloc_bitmap_alloc();
    if (rc < 0 || (rs.n && !parent) || !u) {
        rc = -1;
        goto out;
    }
    group_overlapping(rs.masks, rs.n, parent);
    for (unsigned g = 0; g < rs.n; g++) {
        if (uf_find(parent, g) != g)
            continue;
        hwloc_bitmap_zero(u);
        for (unsigned i = 0; i < rs.n; i++)
            if (uf_find(parent, i) == g)
                hwloc_bitmap_or(u, u, rs.masks[i]);
        judge_set(topo, ins, &rs, u);
        for (unsigned i = 0; i < rs.n; i++) {
            int first = 1;
            for (unsigned k = 0; k < i && first; k++)
                first = !hwloc_bitmap_isequal(rs.masks[k], rs.masks[i]);
            if (first && uf_find(parent, i) == g && !hwloc_bitmap_isequal(rs.masks[i], u))
                judge_set(topo, ins, &rs, rs.masks[i]);
        }
    }
out:
    hwloc_bitmap_free(u);
    free(parent);
    free(rs.masks);
    free(rs.proc);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Bound processes whose masks overlap                                  */
/* ------------------------------------------------------------------ */

static int add_overlap(const ng_topology *topo, ng_inspection *ins, const unsigned *bound,
                       unsigned *parent, unsigned nb, unsigned root)
{
    hwloc_bitmap_t u = hwloc_bitmap_alloc();
    if (!u)
        return -1;
    ng_overlap_view *o = &ins->overlaps[ins->n_overlaps];
    int *pids = ins->overlap_pids;
    unsigned at = 0;
    for (unsigned k = 0; k < ins->n_overlaps; k++)
        at += ins->overlaps[k].n_pids;
    o->n_pids = 0;
    o->pids = pids + at;
    for (unsigned i = 0; i < nb; i++)
        if (uf_find(parent, i) == root) {
            pids[at + o->n_pids++] = ins->procs[bound[i]].v.pid;
            hwloc_bitmap_or(u, u, ins->procs[bound[i]].cpus);
        }
    o->cpus = u;
    o->cores = ngi_set_cores(topo, u);
    ins->overlap_sets[ins->n_overlaps++] = u;
    if (o->n_pids > o->cores) {
        char list[256], pl[128];
        ng_list_format(u, list, sizeof list);
        pid_list(o->pids, o->n_pids, pl, sizeof pl);
        ngi_note(&ins->warnings, "%u bound processes share %u core(s) (cpus %s; pids %s): "
                "they take turns on them", o->n_pids, o->cores, list, pl);
    }
    return 0;
}

/* Bound by someone (a launcher, taskset, numaguard), not merely inherited
 * from a listed parent with the same mask: DataLoader workers and other
 * forked children share their parent's cores by design. */
static int chosen_mask(const ng_inspection *ins, const ngi_proc *p)
{
    if (p->v.gone || !p->v.bound)
        return 0;
    for (unsigned i = 0; i < ins->n_procs; i++)
        if (ins->procs[i].v.pid == p->v.ppid && !ins->procs[i].v.gone)
            return !hwloc_bitmap_isequal(ins->procs[i].cpus, p->cpus);
    return 1;
}

static int judge_overlaps(const ng_topology *topo, ng_inspection *ins)
{
    unsigned n = ins->n_procs, nb = 0;
    unsigned *bound = malloc((n ? n : 1) * sizeof *bound), *parent = malloc((n ? n : 1) * sizeof *parent);
    hwloc_const_bitmap_t *sets = malloc((n ? n : 1) * sizeof *sets);
    ins->overlaps = calloc(n ? n : 1, sizeof *ins->overlaps);
    ins->overlap_sets = calloc(n ? n : 1, sizeof *ins->overlap_sets);
    ins->overlap_pids = malloc((n ? n : 1) * sizeof *ins->overlap_pids);
    int rc = bound && parent && sets && ins->overlaps && ins->overlap_sets && ins->overlap_pids
                 ? 0 : -1;
    for (unsigned i = 0; rc == 0 && i < n; i++)
        if (chosen_mask(ins, &ins->procs[i])) {
            sets[nb] = ins->procs[i].cpus;
            bound[nb++] = i;
        }
    if (rc == 0)
        group_overlapping(sets, nb, parent);
    for (unsigned g = 0; rc == 0 && g < nb; g++) {
        unsigned members = 0;
        if (uf_find(parent, g) != g)
            continue;
        for (unsigned i = 0; i < nb; i++)
            members += uf_find(parent, i) == g;
        if (members >= 2)
            rc = add_overlap(topo, ins, bound, parent, nb, g);
    }
    free(bound);
    free(parent);
    free(sets);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Per-CPU summary                                                      */
/* ------------------------------------------------------------------ */

/* CPUs shown: where a thread ran last, and those of bound masks. */
static void summary_cpus(const ng_inspection *ins, hwloc_bitmap_t set)
{
    for (unsigned i = 0; i < ins->n_procs; i++) {
        const ngi_proc *p = &ins->procs[i];
        if (p->v.gone)
            continue;
        if (p->v.bound)
            hwloc_bitmap_or(set, set, p->cpus);
        for (unsigned t = 0; t < p->v.n_thread_views; t++)
            if (p->threads[t].last_cpu >= 0 && p->threads[t].last_cpu <= NG_MAX_PU_OS_INDEX)
                hwloc_bitmap_set(set, (unsigned)p->threads[t].last_cpu);
    }
}

static ng_cpu_view *cpu_slot(ng_inspection *ins, int cpu)
{
    unsigned lo = 0, hi = ins->n_cpus;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (ins->cpus[mid].cpu < (unsigned)cpu)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ins->n_cpus && ins->cpus[lo].cpu == (unsigned)cpu ? &ins->cpus[lo] : NULL;
}

static void count_on_cpus(ng_inspection *ins)
{
    for (unsigned i = 0; i < ins->n_procs; i++) {
        const ngi_proc *p = &ins->procs[i];
        for (unsigned t = 0; t < p->v.n_thread_views; t++) {
            ng_cpu_view *c = cpu_slot(ins, p->threads[t].last_cpu);
            if (c) {
                c->threads++;
                c->runnable += p->threads[t].state == 'R';
            }
        }
        for (unsigned k = 0; p->v.bound && !p->v.gone && k < ins->n_cpus; k++)
            ins->cpus[k].bound += hwloc_bitmap_isset(p->cpus, ins->cpus[k].cpu);
    }
}

static int build_cpu_summary(ng_inspection *ins)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int w, cpu;
    if (!set)
        return -1;
    summary_cpus(ins, set);
    w = hwloc_bitmap_weight(set);
    ins->cpus = calloc(w > 0 ? (size_t)w : 1, sizeof *ins->cpus);
    if (!ins->cpus) {
        hwloc_bitmap_free(set);
        return -1;
    }
    hwloc_bitmap_foreach_begin(cpu, set)
        ins->cpus[ins->n_cpus++].cpu = (unsigned)cpu;
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(set);
    count_on_cpus(ins);
    return 0;
}

int ngi_judge_all(const ng_topology *topo, ng_inspection *ins)
{
    if (build_cpu_summary(ins) < 0 || judge_runnable(topo, ins) < 0)
        return -1;
    return judge_overlaps(topo, ins);
}
