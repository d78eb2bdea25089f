/* NUMA nodes of a topology: hwloc's, plus (on the machine we run on) the
 * kernel's nodes hwloc hides, with their kinds and CPUs; the distance
 * table; their accessors. docs/topology.md. */
#include "private/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int numa_append(ng_topology *t, unsigned *cap)
{
    if (t->n_numa < *cap)
        return 0;
    unsigned ncap = *cap ? *cap * 2 : 16;
    ng_numa_info *a = realloc(t->numa, ncap * sizeof *a);
    if (!a)
        return -1;
    t->numa = a;
    ngi_node_ext *b = realloc(t->next, ncap * sizeof *b);
    if (!b)
        return -1;
    t->next = b;
    *cap = ncap;
    return 0;
}

static int numa_add_hwloc(ng_topology *t, unsigned *cap, hwloc_obj_t obj, int hbm_cpu)
{
    if (numa_append(t, cap) < 0)
        return -1;
    ng_numa_info *ni = &t->numa[t->n_numa];
    ngi_node_ext *ne = &t->next[t->n_numa];
    memset(ni, 0, sizeof *ni);
    memset(ne, 0, sizeof *ne);
    ne->obj = obj;
    ni->os_index = obj->os_index;
    ni->memory_bytes = obj->attr ? obj->attr->numanode.local_memory : 0;
    ngi_numa_kind_from_hwloc(obj, ni, ne);
    ni->has_cpus = !ngi_numa_hwloc_cpuless(obj, ni->kind);
    if (ni->kind == NG_MEM_UNKNOWN && ni->has_cpus)
        ni->kind = NG_MEM_DRAM;
    else if (ni->kind == NG_MEM_UNKNOWN && hbm_cpu)
        ni->kind = NG_MEM_HBM;
    t->n_numa++;
    return 0;
}

static int numa_add_hidden(ng_topology *t, unsigned *cap, unsigned os)
{
    if (numa_append(t, cap) < 0)
        return -1;
    ng_numa_info *ni = &t->numa[t->n_numa];
    memset(ni, 0, sizeof *ni);
    memset(&t->next[t->n_numa], 0, sizeof t->next[0]);
    ni->os_index = os;
    ni->kind = NG_MEM_UNKNOWN;
    ni->memory_bytes = ngi_numa_sysfs_memory(t->fsroot, os);
    t->n_numa++;
    return 0;
}

/* Kernel nodes with memory that hwloc does not show (hwloc 2.9 hides GH200
 * GPU memory nodes). Disallowed nodes stay out unless asked for. */
static int numa_add_kernel_hidden(ng_topology *t, unsigned *cap, int include_disallowed)
{
    hwloc_bitmap_t sys = hwloc_bitmap_alloc(), mems = hwloc_bitmap_alloc();
    int rc = 0;
    if (ngi_read_list_file(t->fsroot, "/sys/devices/system/node/has_memory", sys) < 0 &&
        ngi_read_list_file(t->fsroot, "/sys/devices/system/node/online", sys) < 0)
        goto out;
    hwloc_const_nodeset_t known = hwloc_topology_get_complete_nodeset(t->hw);
    int have_mems = 0;
    if (!include_disallowed) {
        char path[512], buf[8192];
        const char *p;
        if (ngi_path(path, sizeof path, t->fsroot, "/proc/self/status") == 0 &&
            ngi_read_small_file(path, buf, sizeof buf) == 0 &&
            (p = strstr(buf, "Mems_allowed_list:")) != NULL) {
            p += strlen("Mems_allowed_list:");
            p += strspn(p, " \t");
            char list[4096];
            size_t n = strcspn(p, "\n");
            if (n < sizeof list) {
                memcpy(list, p, n);
                list[n] = '\0';
                have_mems = ng_list_parse(list, mems, 1u << 20, NULL, 0) == 0;
            }
        }
    }
    int os;
    hwloc_bitmap_foreach_begin(os, sys)
        if (os >= NGI_NODE_SLOTS || hwloc_bitmap_isset(known, (unsigned)os) ||
            (have_mems && !hwloc_bitmap_isset(mems, (unsigned)os)))
            continue;
        if (numa_add_hidden(t, cap, (unsigned)os) < 0) {
            rc = -1;
            break;
        }
    hwloc_bitmap_foreach_end();
out:
    hwloc_bitmap_free(sys);
    hwloc_bitmap_free(mems);
    return rc;
}

