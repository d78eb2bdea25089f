/* Topology cache: the node's live topology (with I/O devices) discovered
 * once and written as hwloc XML, plus a stamp that binds the XML to the
 * machine state it describes. Loading it back skips live discovery, the
 * dominant per-step cost (docs/performance.md).
 *
 * Files in the cache directory (mode 0644, directory root-owned 0755):
 *   topology.xml    hwloc XML export, written without the trailing NUL
 *   topology.stamp  "key value" lines:
 *       numaguard-topology-cache 1
 *       hwloc 0x00020900            (hwloc_get_api_version() of the writer)
 *       cpus 0-1                    (/sys/devices/system/cpu/online)
 *       nodes 0                     (/sys/devices/system/node/online, "-" if absent)
 *       boot_id 9a89...             (/proc/sys/kernel/random/boot_id)
 *       xml_bytes 12345
 *       xml_fnv1a64 0123456789abcdef
 * The XML is renamed into place before the stamp; since the stamp carries
 * the XML's size and hash, a reader that sees a new XML with an old stamp
 * (or a damaged XML) rejects the pair and discovers live: never a wrong
 * topology, never a partial file. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAMP_MAGIC "numaguard-topology-cache 1"
#define STAMP_MAX 16384           /* stamp file bound */
#define XML_MAX (64u << 20)       /* XML bound: 64 MiB (largest real ones ~1 MiB) */
#define FIELD_MAX 4096            /* one stamp value (a CPU list) */

/** The machine state a cache is valid for. */
typedef struct stamp {
    char hwloc[32];
    char cpus[FIELD_MAX];
    char nodes[FIELD_MAX];
    char boot_id[64];
    unsigned long long xml_bytes;
    unsigned long long xml_hash;
} stamp;

/* FNV-1a 64-bit: cheap, detects truncation and damage (not an attacker:
 * the files' ownership and modes are checked for that). */
static unsigned long long fnv1a64(const char *buf, size_t len)
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)buf[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* One line of a small kernel file, trimmed; @p dflt when absent or empty. */
static void read_line(const char *path, char *buf, size_t len, const char *dflt)
{
    if (ng_read_small_file(path, buf, len) < 0) {
        ng_strlcpy(buf, dflt, len);
        return;
    }
    buf[strcspn(buf, "\n")] = '\0';
    if (!buf[0])
        ng_strlcpy(buf, dflt, len);
}

/* The running machine's state. Always the real "/": hwloc discovers the
 * real machine whatever fsroot the library is given. */
static void stamp_current(stamp *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->hwloc, sizeof s->hwloc, "0x%08x", hwloc_get_api_version());
    read_line("/sys/devices/system/cpu/online", s->cpus, sizeof s->cpus, "-");
    read_line("/sys/devices/system/node/online", s->nodes, sizeof s->nodes, "-");
    read_line("/proc/sys/kernel/random/boot_id", s->boot_id, sizeof s->boot_id, "-");
}

static int stamp_format(const stamp *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s\nhwloc %s\ncpus %s\nnodes %s\nboot_id %s\n"
                     "xml_bytes %llu\nxml_fnv1a64 %016llx\n", STAMP_MAGIC, s->hwloc,
                     s->cpus, s->nodes, s->boot_id, s->xml_bytes, s->xml_hash);
    return (n < 0 || (size_t)n >= len) ? -1 : n;
}

/* Copy the value of line "key value" into dst; -1 if absent or too long. */
static int stamp_field(const char *text, const char *key, char *dst, size_t len)
{
    size_t klen = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, klen) != 0 || p[klen] != ' ')
            continue;
        const char *v = p + klen + 1;
        size_t n = strcspn(v, "\n");
        if (n == 0 || n >= len)
            return -1;
        memcpy(dst, v, n);
        dst[n] = '\0';
        return 0;
    }
    return -1;
}

