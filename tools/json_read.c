/* Reading JSON back: the reports `numaguard check --job J --local --json`
 * prints on each node of a job, collected by the job-wide check
 * (cmd_check_job.c). A strict RFC 8259 syntax check (bounded depth) before
 * anything is used, then lookups that return the raw text of a value, so
 * a node's report is embedded as it came and strings are decoded only
 * where they are shown. A node's output is the output of a program the
 * caller ran, but it may be cut short, mixed with a site's prolog text or
 * come from another numaguard version: nothing is trusted unchecked. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

static const char *ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

static int hex4(const char *p, const char *end, unsigned *v)
{
    *v = 0;
    if (end - p < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d > 15)
            return -1;
        *v = *v * 16 + d;
    }
    return 0;
}

static const char *skip_string(const char *p, const char *end)
{
    if (p >= end || *p != '"')
        return NULL;
    for (p++; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c < 0x20)
            return NULL;
        if (c == '\\') {
            if (++p >= end)
                return NULL;
            unsigned v;
            if (*p == 'u') {
                if (hex4(p + 1, end, &v) < 0)
                    return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
    }
    return NULL;
}

static int is_digit_at(const char *p, const char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

/* One or more digits, or NULL where there is none. */
static const char *skip_digits(const char *p, const char *end)
{
    if (!is_digit_at(p, end))
        return NULL;
    while (is_digit_at(p, end))
        p++;
    return p;
}

/* The integer part: 0 alone, or a non-zero digit and what follows (RFC
 * 8259 allows no leading zero: "01" stops after the 0, and the caller
 * then fails on the 1). */
static const char *skip_int_part(const char *p, const char *end)
{
    if (p < end && *p == '0')
        return p + 1;
    return skip_digits(p, end);
}

/* JSON's number: -?int(.digits)?([eE][+-]?digits)?; NULL where it is not
 * one. A fraction or an exponent needs at least one digit. */
static const char *skip_number(const char *p, const char *end)
{
    if (p < end && *p == '-')
        p++;
    if (!(p = skip_int_part(p, end)))
        return NULL;
    if (p < end && *p == '.' && !(p = skip_digits(p + 1, end)))
        return NULL;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        p = skip_digits(p, end);
    }
    return p;
}

static const char *skip_value(const char *p, const char *end, int depth);

static const char *skip_container(const char *p, const char *end, int depth)
{
    char close = *p == '{' ? '}' : ']';
    int object = *p == '{';
    if (depth >= MAX_DEPTH)
        return NULL;
    p = ws(p + 1, end);
    if (p < end && *p == close)
        return p + 1;
    for (;;) {
        if (object) {
            if (!(p = skip_string(p, end)))
                return NULL;
            p = ws(p, end);
            if (p >= end || *p != ':')
                return NULL;
            p = ws(p + 1, end);
        }
        if (!(p = skip_value(p, end, depth + 1)))
            return NULL;
        p = ws(p, end);
        if (p < end && *p == ',') {
            p = ws(p + 1, end);
            continue;
        }
        return p < end && *p == close ? p + 1 : NULL;
    }
}

static const char *skip_value(const char *p, const char *end, int depth)
{
    if (p >= end)
        return NULL;
    switch (*p) {
    case '{':
    case '[': return skip_container(p, end, depth);
    case '"': return skip_string(p, end);
    case 't': return end - p >= 4 && !strncmp(p, "true", 4) ? p + 4 : NULL;
    case 'f': return end - p >= 5 && !strncmp(p, "false", 5) ? p + 5 : NULL;
    case 'n': return end - p >= 4 && !strncmp(p, "null", 4) ? p + 4 : NULL;
    default: return skip_number(p, end);
    }
}

int json_valid(const char *text, size_t len, json_span *doc)
{
    const char *end = text + len, *p = ws(text, end), *v = p;
    if (!(p = skip_value(p, end, 0)) || ws(p, end) != end)
        return -1;
    doc->p = v;
    doc->len = (size_t)(p - v);
    return 0;
}

/* Compare a JSON string token (no escapes needed for our keys) to @p key. */
static int key_is(const char *tok, const char *tok_end, const char *key)
{
    size_t k = strlen(key);
    return (size_t)(tok_end - tok) == k + 2 && !strncmp(tok + 1, key, k);
}

