/**
 * @file numaguard/topology.h
 * @brief The machine: NUMA nodes (with their memory kinds), GPUs and
 *        network adapters with their locality, and the node's topology
 *        cache. Implemented in lib/topo/ (docs/topology.md).
 */
#ifndef NUMAGUARD_TOPOLOGY_H
#define NUMAGUARD_TOPOLOGY_H

#include "numaguard/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/** @name Loading a topology                                             */
/* ------------------------------------------------------------------ */
/** @{ */

/** Opaque: a loaded machine topology (hwloc) with its NUMA, GPU and NIC
 *  views. Immutable once loaded: several threads may read one topology at
 *  once (hwloc's read-only calls are thread-safe); free it only when no
 *  thread uses it or anything obtained from it. */
typedef struct ng_topology ng_topology;

/** Options for ng_topology_load(). Zero-initialise, then set what you need. */
typedef struct ng_topology_options {
    /** hwloc XML file to load; NULL = discover the live machine. */
    const char *xml_path;
    /** Root of /sys, /proc and /dev used for sysfs lookups (kinds, GPUs);
     *  NULL or "" means "/". Only for tests and the admin's test-only root. */
    const char *fsroot;
    /** Keep objects disallowed by cgroups (HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED). */
    int include_disallowed;
    /** Directory of the node's topology cache (e.g. NG_TOPOLOGY_CACHE_DIR).
     *  Live discovery (xml_path NULL) then uses the cache when it is
     *  present and valid, and discovers live when it is missing,
     *  unreadable or stale. NULL or "" = no cache. Ignored when xml_path
     *  is set. */
    const char *cache_dir;
    /** hwloc XML text to load instead of a file (@c xml_len bytes, a NUL
     *  after them); NULL = none. Another machine's topology (the job-wide
     *  check reads each node's): never "this system". Takes precedence
     *  over @c xml_path. */
    const char *xml_buffer;
    size_t xml_len;
} ng_topology_options;

/** Load a topology (@p opts NULL: the live machine, no cache). On success
 *  *out is a new topology the caller frees with ng_topology_free(); on
 *  failure *out is NULL and @p err says why in one line (-1). Loading the
 *  live machine costs ~10 ms or more (I/O devices); reuse a topology. */
int ng_topology_load(ng_topology **out, const ng_topology_options *opts,
                     char *err, size_t errlen);
/** The topology as hwloc XML (what ng_topology_options.xml_buffer loads),
 *  without identifying attributes (serial numbers, DMI, host names): a new
 *  NUL-terminated buffer in *xml (*len bytes before the NUL) the caller
 *  frees. 0, or -1 with one line in @p err. */
int ng_topology_export_xml(const ng_topology *topo, char **xml, size_t *len, char *err,
                           size_t errlen);
/** Free a topology and everything its accessors returned. NULL is a no-op. */
void ng_topology_free(ng_topology *topo);

/** 1 if the topology describes the machine we run on (live discovery, or an
 *  XML whose CPUs match this machine's); binding is skipped otherwise. */
int ng_topology_is_this_system(const ng_topology *topo);

/** 1 if @p topo was loaded from the topology cache, 0 otherwise. */
int ng_topology_from_cache(const ng_topology *topo);

/** The underlying hwloc topology, owned by @p topo (read-only use). */
hwloc_topology_t ng_topology_hwloc(const ng_topology *topo);

/** All allowed PUs of the machine (owned by @p topo). */
hwloc_const_cpuset_t ng_topology_allowed_cpus(const ng_topology *topo);

/** @} */

/* ------------------------------------------------------------------ */
/** @name NUMA nodes                                                      */
/* ------------------------------------------------------------------ */
/** @{ */

/** What a NUMA node's memory is. */
typedef enum ng_mem_kind {
    NG_MEM_DRAM = 0,  /**< ordinary DRAM next to CPUs */
    NG_MEM_HBM,       /**< high-bandwidth memory (MCDRAM, HBM, SPM) */
    NG_MEM_GPU,       /**< GPU memory exposed as a NUMA node (GH200, POWER9) */
    NG_MEM_NVM,       /**< persistent memory (Optane PMEM via kmem DAX) */
    NG_MEM_CXL,       /**< CXL-attached memory */
    NG_MEM_UNKNOWN    /**< a CPU-less node of unknown nature */
} ng_mem_kind;

/** Name used in JSON and messages: "DRAM","HBM","GPU","NVM","CXL","unknown"
 *  (static storage). */
const char *ng_mem_kind_name(ng_mem_kind kind);

/** Read-only description of one NUMA node (owned by its topology). */
typedef struct ng_numa_info {
    unsigned os_index;            /**< kernel node number */
    hwloc_const_cpuset_t cpus;    /**< allowed PUs local to it; empty if CPU-less */
    int has_cpus;                 /**< 1 if CPUs may be bound to it */
    ng_mem_kind kind;             /**< memory kind */
    uint64_t memory_bytes;        /**< local memory size, 0 if unknown */
} ng_numa_info;

