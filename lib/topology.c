/* Topology: load hwloc (live or XML), build the NUMA and GPU views.
 * Rules and their reasons are in docs/topology.md. */
#include "internal.h"
#include "testhooks.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define NG_NODE_SLOTS (NG_MAX_NUMA_OS_INDEX + 1)

/** Evidence read from sysfs/procfs on the machine we run on. */
typedef struct ng_sysfs_hints {
    signed char dax_kind[NG_NODE_SLOTS];        /**< kind of a kmem DAX node, -1 none */
    char gpu_busid[NG_NODE_SLOTS][NG_BUSID_LEN]; /**< GPU owning a node ("" none) */
} ng_sysfs_hints;

/** Per-node data kept beside the public ng_numa_info. */
typedef struct ng_node_ext {
    hwloc_obj_t obj;                 /**< NULL for nodes hwloc hides */
    char busid[NG_BUSID_LEN];        /**< GPU this memory belongs to, "" if none */
} ng_node_ext;

/** Per-GPU owned storage behind ng_gpu_info's const pointers. */
typedef struct ng_gpu_ext {
    char **names;
    hwloc_bitmap_t cpus, numa_nodes, memory_nodes;
} ng_gpu_ext;

struct ng_topology {
    hwloc_topology_t hw;
    int this_system;
    int from_cache;                  /**< loaded from the topology cache (topocache.c) */
    char fsroot[256];
    hwloc_bitmap_t allowed;
    unsigned n_numa;
    ng_numa_info *numa;
    ng_node_ext *next;
    unsigned *dist;                  /**< n_numa x n_numa, 0 = unknown */
    unsigned n_gpus;
    ng_gpu_info *gpus;
    ng_gpu_ext *gext;
    ng_nic_set *nics;                /**< network adapters (topo_nic.c) */
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

/* dir + "/" + name + suffix into buf; -1 if it does not fit. */
static int join(char *buf, size_t len, const char *dir, const char *name, const char *suffix)
{
    int n = snprintf(buf, len, "%s/%s%s", dir, name, suffix);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

static int has_ci(const char *s, const char *needle)
{
    return s && strcasestr(s, needle) != NULL;
}

static const char *obj_info(hwloc_obj_t obj, const char *name)
{
    return obj ? hwloc_obj_get_info_by_name(obj, name) : NULL;
}

/* Read a sysfs list file under fsroot into set; -1 if absent/malformed. */
static int read_list(const char *fsroot, const char *abs, hwloc_bitmap_t set)
{
    char path[512], buf[4096];
    if (ng_path(path, sizeof path, fsroot, abs) < 0 || ng_read_small_file(path, buf, sizeof buf) < 0)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    if (!buf[0]) {
        hwloc_bitmap_zero(set);
        return 0;
    }
    return ng_list_parse(buf, set, 1u << 20, NULL, 0);
}

/* 1 if sysfs lists no CPU for the node, 0 if it lists some, -1 unknown. */
static int sysfs_node_cpuless(const char *fsroot, unsigned os)
{
    char abs[128];
    snprintf(abs, sizeof abs, "/sys/devices/system/node/node%u/cpulist", os);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int rc = read_list(fsroot, abs, set);
    int res = rc < 0 ? -1 : hwloc_bitmap_iszero(set);
    hwloc_bitmap_free(set);
    return res;
}

static uint64_t sysfs_node_memory(const char *fsroot, unsigned os)
{
    char abs[128], path[512], buf[4096];
    snprintf(abs, sizeof abs, "/sys/devices/system/node/node%u/meminfo", os);
    if (ng_path(path, sizeof path, fsroot, abs) < 0 || ng_read_small_file(path, buf, sizeof buf) < 0)
        return 0;
    const char *p = strstr(buf, "MemTotal:");
    unsigned long long kb;
    if (!p || sscanf(p, "MemTotal: %llu", &kb) != 1)
        return 0;
    return (uint64_t)kb * 1024;
}

/* ------------------------------------------------------------------ */
/* Memory kinds                                                         */
/* ------------------------------------------------------------------ */

/* Kind named by an hwloc subtype or DAXType; -1 if it names none. */
static int kind_from_name(const char *s)
{
    if (!s || !*s)
        return -1;
    if (has_ci(s, "GPU"))
        return NG_MEM_GPU;
    if (strncasecmp(s, "CXL", 3) == 0)
        return NG_MEM_CXL;
    /* SPM (EFI specific-purpose memory) is hwloc's tier for HBM. */
    if (has_ci(s, "HBM") || has_ci(s, "MCDRAM") || strcasecmp(s, "SPM") == 0)
        return NG_MEM_HBM;
    if (has_ci(s, "NVM") || has_ci(s, "PMEM") || has_ci(s, "NVDIMM") || strcasecmp(s, "SCM") == 0)
        return NG_MEM_NVM;
    if (strcasecmp(s, "DRAM") == 0)
        return NG_MEM_DRAM;
    return -1;
}

/* Kind of a kmem DAX device from its sysfs device path. */
static int kind_from_dax_path(const char *link)
{
    if (has_ci(link, "ACPI0017") || has_ci(link, "decoder") || has_ci(link, "/cxl"))
        return NG_MEM_CXL;
    if (has_ci(link, "ndbus") || has_ci(link, "nvdimm") || has_ci(link, "pmem"))
        return NG_MEM_NVM;
    /* hmem = firmware "soft reserved" memory: HBM in flat mode (Xeon Max). */
    if (has_ci(link, "hmem"))
        return NG_MEM_HBM;
    return NG_MEM_UNKNOWN;
}

/* Machines whose CPU-less nodes are on-package HBM: Xeon Phi x200 (MCDRAM)
 * and Xeon Max; older hwloc exports carry no subtype for those nodes. */
static int cpu_has_hbm(hwloc_topology_t hw)
{
    hwloc_obj_t pkg = hwloc_get_next_obj_by_type(hw, HWLOC_OBJ_PACKAGE, NULL);
    const char *model = obj_info(pkg, "CPUModel");
    if (!model)
        model = obj_info(hwloc_get_root_obj(hw), "CPUModel");
    return has_ci(model, "Xeon Phi") || has_ci(model, "CPU Max");
}

static void node_kind_from_hwloc(hwloc_obj_t obj, ng_numa_info *ni, ng_node_ext *ne)
{
    int k = kind_from_name(obj->subtype);
    if (k < 0)
        k = kind_from_name(obj_info(obj, "DAXType"));
    if (k < 0)
        k = kind_from_name(obj_info(obj, "Type")); /* hwloc 1.x KNL: Type=MCDRAM */
    const char *bus = obj_info(obj, "PCIBusID");
    if (bus && ng_busid_normalize(bus, ne->busid) == 0 && k < 0)
        k = NG_MEM_GPU;
    ni->kind = k < 0 ? NG_MEM_UNKNOWN : (ng_mem_kind)k;
}

/* XML heuristic (no sysfs): hwloc gives a CPU-less node its parent's
 * cpuset, so a node is CPU-less if its cpuset is empty, its kind is not
 * DRAM, it is kmem DAX memory, or it is not the first memory child. */
static int hwloc_node_cpuless(hwloc_obj_t obj, ng_mem_kind kind)
{
    if (hwloc_bitmap_iszero(obj->cpuset))
        return 1;
    if (kind != NG_MEM_DRAM && kind != NG_MEM_UNKNOWN)
        return 1;
    if (obj_info(obj, "DAXDevice"))
        return 1;
    return obj->parent && obj->parent->memory_first_child != obj;
}

/* ------------------------------------------------------------------ */
/* Sysfs evidence (only when the topology is this machine)              */
/* ------------------------------------------------------------------ */

static void hints_dax(const char *fsroot, ng_sysfs_hints *h, const char *dir_abs)
{
    char dir[512];
    if (ng_path(dir, sizeof dir, fsroot, dir_abs) < 0)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "dax", 3) != 0 || strlen(de->d_name) > 64)
            continue;
        char path[640], buf[64], link[1024];
        long node;
        if (join(path, sizeof path, dir, de->d_name, "/target_node") < 0 ||
            ng_read_small_file(path, buf, sizeof buf) < 0 || sscanf(buf, "%ld", &node) != 1 ||
            node < 0 || node >= NG_NODE_SLOTS)
            continue;
        ssize_t n = join(path, sizeof path, dir, de->d_name, "") < 0 ? -1
                  : readlink(path, link, sizeof link - 1);
        link[n > 0 ? n : 0] = '\0';
        h->dax_kind[node] = (signed char)kind_from_dax_path(link);
    }
    closedir(d);
}

