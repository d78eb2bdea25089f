/* GPU and RDMA NIC locality: hwloc's view (the topology the plugin loads)
 * against the kernel's, /sys/bus/pci/devices/<bus>/numa_node and
 * local_cpulist. The firmware's proximity information (ACPI SRAT/_PXM)
 * is where both come from; when it is missing the kernel says -1 and hwloc
 * hangs the device on the whole machine. */
#include "numaguard.h"
#include "private/doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One device placement is planned around. */
typedef struct dev {
    const char *what;               /* "GPU" or "NIC" */
    const char *name;               /* NIC name, "" for GPUs */
    const char *bus;
    hwloc_const_cpuset_t cpus;      /* hwloc's */
    hwloc_const_nodeset_t nodes;    /* hwloc's CPU-bearing local nodes */
} dev;

/* GPUs, then RDMA NICs (the ones --net-affinity hands out). */
static unsigned devices(const ng_topology *t, dev *out, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < ng_topology_gpu_count(t) && n < max; i++) {
        const ng_gpu_info *g = ng_topology_gpu(t, i);
        out[n++] = (dev){"GPU", "", g->pci_bus_id, g->cpus, g->numa_nodes};
    }
    for (unsigned i = 0; i < ng_topology_nic_count(t) && n < max; i++) {
        const ng_nic_info *c = ng_topology_nic(t, i);
        if (c->rdma)
            out[n++] = (dev){"NIC", c->name, c->pci_bus_id, c->cpus, c->numa_nodes};
    }
    return n;
}

/* sysfs numa_node of a device; -2 when the device or file is absent. */
static int sysfs_node(const ngi_doctor_ctx *x, const char *bus)
{
    char rel[96], path[PATH_MAX], buf[32];
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/numa_node", bus);
    if (ngi_doctor_path(x, rel, path, sizeof path) < 0 ||
        ngi_read_small_file(path, buf, sizeof buf) < 0)
        return -2;
    char *end;
    long v = strtol(buf, &end, 10);
    return (end == buf || v < -1 || v > NG_MAX_NUMA_OS_INDEX) ? -2 : (int)v;
}

/* sysfs local_cpulist into @p set; -1 when absent. */
static int sysfs_cpus(const ngi_doctor_ctx *x, const char *bus, hwloc_bitmap_t set)
{
    char rel[96];
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/local_cpulist", bus);
    return ngi_read_list_file(x->fsroot, rel, set);
}

/* NUMA nodes with CPUs: where "local" means something. */
static unsigned cpu_nodes(const ng_topology *t)
{
    unsigned n = 0;
    for (unsigned i = 0; i < ng_topology_numa_count(t); i++)
        n += ng_topology_numa(t, i)->has_cpus != 0;
    return n;
}

static void label(const dev *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s%s%s%s", d->what, d->bus, *d->name ? " (" : "", d->name,
             *d->name ? ")" : "");
}

static const char firmware_fix[] =
    "enable the firmware's NUMA proximity information for PCI devices (ACPI SRAT and _PXM) "
    "in the BIOS setup: the NUMA settings are named e.g. 'NUMA nodes per socket' (AMD NPS), "
    "'Sub-NUMA Clustering' (Intel SNC) or 'ACPI SRAT'; update the BIOS if it has none; "
    "reboot, then restart slurmd (the topology cache)";

void ngi_check_pci_numa_node(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "pci", "pci.numa_node");
    dev d[NG_MAX_GPUS + NG_MAX_NICS];
    char who[96];
    if (!x->topo) {
        ngi_doctor_end(x->r, c, "no topology: not checked");
        return;
    }
    unsigned n = devices(x->topo, d, NGI_ARRAY_LEN(d)), nodes = cpu_nodes(x->topo), seen = 0;
    for (unsigned i = 0; i < n; i++) {
        int node = sysfs_node(x, d[i].bus);
        label(&d[i], who, sizeof who);
        if (node == -2)
            ngi_doctor_fact(c, d[i].bus, "%s not in sysfs", d[i].what);
        else
            ngi_doctor_fact(c, d[i].bus, "%s numa_node %d", d[i].what, node);
        seen += node != -2;
        if (node == -1 && nodes > 1)
            ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                               "hwloc then puts the device on the whole machine: every NUMA "
                               "node counts as local to it, so --numa-policy=local binds its "
                               "tasks to all CPUs and memory instead of the near ones",
                               firmware_fix,
                               "%s: sysfs numa_node is -1 (the firmware gives no NUMA "
                               "proximity) on a machine with %u NUMA nodes", who, nodes);
    }
    if (n == 0) {
        ngi_doctor_end(x->r, c, "no GPU or RDMA NIC: nothing to check");
        return;
    }
    if (nodes <= 1) {
        ngi_doctor_end(x->r, c, "%u NUMA node with CPUs: numa_node -1 is expected, "
                       "every device is local", nodes);
        return;
    }
    ngi_doctor_end(x->r, c, "%u of %u GPUs and RDMA NICs in sysfs, each with its NUMA node",
                   seen, n);
}

