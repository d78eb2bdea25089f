/* --omp-guard: parse and format (docs/grammar.md). The variables it sets
 * are the table in thread_vars.c. */
#include "private/options.h"

#include <stdio.h>
#include <string.h>

#define OMP_OPT "--omp-guard"
#define OMP_FORMS "expected auto, adaptive, off, or a thread count 1-65536, optionally followed by ,force and/or ,bind"

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int omp_bad(const char *text, size_t len, const char *why, const char *item,
                   size_t ilen, char *err, size_t errlen)
{
    return ngi_option_reject(err, errlen, OMP_OPT, OMP_FORMS, text, len, why, item, ilen);
}

/* The head item: auto | adaptive | off | N (no sign, no leading zero, no spaces). */
static int omp_head(const char *text, size_t len, const char *h, size_t hlen,
                    ng_omp_guard *g, char *err, size_t errlen)
{
    if (hlen == 4 && strncmp(h, "auto", 4) == 0) {
        g->mode = NG_OMP_AUTO;
        return 0;
    }
    if (hlen == 8 && strncmp(h, "adaptive", 8) == 0) {
        g->mode = NG_OMP_ADAPTIVE;
        return 0;
    }
    if (hlen == 3 && strncmp(h, "off", 3) == 0) {
        g->mode = NG_OMP_OFF;
        return 0;
    }
    if (hlen == 0)
        return omp_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    for (size_t i = 0; i < hlen; i++)
        if (!is_digit(h[i]))
            return omp_bad(text, len, "unknown item '%s'", h, hlen, err, errlen);
    if (h[0] == '0' || hlen > 5) /* "0", "08"; 6+ digits exceed 65536 */
        return omp_bad(text, len, "thread count '%s' out of range", h, hlen, err, errlen);
    unsigned v = 0;
    for (size_t i = 0; i < hlen; i++)
        v = v * 10 + (unsigned)(h[i] - '0');
    if (v > NG_MAX_THREADS)
        return omp_bad(text, len, "thread count '%s' out of range", h, hlen, err, errlen);
    g->mode = NG_OMP_FIXED;
    g->nthreads = v;
    return 0;
}

/* One modifier after the head: force or bind, each at most once. */
static int omp_modifier(const char *text, size_t len, const char *t, size_t tlen,
                        ng_omp_guard *g, char *err, size_t errlen)
{
    int *flag = NULL;
    if (tlen == 5 && strncmp(t, "force", 5) == 0)
        flag = &g->force;
    else if (tlen == 4 && strncmp(t, "bind", 4) == 0)
        flag = &g->bind;
    if (tlen == 0)
        return omp_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    if (!flag)
        return omp_bad(text, len, "unknown item '%s' (only force and bind may follow)", t,
                       tlen, err, errlen);
    if (*flag)
        return omp_bad(text, len, "'%s' given twice", t, tlen, err, errlen);
    *flag = 1;
    return 0;
}

int ng_omp_guard_parse(const char *text, ng_omp_guard *out, char *err, size_t errlen)
{
    ng_omp_guard g = {NG_OMP_AUTO, 0, 0, 0};
    if (!out)
        return ngi_fail(err, errlen, OMP_OPT ": no output");
    if (!text || !*text) {
        *out = g;
        return 0;
    }
    size_t len = strnlen(text, NG_MAX_ARG + 1);
    if (len > NG_MAX_ARG) {
        char why[64];
        snprintf(why, sizeof why, "longer than %d bytes%%s", NG_MAX_ARG);
        return omp_bad(text, len, why, NULL, 0, err, errlen);
    }
    size_t hlen = strcspn(text, ",");
    const char *t = text;
    /* A modifier alone ("force", "bind,force") means auto with it. */
    if (!((hlen == 5 && strncmp(text, "force", 5) == 0) ||
          (hlen == 4 && strncmp(text, "bind", 4) == 0))) {
        if (omp_head(text, len, text, hlen, &g, err, errlen) < 0)
            return -1;
        t = text[hlen] == ',' ? text + hlen + 1 : text + hlen;
        if (text[hlen] == ',' && *t == '\0')
            return omp_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    }
    while (*t) {
        size_t tlen = strcspn(t, ",");
        if (omp_modifier(text, len, t, tlen, &g, err, errlen) < 0)
            return -1;
        t += tlen;
        if (*t == ',' && *++t == '\0')
            return omp_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    }
    if (g.mode == NG_OMP_OFF && (g.force || g.bind))
        return omp_bad(text, len, "off sets nothing, so a modifier makes no sense%s",
                       NULL, 0, err, errlen);
    *out = g;
    return 0;
}

int ngi_omp_guard_format(const ng_omp_guard *g, char *buf, size_t len)
{
    if (!buf || !len)
        return -1;
    buf[0] = '\0';
    if (!g)
        return -1;
    char head[16];
    switch (g->mode) {
    case NG_OMP_OFF:
        if (g->force)
            return -1; /* "off,force" is not a valid value */
        snprintf(head, sizeof head, "off");
        break;
    case NG_OMP_AUTO:
        snprintf(head, sizeof head, "auto");
        break;
    case NG_OMP_ADAPTIVE:
        snprintf(head, sizeof head, "adaptive");
        break;
    case NG_OMP_FIXED:
        if (g->nthreads < 1 || g->nthreads > NG_MAX_THREADS)
            return -1;
        snprintf(head, sizeof head, "%u", g->nthreads);
        break;
    default:
        return -1;
    }
    if (g->mode == NG_OMP_OFF && g->bind)
        return -1;
    int n = snprintf(buf, len, "%s%s%s", head, g->force ? ",force" : "",
                     g->bind ? ",bind" : "");
    if (n < 0 || (size_t)n >= len) {
        buf[0] = '\0';
        return -1;
    }
    return n;
}
