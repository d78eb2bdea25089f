/* Small shared helpers: errors, bounded strings, lists, names. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

int ng_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int ng_strlcpy(char *dst, const char *src, size_t len)
{
    if (!len)
        return -1;
    size_t n = strnlen(src, len);
    if (n == len) {
        memcpy(dst, src, len - 1);
        dst[len - 1] = '\0';
        return -1;
    }
    memcpy(dst, src, n + 1);
    return 0;
}

int ng_path(char *buf, size_t len, const char *fsroot, const char *abs_path)
{
    if (!fsroot || !*fsroot || strcmp(fsroot, "/") == 0)
        fsroot = "";
    int n = snprintf(buf, len, "%s%s", fsroot, abs_path);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* Read from @p fd until EOF or len-1 bytes (NUL added). Returns the count,
 * or -1 when the first read fails (EACCES on another user's environ and
 * numa_maps comes at read time, not at open). Closes @p fd. */
static long read_fd(int fd, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len - 1) {
        ssize_t r = read(fd, buf + got, len - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && got == 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return (long)got;
}

int ng_read_small_file(const char *path, char *buf, size_t len)
{
    if (!len)
        return -1;
    /* O_NOFOLLOW is not used: sysfs paths are symlinks by design. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (read_fd(fd, buf, len) < 0)
        buf[0] = '\0';   /* an unreadable file reads as empty, as before */
    return 0;
}

int ng_open_regular(const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

long ng_read_bounded(const char *path, char *buf, size_t len)
{
    if (!len)
        return -1;
    int fd = ng_open_regular(path);
    return fd < 0 ? -1 : read_fd(fd, buf, len);
}

long ng_read_pid_file(const char *fsroot, int pid, const char *what, char *buf, size_t len)
{
    char rel[96], path[4096];
    int n = pid > 0 ? snprintf(rel, sizeof rel, "/proc/%d%s%s", pid, *what ? "/" : "", what)
                    : snprintf(rel, sizeof rel, "/proc/self%s%s", *what ? "/" : "", what);
    if (n < 0 || (size_t)n >= sizeof rel || ng_path(path, sizeof path, fsroot, rel) < 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return ng_read_bounded(path, buf, len);
}

int ng_busid_normalize(const char *in, char out[NG_BUSID_LEN])
{
    unsigned dom = 0, bus, dev, fn;
    char tail;
    if (!in)
        return -1;
    while (isspace((unsigned char)*in))
        in++;
    size_t n = strnlen(in, 64);
    if (n >= 64)
        return -1;
    if (sscanf(in, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4) {
        /* full form */
    } else if (sscanf(in, "%x:%x.%x%c", &bus, &dev, &fn, &tail) == 3) {
        dom = 0;
    } else {
        return -1;
    }
    if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
        return -1;
    snprintf(out, NG_BUSID_LEN, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    return 0;
}

void ng_nodemask_to_bitmap(const uint64_t *mask, unsigned words, hwloc_bitmap_t set)
{
    hwloc_bitmap_zero(set);
    for (unsigned w = 0; w < words; w++)
        for (unsigned b = 0; b < 64; b++)
            if (mask[w] & (1ull << b))
                hwloc_bitmap_set(set, w * 64 + b);
}

int ng_list_format(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    if (!len)
        return -1;
    buf[0] = '\0';
    if (!set || hwloc_bitmap_iszero(set))
        return 0;
    int n = hwloc_bitmap_list_snprintf(buf, len, set);
    if (n < 0 || (size_t)n >= len)
        return -1;
    return n;
}

int ng_list_parse(const char *text, hwloc_bitmap_t set, unsigned max_index,
                  char *err, size_t errlen)
{
    hwloc_bitmap_zero(set);
    if (!text)
        return ng_fail(err, errlen, "empty list");
    if (strnlen(text, NG_MAX_ARG + 1) > NG_MAX_ARG)
        return ng_fail(err, errlen, "list longer than %d bytes", NG_MAX_ARG);
    const char *p = text;
    if (!*p)
        return ng_fail(err, errlen, "empty list");
    for (;;) {
        char *end;
        if (!isdigit((unsigned char)*p))
            return ng_fail(err, errlen, "'%s': expected a number at '%.16s'", text, p);
        errno = 0;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (errno || a > max_index)
            return ng_fail(err, errlen, "'%s': index out of range (0-%u)", text, max_index);
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return ng_fail(err, errlen, "'%s': expected a number after '-'", text);
            errno = 0;
            b = strtoul(p, &end, 10);
            if (errno || b > max_index)
                return ng_fail(err, errlen, "'%s': index out of range (0-%u)", text, max_index);
            if (b < a)
                return ng_fail(err, errlen, "'%s': range %lu-%lu is reversed", text, a, b);
            p = end;
        }
        hwloc_bitmap_set_range(set, (unsigned)a, (int)b);
        if (*p == '\0')
            return 0;
        if (*p != ',')
            return ng_fail(err, errlen, "'%s': unexpected '%c'", text, *p);
        p++;
    }
}

const char *ng_mem_kind_name(ng_mem_kind kind)
{
    static const char *const names[] = {"DRAM", "HBM", "GPU", "NVM", "CXL", "unknown"};
    return (unsigned)kind < NG_ARRAY_LEN(names) ? names[kind] : "unknown";
}

const char *ng_gpu_vendor_name(ng_gpu_vendor vendor)
{
    static const char *const names[] = {"unknown", "nvidia", "amd", "intel"};
    return (unsigned)vendor < NG_ARRAY_LEN(names) ? names[vendor] : "unknown";
}

const char *ng_policy_kind_name(ng_policy_kind kind)
{
    static const char *const names[] = {"local", "prefer", "interleave", "weighted", "none"};
    return (unsigned)kind < NG_ARRAY_LEN(names) ? names[kind] : "?";
}

const char *ng_mem_mode_name(ng_mem_mode mode)
{
    static const char *const names[] = {"none", "bind", "preferred_many", "interleave",
                                        "weighted_interleave"};
    return (unsigned)mode < NG_ARRAY_LEN(names) ? names[mode] : "?";
}

int ng_gpu_list_format(const ng_topology *topo, const int *idx, unsigned n,
                       char *buf, size_t len)
{
    size_t used = 0;
    if (!len)
        return 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, (unsigned)idx[i]);
        int w = snprintf(buf + used, len - used, "%s%s", i ? "," : "", g ? g->pci_bus_id : "?");
        if (w < 0 || (size_t)w >= len - used) {
            buf[used] = '\0';   /* drop the partial entry; the list stays well-formed */
            break;
        }
        used += (size_t)w;
    }
    return (int)used;
}

int ng_current_cpus(hwloc_bitmap_t set)
{
    /* Grow the mask until the kernel accepts it (EINVAL = too small). */
    for (size_t n = 1024; n <= (1u << 20); n *= 4) {
        cpu_set_t *mask = CPU_ALLOC(n);
        if (!mask)
            return -1;
        size_t size = CPU_ALLOC_SIZE(n);
        CPU_ZERO_S(size, mask);
        if (sched_getaffinity(0, size, mask) == 0) {
            hwloc_bitmap_zero(set);
            for (size_t i = 0; i < n; i++)
                if (CPU_ISSET_S(i, size, mask))
                    hwloc_bitmap_set(set, (unsigned)i);
            CPU_FREE(mask);
            return 0;
        }
        int e = errno;
        CPU_FREE(mask);
        if (e != EINVAL)
            return -1;
    }
    return -1;
}

int ng_hwloc_set_io_filters(hwloc_topology_t hw)
{
    if (hwloc_topology_set_io_types_filter(hw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) < 0)
        return -1;
    return hwloc_topology_set_type_filter(hw, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
}

/* The one escaping rule for text a person reads (messages, `check`):
 * bytes outside 0x20..0x7e become \xNN, so a line stays one line and
 * cannot carry terminal escapes; the backslash and the quote too when
 * asked (unambiguous values, quoted values). An escape is never cut. */
size_t ng_escape_bytes(const char *s, size_t n, char *out, size_t len, unsigned flags)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (!len)
        return 0;
    for (size_t i = 0; s && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int plain = c >= 0x20 && c < 0x7f && !(c == '\\' && (flags & NG_ESC_BACKSLASH)) &&
                    !(c == '\'' && (flags & NG_ESC_QUOTE));
        if (o + (plain ? 1 : 4) >= len)
            break;
        if (plain) {
            out[o++] = (char)c;
            continue;
        }
        out[o++] = '\\';
        out[o++] = 'x';
        out[o++] = hex[c >> 4];
        out[o++] = hex[c & 15];
    }
    out[o] = '\0';
    return o;
}

/* At most NG_SHOW_MAX bytes of s, escaped with the backslash and the
 * quote, then "..." when s is longer. */
void ng_show_bytes(const char *s, size_t n, char *out, size_t len)
{
    size_t o = ng_escape_bytes(s, n < NG_SHOW_MAX ? n : NG_SHOW_MAX, out, len,
                               NG_ESC_BACKSLASH | NG_ESC_QUOTE);
    if (n > NG_SHOW_MAX && o + 4 < len)
        memcpy(out + o, "...", 4);
}
