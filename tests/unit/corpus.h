/* The topology corpus (tests/topologies) as the planner's property tests
 * and bench/quality.c walk it: each file that loads, in name order, and
 * the partial allocations the properties are checked on. Public API only
 * (numaguard.h), so bench/quality.c builds it against older releases. */
#ifndef NG_TEST_CORPUS_H
#define NG_TEST_CORPUS_H

#include "numaguard.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORPUS_DIR "tests/topologies"
#define CORPUS_MAX 256

/* Allocations: 0 the whole node, 1 the first half of the cores, 2 half
 * from a third on, 3 every other core, 4 a busy node's: from 3/8 to 3/4
 * (a little of the first half, more of the second: what `-c 24 --gpus 1`
 * gets on a half-busy two-socket node). A topology without cores: all
 * its allowed CPUs. */
enum { CORPUS_ALLOCATIONS = 5 };

static inline void corpus_allocation(const ng_topology *topo, int kind, hwloc_bitmap_t out)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    int n = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    hwloc_bitmap_zero(out);
    for (int i = 0; i < n; i++) {
        int take = kind == 0 || (kind == 1 && i < n / 2) || (kind == 2 && i >= n / 3 && i < n / 3 + n / 2) ||
                   (kind == 3 && i % 2 == 0) || (kind == 4 && i >= 3 * n / 8 && i < 3 * n / 4);
        if (take)
            hwloc_bitmap_or(out, out, hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)i)->cpuset);
    }
    if (n <= 0)
        hwloc_bitmap_copy(out, ng_topology_allowed_cpus(topo));
    hwloc_bitmap_and(out, out, ng_topology_allowed_cpus(topo));
}

static inline int corpus_cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* @fn(topology, file name, @arg) for each *.xml of @dir that loads, in
 * name order, until @fn returns 0. Returns how many loaded, or -1 when
 * @dir cannot be opened. */
typedef int (*corpus_fn)(const ng_topology *topo, const char *name, void *arg);

static inline int corpus_each(const char *dir, corpus_fn fn, void *arg)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char *names[CORPUS_MAX];
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < CORPUS_MAX)
        if (strstr(e->d_name, ".xml"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, corpus_cmp_name);
    int loaded = 0, go = 1;
    for (unsigned i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        ng_topology_options o = {.xml_path = path};
        ng_topology *topo = NULL;
        if (go && names[i] && ng_topology_load(&topo, &o, NULL, 0) == 0) {
            loaded++;
            go = fn(topo, names[i], arg);
        }
        ng_topology_free(topo);
        free(names[i]);
    }
    return loaded;
}

#endif