/* NVIDIA coherent GPU memory (GH200, GB200): the first line of
 * /proc/driver/nvidia/gpus/<bus>/numa_status is "Node: N". */
static void hints_nvidia(const char *fsroot, ng_sysfs_hints *h)
{
    char dir[512];
    if (ng_path(dir, sizeof dir, fsroot, "/proc/driver/nvidia/gpus") < 0)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char bus[NG_BUSID_LEN], path[640], buf[256];
        long node;
        if (strlen(de->d_name) > 32 || ng_busid_normalize(de->d_name, bus) < 0)
            continue;
        if (join(path, sizeof path, dir, de->d_name, "/numa_status") < 0 ||
            ng_read_small_file(path, buf, sizeof buf) < 0 || sscanf(buf, " Node: %ld", &node) != 1 ||
            node < 0 || node >= NG_NODE_SLOTS)
            continue;
        memcpy(h->gpu_busid[node], bus, NG_BUSID_LEN);
    }
    closedir(d);
}

static ng_sysfs_hints *hints_load(const char *fsroot)
{
    ng_sysfs_hints *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    memset(h->dax_kind, -1, sizeof h->dax_kind);
    hints_dax(fsroot, h, "/sys/bus/dax/devices");
    hints_dax(fsroot, h, "/sys/class/dax");
    hints_nvidia(fsroot, h);
    return h;
}

