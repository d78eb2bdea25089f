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

static void escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
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
    escaped(j->f, value);
}

void json_uint(json_out *j, const char *key, unsigned long long value)
{
    sep(j, key);
    fprintf(j->f, "%llu", value);
}

void json_bool(json_out *j, const char *key, int value)
{
    sep(j, key);
    fputs(value ? "true" : "false", j->f);
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
