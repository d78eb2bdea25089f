/* Minimal JSON emitter for the CLI: strings escaped, no floats needed. */
#include "cli.h"

static void sep(json_out *j, const char *key)
{
    if (j->depth > 0) {
        if (j->need_comma[j->depth])
            fputc(',', j->f);
        j->need_comma[j->depth] = 1;
    }
    if (key)
        fprintf(j->f, "\"%s\":", key);
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static int utf8_len(const unsigned char *s)
{
    int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
    unsigned cp = s[0] & (0x3f >> (n - 1));
    if (s[0] < 0xc2 || s[0] > 0xf4)
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* Strings may come from /proc (a process's comm, environ): control
 * characters (C0, DEL, C1) are written as \uXXXX and bytes that are not
 * UTF-8 as U+FFFD, so the document stays valid JSON and inert in a terminal. */
void json_write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        int n = *c >= 0x80 ? utf8_len(c) : 1;
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(f, "\\u%04x", *c);
        else if (n == 0)
            fputs("\\ufffd", f);
        else if (n == 2 && c[0] == 0xc2 && c[1] < 0xa0)
            fprintf(f, "\\u%04x", c[1]);   /* C1 control, U+0080..U+009F */
        else
            fwrite(c, 1, (size_t)n, f);
        c += n > 1 ? n - 1 : 0;
    }
    fputc('"', f);
}

static void open_(json_out *j, const char *key, char c)
{
    sep(j, key);
    fputc(c, j->f);
    if (j->depth < 31)
        j->depth++;
    j->need_comma[j->depth] = 0;
}

static void close_(json_out *j, char c)
{
    fputc(c, j->f);
    if (j->depth > 0)
        j->depth--;
    if (j->depth == 0)
        fputc('\n', j->f);
}

void json_begin_object(json_out *j, const char *key) { open_(j, key, '{'); }
void json_end_object(json_out *j) { close_(j, '}'); }
void json_begin_array(json_out *j, const char *key) { open_(j, key, '['); }
void json_end_array(json_out *j) { close_(j, ']'); }

void json_string(json_out *j, const char *key, const char *value)
{
    sep(j, key);
    json_write_escaped(j->f, value);
}

void json_uint(json_out *j, const char *key, unsigned long long value)
{
    sep(j, key);
    fprintf(j->f, "%llu", value);
}

void json_int(json_out *j, const char *key, long long value)
{
    sep(j, key);
    fprintf(j->f, "%lld", value);
}

/* A fraction with two decimals (effective cores); never NaN or infinite. */
void json_fixed2(json_out *j, const char *key, double value)
{
    sep(j, key);
    fprintf(j->f, "%.2f", value == value && value < 1e15 && value > -1e15 ? value : 0.0);
}

void json_bool(json_out *j, const char *key, int value)
{
    sep(j, key);
    fputs(value ? "true" : "false", j->f);
}

void json_raw(json_out *j, const char *key, const char *text, size_t len)
{
    sep(j, key);
    fwrite(text, 1, len, j->f);
}

void json_index_array(json_out *j, const char *key, hwloc_const_bitmap_t set)
{
    json_begin_array(j, key);
    if (set) {
        int i;
        hwloc_bitmap_foreach_begin(i, set) { json_uint(j, NULL, (unsigned)i); }
        hwloc_bitmap_foreach_end();
    }
    json_end_array(j);
}
