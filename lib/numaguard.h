/**
 * @file numaguard.h
 * @brief numaguard core library: topology, GPU locality, policy grammar,
 *        per-task placement plans, and applying them.
 *
 * Data flows one way:
 *
 *     ng_topology (live or XML)  +  job shape (ng_plan_request)
 *                 |                          |
 *                 +---------> ng_plan_compute() ---> ng_plan
 *                                                      |
 *                                 ng_apply_task() <----+  (in each task)
 *
 * Launcher adapters (the SPANK plugin in spank/, the CLI in tools/) only
 * translate their inputs into these calls; no Slurm header is included here.
 *
 * Conventions:
 *  - Functions returning int return 0 on success and -1 on failure, writing
 *    one human-readable line (no trailing newline) into @p err (may be NULL)
 *    bounded by @p errlen.
 *  - CPU and NUMA sets are hwloc bitmaps of OS indices (PU os_index, NUMA
 *    node os_index). Sets returned by accessors are owned by their parent
 *    object and stay valid until it is freed.
 *  - Every string that comes from a user, an admin or a file is bounded:
 *    see NG_MAX_* below.
 *
 * Building against it: libnumaguard is a static library that uses hwloc, so
 * link with `-lnumaguard -lhwloc -ldl`, or take both lines from pkg-config:
 *     cc $(pkg-config --cflags numaguard) app.c $(pkg-config --libs numaguard)
 */
#ifndef NUMAGUARD_H
#define NUMAGUARD_H

/** Release of this header and library (also debian/changelog, the RPM
 *  spec and numaguard.pc; `numaguard --version` prints it). */
#define NUMAGUARD_VERSION_MAJOR 0
#define NUMAGUARD_VERSION_MINOR 1
#define NUMAGUARD_VERSION_PATCH 0
#define NUMAGUARD_VERSION "0.1.0"
/** For #if tests: NUMAGUARD_VERSION_NUMBER >= NUMAGUARD_VERSION_NUM(0, 2, 0). */
#define NUMAGUARD_VERSION_NUM(a, b, c) (((a) << 16) | ((b) << 8) | (c))
#define NUMAGUARD_VERSION_NUMBER                                                  \
    NUMAGUARD_VERSION_NUM(NUMAGUARD_VERSION_MAJOR, NUMAGUARD_VERSION_MINOR,       \
                          NUMAGUARD_VERSION_PATCH)

#include <stddef.h>
#include <stdint.h>
#include <hwloc.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest option value or plugstack argument accepted, in bytes. */
#define NG_MAX_ARG 1024
/** Longest PCI bus id string "dddd:bb:dd.f" plus NUL. */
#define NG_BUSID_LEN 16
/** Largest NUMA node OS index a policy may name. */
#define NG_MAX_NUMA_OS_INDEX 4095
/** Largest PU OS index a topology may have (Linux NR_CPUS is at most 8192). */
#define NG_MAX_PU_OS_INDEX ((1 << 20) - 1)
/** Largest explicit thread count for --omp-guard=N. */
#define NG_MAX_THREADS 65536
/** Most GPUs a node may have (MI300A CPX has 24; leave room). */
#define NG_MAX_GPUS 256

/* ------------------------------------------------------------------ */
/** @name Topology                                                      */
/* ------------------------------------------------------------------ */
/** @{ */

/** Opaque: a loaded machine topology (hwloc) with its NUMA and GPU views. */
typedef struct ng_topology ng_topology;

/** What a NUMA node's memory is. */
typedef enum ng_mem_kind {
    NG_MEM_DRAM = 0,  /**< ordinary DRAM next to CPUs */
    NG_MEM_HBM,       /**< high-bandwidth memory (MCDRAM, HBM, SPM) */
    NG_MEM_GPU,       /**< GPU memory exposed as a NUMA node (GH200, POWER9) */
    NG_MEM_NVM,       /**< persistent memory (Optane PMEM via kmem DAX) */
    NG_MEM_CXL,       /**< CXL-attached memory */
    NG_MEM_UNKNOWN    /**< a CPU-less node of unknown nature */
} ng_mem_kind;

/** Name used in JSON and messages: "DRAM","HBM","GPU","NVM","CXL","unknown". */
const char *ng_mem_kind_name(ng_mem_kind kind);

/** Read-only description of one NUMA node. */
typedef struct ng_numa_info {
    unsigned os_index;            /**< kernel node number */
    hwloc_const_cpuset_t cpus;    /**< allowed PUs local to it; empty if CPU-less */
    int has_cpus;                 /**< 1 if CPUs may be bound to it */
    ng_mem_kind kind;             /**< memory kind */
    uint64_t memory_bytes;        /**< local memory size, 0 if unknown */
} ng_numa_info;

typedef enum ng_gpu_vendor {
    NG_VENDOR_UNKNOWN = 0,
    NG_VENDOR_NVIDIA,
    NG_VENDOR_AMD,
    NG_VENDOR_INTEL
} ng_gpu_vendor;

/** "nvidia","amd","intel","unknown". */
const char *ng_gpu_vendor_name(ng_gpu_vendor vendor);

/** Read-only description of one GPU. */
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

/** Options for ng_topology_load(). Zero-initialise, then set what you need. */
typedef struct ng_topology_options {
    /** hwloc XML file to load; NULL = discover the live machine. */
    const char *xml_path;
    /** Root of /sys, /proc and /dev used for sysfs lookups (kinds, GPUs);
     *  NULL or "" means "/". Only for tests and the admin's test-only root. */
    const char *fsroot;
    /** Keep objects disallowed by cgroups (HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED). */
    int include_disallowed;
    /** Directory of the
     *  node's topology cache (e.g. NG_TOPOLOGY_CACHE_DIR). Live discovery
     *  (xml_path NULL) then uses the cache when it is present and valid, and
     *  discovers live when it is missing, unreadable or stale. NULL or "" =
     *  no cache. Ignored when xml_path is set. */
    const char *cache_dir;
} ng_topology_options;

/** Load a topology. On failure *out is NULL and err says why. */
int ng_topology_load(ng_topology **out, const ng_topology_options *opts,
                     char *err, size_t errlen);
