/* The GPU module (lib/gpu/): device files, driver views, NVML, gres.conf
 * and the environment's GPU lists. Private to the library (ngi_* names). */
#ifndef NGI_GPU_H
#define NGI_GPU_H

#include "base.h"

/** Longest GPU UUID token accepted from the environment. */
#define NGI_UUID_MAX 96

/* ---- order.c: the gres order's storage ---- */

/** Append a device file to @p o (at most NG_MAX_GPUS); -1 with err. */
int ngi_gres_order_add(ng_gres_order *o, const char *path, char *err, size_t errlen);
/** Expand one File= value into @p o in the order written (Slurm's
 *  hostlist_shift() does not sort), at most @p limit names (Slurm truncates
 *  a File= list to Count=; NG_MAX_GPUS + 1 lets overflow be reported). */
int ngi_gres_order_expand(const char *spec, ng_gres_order *o, unsigned limit,
                          char *err, size_t errlen);
/** Natural order of names as Slurm's strnatcmp sorts autodetected GPUs
 *  ("nvidia2" < "nvidia10"); <0, 0, >0. */
int ngi_natcmp(const char *a, const char *b);

/**
 * Expand gres.conf File= values (each may hold a bracket range such as
 * "/dev/nvidia[0-3]" or a comma list) into Slurm's index order.
 * See docs/gpu-order.md for the rule and its source.
 */
int ngi_gres_order_from_files(ng_gres_order *out, const char *const *file_specs,
                              unsigned n_specs, char *err, size_t errlen);

/* ---- gres_conf.c ---- */

/** gres.conf read and parsed once for one node (opaque). */
typedef struct ngi_gres_conf ngi_gres_conf;

/** One Name=gpu record that applies to the node. */
typedef struct ngi_gres_rec {
    char *file;              /**< File= or MultipleFiles= value, or NULL */
    int multiple;            /**< MultipleFiles=: the whole list is one GPU */
    unsigned long count;     /**< Count=, 0 if not given */
    char *cores;             /**< Cores= (else CPUs=) as written, or NULL */
    const char *cores_key;   /**< "Cores" or "CPUs" (static) */
    unsigned line;           /**< its (first) line in the file */
    char type[64];           /**< Type= as written ("" = none; doctor compares it) */
} ngi_gres_rec;

/** Read gres.conf @p path (the library's regular-file reader: a final
 *  symlink followed, never blocking) and parse the records that apply to
 *  @p node (NULL: every record): NodeName= hostlists, '\\' continuations,
 *  '#' comments. 0 with *out (free with ngi_gres_conf_free), or -1 with the
 *  parser's line in @p err. */
int ngi_gres_conf_load(const char *path, const char *node, ngi_gres_conf **out, char *err,
                       size_t errlen);
void ngi_gres_conf_free(ngi_gres_conf *c);
/** The node's gpu records, in file order. */
unsigned ngi_gres_conf_count(const ngi_gres_conf *c);
const ngi_gres_rec *ngi_gres_conf_rec(const ngi_gres_conf *c, unsigned i);
/** Append the device files of record @p r (File= expanded, Count= applied,
 *  under @p fsroot) to @p out. 0 or -1 with err. */
int ngi_gres_rec_files(const ngi_gres_rec *r, const char *fsroot, ng_gres_order *out,
                       char *err, size_t errlen);
/** Slurm's index order of a loaded conf (ng_gres_order_from_conf's rule). */
int ngi_gres_conf_order(const ngi_gres_conf *c, const char *fsroot, ng_gres_order *out,
                        char *err, size_t errlen);

/** What gres.conf says for one node, as the plugin reads it. */
typedef struct ngi_gres_summary {
    unsigned records;          /**< Name=gpu records that apply to the node */
    unsigned other_records;    /**< Name=gpu records of other nodes */
    unsigned fileless;         /**< records of the node without File= */
    char autodetect[16];       /**< AutoDetect= in force for the node ("" = none) */
    ng_gres_order files;       /**< File= names (under fsroot), in the order written */
} ngi_gres_summary;

/** The summary of a loaded conf, before any AutoDetect merge. 0, or -1
 *  with err (a File= that does not expand). Free out->files with
 *  ng_gres_order_free. */
int ngi_gres_conf_summary(const ngi_gres_conf *c, const char *fsroot, ngi_gres_summary *out,
                          char *err, size_t errlen);

/* ---- driver.c: what the kernel and the drivers say ---- */

/** One GPU of /proc/driver/nvidia/gpus/<bus>/information. */
typedef struct ngi_nv_proc_gpu {
    char bus[NG_BUSID_LEN];    /**< "Bus Location" (the directory's name agrees) */
    int minor;                 /**< "Device Minor", -1 if not shown */
    char uuid[NGI_UUID_MAX];   /**< "GPU UUID", "" if not shown */
} ngi_nv_proc_gpu;

