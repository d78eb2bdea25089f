/* Which GPUs a task has: device files -> PCI bus ids, UUIDs -> bus ids,
 * and the task's environment -> topology GPU indices. The evidence rule
 * and its Slurm sources are in docs/gpu-order.md.
 *
 * Trust: paths come from gres.conf (admin) and fsroot (admin/test) only.
 * Environment values are data: parsed as indices or UUIDs, never used to
 * build a path. */
#include "private/gpu.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define NV_MAJOR 195           /* /dev/nvidiaN: minor N (255 = nvidiactl) */
#define DRM_MAJOR 226          /* /dev/dri/cardN, renderD(128+N) */
#define UUID_MAX 96            /* longest UUID token accepted */
#define INFO_MAX 4096          /* /proc/driver/nvidia/gpus/<bus>/information */

/* dir + "/" + name + suffix into buf; -1 if it does not fit. */
static int join(char *buf, size_t len, const char *dir, const char *name, const char *suffix)
{
    int n = snprintf(buf, len, "%s/%s%s", dir, name, suffix);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* NVIDIA /proc/driver/nvidia/gpus/<bus>/information                    */
/* ------------------------------------------------------------------ */

typedef struct nv_proc_gpu {
    char bus[NG_BUSID_LEN];
    int minor;                 /* -1 if not shown */
    char uuid[UUID_MAX];       /* "GPU-...", "" if not shown */
} nv_proc_gpu;

/* Value after "Key:" on a line of the information file, trimmed. */
static int info_value(const char *text, const char *key, char *out, size_t len)
{
    size_t klen = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, key, klen) != 0 || l[klen] != ':')
            continue;
        const char *v = l + klen + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t n = strcspn(v, "\r\n");
        while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
            n--;
        if (n >= len)
            return -1;
        memcpy(out, v, n);
        out[n] = '\0';
        return 0;
    }
    return -1;
}

/* All GPUs the NVIDIA driver lists under fsroot, sorted by bus id. */
static int nv_proc_scan(const char *fsroot, nv_proc_gpu *out, unsigned max, unsigned *n)
{
    char dir[PATH_MAX];
    *n = 0;
    if (ngi_path(dir, sizeof(dir), fsroot, "/proc/driver/nvidia/gpus"))
        return -1;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d)) && *n < max) {
        nv_proc_gpu g;
        char path[PATH_MAX], text[INFO_MAX], tmp[64];
        if (de->d_name[0] == '.' || ngi_busid_normalize(de->d_name, g.bus))
            continue;
        if (join(path, sizeof(path), dir, de->d_name, "/information") ||
            ngi_read_small_file(path, text, sizeof(text)))
            continue;
        /* "Bus Location" is the driver's own view; the dir name agrees. */
        if (!info_value(text, "Bus Location", tmp, sizeof(tmp)))
            ngi_busid_normalize(tmp, g.bus);
        g.minor = -1;
        if (!info_value(text, "Device Minor", tmp, sizeof(tmp))) {
            char *end;
            long v = strtol(tmp, &end, 10);
            if (end != tmp && !*end && v >= 0 && v < 255)
                g.minor = (int)v;
        }
        if (info_value(text, "GPU UUID", g.uuid, sizeof(g.uuid)))
            g.uuid[0] = '\0';
        out[(*n)++] = g;
    }
    closedir(d);
    for (unsigned i = 1; i < *n; i++)        /* insertion sort by bus id */
        for (unsigned j = i; j > 0 && strcmp(out[j - 1].bus, out[j].bus) > 0; j--) {
            nv_proc_gpu t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return 0;
}

/* ------------------------------------------------------------------ */
/* NVML through dlopen (never a build dependency)                       */
/* ------------------------------------------------------------------ */