void ng_topology_free(ng_topology *topo);

/** 1 if the topology describes the machine we run on (live discovery, or an
 *  XML whose CPUs match this machine's); binding is skipped otherwise. */
int ng_topology_is_this_system(const ng_topology *topo);

/** The underlying hwloc topology (read-only use). */
hwloc_topology_t ng_topology_hwloc(const ng_topology *topo);

/** All allowed PUs of the machine. */
hwloc_const_cpuset_t ng_topology_allowed_cpus(const ng_topology *topo);

/** NUMA nodes, sorted by OS index. */
unsigned ng_topology_numa_count(const ng_topology *topo);
const ng_numa_info *ng_topology_numa(const ng_topology *topo, unsigned i);
/** Node by OS index, or NULL. */
const ng_numa_info *ng_topology_numa_by_os(const ng_topology *topo, unsigned os_index);

/** NUMA distance (10 = local) between two nodes by OS index; 0 if unknown. */
unsigned ng_topology_distance(const ng_topology *topo, unsigned from_os, unsigned to_os);

/** GPUs, sorted by PCI bus id. */
unsigned ng_topology_gpu_count(const ng_topology *topo);
const ng_gpu_info *ng_topology_gpu(const ng_topology *topo, unsigned i);
/** Index of the GPU with this bus id (any case, domain optional), or -1. */
int ng_topology_gpu_by_busid(const ng_topology *topo, const char *busid);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Network adapters and network affinity                         */
/* ------------------------------------------------------------------ */
/** @{ */
/* lib/topo_nic.c (the NICs of a topology and their PCI distance to GPUs
 * and CPUs) and lib/netaff.c (--net-affinity: grammar, admin filter, the
 * NICs of each task and the variables exported). docs/network.md. */

/** Longest NIC name kept ("mlx5_0", "ibp94s0") plus NUL. */
#define NG_NIC_NAME_LEN 32
/** Most NICs a topology keeps (in PCI order; the rest are ignored). */
#define NG_MAX_NICS 64
/** Longest value of one exported network variable, NUL included. */
#define NG_NET_VALUE_LEN 512

/** What a NIC is. */
typedef enum ng_nic_kind {
    NG_NIC_IB = 0,    /**< InfiniBand HCA (verbs device, IB link layer) */
    NG_NIC_ROCE,      /**< RDMA over Ethernet (verbs device on an Ethernet NIC) */
    NG_NIC_RDMA,      /**< another verbs device (AWS EFA, iWARP...) */
    NG_NIC_ETHERNET   /**< plain Ethernet, no verbs device */
} ng_nic_kind;

/** "IB","RoCE","RDMA","Ethernet". */
const char *ng_nic_kind_name(ng_nic_kind kind);

/** Read-only description of one NIC (one PCI function). */
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

/** NICs of the topology, sorted by PCI bus id. Discovered from hwloc's
 *  OpenFabrics and network OS devices (XML of hwloc 1.x and 2.x alike). */
unsigned ng_topology_nic_count(const ng_topology *topo);
const ng_nic_info *ng_topology_nic(const ng_topology *topo, unsigned i);
/** Index of the NIC named @p name (verbs name or network interface), or -1. */
int ng_topology_nic_by_name(const ng_topology *topo, const char *name);

/** PCI distance between a device and a NIC, nearest first. */
typedef enum ng_pci_distance {
    NG_PCI_SWITCH = 0, /**< below the same PCIe switch (a PCI-PCI bridge) */
    NG_PCI_NUMA,       /**< local to the same NUMA node (same host bridge locality) */
    NG_PCI_PACKAGE,    /**< in the same package (socket), another NUMA node */
    NG_PCI_SYSTEM      /**< across the socket interconnect, or unknown */
} ng_pci_distance;

/** "switch","numa","package","system". */
const char *ng_pci_distance_name(ng_pci_distance d);

/** Distance from topology GPU @p gpu to NIC @p nic (NG_PCI_SYSTEM if unknown). */
ng_pci_distance ng_topology_gpu_nic_distance(const ng_topology *topo, unsigned gpu,
                                             unsigned nic);
/** Distance from the CPUs @p cpus (a task's) to NIC @p nic: NUMA when the
 *  NIC is local to some of them, PACKAGE when it shares their package. */
ng_pci_distance ng_topology_cpus_nic_distance(const ng_topology *topo,
                                              hwloc_const_cpuset_t cpus, unsigned nic);

typedef enum ng_net_mode {
    NG_NET_OFF = 0, /**< export nothing */
    NG_NET_AUTO,    /**< the nearest NIC of each GPU of the task (of its CPUs) */
    NG_NET_COUNT    /**< the @c count nearest NICs, nearest first */
} ng_net_mode;

/** A parsed --net-affinity value (plain data). */
typedef struct ng_net_affinity {
    ng_net_mode mode;
    unsigned count;      /**< NG_NET_COUNT: NICs per task (1..NG_MAX_NICS) */
    int force;           /**< overwrite variables the user already set */
    /** "nccl-per-rank": NCCL_IB_HCA is each task's own list instead of the
     *  node's list (NCCL's maintainers advise against it: ring building
     *  expects the same list on every rank). */
    int nccl_per_rank;
} ng_net_affinity;

/** Parse --net-affinity: NULL or "" -> off; "auto", "N" (1..64) or "off",
 *  then the modifiers ",force" and ",nccl-per-rank" (each at most once;
 *  alone they mean auto,<modifier>). */
int ng_net_affinity_parse(const char *text, ng_net_affinity *out, char *err, size_t errlen);
int ng_net_affinity_format(const ng_net_affinity *a, char *buf, size_t len);

/** The admin's NIC filter (plugstack.conf net_allow= / net_deny=): comma
 *  lists of NIC names (verbs name or network interface); an entry ending in
 *  '*' matches names starting with the rest. Zero-initialised = default:
 *  every RDMA NIC, no plain Ethernet NIC. */
typedef struct ng_nic_filter {
    char allow[NG_MAX_ARG];   /**< "" = every RDMA NIC; else only these (Ethernet too) */
    char deny[NG_MAX_ARG];    /**< never these */
} ng_nic_filter;

