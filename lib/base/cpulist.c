/* CPU and NUMA node lists: the Linux list format, node masks, and the
 * calling thread's affinity. */
#include "private/base.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

void ngi_nodemask_to_bitmap(const uint64_t *mask, unsigned words, hwloc_bitmap_t set)
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
        return ngi_fail(err, errlen, "empty list");
    if (strnlen(text, NG_MAX_ARG + 1) > NG_MAX_ARG)
        return ngi_fail(err, errlen, "list longer than %d bytes", NG_MAX_ARG);
    const char *p = text;
    if (!*p)
        return ngi_fail(err, errlen, "empty list");
    for (;;) {
        char *end;
        if (!isdigit((unsigned char)*p))
            return ngi_fail(err, errlen, "'%s': expected a number at '%.16s'", text, p);
        errno = 0;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (errno || a > max_index)
            return ngi_fail(err, errlen, "'%s': index out of range (0-%u)", text, max_index);
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return ngi_fail(err, errlen, "'%s': expected a number after '-'", text);
            errno = 0;
            b = strtoul(p, &end, 10);
            if (errno || b > max_index)
                return ngi_fail(err, errlen, "'%s': index out of range (0-%u)", text, max_index);
            if (b < a)
                return ngi_fail(err, errlen, "'%s': range %lu-%lu is reversed", text, a, b);
            p = end;
        }
        hwloc_bitmap_set_range(set, (unsigned)a, (int)b);
        if (*p == '\0')
            return 0;
        if (*p != ',')
            return ngi_fail(err, errlen, "'%s': unexpected '%c'", text, *p);
        p++;
    }
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
