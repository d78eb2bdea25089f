/* The GPUs as their drivers and vendor tools see them, against the
 * topology the plugin places by: the NVIDIA driver's /proc list (what the
 * plugin maps /dev/nvidiaN through), nvidia-smi (-q: index, bus id and
 * minor; topo -m: CPU and NUMA affinity), NVML (as the library loads it,
 * in a child process that can be killed) and rocm-smi. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define TOOL_OUT_MAX (4u << 20)   /* nvidia-smi -q of 16 GPUs is ~0.5 MiB */

static unsigned vendor_gpus(const ng_topology *t, ng_gpu_vendor v)
{
    unsigned n = 0;
    for (unsigned i = 0; t && i < ng_topology_gpu_count(t); i++)
        n += ng_topology_gpu(t, i)->vendor == v;
    return n;
}

/* The topology GPU with this bus id, or NULL. */
static const ng_gpu_info *topo_gpu(const ngi_doctor_ctx *x, const char *bus)
{
    int i = x->topo ? ng_topology_gpu_by_busid(x->topo, bus) : -1;
    return i < 0 ? NULL : ng_topology_gpu(x->topo, (unsigned)i);
}

/* What the kernel says about a GPU's locality: sysfs numa_node (-2 if
 * absent) and local_cpulist (empty if absent). */
static int kernel_view(const ngi_doctor_ctx *x, const char *bus, hwloc_bitmap_t cpus)
{
    char rel[96], path[PATH_MAX], buf[32];
    hwloc_bitmap_zero(cpus);
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/local_cpulist", bus);
    if (ngi_read_list_file(x->fsroot, rel, cpus) < 0)
        hwloc_bitmap_zero(cpus);
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/numa_node", bus);
    if (ngi_doctor_path(x, rel, path, sizeof path) < 0 ||
        ngi_read_small_file(path, buf, sizeof buf) < 0)
        return -2;
    return atoi(buf);
}

/* ---- the NVIDIA driver's list ---- */

static int proc_has(const ngi_nv_proc_gpu *g, unsigned n, const char *bus)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(g[i].bus, bus))
            return 1;
    return 0;
}

/* /dev/nvidia<minor> under fsroot: a character device 195:<minor>? */
static void check_minor_file(ngi_doctor_ctx *x, ng_doctor_check *c, const ngi_nv_proc_gpu *g)
{
    char rel[32], path[PATH_MAX];
    struct stat st;
    snprintf(rel, sizeof rel, "/dev/nvidia%d", g->minor);
    if (g->minor < 0 || ngi_doctor_path(x, rel, path, sizeof path) < 0)
        return;
    if (stat(path, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 195 &&
        minor(st.st_rdev) == (unsigned)g->minor)
        return;
    ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                       "CUDA and Slurm cannot open the GPU through it, and the plugin cannot "
                       "tell which GPU a task that has it owns",
                       "create it (nvidia-modprobe -c N, or the driver's udev rules)",
                       "GPU %s has Device Minor %d but %s is not the character device 195:%d",
                       g->bus, g->minor, path, g->minor);
}

void ngi_check_nvidia_driver(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "gpu", "gpu.nvidia_driver");
    ngi_nv_proc_gpu g[NG_MAX_GPUS];
    unsigned n = 0, nv = vendor_gpus(x->topo, NG_VENDOR_NVIDIA);
    int have = ngi_nv_proc_scan(x->fsroot, g, NG_MAX_GPUS, &n) == 0;
    if (nv && !have)
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "the plugin identifies a task's GPU (/dev/nvidiaN) through that "
                           "list: tasks get no placement near their GPUs",
                           "load the NVIDIA driver (modprobe nvidia) and check dmesg",
                           "hwloc shows %u NVIDIA GPUs but /proc/driver/nvidia/gpus cannot be "
                           "read (driver not loaded?)", nv);
    for (unsigned i = 0; i < n; i++) {
        ngi_doctor_fact(c, g[i].bus, "Device Minor %d, %s", g[i].minor,
                        g[i].uuid[0] ? g[i].uuid : "no UUID");
        if (!topo_gpu(x, g[i].bus))
            ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                               "a task given this GPU is placed without its locality",
                               "restart slurmd (a topology cache from before the GPU) or "
                               "check hwloc's PCI discovery (lstopo)",
                               "the driver lists GPU %s, hwloc's topology does not", g[i].bus);
        check_minor_file(x, c, &g[i]);
    }
    for (unsigned i = 0; have && x->topo && i < ng_topology_gpu_count(x->topo); i++) {
        const ng_gpu_info *t = ng_topology_gpu(x->topo, i);
        if (t->vendor == NG_VENDOR_NVIDIA && !proc_has(g, n, t->pci_bus_id))
            ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                               "its device file maps to no GPU: tasks given it get no "
                               "placement near it",
                               "check the driver (dmesg; 'GPU Excluded' in the information "
                               "files; nvidia-smi)",
                               "hwloc shows NVIDIA GPU %s, the driver does not list it",
                               t->pci_bus_id);
    }
    if (!nv && !n)
        ngi_doctor_end(x->r, c, "no NVIDIA GPU (none in the topology, none listed by a driver)");
    else
        ngi_doctor_end(x->r, c, "%u NVIDIA GPUs: the driver's list matches hwloc's, each with "
                       "its /dev/nvidiaN", n);
}

