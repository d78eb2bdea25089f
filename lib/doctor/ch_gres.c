/* Slurm's GPU gres on this node, read by the plugin's own rules
 * (lib/gpu: NodeName= matching, File= expansion, AutoDetect emulation,
 * device file -> bus id): the records, their device files, the index
 * order against PCI bus order, AutoDetect against File=, slurm.conf's
 * Gres= count, and `slurmd -G` (Slurm's own order) against the plugin's. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/gpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define GRES_OUT_MAX (1u << 20)

/* gres.conf as the plugin reads it for this node. */
typedef struct gres_view {
    int exists;                      /* the file is there */
    int parsed;                      /* ngi_gres_conf_summary succeeded */
    char why[512];
    ngi_gres_summary sum;
    int have_order;                  /* ng_gres_order_from_conf succeeded */
    char order_why[512];
    ng_gres_order order;             /* the plugin's index order */
} gres_view;

static void view_load(const ngi_doctor_ctx *x, gres_view *v)
{
    struct stat st;
    memset(v, 0, sizeof *v);
    v->exists = stat(x->gres_conf, &st) == 0;
    if (!v->exists)
        return;
    /* A FIFO or directory is refused by the parser itself (gres_conf.c). */
    v->parsed = ngi_gres_conf_summary(x->gres_conf, x->node, x->fsroot, &v->sum, v->why,
                                      sizeof v->why) == 0;
    v->have_order = ng_gres_order_from_conf(&v->order, x->gres_conf, x->node, x->fsroot,
                                            v->order_why, sizeof v->order_why) == 0;
}

static void view_free(gres_view *v)
{
    ng_gres_order_free(&v->sum.files);
    ng_gres_order_free(&v->order);
}

/* slurm.conf's gpu count for the node: the sum of its gpu[:type]:N entries. */
static int slurm_gpus(const ngi_doctor_ctx *x, unsigned *n, char *text, size_t len)
{
    *n = 0;
    if (!x->slurm_text || ngi_conf_node_value(x->slurm_text, x->node, "Gres", text, len) != 1)
        return -1;
    for (const char *p = text; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        size_t l = strcspn(p, ",(");
        if (strncmp(p, "gpu", 3) != 0 || (p[3] != ':' && p[3] != ',' && p[3] && p[3] != '('))
            continue;
        const char *colon = NULL;
        for (const char *q = p; q < p + l; q++)
            if (*q == ':')
                colon = q;
        *n += colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 1;
    }
    return 0;
}

static void check_conf(ngi_doctor_ctx *x, const gres_view *v)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.gres_conf");
    char text[256];
    unsigned want = 0;
    int have_gres = slurm_gpus(x, &want, text, sizeof text) == 0 && want > 0;
    static const char cons[] =
        "the plugin cannot use it: it warns in every step and reads GPU indices in PCI bus "
        "order, which need not be the order Slurm numbers the GPUs in";
    if (!v->exists && have_gres)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN, cons,
                           "write the node's Name=gpu records into gres.conf (or point the "
                           "plugin's gres_conf= at the file slurmd reads)",
                           "no gres.conf at %s, but slurm.conf gives node %s Gres=%s",
                           x->gres_conf, x->node, text);
    else if (v->exists && (!v->parsed || !v->have_order))
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL, cons,
                           "correct the record the line names; records for this node need "
                           "its Slurm name in NodeName= (a hostlist such as gpu[01-16])",
                           "%s", v->parsed ? v->order_why : v->why);
    if (!v->exists) {
        ngi_doctor_end(x->r, c, "no gres.conf at %s and no GPU gres in slurm.conf: GPU "
                       "indices are read in PCI bus order", x->gres_conf);
        return;
    }
    ngi_doctor_fact(c, "records", "%u for node %s, %u of other nodes", v->sum.records, x->node,
                    v->sum.other_records);
    ngi_doctor_end(x->r, c, "%s: Name=gpu records for node %s (the plugin's matching): %u, "
                   "device files: %u, AutoDetect=%s", x->gres_conf, x->node, v->sum.records,
                   v->order.count, v->sum.autodetect[0] ? v->sum.autodetect : "off");
}

