/* What the vendor tools and slurmd print, parsed for comparison. Formats
 * as the tools print them (NVIDIA's nvidia-smi documentation and public
 * captures; docs/admin-guide.md names the versions seen):
 *
 *   nvidia-smi topo -m   a tab-separated matrix; the header row (underlined
 *                        with SGR escapes on recent drivers) names the GPU
 *                        and NIC columns, then "CPU Affinity", "NUMA
 *                        Affinity" (driver 450+) and "GPU NUMA ID" (535+);
 *                        a GPU row has one cell per column, an empty CPU
 *                        Affinity when the driver knows none;
 *   nvidia-smi -q        one "GPU 00000000:4E:00.0" block per GPU, in index
 *                        order, with "Minor Number : N" inside;
 *   rocm-smi             "GPU[0]\t\t: PCI Bus: 0000:C1:00.0" and
 *                        "GPU[0]\t\t: (Topology) Numa Node: 3" (older
 *                        releases write "GPU 0");
 *   slurmd -G            "Gres Name=gpu Type=... Count=8 Index=0 ... File=..."
 *                        per record, in index order. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CELLS 160

/* Copy line @p p into @p line without SGR escapes (ESC [ digits ; m). */
static const char *plain_line(const char *p, char *line, size_t len)
{
    size_t k = 0;
    for (; *p && *p != '\n'; p++) {
        if (p[0] == '\033' && p[1] == '[') {
            const char *q = p + 2;
            while (isdigit((unsigned char)*q) || *q == ';')
                q++;
            if (*q == 'm') {
                p = q;
                continue;
            }
        }
        if (*p != '\r' && k + 1 < len)
            line[k++] = *p;
    }
    line[k] = '\0';
    return *p ? p + 1 : p;
}

/* Split a line at tabs (cells trimmed of spaces); the number of cells. */
static unsigned split_tabs(char *line, char *cells[], unsigned max)
{
    unsigned n = 0;
    for (char *c = line; n < max;) {
        char *tab = strchr(c, '\t');
        if (tab)
            *tab = '\0';
        while (*c == ' ')
            c++;
        size_t l = strlen(c);
        while (l && c[l - 1] == ' ')
            c[--l] = '\0';
        cells[n++] = c;
        if (!tab)
            break;
        c = tab + 1;
    }
    return n;
}

/* Header cells: where "CPU Affinity" and "NUMA Affinity" are. */
static int header_columns(char *cells[], unsigned n, int *cpu_col, int *numa_col)
{
    *cpu_col = *numa_col = -1;
    for (unsigned i = 0; i < n; i++) {
        if (!strcmp(cells[i], "CPU Affinity"))
            *cpu_col = (int)i;
        else if (!strcmp(cells[i], "NUMA Affinity"))
            *numa_col = (int)i;
    }
    return *cpu_col > 0 ? 0 : -1;
}

int ngi_smi_topo_parse(const char *text, ngi_smi_topo_row *rows, unsigned max)
{
    char line[4096], *cells[CELLS];
    int cpu_col = -1, numa_col = -1;
    unsigned nrows = 0;
    for (const char *p = text; p && *p;) {
        p = plain_line(p, line, sizeof line);
        unsigned n = split_tabs(line, cells, CELLS), idx;
        char tail;
        if (cpu_col < 0) {
            /* The header: a leading empty cell, then GPU0 ... */
            if (n > 2 && !cells[0][0] && !strcmp(cells[1], "GPU0"))
                header_columns(cells, n, &cpu_col, &numa_col);
            continue;
        }
        if (n < 2 || sscanf(cells[0], "GPU%u%c", &idx, &tail) != 1 || nrows >= max)
            continue;
        ngi_smi_topo_row *r = &rows[nrows++];
        r->index = idx;
        snprintf(r->cpus, sizeof r->cpus, "%s", (int)n > cpu_col ? cells[cpu_col] : "");
        snprintf(r->numa, sizeof r->numa, "%s",
                 numa_col > 0 && (int)n > numa_col ? cells[numa_col] : "");
    }
    return cpu_col < 0 ? -1 : (int)nrows;
}

/* "    Minor Number                          : 0" -> "0". */
static const char *field_value(const char *line, const char *key)
{
    const char *p = line + strspn(line, " ");
    size_t k = strlen(key);
    if (strncmp(p, key, k) != 0)
        return NULL;
    p += k;
    p += strspn(p, " ");
    if (*p != ':')
        return NULL;
    return p + 1 + strspn(p + 1, " ");
}