/* Apply live evidence to one node (hwloc-visible or hidden). */
static void node_apply_hints(const ng_topology *t, const ng_sysfs_hints *h, ng_numa_info *ni,
                             ng_node_ext *ne)
{
    int cpuless = sysfs_node_cpuless(t->fsroot, ni->os_index);
    if (cpuless >= 0)
        ni->has_cpus = !cpuless;
    if (!h || ni->os_index >= NG_NODE_SLOTS)
        return;
    if (h->gpu_busid[ni->os_index][0]) {
        memcpy(ne->busid, h->gpu_busid[ni->os_index], NG_BUSID_LEN);
        ni->kind = NG_MEM_GPU;
    } else if (h->dax_kind[ni->os_index] >= 0 &&
               (ni->kind == NG_MEM_UNKNOWN || ni->kind == NG_MEM_DRAM)) {
        ni->kind = (ng_mem_kind)h->dax_kind[ni->os_index];
    }
}

/* ------------------------------------------------------------------ */
/* NUMA nodes                                                           */
/* ------------------------------------------------------------------ */

static int numa_append(ng_topology *t, unsigned *cap)
{
    if (t->n_numa < *cap)
        return 0;
    unsigned ncap = *cap ? *cap * 2 : 16;
    ng_numa_info *a = realloc(t->numa, ncap * sizeof *a);
    if (!a)
        return -1;
    t->numa = a;
    ng_node_ext *b = realloc(t->next, ncap * sizeof *b);
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
    ng_node_ext *ne = &t->next[t->n_numa];
    memset(ni, 0, sizeof *ni);
    memset(ne, 0, sizeof *ne);
    ne->obj = obj;
    ni->os_index = obj->os_index;
    ni->memory_bytes = obj->attr ? obj->attr->numanode.local_memory : 0;
    node_kind_from_hwloc(obj, ni, ne);
    ni->has_cpus = !hwloc_node_cpuless(obj, ni->kind);
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
    ni->memory_bytes = sysfs_node_memory(t->fsroot, os);
    t->n_numa++;
    return 0;
}

/* Kernel nodes with memory that hwloc does not show (hwloc 2.9 hides GH200
 * GPU memory nodes). Disallowed nodes stay out unless asked for. */
