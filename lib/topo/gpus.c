/* GPUs of a topology: which PCI devices are GPUs (vendor, class, OS
 * devices, GPU memory nodes), their locality, their accessors and the bus
 * id list format. docs/topology.md. */
#include "private/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void busid_of(hwloc_obj_t pci, char out[NG_BUSID_LEN])
{
    const struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;
    snprintf(out, NG_BUSID_LEN, "%04x:%02x:%02x.%x", (unsigned)a->domain & 0xffff,
             (unsigned)a->bus, (unsigned)a->dev, (unsigned)a->func);
}

/* OS devices that only GPU-like devices get (compute/management APIs). */
static int is_gpu_api_osdev(const char *name)
{
    static const char *const pfx[] = {"cuda", "nvml", "rsmi", "opencl", "ze"};
    for (size_t i = 0; i < NGI_ARRAY_LEN(pfx); i++) {
        size_t n = strlen(pfx[i]);
        if (strncmp(name, pfx[i], n) == 0 && name[n] >= '0' && name[n] <= '9')
            return 1; /* "cuda0", "opencl0d1", "ze0": prefix then an index */
    }
    return 0;
}

static int is_drm_osdev(const char *name)
{
    return strncmp(name, "card", 4) == 0 || strncmp(name, "renderD", 7) == 0;
}

/* Devices that are never GPUs, whatever their class or OS devices. */
static int never_gpu(unsigned vendor, unsigned device, unsigned cls)
{
    if (vendor == 0x1a03 || vendor == 0x102b || vendor == 0x1bcf) /* ASPEED, Matrox, NEC VE */
        return 1;
    if (vendor == 0x1002 && device == 0x515e)                     /* AMD ES1000 BMC VGA */
        return 1;
    if ((cls >> 8) == 0x0b)                                       /* processors: Xeon Phi KNC */
        return 1;
    if (cls == 0x1200 && vendor != 0x1002)                        /* FPGAs, other accelerators */
        return 1;
    return (cls >> 8) == 0x06;                                    /* bridges: NVSwitch */
}

static int has_memory_node_for(const ng_topology *t, const char *bus)
{
    for (unsigned k = 0; k < t->n_numa; k++)
        if (strcmp(t->next[k].busid, bus) == 0)
            return 1;
    return 0;
}

static int is_gpu(const ng_topology *t, hwloc_obj_t pci, const char *bus)
{
    unsigned v = pci->attr->pcidev.vendor_id, dev = pci->attr->pcidev.device_id;
    unsigned cls = pci->attr->pcidev.class_id;
    int display = cls == 0x0300 || cls == 0x0302 || cls == 0x0380;
    if (never_gpu(v, dev, cls))
        return 0;
    if ((v == 0x10de || v == 0x1002 || v == 0x8086) && display)
        return 1;
    if (v == 0x1002 && cls == 0x1200)             /* AMD Instinct MI100+ */
        return 1;
    if (display && has_memory_node_for(t, bus))   /* witherspoon: vendor 0000 */
        return 1;
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name)
            continue;
        if (is_gpu_api_osdev(c->name) || (display && is_drm_osdev(c->name)))
            return 1;
    }
    return 0;
}

static ng_gpu_vendor vendor_of(unsigned v)
{
    return v == 0x10de ? NG_VENDOR_NVIDIA : v == 0x1002 ? NG_VENDOR_AMD
         : v == 0x8086 ? NG_VENDOR_INTEL : NG_VENDOR_UNKNOWN;
}

/* The GPU's OS device names ("cuda0", "nvml0", "card1", "renderD128"),
 * checked where they are read (topology files are anybody's text; `topo`
 * prints them): the rule of NIC names (nic.c), at most 63 bytes. */
static int gpu_names(hwloc_obj_t pci, ng_gpu_info *g, ngi_gpu_ext *x, char *err, size_t errlen)
{
    unsigned n = 0;
    char owner[32];
    snprintf(owner, sizeof owner, "GPU %s", g->pci_bus_id);
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
        n += c->type == HWLOC_OBJ_OS_DEVICE && c->name;
    x->names = calloc(n + 1, sizeof *x->names);
    if (!x->names)
        return ngi_fail(err, errlen, "out of memory while building the topology view");
    n = 0;
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name)
            continue;
        if (ngi_device_name_check(c->name, NGI_OSDEV_NAME_MAX, "OS device", owner, err,
                                  errlen) < 0)
            return -1;
        if ((x->names[n] = strdup(c->name)) != NULL)
            n++;
    }
    g->os_devices = (const char *const *)x->names;
    g->n_os_devices = n;
    return 0;
}

/* Locality: allowed CPUs of the first non-I/O ancestor; CPU-bearing nodes
 * sharing them; memory-only nodes whose GPU evidence names this bus id. */
static int gpu_locality(const ng_topology *t, hwloc_obj_t pci, ng_gpu_info *g, ngi_gpu_ext *x)
{
    x->cpus = hwloc_bitmap_alloc();
    x->numa_nodes = hwloc_bitmap_alloc();
    x->memory_nodes = hwloc_bitmap_alloc();
    if (!x->cpus || !x->numa_nodes || !x->memory_nodes)
        return -1;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t->hw, pci);
    if (anc && anc->cpuset)
        hwloc_bitmap_and(x->cpus, anc->cpuset, t->allowed);
    for (unsigned k = 0; k < t->n_numa; k++) {
        const ng_numa_info *ni = &t->numa[k];
        if (ni->has_cpus && hwloc_bitmap_intersects(ni->cpus, x->cpus))
            hwloc_bitmap_set(x->numa_nodes, ni->os_index);
        else if (!ni->has_cpus && strcmp(t->next[k].busid, g->pci_bus_id) == 0)
            hwloc_bitmap_set(x->memory_nodes, ni->os_index);
    }
    g->cpus = x->cpus;
    g->numa_nodes = x->numa_nodes;
    g->memory_nodes = x->memory_nodes;
    return 0;
}

