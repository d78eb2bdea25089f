/* The topology module (lib/topo/): the loaded topology's storage and the
 * builders that fill it. Private to the library (ngi_* names).
 *
 * Layers inside lib/topo/ (each file calls only the ones above it):
 *   hwsetup.c      the one place that configures hwloc (filters, plugins)
 *   cache.c        the node's topology cache: stamp, trust, read back
 *   numa_kind.c    what a NUMA node's memory is (hwloc names, sysfs hints)
 *   numa.c         NUMA nodes and distances, their accessors
 *   gpus.c         which PCI devices are GPUs, their locality, accessors
 *   nic.c          network adapters, PCI distances, accessors
 *   topology.c     ng_topology_load: hwloc, then numa -> gpus -> nics
 *   cache_write.c  ng_topology_cache_write: loads a topology, writes it
 */
#ifndef NGI_TOPO_H
#define NGI_TOPO_H

#include "base.h"
#include "sysops.h"

/** NUMA node OS indices a topology may have (0..NG_MAX_NUMA_OS_INDEX). */
#define NGI_NODE_SLOTS (NG_MAX_NUMA_OS_INDEX + 1)

/** Per-node data kept beside the public ng_numa_info. */
typedef struct ngi_node_ext {
    hwloc_obj_t obj;                 /**< NULL for nodes hwloc hides */
    char busid[NG_BUSID_LEN];        /**< GPU this memory belongs to, "" if none */
} ngi_node_ext;

/** Per-GPU owned storage behind ng_gpu_info's const pointers. */
typedef struct ngi_gpu_ext {
    char **names;
    hwloc_bitmap_t cpus, numa_nodes, memory_nodes;
} ngi_gpu_ext;

/** The NICs of a topology (nic.c). */
typedef struct ngi_nic_set ngi_nic_set;

struct ng_topology {
    hwloc_topology_t hw;
    int this_system;
    int from_cache;                  /**< loaded from the topology cache (cache.c) */
    char fsroot[256];
    hwloc_bitmap_t allowed;
    unsigned n_numa;
    ng_numa_info *numa;              /**< sorted by OS index */
    ngi_node_ext *next;
    unsigned *dist;                  /**< n_numa x n_numa, 0 = unknown */
    unsigned n_gpus;
    ng_gpu_info *gpus;               /**< sorted by bus id */
    ngi_gpu_ext *gext;
    ngi_nic_set *nics;               /**< network adapters (nic.c) */
};

/* ---- hwsetup.c ---- */

/** I/O filters every numaguard topology uses: PCI bridges and devices hwloc
 *  finds important, and EVERY OS device: hwloc 2.9's "important" filter
 *  drops DRM nodes (card*, renderD*), the only trace of a GPU whose vendor
 *  has no runtime plugin. Returns 0 or -1. */
int ngi_hwloc_set_io_filters(hwloc_topology_t hw);
/** Flags and filters of every numaguard topology (@p include_disallowed:
 *  HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED). 0, or -1 with errno. */
int ngi_hwloc_setup(hwloc_topology_t hw, int include_disallowed);
/** Live discovery only: leave out the components that start GPU runtimes
 *  or talk to X (seconds per node); PCI, sysfs and DRM say all we need. */
void ngi_hwloc_skip_slow_components(hwloc_topology_t hw);

/** -1 with a one-line reason in @p err if @p path is an hwloc XML of a
 *  format version the running hwloc cannot read (3.x under hwloc 2, 1.x
 *  under hwloc 3), naming both versions; 0 otherwise (also when the file
 *  cannot be read or is no hwloc XML: hwloc's own error stands). */
int ngi_hwloc_xml_unreadable(const char *path, char *err, size_t errlen);

/* ---- cache.c (the read side, and what cache_write.c shares) ---- */

#define NGI_CACHE_STAMP_MAX 16384   /* stamp file bound */
#define NGI_CACHE_FIELD_MAX 4096    /* one stamp value (a CPU list) */

/** The machine state a cache is valid for (topology.stamp). */
typedef struct ngi_cache_stamp {
    char hwloc[32];
    char cpus[NGI_CACHE_FIELD_MAX];
    char nodes[NGI_CACHE_FIELD_MAX];
    char boot_id[64];
    unsigned long long xml_bytes;
    unsigned long long xml_hash;
} ngi_cache_stamp;

/** The running machine's state (always the real "/"). */
void ngi_cache_stamp_now(ngi_cache_stamp *s);
/** The stamp file's text; its length, or -1 when it does not fit. */
int ngi_cache_stamp_format(const ngi_cache_stamp *s, char *buf, size_t len);
/** Which machine property differs ("online CPUs"...), or NULL. */
const char *ngi_cache_stamp_mismatch(const ngi_cache_stamp *cached, const ngi_cache_stamp *now);
/** FNV-1a 64 of @p buf: detects truncation and damage (not an attacker). */
unsigned long long ngi_cache_fnv1a64(const char *buf, size_t len);
/** Open DIR one component at a time from "/" with O_NOFOLLOW, every
 *  directory root's and writable by nobody else; @p create makes the last
 *  one (0755). The directory's fd, or -1 with the reason in @p err. */
int ngi_cache_open_dir(const char *dir, int create, char *err, size_t errlen);

/**
 * Configure @p hw (initialised, flags and filters set, not loaded) to load
 * the cached topology of DIR if it is valid for the running machine; adds
 * HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM and ..._THISSYSTEM_ALLOWED_RESOURCES so
 * the calling process's cgroup restrictions apply. Returns 0 when set up,
 * -1 when the cache is missing, unsafe (a path component or file not
 * root's alone, a symlink, a FIFO), stale or corrupt (@p why says which, in
 * one line for a log); @p hw is then unusable and must be destroyed.
 */