typedef void *nvml_dev;   /* nvmlDevice_t is an opaque pointer */
/* nvmlPciInfo_t as of nvmlDeviceGetPciInfo_v3 (nvml.h). */
typedef struct nvml_pci {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvml_pci;

typedef struct nvml_api {
    void *h;
    int (*init)(void);
    int (*shutdown)(void);
    int (*by_uuid)(const char *, nvml_dev *);
    int (*is_mig)(nvml_dev, unsigned *);
    int (*parent)(nvml_dev, nvml_dev *);
    int (*pci)(nvml_dev, nvml_pci *);
    int (*count)(unsigned *);
    int (*by_index)(unsigned, nvml_dev *);
    int (*get_minor)(nvml_dev, unsigned *);
} nvml_api;

static void *sym(void *h, const char *name)
{
    return dlsym(h, name);
}

/* Open libnvidia-ml.so.1 by its soname (the loader's normal search, no
 * path from any user) and nvmlInit_v2(). 0 when usable. */
static int nvml_open(nvml_api *a)
{
    memset(a, 0, sizeof(*a));
    a->h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a->h)
        return -1;
    *(void **)&a->init = sym(a->h, "nvmlInit_v2");
    *(void **)&a->shutdown = sym(a->h, "nvmlShutdown");
    *(void **)&a->by_uuid = sym(a->h, "nvmlDeviceGetHandleByUUID");
    *(void **)&a->is_mig = sym(a->h, "nvmlDeviceIsMigDeviceHandle");
    *(void **)&a->parent = sym(a->h, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
    *(void **)&a->pci = sym(a->h, "nvmlDeviceGetPciInfo_v3");
    *(void **)&a->count = sym(a->h, "nvmlDeviceGetCount_v2");
    *(void **)&a->by_index = sym(a->h, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&a->get_minor = sym(a->h, "nvmlDeviceGetMinorNumber");
    if (!a->init || !a->shutdown || !a->pci || a->init() != 0) {
        dlclose(a->h);
        a->h = NULL;
        return -1;
    }
    return 0;
}

static void nvml_close(nvml_api *a)
{
    if (!a->h)
        return;
    a->shutdown();
    dlclose(a->h);
    a->h = NULL;
}

static int nvml_dev_bus(nvml_api *a, nvml_dev d, char bus[NG_BUSID_LEN])
{
    nvml_pci p;
    memset(&p, 0, sizeof(p));
    if (a->pci(d, &p) != 0)
        return -1;
    p.busId[sizeof(p.busId) - 1] = '\0';
    return ngi_busid_normalize(p.busId, bus);
}

/* Bus id of the (parent) GPU of a GPU- or MIG- UUID via NVML. */
static int nvml_uuid_bus(const char *uuid, char bus[NG_BUSID_LEN], int *no_nvml)
{
    nvml_api a;
    *no_nvml = 0;
    if (nvml_open(&a)) {
        *no_nvml = 1;
        return -1;
    }
    int rc = -1;
    nvml_dev d = NULL, parent = NULL;
    unsigned mig = 0;
    if (a.by_uuid && a.by_uuid(uuid, &d) == 0) {
        if (a.is_mig && a.parent && a.is_mig(d, &mig) == 0 && mig) {
            if (a.parent(d, &parent) == 0)
                rc = nvml_dev_bus(&a, parent, bus);
        } else {
            rc = nvml_dev_bus(&a, d, bus);
        }
    }
    nvml_close(&a);
    return rc;
}

/* Bus id of the GPU with this minor number via NVML (live system only). */
static int nvml_minor_bus(unsigned minor, char bus[NG_BUSID_LEN])
{
    nvml_api a;
    if (nvml_open(&a))
        return -1;
    int rc = -1;
    unsigned n = 0, m;
    if (a.count && a.by_index && a.get_minor && a.count(&n) == 0)
        for (unsigned i = 0; i < n && i < NG_MAX_GPUS && rc; i++) {
            nvml_dev d;
            if (a.by_index(i, &d) == 0 && a.get_minor(d, &m) == 0 && m == minor)
                rc = nvml_dev_bus(&a, d, bus);
        }
    nvml_close(&a);
    return rc;
}

static int is_live_root(const char *fsroot)
{
    return !fsroot || !*fsroot || strcmp(fsroot, "/") == 0;
}

/* ------------------------------------------------------------------ */
/* Device file -> bus id                                                */
/* ------------------------------------------------------------------ */

/* Bus id from a sysfs "device" link: the PCI dir's basename. */
static int sysfs_link_bus(const char *link, char bus[NG_BUSID_LEN])
{
    char target[PATH_MAX];
    char *real = realpath(link, NULL);
    const char *base;
    if (real) {
        base = strrchr(real, '/');
        int rc = ngi_busid_normalize(base ? base + 1 : real, bus);
        free(real);
        if (!rc)
            return 0;
    }
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0)
        return -1;
    target[n] = '\0';
    base = strrchr(target, '/');
    return ngi_busid_normalize(base ? base + 1 : target, bus);
}

static int char_dev_bus(const char *fsroot, unsigned maj, unsigned min,
                        char bus[NG_BUSID_LEN])
{
    char rel[64], path[PATH_MAX];
    snprintf(rel, sizeof(rel), "/sys/dev/char/%u:%u/device", maj, min);
    if (ngi_path(path, sizeof(path), fsroot, rel))
        return -1;
    return sysfs_link_bus(path, bus);
}

int ngi_device_file_busid(const char *fsroot, const char *device_file,
                         char busid[NG_BUSID_LEN], char *err, size_t errlen)
{
    struct stat st;
    busid[0] = '\0';
    if (!device_file || !*device_file)
        return ngi_fail(err, errlen, "no device file given");
    if (strnlen(device_file, PATH_MAX) >= PATH_MAX)
        return ngi_fail(err, errlen, "device file name too long");
    if (stat(device_file, &st) != 0)
        return ngi_fail(err, errlen, "%s: %s", device_file, strerror(errno));
    if (!S_ISCHR(st.st_mode))
        return ngi_fail(err, errlen, "%s is not a character device", device_file);
    unsigned maj = major(st.st_rdev), min = minor(st.st_rdev);
    if (maj == NV_MAJOR) {
        nv_proc_gpu g[NG_MAX_GPUS];
        unsigned n = 0;
        if (min >= 255)
            return ngi_fail(err, errlen, "%s is the NVIDIA control device (195:%u), not a GPU",
                           device_file, min);
        if (!nv_proc_scan(fsroot, g, NG_MAX_GPUS, &n))
            for (unsigned i = 0; i < n; i++)
                if (g[i].minor == (int)min)
                    return ngi_strlcpy(busid, g[i].bus, NG_BUSID_LEN);
        /* NVML only describes the machine we run on. */
        if (is_live_root(fsroot) && !nvml_minor_bus(min, busid))
            return 0;
        return ngi_fail(err, errlen,
                       "%s (195:%u): no NVIDIA GPU with Device Minor %u in "
                       "%s/proc/driver/nvidia/gpus/*/information%s",
                       device_file, min, min, is_live_root(fsroot) ? "" : fsroot,
                       is_live_root(fsroot) ? " nor in NVML" : "");
    }
    if (!char_dev_bus(fsroot, maj, min, busid))
        return 0;
    return ngi_fail(err, errlen, "%s (%u:%u): no PCI device behind %s/sys/dev/char/%u:%u/device",
                   device_file, maj, min, is_live_root(fsroot) ? "" : fsroot, maj, min);
}

/* ------------------------------------------------------------------ */
/* AutoDetect enumeration (used by gresconf.c)                          */
/* ------------------------------------------------------------------ */

typedef struct drm_gpu {
    char bus[NG_BUSID_LEN];
    unsigned minor;
} drm_gpu;

/* Render nodes of a PCI vendor under fsroot, sorted by minor number. */
static int drm_scan(const char *fsroot, unsigned vendor, drm_gpu *out, unsigned max,
                    unsigned *n)
{
    char dir[PATH_MAX];
    *n = 0;
    if (ngi_path(dir, sizeof(dir), fsroot, "/sys/class/drm"))
        return -1;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d)) && *n < max) {
        unsigned minor;
        char tail, path[PATH_MAX], text[32];
        if (sscanf(de->d_name, "renderD%u%c", &minor, &tail) != 1 || minor > 1024)
            continue;
        if (join(path, sizeof(path), dir, de->d_name, "/device/vendor") ||
            ngi_read_small_file(path, text, sizeof(text)) ||
            strtoul(text, NULL, 16) != vendor)
            continue;
        if (join(path, sizeof(path), dir, de->d_name, "/device") ||
            sysfs_link_bus(path, out[*n].bus))
            continue;
        out[(*n)++].minor = minor;
    }
    closedir(d);
    /* DRM minor order = the driver's probe order, which is the order
     * rocm-smi (cardN) and Level Zero enumerate in; not always bus order. */
    for (unsigned i = 1; i < *n; i++)
        for (unsigned j = i; j > 0 && out[j - 1].minor > out[j].minor; j--) {
            drm_gpu t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return 0;
}

