/* Slurm's GPU gres on this node, read once by the plugin's own rules
 * (lib/gpu: NodeName= matching, File= expansion, AutoDetect emulation,
 * device file -> bus id): the records, their device files, the index
 * order against PCI bus order, AutoDetect against File= (and whether NVML
 * really loads for AutoDetect=nvml), slurm.conf's Gres= count, and
 * `slurmd -G` (Slurm's own order, its fatal:/error: lines quoted) against
 * the plugin's. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/gpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* gres.conf as the plugin reads it for this node: parsed once (doctor.c
 * read_gres), kept in the context. */

/* slurm.conf's gpu count for the node: the sum of its gpu[:type]:N entries. */
int ngi_doctor_slurm_gpus(const ngi_doctor_ctx *x, unsigned *n, char *text, size_t len)
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

/* gres.conf is a symbolic link to nothing (the node booted before the
 * file it points to was written, a shared directory not mounted): a FAIL
 * saying where it points, the root of the gres findings after it. 1 when
 * it is. */
static int dangling(ngi_doctor_ctx *x, ng_doctor_check *c, const char *cons)
{
    struct stat st;
    char to[PATH_MAX], fix[2 * PATH_MAX + 200];
    ssize_t n;
    if (!x->gres_exists || x->gres || lstat(x->gres_conf, &st) != 0 || !S_ISLNK(st.st_mode) ||
        stat(x->gres_conf, &st) == 0)
        return 0;
    int e = errno;
    if ((n = readlink(x->gres_conf, to, sizeof to - 1)) < 0)
        return 0;
    to[n] = '\0';
    snprintf(fix, sizeof fix, "write %s (where the link points: mount or copy the shared "
             "configuration before slurmd starts) or point %s at the node's gres.conf; then "
             "restart slurmd, which read no gres.conf", to, x->gres_conf);
    ngi_doctor_problem(x->r, c, NG_CHECK_FAIL, cons, fix,
                       "gres.conf %s is a symbolic link to %s, which does not exist (%s)",
                       x->gres_conf, to, strerror(e));
    ngi_doctor_cause(x, "slurm.gres_conf", "gres.conf is a dangling link to %s", to);
    return 1;
}

static void check_conf(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.gres_conf");
    char text[256], fix[900];
    unsigned want = 0;
    int have_gres = ngi_doctor_slurm_gpus(x, &want, text, sizeof text) == 0 && want > 0;
    static const char cons[] =
        "the plugin cannot use it: it warns in every step and reads GPU indices in PCI bus "
        "order, which need not be the order Slurm numbers the GPUs in";
    snprintf(fix, sizeof fix, "add node %s to the NodeName= of its Name=gpu records (a "
             "hostlist such as gpu[01-16]), or give --node NAME if %s is not this node's "
             "Slurm name", x->node, x->node);
    if (!x->gres_exists && have_gres) {
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN, cons,
                           "write the node's Name=gpu records into gres.conf (or point the "
                           "plugin's gres_conf= at the file slurmd reads)",
                           "no gres.conf at %s, but slurm.conf gives node %s Gres=%s",
                           x->gres_conf, x->node, text);
        ngi_doctor_cause(x, "slurm.gres_conf", "no gres.conf at %s", x->gres_conf);
    } else if (dangling(x, c, cons))
        ;
    else if (x->gres_exists && !x->gres)
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL, cons, "correct the record the line names",
                           "%s", x->gres_why);
    else if (x->gres_exists && !x->gorder_ok)
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL, cons,
                           x->gres_other_nodes ? fix : "correct the record the line names",
                           "%s", x->gorder_why);
    if (!x->gres_exists) {
        ngi_doctor_end(x->r, c, "no gres.conf at %s and no GPU gres in slurm.conf: GPU "
                       "indices are read in PCI bus order", x->gres_conf);
        return;
    }
    ngi_doctor_fact(c, "records", "%u for node %s, %u of other nodes", x->gsum.records,
                    x->node, x->gsum.other_records);
    ngi_doctor_end(x->r, c, "%s: Name=gpu records for node %s (the plugin's matching): %u, "
                   "device files: %u, AutoDetect=%s", x->gres_conf, x->node, x->gsum.records,
                   x->gorder.count, x->gsum.autodetect[0] ? x->gsum.autodetect : "off");
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