int ngi_cache_use(hwloc_topology_t hw, const char *dir, char *why, size_t whylen);

/* ---- cache_write.c ---- */

/** Remove from hwloc-written XML (in place) every <info> line whose name
 *  says serial, UUID or asset tag (DMIProductUUID, DMIBoardSerial, disk
 *  and GPU serials): the topology cache is world-readable. Returns the new
 *  length, or (size_t)-1 if such an element is not on a line of its own. */
size_t ngi_cache_strip_identifiers(char *xml, size_t len);

/* ---- numa_kind.c ---- */

/** Kind and owning GPU of a node hwloc shows, from hwloc's names alone. */
void ngi_numa_kind_from_hwloc(hwloc_obj_t obj, ng_numa_info *ni, ngi_node_ext *ne);
/** 1 if hwloc's view says the node has no CPU of its own (XML heuristic). */
int ngi_numa_hwloc_cpuless(hwloc_obj_t obj, ng_mem_kind kind);
/** 1 if the CPUs are Xeon Phi / Xeon Max (CPU-less nodes are HBM). */
int ngi_numa_cpu_has_hbm(hwloc_topology_t hw);
/** Evidence read from sysfs/procfs on the machine we run on. */
typedef struct ngi_sysfs_hints ngi_sysfs_hints;
ngi_sysfs_hints *ngi_numa_hints_load(const char *fsroot);
/** Apply live evidence to one node (hwloc-visible or hidden); @p h may be NULL. */
void ngi_numa_apply_hints(const char *fsroot, const ngi_sysfs_hints *h, ng_numa_info *ni,
                          ngi_node_ext *ne);
/** Memory of a node from sysfs (hwloc hides it), 0 if unknown. */
uint64_t ngi_numa_sysfs_memory(const char *fsroot, unsigned os);

/* ---- numa.c ---- */

/** Fill t->numa / t->next from hwloc (@p next walks its NUMA objects) and,
 *  for this system, the kernel's hidden nodes and sysfs hints. -1 on no memory. */
int ngi_topo_build_numa(ng_topology *t, int include_disallowed,
                        hwloc_obj_t (*next)(hwloc_topology_t, hwloc_obj_t));
/** Fill t->dist (hwloc, then sysfs for this system). -1 on no memory. */
int ngi_topo_build_distances(ng_topology *t);
/** Index in t->numa of the node with OS index @p os, -1 if none. */
int ngi_numa_index(const ng_topology *t, unsigned os);

/* ---- gpus.c ---- */

/** Fill t->gpus / t->gext (needs the NUMA nodes). -1 on no memory or an
 *  OS device name ngi_device_name_check refuses (err says which). */
int ngi_topo_build_gpus(ng_topology *t, char *err, size_t errlen);
void ngi_topo_free_gpus(ng_topology *t);

/* ---- nic.c ---- */

/** Longest network interface name (the kernel's IFNAMSIZ - 1). */
#define NGI_IFNAME_MAX 15
/** Longest verbs device name numaguard keeps (the kernel allows 63,
 *  IB_DEVICE_NAME_MAX - 1; real ones are "mlx5_0", "mlx5_bond_0",
 *  "rocep94s0f0": far shorter). */
#define NGI_VERBS_NAME_MAX (NG_NIC_NAME_LEN - 1)
/** Longest OS device name of a GPU ("cuda0", "nvml0", "renderD128"). */
#define NGI_OSDEV_NAME_MAX 63

/** An OS device name read from a topology, by the kernel's rules for
 *  interface names (dev_valid_name: not empty, not "." or "..", no '/',
 *  ':' or white space) and verbs device names, kept to the characters
 *  every real one uses (letters, digits, '_', '-', '.'), since the names go
 *  into comma lists (UCX_NET_DEVICES, NCCL_IB_HCA) and onto terminals; at
 *  most @p max bytes. 0, or -1 with one line naming @p owner ("NIC
 *  0000:5e:00.0"), @p what ("verbs device") and the name, escaped. */
int ngi_device_name_check(const char *name, size_t max, const char *what, const char *owner,
                          char *err, size_t errlen);
/** The NICs of a topology whose NUMA nodes and GPUs are built; NULL on no
 *  memory or a name ngi_device_name_check refuses (err says which). */
ngi_nic_set *ngi_nic_set_build(const ng_topology *topo, char *err, size_t errlen);
void ngi_nic_set_free(ngi_nic_set *set);
/** Distance from the CPUs @p cpus (a task's) to NIC @p nic: NUMA when the
 *  NIC is local to some of them, PACKAGE when it shares their package. */
ng_pci_distance ngi_topology_cpus_nic_distance(const ng_topology *topo,
                                               hwloc_const_cpuset_t cpus, unsigned nic);
/** Index of the NIC named @p name (verbs name or network interface), or -1. */
int ngi_topology_nic_by_name(const ng_topology *topo, const char *name);

/* ---- topology.c ---- */

/** ng_topology_load with the hwloc walk of @p sys. */
int ngi_topology_load_sys(const ngi_sys_ops *sys, ng_topology **out,
                         const ng_topology_options *opts, char *err, size_t errlen);

/** ng_topology_load, with the reason the topology cache was not used in
 *  @p cache_why ("" when it was, or was not tried): one read of the cache
 *  both loads and judges it (numaguard doctor). */
int ngi_topology_load_why(ng_topology **out, const ng_topology_options *opts, char *cache_why,
                          size_t cwlen, char *err, size_t errlen);

/** The fsroot the topology was loaded with (NULL: "/"). */
const char *ngi_topology_fsroot(const ng_topology *topo);

#endif