/* ---- nvidia-smi ---- */

/* Run `nvidia-smi ARG...`; 0 when it answered. (A second query runs only
 * after the first answered, so a hung tool is never run twice.) */
static int run_smi(ngi_doctor_ctx *x, ng_doctor_check *c, char *const argv[], ngi_cmd *res)
{
    char what[160];
    memset(res, 0, sizeof *res);
    ngi_run_bounded(argv, x->timeout_ms, TOOL_OUT_MAX, res);
    if (res->not_found || (!res->timed_out && !res->too_big && res->exit_status == 0))
        return res->not_found ? -1 : 0;
    ngi_cmd_describe(res, what, sizeof what);
    ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                       "the driver's own view of the GPUs could not be compared (a driver "
                       "that hangs nvidia-smi hangs CUDA jobs too)",
                       "check the driver: dmesg, nvidia-smi by hand, nvidia-bug-report.sh",
                       "nvidia-smi %s: %s", argv[1], what);
    return -1;
}

/* One topo -m row against the kernel's (else hwloc's) view of that GPU. */
static void compare_row(ngi_doctor_ctx *x, ng_doctor_check *c, const ngi_smi_topo_row *row,
                        const char *bus, hwloc_bitmap_t kc, hwloc_bitmap_t sc)
{
    char kl[256], want[32];
    const ng_gpu_info *g = topo_gpu(x, bus);
    int node = kernel_view(x, bus, kc);
    if (hwloc_bitmap_iszero(kc) && g)
        hwloc_bitmap_copy(kc, g->cpus);
    if (node == -2 && g && hwloc_bitmap_weight(g->numa_nodes) == 1)
        node = hwloc_bitmap_first(g->numa_nodes);
    ng_list_format(kc, kl, sizeof kl);
    snprintf(want, sizeof want, "%d", node);
    ngi_doctor_fact(c, bus, "nvidia-smi GPU%u: CPU Affinity '%s', NUMA Affinity '%s'; "
                    "kernel/hwloc: CPUs %s, NUMA %d", row->index, row->cpus, row->numa, kl, node);
    int cpus_known = row->cpus[0] && strcmp(row->cpus, "N/A") != 0 &&
                     ng_list_parse(row->cpus, sc, NG_MAX_PU_OS_INDEX, NULL, 0) == 0;
    int numa_known = row->numa[0] && strcmp(row->numa, "N/A") != 0 && node >= 0;
    if ((cpus_known && !hwloc_bitmap_iszero(kc) && !hwloc_bitmap_isequal(sc, kc)) ||
        (numa_known && strcmp(row->numa, want) != 0))
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "numaguard places by the kernel's and hwloc's view while CUDA, NCCL "
                           "and nvidia-smi go by the driver's: they disagree on which CPUs and "
                           "memory are near this GPU",
                           "find which view is wrong (lstopo, the BIOS NUMA settings, a driver "
                           "older than a firmware change); restart slurmd after a fix",
                           "nvidia-smi topo -m: GPU%u (%s) CPU Affinity %s, NUMA Affinity %s; "
                           "the kernel and hwloc: CPUs %s, NUMA node %d", row->index, bus,
                           row->cpus[0] ? row->cpus : "-", row->numa[0] ? row->numa : "-", kl,
                           node);
}

