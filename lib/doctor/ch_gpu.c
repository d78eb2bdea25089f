/* The GPUs as their drivers and vendor tools see them, against the
 * topology the plugin places by: the NVIDIA driver's /proc list (what the
 * plugin maps /dev/nvidiaN through), nvidia-smi (-q: index, bus id and
 * minor; topo -m: CPU and NUMA affinity), NVML (whether it really loads
 * here, and its GPUs, in a child process that can be killed) and
 * rocm-smi. Every tool runs once per run (tools.c). */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>


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

/* `nvidia-smi ...` (tool @p id, run once); its output when it answered,
 * else NULL (*absent when it is not installed; a WARN otherwise). A second
 * query runs only after the first answered: a hung tool is not run twice. */
static const char *run_smi(ngi_doctor_ctx *x, ng_doctor_check *c, ngi_tool_id id, int *absent)
{
    char what[200];
    const ngi_cmd *res = ngi_doctor_tool(x, id);
    *absent = res && res->not_found;
    if (ngi_doctor_tool_ok(x, id))
        return res->out;
    if (*absent)
        return NULL;
    ngi_doctor_tool_describe(x, id, what, sizeof what);
    ngi_doctor_problem(x->r, c, ngi_doctor_tool_status(x, id, NG_CHECK_WARN),
                       "the driver's own view of the GPUs could not be compared (a driver "
                       "that hangs nvidia-smi hangs CUDA jobs too)",
                       "check the driver: dmesg, nvidia-smi by hand, nvidia-bug-report.sh",
                       "nvidia-smi %s: %s", id == NGI_TOOL_SMI_Q ? "-q" : "topo -m", what);
    return NULL;
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
    ngi_smi_gpu q[NG_MAX_GPUS];
    ngi_smi_topo_row rows[NG_MAX_GPUS];
    int absent = 0, nrows = -2;
    if (!vendor_gpus(x->topo, NG_VENDOR_NVIDIA)) {
        ngi_doctor_end(x->r, c, "no NVIDIA GPU in the topology: nothing to compare");
        return;
    }
    const char *qtext = run_smi(x, c, NGI_TOOL_SMI_Q, &absent);
    unsigned nq = qtext ? compare_query(x, c, qtext, q, NG_MAX_GPUS) : 0;
    const char *mtext = qtext ? run_smi(x, c, NGI_TOOL_SMI_TOPO, &absent) : NULL;
    if (mtext)
        nrows = ngi_smi_topo_parse(mtext, rows, NG_MAX_GPUS);
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
    if (absent)
        ngi_doctor_end(x->r, c, "nvidia-smi is not installed: nothing to compare");
    else
        ngi_doctor_end(x->r, c, "nvidia-smi agrees: %u GPUs, their bus ids and minors, CPU and "
                       "NUMA affinity match the kernel and hwloc", nq);
}

/* ---- NVML, in a child process (tools.c) ---- */