int json_member(json_span obj, const char *key, json_span *out)
{
    const char *p = obj.p, *end = obj.p + obj.len;
    if (!obj.len || *p != '{')
        return -1;
    p = ws(p + 1, end);
    while (p < end && *p == '"') {
        const char *k = p, *ke = skip_string(p, end);
        if (!ke)
            return -1;
        p = ws(ws(ke, end) + 1, end);   /* past ':' (checked by json_valid) */
        const char *v = p, *ve = skip_value(p, end, 0);
        if (!ve)
            return -1;
        if (key_is(k, ke, key)) {
            out->p = v;
            out->len = (size_t)(ve - v);
            return 0;
        }
        p = ws(ve, end);
        if (p < end && *p == ',')
            p = ws(p + 1, end);
    }
    return -1;
}

int json_element(json_span arr, unsigned i, json_span *out)
{
    const char *p = arr.p, *end = arr.p + arr.len;
    if (!arr.len || *p != '[')
        return -1;
    p = ws(p + 1, end);
    for (unsigned k = 0; p < end && *p != ']'; k++) {
        const char *ve = skip_value(p, end, 0);
        if (!ve)
            return -1;
        if (k == i) {
            out->p = p;
            out->len = (size_t)(ve - p);
            return 0;
        }
        p = ws(ve, end);
        if (p < end && *p == ',')
            p = ws(p + 1, end);
    }
    return -1;
}

static size_t put_utf8(unsigned cp, char *o)
{
    if (cp < 0x80)
        return o[0] = (char)cp, 1;
    if (cp < 0x800)
        return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3f)), 2;
    if (cp < 0x10000)
        return o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
               o[2] = (char)(0x80 | (cp & 0x3f)), 3;
    return o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
           o[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), o[3] = (char)(0x80 | (cp & 0x3f)), 4;
}

char *json_string_dup(json_span v)
{
    const char *p = v.p, *end = v.p + v.len;
    if (v.len < 2 || *p != '"' || end[-1] != '"')
        return NULL;
    char *out = malloc(v.len * 2 + 1), *o = out;   /* \uXXXX (6) -> at most 4 bytes */
    if (!out)
        return NULL;
    for (p++; p < end - 1; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        unsigned cp = 0, lo;
        switch (*++p) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u':
            hex4(p + 1, end, &cp);
            p += 4;
            /* A surrogate pair; a lone surrogate (or \u0000) becomes U+FFFD. */
            if (cp >= 0xd800 && cp < 0xdc00 && end - p > 6 && p[1] == '\\' && p[2] == 'u' &&
                hex4(p + 3, end, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            } else if ((cp >= 0xd800 && cp < 0xe000) || cp == 0) {
                cp = 0xfffd;   /* a NUL would cut the C string short */
            }
            o += put_utf8(cp, o);
            break;
        default: *o++ = *p; break;   /* \" \\ \/ */
        }
    }
    *o = '\0';
    return out;
}

int json_number(json_span v, long long *out)
{
    char buf[32];
    if (!v.len || v.len >= sizeof buf)
        return -1;
    memcpy(buf, v.p, v.len);
    buf[v.len] = '\0';
    char *e;
    long long n = strtoll(buf, &e, 10);
    if (*e)
        return -1;
    *out = n;
    return 0;
}

/* One string token re-written (decoded, then escaped anew). */
static const char *copy_string(FILE *f, const char *p, const char *end)
{
    const char *e = skip_string(p, end);
    json_span tok = {p, (size_t)(e - p)};
    char *s = json_string_dup(tok);
    json_write_escaped(f, s ? s : "");
    free(s);
    return e;
}

static const char *copy_value(FILE *f, const char *p, const char *end);

/* An object or array, its strings re-written; the rest as it was. */
static const char *copy_container(FILE *f, const char *p, const char *end)
{
    char close = *p == '{' ? '}' : ']';
    int object = *p == '{';
    fputc(*p, f);
    p = ws(p + 1, end);
    for (int first = 1; p < end && *p != close; first = 0) {
        if (!first) {
            fputc(',', f);
            p = ws(ws(p, end) + 1, end);   /* past ',' (checked by json_valid) */
        }
        if (object) {
            p = ws(copy_string(f, p, end), end);
            fputc(':', f);
            p = ws(p + 1, end);
        }
        p = ws(copy_value(f, p, end), end);
    }
    fputc(close, f);
    return p + 1;
}

static const char *copy_value(FILE *f, const char *p, const char *end)
{
    if (*p == '{' || *p == '[')
        return copy_container(f, p, end);
    if (*p == '"')
        return copy_string(f, p, end);
    const char *e = skip_value(p, end, 0);   /* number, true, false, null */
    fwrite(p, 1, (size_t)(e - p), f);
    return e;
}

void json_copy_clean(FILE *f, json_span v)
{
    json_span doc;
    if (json_valid(v.p, v.len, &doc) < 0) {   /* never: callers pass a valid value */
        fputs("null", f);
        return;
    }
    copy_value(f, doc.p, doc.p + doc.len);
}