static void check_devices(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.gres_devices");
    const ng_gres_order *o = x->gorder_ok ? &x->gorder : &x->gsum.files;
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

static void check_order(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.gres_order");
    static char bus[NG_MAX_GPUS][NG_BUSID_LEN];
    char text[640];
    if (!x->gorder_ok || !x->gorder.count) {
        ngi_doctor_end(x->r, c, "no gres order for this node: GPU indices are read in PCI bus "
                       "order");
        return;
    }
    int sorted = bus_order(x, &x->gorder, bus, text, sizeof text);
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
                           x->gsum.autodetect[0] ? ", AutoDetect merged" : "", text);
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
static void compare_autodetect(ngi_doctor_ctx *x, ng_doctor_check *c,
                               const ng_gres_order *sys, const char *ad)
{
    const ngi_gres_summary *v = &x->gsum;
    for (unsigned i = 0; i < v->files.count; i++)
        if (!in_order(sys, v->files.device_files[i]))
            ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                               "slurmd keeps it as a configured-only GPU, sorted after the "
                               "detected ones: indices shift",
                               "name only the GPUs the driver has, or drop File= and let "
                               "AutoDetect list them",
                               "File=%s is not among the GPUs AutoDetect=%s finds",
                               v->files.device_files[i], ad);
    for (unsigned i = 0; v->files.count && !v->fileless && i < sys->count; i++)
        if (!in_order(&v->files, sys->device_files[i]))
            ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                               "Slurm ignores it: the GPU is never given to a job",
                               "add it to File= or drop File= and let AutoDetect list them",
                               "AutoDetect=%s finds %s, which no File= names", ad,
                               sys->device_files[i]);
}

/* Slurm's own word on NVML, from `slurmd -G` (run once): its line saying
 * NVML was not found, not built in, or its gpu/nvml plugin is missing,
 * quoted into @p quote; 1 when found. */
static int slurmd_nvml_line(ngi_doctor_ctx *x, char *quote, size_t len)
{
    char prog[PATH_MAX];
    if (!x->slurm_text || ngi_find_program("slurmd", prog, sizeof prog) < 0)
        return 0;
    const ngi_cmd *res = ngi_doctor_tool(x, NGI_TOOL_SLURMD_G);
    const char *l = res && res->out ? strstr(res->out, "We were configured") : NULL;
    if (!l || !strstr(l, "nvml"))
        l = res && res->out ? strstr(res->out, "error: cannot find gpu plugin for gpu/nvml")
                            : NULL;
    if (!l)
        return 0;
    snprintf(quote, len, "slurmd -G: '%.*s'", (int)strcspn(l, "\n"), l);
    return 1;
}

/* AutoDetect=nvml where NVML does not load: slurmd detects no GPU. A FAIL
 * when slurm.conf expects more GPUs than the File= lines give. 1 when
 * judged here (NVML absent). */
static int nvml_absent(ngi_doctor_ctx *x, ng_doctor_check *c)
{
    char quote[512], text[256];
    unsigned want = 0, files = x->gsum.files.count;
    if (!slurmd_nvml_line(x, quote, sizeof quote)) {
        char why[320];
        if (ngi_doctor_nvml(x, why, sizeof why) != 0)
            return 0;
        snprintf(quote, sizeof quote, "%s", why);
    }
    int expects = ngi_doctor_slurm_gpus(x, &want, text, sizeof text) == 0 && want > files;
    ngi_doctor_problem(x->r, c, expects ? NG_CHECK_FAIL : NG_CHECK_WARN,
                       expects ? "slurmd reports fewer GPUs than configured: slurmctld drains "
                                 "the node ('gres/gpu count reported lower than configured')"
                               : "slurmd detects nothing and uses only the File= lines (no "
                                 "Cores= or Links= from NVML)",
                       "install the NVIDIA driver's NVML (libnvidia-ml.so.1; Slurm 22.05 "
                       "dlopen()s libnvidia-ml.so, the driver's development link) and "
                       "Slurm's gpu_nvml.so plugin on the node and restart slurmd, or list "
                       "the GPUs with File= and drop AutoDetect",
                       "AutoDetect=nvml, but slurmd cannot use NVML on this node (%s): "
                       "slurmd detects no GPU%s", quote,
                       expects ? "" : "; the File= lines name them");
    if (expects)
        ngi_doctor_fact(c, "gpus", "slurm.conf Gres=%s: %u, File=: %u", text, want, files);
    ngi_doctor_end(x->r, c, "-");
    return 1;
}

