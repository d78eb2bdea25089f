/* gres.conf's Cores= (or CPUs=) against each GPU's locality. Slurm reads
 * both keys as its own core indices (gres.conf(5); slurmd converts them
 * with xcpuinfo_abs_to_mac): core 0 is the first core of the first
 * socket, core 1 the second, ... which is hwloc's logical core index
 * (lstopo -l's "Core L#"), NOT the OS's CPU numbers (local_cpulist,
 * nvidia-smi topo -m's CPU Affinity). The two differ wherever the OS
 * numbers hyperthreads after all cores or interleaves the sockets. This
 * check compares Slurm's indices: for each GPU of a record with Cores=,
 * the cores whose PUs hwloc puts near the GPU, translated to Slurm's
 * numbering. Cores= naming cores that do not exist (Slurm refuses the
 * list: the GPU gets no affinity) is a WARN, cores of another socket
 * only a FAIL (Slurm steers the GPU's jobs to the far socket), a partial
 * overlap a WARN. The fix names the right Slurm indices. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/gpu.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* One GPU of one record, with the cores in Slurm's numbering. */
typedef struct gpu_cores {
    const ngi_gres_rec *rec;
    const char *file;
    char bus[NG_BUSID_LEN];
    hwloc_bitmap_t conf;   /* Cores= as Slurm reads it */
    hwloc_bitmap_t near;   /* cores local to the GPU (Slurm's indices) */
    hwloc_bitmap_t pkg;    /* cores of the packages those are in */
    hwloc_bitmap_t all;    /* every core */
    hwloc_bitmap_t os;     /* the GPU's OS CPU numbers */
} gpu_cores;

/* The cores (hwloc logical index = Slurm's index) whose PUs meet @p cpus,
 * and the cores of their packages. */
static void slurm_cores(hwloc_topology_t hw, hwloc_const_cpuset_t cpus, gpu_cores *g)
{
    hwloc_obj_t core = NULL;
    while ((core = hwloc_get_next_obj_by_type(hw, HWLOC_OBJ_CORE, core))) {
        hwloc_bitmap_set(g->all, core->logical_index);
        if (!hwloc_bitmap_intersects(core->cpuset, cpus))
            continue;
        hwloc_bitmap_set(g->near, core->logical_index);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, core);
        hwloc_obj_t k = NULL;
        while (pkg && (k = hwloc_get_next_obj_inside_cpuset_by_type(hw, pkg->cpuset,
                                                                     HWLOC_OBJ_CORE, k)))
            hwloc_bitmap_set(g->pkg, k->logical_index);
    }
}

/* The fix: the right Cores= for this GPU (Slurm's indices). */
static void fix_text(const gpu_cores *g, char *buf, size_t len)
{
    char want[256];
    ng_list_format(g->near, want, sizeof want);
    snprintf(buf, len, "write %s=%s in gres.conf line %u (Slurm's core indices: lstopo -l's "
             "Core L#, not the OS CPU numbers of local_cpulist or nvidia-smi topo -m)",
             g->rec->cores_key, want, g->rec->line);
}

/* One problem with a GPU's Cores=: "gres.conf line L: Cores=LIST for
 * FILE (BUS)" and then @p what (what is wrong with it); the fix names the
 * right Slurm indices. */
static void cores_problem(ngi_doctor_ctx *x, ng_doctor_check *c, const gpu_cores *g,
                          ng_check_status st, const char *consequence, const char *what)
{
    char fix[512];
    fix_text(g, fix, sizeof fix);
    ngi_doctor_problem(x->r, c, st, consequence, fix, "gres.conf line %u: %s=%s for %s (%s)%s",
                       g->rec->line, g->rec->cores_key, g->rec->cores, g->file, g->bus, what);
}

/* Cores= with cores the node does not have: Slurm refuses the list. */
static void out_of_range(ngi_doctor_ctx *x, ng_doctor_check *c, const gpu_cores *g)
{
    char what[768], all[64], beyond[128], tail[256] = "";
    int os = hwloc_bitmap_isequal(g->conf, g->os);
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    ng_list_format(g->all, all, sizeof all);
    if (b && !os) {
        /* The numbers past the last core: OS CPU numbers (hyperthreads)
         * when the machine has such CPUs, else numbers of nothing. */
        hwloc_bitmap_andnot(b, g->conf, g->all);
        ng_list_format(b, beyond, sizeof beyond);
        int cpus = hwloc_bitmap_isincluded(b, ng_topology_allowed_cpus(x->topo));
        snprintf(tail, sizeof tail, ": %s %s beyond Slurm's %d cores%s", beyond,
                 hwloc_bitmap_weight(b) == 1 ? "is" : "are", hwloc_bitmap_weight(g->all),
                 cpus ? ", OS CPU numbers (hyperthreads), not core indices" : "");
    }
    hwloc_bitmap_free(b);
    snprintf(what, sizeof what, " names cores the node does not have (Slurm's cores are %s)%s",
             all, os ? ": these are the GPU's OS CPU numbers" : tail);
    cores_problem(x, c, g, NG_CHECK_WARN,
                  "slurmd refuses the list ('Invalid GRES data for gpu'): Slurm gives this "
                  "GPU no core affinity, so its jobs get cores anywhere, often far from it",
                  what);
}