static int order_push(ng_gres_order *o, const char *fsroot, const char *fmt, unsigned v)
{
    char rel[64], path[PATH_MAX];
    snprintf(rel, sizeof(rel), fmt, v);
    if (ngi_path(path, sizeof(path), fsroot, rel) || o->count >= NG_MAX_GPUS)
        return -1;
    char *dup = strdup(path);
    if (!dup)
        return -1;
    o->device_files[o->count++] = dup;
    return 0;
}

/* nvml/nvidia: NVIDIA GPUs in PCI bus order (NVML's enumeration order);
 * rsmi: AMD render nodes, oneapi: Intel render nodes, in DRM minor order. */
int ngi_gpu_autodetect(const char *fsroot, const char *kind, ng_gres_order *out,
                         char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->device_files = calloc(NG_MAX_GPUS, sizeof(char *));
    if (!out->device_files)
        return ngi_fail(err, errlen, "out of memory");
    int bad = 0;
    if (!strcasecmp(kind, "nvml") || !strcasecmp(kind, "nvidia")) {
        nv_proc_gpu g[NG_MAX_GPUS];
        unsigned n = 0;
        if (nv_proc_scan(fsroot, g, NG_MAX_GPUS, &n))
            n = 0;
        for (unsigned i = 0; i < n && !bad; i++)
            if (g[i].minor >= 0)
                bad = order_push(out, fsroot, "/dev/nvidia%u", (unsigned)g[i].minor);
    } else {
        unsigned vendor = !strcasecmp(kind, "rsmi") ? 0x1002 : 0x8086;
        drm_gpu g[NG_MAX_GPUS];
        unsigned n = 0;
        if (drm_scan(fsroot, vendor, g, NG_MAX_GPUS, &n))
            n = 0;
        for (unsigned i = 0; i < n && !bad; i++)
            bad = order_push(out, fsroot, "/dev/dri/renderD%u", g[i].minor);
    }
    if (bad) {
        ng_gres_order_free(out);
        return ngi_fail(err, errlen, "AutoDetect=%s: cannot list the GPUs", kind);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* UUIDs                                                                */
/* ------------------------------------------------------------------ */

/* Hex digits and dashes only, bounded; returns the length or -1. */
static int uuid_body_ok(const char *s, size_t maxlen)
{
    size_t n = 0;
    for (; s[n]; n++) {
        if (n >= maxlen || !(isxdigit((unsigned char)s[n]) || s[n] == '-'))
            return -1;
    }
    return n ? (int)n : -1;
}

/* NVIDIA GPU UUID (or a unique prefix, as CUDA accepts) -> bus id from
 * /proc; 1 = not found there, -1 = ambiguous prefix. */
static int nv_proc_uuid_bus(const char *fsroot, const char *uuid, char bus[NG_BUSID_LEN])
{
    nv_proc_gpu g[NG_MAX_GPUS];
    unsigned n = 0, hits = 0;
    if (nv_proc_scan(fsroot, g, NG_MAX_GPUS, &n))
        return 1;
    size_t len = strlen(uuid);
    for (unsigned i = 0; i < n; i++) {
        if (!g[i].uuid[0] || strncasecmp(g[i].uuid, uuid, len) != 0)
            continue;
        if (strlen(g[i].uuid) == len) {     /* exact match wins */
            ngi_strlcpy(bus, g[i].bus, NG_BUSID_LEN);
            return 0;
        }
        if (hits++ == 0)
            ngi_strlcpy(bus, g[i].bus, NG_BUSID_LEN);
    }
    return hits == 1 ? 0 : (hits ? -1 : 1);
}

/* Resolve one NVIDIA "GPU-..." / "MIG-GPU-<uuid>/gi/ci" / "MIG-<uuid>". */
static int nv_uuid_bus(const char *fsroot, const char *var, const char *tok,
                       char bus[NG_BUSID_LEN], char *err, size_t errlen)
{
    char parent[UUID_MAX];
    int no_nvml = 0;
    if (!strncasecmp(tok, "MIG-GPU-", 8)) {
        /* Old MIG form (drivers < 470.42.01): the parent GPU UUID is inside. */
        size_t n = strcspn(tok + 4, "/");
        unsigned gi, ci;
        char tail;
        if (n >= sizeof(parent) || tok[4 + n] != '/' ||
            sscanf(tok + 4 + n, "/%u/%u%c", &gi, &ci, &tail) != 2)
            return ngi_fail(err, errlen, "%s: malformed MIG UUID '%s' (want MIG-GPU-<uuid>/<gi>/<ci>)",
                           var, tok);
        memcpy(parent, tok + 4, n);
        parent[n] = '\0';
        if (uuid_body_ok(parent + 4, 64) < 0)
            return ngi_fail(err, errlen, "%s: malformed MIG UUID '%s'", var, tok);
        int rc = nv_proc_uuid_bus(fsroot, parent, bus);
        if (rc == 0 || (rc > 0 && !nvml_uuid_bus(parent, bus, &no_nvml)))
            return 0;
        return ngi_fail(err, errlen, "%s: MIG device '%s': parent GPU %s not found", var, tok,
                       parent);
    }
    const char *body = tok + 4;
    if (uuid_body_ok(body, 64) < 0)
        return ngi_fail(err, errlen, "%s: malformed UUID '%s'", var, tok);
    if (!strncasecmp(tok, "GPU-", 4)) {
        int rc = nv_proc_uuid_bus(fsroot, tok, bus);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return ngi_fail(err, errlen, "%s: UUID prefix '%s' matches several GPUs", var, tok);
    }
    /* New MIG form MIG-<uuid> (and GPU UUIDs /proc lacks): NVML only. */
    if (!nvml_uuid_bus(tok, bus, &no_nvml))
        return 0;
    if (no_nvml)
        return ngi_fail(err, errlen, "%s: cannot identify '%s': not in /proc/driver/nvidia and "
                       "NVML (libnvidia-ml.so.1) is not available", var, tok);
    return ngi_fail(err, errlen, "%s: no GPU with UUID '%s'", var, tok);
}

/* AMD "GPU-<hex unique id>" (ROCR_VISIBLE_DEVICES) -> bus id via the
 * amdgpu sysfs file /sys/class/drm/cardN/device/unique_id. */
static int amd_uuid_bus(const char *fsroot, const char *var, const char *tok,
                        char bus[NG_BUSID_LEN], char *err, size_t errlen)
{
    const char *body = tok + 4;
    char *end;
    if (strlen(body) > 16 || uuid_body_ok(body, 16) < 0 || strchr(body, '-'))
        return ngi_fail(err, errlen, "%s: malformed AMD UUID '%s' (want GPU-<16 hex digits>)", var,
                       tok);
    unsigned long long want = strtoull(body, &end, 16);
    char dir[PATH_MAX];
    if (ngi_path(dir, sizeof(dir), fsroot, "/sys/class/drm"))
        return ngi_fail(err, errlen, "fsroot too long");
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            unsigned card;
            char tail, path[PATH_MAX], text[64];
            if (sscanf(de->d_name, "card%u%c", &card, &tail) != 1)
                continue;
            if (join(path, sizeof(path), dir, de->d_name, "/device/unique_id") ||
                ngi_read_small_file(path, text, sizeof(text)) ||
                strtoull(text, &end, 16) != want || end == text)
                continue;
            if (!join(path, sizeof(path), dir, de->d_name, "/device") &&
                !sysfs_link_bus(path, bus)) {
                closedir(d);
                return 0;
            }
        }
        closedir(d);
    }
    return ngi_fail(err, errlen, "%s: no AMD GPU with unique_id %s under %s/sys/class/drm", var,
                   body, is_live_root(fsroot) ? "" : fsroot);
}