/** Check and store the two lists (NULL = empty); -1 with one line naming
 *  the bad entry. */
int ng_nic_filter_parse(const char *allow, const char *deny, ng_nic_filter *out,
                        char *err, size_t errlen);
/** 1 if @p nic may be given to tasks under @p filter (NULL = default). */
int ng_nic_filter_admits(const ng_nic_filter *filter, const ng_nic_info *nic);

/** One network variable to set in a task. */
typedef struct ng_net_env {
    char name[40];
    char value[NG_NET_VALUE_LEN];
    int overwrite;   /**< 1: set even if the user set it (force) */
} ng_net_env;

/** Input of ng_net_plan_compute: the tasks of one node. */
typedef struct ng_net_request {
    ng_net_affinity aff;
    const ng_nic_filter *filter;     /**< NULL = default */
    unsigned ntasks;
    /** Per-task GPU lists, as in ng_plan_request (all NULL = no GPUs). */
    const unsigned *task_gpu_count;
    const unsigned *task_gpu_offset;
    const int *task_gpus;
    /** Per-task CPUs (for tasks without GPUs); NULL, or a NULL entry = the
     *  topology's allowed CPUs. */
    const hwloc_const_cpuset_t *task_cpus;
} ng_net_request;

/** Opaque: each task's NICs and network variables on one node. */
typedef struct ng_net_plan ng_net_plan;

/**
 * Per task, the NIC(s) nearest its GPU(s) (its CPUs when it has none):
 * with auto, for each of its GPUs the NICs at the smallest distance; when
 * several tie, the tasks that tie on the same NICs take them in turn
 * (round robin in task order). With N, the task's list goes on with the
 * next nearest NICs up to N. Variables: UCX_NET_DEVICES (dev:port,
 * nearest first), for RDMA NICs OMPI_MCA_btl_openib_if_include and, for
 * tasks with GPUs, NVSHMEM_HCA_LIST; NCCL_IB_HCA ("=dev:port,...", exact
 * names) is one list for the whole node: the RDMA NICs nearest to any GPU
 * of the topology, the same in every task (nccl_per_rank: the task's own).
 * No NIC (or mode off): nothing exported, not an error. Pure.
 */
int ng_net_plan_compute(const ng_topology *topo, const ng_net_request *req,
                        ng_net_plan **out, char *err, size_t errlen);
void ng_net_plan_free(ng_net_plan *np);
/** Task @p task's NICs (topology NIC indices, nearest first); returns the count. */
unsigned ng_net_plan_task_nics(const ng_net_plan *np, unsigned task, const unsigned **nics);
/** Task @p task's variables; returns the count. */
unsigned ng_net_plan_task_env(const ng_net_plan *np, unsigned task, const ng_net_env **env);
/** The node's NCCL_IB_HCA value ("" when none). */
const char *ng_net_plan_nccl_hca(const ng_net_plan *np);

/** Comma list of the names of topology NICs @p nics[0..n) ("" for none);
 *  an entry that does not fit is dropped whole. Returns the length. */
int ng_nic_list_format(const ng_topology *topo, const unsigned *nics, unsigned n,
                       char *buf, size_t len);

/** Forward declaration: see "Applying a plan in the task". */
struct ng_env_ops;

/**
 * Export @p env[0..n) (a task plan's net_env) through @p ops: a variable
 * the task already has is kept unless its entry says overwrite; the kept
 * names are listed in @p kept (" "-joined, bounded; may be NULL). Returns
 * 0, or -1 when setting one failed (err names it).
 */
int ng_net_apply_env(const ng_net_env *env, unsigned n, const struct ng_env_ops *ops,
                     char *kept, size_t keptlen, char *err, size_t errlen);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Topology cache                                                */
/* ------------------------------------------------------------------ */
/** @{ */
/* lib/topocache.c, docs/performance.md. Live discovery with I/O devices costs ~10+ ms per
 * process; the node's topology is written once (as root, e.g. when slurmd
 * starts) and every later load reads it back. A stamp binds the XML to the
 * machine state it describes; any mismatch means "discover live". */

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
 * FNV-1a hash.
 */
int ng_topology_cache_write(const char *dir, char *err, size_t errlen);

/**
 * Configure @p hw (initialised, flags and filters set, not loaded) to load
 * the cached topology of DIR if it is valid for the running machine; adds
 * HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM and ..._THISSYSTEM_ALLOWED_RESOURCES so
 * the calling process's cgroup restrictions apply. Returns 0 when set up,
 * -1 when the cache is missing, unsafe (a path component or file not
 * root's alone, a symlink, a FIFO), stale or corrupt (@p why says which, in
 * one line for a log); @p hw is then unusable and must be destroyed.
 * ng_topology_load() calls this; most callers just set cache_dir.
 */
int ng_topology_cache_use(hwloc_topology_t hw, const char *dir, char *why, size_t whylen);

/** 1 if DIR holds a cache valid for the running machine (the same checks
 *  as ng_topology_cache_use, nothing loaded), 0 if not (@p why says why). */
int ng_topology_cache_valid(const char *dir, char *why, size_t whylen);

/** 1 if @p topo was loaded from the topology cache, 0 otherwise. */
int ng_topology_from_cache(const ng_topology *topo);

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
 * hwloc topology of the process; later it has no effect. setenv() is not
 * thread-safe, so it does nothing when the process has more than one
 * thread: the plugin calls it in slurmd (single-threaded at SPANK init)
 * and every slurmstepd inherits the variable. Returns 1 if it set the
 * variable, else 0.
 */
int ng_topology_lean_hwloc(void);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Which GPUs a task has                                          */
/* ------------------------------------------------------------------ */
/** @{ */

/**
 * Environment view for GPU identification: the variables a launcher gave
 * the task. Any field may be NULL (unset).
 */
