/* Slurm hostlist expressions: expansion (File=) and membership (NodeName=).
 * Semantics follow Slurm's src/common/hostlist.c as far as gres.conf uses
 * it: items separated by commas outside brackets; inside [] a comma list
 * of "lo" or "lo-hi" (decimal, lo <= hi); the digit count of "lo" is the
 * zero-padded width of every number of that range; names come out in
 * the order written (hostlist_shift does not sort); several brackets in
 * one name expand left to right, the first one outermost. */
#include "private/hostlist.h"
#include "private/base.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define HL_MAX_BRACKETS 4   /* "rack[0-1]blade[0-7]node[0-3]" is plenty */
#define HL_MAX_DIGITS 18    /* fits an unsigned long long, formatted or not */

/* One comma-free item: lit[0] [br[0]] lit[1] [br[1]] ... lit[nbr]. */
typedef struct hl_item {
    const char *lit[HL_MAX_BRACKETS + 1];
    size_t litlen[HL_MAX_BRACKETS + 1];
    const char *br[HL_MAX_BRACKETS];   /* text between [ and ] */
    size_t brlen[HL_MAX_BRACKETS];
    unsigned nbr;
} hl_item;

/* One "lo" or "lo-hi" of a bracket. */
typedef struct hl_range {
    unsigned long long lo, hi;
    int width;
} hl_range;

/* Read 1..HL_MAX_DIGITS decimal digits at *p (before end). */
static int read_number(const char **p, const char *end, unsigned long long *v, int *ndig)
{
    const char *s = *p;
    unsigned long long x = 0;
    int n = 0;
    while (s < end && isdigit((unsigned char)*s) && n <= HL_MAX_DIGITS) {
        x = x * 10 + (unsigned long long)(*s - '0');
        s++;
        n++;
    }
    if (n == 0 || n > HL_MAX_DIGITS)
        return -1;
    *v = x;
    *ndig = n;
    *p = s;
    return 0;
}

/* Next range of a bracket text at *p; 0 ok, 1 end of text, -1 malformed
 * (err names the expression: @p expr is its escaped form, ngi_show()). */
static int next_range(const char **p, const char *end, hl_range *r, unsigned long max_range,
                      const char *expr, char *err, size_t errlen)
{
    if (*p >= end)
        return 1;
    int nd;
    if (read_number(p, end, &r->lo, &r->width) < 0)
        return ngi_fail(err, errlen, "'%s': expected a number (at most %d digits) inside []",
                       expr, HL_MAX_DIGITS);
    r->hi = r->lo;
    if (*p < end && **p == '-') {
        (*p)++;
        if (read_number(p, end, &r->hi, &nd) < 0)
            return ngi_fail(err, errlen, "'%s': expected a number after '-'", expr);
        if (r->hi < r->lo)
            return ngi_fail(err, errlen, "'%s': range %llu-%llu is reversed", expr, r->lo,
                           r->hi);
    }
    if (max_range && r->hi - r->lo >= max_range)
        return ngi_fail(err, errlen, "'%s': range larger than %lu", expr, max_range);
    if (*p < end) {
        if (**p != ',')
        {
            char c[8];
            ngi_show_bytes(*p, 1, c, sizeof c);
            return ngi_fail(err, errlen, "'%s': unexpected '%s' inside []", expr, c);
        }
        (*p)++;
        if (*p == end)
            return ngi_fail(err, errlen, "'%s': empty range after ','", expr);
    }
    return 0;
}