/* ------------------------------------------------------------------ */
/* Environment -> GPUs                                                  */
/* ------------------------------------------------------------------ */

typedef struct result {
    int idx[NG_MAX_GPUS];
    unsigned n;
} result;

static void result_add(result *r, int idx)
{
    for (unsigned i = 0; i < r->n; i++)
        if (r->idx[i] == idx)
            return;
    if (r->n < NG_MAX_GPUS)
        r->idx[r->n++] = idx;
}

static int add_bus(const ng_topology *topo, result *r, const char *var, const char *val,
                   const char *what, const char *bus, char *err, size_t errlen)
{
    int i = ng_topology_gpu_by_busid(topo, bus);
    if (i < 0)
        return ngi_fail(err, errlen, "%s=%s: %s is GPU %s, which the topology does not have",
                       var, val, what, bus);
    result_add(r, i);
    return 0;
}

/* Split a list value into tokens; validates length and emptiness. */
static int split(const char *var, const char *val, char tok[][UUID_MAX], unsigned *n,
                 char *err, size_t errlen)
{
    *n = 0;
    size_t len = strnlen(val, NG_MAX_ARG + 1);
    if (len > NG_MAX_ARG)
        return ngi_fail(err, errlen, "%s is longer than %d bytes", var, NG_MAX_ARG);
    const char *p = val;
    for (;;) {
        size_t k = strcspn(p, ",");
        if (k == 0 || k >= UUID_MAX)
            return ngi_fail(err, errlen, "%s=%s: %s", var, val,
                           k ? "an entry is too long" : "empty entry");
        if (*n >= NG_MAX_GPUS)
            return ngi_fail(err, errlen, "%s=%s: more than %d entries", var, val, NG_MAX_GPUS);
        memcpy(tok[*n], p, k);
        tok[(*n)++][k] = '\0';
        if (!p[k])
            return 0;
        p += k + 1;
    }
}