static int stamp_parse(const char *text, stamp *s)
{
    char num[32], hash[32];
    char *end;
    memset(s, 0, sizeof *s);
    if (strncmp(text, STAMP_MAGIC "\n", sizeof STAMP_MAGIC) != 0 ||
        stamp_field(text, "hwloc", s->hwloc, sizeof s->hwloc) < 0 ||
        stamp_field(text, "cpus", s->cpus, sizeof s->cpus) < 0 ||
        stamp_field(text, "nodes", s->nodes, sizeof s->nodes) < 0 ||
        stamp_field(text, "boot_id", s->boot_id, sizeof s->boot_id) < 0 ||
        stamp_field(text, "xml_bytes", num, sizeof num) < 0 ||
        stamp_field(text, "xml_fnv1a64", hash, sizeof hash) < 0)
        return -1;
    errno = 0;
    s->xml_bytes = strtoull(num, &end, 10);
    if (errno || *end)
        return -1;
    s->xml_hash = strtoull(hash, &end, 16);
    return (errno || *end) ? -1 : 0;
}

/* Which machine property differs, or NULL when the stamp matches. */
static const char *stamp_mismatch(const stamp *cached, const stamp *now)
{
    if (strcmp(cached->hwloc, now->hwloc) != 0)
        return "hwloc version";
    if (strcmp(cached->cpus, now->cpus) != 0)
        return "online CPUs";
    if (strcmp(cached->nodes, now->nodes) != 0)
        return "online NUMA nodes";
    if (strcmp(cached->boot_id, now->boot_id) != 0)
        return "boot id";
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Files                                                                */
/* ------------------------------------------------------------------ */

/* Trusted = owned by root or by us, and not writable by group or others:
 * a user must not be able to plant a topology that root-run code trusts. */
static int trusted(const struct stat *st)
{
    return (st->st_uid == 0 || st->st_uid == geteuid()) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static int dir_check(const char *dir, int create, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) < 0 && errno == ENOENT && create) {
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
            return ng_fail(err, errlen, "cannot create '%.200s': %s", dir, strerror(errno));
        if (lstat(dir, &st) == 0 && chmod(dir, 0755) < 0) /* umask-proof */
            return ng_fail(err, errlen, "cannot chmod '%.200s': %s", dir, strerror(errno));
    }
    if (lstat(dir, &st) < 0)
        return ng_fail(err, errlen, "'%.200s': %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return ng_fail(err, errlen, "'%.200s' is not a directory", dir);
    if (!trusted(&st))
        return ng_fail(err, errlen, "'%.200s' is writable by others or not owned by root", dir);
    return 0;
}

static int join(char *buf, size_t len, const char *dir, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", dir, name);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* Read DIR/NAME (regular, trusted, no symlink, at most max bytes) into a
 * malloc'd NUL-terminated buffer. */
static int read_trusted(const char *dir, const char *name, size_t max, char **out,
                        size_t *out_len, char *err, size_t errlen)
{
    char path[4096];
    if (join(path, sizeof path, dir, name) < 0)
        return ng_fail(err, errlen, "cache path too long");
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return ng_fail(err, errlen, "%s: %s", name, strerror(errno));
    struct stat st;
    int rc = -1;
    char *buf = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !trusted(&st)) {
        ng_fail(err, errlen, "%s: not a regular root-owned file of mode 0644", name);
        goto out;
    }
    if (st.st_size <= 0 || (unsigned long long)st.st_size > max) {
        ng_fail(err, errlen, "%s: size %lld out of range", name, (long long)st.st_size);
        goto out;
    }
    size_t len = (size_t)st.st_size, got = 0;
    if (!(buf = malloc(len + 1))) {
        ng_fail(err, errlen, "out of memory");
        goto out;
    }
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got != len) {
        ng_fail(err, errlen, "%s: short read", name);
        goto out;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    close(fd);
    return rc;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* DIR/NAME := data, atomically: a hidden temporary in the same directory,
 * mode 0644, fsync'd, then renamed over the old file. */
static int write_atomic(const char *dir, const char *name, const char *data, size_t len,
                        char *err, size_t errlen)
{
    char tmp[4096], path[4096];
    if (snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, name) >= (int)sizeof tmp ||
        join(path, sizeof path, dir, name) < 0)
        return ng_fail(err, errlen, "cache path too long");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return ng_fail(err, errlen, "cannot create a file in '%.200s': %s", dir, strerror(errno));
    int e = 0;
    if (fchmod(fd, 0644) < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0)
        e = errno ? errno : EIO;
    if (close(fd) < 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) < 0)
        e = errno;
    if (e) {
        unlink(tmp);
        return ng_fail(err, errlen, "cannot write '%.200s': %s", path, strerror(e));
    }
    return 0;
}

