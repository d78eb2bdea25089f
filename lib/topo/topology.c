/* Topology: load hwloc (live, cached or XML), then build the NUMA, GPU and
 * NIC views (numa.c, gpus.c, nic.c); the topology's own accessors. The
 * orchestrator of lib/topo/: nothing in the module calls back into it.
 * Rules and their reasons are in docs/topology.md. */
#include "private/topo.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* hwloc's own walk over its NUMA nodes (the default of ngi_sys_ops.next_numa). */
static hwloc_obj_t next_numa(hwloc_topology_t hw, hwloc_obj_t prev)
{
    return hwloc_get_next_obj_by_type(hw, HWLOC_OBJ_NUMANODE, prev);
}

/* ------------------------------------------------------------------ */
/* Loading                                                              */
/* ------------------------------------------------------------------ */

/* An XML is this machine if its PUs and NUMA nodes are the ones the kernel
 * has online: online CPUs within the XML's complete set, the XML's usable
 * PUs online, its nodes online, and every kernel node with CPUs in it. */
static int xml_matches_sysfs(hwloc_topology_t hw, const char *fsroot)
{
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    hwloc_bitmap_t cpunodes = hwloc_bitmap_alloc();
    int ok = 0;
    if (ngi_read_list_file(fsroot, "/sys/devices/system/cpu/online", cpus) < 0)
        goto out;
    if (ngi_read_list_file(fsroot, "/sys/devices/system/node/online", nodes) < 0)
        hwloc_bitmap_only(nodes, 0); /* kernel without NUMA: one node 0 */
    if (ngi_read_list_file(fsroot, "/sys/devices/system/node/has_cpu", cpunodes) < 0)
        hwloc_bitmap_copy(cpunodes, nodes);
    ok = !hwloc_bitmap_iszero(cpus) &&
         hwloc_bitmap_isincluded(cpus, hwloc_topology_get_complete_cpuset(hw)) &&
         hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(hw), cpus) &&
         hwloc_bitmap_isincluded(hwloc_topology_get_topology_nodeset(hw), nodes) &&
         hwloc_bitmap_isincluded(cpunodes, hwloc_topology_get_complete_nodeset(hw));
out:
    hwloc_bitmap_free(cpus);
    hwloc_bitmap_free(nodes);
    hwloc_bitmap_free(cpunodes);
    return ok;
}

/* An XML hwloc refused: a format version this hwloc does not read (said
 * as such, both versions named), else bad content. */
static int bad_xml(const char *path, char *err, size_t errlen)
{
    int e = errno;
    if (ngi_hwloc_xml_unreadable(path, err, errlen) < 0)
        return -1;
    return ngi_fail(err, errlen, "'%.200s' is not a valid hwloc XML topology (%s)", path,
                    strerror(e));
}

static int hw_load(ng_topology *t, const ng_topology_options *o, char *err, size_t errlen)
{
    if (hwloc_topology_init(&t->hw) < 0) {
        t->hw = NULL;
        return ngi_fail(err, errlen, "hwloc_topology_init failed: %s", strerror(errno));
    }
    if (ngi_hwloc_setup(t->hw, o->include_disallowed) < 0)
        return ngi_fail(err, errlen, "hwloc: cannot set flags/filters: %s", strerror(errno));
    if (o->xml_buffer) {
        /* Another machine's XML (hwloc counts the NUL in the size). */
        if (!o->xml_len || o->xml_len >= INT_MAX || o->xml_buffer[o->xml_len] != '\0' ||
            hwloc_topology_set_xmlbuffer(t->hw, o->xml_buffer, (int)o->xml_len + 1) < 0)
            return ngi_fail(err, errlen, "not a valid hwloc XML topology");
    } else if (o->xml_path && *o->xml_path) {
        if (access(o->xml_path, R_OK) < 0)
            return ngi_fail(err, errlen, "cannot read topology XML '%.200s': %s", o->xml_path,
                           strerror(errno));
        /* hwloc 2.x parses the file here, 3.0 at load: either way a
         * failure means bad content (bad_xml). */
        if (hwloc_topology_set_xml(t->hw, o->xml_path) < 0)
            return bad_xml(o->xml_path, err, errlen);
    } else {
        ngi_hwloc_skip_slow_components(t->hw);
    }
    if (hwloc_topology_load(t->hw) < 0) {
        if (o->xml_buffer)
            return ngi_fail(err, errlen, "not a valid hwloc XML topology (%s)", strerror(errno));
        if (o->xml_path && *o->xml_path)
            return bad_xml(o->xml_path, err, errlen);
        return ngi_fail(err, errlen, "hwloc cannot load the live topology: %s", strerror(errno));
    }
    if (hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_PU) <= 0)
        return ngi_fail(err, errlen, "topology has no usable PU");
    return 0;
}

