/* The node's gres GPU list in Slurm's index order from a whole gres.conf
 * (NodeName= filter, File= values, AutoDetect=). The rule and its Slurm
 * sources are in docs/gpu-order.md. */
#include "private/gpu.h"
#include "private/hostlist.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define GRES_MAX_LINE 4096   /* a gres.conf line, continuations joined */
#define PATH_MAX_NG 4096     /* a device file path */
#define GRES_MAX_LINES 4096  /* records we are willing to read */
#define GRES_MAX_FILE 4096   /* the file itself, in KiB of lines read */

/* ---------- gres.conf parsing ---------- */

/* One Name=gpu record that applies to the node. */
typedef struct gres_rec {
    char *file;       /* File= or MultipleFiles= value, or NULL */
    int multiple;     /* MultipleFiles=: the whole list is one GPU */
    unsigned long count; /* Count=, 0 if not given */
} gres_rec;

typedef struct gres_conf {
    gres_rec recs[GRES_MAX_LINES];
    unsigned n;
    unsigned other_node_gpu_lines;  /* Name=gpu records whose NodeName= is not us */
    char autodetect_global[16];
    char autodetect_node[16];
} gres_conf;

static void conf_free(gres_conf *c)
{
    for (unsigned i = 0; i < c->n; i++)
        free(c->recs[i].file);
    free(c);
}

/* Does a NodeName= hostlist ("node[01-04],gpu7") name this node? As
 * slurmd: exact names after expansion; NULL node (CLI, no node) = all. */
static int node_matches(const char *spec, const char *node, unsigned lineno, char *err,
                        size_t errlen)
{
    if (!node)
        return 1;
    char why[256];
    int m = ngi_hostlist_contains(spec, node, why, sizeof why);
    if (m < 0)
        return ngi_fail(err, errlen, "gres.conf line %u: NodeName=%s", lineno, why);
    return m;
}

static void strip_quotes(char *v)
{
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        memmove(v, v + 1, n - 2);
        v[n - 2] = '\0';
    }
}

/* Parse one logical line (comments stripped) into the conf. */
static int parse_line(gres_conf *c, char *line, const char *node, unsigned lineno,
                      char *err, size_t errlen)
{
    char *name = NULL, *file = NULL, *mfile = NULL, *nodes = NULL, *autodet = NULL;
    char *count = NULL;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return ngi_fail(err, errlen, "gres.conf line %u: '%.32s' is not Key=Value", lineno,
                           tok);
        *eq = '\0';
        char *v = eq + 1;
        strip_quotes(v);
        if (!strcasecmp(tok, "Name"))
            name = v;
        else if (!strcasecmp(tok, "File") || !strcasecmp(tok, "Files"))
            file = v;
        else if (!strcasecmp(tok, "MultipleFiles"))
            mfile = v;
        else if (!strcasecmp(tok, "NodeName"))
            nodes = v;
        else if (!strcasecmp(tok, "AutoDetect"))
            autodet = v;
        else if (!strcasecmp(tok, "Count"))
            count = v;
        /* Type, Cores, CPUs, Links, Flags, UniqueId, Include: no effect on
         * the index order (see docs/gpu-order.md). */
    }
    if (nodes) {
        int m = node_matches(nodes, node, lineno, err, errlen);
        if (m < 0)
            return -1;
        if (!m) {
            /* Another node's record; remembered for the "none is ours" message. */
            c->other_node_gpu_lines += name && !strcasecmp(name, "gpu");
            return 0;
        }
    }
    if (autodet) {
        char *dst = nodes ? c->autodetect_node : c->autodetect_global;
        if (ngi_strlcpy(dst, autodet, 16))
            return ngi_fail(err, errlen, "gres.conf line %u: AutoDetect='%.32s' unknown", lineno,
                           autodet);
    }
    if (!name || strcasecmp(name, "gpu"))
        return 0;
    if (c->n >= GRES_MAX_LINES)
        return ngi_fail(err, errlen, "gres.conf: more than %d gpu lines", GRES_MAX_LINES);
    gres_rec *r = &c->recs[c->n];
    memset(r, 0, sizeof(*r));
    if (count) {
        char *end;
        errno = 0;
        r->count = strtoul(count, &end, 10);
        /* Count=4K style suffixes never apply to GPUs; reject junk. */
        if (errno || end == count || *end || r->count > NG_MAX_GPUS)
            return ngi_fail(err, errlen, "gres.conf line %u: Count='%.32s' invalid", lineno,
                           count);
    }
    if (file || mfile) {
        r->multiple = !file;
        r->file = strdup(file ? file : mfile);
        if (!r->file)
            return ngi_fail(err, errlen, "out of memory");
    }
    c->n++;
    return 0;
}

/* gres.conf is the admin's file, so symlinks are followed (a shared config
 * directory often is one), but it is never waited on: opened O_NONBLOCK and
 * read only when it is a regular file (a FIFO would block slurmstepd and
 * doctor alike). NULL with errno; EINVAL: not a regular file. */
