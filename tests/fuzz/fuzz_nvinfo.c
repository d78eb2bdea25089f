/* libFuzzer target: NVIDIA driver information files
 * (/proc/driver/nvidia/gpus/<dir>/information and numa_status) written into
 * a private fsroot, read back through every path that parses them:
 * ngi_device_file_busid (minor -> bus id), gres.conf AutoDetect=nvml (the
 * driver's GPU list), ng_task_gpus with CUDA_VISIBLE_DEVICES UUIDs, and,
 * rarely, a live topology load whose GPU-memory hints come from numa_status.
 *
 * Input: byte 0 = flags (bits 0-2 the /dev/nvidiaN minor to look up, 7 =
 * nvidiactl; bit 3 also resolve the AutoDetect order through ng_task_gpus;
 * 0xf0 == 0xf0: live topology load), then fields separated by 0x1e: the
 * CUDA_VISIBLE_DEVICES value, then up to 4 GPU records "dirname\ncontent".
 * Invariants: bus ids are canonical; AutoDetect lists only /dev/nvidiaN
 * (N < 255) under the root, one per record at most; messages are one line
 * (the information content is never echoed). */
#include "fuzz_common.h"

#include <sys/sysmacros.h>

#define MAX_REC 4

static char root[512], gpus_dir[600], conf[600];
static ng_topology *xe;
static int have_dev;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char path[700];
    snprintf(root, sizeof root, "%s/nv", fz_tmpdir());
    snprintf(gpus_dir, sizeof gpus_dir, "%s/proc/driver/nvidia/gpus", root);
    snprintf(path, sizeof path, "%s/dev", root);
    mkdir(root, 0755);
    mkdir(path, 0755);
    have_dev = 1;
    for (unsigned m = 0; m < 8; m++) {
        unsigned minor = m == 7 ? 255 : m;
        snprintf(path, sizeof path, m == 7 ? "%s/dev/nvidiactl" : "%s/dev/nvidia%u", root, m);
        if (mknod(path, S_IFCHR | 0600, makedev(195, minor)) != 0 && errno != EEXIST)
            have_dev = 0;
    }
    if (!have_dev)
        fprintf(stderr, "fuzz: cannot mknod (not root?): device file lookups only fail\n");
    snprintf(conf, sizeof conf, "%s/gres.conf", fz_tmpdir());
    fz_write_file(conf, "AutoDetect=nvml\n", 16);
    xe = fz_load_repo_topology("tests/topologies/xe8640-4xh100-spr8480-snc4.xml");
    return 0;
}

/* A directory name from fuzz bytes: no '/', not "." or "..", bounded. */
static void safe_name(const char *in, char *out, size_t len)
{
    size_t n = 0;
    for (; in[n] && n < len - 1 && n < 200; n++)
        out[n] = in[n] == '/' ? '_' : in[n];
    out[n] = '\0';
    if (!n || !strcmp(out, ".") || !strcmp(out, ".."))
        snprintf(out, len, "0000:00:00.0");
}

static void write_records(char **rec, unsigned nrec)
{
    char path[1024], name[256];
    fz_rm_tree(gpus_dir);
    snprintf(path, sizeof path, "%s/proc", root);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/proc/driver", root);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/proc/driver/nvidia", root);
    mkdir(path, 0755);
    mkdir(gpus_dir, 0755);
    for (unsigned i = 0; i < nrec; i++) {
        char *body = strchr(rec[i], '\n');
        if (body)
            *body++ = '\0';
        safe_name(rec[i], name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", gpus_dir, name);
        if (mkdir(path, 0755) != 0)
            continue; /* duplicate name: the first record wins */
        const char *text = body ? body : "";
        snprintf(path, sizeof path, "%s/%s/information", gpus_dir, name);
        fz_write_file(path, text, strlen(text));
        snprintf(path, sizeof path, "%s/%s/numa_status", gpus_dir, name);
        fz_write_file(path, text, strlen(text));
    }
}