/* A decimal index < NG_MAX_GPUS; ZE_AFFINITY_MASK may add ".subdevice". */
static int parse_index(const char *tok, int allow_sub, unsigned *out)
{
    const char *p = tok;
    unsigned long v = 0;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        v = v * 10 + (unsigned)(*p - '0');
        if (v >= NG_MAX_GPUS)
            return -1;
    }
    if (*p == '.' && allow_sub) {
        p++;
        if (!isdigit((unsigned char)*p) || strspn(p, "0123456789") != strlen(p) ||
            strlen(p) > 3)
            return -1;
        p += strlen(p);
    }
    if (*p)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int is_uuid_token(const char *t)
{
    return !strncasecmp(t, "GPU-", 4) || !strncasecmp(t, "MIG-", 4);
}

/* A variable that Slurm or a runtime may set to "nothing here". */
static int value_absent(const char *v)
{
    return !v || !strcmp(v, "NoDevFiles");
}

/* The k-th GPU of @p vendor (any vendor if NG_VENDOR_UNKNOWN) in bus order. */
static int nth_gpu(const ng_topology *topo, ng_gpu_vendor vendor, unsigned k)
{
    unsigned n = ng_topology_gpu_count(topo), seen = 0;
    for (unsigned i = 0; i < n; i++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, i);
        if (vendor != NG_VENDOR_UNKNOWN && g->vendor != vendor)
            continue;
        if (seen++ == k)
            return (int)i;
    }
    return -1;
}