/* Check every range of every bracket once, before any name is produced. */
static int check_brackets(const hl_item *it, unsigned long max_range, const char *expr,
                          char *err, size_t errlen)
{
    for (unsigned b = 0; b < it->nbr; b++) {
        const char *p = it->br[b], *end = p + it->brlen[b];
        hl_range r;
        int rc;
        if (p == end)
            return ngi_fail(err, errlen, "'%s': empty []", expr);
        while ((rc = next_range(&p, end, &r, max_range, expr, err, errlen)) == 0)
            ;
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Split item text [s, s+len) into literals and brackets. */
static int parse_item(const char *s, size_t len, hl_item *it, unsigned long max_range,
                      const char *expr, char *err, size_t errlen)
{
    memset(it, 0, sizeof *it);
    if (len == 0)
        return ngi_fail(err, errlen, "'%s': empty name in list", expr);
    if (len >= NGI_HOSTLIST_NAME_MAX)
        return ngi_fail(err, errlen, "'%s': name too long", expr);
    const char *p = s, *end = s + len;
    it->lit[0] = p;
    while (p < end) {
        if (*p == ']')
            return ngi_fail(err, errlen, "'%s': unbalanced ']'", expr);
        if (*p != '[') {
            p++;
            continue;
        }
        if (it->nbr == HL_MAX_BRACKETS)
            return ngi_fail(err, errlen, "'%s': more than %d [ranges] in one name", expr,
                           HL_MAX_BRACKETS);
        const char *rb = memchr(p, ']', (size_t)(end - p));
        if (!rb)
            return ngi_fail(err, errlen, "'%s': missing ']'", expr);
        const char *nested = memchr(p + 1, '[', (size_t)(rb - p - 1));
        if (nested)
            return ngi_fail(err, errlen, "'%s': '[' inside []", expr);
        it->litlen[it->nbr] = (size_t)(p - it->lit[it->nbr]);
        it->br[it->nbr] = p + 1;
        it->brlen[it->nbr] = (size_t)(rb - p - 1);
        it->nbr++;
        p = rb + 1;
        it->lit[it->nbr] = p;
    }
    it->litlen[it->nbr] = (size_t)(end - it->lit[it->nbr]);
    /* Slurm refuses "n[1-2]-ib" and "/dev/x[0-1]y" (Invalid hostlist). */
    if (it->nbr && it->litlen[it->nbr])
        return ngi_fail(err, errlen, "'%s': text after the last ']' (Slurm allows none)",
                       expr);
    return check_brackets(it, max_range, expr, err, errlen);
}

/* Length of the item starting at s: up to a comma outside [] or the end. */
static size_t item_len(const char *s)
{
    size_t j = 0;
    int depth = 0;
    while (s[j] && (s[j] != ',' || depth)) {
        if (s[j] == '[')
            depth = 1;
        else if (s[j] == ']')
            depth = 0;
        j++;
    }
    return j;
}

/* ---------- expansion ---------- */

typedef struct hl_expand {
    const hl_item *it;
    ng_hostlist_fn fn;
    void *ctx;
    char name[NGI_HOSTLIST_NAME_MAX + 2 * HL_MAX_BRACKETS * HL_MAX_DIGITS];
} hl_expand;

static int expand_level(hl_expand *x, unsigned level, size_t used)
{
    const hl_item *it = x->it;
    memcpy(x->name + used, it->lit[level], it->litlen[level]);
    used += it->litlen[level];
    if (level == it->nbr) {
        x->name[used] = '\0';
        return x->fn(x->name, x->ctx);
    }
    const char *p = it->br[level], *end = p + it->brlen[level];
    hl_range r;
    while (next_range(&p, end, &r, 0, "", NULL, 0) == 0) {
        for (unsigned long long v = r.lo; v <= r.hi; v++) {
            int n = snprintf(x->name + used, sizeof x->name - used, "%0*llu", r.width, v);
            int rc = n < 0 ? -1 : expand_level(x, level + 1, used + (size_t)n);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int ngi_hostlist_foreach(const char *expr, unsigned long max_range, ng_hostlist_fn fn,
                        void *ctx, char *err, size_t errlen)
{
    if (!expr || !*expr)
        return ngi_fail(err, errlen, "empty host list");
    ngi_shown sb;   /* the expression as messages show it: a file's bytes, escaped */
    const char *show = ngi_show(expr, &sb);
    /* A malformed list yields no name at all: check it whole first. */
    for (const char *s = expr;; s++) {
        size_t len = item_len(s);
        hl_item it;
        if (parse_item(s, len, &it, max_range, show, err, errlen) < 0)
            return -1;
        s += len;
        if (!*s)
            break;
    }
    hl_expand x;   /* ~4.2 KiB; slurmstepd and the CLI have 8 MiB stacks */
    for (const char *s = expr;; s++) {
        size_t len = item_len(s);
        hl_item it;
        if (parse_item(s, len, &it, max_range, show, err, errlen) < 0)
            return -1;
        x.it = &it;
        x.fn = fn;
        x.ctx = ctx;
        int rc = expand_level(&x, 0, 0);
        if (rc < 0)
            return -1;   /* fn wrote the message */
        if (rc > 0)
            return 0;
        s += len;
        if (!*s)
            return 0;
    }
}

/* ---------- membership ---------- */

/* Where the text after bracket @p level may start in the name: a set of
 * positions, kept without repeats. From one start each bracket moves at
 * most HL_MAX_DIGITS further, so a level never holds more than
 * HL_MAX_POS of them: matching reads each bracket at most HL_MAX_POS
 * times, linear in the expression's size whatever it holds (the old
 * recursive walk tried every range and digit prefix of a bracket once per
 * way of matching the brackets before it: 674 x 674 x 674 attempts for a
 * 4 KiB gres.conf line, 45 s). */
#define HL_MAX_POS (1 + HL_MAX_BRACKETS * HL_MAX_DIGITS)

typedef struct hl_posset {
    size_t pos[HL_MAX_POS];
    unsigned n;
} hl_posset;

static void posset_add(hl_posset *s, size_t p)
{
    for (unsigned i = 0; i < s->n; i++)
        if (s->pos[i] == p)
            return;
    if (s->n < HL_MAX_POS)
        s->pos[s->n++] = p;
}

/* Does a number of bracket @p level's ranges sit at name[p..p+k)? Each
 * such k (1..HL_MAX_DIGITS digits, written with the range's width: "[1-2]0"
 * matches "n10" as 1 then "0") followed by the next literal is a way on. */
static void bracket_step(const hl_item *it, unsigned level, const char *name, size_t p,
                         hl_posset *next)
{
    size_t run = 0;
    while (run < HL_MAX_DIGITS && isdigit((unsigned char)name[p + run]))
        run++;
    const char *lit = it->lit[level + 1];
    size_t litlen = it->litlen[level + 1];
    const char *b = it->br[level], *end = b + it->brlen[level];
    hl_range r;
    while (next_range(&b, end, &r, 0, "", NULL, 0) == 0) {
        unsigned long long v = 0;
        for (size_t k = 1; k <= run; k++) {
            v = v * 10 + (unsigned long long)(name[p + k - 1] - '0');
            if (v < r.lo || v > r.hi)
                continue;
            char num[HL_MAX_DIGITS + 2];
            int n = snprintf(num, sizeof num, "%0*llu", r.width, v);
            if (n == (int)k && memcmp(num, name + p, k) == 0 &&
                strncmp(name + p + k, lit, litlen) == 0)
                posset_add(next, p + k + litlen);
        }
    }
}

static int match_item(const hl_item *it, const char *name, size_t namelen)
{
    hl_posset cur = {{0}, 0}, next;
    if (strncmp(name, it->lit[0], it->litlen[0]) != 0)
        return 0;
    posset_add(&cur, it->litlen[0]);
    for (unsigned level = 0; level < it->nbr && cur.n; level++) {
        next.n = 0;
        for (unsigned i = 0; i < cur.n; i++)
            bracket_step(it, level, name, cur.pos[i], &next);
        cur = next;
    }
    for (unsigned i = 0; i < cur.n; i++)
        if (cur.pos[i] == namelen)
            return 1;
    return 0;
}

int ngi_hostlist_contains(const char *expr, const char *name, char *err, size_t errlen)
{
    if (!expr || !*expr)
        return ngi_fail(err, errlen, "empty host list");
    int found = 0;
    ngi_shown sb;   /* the expression as messages show it: a file's bytes, escaped */
    const char *show = ngi_show(expr, &sb);
    /* No expression names anything as long as the longest name allowed. */
    size_t namelen = name ? strnlen(name, NGI_HOSTLIST_NAME_MAX) : NGI_HOSTLIST_NAME_MAX;
    for (const char *s = expr;; s++) {
        size_t len = item_len(s);
        hl_item it;
        if (parse_item(s, len, &it, 0, show, err, errlen) < 0)
            return -1;   /* a malformed list is refused even after a match */
        if (!found && namelen < NGI_HOSTLIST_NAME_MAX)
            found = match_item(&it, name, namelen);
        s += len;
        if (!*s)
            return found;
    }
}