/* nvidia-smi -q against the driver's /proc list and the topology. */
static unsigned compare_query(ngi_doctor_ctx *x, ng_doctor_check *c, const char *text,
                              ngi_smi_gpu *q, unsigned max)
{
    ngi_nv_proc_gpu p[NG_MAX_GPUS];
    unsigned np = 0;
    int n = ngi_smi_query_parse(text, q, max);
    if (ngi_nv_proc_scan(x->fsroot, p, NG_MAX_GPUS, &np) < 0)
        np = 0;
    for (int i = 0; i < n; i++) {
        if (!topo_gpu(x, q[i].bus))
            ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                               "a task given this GPU is placed without its locality",
                               "restart slurmd (the topology cache) or check lstopo",
                               "nvidia-smi -q lists GPU%d %s, hwloc's topology does not", i,
                               q[i].bus);
        for (unsigned k = 0; k < np; k++)
            if (!strcmp(p[k].bus, q[i].bus) && p[k].minor != q[i].minor)
                ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                                   "/dev/nvidiaN names another GPU for NVML than for the "
                                   "plugin (which reads /proc): tasks are placed near the "
                                   "wrong GPU",
                                   "reload the driver; report it to the vendor",
                                   "GPU %s: nvidia-smi Minor Number %d, /proc/driver/nvidia "
                                   "Device Minor %d", q[i].bus, q[i].minor, p[k].minor);
    }
    return n > 0 ? (unsigned)n : 0;
}

void ngi_check_nvidia_smi(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "gpu", "gpu.nvidia_smi");
    static char *const q_argv[] = {"nvidia-smi", "-q", NULL};
    static char *const m_argv[] = {"nvidia-smi", "topo", "-m", NULL};
    ngi_smi_gpu q[NG_MAX_GPUS];
    ngi_smi_topo_row rows[NG_MAX_GPUS];
    ngi_cmd res;
    if (!vendor_gpus(x->topo, NG_VENDOR_NVIDIA)) {
        ngi_doctor_end(x->r, c, "no NVIDIA GPU in the topology: nothing to compare");
        return;
    }
    int ok = run_smi(x, c, q_argv, &res) == 0;
    int not_found = res.not_found;
    unsigned nq = ok ? compare_query(x, c, res.out, q, NG_MAX_GPUS) : 0;
    ngi_cmd_free(&res);
    int nrows = ok ? (run_smi(x, c, m_argv, &res) == 0 ? ngi_smi_topo_parse(res.out, rows,
                                                                           NG_MAX_GPUS) : -2)
                   : -2;
    ngi_cmd_free(&res);
    hwloc_bitmap_t kc = hwloc_bitmap_alloc(), sc = hwloc_bitmap_alloc();
    for (int i = 0; kc && sc && i < nrows; i++)
        if (rows[i].index < nq)
            compare_row(x, c, &rows[i], q[rows[i].index].bus, kc, sc);
    hwloc_bitmap_free(kc);
    hwloc_bitmap_free(sc);
    if (nrows == -1)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN, "the driver's affinity was not compared",
                           "run nvidia-smi topo -m by hand",
                           "nvidia-smi topo -m printed no CPU Affinity column");
    if (not_found)
        ngi_doctor_end(x->r, c, "nvidia-smi is not installed: nothing to compare");
    else
        ngi_doctor_end(x->r, c, "nvidia-smi agrees: %u GPUs, their bus ids and minors, CPU and "
                       "NUMA affinity match the kernel and hwloc", nq);
}

/* ---- NVML, in a child process ---- */

/* The child: NVML's devices as "bus minor" lines; exit 3 without NVML. */
static int nvml_child(int fd, void *arg)
{
    static char bus[NG_MAX_GPUS][NG_BUSID_LEN];
    static int minor[NG_MAX_GPUS];
    unsigned n = 0;
    (void)arg;
    if (ngi_nvml_devices(bus, minor, NG_MAX_GPUS, &n) < 0)
        return 3;
    for (unsigned i = 0; i < n; i++)
        dprintf(fd, "%s %d\n", bus[i], minor[i]);
    return 0;
}

/* Compare one NVML line with the driver's /proc list and hwloc's. */
static void nvml_line(ngi_doctor_ctx *x, ng_doctor_check *c, const char *line,
                      const ngi_nv_proc_gpu *p, unsigned np)
{
    char bus[NG_BUSID_LEN], raw[64];
    int minor;
    if (sscanf(line, "%63s %d", raw, &minor) != 2 || ngi_busid_normalize(raw, bus) < 0)
        return;
    ngi_doctor_fact(c, bus, "NVML minor %d", minor);
    if (!topo_gpu(x, bus))
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "a task given this GPU is placed without its locality",
                           "restart slurmd (the topology cache) or check lstopo",
                           "NVML lists GPU %s, hwloc's topology does not", bus);
    for (unsigned k = 0; k < np; k++)
        if (!strcmp(p[k].bus, bus) && p[k].minor != minor)
            ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                               "AutoDetect=nvml and the plugin map /dev/nvidiaN to different "
                               "GPUs: tasks are placed near the wrong GPU",
                               "reload the driver; report it to the vendor",
                               "GPU %s: NVML minor %d, /proc/driver/nvidia Device Minor %d", bus,
                               minor, p[k].minor);
}