static int gpu_add(ng_topology *t, hwloc_obj_t pci, const char *bus, char *err, size_t errlen)
{
    ng_gpu_info *g = &t->gpus[t->n_gpus];
    ngi_gpu_ext *x = &t->gext[t->n_gpus];
    t->n_gpus++; /* counted first so that free() releases partial work */
    memcpy(g->pci_bus_id, bus, NG_BUSID_LEN);
    g->pci_vendor_id = pci->attr->pcidev.vendor_id;
    g->pci_device_id = pci->attr->pcidev.device_id;
    g->vendor = vendor_of(g->pci_vendor_id);
    if (gpu_names(pci, g, x, err, errlen) < 0)
        return -1;
    if (gpu_locality(t, pci, g, x) < 0)
        return ngi_fail(err, errlen, "out of memory while building the topology view");
    return 0;
}

static int gpu_cmp(const void *a, const void *b)
{
    return strcmp(((const ng_gpu_info *)a)->pci_bus_id, ((const ng_gpu_info *)b)->pci_bus_id);
}

int ngi_topo_build_gpus(ng_topology *t, char *err, size_t errlen)
{
    static const char oom[] = "out of memory while building the topology view";
    unsigned n = 0;
    for (hwloc_obj_t p = NULL; (p = hwloc_get_next_pcidev(t->hw, p)) != NULL;)
        n++;
    t->gpus = calloc(n + 1, sizeof *t->gpus);
    t->gext = calloc(n + 1, sizeof *t->gext);
    if (!t->gpus || !t->gext)
        return ngi_fail(err, errlen, "%s", oom);
    for (hwloc_obj_t p = NULL; (p = hwloc_get_next_pcidev(t->hw, p)) != NULL;) {
        char bus[NG_BUSID_LEN];
        busid_of(p, bus);
        if (t->n_gpus >= NG_MAX_GPUS || !is_gpu(t, p, bus))
            continue;
        if (gpu_add(t, p, bus, err, errlen) < 0)
            return -1;
    }
    /* Sort info and ext together: ext pointers are referenced by info. */
    typedef struct { ng_gpu_info g; ngi_gpu_ext x; } pair;
    pair *pr = malloc((t->n_gpus + 1) * sizeof *pr);
    if (!pr)
        return ngi_fail(err, errlen, "%s", oom);
    for (unsigned i = 0; i < t->n_gpus; i++) {
        pr[i].g = t->gpus[i];
        pr[i].x = t->gext[i];
    }
    qsort(pr, t->n_gpus, sizeof *pr, gpu_cmp); /* ng_gpu_info is the first member */
    for (unsigned i = 0; i < t->n_gpus; i++) {
        t->gpus[i] = pr[i].g;
        t->gext[i] = pr[i].x;
    }
    free(pr);
    return 0;
}

unsigned ng_topology_gpu_count(const ng_topology *t)
{
    return t ? t->n_gpus : 0;
}

const ng_gpu_info *ng_topology_gpu(const ng_topology *t, unsigned i)
{
    return t && i < t->n_gpus ? &t->gpus[i] : NULL;
}

int ng_topology_gpu_by_busid(const ng_topology *t, const char *busid)
{
    char norm[NG_BUSID_LEN];
    if (!t || ngi_busid_normalize(busid, norm) < 0)
        return -1;
    for (unsigned i = 0; i < t->n_gpus; i++)
        if (strcmp(t->gpus[i].pci_bus_id, norm) == 0)
            return (int)i;
    return -1;
}

void ngi_topo_free_gpus(ng_topology *t)
{
    for (unsigned i = 0; i < t->n_gpus; i++) {
        ngi_gpu_ext *x = &t->gext[i];
        for (char **p = x->names; p && *p; p++)
            free(*p);
        free(x->names);
        hwloc_bitmap_free(x->cpus);
        hwloc_bitmap_free(x->numa_nodes);
        hwloc_bitmap_free(x->memory_nodes);
    }
    free(t->gpus);
    free(t->gext);
}

const char *ng_gpu_vendor_name(ng_gpu_vendor vendor)
{
    static const char *const names[] = {"unknown", "nvidia", "amd", "intel"};
    return (unsigned)vendor < NGI_ARRAY_LEN(names) ? names[vendor] : "unknown";
}

int ng_gpu_list_format(const ng_topology *topo, const int *idx, unsigned n,
                       char *buf, size_t len)
{
    size_t used = 0;
    if (!len)
        return 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, (unsigned)idx[i]);
        int w = snprintf(buf + used, len - used, "%s%s", i ? "," : "", g ? g->pci_bus_id : "?");
        if (w < 0 || (size_t)w >= len - used) {
            buf[used] = '\0';   /* drop the partial entry; the list stays well-formed */
            break;
        }
        used += (size_t)w;
    }
    return (int)used;
}
