/* Pre-screen helper of fuzz_topology_xml: load one XML with bare hwloc,
 * with the flags lib/topo/ uses, and say whether hwloc itself
 * survives and frees everything. Built without sanitizers and run as a
 * separate process, so a crash or leak inside hwloc 2.9 (see the header of
 * fuzz_topology_xml.c) is told apart from numaguard's own bugs.
 *   hwloc_check FILE.xml [include_disallowed]
 * Exit: 0 fine, 3 hwloc leaked, killed by a signal if hwloc crashed. */
#include <hwloc.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static const char warmup[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" "
    "complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
    "allowed_nodeset=\"0x1\" gp_index=\"1\"><object type=\"NUMANode\" os_index=\"0\" "
    "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
    "gp_index=\"2\"/><object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
    "nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\"/></object></topology>\n";

static void load(const char *path, const char *buf, unsigned long flags)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) < 0)
        return;
    hwloc_topology_set_flags(t, flags);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    int rc = path ? hwloc_topology_set_xml(t, path)
                  : hwloc_topology_set_xmlbuffer(t, buf, (int)strlen(buf) + 1);
    if (rc == 0)
        hwloc_topology_load(t);
    hwloc_topology_destroy(t);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    unsigned long flags = argc > 2 && atoi(argv[2]) ? HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED : 0;
    /* libxml2 and hwloc allocate some things once, on the first uses (the
     * first two loads on Debian 12): absorb them with a tiny built-in XML,
     * then measure one load of the file. Freed chunks parked in glibc's
     * tcache count as in use, so the caller runs this with
     * GLIBC_TUNABLES=glibc.malloc.tcache_count=0. */
    for (int i = 0; i < 3; i++)
        load(NULL, warmup, flags);
    size_t before = mallinfo2().uordblks;
    load(argv[1], NULL, flags);
    return mallinfo2().uordblks > before ? 3 : 0;
}
