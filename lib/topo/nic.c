/* Network adapters of a topology: which PCI functions are NICs, what they
 * are (IB, RoCE, other RDMA, plain Ethernet), their ports, their locality,
 * and their PCI distance to GPUs and to CPUs; their accessors and the name
 * list format; the rule for OS device names (NICs' here, GPUs' in gpus.c). Built once when the topology is loaded (topology.c calls
 * ngi_nic_set_build after the NUMA nodes and GPUs); reads the topology
 * struct, never calls back into topology.c. docs/network.md. */
#include "private/topo.h"
#include "private/hwloc_compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Per-NIC data kept beside the public ng_nic_info. */
typedef struct nic_ext {
    hwloc_obj_t pci;                 /**< its PCI device object */
    hwloc_bitmap_t cpus, nodes;
} nic_ext;

struct ngi_nic_set {
    unsigned n;
    ng_nic_info nic[NG_MAX_NICS];
    nic_ext ext[NG_MAX_NICS];
};

/* The first OS device under a PCI function that @p is says it is (the
 * tests live in private/hwloc_compat.h: hwloc 3.0 changed OS device types). */
static hwloc_obj_t child_osdev(hwloc_obj_t pci, int (*is)(hwloc_obj_t))
{
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
        if (is(c))
            return c;
    return NULL;
}

/* Ports from the verbs device's "Port<p>State" infos (4 = ACTIVE). */
static void nic_ports(hwloc_obj_t ofed, ng_nic_info *ni)
{
    for (unsigned i = 0; ofed && i < NGI_OBJ_INFOS_COUNT(ofed); i++) {
        unsigned p;
        char tail[8];
        const struct hwloc_info_s *inf = NGI_OBJ_INFO_AT(ofed, i);
        if (!inf->name || !inf->value || sscanf(inf->name, "Port%u%7s", &p, tail) != 2 ||
            strcmp(tail, "State") != 0 || p < 1 || p > 31)
            continue;
        ni->ports |= 1u << p;
        if (strcmp(inf->value, "4") == 0)
            ni->ports_active |= 1u << p;
    }
}

/* An IPoIB interface has a 20-byte hardware address ("xx:" x 20 = 59
 * characters): the link layer is InfiniBand whatever the PCI class says
 * (ConnectX-3 reports class 0280, "network controller"). */
static int ipoib_address(hwloc_obj_t net)
{
    const char *a = net ? hwloc_obj_get_info_by_name(net, "Address") : NULL;
    return a && strlen(a) >= 59;
}

static ng_nic_kind nic_kind(hwloc_obj_t pci, hwloc_obj_t ofed, hwloc_obj_t net)
{
    unsigned cls = pci->attr->pcidev.class_id;
    if (cls == 0x0207 || ipoib_address(net))
        return NG_NIC_IB;
    if (!ofed)
        return NG_NIC_ETHERNET;
    /* Amazon's EFA is a verbs device on an Ethernet-class function but no RoCE. */
    if (cls == 0x0200 && pci->attr->pcidev.vendor_id != 0x1d0f)
        return NG_NIC_ROCE;
    return NG_NIC_RDMA;
}