/* One File= device: there, a character device, a GPU the topology has. */
static void check_device(ngi_doctor_ctx *x, ng_doctor_check *c, const char *file, unsigned i)
{
    char bus[NG_BUSID_LEN], why[512];
    struct stat st;
    static const char cons[] =
        "Slurm counts a GPU that is not there, and the plugin cannot tell which GPU a task "
        "given this gres index owns: no placement near it";
    static const char fix[] =
        "correct File= in gres.conf (ls -l /dev/nvidia*; /proc/driver/nvidia/gpus/*/"
        "information lists each GPU's minor) or load the driver";
    if (stat(file, &st) != 0) {
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL, cons, fix,
                           "gres.conf names %s (gres index %u), which does not exist: %s", file,
                           i, strerror(errno));
        return;
    }
    if (!S_ISCHR(st.st_mode)) {
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL, cons, fix,
                           "gres.conf names %s (gres index %u), which is not a character "
                           "device", file, i);
        return;
    }
    if (ngi_device_file_busid(x->fsroot, file, bus, why, sizeof why) < 0) {
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL, cons, fix, "gres index %u: %s", i, why);
        return;
    }
    ngi_doctor_fact(c, file, "%s", bus);
    if (x->topo && ng_topology_gpu_by_busid(x->topo, bus) < 0)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "tasks given it are placed without its locality",
                           "restart slurmd (the topology cache) or check lstopo",
                           "gres index %u is %s (%s), a GPU hwloc's topology does not have", i,
                           file, bus);
}

static void check_devices(ngi_doctor_ctx *x, const gres_view *v)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.gres_devices");
    const ng_gres_order *o = v->have_order ? &v->order : &v->sum.files;
    for (unsigned i = 0; i < o->count; i++)
        check_device(x, c, o->device_files[i], i);
    if (o->count)
        ngi_doctor_end(x->r, c, "gres device files: %u, each the character device of a GPU the "
                       "topology has", o->count);
    else
        ngi_doctor_end(x->r, c, "no gres device file to check");
}

/* The bus ids of the order, "" where unknown; 1 if they rise. */
static int bus_order(const ngi_doctor_ctx *x, const ng_gres_order *o,
                     char bus[][NG_BUSID_LEN], char *text, size_t len)
{
    int sorted = 1;
    size_t used = 0;
    text[0] = '\0';
    for (unsigned i = 0; i < o->count && i < NG_MAX_GPUS; i++) {
        if (ngi_device_file_busid(x->fsroot, o->device_files[i], bus[i], NULL, 0) < 0)
            bus[i][0] = '\0';
        for (unsigned k = 0; k < i && bus[i][0]; k++)
            if (bus[k][0] && strcmp(bus[k], bus[i]) > 0)
                sorted = 0;
        if (used < len)
            used += (size_t)snprintf(text + used, len - used, "%s%u=%s", i ? " " : "", i,
                                     bus[i][0] ? bus[i] : "?");
    }
    return sorted;
}

static void check_order(ngi_doctor_ctx *x, const gres_view *v)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.gres_order");
    static char bus[NG_MAX_GPUS][NG_BUSID_LEN];
    char text[640];
    if (!v->have_order || !v->order.count) {
        ngi_doctor_end(x->r, c, "no gres order for this node: GPU indices are read in PCI bus "
                       "order");
        return;
    }
    int sorted = bus_order(x, &v->order, bus, text, sizeof text);
    ngi_doctor_fact(c, "index=bus", "%s", text);
    if (!sorted)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "Slurm numbers the GPUs in this order and numaguard follows it (it "
                           "reads gres.conf as slurmd does), but tools that count GPUs in bus "
                           "order (nvidia-smi, CUDA_DEVICE_ORDER=PCI_BUS_ID, AutoDetect=nvml "
                           "nodes) name another GPU for the same index, and where the plugin "
                           "cannot read this file it falls back to bus order",
                           "list File= in PCI bus order (each GPU's minor is in /proc/driver/"
                           "nvidia/gpus/<bus>/information) or use AutoDetect=nvml",
                           "gres index order (File= order%s) is not PCI bus order: %s",
                           v->sum.autodetect[0] ? ", AutoDetect merged" : "", text);
    ngi_doctor_end(x->r, c, "gres index order is PCI bus order: %s", text);
}

