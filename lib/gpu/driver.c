/* The node's GPU devices as the kernel and the drivers show them: device
 * files -> PCI bus ids (/proc/driver/nvidia, /sys/dev/char, NVML), the
 * GPUs AutoDetect would find, and GPU UUIDs -> bus ids.
 *
 * Trust: paths come from gres.conf (admin) and fsroot (admin/test) only.
 * Environment values are data: parsed as UUIDs, never used to build a path. */
#include "private/gpu.h"

#include <ctype.h>
#include <dirent.h>
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
#define INFO_MAX 4096          /* /proc/driver/nvidia/gpus/<bus>/information */

/* ------------------------------------------------------------------ */
/* NVIDIA /proc/driver/nvidia/gpus/<bus>/information                    */
/* ------------------------------------------------------------------ */

typedef ngi_nv_proc_gpu nv_proc_gpu;

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
    DIR *d = ngi_opendir_path(dir, sizeof dir, fsroot, "/proc/driver/nvidia/gpus");
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d)) && *n < max) {
        nv_proc_gpu g;
        char path[PATH_MAX], text[INFO_MAX], tmp[64];
        if (de->d_name[0] == '.' || ngi_busid_normalize(de->d_name, g.bus))
            continue;
        if (ngi_join(path, sizeof(path), dir, de->d_name, "/information") ||
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

int ngi_nv_proc_scan(const char *fsroot, ngi_nv_proc_gpu *out, unsigned max, unsigned *n)
{
    return nv_proc_scan(fsroot, out, max, n);
}

static int is_live_root(const char *fsroot)
{
    return !fsroot || !*fsroot || strcmp(fsroot, "/") == 0;
}

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
    /* The name comes from gres.conf (a file): shown escaped. */
    char shown[1024];
    ngi_escape_bytes(device_file, strlen(device_file), shown, sizeof shown, NGI_ESC_BACKSLASH);
    if (stat(device_file, &st) != 0)
        return ngi_fail(err, errlen, "%s: %s", shown, strerror(errno));
    if (!S_ISCHR(st.st_mode))
        return ngi_fail(err, errlen, "%s is not a character device", shown);
    unsigned maj = major(st.st_rdev), min = minor(st.st_rdev);
    if (maj == NV_MAJOR) {
        nv_proc_gpu g[NG_MAX_GPUS];
        unsigned n = 0;
        if (min >= 255)
            return ngi_fail(err, errlen, "%s is the NVIDIA control device (195:%u), not a GPU",
                           shown, min);
        if (!nv_proc_scan(fsroot, g, NG_MAX_GPUS, &n))
            for (unsigned i = 0; i < n; i++)
                if (g[i].minor == (int)min)
                    return ngi_strlcpy(busid, g[i].bus, NG_BUSID_LEN);
        /* NVML only describes the machine we run on. */
        if (is_live_root(fsroot) && !ngi_nvml_minor_bus(min, busid))
            return 0;
        return ngi_fail(err, errlen,
                       "%s (195:%u): no NVIDIA GPU with Device Minor %u in "
                       "%s/proc/driver/nvidia/gpus/*/information%s",
                       shown, min, min, is_live_root(fsroot) ? "" : fsroot,
                       is_live_root(fsroot) ? " nor in NVML" : "");
    }
    if (!char_dev_bus(fsroot, maj, min, busid))
        return 0;
    return ngi_fail(err, errlen, "%s (%u:%u): no PCI device behind %s/sys/dev/char/%u:%u/device",
                   shown, maj, min, is_live_root(fsroot) ? "" : fsroot, maj, min);
}

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
    DIR *d = ngi_opendir_path(dir, sizeof dir, fsroot, "/sys/class/drm");
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d)) && *n < max) {
        unsigned minor;
        char tail, path[PATH_MAX], text[32];
        if (sscanf(de->d_name, "renderD%u%c", &minor, &tail) != 1 || minor > 1024)
            continue;
        if (ngi_join(path, sizeof(path), dir, de->d_name, "/device/vendor") ||
            ngi_read_small_file(path, text, sizeof(text)) ||
            strtoul(text, NULL, 16) != vendor)
            continue;
        if (ngi_join(path, sizeof(path), dir, de->d_name, "/device") ||
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
int ngi_nv_uuid_bus(const char *fsroot, const char *var, const char *tok,
                       char bus[NG_BUSID_LEN], char *err, size_t errlen)
{
    char parent[NGI_UUID_MAX], t[NGI_SHOW_MAX * 4 + 8];
    int no_nvml = 0;
    /* The token is the task's environment: shown escaped. */
    ngi_show_bytes(tok, strlen(tok), t, sizeof t);
    if (!strncasecmp(tok, "MIG-GPU-", 8)) {
        /* Old MIG form (drivers < 470.42.01): the parent GPU UUID is inside. */
        size_t n = strcspn(tok + 4, "/");
        unsigned gi, ci;
        char tail;
        if (n >= sizeof(parent) || tok[4 + n] != '/' ||
            sscanf(tok + 4 + n, "/%u/%u%c", &gi, &ci, &tail) != 2)
            return ngi_fail(err, errlen, "%s: malformed MIG UUID '%s' (want MIG-GPU-<uuid>/<gi>/<ci>)",
                           var, t);
        memcpy(parent, tok + 4, n);
        parent[n] = '\0';
        if (uuid_body_ok(parent + 4, 64) < 0)
            return ngi_fail(err, errlen, "%s: malformed MIG UUID '%s'", var, t);
        int rc = nv_proc_uuid_bus(fsroot, parent, bus);
        if (rc == 0 || (rc > 0 && !ngi_nvml_uuid_bus(parent, bus, &no_nvml)))
            return 0;
        return ngi_fail(err, errlen, "%s: MIG device '%s': parent GPU %s not found", var, t,
                       parent);
    }
    const char *body = tok + 4;
    if (uuid_body_ok(body, 64) < 0)
        return ngi_fail(err, errlen, "%s: malformed UUID '%s'", var, t);
    if (!strncasecmp(tok, "GPU-", 4)) {
        int rc = nv_proc_uuid_bus(fsroot, tok, bus);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return ngi_fail(err, errlen, "%s: UUID prefix '%s' matches several GPUs", var, t);
    }
    /* New MIG form MIG-<uuid> (and GPU UUIDs /proc lacks): NVML only. */
    if (!ngi_nvml_uuid_bus(tok, bus, &no_nvml))
        return 0;
    if (no_nvml)
        return ngi_fail(err, errlen, "%s: cannot identify '%s': not in /proc/driver/nvidia and "
                       "NVML (libnvidia-ml.so.1) is not available", var, t);
    return ngi_fail(err, errlen, "%s: no GPU with UUID '%s'", var, t);
}

/* AMD "GPU-<hex unique id>" (ROCR_VISIBLE_DEVICES) -> bus id via the
 * amdgpu sysfs file /sys/class/drm/cardN/device/unique_id. */
int ngi_amd_uuid_bus(const char *fsroot, const char *var, const char *tok,
                        char bus[NG_BUSID_LEN], char *err, size_t errlen)
{
    const char *body = tok + 4;
    char *end, t[NGI_SHOW_MAX * 4 + 8];
    ngi_show_bytes(tok, strlen(tok), t, sizeof t);   /* the task's environment */
    if (strlen(body) > 16 || uuid_body_ok(body, 16) < 0 || strchr(body, '-'))
        return ngi_fail(err, errlen, "%s: malformed AMD UUID '%s' (want GPU-<16 hex digits>)", var,
                       t);
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
            if (ngi_join(path, sizeof(path), dir, de->d_name, "/device/unique_id") ||
                ngi_read_small_file(path, text, sizeof(text)) ||
                strtoull(text, &end, 16) != want || end == text)
                continue;
            if (!ngi_join(path, sizeof(path), dir, de->d_name, "/device") &&
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