/* Make the renames durable (a crash must not leave a stamp without XML). */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* ------------------------------------------------------------------ */
/* Public API                                                           */
/* ------------------------------------------------------------------ */

/* Export the live topology as XML (malloc'd, no trailing NUL). */
static int export_live(char **xml, size_t *len, char *err, size_t errlen)
{
    /* Complete topology: a reader restricts it to its own cgroup
     * (THISSYSTEM_ALLOWED_RESOURCES), whatever cgroup the writer ran in. */
    ng_topology_options o = {.include_disallowed = 1};
    ng_topology *t = NULL;
    if (ng_topology_load(&t, &o, err, errlen) < 0)
        return -1;
    char *buf = NULL;
    int blen = 0;
    hwloc_topology_t hw = ng_topology_hwloc(t);
    int rc = hwloc_topology_export_xmlbuffer(hw, &buf, &blen, 0);
    *xml = NULL;
    if (rc == 0 && blen > 1) {
        *len = (size_t)blen - 1; /* hwloc counts the ending NUL */
        if ((*xml = malloc(*len + 1)) != NULL)
            memcpy(*xml, buf, *len + 1);
    }
    /* Freed while the topology lives: hwloc needs its XML callbacks for it. */
    if (rc == 0)
        hwloc_free_xmlbuffer(hw, buf);
    ng_topology_free(t);
    if (rc < 0 || blen <= 1)
        return ng_fail(err, errlen, "hwloc cannot export the topology: %s", strerror(errno));
    return *xml ? 0 : ng_fail(err, errlen, "out of memory");
}

int ng_topology_cache_write(const char *dir, char *err, size_t errlen)
{
    if (!dir || !*dir || strlen(dir) > 1024)
        return ng_fail(err, errlen, "topology cache: no or overlong directory");
    /* These make hwloc describe another machine (test clusters start slurmd
     * with HWLOC_XMLFILE); a cache of that would be taken for this node's. */
    static const char *const other[] = {"HWLOC_XMLFILE", "HWLOC_SYNTHETIC", "HWLOC_FSROOT",
                                        "HWLOC_COMPONENTS"};
    for (size_t i = 0; i < sizeof(other) / sizeof(*other); i++)
        if (getenv(other[i]))
            return ng_fail(err, errlen, "topology cache: %s is set, hwloc would not "
                                        "describe this machine", other[i]);
    if (dir_check(dir, 1, err, errlen) < 0)
        return -1;
    stamp before, after;
    stamp_current(&before);
    char *xml = NULL;
    size_t len = 0;
    if (export_live(&xml, &len, err, errlen) < 0)
        return -1;
    stamp_current(&after);
    /* A CPU going on/offline during discovery would stamp the wrong state. */
    const char *diff = stamp_mismatch(&before, &after);
    if (diff) {
        free(xml);
        return ng_fail(err, errlen, "topology cache: %s changed during discovery; not written", diff);
    }
    after.xml_bytes = len;
    after.xml_hash = fnv1a64(xml, len);
    char text[STAMP_MAX];
    int rc = stamp_format(&after, text, sizeof text) < 0 ? ng_fail(err, errlen, "stamp too long")
           : write_atomic(dir, NG_TOPOLOGY_CACHE_XML, xml, len, err, errlen) < 0 ? -1
           : write_atomic(dir, NG_TOPOLOGY_CACHE_STAMP, text, strlen(text), err, errlen);
    free(xml);
    if (rc == 0)
        sync_dir(dir);
    return rc;
}