static void judge(ngi_doctor_ctx *x, ng_doctor_check *c, const gpu_cores *g)
{
    char near[256], what[512];
    ng_list_format(g->near, near, sizeof near);
    ngi_doctor_fact(c, g->bus, "%s line %u: %s=%s; near cores (Slurm's indices) %s",
                    g->file, g->rec->line, g->rec->cores_key, g->rec->cores, near);
    if (!hwloc_bitmap_isincluded(g->conf, g->all)) {
        out_of_range(x, c, g);
        return;
    }
    if (hwloc_bitmap_iszero(g->near) || hwloc_bitmap_isequal(g->conf, g->all) ||
        (hwloc_bitmap_isincluded(g->near, g->conf) && hwloc_bitmap_isincluded(g->conf, g->pkg)))
        return;                        /* no locality, no restriction, or right */
    if (!hwloc_bitmap_intersects(g->conf, g->pkg)) {
        snprintf(what, sizeof what, ", but the GPU is near Slurm's cores %s (another socket)",
                 near);
        cores_problem(x, c, g, NG_CHECK_FAIL,
                      "Slurm steers this GPU's jobs to those cores, on another socket: every "
                      "task is placed far from its GPU, and numaguard cannot leave the step's "
                      "cores",
                      what);
        return;
    }
    snprintf(what, sizeof what, " is not the GPU's near cores %s (Slurm's indices)", near);
    cores_problem(x, c, g, NG_CHECK_WARN,
                  "Slurm prefers those cores for this GPU's jobs: some tasks get cores that "
                  "are not near it",
                  what);
}

/* Cores=/CPUs= as Slurm reads them (bit_unfmt): a list of numbers and
 * ranges, optionally in brackets ("[0-55]", "0-13,[56-69]"), or a hex
 * mask ("0xff..."). 0, or -1 with @p why. */
static int cores_parse(const char *text, hwloc_bitmap_t out, char *why, size_t len)
{
    char list[1024];
    size_t n = 0;
    if (!strncasecmp(text, "0x", 2)) {
        if (hwloc_bitmap_taskset_sscanf(out, text) < 0)
            return snprintf(why, len, "not a hex mask"), -1;
        return 0;
    }
    for (const char *p = text; *p && n + 1 < sizeof list; p++)
        if (*p != '[' && *p != ']')
            list[n++] = *p;
    list[n] = '\0';
    if (!n || ng_list_parse(list, out, NG_MAX_PU_OS_INDEX, why, len) < 0) {
        if (!n)
            snprintf(why, len, "empty");
        return -1;
    }
    return 0;
}

/* Each GPU of record @p r: its bus id, its topology GPU, judged. */
static unsigned check_record(ngi_doctor_ctx *x, ng_doctor_check *c, const ngi_gres_rec *r,
                             gpu_cores *g)
{
    ng_gres_order files = {0};
    unsigned n = 0;
    char why[256] = "";
    hwloc_bitmap_zero(g->conf);
    if (cores_parse(r->cores, g->conf, why, sizeof why) < 0 ||
        ngi_gres_rec_files(r, x->fsroot, &files, why, sizeof why) < 0) {
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "whether Slurm steers this record's GPUs to their cores was not "
                           "compared",
                           "write Cores= as Slurm's core indices: a list of numbers and ranges "
                           "(0-13,56-69; brackets allowed)",
                           "gres.conf line %u: %s=%s not read (%s)", r->line, r->cores_key,
                           r->cores, why);
        ng_gres_order_free(&files);
        return 0;
    }
    g->rec = r;
    for (unsigned i = 0; i < files.count; i++) {
        int t = ngi_device_file_busid(x->fsroot, files.device_files[i], g->bus, NULL, 0) < 0
                    ? -1 : ng_topology_gpu_by_busid(x->topo, g->bus);
        if (t < 0)
            continue;                  /* slurm.gres_devices says why */
        const ng_gpu_info *gi = ng_topology_gpu(x->topo, (unsigned)t);
        hwloc_bitmap_zero(g->near);
        hwloc_bitmap_zero(g->pkg);
        hwloc_bitmap_zero(g->all);
        hwloc_bitmap_copy(g->os, gi->cpus);
        slurm_cores(ng_topology_hwloc(x->topo), gi->cpus, g);
        g->file = files.device_files[i];
        judge(x, c, g);
        n++;
    }
    ng_gres_order_free(&files);
    return n;
}

void ngi_check_gres_cores(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.gres_cores");
    gpu_cores g = {0};
    unsigned n = 0, with = 0;
    if (!x->gres || !x->topo) {
        ngi_doctor_end(x->r, c, "%s: Cores= not compared",
                       !x->gres ? "no gres.conf records for this node" : "no topology");
        return;
    }
    g.conf = hwloc_bitmap_alloc(), g.near = hwloc_bitmap_alloc();
    g.pkg = hwloc_bitmap_alloc(), g.all = hwloc_bitmap_alloc(), g.os = hwloc_bitmap_alloc();
    for (unsigned i = 0; g.conf && g.near && g.pkg && g.all && g.os &&
                         i < ngi_gres_conf_count(x->gres); i++) {
        const ngi_gres_rec *r = ngi_gres_conf_rec(x->gres, i);
        if (r->cores && r->file) {
            with++;
            n += check_record(x, c, r, &g);
        }
    }
    hwloc_bitmap_free(g.conf), hwloc_bitmap_free(g.near), hwloc_bitmap_free(g.pkg);
    hwloc_bitmap_free(g.all), hwloc_bitmap_free(g.os);
    if (!with)
        ngi_doctor_end(x->r, c, "no Cores= in gres.conf for this node: Slurm gives its GPUs "
                       "no core affinity (numaguard places by hwloc's)");
    else if (!n)
        ngi_doctor_end(x->r, c, "gres.conf Cores= of %u records not compared: none of their "
                       "GPUs is one the topology has (slurm.gres_devices)", with);
    else
        ngi_doctor_end(x->r, c, "gres.conf Cores= of %u GPUs match their locality (compared "
                       "in Slurm's core indices, hwloc's logical core order, not the OS CPU "
                       "numbers)", n);
}
