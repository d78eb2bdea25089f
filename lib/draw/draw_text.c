/* Text in the pictures: escaping (every string from a file, /proc or the
 * caller goes through here), sizes and width estimates. */
#include "private/draw.h"

#include <string.h>

/* Input bytes taken from one string: labels, names and titles are short;
 * a longer one is cut (ng_text_escape never cuts inside an escape). */
#define TEXT_MAX 1024

void ngi_draw_plain(FILE *f, const char *s)
{
    char buf[TEXT_MAX * 4 + 1];
    ng_text_escape(s ? s : "", buf, sizeof buf);
    fputs(buf, f);
}

/* After ng_text_escape the text is printable ASCII: only the five XML
 * specials remain to be replaced (no control byte, no invalid UTF-8 can
 * reach the document). */
void ngi_draw_xml(FILE *f, const char *s)
{
    char buf[TEXT_MAX * 4 + 1];
    ng_text_escape(s ? s : "", buf, sizeof buf);
    for (const char *p = buf; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*p, f);
        }
    }
}

void ngi_draw_bytes(unsigned long long bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    unsigned u = 0;
    if (!bytes) {
        snprintf(buf, len, "?");
        return;
    }
    while (v >= 1024 && u + 1 < NGI_ARRAY_LEN(unit)) {
        v /= 1024;
        u++;
    }
    /* One decimal only where it says something (1.5 GiB, not 503.9 GiB). */
    if (v < 10 && v != (double)(unsigned long long)v)
        snprintf(buf, len, "%.1f %s", v, unit[u]);
    else
        snprintf(buf, len, "%.0f %s", v, unit[u]);
}

/* An estimate good enough to size boxes, taken from DejaVu Sans (the
 * widest common sans-serif; narrower fonts leave a little room): digits
 * and most lower-case letters 0.6 em, capitals and wide letters more,
 * narrow ones less. Bold text is ~10% wider (callers add that). */
int ngi_draw_text_w(const char *s, int px)
{
    double w = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (strchr("MWmw@%", *p))
            w += 0.95;
        else if (*p >= 'A' && *p <= 'Z')
            w += 0.72;
        else if (strchr("ijlt.,:;|!' ()[]/-", *p))
            w += 0.36;
        else
            w += 0.62;
    }
    return (int)(w * px + 0.999);
}

void ngi_draw_list(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    if (!set) {
        snprintf(buf, len, "-");
        return;
    }
    if (ng_list_format(set, buf, len) < 0)
        snprintf(buf, len, "(%d CPUs)", hwloc_bitmap_weight(set));
    else if (!buf[0])
        snprintf(buf, len, "-");
}