static int nic_locality(hwloc_topology_t hw, const ng_topology *t, hwloc_obj_t pci, nic_ext *x,
                        ng_nic_info *ni)
{
    x->cpus = hwloc_bitmap_alloc();
    x->nodes = hwloc_bitmap_alloc();
    if (!x->cpus || !x->nodes)
        return -1;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(hw, pci);
    if (anc && anc->cpuset)
        hwloc_bitmap_and(x->cpus, anc->cpuset, t->allowed);
    for (unsigned k = 0; k < t->n_numa; k++) {
        const ng_numa_info *n = &t->numa[k];
        if (n->has_cpus && hwloc_bitmap_intersects(n->cpus, x->cpus))
            hwloc_bitmap_set(x->nodes, n->os_index);
    }
    ni->cpus = x->cpus;
    ni->numa_nodes = x->nodes;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

int ngi_device_name_check(const char *name, size_t max, const char *what, const char *owner,
                          char *err, size_t errlen)
{
    size_t n = strnlen(name, max + 1);
    int ok = n > 0 && n <= max && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
    for (size_t i = 0; ok && i < n; i++) {
        char c = name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '-' || c == '.';
    }
    if (ok)
        return 0;
    char shown[NGI_SHOW_MAX * 4 + 8];
    ngi_show_bytes(name, strnlen(name, NGI_SHOW_MAX + 1), shown, sizeof shown);
    return ngi_fail(err, errlen, "invalid topology: %s: %s name '%s' refused (1-%zu letters, "
                    "digits, '_', '-' or '.', not . or .., as the kernel names devices)", owner,
                    what, shown, max);
}

static int nic_add(ngi_nic_set *s, hwloc_topology_t hw, const ng_topology *t, hwloc_obj_t pci,
                   char *err, size_t errlen)
{
    hwloc_obj_t ofed = child_osdev(pci, ngi_osdev_is_rdma);
    hwloc_obj_t net = child_osdev(pci, ngi_osdev_is_netif);
    if ((!ofed && !net) || s->n >= NG_MAX_NICS)
        return 0;
    ng_nic_info *ni = &s->nic[s->n];
    nic_ext *x = &s->ext[s->n];
    s->n++; /* counted first so that free() releases partial work */
    const struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;
    snprintf(ni->pci_bus_id, NG_BUSID_LEN, "%04x:%02x:%02x.%x", (unsigned)a->domain & 0xffff,
             (unsigned)a->bus, (unsigned)a->dev, (unsigned)a->func);
    ni->pci_vendor_id = a->vendor_id;
    ni->pci_class_id = a->class_id;
    ni->rdma = ofed != NULL;
    /* Names go into UCX_NET_DEVICES, NCCL_IB_HCA, ... and onto terminals:
     * checked here, where they are read (a topology file is anybody's
     * text), by the kernel's rules (ngi_device_name_check). */
    char owner[32];
    snprintf(owner, sizeof owner, "NIC %s", ni->pci_bus_id);
    if ((ofed && ngi_device_name_check(ofed->name, NGI_VERBS_NAME_MAX, "verbs device", owner, err,
                                       errlen) < 0) ||
        (net && ngi_device_name_check(net->name, NGI_IFNAME_MAX, "network interface", owner,
                                      err, errlen) < 0))
        return -1;
    ngi_strlcpy(ni->name, ofed ? ofed->name : net->name, sizeof ni->name);
    if (net)
        ngi_strlcpy(ni->netdev, net->name, sizeof ni->netdev);
    ni->kind = nic_kind(pci, ofed, net);
    nic_ports(ofed, ni);
    x->pci = pci;
    if (nic_locality(hw, t, pci, x, ni) < 0)
        return ngi_fail(err, errlen, "out of memory while building the topology view");
    return 0;
}

static int nic_cmp(const void *a, const void *b)
{
    return strcmp(((const ng_nic_info *)a)->pci_bus_id, ((const ng_nic_info *)b)->pci_bus_id);
}

/* Sort info and ext together (insertion sort, at most 64 entries; the
 * info's sets are the ext's heap bitmaps, so moving both is enough). */
static void nic_sort(ngi_nic_set *s)
{
    for (unsigned i = 1; i < s->n; i++)
        for (unsigned j = i; j > 0 && nic_cmp(&s->nic[j - 1], &s->nic[j]) > 0; j--) {
            ng_nic_info ti = s->nic[j];
            nic_ext tx = s->ext[j];
            s->nic[j] = s->nic[j - 1];
            s->ext[j] = s->ext[j - 1];
            s->nic[j - 1] = ti;
            s->ext[j - 1] = tx;
        }
}

ngi_nic_set *ngi_nic_set_build(const ng_topology *t, char *err, size_t errlen)
{
    hwloc_topology_t hw = t->hw;
    ngi_nic_set *s = calloc(1, sizeof *s);
    if (!s) {
        ngi_fail(err, errlen, "out of memory while building the topology view");
        return NULL;
    }
    for (hwloc_obj_t p = NULL; (p = hwloc_get_next_pcidev(hw, p)) != NULL;)
        if (nic_add(s, hw, t, p, err, errlen) < 0) {
            ngi_nic_set_free(s);
            return NULL;
        }
    nic_sort(s);
    return s;
}

void ngi_nic_set_free(ngi_nic_set *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->n; i++) {
        hwloc_bitmap_free(s->ext[i].cpus);
        hwloc_bitmap_free(s->ext[i].nodes);
    }
    free(s);
}

/* ------------------------------------------------------------------ */
/* Accessors and distances                                              */
/* ------------------------------------------------------------------ */

const char *ng_nic_kind_name(ng_nic_kind kind)
{
    static const char *const names[] = {"IB", "RoCE", "RDMA", "Ethernet"};
    return (unsigned)kind < NGI_ARRAY_LEN(names) ? names[kind] : "unknown";
}