static void check_autodetect(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.autodetect");
    const char *ad = x->gsum.autodetect;
    ng_gres_order sys;
    char why[256];
    if (!x->gres || !ad[0] || !strcasecmp(ad, "off") || !strcasecmp(ad, "none")) {
        ngi_doctor_end(x->r, c, "no AutoDetect: Slurm keeps the File= order as written");
        return;
    }
    if (!strcasecmp(ad, "nvml") && nvml_absent(x, c))
        return;
    if (ngi_gpu_autodetect(x->fsroot, ad, &sys, why, sizeof why) < 0) {
        ngi_doctor_end(x->r, c, "AutoDetect=%s: not emulated (%s)", ad, why);
        return;
    }
    compare_autodetect(x, c, &sys, ad);
    ngi_doctor_fact(c, "detected", "%u GPUs", sys.count);
    ngi_doctor_end(x->r, c, "AutoDetect=%s finds %u GPUs%s", ad, sys.count,
                   x->gsum.files.count ? ", the ones File= names" : "");
    ng_gres_order_free(&sys);
}

/* Why the counts are not compared, or NULL when they are. */
static const char *count_skip(const ngi_doctor_ctx *x, int have_gres)
{
    if (!x->slurm_text)
        return "no slurm.conf";
    if (!have_gres)
        return "slurm.conf gives this node no GPU gres";
    if (!x->gres_exists)
        return "no gres.conf: slurmd takes the count from slurm.conf";
    if (!x->gres || !x->gorder_ok)
        return "gres.conf does not parse for this node (slurm.gres_conf)";
    if (x->gsum.fileless && !x->gsum.autodetect[0])
        return "records without File= (Count= only): slurmd reports their Count=";
    return NULL;
}

/* The devices of the node's gres.conf records of type @p type ("" =
 * every record), and the types written, into @p seen ("Type=a (line 3)"). */
static unsigned typed_devices(const ngi_doctor_ctx *x, const char *type, char *seen, size_t len,
                              unsigned *first_line)
{
    unsigned n = 0;
    size_t used = 0;
    seen[0] = '\0';
    *first_line = 0;
    for (unsigned i = 0; i < ngi_gres_conf_count(x->gres); i++) {
        const ngi_gres_rec *r = ngi_gres_conf_rec(x->gres, i);
        ng_gres_order f = {0};
        unsigned k = r->file && ngi_gres_rec_files(r, x->fsroot, &f, NULL, 0) == 0
                         ? f.count : (unsigned)r->count;
        ng_gres_order_free(&f);
        if (!*first_line)
            *first_line = r->line;
        if (!strcasecmp(r->type, type))
            n += k;
        if (used < len && !strstr(seen, r->type[0] ? r->type : "(no Type=)"))
            used += (size_t)snprintf(seen + used, len - used, "%s%s", used ? ", " : "",
                                     r->type[0] ? r->type : "(no Type=)");
    }
    return n;
}

/* slurm.conf's typed entries (gpu:TYPE:N) against gres.conf's Type=:
 * slurmd registers each device under its record's Type and slurmctld
 * counts each type apart, so a type slurm.conf names that no gres.conf
 * record has counts 0 devices (an NVML rename of the model is enough). */
static void compare_types(ngi_doctor_ctx *x, ng_doctor_check *c, const char *gres)
{
    char type[64], seen[256], fix[512];
    for (const char *p = gres; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        size_t l = strcspn(p, ",("), t;
        const char *a = memchr(p, ':', l), *b = a ? memchr(a + 1, ':', l - (size_t)(a + 1 - p)) : NULL;
        if (strncmp(p, "gpu:", 4) != 0 || !b || (t = (size_t)(b - a - 1)) >= sizeof type)
            continue;
        snprintf(type, sizeof type, "%.*s", (int)t, a + 1);
        unsigned want = (unsigned)strtoul(b + 1, NULL, 10), line = 0;
        unsigned have = typed_devices(x, type, seen, sizeof seen, &line);
        ngi_doctor_fact(c, type, "slurm.conf %u, gres.conf %u (its types: %s)", want, have, seen);
        if (have >= want)
            continue;
        snprintf(fix, sizeof fix, "write Type=%s in gres.conf (line %u and the node's other "
                 "Name=gpu records), or change slurm.conf's Gres= to the type gres.conf names; "
                 "restart slurmd and slurmctld", type, line);
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "slurmd registers the GPUs under gres.conf's type: slurmctld counts "
                           "fewer of this type than configured and drains the node ('gres/gpu "
                           "count reported lower than configured'), no job gets these GPUs",
                           fix, "slurm.conf gives node %s Gres=gpu:%s:%u, gres.conf has %u "
                           "device%s of Type=%s (its Type=: %s)", x->node, type, want, have,
                           have == 1 ? "" : "s", type, seen);
        ngi_doctor_cause(x, "slurm.gres_count", "gres.conf's Type= is not slurm.conf's %s",
                         type);
    }
}