static FILE *open_conf(const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    FILE *f = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        errno = EINVAL;
    else
        f = fdopen(fd, "r");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

/* Read the file: '#' comments, '\' line continuations (as Slurm's parser). */
static int read_conf(gres_conf *c, const char *path, const char *node, char *err,
                     size_t errlen)
{
    FILE *f = open_conf(path);
    if (!f && errno == EINVAL)
        return ngi_fail(err, errlen, "gres.conf '%s' is not a regular file", path);
    if (!f)
        return ngi_fail(err, errlen, "cannot open gres.conf '%s': %s", path, strerror(errno));
    char buf[GRES_MAX_LINE], line[GRES_MAX_LINE];
    size_t used = 0;
    unsigned lineno = 0, start_line = 1, nlines = 0;
    int rc = 0;
    line[0] = '\0';
    while (fgets(buf, sizeof(buf), f)) {
        lineno++;
        if (++nlines > GRES_MAX_FILE * 16) {
            rc = ngi_fail(err, errlen, "gres.conf '%s' is too long", path);
            break;
        }
        size_t n = strlen(buf);
        if (n == sizeof(buf) - 1 && buf[n - 1] != '\n') {
            rc = ngi_fail(err, errlen, "gres.conf line %u longer than %d bytes", lineno,
                         GRES_MAX_LINE - 2);
            break;
        }
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        n = strcspn(buf, "\r\n");
        buf[n] = '\0';
        int cont = n > 0 && buf[n - 1] == '\\';
        if (cont)
            buf[--n] = ' ';
        if (used == 0)
            start_line = lineno;
        if (used + n + 2 > sizeof(line)) {
            rc = ngi_fail(err, errlen, "gres.conf line %u longer than %d bytes", start_line,
                         GRES_MAX_LINE - 2);
            break;
        }
        memcpy(line + used, buf, n);
        used += n;
        line[used++] = ' ';
        line[used] = '\0';
        if (cont)
            continue;
        rc = parse_line(c, line, node, start_line, err, errlen);
        used = 0;
        line[0] = '\0';
        if (rc)
            break;
    }
    if (!rc && used)
        rc = parse_line(c, line, node, start_line, err, errlen);
    fclose(f);
    return rc;
}

/* Expand records in gres.conf order: one index per File= name, one per
 * MultipleFiles= record (its first file names the GPU). Records without
 * File= get no device and no index (Slurm sets no env var for them). */
static int conf_order(const gres_conf *c, const char *fsroot, ng_gres_order *out,
                      char *err, size_t errlen)
{
    for (unsigned i = 0; i < c->n; i++) {
        const gres_rec *r = &c->recs[i];
        if (!r->file)
            continue;
        ng_gres_order tmp;
        memset(&tmp, 0, sizeof(tmp));
        unsigned limit = r->multiple ? NG_MAX_GPUS + 1 : (r->count ? r->count : NG_MAX_GPUS + 1);
        if (ngi_gres_order_expand(r->file, &tmp, limit, err, errlen)) {
            ng_gres_order_free(&tmp);
            return -1;
        }
        unsigned take = r->multiple ? (tmp.count ? 1 : 0) : tmp.count;
        for (unsigned k = 0; k < take; k++) {
            char path[PATH_MAX_NG];
            /* The conf describes the node whose root is fsroot. */
            if (ngi_path(path, sizeof(path), fsroot, tmp.device_files[k]) ||
                ngi_gres_order_add(out, path, err, errlen)) {
                if (!err || !*err)
                    ngi_fail(err, errlen, "device file path too long");
                ng_gres_order_free(&tmp);
                return -1;
            }
        }
        ng_gres_order_free(&tmp);
    }
    return 0;
}

typedef struct merged {
    char *file;
    int links;  /* position in the AutoDetect enumeration; -1 = config-only */
} merged;

static int merged_cmp_file(const void *x, const void *y)
{
    return ngi_natcmp(((const merged *)x)->file, ((const merged *)y)->file);
}

static int merged_cmp_links(const void *x, const void *y)
{
    const merged *a = x, *b = y;
    if ((a->links < 0) != (b->links < 0))
        return a->links < 0 ? 1 : -1;   /* config-only (no Links) last */
    if (a->links != b->links)
        return a->links < b->links ? -1 : 1;
    return ngi_natcmp(a->file, b->file);    /* keeps the file order: stable */
}

/* AutoDetect: Slurm's gres_gpu.c _merge_system_gres_conf(). System GPUs
 * that match a configured File= (or fill a File-less record) are kept,
 * config-only File= GPUs are appended, then everything is sorted by file
 * name (strnatcmp) and by Links position (= enumeration order). */
static int merge_autodetect(const gres_conf *c, const char *fsroot, const char *kind,
                            ng_gres_order *out, char *err, size_t errlen)
{
    ng_gres_order sys, conf;
    memset(&conf, 0, sizeof(conf));
    if (ngi_gpu_autodetect(fsroot, kind, &sys, err, errlen))
        return -1;
    int rc = -1;
    merged *m = NULL;
    unsigned nm = 0, fileless = 0, any = 0;
    for (unsigned i = 0; i < c->n; i++) {
        any = 1;
        if (!c->recs[i].file)
            fileless += c->recs[i].count ? (unsigned)c->recs[i].count : 1;
    }
    if (conf_order(c, fsroot, &conf, err, errlen))
        goto out;
    m = calloc(sys.count + conf.count + 1, sizeof(*m));
    if (!m) {
        ngi_fail(err, errlen, "out of memory");
        goto out;
    }
    unsigned char used[NG_MAX_GPUS] = {0};
    for (unsigned k = 0; k < conf.count; k++) {
        unsigned s;
        for (s = 0; s < sys.count; s++)
            if (!used[s] && strcmp(sys.device_files[s], conf.device_files[k]) == 0)
                break;
        m[nm].file = conf.device_files[k];
        m[nm].links = s < sys.count ? (int)s : -1;
        if (s < sys.count)
            used[s] = 1;
        nm++;
    }
    /* Only AutoDetect (no gpu line at all) takes every system GPU;
     * File-less records take the remaining ones in enumeration order. */
    unsigned take = any ? fileless : sys.count;
    for (unsigned s = 0; s < sys.count && take; s++) {
        if (used[s])
            continue;
        m[nm].file = sys.device_files[s];
        m[nm].links = (int)s;
        nm++;
        take--;
    }
    qsort(m, nm, sizeof(*m), merged_cmp_file);
    /* AutoDetect=nvidia (Slurm 24.11+) records carry no Links: the file
     * order is final. The others record their enumeration in Links. */
    if (strcasecmp(kind, "nvidia") != 0)
        qsort(m, nm, sizeof(*m), merged_cmp_links);
    for (unsigned k = 0; k < nm; k++)
        if (ngi_gres_order_add(out, m[k].file, err, errlen))
            goto out;
    rc = 0;
out:
    free(m);
    ng_gres_order_free(&sys);
    ng_gres_order_free(&conf);
    if (rc)
        ng_gres_order_free(out);
    return rc;
}

int ng_gres_order_from_conf(ng_gres_order *out, const char *gres_conf_path,
                            const char *node_name, const char *fsroot,
                            char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!gres_conf_path || !*gres_conf_path)
        return ngi_fail(err, errlen, "no gres.conf path given");
    gres_conf *c = calloc(1, sizeof(*c));
    if (!c)
        return ngi_fail(err, errlen, "out of memory");
    int rc = read_conf(c, gres_conf_path, node_name, err, errlen);
    if (!rc) {
        const char *ad = c->autodetect_node[0] ? c->autodetect_node : c->autodetect_global;
        int manual = !*ad || !strcasecmp(ad, "off");
        if (manual && c->n == 0 && c->other_node_gpu_lines) {
            /* A shared gres.conf without this node: its GPUs are unknown
             * here, never another node group's (issue 12). */
            rc = ngi_fail(err, errlen, "gres.conf '%s': none of its %u Name=gpu records "
                         "names node '%s' (NodeName=)", gres_conf_path,
                         c->other_node_gpu_lines, node_name);
        } else if (manual) {
            rc = conf_order(c, fsroot, out, err, errlen);
        } else if (!strcasecmp(ad, "nvml") || !strcasecmp(ad, "nvidia") ||
                   !strcasecmp(ad, "rsmi") || !strcasecmp(ad, "oneapi")) {
            rc = merge_autodetect(c, fsroot, ad, out, err, errlen);
        } else {
            rc = ngi_fail(err, errlen, "gres.conf: AutoDetect=%s is not supported", ad);
        }
    }
    if (rc)
        ng_gres_order_free(out);
    conf_free(c);
    return rc;
}

/* What gres.conf says for one node, read by the same rules as the order
 * above (NodeName= matching, AutoDetect in force, File= expansion). */
int ngi_gres_conf_summary(const char *path, const char *node, const char *fsroot,
                          ngi_gres_summary *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    gres_conf *c = calloc(1, sizeof(*c));
    if (!c)
        return ngi_fail(err, errlen, "out of memory");
    int rc = read_conf(c, path, node, err, errlen);
    if (!rc) {
        out->records = c->n;
        out->other_records = c->other_node_gpu_lines;
        for (unsigned i = 0; i < c->n; i++)
            out->fileless += !c->recs[i].file;
        ngi_strlcpy(out->autodetect, c->autodetect_node[0] ? c->autodetect_node
                                                           : c->autodetect_global,
                    sizeof out->autodetect);
        rc = conf_order(c, fsroot, &out->files, err, errlen);
    }
    conf_free(c);
    if (rc)
        ng_gres_order_free(&out->files);
    return rc;
}
