/* Errors, bounded strings, PCI bus ids, and the one escaping rule for text
 * a person reads (messages, `check`, the CLI). */
#include "private/base.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ngi_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int ngi_strlcpy(char *dst, const char *src, size_t len)
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

int ngi_busid_normalize(const char *in, char out[NG_BUSID_LEN])
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

/* The one escaping rule for text a person reads (messages, `check`):
 * bytes outside 0x20..0x7e become \xNN, so a line stays one line and
 * cannot carry terminal escapes; the backslash and the quote too when
 * asked (unambiguous values, quoted values). An escape is never cut. */
size_t ngi_escape_bytes(const char *s, size_t n, char *out, size_t len, unsigned flags)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (!len)
        return 0;
    for (size_t i = 0; s && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int plain = c >= 0x20 && c < 0x7f && !(c == '\\' && (flags & NGI_ESC_BACKSLASH)) &&
                    !(c == '\'' && (flags & NGI_ESC_QUOTE));
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

/* At most NGI_SHOW_MAX bytes of s, escaped with the backslash and the
 * quote, then "..." when s is longer. */
void ngi_show_bytes(const char *s, size_t n, char *out, size_t len)
{
    size_t o = ngi_escape_bytes(s, n < NGI_SHOW_MAX ? n : NGI_SHOW_MAX, out, len,
                               NGI_ESC_BACKSLASH | NGI_ESC_QUOTE);
    if (n > NGI_SHOW_MAX && o + 4 < len)
        memcpy(out + o, "...", 4);
}

const char *ngi_show(const char *s, ngi_shown *b)
{
    ngi_show_bytes(s, strnlen(s, NGI_SHOW_MAX + 1), b->text, sizeof b->text);
    return b->text;
}

size_t ng_text_escape(const char *s, char *out, size_t len)
{
    return ngi_escape_bytes(s, s ? strlen(s) : 0, out, len, NGI_ESC_BACKSLASH);
}

long ng_parse_uint(const char *s, unsigned long max)
{
    if (!s || !isdigit((unsigned char)*s) || strnlen(s, 12) > 10)
        return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    return (errno || *end || v > max) ? -1 : (long)v;
}