static int numa_cmp(const void *a, const void *b)
{
    const ng_numa_info *x = a, *y = b;
    return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

/* Sort nodes and their ext records together by OS index. */
static int numa_sort(ng_topology *t)
{
    typedef struct { ng_numa_info i; ngi_node_ext e; } pair;
    pair *p = malloc((t->n_numa ? t->n_numa : 1) * sizeof *p);
    if (!p)
        return -1;
    for (unsigned k = 0; k < t->n_numa; k++) {
        p[k].i = t->numa[k];
        p[k].e = t->next[k];
    }
    qsort(p, t->n_numa, sizeof *p, numa_cmp); /* ng_numa_info is the first member */
    for (unsigned k = 0; k < t->n_numa; k++) {
        t->numa[k] = p[k].i;
        t->next[k] = p[k].e;
    }
    free(p);
    return 0;
}

/* Fill each node's cpus: allowed PUs, empty for CPU-less nodes. */
static int numa_fill_cpus(ng_topology *t)
{
    for (unsigned k = 0; k < t->n_numa; k++) {
        hwloc_bitmap_t s = hwloc_bitmap_alloc();
        if (!s)
            return -1;
        if (t->numa[k].has_cpus && t->next[k].obj)
            hwloc_bitmap_and(s, t->next[k].obj->cpuset, t->allowed);
        if (hwloc_bitmap_iszero(s))
            t->numa[k].has_cpus = 0;
        t->numa[k].cpus = s;
    }
    return 0;
}

/* @p next walks hwloc's NUMA nodes (topology.c passes hwloc's own walk,
 * or the test seam's that hides them). */
int ngi_topo_build_numa(ng_topology *t, int include_disallowed,
                        hwloc_obj_t (*next)(hwloc_topology_t, hwloc_obj_t))
{
    unsigned cap = 0;
    int hbm = ngi_numa_cpu_has_hbm(t->hw);
    hwloc_obj_t obj = NULL;
    while ((obj = next(t->hw, obj)) != NULL)
        if (numa_add_hwloc(t, &cap, obj, hbm) < 0)
            return -1;
    if (t->this_system) {
        unsigned n_hw = t->n_numa;
        if (numa_add_kernel_hidden(t, &cap, include_disallowed) < 0)
            return -1;
        ngi_sysfs_hints *h = ngi_numa_hints_load(t->fsroot);
        for (unsigned k = 0; k < t->n_numa; k++) {
            ngi_numa_apply_hints(t->fsroot, h, &t->numa[k], &t->next[k]);
            if (k >= n_hw)
                t->numa[k].has_cpus = 0; /* hwloc has no PU of it: not bindable */
            if (t->numa[k].has_cpus && t->numa[k].kind == NG_MEM_UNKNOWN)
                t->numa[k].kind = NG_MEM_DRAM;
        }
        free(h);
    }
    if (!t->numa && numa_append(t, &cap) < 0)
        return -1;
    return numa_sort(t) < 0 ? -1 : numa_fill_cpus(t);
}

int ngi_numa_index(const ng_topology *t, unsigned os)
{
    unsigned lo = 0, hi = t->n_numa;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (t->numa[mid].os_index == os)
            return (int)mid;
        if (t->numa[mid].os_index < os)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static void dist_from_hwloc(ng_topology *t)
{
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    if (hwloc_distances_get_by_type(t->hw, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) < 0 || nr == 0) {
        nr = 1;
        if (hwloc_distances_get_by_type(t->hw, HWLOC_OBJ_NUMANODE, &nr, &d, 0, 0) < 0 || nr == 0)
            return;
    }
    for (unsigned i = 0; i < d->nbobjs; i++) {
        int a = d->objs[i] ? ngi_numa_index(t, d->objs[i]->os_index) : -1;
        for (unsigned j = 0; j < d->nbobjs && a >= 0; j++) {
            int b = d->objs[j] ? ngi_numa_index(t, d->objs[j]->os_index) : -1;
            hwloc_uint64_t v = d->values[i * d->nbobjs + j];
            if (b >= 0)
                t->dist[(unsigned)a * t->n_numa + (unsigned)b] = v > 0xffff ? 0xffff : (unsigned)v;
        }
    }
    hwloc_distances_release(t->hw, d);
}

/* Live: fill what hwloc left unknown (hidden nodes) from nodeN/distance,
 * whose columns follow the kernel's online node list. */
static void dist_from_sysfs(ng_topology *t)
{
    hwloc_bitmap_t online = hwloc_bitmap_alloc();
    if (ngi_read_list_file(t->fsroot, "/sys/devices/system/node/online", online) < 0)
        goto out;
    for (unsigned a = 0; a < t->n_numa; a++) {
        char abs[128], path[512], buf[8192];
        snprintf(abs, sizeof abs, "/sys/devices/system/node/node%u/distance", t->numa[a].os_index);
        if (ngi_path(path, sizeof path, t->fsroot, abs) < 0 || ngi_read_small_file(path, buf, sizeof buf) < 0)
            continue;
        char *p = buf;
        int os = hwloc_bitmap_first(online);
        while (os >= 0) {
            char *end;
            unsigned long v = strtoul(p, &end, 10);
            if (end == p)
                break;
            p = end;
            int b = ngi_numa_index(t, (unsigned)os);
            unsigned *slot = b >= 0 ? &t->dist[a * t->n_numa + (unsigned)b] : NULL;
            if (slot && *slot == 0)
                *slot = v > 0xffff ? 0xffff : (unsigned)v;
            os = hwloc_bitmap_next(online, os);
        }
    }
out:
    hwloc_bitmap_free(online);
}

int ngi_topo_build_distances(ng_topology *t)
{
    t->dist = calloc((size_t)t->n_numa * t->n_numa + 1, sizeof *t->dist);
    if (!t->dist)
        return -1;
    dist_from_hwloc(t);
    if (t->this_system)
        dist_from_sysfs(t);
    return 0;
}

unsigned ng_topology_numa_count(const ng_topology *t)
{
    return t ? t->n_numa : 0;
}

const ng_numa_info *ng_topology_numa(const ng_topology *t, unsigned i)
{
    return t && i < t->n_numa ? &t->numa[i] : NULL;
}

const ng_numa_info *ng_topology_numa_by_os(const ng_topology *t, unsigned os)
{
    int k = t ? ngi_numa_index(t, os) : -1;
    return k >= 0 ? &t->numa[k] : NULL;
}

unsigned ng_topology_distance(const ng_topology *t, unsigned from_os, unsigned to_os)
{
    int a = t ? ngi_numa_index(t, from_os) : -1, b = t ? ngi_numa_index(t, to_os) : -1;
    return a >= 0 && b >= 0 ? t->dist[(unsigned)a * t->n_numa + (unsigned)b] : 0;
}
