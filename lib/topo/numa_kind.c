/* What a NUMA node's memory is: DRAM, HBM, GPU memory, persistent memory
 * or CXL, from hwloc's names and, on the machine we run on, from sysfs
 * (kmem DAX devices) and the NVIDIA driver (coherent GPU memory). Rules and
 * their reasons: docs/topology.md. */
#include "private/topo.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/** Evidence read from sysfs/procfs on the machine we run on. */
struct ngi_sysfs_hints {
    signed char dax_kind[NGI_NODE_SLOTS];        /**< kind of a kmem DAX node, -1 none */
    char gpu_busid[NGI_NODE_SLOTS][NG_BUSID_LEN]; /**< GPU owning a node ("" none) */
};

static int has_ci(const char *s, const char *needle)
{
    return s && strcasestr(s, needle) != NULL;
}

static const char *obj_info(hwloc_obj_t obj, const char *name)
{
    return obj ? hwloc_obj_get_info_by_name(obj, name) : NULL;
}

/* 1 if sysfs lists no CPU for the node, 0 if it lists some, -1 unknown. */
static int sysfs_node_cpuless(const char *fsroot, unsigned os)
{
    char abs[128];
    snprintf(abs, sizeof abs, "/sys/devices/system/node/node%u/cpulist", os);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int rc = ngi_read_list_file(fsroot, abs, set);
    int res = rc < 0 ? -1 : hwloc_bitmap_iszero(set);
    hwloc_bitmap_free(set);
    return res;
}

uint64_t ngi_numa_sysfs_memory(const char *fsroot, unsigned os)
{
    char abs[128], path[512], buf[4096];
    snprintf(abs, sizeof abs, "/sys/devices/system/node/node%u/meminfo", os);
    if (ngi_path(path, sizeof path, fsroot, abs) < 0 || ngi_read_small_file(path, buf, sizeof buf) < 0)
        return 0;
    const char *p = strstr(buf, "MemTotal:");
    unsigned long long kb;
    if (!p || sscanf(p, "MemTotal: %llu", &kb) != 1)
        return 0;
    return (uint64_t)kb * 1024;
}

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
int ngi_numa_cpu_has_hbm(hwloc_topology_t hw)
{
    hwloc_obj_t pkg = hwloc_get_next_obj_by_type(hw, HWLOC_OBJ_PACKAGE, NULL);
    const char *model = obj_info(pkg, "CPUModel");
    if (!model)
        model = obj_info(hwloc_get_root_obj(hw), "CPUModel");
    return has_ci(model, "Xeon Phi") || has_ci(model, "CPU Max");
}

void ngi_numa_kind_from_hwloc(hwloc_obj_t obj, ng_numa_info *ni, ngi_node_ext *ne)
{
    int k = kind_from_name(obj->subtype);
    if (k < 0)
        k = kind_from_name(obj_info(obj, "DAXType"));
    if (k < 0)
        k = kind_from_name(obj_info(obj, "Type")); /* hwloc 1.x KNL: Type=MCDRAM */
    const char *bus = obj_info(obj, "PCIBusID");
    if (bus && ngi_busid_normalize(bus, ne->busid) == 0 && k < 0)
        k = NG_MEM_GPU;
    ni->kind = k < 0 ? NG_MEM_UNKNOWN : (ng_mem_kind)k;
}

/* XML heuristic (no sysfs): hwloc gives a CPU-less node its parent's
 * cpuset, so a node is CPU-less if its cpuset is empty, its kind is not
 * DRAM, it is kmem DAX memory, or it is not the first memory child. */
int ngi_numa_hwloc_cpuless(hwloc_obj_t obj, ng_mem_kind kind)
{
    if (hwloc_bitmap_iszero(obj->cpuset))
        return 1;
    if (kind != NG_MEM_DRAM && kind != NG_MEM_UNKNOWN)
        return 1;
    if (obj_info(obj, "DAXDevice"))
        return 1;
    return obj->parent && obj->parent->memory_first_child != obj;
}

static void hints_dax(const char *fsroot, ngi_sysfs_hints *h, const char *dir_abs)
{
    char dir[512];
    DIR *d = ngi_opendir_path(dir, sizeof dir, fsroot, dir_abs);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "dax", 3) != 0 || strlen(de->d_name) > 64)
            continue;
        char path[640], buf[64], link[1024];
        long node;
        if (ngi_join(path, sizeof path, dir, de->d_name, "/target_node") < 0 ||
            ngi_read_small_file(path, buf, sizeof buf) < 0 || sscanf(buf, "%ld", &node) != 1 ||
            node < 0 || node >= NGI_NODE_SLOTS)
            continue;
        ssize_t n = ngi_join(path, sizeof path, dir, de->d_name, "") < 0 ? -1
                  : readlink(path, link, sizeof link - 1);
        link[n > 0 ? n : 0] = '\0';
        h->dax_kind[node] = (signed char)kind_from_dax_path(link);
    }
    closedir(d);
}

/* NVIDIA coherent GPU memory (GH200, GB200): the first line of
 * /proc/driver/nvidia/gpus/<bus>/numa_status is "Node: N". */
static void hints_nvidia(const char *fsroot, ngi_sysfs_hints *h)
{
    char dir[512];
    DIR *d = ngi_opendir_path(dir, sizeof dir, fsroot, "/proc/driver/nvidia/gpus");
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char bus[NG_BUSID_LEN], path[640], buf[256];
        long node;
        if (strlen(de->d_name) > 32 || ngi_busid_normalize(de->d_name, bus) < 0)
            continue;
        if (ngi_join(path, sizeof path, dir, de->d_name, "/numa_status") < 0 ||
            ngi_read_small_file(path, buf, sizeof buf) < 0 || sscanf(buf, " Node: %ld", &node) != 1 ||
            node < 0 || node >= NGI_NODE_SLOTS)
            continue;
        memcpy(h->gpu_busid[node], bus, NG_BUSID_LEN);
    }
    closedir(d);
}

ngi_sysfs_hints *ngi_numa_hints_load(const char *fsroot)
{
    ngi_sysfs_hints *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    memset(h->dax_kind, -1, sizeof h->dax_kind);
    hints_dax(fsroot, h, "/sys/bus/dax/devices");
    hints_dax(fsroot, h, "/sys/class/dax");
    hints_nvidia(fsroot, h);
    return h;
}

/* Apply live evidence to one node (hwloc-visible or hidden). */
void ngi_numa_apply_hints(const char *fsroot, const ngi_sysfs_hints *h, ng_numa_info *ni,
                          ngi_node_ext *ne)
{
    int cpuless = sysfs_node_cpuless(fsroot, ni->os_index);
    if (cpuless >= 0)
        ni->has_cpus = !cpuless;
    if (!h || ni->os_index >= NGI_NODE_SLOTS)
        return;
    if (h->gpu_busid[ni->os_index][0]) {
        memcpy(ne->busid, h->gpu_busid[ni->os_index], NG_BUSID_LEN);
        ni->kind = NG_MEM_GPU;
    } else if (h->dax_kind[ni->os_index] >= 0 &&
               (ni->kind == NG_MEM_UNKNOWN || ni->kind == NG_MEM_DRAM)) {
        ni->kind = (ng_mem_kind)h->dax_kind[ni->os_index];
    }
}

const char *ng_mem_kind_name(ng_mem_kind kind)
{
    static const char *const names[] = {"DRAM", "HBM", "GPU", "NVM", "CXL", "unknown"};
    return (unsigned)kind < NGI_ARRAY_LEN(names) ? names[kind] : "unknown";
}
