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
#include <stddef.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define GRES_MAX_LINE 4096   /* a gres.conf line, continuations joined */
#define PATH_MAX_NG 4096     /* a device file path */
#define GRES_MAX_LINES 4096  /* records we are willing to read */
#define GRES_MAX_BYTES (4u << 20) /* the file itself */

/* ---------- gres.conf parsing ---------- */

struct ngi_gres_conf {
    ngi_gres_rec recs[GRES_MAX_LINES];
    unsigned n;
    unsigned other_node_gpu_lines;  /* Name=gpu records whose NodeName= is not us */
    char autodetect_global[16];
    char autodetect_node[16];
    char path[PATH_MAX_NG];
    char node[256];                 /* "" = every record (no node given) */
};

void ngi_gres_conf_free(ngi_gres_conf *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->n; i++) {
        free(c->recs[i].file);
        free(c->recs[i].cores);
    }
    free(c);
}

/* Does a NodeName= hostlist ("node[01-04],gpu7") name this node? As
 * slurmd: exact names after expansion; no node (CLI, no node) = all. */
static int node_matches(const char *spec, const char *node, unsigned lineno, char *err,
                        size_t errlen)
{
    if (!node[0])
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

/* The keys of one record that matter here. Links, Flags, UniqueId: no
 * effect on the index order or locality (see docs/gpu-order.md); Type is
 * kept for doctor, which compares it with slurm.conf's Gres=. */
typedef struct tokens {
    char *name, *file, *mfile, *nodes, *autodet, *count, *cores, *cpus, *type;
} tokens;

static const struct {
    const char *key;
    size_t off;
} token_keys[] = {
    {"Name", offsetof(tokens, name)},        {"File", offsetof(tokens, file)},
    {"Files", offsetof(tokens, file)},       {"MultipleFiles", offsetof(tokens, mfile)},
    {"NodeName", offsetof(tokens, nodes)},   {"AutoDetect", offsetof(tokens, autodet)},
    {"Count", offsetof(tokens, count)},      {"Cores", offsetof(tokens, cores)},
    {"CPUs", offsetof(tokens, cpus)},        {"Type", offsetof(tokens, type)},
};

/* Split one logical line into @p t (values point into @p line). */
static int tokenize(char *line, tokens *t, unsigned lineno, char *err, size_t errlen)
{
    char *save = NULL;
    memset(t, 0, sizeof *t);
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return ngi_fail(err, errlen, "gres.conf line %u: '%.32s' is not Key=Value", lineno,
                           tok);
        *eq = '\0';
        strip_quotes(eq + 1);
        for (size_t k = 0; k < NGI_ARRAY_LEN(token_keys); k++)
            if (!strcasecmp(tok, token_keys[k].key))
                *(char **)((char *)t + token_keys[k].off) = eq + 1;
    }
    return 0;
}

/* Count= of a gpu record: a plain number, at most NG_MAX_GPUS (Count=4K
 * style suffixes never apply to GPUs; junk is refused). */
static int parse_count(const char *count, unsigned long *out, unsigned lineno, char *err,
                       size_t errlen)
{
    char *end;
    errno = 0;
    *out = strtoul(count, &end, 10);
    if (errno || end == count || *end || *out > NG_MAX_GPUS)
        return ngi_fail(err, errlen, "gres.conf line %u: Count='%.32s' invalid", lineno, count);
    return 0;
}

/* Keep one Name=gpu record of the node: File= (or MultipleFiles=), Count=,
 * Cores= (Slurm reads Cores= when both are given, else CPUs=: both are
 * Slurm's core indices) and its line. */
static int add_record(ngi_gres_conf *c, const tokens *t, unsigned lineno, char *err,
                      size_t errlen)
{
    if (c->n >= GRES_MAX_LINES)
        return ngi_fail(err, errlen, "gres.conf: more than %d gpu lines", GRES_MAX_LINES);
    ngi_gres_rec *r = &c->recs[c->n];
    memset(r, 0, sizeof(*r));
    r->line = lineno;
    if (t->count && parse_count(t->count, &r->count, lineno, err, errlen) < 0)
        return -1;
    const char *cores = t->cores ? t->cores : t->cpus;
    r->cores_key = t->cores ? "Cores" : "CPUs";
    snprintf(r->type, sizeof r->type, "%s", t->type ? t->type : "");
    r->multiple = !t->file && t->mfile;
    if (((t->file || t->mfile) && !(r->file = strdup(t->file ? t->file : t->mfile))) ||
        (cores && !(r->cores = strdup(cores)))) {
        free(r->file);
        return ngi_fail(err, errlen, "out of memory");
    }
    c->n++;
    return 0;
}