/* Validate DIR against the running machine; on success *xml holds the XML
 * (NUL-terminated, *len bytes without the NUL). */
static int cache_read(const char *dir, char **xml, size_t *len, char *why, size_t whylen)
{
    char *text = NULL;
    size_t tlen;
    stamp cached, now;
    *xml = NULL;
    if (!dir || !*dir || strlen(dir) > 1024)
        return ng_fail(why, whylen, "no cache directory");
    if (dir_check(dir, 0, why, whylen) < 0 ||
        read_trusted(dir, NG_TOPOLOGY_CACHE_STAMP, STAMP_MAX, &text, &tlen, why, whylen) < 0)
        return -1;
    int bad = stamp_parse(text, &cached);
    free(text);
    if (bad)
        return ng_fail(why, whylen, "malformed stamp");
    stamp_current(&now);
    const char *diff = stamp_mismatch(&cached, &now);
    if (diff)
        return ng_fail(why, whylen, "stale: %s changed", diff);
    if (read_trusted(dir, NG_TOPOLOGY_CACHE_XML, XML_MAX, xml, len, why, whylen) < 0)
        return -1;
    if (*len != cached.xml_bytes || fnv1a64(*xml, *len) != cached.xml_hash) {
        free(*xml);
        *xml = NULL;
        return ng_fail(why, whylen, "XML does not match its stamp (damaged or being rewritten)");
    }
    return 0;
}

/* For admins and tests, not the hot path: the full check, hwloc parse included. */
int ng_topology_cache_valid(const char *dir, char *why, size_t whylen)
{
    hwloc_topology_t hw;
    if (hwloc_topology_init(&hw) < 0)
        return ng_fail(why, whylen, "hwloc_topology_init failed"), 0;
    int ok = ng_hwloc_set_io_filters(hw) == 0 &&
             ng_topology_cache_use(hw, dir, why, whylen) == 0;
    if (ok && (hwloc_topology_load(hw) < 0 || hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU) <= 0)) {
        ng_fail(why, whylen, "hwloc cannot load the cached XML");
        ok = 0;
    }
    hwloc_topology_destroy(hw);
    return ok;
}

int ng_topology_cache_use(hwloc_topology_t hw, const char *dir, char *why, size_t whylen)
{
    char *xml;
    size_t len;
    if (!hw)
        return ng_fail(why, whylen, "no hwloc topology");
    if (cache_read(dir, &xml, &len, why, whylen) < 0)
        return -1;
    /* The XML describes this machine: let hwloc apply our own cgroup's
     * restrictions and allow binding through this topology. */
    unsigned long flags = hwloc_topology_get_flags(hw) | HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
                          HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES;
    int rc = 0;
    if (hwloc_topology_set_flags(hw, flags) < 0)
        rc = ng_fail(why, whylen, "hwloc: cannot set flags: %s", strerror(errno));
    /* hwloc parses (libxml) or copies (minimal parser) the buffer here;
     * the size it expects includes the NUL. */
    else if (hwloc_topology_set_xmlbuffer(hw, xml, (int)len + 1) < 0)
        rc = ng_fail(why, whylen, "hwloc cannot parse the cached XML: %s", strerror(errno));
    free(xml);
    return rc;
}

int ng_topology_lean_hwloc(void)
{
    if (getenv("HWLOC_PLUGINS_BLACKLIST"))
        return 0;
    return setenv("HWLOC_PLUGINS_BLACKLIST", NG_HWLOC_LEAN_PLUGINS, 0) == 0;
}
