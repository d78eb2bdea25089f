/* The one place that configures hwloc: the flags and I/O filters of every
 * numaguard topology, the components live discovery skips, and the
 * process-wide plugin blacklist (ng_topology_lean_hwloc). */
#include "private/topo.h"

#include <stdlib.h>
#include <string.h>

int ngi_hwloc_set_io_filters(hwloc_topology_t hw)
{
    if (hwloc_topology_set_io_types_filter(hw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) < 0)
        return -1;
    return hwloc_topology_set_type_filter(hw, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
}

int ngi_hwloc_setup(hwloc_topology_t hw, int include_disallowed)
{
    unsigned long flags = include_disallowed ? HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED : 0;
    if (hwloc_topology_set_flags(hw, flags) < 0)
        return -1;
    return ngi_hwloc_set_io_filters(hw);
}

void ngi_hwloc_skip_slow_components(hwloc_topology_t hw)
{
    /* The components that initialise GPU runtimes or talk to X (seconds
     * per node, contexts on every GPU). NVML/RSMI stay for their OS devices. */
    static const char *const slow[] = {"cuda", "opencl", "levelzero", "gl", "pci"};
    for (size_t i = 0; i < NGI_ARRAY_LEN(slow); i++)
        hwloc_topology_set_components(hw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, slow[i]);
}

/* 1 if this process has exactly one thread (/proc/self/status). */
static int single_threaded(void)
{
    char text[4096];
    if (ngi_read_small_file("/proc/self/status", text, sizeof text) < 0)
        return 0;
    const char *t = strstr(text, "\nThreads:");
    return t && strtol(t + 9, NULL, 10) == 1;
}

/* hwloc 2.9 reads the plugin blacklist from the environment only (no
 * per-topology API: plugins are dlopened once per process, before any
 * topology exists), and setenv() races with getenv() in other threads.
 * So the variable is set only while the process is single-threaded: slurmd
 * at its SPANK init (one thread, measured), whose environment every
 * slurmstepd inherits. slurmstepd itself already runs 3-4 threads when
 * SPANK calls in, and there this does nothing. */
int ng_topology_lean_hwloc(void)
{
    if (getenv("HWLOC_PLUGINS_BLACKLIST") || !single_threaded())
        return 0;
    return setenv("HWLOC_PLUGINS_BLACKLIST", NG_HWLOC_LEAN_PLUGINS, 0) == 0;
}
