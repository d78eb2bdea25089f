/* The admin's files as the doctor reads them: through the library's one
 * regular-file reader (lib/base: O_NONBLOCK, so a FIFO planted as a config
 * file fails fstat's regular-file test instead of hanging), Slurm's
 * Key=Value files (slurm.conf with its Include lines and '\' line
 * continuations, cgroup.conf) and plugstack.conf with its include globs,
 * each bounded in depth, files and bytes.
 * Node names are matched by the library's hostlist rule (lib/base), the
 * one gres.conf matching uses. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/hostlist.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define PLUGSTACK_MAX (256u << 10)   /* one plugstack.conf file */
#define PLUGSTACK_FILES 64           /* files read through include */
#define PLUGSTACK_DEPTH 4
#define LINE_MAX_NG 4096

int ngi_doctor_path(const ngi_doctor_ctx *x, const char *abs, char *buf, size_t len)
{
    return ngi_path(buf, len, x->fsroot, abs);
}

/* ---- Slurm's Key=Value files ---- */

/* Copy line @p p (up to '\n', '#' comment cut) into @p line. */
static const char *next_line(const char *p, char *line, size_t len)
{
    size_t n = strcspn(p, "\n");
    size_t k = n < len - 1 ? n : len - 1;
    memcpy(line, p, k);
    line[k] = '\0';
    line[strcspn(line, "#")] = '\0';
    return p[n] ? p + n + 1 : p + n;
}

/* Value of token Key= in one line (case-insensitive key, quotes
 * stripped); 0 or -1. @p first: only the line's first token counts. */
static int token_value(const char *line, const char *key, int first, char *out, size_t len)
{
    size_t klen = strlen(key);
    const char *p = line;
    for (;;) {
        p += strspn(p, " \t\r");
        if (!*p)
            return -1;
        size_t n = strcspn(p, " \t\r");
        if (n > klen && p[klen] == '=' && strncasecmp(p, key, klen) == 0) {
            const char *v = p + klen + 1;
            size_t vl = n - klen - 1;
            if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"')
                v++, vl -= 2;
            if (vl >= len)
                return -1;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return 0;
        }
        if (first)
            return -1;
        p += n;
    }
}

/* The text being built from slurm.conf and its includes: grown by
 * doubling (linear in what is read), bounded by max bytes and the Include
 * limits; the first limit reached is named in limit and stops the reading. */
typedef struct conf_out {
    char *buf;
    size_t len, cap, max;
    unsigned files;
    char *limit;
    size_t limitlen;
} conf_out;

/* Append @p s (n bytes); -1 past the bound or out of memory. */
static int append(conf_out *o, const char *s, size_t n)
{
    if (o->len + n > o->max) {
        if (!o->limit[0])
            snprintf(o->limit, o->limitlen, "%zu bytes read in all (the limit)", o->max);
        return -1;
    }
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *b = realloc(o->buf, cap);
        if (!b)
            return -1;
        o->buf = b;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
    return 0;
}

/* Join slurm.conf's continuation lines in place: a '\' at the end of a
 * line (before an optional '\r') continues it on the next, as Slurm's
 * parser reads it; both become spaces, so line numbers stay. */
static void join_continuations(char *text)
{
    for (char *p = strchr(text, '\\'); p; p = strchr(p + 1, '\\')) {
        char *q = p + 1;
        if (*q == '\r')
            q++;
        if (*q == '\n')
            for (char *r = p; r <= q; r++)
                *r = ' ';
    }
}

static int expand(char *text, const char *dir, int depth, conf_out *o);

/* The files of one "Include PATTERN" line, each expanded in turn; stops
 * (and globs no more) once a limit is reached. */