int ngi_smi_query_parse(const char *text, ngi_smi_gpu *gpus, unsigned max)
{
    char line[1024];
    unsigned n = 0;
    for (const char *p = text; p && *p;) {
        p = plain_line(p, line, sizeof line);
        char bus[NG_BUSID_LEN];
        const char *v;
        if (!strncmp(line, "GPU ", 4) && n < max && !ngi_busid_normalize(line + 4, bus)) {
            snprintf(gpus[n].bus, sizeof gpus[n].bus, "%s", bus);
            gpus[n++].minor = -1;
        } else if (n && (v = field_value(line, "Minor Number")) && isdigit((unsigned char)*v)) {
            gpus[n - 1].minor = atoi(v);
        }
    }
    return (int)n;
}

/* "GPU[3]\t\t: ..." or "GPU 3   : ..." -> 3 and the text after ": ". */
static const char *rocm_gpu(const char *line, unsigned *idx)
{
    char c;
    if (sscanf(line, "GPU[%u%c", idx, &c) == 2 && c == ']')
        ;
    else if (sscanf(line, "GPU %u", idx) != 1)
        return NULL;
    const char *colon = strchr(line, ':');
    return colon ? colon + 1 + strspn(colon + 1, " \t") : NULL;
}

static ngi_rocm_gpu *rocm_slot(ngi_rocm_gpu *gpus, unsigned *n, unsigned max, unsigned idx)
{
    for (unsigned i = 0; i < *n; i++)
        if (gpus[i].index == idx)
            return &gpus[i];
    if (*n >= max)
        return NULL;
    ngi_rocm_gpu *g = &gpus[(*n)++];
    memset(g, 0, sizeof *g);
    g->index = idx;
    g->numa = -2;
    return g;
}

int ngi_rocm_parse(const char *text, ngi_rocm_gpu *gpus, unsigned max)
{
    char line[1024];
    unsigned n = 0, idx;
    for (const char *p = text; p && *p;) {
        p = plain_line(p, line, sizeof line);
        const char *v = rocm_gpu(line, &idx);
        ngi_rocm_gpu *g;
        if (!v || !(g = rocm_slot(gpus, &n, max, idx)))
            continue;
        if (!strncmp(v, "PCI Bus:", 8))
            ngi_busid_normalize(v + 8 + strspn(v + 8, " "), g->bus);
        else if (!strncmp(v, "(Topology) Numa Node:", 21))
            g->numa = atoi(v + 21);
    }
    return (int)n;
}

/* Value of "Key=" in a slurmd -G line, up to the next space. */
static int gres_token(const char *line, const char *key, char *out, size_t len)
{
    size_t k = strlen(key);
    for (const char *p = line; (p = strstr(p, key)); p += k)
        if ((p == line || p[-1] == ' ') && p[k] == '=') {
            size_t n = strcspn(p + k + 1, " \t");
            if (n >= len)
                return -1;
            memcpy(out, p + k + 1, n);
            out[n] = '\0';
            return 0;
        }
    return -1;
}

int ngi_slurmd_gres_parse(const char *text, ng_gres_order *order, char *why, size_t whylen)
{
    char line[4096], name[32], idx[16], file[PATH_MAX];
    unsigned next = 0;
    memset(order, 0, sizeof *order);
    for (const char *p = text; p && *p;) {
        p = plain_line(p, line, sizeof line);
        if (!strstr(line, "Gres ") || gres_token(line, "Name", name, sizeof name) < 0 ||
            strcmp(name, "gpu") != 0)
            continue;
        if (gres_token(line, "Index", idx, sizeof idx) < 0)
            snprintf(idx, sizeof idx, "(none)");   /* also a value too long to keep */
        /* Index= is not the gres index: slurmd 22.05 prints the number of
         * the record's device file ("nvidia3" -> 3; 0 for a File= list),
         * one line per record in gres.conf order, which is the index order
         * (docs/gpu-order.md). It must be there and be a number. */
        if (!idx[0] || strspn(idx, "0123456789") != strlen(idx))
            return ng_gres_order_free(order),
                   ngi_fail(why, whylen, "slurmd -G: gpu record with Index=%s where %u was next",
                            idx, next);
        /* Records without File= (Count only) hold indices but no device:
         * no device order to compare. */
        if (gres_token(line, "File", file, sizeof file) < 0 || !strcmp(file, "(null)"))
            return ng_gres_order_free(order),
                   ngi_fail(why, whylen, "slurmd -G: gpu record Index=%s has no File=", idx);
        unsigned before = order->count;
        if (ngi_gres_order_expand(file, order, NG_MAX_GPUS + 1, why, whylen) < 0)
            return ng_gres_order_free(order), -1;
        next += order->count - before;
    }
    return 0;
}

uint32_t ngi_slurm_version_parse(const char *text)
{
    unsigned a, b, c;
    for (const char *p = text; p && *p; p++)
        if (isdigit((unsigned char)*p) && (p == text || p[-1] == ' ') &&
            sscanf(p, "%u.%u.%u", &a, &b, &c) == 3 && a < 256 && b < 256 && c < 256)
            return (a << 16) | (b << 8) | c;
    return 0;
}
