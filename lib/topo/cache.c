/* Topology cache: the node's live topology (with I/O devices) discovered
 * once and written as hwloc XML, plus a stamp that binds the XML to the
 * machine state it describes. Loading it back skips live discovery, the
 * dominant per-step cost (docs/performance.md).
 *
 * Trust: the cache is read inside slurmstepd, so only root's files count.
 * Every directory from / to the cache must be owned by root and writable
 * by nobody else (sticky /tmp included: a user creates the directory there
 * first), no component may be a symlink, and each file must be a regular
 * root-owned file without group/other write, of bounded size, opened with
 * O_NOFOLLOW|O_NONBLOCK (a FIFO neither blocks nor passes). Anything else
 * means live discovery, with the reason in @p why.
 *
 * Files in the cache directory (mode 0644, directory root-owned 0755):
 *   topology.xml    hwloc XML export, written without the trailing NUL and
 *                   without identifying infos (serials, UUIDs, asset tags)
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
 * topology, never a partial file.
 *
 * This file is the read side (below topology.c, which uses the cache) and
 * the stamp and trust rules the writer (cache_write.c) shares. */
#include "private/topo.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAMP_MAGIC "numaguard-topology-cache 1"
#define XML_MAX (64u << 20)       /* XML bound: 64 MiB (largest real ones ~1 MiB) */

typedef ngi_cache_stamp stamp;

/* FNV-1a 64-bit: cheap, detects truncation and damage (not an attacker:
 * the ownership and modes of the files and of their path are checked for
 * that). */
unsigned long long ngi_cache_fnv1a64(const char *buf, size_t len)
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
    if (ngi_read_small_file(path, buf, len) < 0) {
        ngi_strlcpy(buf, dflt, len);
        return;
    }
    buf[strcspn(buf, "\n")] = '\0';
    if (!buf[0])
        ngi_strlcpy(buf, dflt, len);
}

/* The running machine's state. Always the real "/": hwloc discovers the
 * real machine whatever fsroot the library is given. */
void ngi_cache_stamp_now(stamp *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->hwloc, sizeof s->hwloc, "0x%08x", hwloc_get_api_version());
    read_line("/sys/devices/system/cpu/online", s->cpus, sizeof s->cpus, "-");
    read_line("/sys/devices/system/node/online", s->nodes, sizeof s->nodes, "-");
    read_line("/proc/sys/kernel/random/boot_id", s->boot_id, sizeof s->boot_id, "-");
}

int ngi_cache_stamp_format(const stamp *s, char *buf, size_t len)
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
const char *ngi_cache_stamp_mismatch(const stamp *cached, const stamp *now)
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

/* Trusted = root's and writable by nobody else. The reader runs inside
 * slurmstepd (euid = the job's user, real uid root): a file or directory a
 * user could create or replace must never feed hwloc there. */