const char *ng_pci_distance_name(ng_pci_distance d)
{
    static const char *const names[] = {"switch", "numa", "package", "system"};
    return (unsigned)d < NGI_ARRAY_LEN(names) ? names[d] : "unknown";
}

unsigned ng_topology_nic_count(const ng_topology *t)
{
    const ngi_nic_set *s = t ? t->nics : NULL;
    return s ? s->n : 0;
}

const ng_nic_info *ng_topology_nic(const ng_topology *t, unsigned i)
{
    const ngi_nic_set *s = t ? t->nics : NULL;
    return s && i < s->n ? &s->nic[i] : NULL;
}

int ngi_topology_nic_by_name(const ng_topology *t, const char *name)
{
    for (unsigned i = 0; name && *name && i < ng_topology_nic_count(t); i++) {
        const ng_nic_info *ni = ng_topology_nic(t, i);
        if (strcmp(ni->name, name) == 0 || strcmp(ni->netdev, name) == 0)
            return (int)i;
    }
    return -1;
}

/* 1 if a and b hang below one PCI-PCI bridge (a PCIe switch port): their
 * nearest common I/O ancestor is a bridge whose upstream side is PCI, not
 * the host bridge. */
static int same_switch(hwloc_obj_t a, hwloc_obj_t b)
{
    for (hwloc_obj_t x = a->parent; x && x->type == HWLOC_OBJ_BRIDGE; x = x->parent)
        for (hwloc_obj_t y = b->parent; y && y->type == HWLOC_OBJ_BRIDGE; y = y->parent)
            if (x == y)
                return x->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
    return 0;
}

/* 1 if some package holds CPUs of both sets. */
static int same_package(hwloc_topology_t hw, hwloc_const_cpuset_t a, hwloc_const_cpuset_t b)
{
    hwloc_obj_t p = NULL;
    while ((p = hwloc_get_next_obj_by_type(hw, HWLOC_OBJ_PACKAGE, p)) != NULL)
        if (p->cpuset && hwloc_bitmap_intersects(p->cpuset, a) &&
            hwloc_bitmap_intersects(p->cpuset, b))
            return 1;
    return 0;
}

ng_pci_distance ng_topology_gpu_nic_distance(const ng_topology *t, unsigned gpu, unsigned nic)
{
    const ngi_nic_set *s = t ? t->nics : NULL;
    const ng_gpu_info *g = gpu < t->n_gpus ? &t->gpus[gpu] : NULL;
    if (!s || nic >= s->n || !g)
        return NG_PCI_SYSTEM;
    hwloc_topology_t hw = t->hw;
    hwloc_obj_t gp = hwloc_get_pcidev_by_busidstring(hw, g->pci_bus_id);
    if (gp && same_switch(gp, s->ext[nic].pci))
        return NG_PCI_SWITCH;
    if (hwloc_bitmap_intersects(g->numa_nodes, s->nic[nic].numa_nodes))
        return NG_PCI_NUMA;
    if (same_package(hw, g->cpus, s->nic[nic].cpus))
        return NG_PCI_PACKAGE;
    return NG_PCI_SYSTEM;
}

ng_pci_distance ngi_topology_cpus_nic_distance(const ng_topology *t, hwloc_const_cpuset_t cpus,
                                              unsigned nic)
{
    const ngi_nic_set *s = t ? t->nics : NULL;
    if (!s || nic >= s->n || !cpus)
        return NG_PCI_SYSTEM;
    for (unsigned k = 0; k < t->n_numa; k++) {
        const ng_numa_info *n = &t->numa[k];
        if (n->has_cpus && hwloc_bitmap_isset(s->nic[nic].numa_nodes, n->os_index) &&
            hwloc_bitmap_intersects(n->cpus, cpus))
            return NG_PCI_NUMA;
    }
    if (same_package(t->hw, cpus, s->nic[nic].cpus))
        return NG_PCI_PACKAGE;
    return NG_PCI_SYSTEM;
}

int ng_nic_list_format(const ng_topology *topo, const unsigned *nics, unsigned n, char *buf,
                       size_t len)
{
    if (!buf || !len)
        return 0;
    buf[0] = '\0';
    size_t used = 0;
    for (unsigned k = 0; nics && k < n; k++) {
        const ng_nic_info *ni = ng_topology_nic(topo, nics[k]);
        if (!ni)
            continue;
        size_t need = strlen(ni->name) + (used ? 1 : 0);
        if (used + need >= len)
            continue;
        snprintf(buf + used, len - used, "%s%s", used ? "," : "", ni->name);
        used += need;
    }
    return (int)used;
}