/* hwloc against sysfs for one device present in sysfs. */
static void compare(ngi_doctor_ctx *x, ng_doctor_check *c, const dev *d, int node,
                    hwloc_bitmap_t kcpus)
{
    char who[96], hw[256], hn[64], kc[256];
    label(d, who, sizeof who);
    ng_list_format(d->cpus, hw, sizeof hw);
    ng_list_format(d->nodes, hn, sizeof hn);
    hwloc_bitmap_and(kcpus, kcpus, ng_topology_allowed_cpus(x->topo));
    ng_list_format(kcpus, kc, sizeof kc);
    ngi_doctor_fact(c, d->bus, "%s hwloc numa %s cpus %s; sysfs numa_node %d local_cpulist %s",
                    d->what, *hn ? hn : "-", *hw ? hw : "-", node, *kc ? kc : "-");
    static const char cons[] =
        "numaguard places tasks by hwloc's view, the kernel allocates by its own: the "
        "tasks of this device get CPUs and memory the kernel does not consider near it";
    static const char fix[] =
        "find which view is stale: restart slurmd to rewrite the topology cache (a BIOS "
        "or SNC/NPS change since it was written), or remove a topology= file that is not "
        "this machine's; compare with lstopo";
    if (node >= 0 && !hwloc_bitmap_isset(d->nodes, (unsigned)node))
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL, cons, fix,
                           "%s: hwloc says NUMA %s, CPUs %s; sysfs says numa_node %d", who,
                           *hn ? hn : "-", *hw ? hw : "-", node);
    else if (!hwloc_bitmap_iszero(kcpus) && !hwloc_bitmap_isequal(kcpus, d->cpus))
        ngi_doctor_problem(x->r, c, hwloc_bitmap_intersects(kcpus, d->cpus) ? NG_CHECK_WARN
                                                                             : NG_CHECK_FAIL,
                           cons, fix, "%s: hwloc's CPUs %s differ from sysfs local_cpulist %s",
                           who, *hw ? hw : "-", kc);
}

void ngi_check_pci_locality(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "pci", "pci.locality");
    dev d[NG_MAX_GPUS + NG_MAX_NICS];
    if (!x->topo) {
        ngi_doctor_end(x->r, c, "no topology: not checked");
        return;
    }
    unsigned n = devices(x->topo, d, NGI_ARRAY_LEN(d)), seen = 0;
    hwloc_bitmap_t kcpus = hwloc_bitmap_alloc();
    for (unsigned i = 0; kcpus && i < n; i++) {
        int node = sysfs_node(x, d[i].bus);
        if (node == -2 || sysfs_cpus(x, d[i].bus, kcpus) < 0)
            continue;      /* not in sysfs: compared below by count */
        seen++;
        if (node == -1)
            continue;      /* pci.numa_node's finding */
        compare(x, c, &d[i], node, kcpus);
    }
    hwloc_bitmap_free(kcpus);
    if (n && !seen && ng_topology_is_this_system(x->topo))
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "locality was not cross-checked against the kernel",
                           "check that /sys/bus/pci is mounted and readable",
                           "none of the %u GPUs and RDMA NICs of the topology is in "
                           "/sys/bus/pci/devices", n);
    if (n == 0) {
        ngi_doctor_end(x->r, c, "no GPU or RDMA NIC: nothing to compare");
        return;
    }
    if (!seen) {
        ngi_doctor_end(x->r, c, "the topology is not this machine's and its %u devices "
                       "are not in sysfs: not compared", n);
        return;
    }
    ngi_doctor_end(x->r, c, "hwloc and sysfs agree on the NUMA node and CPUs of %u of %u GPUs "
                   "and RDMA NICs", seen, n);
}