/* Parse one logical line (comments stripped) into the conf. */
static int parse_line(ngi_gres_conf *c, char *line, unsigned lineno, char *err, size_t errlen)
{
    tokens t;
    if (tokenize(line, &t, lineno, err, errlen) < 0)
        return -1;
    if (t.nodes) {
        int m = node_matches(t.nodes, c->node, lineno, err, errlen);
        if (m <= 0) {
            /* Another node's record; remembered for the "none is ours" message. */
            c->other_node_gpu_lines += !m && t.name && !strcasecmp(t.name, "gpu");
            return m;
        }
    }
    if (t.autodet && ngi_strlcpy(t.nodes ? c->autodetect_node : c->autodetect_global,
                                 t.autodet, 16))
        return ngi_fail(err, errlen, "gres.conf line %u: AutoDetect='%.32s' unknown", lineno,
                       t.autodet);
    if (!t.name || strcasecmp(t.name, "gpu"))
        return 0;
    return add_record(c, &t, lineno, err, errlen);
}

/* One physical line into the logical line being joined: '#' comments cut,
 * a trailing '\' continues it (as Slurm's parser). 1 when the logical line
 * is complete, 0 when it continues, -1 when too long. */
static int join_line(const char *p, size_t n, char *line, size_t *used)
{
    size_t k = strcspn(p, "#\n");
    if (k > n)
        k = n;
    while (k && p[k - 1] == '\r')
        k--;
    int cont = k > 0 && p[k - 1] == '\\';
    if (cont)
        k--;
    if (*used + k + 2 > GRES_MAX_LINE)
        return -1;
    memcpy(line + *used, p, k);
    *used += k;
    line[(*used)++] = ' ';
    line[*used] = '\0';
    return !cont;
}

/* Parse the whole text, line by line, continuations joined. */
static int parse_text(ngi_gres_conf *c, const char *text, char *err, size_t errlen)
{
    char line[GRES_MAX_LINE];
    size_t used = 0;
    unsigned lineno = 0, start = 1;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        if (used == 0)
            start = lineno + 1;
        lineno++;
        int done = join_line(p, n, line, &used);
        if (done < 0)
            return ngi_fail(err, errlen, "gres.conf line %u longer than %d bytes", start,
                            GRES_MAX_LINE - 2);
        if (done) {
            used = 0;
            if (parse_line(c, line, start, err, errlen))
                return -1;
        }
        p += n + (p[n] == '\n');
    }
    return used ? parse_line(c, line, start, err, errlen) : 0;
}

