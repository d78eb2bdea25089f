/* The topology cache the plugin reads in every step: there, trusted by
 * the plugin's own rules (ng_topology_cache_valid: every directory root's
 * alone, no symlink, regular root-owned files) and stamped for this node
 * (hwloc, online CPUs and NUMA nodes, boot id, the XML's size and hash).
 * The cache is read once per run: by the topology load when the plugin
 * would use it (doctor.c keeps its reason), else here. */
#include "numaguard.h"
#include "private/doctor.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Whether the plugin uses the cache: what the topology load found when it
 * tried the cache (one read), else (doctor judges another topology= XML)
 * the cache read here, once. */
static int cache_ok(const ngi_doctor_ctx *x, char *why, size_t len)
{
    if (!x->cache_tried)
        return ng_topology_cache_valid(x->cache_dir, why, len) == 1;
    snprintf(why, len, "%s", x->cache_why);
    return x->topo && ng_topology_from_cache(x->topo);
}

void ngi_check_cache(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "cache", "cache.topology");
    char stamp[PATH_MAX + 32], why[512];
    struct stat st;
    if (x->plugin_topology) {
        ngi_doctor_end(x->r, c, "topology=%s is given: the plugin reads no cache",
                       x->pconf.topology);
        return;
    }
    if (!x->cache_dir[0]) {
        ngi_doctor_end(x->r, c, "topology_cache=off: every step discovers the node live");
        return;
    }
    snprintf(stamp, sizeof stamp, "%s/%s", x->cache_dir, NG_TOPOLOGY_CACHE_STAMP);
    if (lstat(stamp, &st) != 0)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "every step discovers the node live: 10-20 ms more per step and "
                           "node, seconds on large nodes",
                           "restart slurmd with numaguard in plugstack.conf (slurmd writes the "
                           "cache, as root, when it starts)",
                           "no topology cache in %s", x->cache_dir);
    else if (!cache_ok(x, why, sizeof why))
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "the plugin does not use it: every step discovers the node live",
                           "a cache directory must be root's alone from / down (never below "
                           "/tmp); a stale one is rewritten when slurmd restarts",
                           "the plugin refuses the topology cache %s: %s", x->cache_dir, why);
    ngi_doctor_fact(c, "directory", "%s", x->cache_dir);
    ngi_doctor_end(x->r, c, "%s is trusted and its stamp matches this node (hwloc, online CPUs "
                   "and NUMA nodes, boot id, XML size and hash)", x->cache_dir);
}