static int in_order(const ng_gres_order *o, const char *file)
{
    for (unsigned i = 0; i < o->count; i++)
        if (!strcmp(o->device_files[i], file))
            return 1;
    return 0;
}

/* AutoDetect's GPUs (the plugin's emulation) against the File= names. */
static void compare_autodetect(ngi_doctor_ctx *x, ng_doctor_check *c, const gres_view *v,
                               const ng_gres_order *sys, const char *ad)
{
    for (unsigned i = 0; i < v->sum.files.count; i++)
        if (!in_order(sys, v->sum.files.device_files[i]))
            ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                               "slurmd keeps it as a configured-only GPU, sorted after the "
                               "detected ones: indices shift",
                               "name only the GPUs the driver has, or drop File= and let "
                               "AutoDetect list them",
                               "File=%s is not among the GPUs AutoDetect=%s finds",
                               v->sum.files.device_files[i], ad);
    for (unsigned i = 0; v->sum.files.count && !v->sum.fileless && i < sys->count; i++)
        if (!in_order(&v->sum.files, sys->device_files[i]))
            ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                               "Slurm ignores it: the GPU is never given to a job",
                               "add it to File= or drop File= and let AutoDetect list them",
                               "AutoDetect=%s finds %s, which no File= names", ad,
                               sys->device_files[i]);
}

static void check_autodetect(ngi_doctor_ctx *x, const gres_view *v)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.autodetect");
    const char *ad = v->sum.autodetect;
    ng_gres_order sys;
    char why[256];
    if (!v->parsed || !ad[0] || !strcasecmp(ad, "off") || !strcasecmp(ad, "none")) {
        ngi_doctor_end(x->r, c, "no AutoDetect: Slurm keeps the File= order as written");
        return;
    }
    if (ngi_gpu_autodetect(x->fsroot, ad, &sys, why, sizeof why) < 0) {
        ngi_doctor_end(x->r, c, "AutoDetect=%s: not emulated (%s)", ad, why);
        return;
    }
    compare_autodetect(x, c, v, &sys, ad);
    ngi_doctor_fact(c, "detected", "%u GPUs", sys.count);
    ngi_doctor_end(x->r, c, "AutoDetect=%s finds %u GPUs%s", ad, sys.count,
                   v->sum.files.count ? ", the ones File= names" : "");
    ng_gres_order_free(&sys);
}

static void check_count(ngi_doctor_ctx *x, const gres_view *v)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.gres_count");
    char text[256];
    unsigned want, have = v->have_order ? v->order.count : v->sum.files.count;
    if (slurm_gpus(x, &want, text, sizeof text) < 0 || !v->exists || v->sum.fileless) {
        ngi_doctor_end(x->r, c, "not compared (no Gres= for node %s in slurm.conf, no gres.conf "
                       "or records without File=)", x->node);
        return;
    }
    if (want > have)
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "slurmd reports fewer GPUs than configured: slurmctld drains the "
                           "node ('gres/gpu count reported lower than configured')",
                           "make slurm.conf's Gres=gpu:N and gres.conf's File= list agree",
                           "slurm.conf gives node %s Gres=%s (%u GPUs), gres.conf lists %u "
                           "devices for it", x->node, text, want, have);
    else if (want < have)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "Slurm uses only the first of the listed devices; the others are "
                           "never given to a job",
                           "make slurm.conf's Gres=gpu:N and gres.conf's File= list agree",
                           "slurm.conf gives node %s Gres=%s (%u GPUs), gres.conf lists %u "
                           "devices", x->node, text, want, have);
    ngi_doctor_end(x->r, c, "slurm.conf's Gres=%s and gres.conf agree: %u GPUs", text, have);
}