void ngi_check_nvml(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "gpu", "gpu.nvml");
    ngi_nv_proc_gpu p[NG_MAX_GPUS];
    unsigned np = 0, lines = 0;
    ngi_cmd res;
    char what[160];
    if (!x->live) {
        ngi_doctor_end(x->r, c, "NVML describes the real machine, not fsroot %s: not compared",
                       x->fsroot);
        return;
    }
    ngi_run_child(nvml_child, NULL, x->timeout_ms, 64u << 10, &res);
    if (ngi_nv_proc_scan(x->fsroot, p, NG_MAX_GPUS, &np) < 0)
        np = 0;
    for (const char *l = res.exit_status == 0 ? res.out : NULL; l && *l; lines++) {
        nvml_line(x, c, l, p, np);
        l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
    }
    int absent = res.exit_status == 3;
    if (!absent && res.exit_status != 0) {
        ngi_cmd_describe(&res, what, sizeof what);
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "the GPUs NVML (and AutoDetect=nvml) sees were not compared",
                           "check the driver: dmesg, nvidia-smi by hand",
                           "NVML (libnvidia-ml.so.1) query %s", what);
    }
    ngi_cmd_free(&res);
    if (absent)
        ngi_doctor_end(x->r, c, "NVML (libnvidia-ml.so.1) is not installed: nothing to compare");
    else
        ngi_doctor_end(x->r, c, "NVML agrees: %u GPUs, bus ids and minors as the driver lists "
                       "them", lines);
}

/* ---- rocm-smi ---- */

static void compare_rocm(ngi_doctor_ctx *x, ng_doctor_check *c, const ngi_rocm_gpu *g,
                         hwloc_bitmap_t kc)
{
    const ng_gpu_info *t = topo_gpu(x, g->bus);
    int node = kernel_view(x, g->bus, kc);
    if (node == -2 && t && hwloc_bitmap_weight(t->numa_nodes) == 1)
        node = hwloc_bitmap_first(t->numa_nodes);
    ngi_doctor_fact(c, g->bus, "rocm-smi GPU[%u] Numa Node %d; kernel/hwloc NUMA %d", g->index,
                    g->numa, node);
    if (!t)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "a task given this GPU is placed without its locality",
                           "restart slurmd (the topology cache) or check lstopo",
                           "rocm-smi lists GPU[%u] %s, hwloc's topology does not", g->index,
                           g->bus);
    else if (g->numa >= 0 && node >= 0 && g->numa != node)
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "numaguard places by the kernel's and hwloc's view, ROCm and RCCL by "
                           "the driver's: they disagree on the memory near this GPU",
                           "find which view is wrong (lstopo, the BIOS NPS setting)",
                           "rocm-smi: GPU[%u] (%s) Numa Node %d; the kernel and hwloc: %d",
                           g->index, g->bus, g->numa, node);
}

void ngi_check_rocm_smi(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "gpu", "gpu.rocm_smi");
    static char *const argv[] = {"rocm-smi", "--showbus", "--showtoponuma", NULL};
    ngi_rocm_gpu g[NG_MAX_GPUS];
    ngi_cmd res;
    char what[160];
    if (!vendor_gpus(x->topo, NG_VENDOR_AMD)) {
        ngi_doctor_end(x->r, c, "no AMD GPU in the topology: nothing to compare");
        return;
    }
    ngi_run_bounded(argv, x->timeout_ms, TOOL_OUT_MAX, &res);
    int n = res.exit_status == 0 ? ngi_rocm_parse(res.out, g, NG_MAX_GPUS) : 0;
    hwloc_bitmap_t kc = hwloc_bitmap_alloc();
    for (int i = 0; kc && i < n; i++)
        compare_rocm(x, c, &g[i], kc);
    hwloc_bitmap_free(kc);
    if (!res.not_found && res.exit_status != 0) {
        ngi_cmd_describe(&res, what, sizeof what);
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "the driver's own view of the GPUs could not be compared",
                           "check the amdgpu driver (dmesg, rocm-smi by hand)",
                           "rocm-smi --showbus --showtoponuma: %s", what);
    }
    int not_found = res.not_found;
    ngi_cmd_free(&res);
    if (not_found)
        ngi_doctor_end(x->r, c, "rocm-smi is not installed: nothing to compare");
    else
        ngi_doctor_end(x->r, c, "rocm-smi agrees: %d GPUs, their NUMA nodes match the kernel "
                       "and hwloc", n);
}
