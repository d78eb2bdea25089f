/* The one place that configures hwloc: the flags and I/O filters of every
 * numaguard topology, the components live discovery skips, the
 * process-wide plugin blacklist (ng_topology_lean_hwloc); and what hwloc
 * release runs and which XML formats it reads. */
#include "private/topo.h"
#include "private/hwloc_compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* hwloc records its own release (HWLOC_VERSION of the loaded library) in
 * every topology it builds (the root's "hwlocVersion" info in 2.x, the
 * topology's own infos in 3.0); a one-PU synthetic one costs nothing.
 * hwloc_get_api_version() is the API's number (2.8.0 for hwloc 2.9 and
 * later 2.x), which reads like a mismatch when printed as the release. */
int ng_hwloc_version(char *buf, size_t len)
{
    hwloc_topology_t t;
    int rc = -1;
    if (len)
        snprintf(buf, len, "unknown");
    if (hwloc_topology_init(&t) < 0)
        return -1;
    if (hwloc_topology_set_synthetic(t, "pu:1") == 0 && hwloc_topology_load(t) == 0) {
        const char *v = NGI_TOPOLOGY_INFO(t, "hwlocVersion");
        if (v && len) {
            snprintf(buf, len, "%.32s", v);
            rc = 0;
        }
    }
    hwloc_topology_destroy(t);
    return rc;
}

/* The format version of an hwloc XML file: its <topology version="M.m">
 * (1.x wrote none: 1.0). -1 if the file does not start like hwloc XML. */
static int xml_format(const char *path, unsigned *major, unsigned *minor)
{
    char head[4096];
    int fd = ngi_open_regular(path);
    if (fd < 0)
        return -1;
    size_t n = ngi_read_full(fd, head, sizeof head - 1);
    close(fd);
    head[n] = '\0';
    const char *tag = strstr(head, "<topology");
    if (!tag || (tag[9] != '>' && tag[9] != ' ' && tag[9] != '\n' && tag[9] != '\t'))
        return -1;
    const char *end = strchr(tag, '>');
    const char *v = strstr(tag, " version=\"");
    *major = 1, *minor = 0;
    if (end && v && v < end && sscanf(v + 10, "%u.%u", major, minor) != 2)
        return -1;
    return 0;
}

/* hwloc 1.x and 2.x read XML of versions 1.x and 2.x; 3.0 reads 2.x and
 * 3.x, not 1.x (its NEWS: "Removed features"). A newer major than the
 * running one is never read. */
int ngi_hwloc_xml_unreadable(const char *path, char *err, size_t errlen)
{
    unsigned major, minor, run = hwloc_get_api_version() >> 16;
    if (xml_format(path, &major, &minor) < 0 || (major <= run && (run < 3 || major >= 2)))
        return 0;
    char hw[40], fmt[16] = "1.x";
    ngi_shown shown;
    ng_hwloc_version(hw, sizeof hw);
    if (major > 1)
        snprintf(fmt, sizeof fmt, "%u.%u", major, minor);
    return ngi_fail(err, errlen, "'%s' is an hwloc %s XML topology; this numaguard runs hwloc %s, "
                    "which reads hwloc XML %s only (%s)", ngi_show(path, &shown), fmt, hw,
                    run < 3 ? "1.x and 2.x" : "2.x and 3.x",
                    major > run ? "hwloc 3 exports 2.x: lstopo --input FILE --export-xml-flags v2 "
                                  "NEW.xml"
                                : "hwloc 2 converts it: lstopo --input FILE NEW.xml");
}