int ngi_gres_conf_load(const char *path, const char *node, ngi_gres_conf **out, char *err,
                       size_t errlen)
{
    char *text, why[128];
    *out = NULL;
    if (!path || !*path)
        return ngi_fail(err, errlen, "no gres.conf path given");
    /* gres.conf is the admin's file, so a final symlink is followed (a
     * shared config directory often is one), but it is never waited on:
     * the library's reader opens it O_NONBLOCK and reads it only when it is
     * a regular file (a FIFO would block slurmstepd and doctor alike). */
    if (ngi_read_regular_at(AT_FDCWD, path, NGI_FILE_FOLLOW, GRES_MAX_BYTES, &text, NULL, NULL,
                            why, sizeof why) < 0) {
        if (!strcmp(why, "not a regular file"))
            return ngi_fail(err, errlen, "gres.conf '%s' is not a regular file", path);
        return ngi_fail(err, errlen, "cannot read gres.conf '%s': %s", path, why);
    }
    ngi_gres_conf *c = calloc(1, sizeof(*c));
    int rc = c ? 0 : ngi_fail(err, errlen, "out of memory");
    if (c) {
        ngi_strlcpy(c->path, path, sizeof c->path);
        ngi_strlcpy(c->node, node ? node : "", sizeof c->node);
        rc = parse_text(c, text, err, errlen);
    }
    free(text);
    if (rc) {
        ngi_gres_conf_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

unsigned ngi_gres_conf_count(const ngi_gres_conf *c)
{
    return c->n;
}

const ngi_gres_rec *ngi_gres_conf_rec(const ngi_gres_conf *c, unsigned i)
{
    return i < c->n ? &c->recs[i] : NULL;
}

int ngi_gres_rec_files(const ngi_gres_rec *r, const char *fsroot, ng_gres_order *out,
                       char *err, size_t errlen)
{
    ng_gres_order tmp;
    memset(&tmp, 0, sizeof(tmp));
    if (!r->file)
        return 0;
    unsigned limit = r->multiple ? NG_MAX_GPUS + 1 : (r->count ? r->count : NG_MAX_GPUS + 1);
    if (ngi_gres_order_expand(r->file, &tmp, limit, err, errlen)) {
        ng_gres_order_free(&tmp);
        return -1;
    }
    unsigned take = r->multiple ? (tmp.count ? 1 : 0) : tmp.count;
    int rc = 0;
    for (unsigned k = 0; k < take && !rc; k++) {
        char path[PATH_MAX_NG];
        /* The conf describes the node whose root is fsroot. */
        if (ngi_path(path, sizeof(path), fsroot, tmp.device_files[k]))
            rc = ngi_fail(err, errlen, "device file path too long");
        else
            rc = ngi_gres_order_add(out, path, err, errlen);
    }
    ng_gres_order_free(&tmp);
    return rc;
}

/* Expand records in gres.conf order: one index per File= name, one per
 * MultipleFiles= record (its first file names the GPU). Records without
 * File= get no device and no index (Slurm sets no env var for them). */
static int conf_order(const ngi_gres_conf *c, const char *fsroot, ng_gres_order *out,
                      char *err, size_t errlen)
{
    for (unsigned i = 0; i < c->n; i++)
        if (ngi_gres_rec_files(&c->recs[i], fsroot, out, err, errlen))
            return -1;
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
static int merge_autodetect(const ngi_gres_conf *c, const char *fsroot, const char *kind,
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

int ngi_gres_conf_order(const ngi_gres_conf *c, const char *fsroot, ng_gres_order *out,
                        char *err, size_t errlen)
{
    int rc;
    memset(out, 0, sizeof(*out));
    const char *ad = c->autodetect_node[0] ? c->autodetect_node : c->autodetect_global;
    int manual = !*ad || !strcasecmp(ad, "off");
    if (manual && c->n == 0 && c->other_node_gpu_lines) {
        /* A shared gres.conf without this node: its GPUs are unknown
         * here, never another node group's (issue 12). */
        rc = ngi_fail(err, errlen, "gres.conf '%s': none of its %u Name=gpu records "
                     "names node '%s' (NodeName=)", c->path, c->other_node_gpu_lines,
                     c->node);
    } else if (manual) {
        rc = conf_order(c, fsroot, out, err, errlen);
    } else if (!strcasecmp(ad, "nvml") || !strcasecmp(ad, "nvidia") ||
               !strcasecmp(ad, "rsmi") || !strcasecmp(ad, "oneapi")) {
        rc = merge_autodetect(c, fsroot, ad, out, err, errlen);
    } else {
        rc = ngi_fail(err, errlen, "gres.conf: AutoDetect=%s is not supported", ad);
    }
    if (rc)
        ng_gres_order_free(out);
    return rc;
}

int ng_gres_order_from_conf(ng_gres_order *out, const char *gres_conf_path,
                            const char *node_name, const char *fsroot,
                            char *err, size_t errlen)
{
    ngi_gres_conf *c;
    memset(out, 0, sizeof(*out));
    if (ngi_gres_conf_load(gres_conf_path, node_name, &c, err, errlen) < 0)
        return -1;
    int rc = ngi_gres_conf_order(c, fsroot, out, err, errlen);
    ngi_gres_conf_free(c);
    return rc;
}

/* What gres.conf says for one node, read by the same rules as the order
 * above (NodeName= matching, AutoDetect in force, File= expansion). */
int ngi_gres_conf_summary(const ngi_gres_conf *c, const char *fsroot, ngi_gres_summary *out,
                          char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->records = c->n;
    out->other_records = c->other_node_gpu_lines;
    for (unsigned i = 0; i < c->n; i++)
        out->fileless += !c->recs[i].file;
    ngi_strlcpy(out->autodetect, c->autodetect_node[0] ? c->autodetect_node
                                                       : c->autodetect_global,
                sizeof out->autodetect);
    int rc = conf_order(c, fsroot, &out->files, err, errlen);
    if (rc)
        ng_gres_order_free(&out->files);
    return rc;
}

int ng_gres_conf_path(const char *plugin_arg, const char *slurm_conf, char *buf, size_t len)
{
    const char *slash = slurm_conf ? strrchr(slurm_conf, '/') : NULL;
    int n;
    if (plugin_arg && *plugin_arg)
        n = snprintf(buf, len, "%s", plugin_arg);
    else if (slurm_conf && slurm_conf[0] == '/' && slash)
        n = snprintf(buf, len, "%.*s/gres.conf", (int)(slash - slurm_conf), slurm_conf);
    else
        n = snprintf(buf, len, "/etc/slurm/gres.conf");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