typedef struct ng_gpu_env {
    const char *slurm_step_gpus;      /**< SLURM_STEP_GPUS: global gres indices */
    const char *slurm_job_gpus;       /**< SLURM_JOB_GPUS: global gres indices */
    const char *cuda_visible_devices; /**< indices, GPU-/MIG- UUIDs */
    const char *rocr_visible_devices; /**< indices or GPU- UUIDs */
    const char *ze_affinity_mask;     /**< "0", "0.1", "1,2" */
    const char *gpu_device_ordinal;   /**< GPU_DEVICE_ORDINAL (Slurm, AMD) */
} ng_gpu_env;

/**
 * The node's gres GPU list in Slurm's index order: entry i is the device
 * file of gres GPU index i (e.g. "/dev/nvidia3", "/dev/dri/renderD129").
 * Build it with ng_gres_order_from_files() from gres.conf File= entries.
 */
typedef struct ng_gres_order {
    unsigned count;
    char **device_files;      /**< count entries, owned */
} ng_gres_order;

/**
 * Expand gres.conf File= values (each may hold a bracket range such as
 * "/dev/nvidia[0-3]" or a comma list) into Slurm's index order.
 * See docs/gpu-order.md for the rule and its source.
 */
int ng_gres_order_from_files(ng_gres_order *out, const char *const *file_specs,
                             unsigned n_specs, char *err, size_t errlen);
void ng_gres_order_free(ng_gres_order *order);

/**
 * Read the node's gres GPU order from a gres.conf file: the Name=gpu lines
 * that apply to @p node_name (NULL = any), File= values expanded in order.
 * Fails (naming the node) when Name=gpu records exist only for other nodes.
 * AutoDetect lines are resolved by the rule in docs/gpu-order.md using the
 * device files and driver information under @p fsroot. The file describes
 * the node whose root is @p fsroot: File= paths are taken under it (tests
 * give the plugin a gres.conf naming /dev/nvidiaN inside their fake root).
 */
int ng_gres_order_from_conf(ng_gres_order *out, const char *gres_conf_path,
                            const char *node_name, const char *fsroot,
                            char *err, size_t errlen);

/**
 * Map a device file (e.g. "/dev/nvidia2", "/dev/dri/renderD128") to its PCI
 * bus id. The device file itself is stat()ed as given (it must be a character
 * device: its major/minor identify the GPU; ng_gres_order_from_conf already
 * put fsroot in front of the paths it returns); the kernel and driver views are
 * read under @p fsroot (NULL = "/"): NVIDIA minors via
 * /proc/driver/nvidia/gpus/<bus>/information ("Device Minor: N"),
 * DRM char devices via /sys/dev/char/MAJ:MIN/device.
 */
int ng_device_file_busid(const char *fsroot, const char *device_file,
                         char busid[NG_BUSID_LEN], char *err, size_t errlen);

/**
 * Resolve the GPUs of one task into topology GPU indices (sorted, unique).
 * Order of evidence: SLURM_STEP_GPUS / SLURM_JOB_GPUS through @p order when
 * given; else CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES / ZE_AFFINITY_MASK
 * (UUIDs via NVML when available or /proc/driver/nvidia; plain indices as
 * positions among the topology's GPUs of that vendor in bus order).
 * @param out_idx   receives up to @p max indices
 * @param n_out     receives the number found (0 = task has no GPU)
 * @return 0, or -1 when a listed GPU cannot be identified (err says which).
 */
int ng_task_gpus(const ng_topology *topo, const ng_gres_order *order,
                 const ng_gpu_env *env, const char *fsroot,
                 int *out_idx, unsigned max, unsigned *n_out,
                 char *err, size_t errlen);

/**
 * The GPUs this process's devices cgroup gives it (Slurm's task/cgroup with
 * ConstrainDevices=yes): the device files of @p order it may access, as
 * topology indices (sorted). Checked with access(2), never opened.
 * Under ConstrainDevices Slurm renumbers a task's CUDA_VISIBLE_DEVICES and
 * (22.05, with per-task binding) its SLURM_STEP_GPUS from 0, so the cgroup
 * is the only evidence that names the devices.
 * @return 1 with @p out_idx filled when the cgroup denies some of the
 *         order's devices; 0 when it constrains nothing or cannot tell
 *         (then use ng_task_gpus); -1 on error (err says why).
 */
int ng_task_gpus_from_cgroup(const ng_topology *topo, const ng_gres_order *order,
                             const char *fsroot, int *out_idx, unsigned max,
                             unsigned *n_out, char *err, size_t errlen);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Launchers: local rank, per-rank GPUs, pre-bound ranks         */
/* ------------------------------------------------------------------ */
/** @{ */
/* lib/launcher.c. One set of rules for `numaguard exec`, `numaguard check`
 * and the plugin: read a launcher's variables (of this process, or of
 * another one through an ng_env_view), split a visible-GPU list per rank,
 * and tell whether the launcher already bound the rank. */

/** Read-only view of an environment. NULL view (or NULL get) = this
 *  process's environment (getenv). */
typedef struct ng_env_view {
    /** Value of @p name, or NULL if unset. */
    const char *(*get)(void *ctx, const char *name);
    void *ctx;
} ng_env_view;

/** This rank's place among the ranks of its node. */
typedef struct ng_local_rank {
    unsigned rank;          /**< local rank (0 when no launcher found) */
    unsigned size;          /**< ranks on this node (1 when no launcher found) */
    int global_rank;        /**< RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID; -1 unknown */
    const char *launcher;   /**< "torchrun","Open MPI","MPICH","PMI","Slurm"; NULL if none */
    const char *source;     /**< the variable the rank came from ("LOCAL_RANK"...); NULL if none */
} ng_local_rank;

/**
 * Local rank and size from the first launcher whose rank variable is set,
 * in this order (an inner launcher describes the process better than an
 * outer one): torchrun LOCAL_RANK/LOCAL_WORLD_SIZE; Open MPI
 * OMPI_COMM_WORLD_LOCAL_RANK/_SIZE; MPICH/Intel MPI MPI_LOCALRANKID/
 * MPI_LOCALNRANKS; PMI_LOCAL_RANK/PMI_LOCAL_SIZE; Slurm SLURM_LOCALID with
 * this node's entry (SLURM_NODEID) of SLURM_STEP_TASKS_PER_NODE, else
 * SLURM_TASKS_PER_NODE ("2(x3),1"). None set: rank 0 of 1, launcher NULL.
 * Returns -1 (err names the variables) when the values are not a rank
 * below a size >= 1; *out still names the launcher.
 */