static void include_files(const char *pattern, const char *dir, int depth, conf_out *o)
{
    char full[2 * PATH_MAX + 2], why[64], *text;
    glob_t g;
    if (o->limit[0])
        return;
    if (depth >= NGI_CONF_INCLUDE_DEPTH) {
        snprintf(o->limit, o->limitlen, "Include nested deeper than %d (an Include loop?) "
                 "at %.512s", NGI_CONF_INCLUDE_DEPTH, pattern);
        return;
    }
    if (pattern[0] == '/' || !dir[0])
        snprintf(full, sizeof full, "%s", pattern);
    else
        snprintf(full, sizeof full, "%s/%s", dir, pattern);
    if (glob(full, 0, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc && !o->limit[0]; i++) {
        if (o->files >= NGI_CONF_INCLUDE_FILES) {
            snprintf(o->limit, o->limitlen, "%d included files (the limit); %.512s and what "
                     "follows not read", NGI_CONF_INCLUDE_FILES, g.gl_pathv[i]);
            break;
        }
        o->files++;
        if (NGI_DOCTOR_READ(g.gl_pathv[i], o->max, &text, NULL, why, sizeof why) == 0) {
            expand(text, dir, depth + 1, o);
            free(text);
        }
    }
    globfree(&g);
}

static int expand(char *text, const char *dir, int depth, conf_out *o)
{
    char line[LINE_MAX_NG], word[16], pattern[PATH_MAX];
    join_continuations(text);
    for (const char *p = text; *p && !o->limit[0];) {
        const char *start = p;
        p = next_line(p, line, sizeof line);
        if (sscanf(line, " %15s %4095s", word, pattern) == 2 && !strcasecmp(word, "Include"))
            include_files(pattern, dir, depth, o);
        else if (append(o, start, (size_t)(p - start)) < 0 ||
                 (p[-1] != '\n' && append(o, "\n", 1) < 0))
            return -1;
    }
    return 0;
}

int ngi_conf_includes(char **text, const char *path, size_t max, char *limit, size_t limitlen)
{
    char dir[PATH_MAX];
    conf_out o = {.max = max, .limit = limit, .limitlen = limitlen};
    const char *slash = strrchr(path, '/');
    limit[0] = '\0';
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 0, path);
    expand(*text, dir, 0, &o);
    if (!o.buf && (o.buf = malloc(1)))
        o.buf[0] = '\0';
    if (!o.buf)
        return -1;
    free(*text);
    *text = o.buf;
    return 0;
}

int ngi_conf_value(const char *text, const char *key, char *out, size_t len)
{
    char line[LINE_MAX_NG], v[LINE_MAX_NG];
    int found = -1;
    for (const char *p = text; p && *p;) {
        p = next_line(p, line, sizeof line);
        if (token_value(line, key, 1, v, sizeof v) == 0 && strlen(v) < len) {
            memcpy(out, v, strlen(v) + 1);
            found = 0;
        }
    }
    return found;
}

int ngi_conf_node_value(const char *text, const char *node, const char *key, char *out,
                        size_t len)
{
    char line[LINE_MAX_NG], names[LINE_MAX_NG], dflt[LINE_MAX_NG] = "";
    for (const char *p = text; p && *p;) {
        p = next_line(p, line, sizeof line);
        if (token_value(line, "NodeName", 1, names, sizeof names) < 0)
            continue;
        if (strcasecmp(names, "DEFAULT") == 0) {
            memcpy(dflt, line, sizeof dflt);
            continue;
        }
        if (ngi_hostlist_contains(names, node, NULL, 0) != 1)
            continue;
        if (token_value(line, key, 0, out, len) == 0)
            return 1;
        return token_value(dflt, key, 0, out, len) == 0 ? 1 : 0;
    }
    return -1;
}

/* ---- plugstack.conf ---- */

/* 1 if @p path's file name is numaguard*.so (the shipped plugin, or a
 * renamed copy such as a site's numaguard-22.05.so). */
static int is_numaguard(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    return strncmp(base, "numaguard", 9) == 0 && n > 3 && strcmp(base + n - 3, ".so") == 0;
}

/* A relative plugin path is searched in PluginDir (colon list). */
static void resolve_plugin(ngi_plugstack *ps, const char *dirs)
{
    struct stat st;
    if (ps->path[0] == '/') {
        if (stat(ps->path, &st) == 0)
            snprintf(ps->file, sizeof ps->file, "%s", ps->path);
        return;
    }
    for (const char *d = dirs; d && *d;) {
        size_t n = strcspn(d, ":");
        char cand[PATH_MAX];
        if (n && (size_t)snprintf(cand, sizeof cand, "%.*s/%s", (int)n, d, ps->path) <
                     sizeof cand && stat(cand, &st) == 0) {
            snprintf(ps->file, sizeof ps->file, "%s", cand);
            return;
        }
        d += n + (d[n] == ':');
    }
}