static int numa_add_kernel_hidden(ng_topology *t, unsigned *cap, int include_disallowed)
{
    hwloc_bitmap_t sys = hwloc_bitmap_alloc(), mems = hwloc_bitmap_alloc();
    int rc = 0;
    if (read_list(t->fsroot, "/sys/devices/system/node/has_memory", sys) < 0 &&
        read_list(t->fsroot, "/sys/devices/system/node/online", sys) < 0)
        goto out;
    hwloc_const_nodeset_t known = hwloc_topology_get_complete_nodeset(t->hw);
    int have_mems = 0;
    if (!include_disallowed) {
        char path[512], buf[8192];
        const char *p;
        if (ng_path(path, sizeof path, t->fsroot, "/proc/self/status") == 0 &&
            ng_read_small_file(path, buf, sizeof buf) == 0 &&
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
        if (os >= NG_NODE_SLOTS || hwloc_bitmap_isset(known, (unsigned)os) ||
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
    typedef struct { ng_numa_info i; ng_node_ext e; } pair;
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

static hwloc_obj_t next_numa(hwloc_topology_t hw, hwloc_obj_t prev)
{
    return hwloc_get_next_obj_by_type(hw, HWLOC_OBJ_NUMANODE, prev);
}

/* @p sys (lib/testhooks.h) may replace the walk over hwloc's NUMA nodes:
 * the fault build of the plugin (test_fault=no_numa) and unit tests hide
 * them to simulate hwloc finding none. NULL: hwloc's own walk. */
static int build_numa(ng_topology *t, const ng_topology_options *o, const ng_sys_ops *sys)
{
    hwloc_obj_t (*next)(hwloc_topology_t, hwloc_obj_t) =
        sys && sys->next_numa ? sys->next_numa : next_numa;
    unsigned cap = 0;
    int hbm = cpu_has_hbm(t->hw);
    hwloc_obj_t obj = NULL;
    while ((obj = next(t->hw, obj)) != NULL)
        if (numa_add_hwloc(t, &cap, obj, hbm) < 0)
            return -1;
    if (t->this_system) {
        unsigned n_hw = t->n_numa;
        if (numa_add_kernel_hidden(t, &cap, o->include_disallowed) < 0)
            return -1;
        ng_sysfs_hints *h = hints_load(t->fsroot);
        for (unsigned k = 0; k < t->n_numa; k++) {
            node_apply_hints(t, h, &t->numa[k], &t->next[k]);
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

/* ------------------------------------------------------------------ */
/* Distances                                                            */
/* ------------------------------------------------------------------ */

static int numa_index(const ng_topology *t, unsigned os)
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
        int a = d->objs[i] ? numa_index(t, d->objs[i]->os_index) : -1;
        for (unsigned j = 0; j < d->nbobjs && a >= 0; j++) {
            int b = d->objs[j] ? numa_index(t, d->objs[j]->os_index) : -1;
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
    if (read_list(t->fsroot, "/sys/devices/system/node/online", online) < 0)
        goto out;
    for (unsigned a = 0; a < t->n_numa; a++) {
        char abs[128], path[512], buf[8192];
        snprintf(abs, sizeof abs, "/sys/devices/system/node/node%u/distance", t->numa[a].os_index);
        if (ng_path(path, sizeof path, t->fsroot, abs) < 0 || ng_read_small_file(path, buf, sizeof buf) < 0)
            continue;
        char *p = buf;
        int os = hwloc_bitmap_first(online);
        while (os >= 0) {
            char *end;
            unsigned long v = strtoul(p, &end, 10);
            if (end == p)
                break;
            p = end;
            int b = numa_index(t, (unsigned)os);
            unsigned *slot = b >= 0 ? &t->dist[a * t->n_numa + (unsigned)b] : NULL;
            if (slot && *slot == 0)
                *slot = v > 0xffff ? 0xffff : (unsigned)v;
            os = hwloc_bitmap_next(online, os);
        }
    }
out:
    hwloc_bitmap_free(online);
}

static int build_distances(ng_topology *t)
{
    t->dist = calloc((size_t)t->n_numa * t->n_numa + 1, sizeof *t->dist);
    if (!t->dist)
        return -1;
    dist_from_hwloc(t);
    if (t->this_system)
        dist_from_sysfs(t);
    return 0;
}

/* ------------------------------------------------------------------ */
/* GPUs                                                                 */
/* ------------------------------------------------------------------ */

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
    for (size_t i = 0; i < NG_ARRAY_LEN(pfx); i++) {
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

static int gpu_names(hwloc_obj_t pci, ng_gpu_info *g, ng_gpu_ext *x)
{
    unsigned n = 0;
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
        n += c->type == HWLOC_OBJ_OS_DEVICE && c->name;
    x->names = calloc(n + 1, sizeof *x->names);
    if (!x->names)
        return -1;
    n = 0;
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_OS_DEVICE && c->name && (x->names[n] = strndup(c->name, 64)) != NULL)
            n++;
    g->os_devices = (const char *const *)x->names;
    g->n_os_devices = n;
    return 0;
}

/* Locality: allowed CPUs of the first non-I/O ancestor; CPU-bearing nodes
 * sharing them; memory-only nodes whose GPU evidence names this bus id. */
static int gpu_locality(const ng_topology *t, hwloc_obj_t pci, ng_gpu_info *g, ng_gpu_ext *x)
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

static int gpu_add(ng_topology *t, hwloc_obj_t pci, const char *bus)
{
    ng_gpu_info *g = &t->gpus[t->n_gpus];
    ng_gpu_ext *x = &t->gext[t->n_gpus];
    t->n_gpus++; /* counted first so that free() releases partial work */
    memcpy(g->pci_bus_id, bus, NG_BUSID_LEN);
    g->pci_vendor_id = pci->attr->pcidev.vendor_id;
    g->pci_device_id = pci->attr->pcidev.device_id;
    g->vendor = vendor_of(g->pci_vendor_id);
    if (gpu_names(pci, g, x) < 0)
        return -1;
    return gpu_locality(t, pci, g, x);
}

static int gpu_cmp(const void *a, const void *b)
{
    return strcmp(((const ng_gpu_info *)a)->pci_bus_id, ((const ng_gpu_info *)b)->pci_bus_id);
}

static int build_gpus(ng_topology *t)
{
    unsigned n = 0;
    for (hwloc_obj_t p = NULL; (p = hwloc_get_next_pcidev(t->hw, p)) != NULL;)
        n++;
    t->gpus = calloc(n + 1, sizeof *t->gpus);
    t->gext = calloc(n + 1, sizeof *t->gext);
    if (!t->gpus || !t->gext)
        return -1;
    for (hwloc_obj_t p = NULL; (p = hwloc_get_next_pcidev(t->hw, p)) != NULL;) {
        char bus[NG_BUSID_LEN];
        busid_of(p, bus);
        if (t->n_gpus >= NG_MAX_GPUS || !is_gpu(t, p, bus))
            continue;
        if (gpu_add(t, p, bus) < 0)
            return -1;
    }
    /* Sort info and ext together: ext pointers are referenced by info. */
    typedef struct { ng_gpu_info g; ng_gpu_ext x; } pair;
    pair *pr = malloc((t->n_gpus + 1) * sizeof *pr);
    if (!pr)
        return -1;
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
    if (read_list(fsroot, "/sys/devices/system/cpu/online", cpus) < 0)
        goto out;
    if (read_list(fsroot, "/sys/devices/system/node/online", nodes) < 0)
        hwloc_bitmap_only(nodes, 0); /* kernel without NUMA: one node 0 */
    if (read_list(fsroot, "/sys/devices/system/node/has_cpu", cpunodes) < 0)
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

static int hw_load(ng_topology *t, const ng_topology_options *o, char *err, size_t errlen)
{
    if (hwloc_topology_init(&t->hw) < 0) {
        t->hw = NULL;
        return ng_fail(err, errlen, "hwloc_topology_init failed: %s", strerror(errno));
    }
    unsigned long flags = o->include_disallowed ? HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED : 0;
    if (hwloc_topology_set_flags(t->hw, flags) < 0 ||
        ng_hwloc_set_io_filters(t->hw) < 0)
        return ng_fail(err, errlen, "hwloc: cannot set flags/filters: %s", strerror(errno));
    if (o->xml_path && *o->xml_path) {
        if (access(o->xml_path, R_OK) < 0)
            return ng_fail(err, errlen, "cannot read topology XML '%.200s': %s", o->xml_path,
                           strerror(errno));
        /* hwloc 2.x parses the file here: a failure means bad content. */
        if (hwloc_topology_set_xml(t->hw, o->xml_path) < 0)
            return ng_fail(err, errlen, "'%.200s' is not a valid hwloc XML topology (%s)",
                           o->xml_path, strerror(errno));
    } else {
        /* Live: skip the components that initialise GPU runtimes or talk to
         * X (seconds per node, contexts on every GPU); PCI, sysfs and DRM
         * discovery say all we need. NVML/RSMI stay for their OS devices. */
        static const char *const slow[] = {"cuda", "opencl", "levelzero", "gl", "pci"};
        for (size_t i = 0; i < NG_ARRAY_LEN(slow); i++)
            hwloc_topology_set_components(t->hw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, slow[i]);
    }
    if (hwloc_topology_load(t->hw) < 0)
        return ng_fail(err, errlen, "hwloc cannot load %s%.200s%s: %s",
                       o->xml_path ? "XML '" : "the live topology", o->xml_path ? o->xml_path : "",
                       o->xml_path ? "' (not a valid hwloc XML?)" : "", strerror(errno));
    if (hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_PU) <= 0)
        return ng_fail(err, errlen, "topology has no usable PU");
    return 0;
}

/* Live discovery replaced by the node's topology cache (lib/topocache.c)
 * when it is valid: 1 loaded, 0 not (t->hw reset; the caller discovers live).
 * Flags and filters as in hw_load, so both paths give the same objects. */
static int hw_load_cache(ng_topology *t, const ng_topology_options *o)
{
    if (!o->cache_dir || !*o->cache_dir || (o->xml_path && *o->xml_path))
        return 0;
    if (hwloc_topology_init(&t->hw) < 0) {
        t->hw = NULL;
        return 0;
    }
    unsigned long flags = o->include_disallowed ? HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED : 0;
    if (hwloc_topology_set_flags(t->hw, flags) == 0 &&
        ng_hwloc_set_io_filters(t->hw) == 0 &&
        ng_topology_cache_use(t->hw, o->cache_dir, NULL, 0) == 0 &&
        hwloc_topology_load(t->hw) == 0 && hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_PU) > 0)
        return 1;
    hwloc_topology_destroy(t->hw);
    t->hw = NULL;
    return 0;
}

int ng_topology_load(ng_topology **out, const ng_topology_options *opts, char *err, size_t errlen)
{
    return ng_topology_load_sys(NULL, out, opts, err, errlen);
}

int ng_topology_load_sys(const ng_sys_ops *sys, ng_topology **out,
                         const ng_topology_options *opts, char *err, size_t errlen)
{
    static const ng_topology_options none;
    const ng_topology_options *o = opts ? opts : &none;
    if (!out)
        return ng_fail(err, errlen, "ng_topology_load: no output pointer");
    *out = NULL;
    ng_topology *t = calloc(1, sizeof *t);
    if (!t)
        return ng_fail(err, errlen, "out of memory");
    const char *root = (o->fsroot && *o->fsroot) ? o->fsroot : "/";
    if (ng_strlcpy(t->fsroot, root, sizeof t->fsroot) < 0) {
        free(t);
        return ng_fail(err, errlen, "fsroot longer than %zu bytes", sizeof t->fsroot - 1);
    }
    t->from_cache = hw_load_cache(t, o);
    if (!t->from_cache && hw_load(t, o, err, errlen) < 0) {
        ng_topology_free(t);
        return -1;
    }
    int xml = o->xml_path && *o->xml_path;
    t->this_system = xml ? xml_matches_sysfs(t->hw, t->fsroot) : 1;
    t->allowed = hwloc_bitmap_dup(o->include_disallowed ? hwloc_topology_get_topology_cpuset(t->hw)
                                                        : hwloc_topology_get_allowed_cpuset(t->hw));
    /* Indices bound every bitmap numaguard builds: an XML may leave a NUMA
     * node without os_index (hwloc then says 2^32-1) or claim absurd PUs. */
    hwloc_obj_t node = NULL;
    while ((node = hwloc_get_next_obj_by_type(t->hw, HWLOC_OBJ_NUMANODE, node)) != NULL)
        if (node->os_index > NG_MAX_NUMA_OS_INDEX) {
            unsigned bad = node->os_index;
            ng_topology_free(t);
            return ng_fail(err, errlen, "invalid topology: NUMA node index %u out of range "
                                        "(0-%d)", bad, NG_MAX_NUMA_OS_INDEX);
        }
    if (hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(t->hw)) > NG_MAX_PU_OS_INDEX) {
        ng_topology_free(t);
        return ng_fail(err, errlen, "invalid topology: a PU index is above %d", NG_MAX_PU_OS_INDEX);
    }
    if (!t->allowed || build_numa(t, o, sys) < 0) {
        ng_topology_free(t);
        return ng_fail(err, errlen, "out of memory while building the topology view");
    }
    /* hwloc >= 2 reports at least one NUMA node on every machine (a non-NUMA
     * one included), so none means broken discovery (sysfs hidden or
     * damaged, a hand-made XML): nothing to place memory on, and CPU
     * placement from the same discovery is not to be trusted either. */
    if (t->n_numa == 0) {
        ng_topology_free(t);
        return ng_fail(err, errlen, "invalid topology: hwloc found no NUMA node "
                                    "(damaged sysfs or XML?)");
    }
    /* hwloc accepts an XML that numbers two NUMA nodes alike (found by
     * fuzzing); lookups by OS index would then be ambiguous. */
    for (unsigned k = 1; k < t->n_numa; k++)
        if (t->numa[k].os_index == t->numa[k - 1].os_index) {
            unsigned dup = t->numa[k].os_index;
            ng_topology_free(t);
            return ng_fail(err, errlen, "invalid topology: two NUMA nodes are numbered %u", dup);
        }
    if (build_distances(t) < 0 || build_gpus(t) < 0 || (t->nics = ng_nic_set_build(t)) == NULL) {
        ng_topology_free(t);
        return ng_fail(err, errlen, "out of memory while building the topology view");
    }
    *out = t;
    return 0;
}

void ng_topology_free(ng_topology *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < t->n_gpus; i++) {
        ng_gpu_ext *x = &t->gext[i];
        for (char **p = x->names; p && *p; p++)
            free(*p);
        free(x->names);
        hwloc_bitmap_free(x->cpus);
        hwloc_bitmap_free(x->numa_nodes);
        hwloc_bitmap_free(x->memory_nodes);
    }
    free(t->gpus);
    free(t->gext);
    ng_nic_set_free(t->nics);
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

const char *ng_topology_fsroot(const ng_topology *t)
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
    int k = t ? numa_index(t, os) : -1;
    return k >= 0 ? &t->numa[k] : NULL;
}

unsigned ng_topology_distance(const ng_topology *t, unsigned from_os, unsigned to_os)
{
    int a = t ? numa_index(t, from_os) : -1, b = t ? numa_index(t, to_os) : -1;
    return a >= 0 && b >= 0 ? t->dist[(unsigned)a * t->n_numa + (unsigned)b] : 0;
}

unsigned ng_topology_gpu_count(const ng_topology *t)
{
    return t ? t->n_gpus : 0;
}

const ng_gpu_info *ng_topology_gpu(const ng_topology *t, unsigned i)
{
    return t && i < t->n_gpus ? &t->gpus[i] : NULL;
}

const ng_nic_set *ng_topology_nic_set(const ng_topology *t)
{
    return t ? t->nics : NULL;
}

int ng_topology_gpu_by_busid(const ng_topology *t, const char *busid)
{
    char norm[NG_BUSID_LEN];
    if (!t || ng_busid_normalize(busid, norm) < 0)
        return -1;
    for (unsigned i = 0; i < t->n_gpus; i++)
        if (strcmp(t->gpus[i].pci_bus_id, norm) == 0)
            return (int)i;
    return -1;
}
