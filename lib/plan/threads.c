/* The thread variables of a task (--omp-guard): the counts, OMP_PROC_BIND
 * with ,bind, and OMP_PLACES written from the CPUs a task owns. The
 * variable names are the option module's table (lib/options/thread_vars.c). */
#include "private/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int already(const ng_env_var *out, unsigned n, const char *name)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(out[i].name, name) == 0)
            return 1;
    return 0;
}

static int add(ng_env_var *out, unsigned *n, unsigned max, const char *name,
               const char *value, int overwrite, unsigned flags)
{
    if (*n >= max)
        return -1;
    ng_env_var *e = &out[*n];
    memset(e, 0, sizeof *e);
    if (ngi_strlcpy(e->name, name, sizeof e->name) < 0 ||
        ngi_strlcpy(e->value, value, sizeof e->value) < 0)
        return -1;
    e->overwrite = overwrite;
    e->flags = flags;
    (*n)++;
    return 0;
}

/* OMP_PLACES/OMP_PROC_BIND are binding variables, never counts: a count
 * list that names them would set them to a number, so they are skipped. */
static int is_place_var(const char *name)
{
    return strcmp(name, "OMP_PLACES") == 0 || strcmp(name, "OMP_PROC_BIND") == 0;
}

int ngi_thread_env(const ng_omp_guard *guard, unsigned threads, int smt,
                  const char *const *vars, ng_env_var *out, unsigned max)
{
    if (!guard || (!out && max))
        return -1;
    if (guard->mode == NG_OMP_OFF)
        return 0;
    /* A task always runs at least one thread, even if it owns no whole core. */
    unsigned owned = threads ? threads : 1;
    unsigned count, flags = 0;
    if (guard->mode == NG_OMP_AUTO || guard->mode == NG_OMP_ADAPTIVE) {
        count = owned;
        flags = NG_ENV_COUNT_AUTO;
    } else if (guard->mode == NG_OMP_FIXED && guard->nthreads >= 1) {
        count = guard->nthreads;
    } else {
        return -1;
    }
    if (!vars)
        vars = ngi_default_thread_vars;
    char value[16];
    snprintf(value, sizeof value, "%u", count);
    unsigned n = 0;
    for (const char *const *v = vars; *v; v++) {
        if (!ngi_thread_var_name_ok(*v, strnlen(*v, 64)) || is_place_var(*v) || already(out, n, *v))
            continue;
        if (add(out, &n, max, *v, value, guard->force, flags) < 0)
            return -1;
    }
    /* adaptive: the governor's budget, the same count; always ours. */
    if (guard->mode == NG_OMP_ADAPTIVE &&
        add(out, &n, max, "NUMAGUARD_OMP_CORES", value, 1, NG_ENV_COUNT_AUTO | NG_ENV_GOVERNOR) < 0)
        return -1;
    /* Binding is opt-in (guard->bind): libgomp binds the initial thread to
     * the first place at start-up, and every pthread or forked child the
     * program creates outside OpenMP inherits that single place. With one
     * thread per place the pool is packed ("close"); otherwise spread it so
     * fewer threads do not pile onto the first cores. */
    (void)smt;
    if (guard->bind &&
        add(out, &n, max, "OMP_PROC_BIND", count == owned ? "close" : "spread",
            guard->force, NG_ENV_BINDING) < 0)
        return -1;
    return (int)n;
}

/* The places of @p cpus: one per core (its PUs in @p cpus), or one per PU
 * with @p smt, in core order. Returns the count; *out is allocated. */
static int places_of(const ng_topology *topo, hwloc_const_cpuset_t cpus, int smt,
                     hwloc_bitmap_t **out)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    int npu = hwloc_bitmap_weight(cpus);
    if (npu <= 0 || !hw)
        return -1;
    hwloc_bitmap_t *pl = calloc((size_t)npu, sizeof *pl);
    if (!pl)
        return -1;
    int n = 0;
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    unsigned i;
    hwloc_bitmap_foreach_begin(i, cpus) {
        if (!seen || hwloc_bitmap_isset(seen, i) || n >= npu)
            continue;
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(hw, i);
        hwloc_obj_t core = pu ? hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu) : NULL;
        pl[n] = hwloc_bitmap_alloc();
        if (!pl[n])
            break;
        if (smt || !core)
            hwloc_bitmap_only(pl[n], i);
        else
            hwloc_bitmap_and(pl[n], core->cpuset, cpus);
        hwloc_bitmap_or(seen, seen, pl[n]);
        n++;
    } hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(seen);
    *out = pl;
    return n;
}

/* "{a,b:len}" for one place, appended at buf[*used]; -1 if it does not fit. */
static int place_text(hwloc_const_bitmap_t set, char *buf, size_t len, size_t *used)
{
    char list[NG_MAX_ARG];
    if (ng_list_format(set, list, sizeof list) < 0)
        return -1;
    /* cpulist "0-3" -> OpenMP "0:4" */
    char omp[sizeof list * 2] = "";
    size_t o = 0;
    for (char *tok = list, *next; tok && *tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        unsigned a, b;
        int k = sscanf(tok, "%u-%u", &a, &b);
        int w = k == 2 ? snprintf(omp + o, sizeof omp - o, "%s%u:%u", o ? "," : "", a, b - a + 1)
                       : snprintf(omp + o, sizeof omp - o, "%s%s", o ? "," : "", tok);
        if (w < 0 || (size_t)w >= sizeof omp - o)
            return -1;
        o += (size_t)w;
    }
    int w = snprintf(buf + *used, len - *used, "%s{%s}", *used ? "," : "", omp);
    if (w < 0 || (size_t)w >= len - *used)
        return -1;
    *used += (size_t)w;
    return 0;
}

/* Length of the run of places from @p i on that each repeat the previous
 * one shifted by one CPU (OpenMP's "{place}:count" interval). */
static int run_length(hwloc_bitmap_t *pl, int n, int i)
{
    int r = 1;
    hwloc_bitmap_t shifted = hwloc_bitmap_alloc();
    while (shifted && i + r < n) {
        hwloc_bitmap_zero(shifted);
        unsigned c;
        hwloc_bitmap_foreach_begin(c, pl[i + r - 1])
            hwloc_bitmap_set(shifted, c + 1);
        hwloc_bitmap_foreach_end();
        if (!hwloc_bitmap_isequal(shifted, pl[i + r]))
            break;
        r++;
    }
    hwloc_bitmap_free(shifted);
    return r;
}

int ngi_omp_places_format(const ng_topology *topo, hwloc_const_cpuset_t cpus, int smt,
                         char *buf, size_t len)
{
    if (!buf || !len)
        return -1;
    buf[0] = '\0';
    if (!topo || !cpus || hwloc_bitmap_iszero(cpus))
        return -1;
    hwloc_bitmap_t *pl = NULL;
    int n = places_of(topo, cpus, smt, &pl);
    size_t used = 0;
    int rc = n > 0 ? 0 : -1;
    for (int i = 0; rc == 0 && i < n;) {
        int r = run_length(pl, n, i);
        rc = place_text(pl[i], buf, len, &used);
        if (rc == 0 && r > 1) {
            int w = snprintf(buf + used, len - used, ":%d", r);
            rc = (w < 0 || (size_t)w >= len - used) ? -1 : 0;
            used += rc == 0 ? (size_t)w : 0;
        }
        i += r;
    }
    for (int i = 0; i < n; i++)
        hwloc_bitmap_free(pl[i]);
    free(pl);
    if (rc < 0)
        buf[0] = '\0';
    return rc < 0 ? -1 : (int)used;
}