/** NUMA nodes, sorted by OS index: count, then node @p i (NULL past the end). */
unsigned ng_topology_numa_count(const ng_topology *topo);
const ng_numa_info *ng_topology_numa(const ng_topology *topo, unsigned i);

/** Node by OS index, or NULL. For library users: numaguard's own adapters
 *  iterate ng_topology_numa() instead. */
const ng_numa_info *ng_topology_numa_by_os(const ng_topology *topo, unsigned os_index);

/** NUMA distance (10 = local) between two nodes by OS index; 0 if unknown.
 *  For library users (the planner reads the same table internally). */
unsigned ng_topology_distance(const ng_topology *topo, unsigned from_os, unsigned to_os);

/** @} */

/* ------------------------------------------------------------------ */
/** @name GPUs                                                            */
/* ------------------------------------------------------------------ */
/** @{ */

typedef enum ng_gpu_vendor {
    NG_VENDOR_UNKNOWN = 0,
    NG_VENDOR_NVIDIA,
    NG_VENDOR_AMD,
    NG_VENDOR_INTEL
} ng_gpu_vendor;

/** "nvidia","amd","intel","unknown" (static storage). */
const char *ng_gpu_vendor_name(ng_gpu_vendor vendor);

/** Read-only description of one GPU (owned by its topology). */
typedef struct ng_gpu_info {
    char pci_bus_id[NG_BUSID_LEN];   /**< lower-case "dddd:bb:dd.f" */
    ng_gpu_vendor vendor;
    unsigned pci_vendor_id;          /**< e.g. 0x10de; 0 if unknown */
    unsigned pci_device_id;
    const char *const *os_devices;   /**< NULL-terminated names: "cuda0","nvml0","card1",... */
    unsigned n_os_devices;
    hwloc_const_cpuset_t cpus;       /**< allowed PUs local to the GPU (may be empty) */
    hwloc_const_nodeset_t numa_nodes;   /**< CPU-bearing local nodes (OS indices) */
    hwloc_const_nodeset_t memory_nodes; /**< memory-only nodes belonging to this GPU */
} ng_gpu_info;

/** GPUs, sorted by PCI bus id: count, then GPU @p i (NULL past the end).
 *  "Topology GPU index" everywhere in the API means this @p i. */
unsigned ng_topology_gpu_count(const ng_topology *topo);
const ng_gpu_info *ng_topology_gpu(const ng_topology *topo, unsigned i);
/** Index of the GPU with this bus id (any case, domain optional), or -1. */
int ng_topology_gpu_by_busid(const ng_topology *topo, const char *busid);

/** Comma list of the bus ids of topology GPUs @p idx[0..n) ("" for none; an
 *  index that is not a GPU shows as "?"); an entry that does not fit is
 *  dropped whole. Returns the length. */
int ng_gpu_list_format(const ng_topology *topo, const int *idx, unsigned n,
                       char *buf, size_t len);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Network adapters (docs/network.md)                              */
/* ------------------------------------------------------------------ */
/** @{ */

/** Longest NIC name kept ("mlx5_0", "ibp94s0") plus NUL. */
#define NG_NIC_NAME_LEN 32
/** Most NICs a topology keeps (in PCI order; the rest are ignored). */
#define NG_MAX_NICS 64

/** What a NIC is. */
typedef enum ng_nic_kind {
    NG_NIC_IB = 0,    /**< InfiniBand HCA (verbs device, IB link layer) */
    NG_NIC_ROCE,      /**< RDMA over Ethernet (verbs device on an Ethernet NIC) */
    NG_NIC_RDMA,      /**< another verbs device (AWS EFA, iWARP...) */
    NG_NIC_ETHERNET   /**< plain Ethernet, no verbs device */
} ng_nic_kind;

/** "IB","RoCE","RDMA","Ethernet" (static storage). */
const char *ng_nic_kind_name(ng_nic_kind kind);

/** Read-only description of one NIC (one PCI function; owned by its topology). */
typedef struct ng_nic_info {
    /** The name libraries take: the verbs device ("mlx5_0") when there is
     *  one, else the network interface ("eno1"). */
    char name[NG_NIC_NAME_LEN];
    char netdev[NG_NIC_NAME_LEN];   /**< network interface ("ib0"), "" if none */
    ng_nic_kind kind;
    int rdma;                       /**< 1 if it has a verbs (OpenFabrics) device */
    /** Ports of the verbs device (bit p = port p, 1..31) from hwloc's
     *  Port<p>State infos; 0 = unknown (exported as port 1). */
    uint32_t ports;
    /** Ports whose state was ACTIVE when the topology was read. */
    uint32_t ports_active;
    char pci_bus_id[NG_BUSID_LEN];  /**< lower-case "dddd:bb:dd.f" */
    unsigned pci_vendor_id, pci_class_id;
    hwloc_const_cpuset_t cpus;      /**< allowed PUs local to it (may be empty) */
    hwloc_const_nodeset_t numa_nodes; /**< CPU-bearing nodes sharing those PUs */
} ng_nic_info;