int ng_launcher_local_rank(const ng_env_view *env, ng_local_rank *out, char *err, size_t errlen);

/** The launcher option that leaves ranks unbound, for messages:
 *  "mpirun --bind-to none", "mpiexec -bind-to none", "srun --cpu-bind=none",
 *  or both of the common ones when the launcher is unknown. */
const char *ng_launcher_unbind_hint(const ng_local_rank *lr);

/**
 * 1 if the launcher already bound this rank: its CPU mask @p current (e.g.
 * ng_current_cpus) covers only part of the CPUs it may use, @p allowed
 * (the cgroup cpuset: ng_topology_allowed_cpus of a live topology).
 * 0 otherwise (the same set, or nothing in common).
 */
int ng_launcher_prebound(hwloc_const_cpuset_t current, hwloc_const_cpuset_t allowed);

/** Per-rank GPU lists of the ranks of one node: rank r owns count[r]
 *  topology GPU indices starting at gpus[offset[r]] (the plan request's
 *  three arrays). Free with ng_rank_gpus_free. */
typedef struct ng_rank_gpus {
    unsigned size;         /**< ranks */
    unsigned *count, *offset;
    int *gpus;
    int any;               /**< some rank has a GPU */
    char how[160];         /**< where the lists came from, for messages */
    char warning[256];     /**< "" or why the ranks are planned CPU-only */
} ng_rank_gpus;

/**
 * The GPUs each of @p size ranks owns. From @p gpus_option when not NULL
 * ("all", "none", or indices in bus order / bus ids), else from
 * CUDA_VISIBLE_DEVICES, else ROCR_VISIBLE_DEVICES of @p env. When the list
 * has exactly @p size entries (>= 2), rank r owns entry r (torchrun and
 * mpirun give every rank all GPUs and each uses device <local rank>);
 * otherwise every rank shares the whole list. A visible list that hides
 * every GPU ("-1", "") or names GPUs on a node that has none gives a
 * CPU-only split with rg->warning set. Returns 0; -1 when the environment
 * names a GPU that cannot be identified; -2 when @p gpus_option is invalid
 * (a usage error). err says why. Call ng_rank_gpus_free after every return.
 */
int ng_launcher_rank_gpus(const ng_topology *topo, const ng_env_view *env, const char *fsroot,
                          const char *gpus_option, unsigned size, ng_rank_gpus *rg,
                          char *err, size_t errlen);
void ng_rank_gpus_free(ng_rank_gpus *rg);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Policy grammar                                                */
/* ------------------------------------------------------------------ */
/** @{ */

typedef enum ng_policy_kind {
    NG_POLICY_LOCAL = 0,   /**< bind CPUs near the GPU(s), MPOL_BIND memory there */
    NG_POLICY_PREFER,      /**< bind CPUs, MPOL_PREFERRED_MANY memory (no OOM) */
    NG_POLICY_INTERLEAVE,  /**< bind CPUs, MPOL_INTERLEAVE memory */
    NG_POLICY_WEIGHTED,    /**< bind CPUs, MPOL_WEIGHTED_INTERLEAVE (>= 6.9) */
    NG_POLICY_NONE         /**< touch nothing (threads only, if guarded) */
} ng_policy_kind;

/** "local","prefer","interleave","weighted","none". */
const char *ng_policy_kind_name(ng_policy_kind kind);

/** Modifier flags of --numa-policy. */
enum {
    NG_MOD_VERBOSE = 1u << 0, /**< one line per task on stderr */
    NG_MOD_QUIET   = 1u << 1, /**< no warnings */
    NG_MOD_STRICT  = 1u << 2, /**< failures fail the task */
    NG_MOD_HELP    = 1u << 3, /**< print the grammar */
    NG_MOD_SMT     = 1u << 4, /**< one thread per PU instead of per core */
    NG_MOD_CPULESS = 1u << 5  /**< memory policy may use CPU-less nodes */
};

#define NG_NODEMASK_WORDS ((NG_MAX_NUMA_OS_INDEX + 1) / 64)

/** A parsed --numa-policy value (plain data, copyable). */
typedef struct ng_policy {
    ng_policy_kind kind;
    unsigned mods;                 /**< NG_MOD_* */
    int has_nodes;                 /**< 1 if the user named memory nodes */
    uint64_t nodes[NG_NODEMASK_WORDS]; /**< named nodes (OS indices) */
} ng_policy;

/** Parse a --numa-policy value, e.g. "local", "verbose,prefer",
 *  "interleave:0-3,8", "weighted:all,cpuless". NULL/"" -> local. */
int ng_policy_parse(const char *text, ng_policy *out, char *err, size_t errlen);

/** Write the canonical text of a policy ("interleave:0-3,verbose"). */
int ng_policy_format(const ng_policy *pol, char *buf, size_t len);

/** 0 if every node the policy names (interleave:7) exists in @p topo;
 *  -1 with one line naming the missing nodes and the nodes that exist.
 *  Policies that name no node always pass. */
int ng_policy_check_nodes(const ng_policy *pol, const ng_topology *topo, char *err,
                          size_t errlen);

/** The grammar, for --numa-policy=help (multi-line). */
const char *ng_policy_help(void);

typedef enum ng_omp_mode {
    NG_OMP_OFF = 0,
    NG_OMP_AUTO,    /**< threads = cores owned (PUs with smt) */
    NG_OMP_FIXED    /**< threads = nthreads */
} ng_omp_mode;

/** A parsed --omp-guard value. */
typedef struct ng_omp_guard {
    ng_omp_mode mode;
    unsigned nthreads;   /**< for NG_OMP_FIXED */
    int force;           /**< overwrite values the user already set */
    /** ",bind": also export OMP_PROC_BIND and OMP_PLACES (explicit places of
     *  the task's own CPUs), only where numaguard really bound the task.
     *  Off by default: libgomp then pins the initial thread to the first
     *  place, and every thread or process the program creates outside
     *  OpenMP inherits that one place. */
    int bind;
} ng_omp_guard;