static void check_count(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.gres_count");
    char text[256] = "";
    unsigned want = 0, have = x->gorder.count;
    int have_gres = ngi_doctor_slurm_gpus(x, &want, text, sizeof text) == 0 && want > 0;
    const char *skip = count_skip(x, have_gres);
    if (skip) {
        ngi_doctor_end(x->r, c, "not compared for node %s: %s", x->node, skip);
        return;
    }
    /* More configured than listed drains the node (FAIL); more listed
     * than configured only wastes the rest (WARN). */
    if (want != have)
        ngi_doctor_problem(x->r, c, want > have ? NG_CHECK_FAIL : NG_CHECK_WARN,
                           want > have ? "slurmd reports fewer GPUs than configured: slurmctld "
                                         "drains the node ('gres/gpu count reported lower than "
                                         "configured')"
                                       : "Slurm uses only the first of the listed devices; the "
                                         "others are never given to a job",
                           "make slurm.conf's Gres=gpu:N and gres.conf's File= list agree",
                           "slurm.conf gives node %s Gres=%s (%u GPUs), gres.conf lists %u "
                           "devices%s", x->node, text, want, have, want > have ? " for it" : "");
    else
        compare_types(x, c, text);
    ngi_doctor_end(x->r, c, "slurm.conf's Gres=%s and gres.conf agree: %u GPUs%s", text, have,
                   strchr(strchr(text, ':') ? strchr(text, ':') + 1 : "", ':')
                       ? ", of the types slurm.conf names" : "");
}

void ngi_check_gres(ngi_doctor_ctx *x)
{
    check_conf(x);
    check_devices(x);
    check_order(x);
    check_autodetect(x);
    check_count(x);
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

/* The first line of @p out holding @p tag ("fatal:", "error:"), from the
 * tag on, into @p line; 1 when found. */
static int tagged_line(const char *out, const char *tag, char *line, size_t len)
{
    const char *l = out ? strstr(out, tag) : NULL;
    if (!l)
        return 0;
    snprintf(line, len, "%.*s", (int)strcspn(l, "\n"), l);
    return 1;
}

/* The setting slurmd's line names, found as "Key=" at the start of a line
 * of cgroup.conf, slurm.conf or gres.conf: "KEY in FILE", or "". */
static void named_setting(const ngi_doctor_ctx *x, const char *line, char *out, size_t len)
{
    const char *texts[] = {x->cgroup_text, x->slurm_text};
    const char *files[] = {x->cgroup_conf, x->slurm_conf};
    char word[64], v[4096];
    out[0] = '\0';
    for (const char *p = line; *p;) {
        size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
        if (n >= 4 && n < sizeof word) {
            snprintf(word, sizeof word, "%.*s", (int)n, p);
            for (size_t k = 0; k < NGI_ARRAY_LEN(texts); k++)
                if (texts[k] && ngi_conf_value(texts[k], word, v, sizeof v) != -1) {
                    snprintf(out, len, "%s= in %s", word, files[k]);
                    return;
                }
        }
        p += n ? n : 1;
    }
}

/* slurmd -G failed: quote its fatal: (else error:) line; a fatal line is a
 * FAIL, slurmd refuses to start with this configuration. */
static void slurmd_failed(ngi_doctor_ctx *x, ng_doctor_check *c, const ngi_cmd *res)
{
    char line[512], what[200], setting[PATH_MAX + 80], fix[2 * PATH_MAX + 700];
    ngi_doctor_tool_describe(x, NGI_TOOL_SLURMD_G, what, sizeof what);
    int fatal = res && tagged_line(res->out, "fatal:", line, sizeof line);
    if (fatal || (res && tagged_line(res->out, "error:", line, sizeof line))) {
        named_setting(x, line, setting, sizeof setting);
        snprintf(fix, sizeof fix, "%s%s, then run slurmd -G -f %s -N %s by hand until it "
                 "prints no %s line", setting[0] ? "remove or correct " : "correct what "
                 "slurmd's line names in slurm.conf, cgroup.conf or gres.conf",
                 setting, x->slurm_conf, x->node, fatal ? "fatal:" : "error:");
        ngi_doctor_problem(x->r, c, fatal ? NG_CHECK_FAIL : NG_CHECK_WARN,
                           fatal ? "slurmd refuses to start with this configuration: after "
                                   "its next restart the node runs no job"
                                 : "Slurm's own index order was not compared with the "
                                   "plugin's",
                           fix, "slurmd -G -N %s (%s): %s", x->node, what, line);
        return;
    }
    ngi_doctor_problem(x->r, c, ngi_doctor_tool_status(x, NGI_TOOL_SLURMD_G, NG_CHECK_WARN),
                       "Slurm's own index order was not compared with the plugin's",
                       "run slurmd -G by hand", "slurmd -G -N %s: %s", x->node, what);
}

/* `slurmd -G -f SLURM_CONF -N NODE` (run once): Slurm's own order into
 * @p s; 0 when it answered and parsed, else a FAIL or WARN on @p c. */
static int slurmd_order(ngi_doctor_ctx *x, ng_doctor_check *c, ng_gres_order *s)
{
    char why[512];
    const ngi_cmd *res = ngi_doctor_tool(x, NGI_TOOL_SLURMD_G);
    if (!ngi_doctor_tool_ok(x, NGI_TOOL_SLURMD_G)) {
        slurmd_failed(x, c, res);
        return -1;
    }
    if (ngi_slurmd_gres_parse(res->out, s, why, sizeof why) < 0) {
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "Slurm's own index order was not compared with the plugin's",
                           "run slurmd -G by hand", "slurmd -G -N %s: %s", x->node, why);
        return -1;
    }
    return 0;
}