/* Keep the first numaguard line: its kind, path and arguments. */
static void take_plugin(ngi_plugstack *ps, char *words[], int nw, const char *file,
                        unsigned lineno, const char *dirs)
{
    if (ps->found++)
        return;
    snprintf(ps->kind, sizeof ps->kind, "%s", words[0]);
    snprintf(ps->path, sizeof ps->path, "%s", words[1]);
    snprintf(ps->where, sizeof ps->where, "%s:%u", file, lineno);
    for (int i = 2; i < nw && ps->argc < (int)(sizeof ps->argv / sizeof ps->argv[0]); i++)
        if ((ps->argv[ps->argc] = strdup(words[i])))
            ps->argc++;
    resolve_plugin(ps, dirs);
}

static int read_one(const char *path, const char *dirs, ngi_plugstack *ps, int depth,
                    char *why, size_t whylen);

/* "include PATTERN": every match, in glob order (relative patterns are
 * relative to the including file's directory, as Slurm's). */
static void include_glob(const char *pattern, const char *from, const char *dirs,
                         ngi_plugstack *ps, int depth)
{
    char full[PATH_MAX];
    const char *slash = strrchr(from, '/');
    if (pattern[0] != '/' && slash)
        snprintf(full, sizeof full, "%.*s/%s", (int)(slash - from), from, pattern);
    else
        snprintf(full, sizeof full, "%s", pattern);
    glob_t g;
    if (ps->limit[0] || glob(full, 0, NULL, &g) != 0)
        return;                        /* past a limit: no more globbing */
    char why[PATH_MAX + 96];
    for (size_t i = 0; i < g.gl_pathc && !ps->limit[0]; i++) {
        if (ps->files >= PLUGSTACK_FILES)
            snprintf(ps->limit, sizeof ps->limit, "%d files read (the limit); %.512s and what "
                     "follows not read", PLUGSTACK_FILES, g.gl_pathv[i]);
        else if (read_one(g.gl_pathv[i], dirs, ps, depth + 1, why, sizeof why) < 0 &&
                 depth + 1 > PLUGSTACK_DEPTH)
            snprintf(ps->limit, sizeof ps->limit, "%.128s at %.512s", why, g.gl_pathv[i]);
    }
    globfree(&g);
}

static void plugstack_line(char *line, const char *file, unsigned lineno, const char *dirs,
                           ngi_plugstack *ps, int depth)
{
    char *words[80], *save = NULL;
    int nw = 0;
    for (char *t = strtok_r(line, " \t\r", &save); t && nw < 80; t = strtok_r(NULL, " \t\r", &save))
        words[nw++] = t;
    if (nw >= 2 && strcasecmp(words[0], "include") == 0)
        include_glob(words[1], file, dirs, ps, depth);
    else if (nw >= 2 && (!strcmp(words[0], "required") || !strcmp(words[0], "optional")) &&
             is_numaguard(words[1]))
        take_plugin(ps, words, nw, file, lineno, dirs);
}

static int read_one(const char *path, const char *dirs, ngi_plugstack *ps, int depth,
                    char *why, size_t whylen)
{
    char *text, line[LINE_MAX_NG];
    if (depth > PLUGSTACK_DEPTH)
        return ngi_fail(why, whylen, "includes nested deeper than %d", PLUGSTACK_DEPTH);
    if (NGI_DOCTOR_READ(path, PLUGSTACK_MAX, &text, NULL, why, whylen) < 0)
        return -1;
    ps->files++;
    unsigned lineno = 0;
    for (const char *p = text; *p;) {
        p = next_line(p, line, sizeof line);
        plugstack_line(line, path, ++lineno, dirs, ps, depth);
    }
    free(text);
    return 0;
}

int ngi_plugstack_read(const char *path, const char *plugin_dirs, ngi_plugstack *ps,
                       char *why, size_t whylen)
{
    memset(ps, 0, sizeof *ps);
    return read_one(path, plugin_dirs, ps, 0, why, whylen);
}

void ngi_plugstack_free(ngi_plugstack *ps)
{
    for (int i = 0; i < ps->argc; i++)
        free(ps->argv[i]);
    ps->argc = 0;
}