static unsigned vendor_count(const ng_topology *topo, ng_gpu_vendor vendor)
{
    unsigned n = ng_topology_gpu_count(topo), c = 0;
    for (unsigned i = 0; i < n; i++)
        if (vendor == NG_VENDOR_UNKNOWN || ng_topology_gpu(topo, i)->vendor == vendor)
            c++;
    return c;
}

/* Vendor variables Slurm may set, with the vendor whose runtime reads them. */
typedef struct vendor_var {
    const char *name;
    const char *val;
    ng_gpu_vendor vendor;
    int allow_sub;
} vendor_var;

/* Evidence 1: UUIDs in CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES. */
static int from_uuids(const ng_topology *topo, const char *fsroot, const vendor_var *v,
                      char tok[][UUID_MAX], unsigned n, result *r, char *err, size_t errlen)
{
    for (unsigned i = 0; i < n; i++) {
        char bus[NG_BUSID_LEN];
        if (!is_uuid_token(tok[i]))
            return ngi_fail(err, errlen, "%s=%s: '%s' mixes an index with UUIDs", v->name, v->val,
                           tok[i]);
        int rc = v->vendor == NG_VENDOR_AMD
                     ? amd_uuid_bus(fsroot, v->name, tok[i], bus, err, errlen)
                     : nv_uuid_bus(fsroot, v->name, tok[i], bus, err, errlen);
        if (rc || add_bus(topo, r, v->name, v->val, tok[i], bus, err, errlen))
            return -1;
    }
    return 0;
}