/* slurmd -G and the plugin differ because of a root cause found before
 * (GresTypes, gres.conf's Type= or the file itself): said as its
 * consequence, a WARN whose fix is the cause's. */
static void consequence(ngi_doctor_ctx *x, ng_doctor_check *c, const ng_gres_order *s)
{
    char fix[400];
    snprintf(fix, sizeof fix, "fix %s first (its line above); this follows", x->cause);
    ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                       "Slurm's own index order was not compared with the plugin's", fix,
                       "slurmd -G lists %u GPUs, the plugin %u: because of %s (%s)", s->count,
                       x->gorder_ok ? x->gorder.count : 0, x->cause, x->cause_what);
    ngi_doctor_end(x->r, c, "-");
}

void ngi_check_slurmd_gres(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.slurmd_gres");
    char prog[PATH_MAX], line[512];
    ng_gres_order s = {0};
    if (ngi_find_program("slurmd", prog, sizeof prog) < 0 || !x->slurm_text) {
        ngi_doctor_end(x->r, c, "%s: Slurm's own gres order not compared",
                       x->slurm_text ? "slurmd is not installed" : "no slurm.conf");
        return;
    }
    if (slurmd_order(x, c, &s) < 0) {
        ngi_doctor_end(x->r, c, "-");
        return;
    }
    /* slurmd -G reads this host's CPUs: its error: lines judge the node
     * only when the topology judged is this machine's (not --fsroot or
     * another topology= XML); else they are evidence. */
    int here = x->live && x->topo && ng_topology_is_this_system(x->topo);
    int err = tagged_line(x->tools[NGI_TOOL_SLURMD_G].res.out, "error:", line, sizeof line);
    if (err && !here)
        ngi_doctor_fact(c, "slurmd -G (this host)", "%s", line);
    else if (err)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "slurmd runs, but not with the configuration as written",
                           "correct what slurmd's line names (slurm.conf, gres.conf)",
                           "slurmd -G -N %s: %s", x->node, line);
    if (x->cause && (!x->gorder_ok || s.count != x->gorder.count)) {
        consequence(x, c, &s);
    } else if (!x->gorder_ok) {
        ngi_doctor_end(x->r, c, "slurmd -G lists %u GPUs; the plugin has no gres order of its "
                       "own to compare (slurm.gres_conf)", s.count);
    } else {
        compare_slurmd(x, c, &s, &x->gorder);
        ngi_doctor_end(x->r, c, "slurmd -G and the plugin give the same %u GPUs the same gres "
                       "indices", s.count);
    }
    ng_gres_order_free(&s);
}