/** Every GPU the NVIDIA driver lists under @p fsroot, sorted by bus id
 *  (the list the plugin maps /dev/nvidiaN through). 0, or -1 when the
 *  directory cannot be read (no driver). */
int ngi_nv_proc_scan(const char *fsroot, ngi_nv_proc_gpu *out, unsigned max, unsigned *n);

/** The GPUs AutoDetect=<kind> would find under fsroot, in that plugin's
 *  order, as device file paths under fsroot. */
int ngi_gpu_autodetect(const char *fsroot, const char *kind, ng_gres_order *out,
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
int ngi_device_file_busid(const char *fsroot, const char *device_file,
                          char busid[NG_BUSID_LEN], char *err, size_t errlen);

/** A GPU UUID from a variable -> its bus id. NVIDIA: "GPU-<uuid>" (or a
 *  unique prefix, as CUDA accepts), "MIG-GPU-<uuid>/gi/ci", "MIG-<uuid>"
 *  through /proc/driver/nvidia, then NVML. AMD: "GPU-<16 hex digits>"
 *  through /sys/class/drm/cardN/device/unique_id. 0, or -1 naming @p var. */
int ngi_nv_uuid_bus(const char *fsroot, const char *var, const char *tok,
                    char bus[NG_BUSID_LEN], char *err, size_t errlen);
int ngi_amd_uuid_bus(const char *fsroot, const char *var, const char *tok,
                     char bus[NG_BUSID_LEN], char *err, size_t errlen);

/* ---- nvml.c: NVML through dlopen ---- */

/** UUID -> bus id through NVML; 0, or -1 (*no_nvml = 1 when NVML is not
 *  installed). MIG UUIDs give their parent GPU's bus id. */
int ngi_nvml_uuid_bus(const char *uuid, char bus[NG_BUSID_LEN], int *no_nvml);
/** /dev/nvidia<minor> -> bus id through NVML; 0 or -1. */
int ngi_nvml_minor_bus(unsigned minor, char bus[NG_BUSID_LEN]);
/** Every GPU NVML enumerates, in its index order: bus id and minor number
 *  (-1 when NVML gives none). 0, or -1 when NVML is not installed or does
 *  not initialise. NVML may block on a hung driver: `numaguard doctor`
 *  calls this in a child process it can kill. */
int ngi_nvml_devices(char (*bus)[NG_BUSID_LEN], int *minor, unsigned max, unsigned *n);
/** Whether the dynamic loader finds @p soname on this host (dlopen, then
 *  closed): 0, or -1 with the loader's message in @p why. Slurm's gpu
 *  plugin selection dlopen()s "libnvidia-ml.so" (22.05; later releases try
 *  "libnvidia-ml.so.1" too), the library itself loads the ".so.1" soname. */
int ngi_nvml_load_check(const char *soname, char *why, size_t whylen);

/* ---- visible.c: the environment's GPU lists ---- */

/**
 * The GPUs named by a task's variables alone, as topology GPU indices
 * (sorted, unique): SLURM_STEP_GPUS (never SLURM_JOB_GPUS) through @p order when
 * given; else CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES / ZE_AFFINITY_MASK
 * (UUIDs via NVML when available or /proc/driver/nvidia; plain indices as
 * positions among the topology's GPUs of that vendor in bus order).
 * @return 0, or -1 when a listed GPU cannot be identified (err says which).
 */
int ngi_gpus_from_env(const ng_topology *topo, const ng_gres_order *order,
                      const ng_gpu_env *env, const char *fsroot,
                      int *out_idx, unsigned max, unsigned *n_out,
                      char *err, size_t errlen);

/* ---- launcher.c ---- */

/** The launcher a process of this kernel name (comm) belongs to ("Open
 *  MPI" for mpirun, prted...; "torchrun"; "Slurm" for srun), NULL for any
 *  other process. */
const char *ngi_launcher_process(const char *comm);

/* ---- task_gpus.c: the devices cgroup ---- */

/**
 * The GPUs this process's devices cgroup gives it (Slurm's task/cgroup with
 * ConstrainDevices=yes): the device files of @p order it may access, as
 * topology indices (sorted). Checked with access(2), never opened.
 * @return 1 with @p out_idx filled when the cgroup denies some of the
 *         order's devices; 0 when it constrains nothing or cannot tell;
 *         -1 on error (err says why).
 */
int ngi_task_gpus_from_cgroup(const ng_topology *topo, const ng_gres_order *order,
                              const char *fsroot, int *out_idx, unsigned max,
                              unsigned *n_out, char *err, size_t errlen);

#endif
