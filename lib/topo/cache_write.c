/* Writing the node's topology cache (ng_topology_cache_write): discover the
 * live node once with ng_topology_load, strip identifying infos, write the
 * XML and its stamp atomically into a trusted directory. Above topology.c
 * (it loads a topology); the read side is cache.c, below it. The format
 * and the trust rules are described in cache.c. */
#include "private/topo.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* DIRFD/NAME := data, atomically: a hidden temporary in the same directory
 * (O_EXCL, never through a symlink), mode 0644, fsync'd, then renamed over
 * the old file. */
static int write_atomic(int dfd, const char *name, const char *data, size_t len, char *err,
                        size_t errlen)
{
    static unsigned serial;
    char tmp[300];
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(tmp, sizeof tmp, ".%s.%ld.%u", name, (long)getpid(), serial++);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return ngi_fail(err, errlen, "cannot create a file beside %s: %s", name, strerror(errno));
    int e = 0;
    if (fchmod(fd, 0644) < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0)
        e = errno ? errno : EIO;
    if (close(fd) < 0 && !e)
        e = errno;
    if (!e && renameat(dfd, tmp, dfd, name) < 0)
        e = errno;
    if (e) {
        unlinkat(dfd, tmp, 0);
        return ngi_fail(err, errlen, "cannot write %s: %s", name, strerror(e));
    }
    return 0;
}

/* An info attribute that identifies this very box (DMI serials, the
 * product UUID, asset tags, disk and GPU serials or UUIDs). slurmd reads
 * them as root; the cache is world-readable. Nothing numaguard decides
 * uses them (GPU UUIDs come from the driver, not from hwloc). */
static int identifying(const char *name, size_t len)
{
    static const char *const words[] = {"serial", "uuid", "asset"};
    char low[128];
    if (len >= sizeof low)
        return 1;   /* no hwloc info name is that long: drop it */
    for (size_t i = 0; i < len; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[len] = '\0';
    for (size_t i = 0; i < NGI_ARRAY_LEN(words); i++)
        if (strstr(low, words[i]))
            return 1;
    return 0;
}

size_t ngi_cache_strip_identifiers(char *xml, size_t len)
{
    static const char tag[] = "<info name=\"";
    size_t out = 0;
    for (size_t i = 0; i < len;) {
        const char *line = xml + i;
        const char *nl = memchr(line, '\n', len - i);
        size_t n = nl ? (size_t)(nl - line) + 1 : len - i;
        size_t ws = 0;
        while (ws < n && (line[ws] == ' ' || line[ws] == '\t'))
            ws++;
        /* hwloc writes one <info name="..." value="..."/> element per line,
         * the value escaped (no raw quote or newline inside). */
        int drop = 0;
        if (n - ws > sizeof tag - 1 && memcmp(line + ws, tag, sizeof tag - 1) == 0) {
            const char *nm = line + ws + sizeof tag - 1;
            const char *q = memchr(nm, '"', n - ws - (sizeof tag - 1));
            drop = q && identifying(nm, (size_t)(q - nm));
            size_t end = n - (nl != NULL);
            if (drop && (end < ws + 2 || memcmp(line + end - 2, "/>", 2) != 0))
                return (size_t)-1;   /* not hwloc's layout: refuse, never leak */
        }
        if (!drop) {
            memmove(xml + out, line, n);
            out += n;
        }
        i += n;
    }
    return out;
}

int ng_topology_export_xml(const ng_topology *t, char **xml, size_t *len, char *err,
                           size_t errlen)
{
    char *buf = NULL;
    int blen = 0;
    if (!t || !xml || !len)
        return ngi_fail(err, errlen, "ng_topology_export_xml: no topology or no output");
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
    if (rc < 0 || blen <= 1)
        return ngi_fail(err, errlen, "hwloc cannot export the topology: %s", strerror(errno));
    if (!*xml)
        return ngi_fail(err, errlen, "out of memory");
    size_t kept = ngi_cache_strip_identifiers(*xml, *len);
    if (kept == (size_t)-1) {
        free(*xml);
        *xml = NULL;
        return ngi_fail(err, errlen, "unexpected XML layout: cannot strip serial numbers");
    }
    *len = kept;
    (*xml)[kept] = '\0';
    return 0;
}

/* Export the live topology as XML (malloc'd, NUL after *len bytes),
 * without identifying attributes. */
static int export_live(char **xml, size_t *len, char *err, size_t errlen)
{
    /* Complete topology: a reader restricts it to its own cgroup
     * (THISSYSTEM_ALLOWED_RESOURCES), whatever cgroup the writer ran in. */
    ng_topology_options o = {.include_disallowed = 1};
    ng_topology *t = NULL;
    if (ng_topology_load(&t, &o, err, errlen) < 0)
        return -1;
    int rc = ng_topology_export_xml(t, xml, len, err, errlen);
    ng_topology_free(t);
    return rc;
}

/* These make hwloc describe another machine (test clusters start slurmd
 * with HWLOC_XMLFILE); a cache of that would be taken for this node's. */
static int describes_other_machine(char *err, size_t errlen)
{
    static const char *const other[] = {"HWLOC_XMLFILE", "HWLOC_SYNTHETIC", "HWLOC_FSROOT",
                                        "HWLOC_COMPONENTS"};
    for (size_t i = 0; i < NGI_ARRAY_LEN(other); i++)
        if (getenv(other[i]))
            return ngi_fail(err, errlen, "topology cache: %s is set, hwloc would not "
                                        "describe this machine", other[i]);
    return 0;
}

/* Discover, stamp and write into the open, trusted directory @p dfd. */
static int write_into(int dfd, char *err, size_t errlen)
{
    ngi_cache_stamp before, after;
    ngi_cache_stamp_now(&before);
    char *xml = NULL;
    size_t len = 0;
    if (export_live(&xml, &len, err, errlen) < 0)
        return -1;
    ngi_cache_stamp_now(&after);
    /* A CPU going on/offline during discovery would stamp the wrong state. */
    const char *diff = ngi_cache_stamp_mismatch(&before, &after);
    if (diff) {
        free(xml);
        return ngi_fail(err, errlen, "topology cache: %s changed during discovery; not written", diff);
    }
    after.xml_bytes = len;
    after.xml_hash = ngi_cache_fnv1a64(xml, len);
    char text[NGI_CACHE_STAMP_MAX];
    int rc = ngi_cache_stamp_format(&after, text, sizeof text) < 0 ? ngi_fail(err, errlen, "stamp too long")
           : write_atomic(dfd, NG_TOPOLOGY_CACHE_XML, xml, len, err, errlen) < 0 ? -1
           : write_atomic(dfd, NG_TOPOLOGY_CACHE_STAMP, text, strlen(text), err, errlen);
    free(xml);
    if (rc == 0)
        fsync(dfd);   /* the renames durable: never a stamp without its XML */
    return rc;
}

int ng_topology_cache_write(const char *dir, char *err, size_t errlen)
{
    if (!dir || !*dir || strlen(dir) > 1024)
        return ngi_fail(err, errlen, "topology cache: no or overlong directory");
    if (describes_other_machine(err, errlen) < 0)
        return -1;
    /* Readers trust root's files only: anyone else's cache would be ignored. */
    if (geteuid() != 0)
        return ngi_fail(err, errlen, "topology cache: only root writes it (readers trust "
                                    "root's files only)");
    int dfd = ngi_cache_open_dir(dir, 1, err, errlen);
    if (dfd < 0)
        return -1;
    int rc = write_into(dfd, err, errlen);
    close(dfd);
    return rc;
}