/** Parse --omp-guard: NULL or "" -> auto; "auto", "N", "off", followed by
 *  the modifiers ",force" and ",bind" (each at most once, any order; alone
 *  they mean auto,<modifier>). */
int ng_omp_guard_parse(const char *text, ng_omp_guard *out, char *err, size_t errlen);
int ng_omp_guard_format(const ng_omp_guard *g, char *buf, size_t len);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Thread environment                                             */
/* ------------------------------------------------------------------ */
/** @{ */

/** Default variables capped by --omp-guard, NULL-terminated. */
extern const char *const ng_default_thread_vars[];

/** ng_env_var.flags */
enum {
    /** Binds threads (OMP_PROC_BIND): ng_apply_task exports it, with
     *  OMP_PLACES listing the task's own CPUs, only when it bound the task
     *  itself (never for policy none, plan only or a user's --cpu-bind). */
    NG_ENV_BINDING = 1u << 0,
    /** A thread count derived from the CPUs owned (--omp-guard=auto):
     *  ng_apply_task lowers it to a cgroup v2 cpu.max quota when smaller. */
    NG_ENV_COUNT_AUTO = 1u << 1
};

/** One variable to set in a task. */
typedef struct ng_env_var {
    char name[64];
    char value[64];
    int overwrite;   /**< 1: set even if the user set it (force) */
    unsigned flags;  /**< NG_ENV_* */
} ng_env_var;

#define NG_MAX_ENV 32

/**
 * Compute the thread variables for a task owning @p threads threads.
 * @param vars  NULL-terminated list of count variables, or NULL for the default
 * @param smt   1 if places are hardware threads (with guard->bind)
 * Fills @p out with the count variables; with guard->bind, followed by
 * OMP_PROC_BIND (flag NG_ENV_BINDING: "close" when there is one thread per
 * place, else "spread"). OMP_PLACES is not in the list: ng_apply_task
 * writes it from the CPUs it bound (ng_omp_places_format). Returns the
 * number of entries, or -1.
 */
int ng_thread_env(const ng_omp_guard *guard, unsigned threads, int smt,
                  const char *const *vars, ng_env_var *out, unsigned max);

/**
 * OMP_PLACES for the PUs @p cpus: explicit places, one per core (its PUs in
 * @p cpus) or, with @p smt, one per PU; runs of places that repeat with a
 * stride of 1 are written as OpenMP intervals ("{0}:4", "{0,28}:28").
 * Returns the length, or -1 if empty or it does not fit in @p len.
 */
int ng_omp_places_format(const ng_topology *topo, hwloc_const_cpuset_t cpus, int smt,
                         char *buf, size_t len);

/** Parse an admin's comma list of variable names ("OMP_NUM_THREADS,MKL_NUM_THREADS")
 *  into a NULL-terminated array in @p names (each validated as [A-Z_][A-Z0-9_]*). */
int ng_thread_vars_parse(const char *text, char names[][64], const char **ptrs,
                         unsigned max, char *err, size_t errlen);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Planning                                                       */
/* ------------------------------------------------------------------ */
/** @{ */

/** The job shape on this node. */
typedef struct ng_plan_request {
    unsigned ntasks;                 /**< local tasks on this node (>= 1) */
    /** CPUs the step may use here; NULL = all allowed PUs of the topology. */
    hwloc_const_cpuset_t allowed_cpus;
    /** Per task GPU lists: task i has task_gpu_count[i] topology GPU indices
     *  starting at task_gpus[task_gpu_offset[i]]. All three NULL = no GPUs. */
    const unsigned *task_gpu_count;
    const unsigned *task_gpu_offset;
    const int *task_gpus;
    unsigned cpus_per_task;          /**< Slurm -c (logical CPUs); 0 = unset */
    ng_policy policy;
    ng_omp_guard omp;
    const char *const *thread_vars;  /**< NULL = ng_default_thread_vars */
    /** --net-affinity (zero = off: no NIC chosen, nothing exported). */
    ng_net_affinity net;
    const ng_nic_filter *nic_filter; /**< admin's NIC filter; NULL = default */
} ng_plan_request;

/** Memory policy mode a task gets. */
typedef enum ng_mem_mode {
    NG_MEM_MODE_NONE = 0,       /**< leave as is */
    NG_MEM_MODE_BIND,           /**< MPOL_BIND */
    NG_MEM_MODE_PREFERRED_MANY, /**< MPOL_PREFERRED_MANY */
    NG_MEM_MODE_INTERLEAVE,     /**< MPOL_INTERLEAVE */
    NG_MEM_MODE_WEIGHTED        /**< MPOL_WEIGHTED_INTERLEAVE */
} ng_mem_mode;

/** "none","bind","preferred_many","interleave","weighted_interleave". */
const char *ng_mem_mode_name(ng_mem_mode mode);

/** One task's plan (read-only, owned by the ng_plan). */
typedef struct ng_task_plan {
    unsigned local_id;
    unsigned n_gpus;
    const int *gpus;                 /**< topology GPU indices */
    hwloc_const_cpuset_t cpus;       /**< PUs to bind to; NULL if not binding */
    ng_mem_mode mem_mode;
    hwloc_const_nodeset_t mem_nodes; /**< OS indices; NULL if mode none */
    unsigned threads;                /**< cores (or PUs) owned */
    unsigned n_env;
    const ng_env_var *env;
    int shares_cores;                /**< 1 if another task shares a core */
    int gpu_remote;                  /**< 1 if its GPU(s) had no allowed local core */
    /** The node of mem_nodes listed first (OS index), -1 if none: for
     *  prefer its GPU's node, else (and for local) the node holding most of
     *  its cores. The one node to use where only one can be named
     *  (MPOL_PREFERRED on Linux < 5.15). */
    int mem_first;
    /** --net-affinity: the task's NICs (topology NIC indices, nearest
     *  first) and the network variables to export (ng_net_plan_compute). */
    unsigned n_nics;
    const unsigned *nics;
    unsigned n_net_env;
    const ng_net_env *net_env;
} ng_task_plan;