/** NICs of the topology, sorted by PCI bus id, from hwloc's OpenFabrics and
 *  network OS devices (XML of hwloc 1.x and 2.x alike): count, then NIC
 *  @p i (NULL past the end). */
unsigned ng_topology_nic_count(const ng_topology *topo);
const ng_nic_info *ng_topology_nic(const ng_topology *topo, unsigned i);

/** PCI distance between a device and a NIC, nearest first. */
typedef enum ng_pci_distance {
    NG_PCI_SWITCH = 0, /**< below the same PCIe switch (a PCI-PCI bridge) */
    NG_PCI_NUMA,       /**< local to the same NUMA node (same host bridge locality) */
    NG_PCI_PACKAGE,    /**< in the same package (socket), another NUMA node */
    NG_PCI_SYSTEM      /**< across the socket interconnect, or unknown */
} ng_pci_distance;

/** "switch","numa","package","system" (static storage). */
const char *ng_pci_distance_name(ng_pci_distance d);

/** Distance from topology GPU @p gpu to NIC @p nic (NG_PCI_SYSTEM if unknown). */
ng_pci_distance ng_topology_gpu_nic_distance(const ng_topology *topo, unsigned gpu,
                                             unsigned nic);

/** Comma list of the names of topology NICs @p nics[0..n) ("" for none);
 *  an entry that does not fit is dropped whole. Returns the length. */
int ng_nic_list_format(const ng_topology *topo, const unsigned *nics, unsigned n,
                       char *buf, size_t len);

/** @} */

/* ------------------------------------------------------------------ */
/** @name The node's topology cache (docs/performance.md)                 */
/* ------------------------------------------------------------------ */
/** @{ */
/* Live discovery with I/O devices costs ~10+ ms per process; the node's
 * topology is written once (as root, e.g. when slurmd starts) and every
 * later load reads it back. A stamp binds the XML to the machine state it
 * describes; any mismatch means "discover live". */

/** Default cache directory (the plugin's topology_cache= default). */
#define NG_TOPOLOGY_CACHE_DIR "/run/numaguard"
/** File names inside the cache directory. */
#define NG_TOPOLOGY_CACHE_XML "topology.xml"
#define NG_TOPOLOGY_CACHE_STAMP "topology.stamp"

/**
 * Discover the live node once (complete: with I/O devices as
 * ng_topology_load does, and with cgroup-disallowed resources, so that
 * processes in any cgroup can restrict it to their own) and write
 * DIR/topology.xml and DIR/topology.stamp atomically (temporary files,
 * fsync, rename; mode 0644). Root only. DIR (absolute) is created (0755)
 * when missing; every directory from / to DIR must be owned by root, not
 * writable by group or others (sticky /tmp does not count) and no symlink:
 * readers trust nothing else. Infos naming serials, UUIDs or asset tags are
 * left out of the XML. The stamp records the hwloc version, the online CPU
 * list, the online NUMA node list, the boot id, and the XML's size and
 * FNV-1a hash. Returns 0, or -1 with the reason in @p err. Not to be run
 * twice at once on one directory.
 */
int ng_topology_cache_write(const char *dir, char *err, size_t errlen);

/** 1 if DIR holds a cache valid for the running machine (the checks a load
 *  makes, hwloc parse included; nothing kept), 0 if not (@p why says why
 *  in one line for a log). */
int ng_topology_cache_valid(const char *dir, char *why, size_t whylen);

/** hwloc plugins numaguard never needs: GPU runtimes and X (their
 *  components are disabled anyway), libpciaccess (Linux sysfs gives PCI) and
 *  libxml2 (hwloc's own minimal parser reads hwloc-written XML). */
#define NG_HWLOC_LEAN_PLUGINS \
    "hwloc_gl,hwloc_opencl,hwloc_cuda,hwloc_levelzero,hwloc_pci,hwloc_xml_libxml"

/**
 * Process-wide: set HWLOC_PLUGINS_BLACKLIST=NG_HWLOC_LEAN_PLUGINS unless the
 * variable is already set (an admin's choice wins). hwloc dlopens every
 * plugin when a process initialises its first topology; skipping these
 * saves ~2 ms per process (docs/performance.md). Call it before the first
 * hwloc topology of the process; later it has no effect. NOT thread-safe
 * (setenv), so it does nothing when the process has more than one thread:
 * the plugin calls it in slurmd (single-threaded at SPANK init) and every
 * slurmstepd inherits the variable. Returns 1 if it set the variable, else 0.
 */
int ng_topology_lean_hwloc(void);

/** The hwloc release this process runs with ("2.9.0"), as hwloc records it
 *  in every topology it builds (not hwloc_get_api_version(), the API's
 *  number), into @p buf (at most 32 characters). 0, or -1 with "unknown".
 *  Thread-safe; builds a one-PU synthetic topology (microseconds). */
int ng_hwloc_version(char *buf, size_t len);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_TOPOLOGY_H */
