/* The admin's files as the doctor reads them: bounded reads that never
 * block (O_NONBLOCK: a FIFO planted as a config file fails fstat's
 * regular-file test instead of hanging), Slurm's Key=Value files
 * (slurm.conf, cgroup.conf) and plugstack.conf with its include globs.
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

int ngi_doctor_read(const char *path, size_t max, char **out, size_t *len, char *why,
                    size_t whylen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return ngi_fail(why, whylen, "%s", strerror(errno));
    struct stat st;
    int rc = -1;
    char *buf = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        ngi_fail(why, whylen, "not a regular file");
        goto out;
    }
    if ((unsigned long long)st.st_size > max) {
        ngi_fail(why, whylen, "larger than %zu bytes", max);
        goto out;
    }
    size_t want = (size_t)st.st_size;
    if (!(buf = malloc(want + 1))) {
        ngi_fail(why, whylen, "out of memory");
        goto out;
    }
    size_t got = ngi_read_full(fd, buf, want);
    buf[got] = '\0';
    if (len)
        *len = got;
    *out = buf;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    close(fd);
    return rc;
}

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

/* Append @p s (n bytes) to the growing buffer; -1 past @p max. */
static int append(char **buf, size_t *len, size_t max, const char *s, size_t n)
{
    if (*len + n > max)
        return -1;
    char *b = realloc(*buf, *len + n + 1);
    if (!b)
        return -1;
    memcpy(b + *len, s, n);
    *len += n;
    b[*len] = '\0';
    *buf = b;
    return 0;
}

static int expand(const char *text, const char *dir, int depth, char **out, size_t *len,
                  size_t max);

/* The files of one "Include PATTERN" line, each expanded in turn. */
static void include_files(const char *pattern, const char *dir, int depth, char **out,
                          size_t *len, size_t max)
{
    char full[2 * PATH_MAX + 2], why[64], *text;
    glob_t g;
    if (pattern[0] == '/' || !dir[0])
        snprintf(full, sizeof full, "%s", pattern);
    else
        snprintf(full, sizeof full, "%s/%s", dir, pattern);
    if (depth >= 2 || glob(full, 0, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (ngi_doctor_read(g.gl_pathv[i], max, &text, NULL, why, sizeof why) == 0) {
            expand(text, dir, depth + 1, out, len, max);
            free(text);
        }
    globfree(&g);
}

static int expand(const char *text, const char *dir, int depth, char **out, size_t *len,
                  size_t max)
{
    char line[LINE_MAX_NG], word[16], pattern[PATH_MAX];
    for (const char *p = text; *p;) {
        const char *start = p;
        p = next_line(p, line, sizeof line);
        if (sscanf(line, " %15s %4095s", word, pattern) == 2 && !strcasecmp(word, "Include"))
            include_files(pattern, dir, depth, out, len, max);
        else if (append(out, len, max, start, (size_t)(p - start)) < 0 ||
                 (p[-1] != '\n' && append(out, len, max, "\n", 1) < 0))
            return -1;
    }
    return 0;
}

int ngi_conf_includes(char **text, const char *path, size_t max)
{
    char dir[PATH_MAX], *out = NULL;
    size_t len = 0;
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 0, path);
    if (!strcasestr(*text, "include"))
        return 0;
    if (expand(*text, dir, 0, &out, &len, max) < 0 || !out) {
        free(out);
        return -1;
    }
    free(*text);
    *text = out;
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
    if (glob(full, 0, NULL, &g) != 0)
        return;
    char why[64];
    for (size_t i = 0; i < g.gl_pathc && ps->files < PLUGSTACK_FILES; i++)
        read_one(g.gl_pathv[i], dirs, ps, depth + 1, why, sizeof why);
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
    if (ngi_doctor_read(path, PLUGSTACK_MAX, &text, NULL, why, whylen) < 0)
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