/** Opaque: the per-task plans of one step on one node, with warnings. */
typedef struct ng_plan ng_plan;

/** Compute the plan. Pure and deterministic: same input, same output. */
int ng_plan_compute(const ng_topology *topo, const ng_plan_request *req,
                    ng_plan **out, char *err, size_t errlen);
void ng_plan_free(ng_plan *plan);
unsigned ng_plan_task_count(const ng_plan *plan);
const ng_task_plan *ng_plan_task(const ng_plan *plan, unsigned local_id);
unsigned ng_plan_warning_count(const ng_plan *plan);
const char *ng_plan_warning(const ng_plan *plan, unsigned i);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Formatting helpers                                             */
/* ------------------------------------------------------------------ */
/** @{ */

/** Linux cpulist string ("0-23,96-119"; "" when empty). Returns length or -1 if truncated. */
int ng_list_format(hwloc_const_bitmap_t set, char *buf, size_t len);
/** Comma list of the bus ids of topology GPUs @p idx[0..n) ("" for none);
 *  an entry that does not fit is dropped whole. Returns the length. */
int ng_gpu_list_format(const ng_topology *topo, const int *idx, unsigned n,
                       char *buf, size_t len);
/** The calling thread's CPU affinity (any number of CPUs); -1 on error. */
int ng_current_cpus(hwloc_bitmap_t set);
/** Parse a Linux cpulist/nodelist string (bounded by NG_MAX_ARG) into @p set. */
int ng_list_parse(const char *text, hwloc_bitmap_t set, unsigned max_index,
                  char *err, size_t errlen);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Applying a plan in the task                                    */
/* ------------------------------------------------------------------ */
/** @{ */

/** Hooks the caller gives ng_apply_task() to read and write the task's env. */
typedef struct ng_env_ops {
    /** Return 1 if @p name is set in the task's environment. */
    int (*is_set)(void *ctx, const char *name);
    /** Set @p name=@p value (overwrite); 0 on success. */
    int (*set)(void *ctx, const char *name, const char *value);
    void *ctx;
    /** Optional: copy the value of @p name into @p buf; 0 if set, -1 if not.
     *  Lets ng_apply_task name the values it kept; NULL = names only. */
    int (*get)(void *ctx, const char *name, char *buf, size_t len);
} ng_env_ops;

/** What ng_apply_task() did, for the verbose line and NUMAGUARD_* vars. */
typedef struct ng_apply_result {
    int cpus_applied;        /**< sched_setaffinity done */
    int mem_applied;         /**< set_mempolicy done */
    ng_mem_mode mem_mode;    /**< mode actually set (after fallbacks) */
    char warning[256];       /**< warnings ("; "-joined, bounded), "" if none */
    unsigned flags;          /**< the NG_APPLY_* flags it ran with */
    char mem_mode_text[24];  /**< NUMAGUARD_MEM_MODE: mode name after fallbacks,
                                  "preferred" when PREFERRED_MANY fell back */
    unsigned threads;        /**< thread count exported (0: none exported) */
    unsigned quota_threads;  /**< the auto count was lowered to this cgroup v2
                                  cpu.max quota (CPUs, rounded up); 0: not lowered */
    char kept[160];          /**< preset thread variables kept ("OMP_NUM_THREADS=1"),
                                  "" if none */
    char net_kept[160];      /**< preset network variables kept (--net-affinity
                                  without force): names, " "-joined; "" if none */
} ng_apply_result;

/** Flags for ng_apply_task(). */
enum {
    NG_APPLY_SKIP_SYSCALLS = 1u << 0, /**< plan only (topology not this system) */
    NG_APPLY_KEEP_CPUS     = 1u << 1, /**< user --cpu-bind: leave affinity alone */
    NG_APPLY_LAUNCHER_MASK = 1u << 2  /**< with KEEP_CPUS: the mask is a launcher's
                                           (pre-bound rank), for the verbose line */
};

/**
 * Apply one task's plan to the calling process: CPU affinity, memory policy
 * (with fallbacks: PREFERRED_MANY -> PREFERRED, WEIGHTED -> INTERLEAVE),
 * thread variables, network variables (--net-affinity: ng_net_apply_env)
 * and NUMAGUARD_CPUS/MEMS/GPUS/POLICY through @p env.
 * Returns -1 (err says why) if a step failed; the caller decides whether
 * that is fatal (strict) or a warning.
 */
int ng_apply_task(const ng_topology *topo, const ng_plan *plan,
                  unsigned local_id, const ng_policy *pol, unsigned flags,
                  const ng_env_ops *env, ng_apply_result *res,
                  char *err, size_t errlen);

/** One verbose line for a task (no newline), in the spirit of --cpu-bind=verbose. */
int ng_task_describe(const ng_topology *topo, const ng_plan *plan,
                     unsigned local_id, int global_rank,
                     const ng_apply_result *res, char *buf, size_t len);

/** @} */

/* ------------------------------------------------------------------ */
/** @name Inspecting running processes (numaguard check)                 */
/* ------------------------------------------------------------------ */
/** @{ */
/* lib/inspect.c reads /proc under fsroot as the calling user (bounded
 * reads, O_NOFOLLOW|O_NONBLOCK, regular files only); lib/inspect_rules.c
 * holds the judgement rules. Fields and rules: docs/check.md.
 * Strings copied from /proc (comm, environ values, the kernel's policy
 * text) are raw bytes: escape them (ng_text_escape) before printing them
 * to a terminal. Notes (warnings, errors) are always printable. */

/** Most processes one inspection takes. */
#define NG_INSPECT_MAX_PIDS 4096
/** Notes kept per list, and their length. */
#define NG_NOTES_MAX 8
#define NG_NOTE_LEN 240

/** A bounded list of one-line messages (printable ASCII only). */
typedef struct ng_notes {
    unsigned n;
    char text[NG_NOTES_MAX][NG_NOTE_LEN];
} ng_notes;