/* Compare one NVML line with the driver's /proc list and hwloc's. */
static void nvml_line(ngi_doctor_ctx *x, ng_doctor_check *c, const char *line,
                      const ngi_nv_proc_gpu *p, unsigned np)
{
    char bus[NG_BUSID_LEN], raw[64];
    int minor;
    if (sscanf(line, "gpu %63s %d", raw, &minor) != 2 || ngi_busid_normalize(raw, bus) < 0)
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

/* NVML's own words in the probe's output: the loader's message for
 * libnvidia-ml.so.1 into @p why; 1 when it loaded and initialised. */
static int nvml_loaded(const char *out, char *why, size_t len)
{
    const char *l = out ? strstr(out, "lib libnvidia-ml.so.1 ") : NULL;
    snprintf(why, len, "%s", "no answer");
    if (!l)
        return 0;
    l += strlen("lib libnvidia-ml.so.1 ");
    snprintf(why, len, "%.*s", (int)strcspn(l, "\n"), l);
    if (strcmp(why, "ok") != 0) {
        if (!strstr(why, "libnvidia-ml.so.1")) {
            char loader[256];
            snprintf(loader, sizeof loader, "%s", why);
            snprintf(why, len, "libnvidia-ml.so.1: %s", loader);
        }
        return 0;
    }
    if (!strstr(out, "init ok")) {
        snprintf(why, len, "libnvidia-ml.so.1 loads but nvmlInit fails (a driver/library "
                 "version mismatch?)");
        return 0;
    }
    return 1;
}

int ngi_doctor_nvml(ngi_doctor_ctx *x, char *why, size_t len)
{
    const ngi_cmd *res = ngi_doctor_tool(x, NGI_TOOL_NVML);
    if (!res || res->timed_out || res->too_big) {
        ngi_doctor_tool_describe(x, NGI_TOOL_NVML, why, len);
        return -1;
    }
    return nvml_loaded(res->out, why, len);
}

void ngi_check_nvml(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "gpu", "gpu.nvml");
    ngi_nv_proc_gpu p[NG_MAX_GPUS];
    unsigned np = 0, lines = 0;
    char why[320];
    int st = ngi_doctor_nvml(x, why, sizeof why);
    const ngi_cmd *res = &x->tools[NGI_TOOL_NVML].res;
    ngi_doctor_fact(c, "libnvidia-ml.so.1", "%s", st == 1 ? "loaded, nvmlInit ok" : why);
    if (st < 0)
        ngi_doctor_problem(x->r, c, ngi_doctor_tool_status(x, NGI_TOOL_NVML, NG_CHECK_WARN),
                           "the GPUs NVML (and AutoDetect=nvml) sees were not compared",
                           "check the driver: dmesg, nvidia-smi by hand",
                           "NVML (libnvidia-ml.so.1) query %s", why);
    if (st == 0 && x->live && vendor_gpus(x->topo, NG_VENDOR_NVIDIA))
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "nvidia-smi, DCGM and Slurm's AutoDetect=nvml cannot see the GPUs",
                           "install the NVIDIA driver's NVML library (libnvidia-ml.so.1, part "
                           "of the driver) matching the loaded kernel module",
                           "this node has NVIDIA GPUs but NVML is not loaded: %s", why);
    if (st != 1) {
        ngi_doctor_end(x->r, c, "NVML is not loaded here (%s): %s", why,
                       vendor_gpus(x->topo, NG_VENDOR_NVIDIA) ? "nothing to compare"
                                                              : "no NVIDIA GPU needs it");
        return;
    }
    if (!x->live) {
        ngi_doctor_end(x->r, c, "NVML is loaded (libnvidia-ml.so.1, nvmlInit ok); it describes "
                       "the real machine, not fsroot %s: not compared", x->fsroot);
        return;
    }
    if (ngi_nv_proc_scan(x->fsroot, p, NG_MAX_GPUS, &np) < 0)
        np = 0;
    for (const char *l = strstr(res->out, "gpu "); l && *l; lines++) {
        nvml_line(x, c, l, p, np);
        l = strstr(l, "\ngpu ") ? strstr(l, "\ngpu ") + 1 : NULL;
    }
    ngi_doctor_end(x->r, c, "NVML is loaded (libnvidia-ml.so.1, nvmlInit ok) and agrees: %u "
                   "GPUs, bus ids and minors as the driver lists them", lines);
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
    ngi_rocm_gpu g[NG_MAX_GPUS];
    char what[200];
    if (!vendor_gpus(x->topo, NG_VENDOR_AMD)) {
        ngi_doctor_end(x->r, c, "no AMD GPU in the topology: nothing to compare");
        return;
    }
    const ngi_cmd *res = ngi_doctor_tool(x, NGI_TOOL_ROCM);
    int ok = ngi_doctor_tool_ok(x, NGI_TOOL_ROCM);
    int n = ok ? ngi_rocm_parse(res->out, g, NG_MAX_GPUS) : 0;
    hwloc_bitmap_t kc = hwloc_bitmap_alloc();
    for (int i = 0; kc && i < n; i++)
        compare_rocm(x, c, &g[i], kc);
    hwloc_bitmap_free(kc);
    int not_found = res && res->not_found;
    if (!ok && !not_found) {
        ngi_doctor_tool_describe(x, NGI_TOOL_ROCM, what, sizeof what);
        ngi_doctor_problem(x->r, c, ngi_doctor_tool_status(x, NGI_TOOL_ROCM, NG_CHECK_WARN),
                           "the driver's own view of the GPUs could not be compared",
                           "check the amdgpu driver (dmesg, rocm-smi by hand)",
                           "rocm-smi --showbus --showtoponuma: %s", what);
    }
    if (not_found)
        ngi_doctor_end(x->r, c, "rocm-smi is not installed: nothing to compare");
    else
        ngi_doctor_end(x->r, c, "rocm-smi agrees: %d GPUs, their NUMA nodes match the kernel "
                       "and hwloc", n);
}