/* Live discovery replaced by the node's topology cache (cache.c)
 * when it is valid: 1 loaded, 0 not (t->hw reset; the caller discovers live).
 * Flags and filters as in hw_load, so both paths give the same objects. */
static int hw_load_cache(ng_topology *t, const ng_topology_options *o, char *why,
                         size_t whylen)
{
    if (!o->cache_dir || !*o->cache_dir || (o->xml_path && *o->xml_path) || o->xml_buffer)
        return 0;
    if (hwloc_topology_init(&t->hw) < 0) {
        t->hw = NULL;
        return ngi_fail(why, whylen, "hwloc_topology_init failed"), 0;
    }
    if (ngi_hwloc_setup(t->hw, o->include_disallowed) == 0 &&
        ngi_cache_use(t->hw, o->cache_dir, why, whylen) == 0) {
        if (hwloc_topology_load(t->hw) == 0 && hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_PU) > 0)
            return 1;
        ngi_fail(why, whylen, "hwloc cannot load the cached XML");
    }
    hwloc_topology_destroy(t->hw);
    t->hw = NULL;
    return 0;
}

int ng_topology_load(ng_topology **out, const ng_topology_options *opts, char *err, size_t errlen)
{
    return ngi_topology_load_sys(NULL, out, opts, err, errlen);
}

/* Indices bound every bitmap numaguard builds: an XML may leave a NUMA
 * node without os_index (hwloc then says 2^32-1) or claim absurd PUs. */
static int check_indices(const ng_topology *t, char *err, size_t errlen)
{
    hwloc_obj_t node = NULL;
    while ((node = hwloc_get_next_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, node)) != NULL)
        if (node->os_index > NG_MAX_NUMA_OS_INDEX)
            return ngi_fail(err, errlen, "invalid topology: NUMA node index %u out of range "
                                         "(0-%d)", node->os_index, NG_MAX_NUMA_OS_INDEX);
    if (hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(t->hw)) > NG_MAX_PU_OS_INDEX)
        return ngi_fail(err, errlen, "invalid topology: a PU index is above %d",
                        NG_MAX_PU_OS_INDEX);
    return 0;
}

/* What the NUMA view must be after building it. */
static int check_numa(const ng_topology *t, char *err, size_t errlen)
{
    /* hwloc >= 2 reports at least one NUMA node on every machine (a non-NUMA
     * one included), so none means broken discovery (sysfs hidden or
     * damaged, a hand-made XML): nothing to place memory on, and CPU
     * placement from the same discovery is not to be trusted either. */
    if (t->n_numa == 0)
        return ngi_fail(err, errlen, "invalid topology: hwloc found no NUMA node "
                                     "(damaged sysfs or XML?)");
    /* hwloc accepts an XML that numbers two NUMA nodes alike (found by
     * fuzzing); lookups by OS index would then be ambiguous. */
    for (unsigned k = 1; k < t->n_numa; k++)
        if (t->numa[k].os_index == t->numa[k - 1].os_index)
            return ngi_fail(err, errlen, "invalid topology: two NUMA nodes are numbered %u",
                            t->numa[k].os_index);
    return 0;
}

/* The views over hwloc's objects, in order: NUMA nodes (@p next walks
 * hwloc's), distances, GPUs, NICs. -1 with err on a broken topology or no
 * memory. */