/** One thread of a process. */
typedef struct ng_thread_view {
    int tid;
    char comm[64];               /**< thread name (raw bytes) */
    char state;                  /**< 'R' running or waiting for a CPU, 'S', 'D', ...; '?' */
    int last_cpu;                /**< CPU it ran on last (stat field 39); -1 unknown */
    hwloc_const_cpuset_t cpus;   /**< its own affinity (Cpus_allowed_list) */
} ng_thread_view;

/** Resident bytes of a process on one NUMA node. */
typedef struct ng_node_bytes {
    unsigned node;
    unsigned long long bytes;
} ng_node_bytes;

/** What one process looks like (read-only, owned by its ng_inspection). */
typedef struct ng_proc_view {
    int pid;
    int gone;                         /**< 1: no such process (exited); nothing else is set */
    int ppid;                         /**< parent (PPid) */
    char comm[64];                    /**< /proc/PID/comm (raw bytes) */
    hwloc_const_cpuset_t cpus;        /**< Cpus_allowed_list (the main thread) */
    char mems_allowed[256];           /**< Mems_allowed_list as written (raw) */
    unsigned cores, pus;              /**< cores with a PU in cpus; PUs in cpus */
    hwloc_const_nodeset_t cpu_nodes;  /**< CPU-bearing nodes of cpus */
    hwloc_const_cpuset_t allowed_cpus;/**< its cpuset cgroup's CPUs, else the topology's allowed */
    int bound;                        /**< 1: cpus is narrower than allowed_cpus */
    unsigned threads, runnable;       /**< all threads; threads in state R */
    unsigned n_thread_views;          /**< per-thread views (first 4096 threads) */
    const ng_thread_view *thread_views;
    const char *mem_policy;           /**< "default","bind",...,"unknown" */
    char mem_policy_text[128];        /**< the kernel's text (raw) */
    hwloc_const_nodeset_t mem_policy_nodes;
    int have_memory;                  /**< numa_maps was read */
    unsigned n_memory;                /**< nodes with resident pages, by node */
    const ng_node_bytes *memory;
    unsigned long long mem_bytes, cpu_local_bytes, gpu_local_bytes;
    unsigned n_gpus;                  /**< the process's GPUs (topology indices) */
    const int *gpus;
    char gpu_source[48];              /**< variable they came from, "none", "environ unreadable" */
    char gpu_rule[256];               /**< how the list was split per rank (printable) */
    hwloc_const_nodeset_t gpu_nodes;  /**< the GPUs' CPU nodes and memory nodes */
    int local_rank, local_size;       /**< from the launcher's variables; -1 unknown */
    char rank_source[40];             /**< the variable the local rank came from, "" none */
    char thread_caps[256];            /**< thread-count variables set in environ,
                                           "OMP_NUM_THREADS=2 ..." (raw values) */
    int numaguard_started;            /**< NUMAGUARD_POLICY in environ */
    char job_id[24];                  /**< Slurm job (cgroup job_ID, else SLURM_JOB_ID) */
    ng_notes warnings, errors;
} ng_proc_view;

/** Threads that last ran on one CPU, across the inspected processes. */
typedef struct ng_cpu_view {
    unsigned cpu;
    unsigned runnable;    /**< threads in state R that last ran here */
    unsigned threads;     /**< all threads that last ran here */
    unsigned bound;       /**< bound processes (ng_proc_view.bound) whose mask has it */
} ng_cpu_view;

/** Bound processes whose masks overlap (a connected group of two or more).
 *  A process with the same mask as its listed parent (a forked worker
 *  inherits it) is not counted: only masks someone chose. */
typedef struct ng_overlap_view {
    unsigned n_pids;
    const int *pids;
    hwloc_const_cpuset_t cpus;   /**< union of their masks */
    unsigned cores;
} ng_overlap_view;

/** Opaque: processes read at one moment, with per-process and shared verdicts. */
typedef struct ng_inspection ng_inspection;

/** Processes of user @p uid under @p fsroot (/proc/PID owned by it), sorted;
 *  kernel threads (empty cmdline) and @p skip_pid left out. */
int ng_inspect_list_user(const char *fsroot, unsigned uid, int skip_pid,
                         int *pids, unsigned max, unsigned *n);

/** Processes of Slurm job @p job_id (digits): a /proc/PID/cgroup path with a
 *  "job_ID" component (cgroup v1 cpuset/freezer .../slurm/uid_U/job_ID/...,
 *  v2 .../job_ID/...), or SLURM_JOB_ID=ID in its environ. slurmstepd itself,
 *  kernel threads and @p skip_pid left out. -1 (err) for a malformed id. */
int ng_inspect_list_job(const char *fsroot, const char *job_id, int skip_pid,
                        int *pids, unsigned max, unsigned *n, char *err, size_t errlen);

/** Read and judge @p n processes (at most NG_INSPECT_MAX_PIDS). A process
 *  that does not exist gives a view with gone = 1. -1 only on bad arguments
 *  or no memory. */
int ng_inspect(const ng_topology *topo, const char *fsroot, const int *pids, unsigned n,
               ng_inspection **out, char *err, size_t errlen);
void ng_inspection_free(ng_inspection *ins);
unsigned ng_inspection_proc_count(const ng_inspection *ins);
const ng_proc_view *ng_inspection_proc(const ng_inspection *ins, unsigned i);
/** CPUs that are in some process's mask or ran one of its threads, by CPU. */
unsigned ng_inspection_cpu_count(const ng_inspection *ins);
const ng_cpu_view *ng_inspection_cpu(const ng_inspection *ins, unsigned i);
unsigned ng_inspection_overlap_count(const ng_inspection *ins);
const ng_overlap_view *ng_inspection_overlap(const ng_inspection *ins, unsigned i);
/** Warnings about the processes together (oversubscription across them,
 *  bound processes piled on fewer cores than they are). */
const ng_notes *ng_inspection_warnings(const ng_inspection *ins);

/** Copy @p s into @p out for a terminal: bytes outside 0x20..0x7e and the
 *  backslash become \xNN (no escape sequences, no newlines); truncated to
 *  fit. Returns the length written. */
size_t ng_text_escape(const char *s, char *out, size_t len);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_H */