/* Evidence 2: global gres indices through the node's gres order, or,
 * without one, as positions in bus order (the AutoDetect order). */
static int from_gres(const ng_topology *topo, const ng_gres_order *order, const char *fsroot,
                     const char *var, const char *val, ng_gpu_vendor vendor,
                     char tok[][UUID_MAX], unsigned n, result *r, char *err, size_t errlen)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned gi;
        if (parse_index(tok[i], 0, &gi))
            return ngi_fail(err, errlen, "%s=%s: '%s' is not a GPU index (0-%d)", var, val,
                           tok[i], NG_MAX_GPUS - 1);
        if (order && order->count) {
            char bus[NG_BUSID_LEN], e2[256];
            if (gi >= order->count)
                return ngi_fail(err, errlen,
                               "%s=%s: unknown GPU index %u (the node's gres list has %u)", var,
                               val, gi, order->count);
            if (ngi_device_file_busid(fsroot, order->device_files[gi], bus, e2, sizeof(e2)))
                return ngi_fail(err, errlen, "%s=%s: GPU index %u: %s", var, val, gi, e2);
            if (add_bus(topo, r, var, val, order->device_files[gi], bus, err, errlen))
                return -1;
        } else {
            int t = nth_gpu(topo, vendor, gi);
            if (t < 0)
                return ngi_fail(err, errlen, "%s=%s: unknown GPU index %u (the topology has %u %s GPU%s)",
                               var, val, gi, vendor_count(topo, vendor),
                               vendor == NG_VENDOR_UNKNOWN ? "" : ng_gpu_vendor_name(vendor),
                               vendor_count(topo, vendor) == 1 ? "" : "s");
            result_add(r, t);
        }
    }
    return 0;
}

/* Evidence 3: runtime indices as positions among the vendor's GPUs. */
static int from_positions(const ng_topology *topo, const vendor_var *v, char tok[][UUID_MAX],
                          unsigned n, result *r, char *err, size_t errlen)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned k;
        /* CUDA stops at the first invalid index: "-1" hides everything after. */
        if (tok[i][0] == '-' && v->vendor == NG_VENDOR_NVIDIA && parse_index(tok[i] + 1, 0, &k) == 0)
            return 0;
        if (parse_index(tok[i], v->allow_sub, &k))
            return ngi_fail(err, errlen, "%s=%s: '%s' is not a GPU index%s", v->name, v->val,
                           tok[i], v->allow_sub ? " (N or N.M)" : "");
        int t = nth_gpu(topo, v->vendor, k);
        if (t < 0)
            return ngi_fail(err, errlen, "%s=%s: unknown GPU index %u (the topology has %u %s GPU%s)",
                           v->name, v->val, k, vendor_count(topo, v->vendor),
                           ng_gpu_vendor_name(v->vendor), vendor_count(topo, v->vendor) == 1 ? "" : "s");
        result_add(r, t);
    }
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The vendor the node's GPUs have, when they all agree; else unknown. */
static ng_gpu_vendor node_vendor(const ng_topology *topo)
{
    unsigned n = ng_topology_gpu_count(topo);
    ng_gpu_vendor v = NG_VENDOR_UNKNOWN;
    for (unsigned i = 0; i < n; i++) {
        ng_gpu_vendor g = ng_topology_gpu(topo, i)->vendor;
        if (i && g != v)
            return NG_VENDOR_UNKNOWN;
        v = g;
    }
    return v;
}

static int resolve_with(const ng_topology *topo, const ng_gres_order *order,
                        const ng_gpu_env *env, const char *fsroot, char tok[][UUID_MAX],
                        result *r, char *err, size_t errlen);