void ngi_check_gres(ngi_doctor_ctx *x)
{
    gres_view *v = calloc(1, sizeof *v);
    if (!v)
        return;
    view_load(x, v);
    check_conf(x, v);
    check_devices(x, v);
    check_order(x, v);
    check_autodetect(x, v);
    check_count(x, v);
    view_free(v);
    free(v);
}

/* ---- slurmd -G ---- */

/* A device's identity for comparing two orders: its bus id, else its path
 * without the fsroot prefix (slurmd prints the host's paths). */
static void device_key(const ngi_doctor_ctx *x, const char *file, char *key, size_t len)
{
    char bus[NG_BUSID_LEN];
    size_t r = x->fsroot && !x->live ? strlen(x->fsroot) : 0;
    if (ngi_device_file_busid(x->fsroot, file, bus, NULL, 0) == 0)
        snprintf(key, len, "%s", bus);
    else
        snprintf(key, len, "%s", r && !strncmp(file, x->fsroot, r) ? file + r : file);
}

static void compare_slurmd(ngi_doctor_ctx *x, ng_doctor_check *c, const ng_gres_order *s,
                           const ng_gres_order *p)
{
    char a[PATH_MAX], b[PATH_MAX];
    unsigned n = s->count > p->count ? s->count : p->count;
    for (unsigned i = 0; i < n; i++) {
        device_key(x, i < s->count ? s->device_files[i] : "(none)", a, sizeof a);
        device_key(x, i < p->count ? p->device_files[i] : "(none)", b, sizeof b);
        ngi_doctor_fact(c, "index", "%u: slurmd %s, plugin %s", i, a, b);
        if (strcmp(a, b) != 0)
            ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                               "SLURM_STEP_GPUS index i names another GPU for Slurm than for "
                               "numaguard: tasks are placed near the wrong GPU",
                               "point the plugin's gres_conf= at the gres.conf slurmd reads; "
                               "if it already does, report it (docs/gpu-order.md)",
                               "slurmd -G gives gres index %u to %s, the plugin to %s", i, a, b);
    }
}

/* `slurmd -G -f SLURM_CONF -N NODE`: Slurm's own order into @p s; 0 when
 * it answered and parsed, else a WARN on @p c. */
static int slurmd_order(ngi_doctor_ctx *x, ng_doctor_check *c, ng_gres_order *s)
{
    char why[512];
    char *argv[] = {"slurmd", "-G", "-f", x->slurm_conf, "-N", x->node, NULL};
    ngi_cmd res;
    ngi_run_bounded(argv, x->timeout_ms, GRES_OUT_MAX, &res);
    int rc = res.exit_status == 0 ? ngi_slurmd_gres_parse(res.out, s, why, sizeof why) : -1;
    if (res.exit_status != 0)
        ngi_cmd_describe(&res, why, sizeof why);
    ngi_cmd_free(&res);
    if (rc < 0)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "Slurm's own index order was not compared with the plugin's",
                           "run slurmd -G by hand", "slurmd -G -N %s: %s", x->node, why);
    return rc;
}

void ngi_check_slurmd_gres(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.slurmd_gres");
    char prog[PATH_MAX], why[512];
    ng_gres_order s = {0}, p = {0};
    if (ngi_find_program("slurmd", prog, sizeof prog) < 0 || !x->slurm_text) {
        ngi_doctor_end(x->r, c, "%s: Slurm's own gres order not compared",
                       x->slurm_text ? "slurmd is not installed" : "no slurm.conf");
        return;
    }
    if (slurmd_order(x, c, &s) < 0) {
        ngi_doctor_end(x->r, c, "-");
        return;
    }
    if (ng_gres_order_from_conf(&p, x->gres_conf, x->node, x->fsroot, why, sizeof why) < 0) {
        ngi_doctor_end(x->r, c, "slurmd -G lists %u GPUs; the plugin has no gres order of its "
                       "own to compare (slurm.gres_conf)", s.count);
    } else {
        compare_slurmd(x, c, &s, &p);
        ngi_doctor_end(x->r, c, "slurmd -G and the plugin give the same %u GPUs the same gres "
                       "indices", s.count);
    }
    ng_gres_order_free(&s);
    ng_gres_order_free(&p);
}