static int build_views(ng_topology *t, const ng_topology_options *o,
                       hwloc_obj_t (*next)(hwloc_topology_t, hwloc_obj_t), char *err,
                       size_t errlen)
{
    if (check_indices(t, err, errlen) < 0)
        return -1;
    if (!t->allowed || ngi_topo_build_numa(t, o->include_disallowed, next) < 0)
        return ngi_fail(err, errlen, "out of memory while building the topology view");
    if (check_numa(t, err, errlen) < 0)
        return -1;
    if (ngi_topo_build_distances(t) < 0)
        return ngi_fail(err, errlen, "out of memory while building the topology view");
    /* GPUs and NICs refuse OS device names the kernel would not give
     * (err names the device; the caller names the file). */
    if (ngi_topo_build_gpus(t, err, errlen) < 0 ||
        (t->nics = ngi_nic_set_build(t, err, errlen)) == NULL)
        return -1;
    return 0;
}

static int load(const ngi_sys_ops *sys, ng_topology **out, const ng_topology_options *opts,
                char *cache_why, size_t cwlen, char *err, size_t errlen)
{
    static const ng_topology_options none;
    const ng_topology_options *o = opts ? opts : &none;
    if (!out)
        return ngi_fail(err, errlen, "ng_topology_load: no output pointer");
    *out = NULL;
    ng_topology *t = calloc(1, sizeof *t);
    if (!t)
        return ngi_fail(err, errlen, "out of memory");
    const char *root = (o->fsroot && *o->fsroot) ? o->fsroot : "/";
    if (ngi_strlcpy(t->fsroot, root, sizeof t->fsroot) < 0) {
        free(t);
        return ngi_fail(err, errlen, "fsroot longer than %zu bytes", sizeof t->fsroot - 1);
    }
    t->from_cache = hw_load_cache(t, o, cache_why, cwlen);
    if (!t->from_cache && hw_load(t, o, err, errlen) < 0) {
        ng_topology_free(t);
        return -1;
    }
    int xml = o->xml_path && *o->xml_path;
    t->this_system = o->xml_buffer ? 0 : xml ? xml_matches_sysfs(t->hw, t->fsroot) : 1;
    t->allowed = hwloc_bitmap_dup(o->include_disallowed ? hwloc_topology_get_topology_cpuset(t->hw)
                                                        : hwloc_topology_get_allowed_cpuset(t->hw));
    /* @p sys (lib/private/sysops.h) may replace the walk over hwloc's NUMA
     * nodes: the fault build of the plugin (test_fault=no_numa) and unit
     * tests hide them to simulate hwloc finding none. */
    if (build_views(t, o, sys && sys->next_numa ? sys->next_numa : next_numa, err, errlen) < 0) {
        ng_topology_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int ngi_topology_load_sys(const ngi_sys_ops *sys, ng_topology **out,
                          const ng_topology_options *opts, char *err, size_t errlen)
{
    return load(sys, out, opts, NULL, 0, err, errlen);
}

int ngi_topology_load_why(ng_topology **out, const ng_topology_options *opts, char *cache_why,
                          size_t cwlen, char *err, size_t errlen)
{
    if (cwlen)
        cache_why[0] = '\0';
    return load(NULL, out, opts, cache_why, cwlen, err, errlen);
}

void ng_topology_free(ng_topology *t)
{
    if (!t)
        return;
    ngi_topo_free_gpus(t);
    ngi_nic_set_free(t->nics);
    for (unsigned k = 0; k < t->n_numa; k++)
        hwloc_bitmap_free((hwloc_bitmap_t)t->numa[k].cpus);
    free(t->numa);
    free(t->next);
    free(t->dist);
    hwloc_bitmap_free(t->allowed);
    if (t->hw)
        hwloc_topology_destroy(t->hw);
    free(t);
}

/* ------------------------------------------------------------------ */
/* Accessors                                                            */
/* ------------------------------------------------------------------ */

int ng_topology_is_this_system(const ng_topology *t)
{
    return t ? t->this_system : 0;
}

int ng_topology_from_cache(const ng_topology *t)
{
    return t ? t->from_cache : 0;
}

const char *ngi_topology_fsroot(const ng_topology *t)
{
    return t && t->fsroot[0] ? t->fsroot : NULL;
}

hwloc_topology_t ng_topology_hwloc(const ng_topology *t)
{
    return t ? t->hw : NULL;
}

hwloc_const_cpuset_t ng_topology_allowed_cpus(const ng_topology *t)
{
    return t ? t->allowed : NULL;
}