static void check_bus(const char *what, const char *bus)
{
    char again[NG_BUSID_LEN];
    FZ_ASSERT(strnlen(bus, NG_BUSID_LEN) == 12 && ngi_busid_normalize(bus, again) == 0 &&
              strcmp(bus, again) == 0, "%s: bus id '%.16s' not canonical", what, bus);
}

static void check_task(const ng_gres_order *order, const char *cuda, const char *step)
{
    ng_gpu_env env = {step, NULL, cuda, NULL, NULL, NULL};
    int idx[NG_MAX_GPUS];
    unsigned n = 0;
    char err[512] = "";
    if (ng_task_gpus(xe, order, &env, root, idx, NG_MAX_GPUS, &n, err, sizeof err) == 0) {
        for (unsigned i = 0; i < n; i++)
            FZ_ASSERT(idx[i] >= 0 && (unsigned)idx[i] < ng_topology_gpu_count(xe) &&
                      (i == 0 || idx[i] > idx[i - 1]), "bad GPU index list");
    } else if (!fz_has_newline(cuda)) {
        fz_check_message("ng_task_gpus", err, sizeof err);
    }
}

static void check_autodetect(const char *cuda, int resolve)
{
    ng_gres_order o;
    char err[512] = "", prefix[700];
    snprintf(prefix, sizeof prefix, "%s/dev/nvidia", root);
    if (ng_gres_order_from_conf(&o, conf, NULL, root, err, sizeof err) < 0) {
        fz_check_message("ng_gres_order_from_conf", err, sizeof err);
        FZ_ASSERT(o.count == 0, "failure with %u entries", o.count);
        return;
    }
    FZ_ASSERT(o.count <= MAX_REC, "%u GPUs from at most %d records", o.count, MAX_REC);
    for (unsigned i = 0; i < o.count; i++) {
        const char *f = o.device_files[i];
        char *end;
        FZ_ASSERT(f && strncmp(f, prefix, strlen(prefix)) == 0, "entry '%s'", f ? f : "(null)");
        unsigned long m = strtoul(f + strlen(prefix), &end, 10);
        FZ_ASSERT(!*end && end != f + strlen(prefix) && m < 255, "entry '%s'", f);
    }
    if (resolve && o.count) {
        char step[64];
        snprintf(step, sizeof step, "%u", o.count - 1);
        check_task(&o, NULL, step);
    }
    (void)cuda;
    ng_gres_order_free(&o);
}

static void check_live(void)
{
    ng_topology_options opt;
    ng_topology *t = NULL;
    char err[512] = "";
    memset(&opt, 0, sizeof opt);
    opt.fsroot = root;
    if (ng_topology_load(&t, &opt, err, sizeof err) < 0) {
        fz_check_message("ng_topology_load", err, sizeof err);
        return;
    }
    for (unsigned i = 0; i < ng_topology_numa_count(t); i++) {
        const ng_numa_info *ni = ng_topology_numa(t, i);
        FZ_ASSERT(!ni->has_cpus || !hwloc_bitmap_iszero(ni->cpus), "node %u", ni->os_index);
    }
    ng_topology_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    char *in = fz_cstr(data + 1, size - 1);
    char *f[1 + MAX_REC] = {NULL};
    unsigned nf = fz_split(in, '\x1e', f, 1 + MAX_REC);
    write_records(f + 1, nf - 1);
    const char *cuda = f[0];

    if (have_dev) {
        char dev[700], bus[NG_BUSID_LEN], err[512] = "";
        unsigned m = flags & 7;
        snprintf(dev, sizeof dev, m == 7 ? "%s/dev/nvidiactl" : "%s/dev/nvidia%u", root, m);
        if (ngi_device_file_busid(root, dev, bus, err, sizeof err) == 0)
            check_bus("ngi_device_file_busid", bus);
        else
            fz_check_message("ngi_device_file_busid", err, sizeof err);
    }
    check_autodetect(cuda, flags & 8);
    if (*cuda)
        check_task(NULL, cuda, NULL);
    if ((flags & 0xf0) == 0xf0)
        check_live();
    free(in);
    return 0;
}