static int root_only(const struct stat *st)
{
    return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* Open @p name inside @p parent as a directory, never through a symlink;
 * with @p create, make it (0755) when missing. -1 with errno. */
static int open_component(int parent, const char *name, int create)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT || !create)
        return fd;
    int made = mkdirat(parent, name, 0755) == 0;
    if (!made && errno != EEXIST)
        return -1;
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && made && fchmod(fd, 0755) < 0) { /* umask-proof */
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Why component @p prefix (the path so far) could not be opened. */
static int component_error(int parent, const char *name, const char *prefix, char *err,
                           size_t errlen)
{
    int e = errno;
    struct stat st;
    if ((e == ELOOP || e == ENOTDIR) &&
        fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        return ngi_fail(err, errlen, "'%.200s' is a symbolic link (the cache path must have none)",
                       prefix);
    if (e == ENOTDIR || e == ELOOP)
        return ngi_fail(err, errlen, "'%.200s' is not a directory", prefix);
    return ngi_fail(err, errlen, "'%.200s': %s", prefix, strerror(e));
}

/* fd is a directory that only root can change; @p shown names it. */
static int dir_fd_trusted(int fd, const char *shown, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return ngi_fail(err, errlen, "'%.200s': %s", shown, strerror(errno));
    if (!root_only(&st))
        return ngi_fail(err, errlen, "'%.200s' is writable by others or not owned by root (every "
                                    "directory from / to the cache must be root's alone)", shown);
    return 0;
}

/* Open DIR one component at a time from "/" (openat + O_NOFOLLOW: no
 * symlink, nothing swapped between check and use) and require every
 * directory on the way to be root's and writable by nobody else. Sticky
 * directories such as /tmp do not count: there a user creates the cache
 * directory before root does. Returns the directory's fd, or -1. */
int ngi_cache_open_dir(const char *dir, int create, char *err, size_t errlen)
{
    char shown[1100] = "", name[256];
    size_t slen = 0;
    if (dir[0] != '/')
        return ngi_fail(err, errlen, "'%.200s' is not an absolute path", dir);
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return ngi_fail(err, errlen, "/: %s", strerror(errno));
    if (dir_fd_trusted(fd, "/", err, errlen) < 0)
        goto fail;
    for (const char *p = dir + strspn(dir, "/"); *p; p += strspn(p, "/")) {
        size_t k = strcspn(p, "/");
        if (k >= sizeof name || slen + k + 2 > sizeof shown) {
            ngi_fail(err, errlen, "cache path too long");
            goto fail;
        }
        memcpy(name, p, k);
        name[k] = '\0';
        p += k;
        if (strcmp(name, ".") == 0)
            continue;
        slen += (size_t)snprintf(shown + slen, sizeof shown - slen, "/%s", name);
        if (strcmp(name, "..") == 0) {
            ngi_fail(err, errlen, "'%.200s': '..' in the cache path", dir);
            goto fail;
        }
        int next = open_component(fd, name, create && !p[strspn(p, "/")]);
        if (next < 0) {
            component_error(fd, name, shown, err, errlen);
            goto fail;
        }
        close(fd);
        fd = next;
        if (dir_fd_trusted(fd, shown, err, errlen) < 0)
            goto fail;
    }
    return fd;
fail:
    close(fd);
    return -1;
}

/* Read DIRFD/NAME (regular, root's alone, no symlink, at most max bytes)
 * into a malloc'd NUL-terminated buffer, through the library's one reader
 * (lib/base: O_NOFOLLOW|O_NONBLOCK, so a FIFO planted under the name never
 * hangs slurmstepd; fstat refuses it). */
static int read_trusted(int dfd, const char *name, size_t max, char **out, size_t *out_len,
                        char *err, size_t errlen)
{
    struct stat st;
    char why[128];
    if (ngi_read_regular_at(dfd, name, 0, max, out, out_len, &st, why, sizeof why) < 0)
        return ngi_fail(err, errlen, "%s: %s", name, why);
    if (!root_only(&st) || *out_len == 0) {
        free(*out);
        *out = NULL;
        return ngi_fail(err, errlen, "%s: %s", name,
                        *out_len ? "not a regular file owned by root without group/other write"
                                 : "size 0 out of range");
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* What the XML may not carry                                           */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Public API                                                           */
/* ------------------------------------------------------------------ */

/* Validate DIR against the running machine; on success *xml holds the XML
 * (NUL-terminated, *len bytes without the NUL). */
static int cache_read(const char *dir, char **xml, size_t *len, char *why, size_t whylen)
{
    char *text = NULL;
    size_t tlen;
    stamp cached, now;
    *xml = NULL;
    if (!dir || !*dir || strlen(dir) > 1024)
        return ngi_fail(why, whylen, "no cache directory");
    int dfd = ngi_cache_open_dir(dir, 0, why, whylen);
    if (dfd < 0)
        return -1;
    int rc = -1;
    if (read_trusted(dfd, NG_TOPOLOGY_CACHE_STAMP, NGI_CACHE_STAMP_MAX, &text, &tlen, why, whylen) < 0)
        goto out;
    int bad = stamp_parse(text, &cached);
    free(text);
    if (bad) {
        ngi_fail(why, whylen, "malformed stamp");
        goto out;
    }
    ngi_cache_stamp_now(&now);
    const char *diff = ngi_cache_stamp_mismatch(&cached, &now);
    if (diff) {
        ngi_fail(why, whylen, "stale: %s changed", diff);
        goto out;
    }
    if (read_trusted(dfd, NG_TOPOLOGY_CACHE_XML, XML_MAX, xml, len, why, whylen) < 0)
        goto out;
    if (*len != cached.xml_bytes || ngi_cache_fnv1a64(*xml, *len) != cached.xml_hash) {
        free(*xml);
        *xml = NULL;
        ngi_fail(why, whylen, "XML does not match its stamp (damaged or being rewritten)");
        goto out;
    }
    rc = 0;
out:
    close(dfd);
    return rc;
}

/* For admins and tests, not the hot path: the full check, hwloc parse included. */
int ng_topology_cache_valid(const char *dir, char *why, size_t whylen)
{
    hwloc_topology_t hw;
    if (hwloc_topology_init(&hw) < 0)
        return ngi_fail(why, whylen, "hwloc_topology_init failed"), 0;
    int ok = ngi_hwloc_set_io_filters(hw) == 0 &&
             ngi_cache_use(hw, dir, why, whylen) == 0;
    if (ok && (hwloc_topology_load(hw) < 0 || hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU) <= 0)) {
        ngi_fail(why, whylen, "hwloc cannot load the cached XML");
        ok = 0;
    }
    hwloc_topology_destroy(hw);
    return ok;
}

int ngi_cache_use(hwloc_topology_t hw, const char *dir, char *why, size_t whylen)
{
    char *xml;
    size_t len;
    if (!hw)
        return ngi_fail(why, whylen, "no hwloc topology");
    if (cache_read(dir, &xml, &len, why, whylen) < 0)
        return -1;
    /* The XML describes this machine: let hwloc apply our own cgroup's
     * restrictions and allow binding through this topology. */
    unsigned long flags = hwloc_topology_get_flags(hw) | HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
                          HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES;
    int rc = 0;
    if (hwloc_topology_set_flags(hw, flags) < 0)
        rc = ngi_fail(why, whylen, "hwloc: cannot set flags: %s", strerror(errno));
    /* hwloc parses (libxml) or copies (minimal parser) the buffer here;
     * the size it expects includes the NUL. */
    else if (hwloc_topology_set_xmlbuffer(hw, xml, (int)len + 1) < 0)
        rc = ngi_fail(why, whylen, "hwloc cannot parse the cached XML: %s", strerror(errno));
    free(xml);
    return rc;
}