static int resolve(const ng_topology *topo, const ng_gres_order *order, const ng_gpu_env *env,
                   const char *fsroot, result *r, char *err, size_t errlen)
{
    char (*tok)[UUID_MAX] = calloc(NG_MAX_GPUS, UUID_MAX);   /* 24 KiB: heap */
    if (!tok)
        return ngi_fail(err, errlen, "out of memory");
    int rc = resolve_with(topo, order, env, fsroot, tok, r, err, errlen);
    free(tok);
    return rc;
}

static int resolve_with(const ng_topology *topo, const ng_gres_order *order,
                        const ng_gpu_env *env, const char *fsroot, char tok[][UUID_MAX],
                        result *r, char *err, size_t errlen)
{
    unsigned n;
    vendor_var vars[] = {
        {"CUDA_VISIBLE_DEVICES", env->cuda_visible_devices, NG_VENDOR_NVIDIA, 0},
        {"ROCR_VISIBLE_DEVICES", env->rocr_visible_devices, NG_VENDOR_AMD, 0},
        {"ZE_AFFINITY_MASK", env->ze_affinity_mask, NG_VENDOR_INTEL, 1},
        {"GPU_DEVICE_ORDINAL", env->gpu_device_ordinal, NG_VENDOR_AMD, 0},
    };
    /* 1. UUIDs identify GPUs by themselves (MIG slices included, whose
     *    gres indices count slices, not GPUs). */
    for (unsigned i = 0; i < 2; i++) {
        const vendor_var *v = &vars[i];
        if (value_absent(v->val) || !*v->val)
            continue;
        if (split(v->name, v->val, tok, &n, err, errlen))
            return -1;
        for (unsigned k = 0; k < n; k++)
            if (is_uuid_token(tok[k]))
                return from_uuids(topo, fsroot, v, tok, n, r, err, errlen);
    }
    /* 2. Slurm's global gres indices (per task when bound: Slurm writes
     *    the task's own list into SLURM_STEP_GPUS). */
    const char *gname = "SLURM_STEP_GPUS", *gval = env->slurm_step_gpus;
    if (value_absent(gval) || !*gval) {
        gname = "SLURM_JOB_GPUS";
        gval = env->slurm_job_gpus;
    }
    if (!value_absent(gval) && *gval) {
        ng_gpu_vendor vendor = node_vendor(topo);
        if (split(gname, gval, tok, &n, err, errlen))
            return -1;
        return from_gres(topo, order, fsroot, gname, gval, vendor, tok, n, r, err, errlen);
    }
    /* 3. Runtime indices: the first variable whose vendor the node has. */
    const vendor_var *first_set = NULL;
    for (unsigned i = 0; i < NGI_ARRAY_LEN(vars); i++) {
        const vendor_var *v = &vars[i];
        if (value_absent(v->val))
            continue;
        if (!first_set)
            first_set = v;
        if (!vendor_count(topo, v->vendor))
            continue;
        if (!*v->val)
            return 0;   /* explicitly no device visible */
        if (split(v->name, v->val, tok, &n, err, errlen))
            return -1;
        return from_positions(topo, v, tok, n, r, err, errlen);
    }
    if (first_set && *first_set->val)
        return ngi_fail(err, errlen, "%s=%s: the topology has no %s GPU", first_set->name,
                       first_set->val, ng_gpu_vendor_name(first_set->vendor));
    return 0;
}

int ngi_gpus_from_env(const ng_topology *topo, const ng_gres_order *order,
                 const ng_gpu_env *env, const char *fsroot,
                 int *out_idx, unsigned max, unsigned *n_out,
                 char *err, size_t errlen)
{
    result r;
    *n_out = 0;
    if (!topo)
        return ngi_fail(err, errlen, "no topology");
    if (!env)
        return 0;
    memset(&r, 0, sizeof(r));
    if (resolve(topo, order, env, fsroot, &r, err, errlen))
        return -1;
    qsort(r.idx, r.n, sizeof(int), cmp_int);
    if (r.n > max)
        return ngi_fail(err, errlen, "task has %u GPUs, room for %u", r.n, max);
    memcpy(out_idx, r.idx, r.n * sizeof(int));
    *n_out = r.n;
    return 0;
}
