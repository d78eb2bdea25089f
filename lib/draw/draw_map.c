/* The terminal map: one row per NUMA node (kind, memory, then one cell per
 * core, wrapped into lines of at most ~100 characters, then the tasks whose
 * memory policy names the node), the GPUs and NICs with their tasks, the
 * legend. Plain ASCII unless NG_DRAW_COLOR: then cells get the task's (or
 * the heat's) colour from the 256-colour palette, and the separators stay
 * uncoloured so neighbouring cells of one task remain countable. */
#include "private/draw.h"

#include <string.h>

#define LABEL_W 24          /* "%4u %-7s %9s  " */
#define LINE_W 96           /* characters of cells on one line (after the label) */

typedef struct map {
    FILE *f;
    const ngi_draw_model *m;
    int colour;
    int cell_w;             /* characters per cell */
} map;

static void sgr_rgb(const map *p, ngi_rgb bg)
{
    if (p->colour)
        fprintf(p->f, "\033[%sm\033[48;5;%um", ngi_draw_dark(bg) ? "97" : "30",
                ngi_draw_ansi256(bg));
}

static void sgr(const map *p, const char *code)
{
    if (p->colour)
        fprintf(p->f, "\033[%sm", code);
}

static int digits(unsigned v)
{
    int d = 1;
    while (v >= 10)
        v /= 10, d++;
    return d;
}

static int cell_width(const ngi_draw_model *m)
{
    if (m->mode == NGI_MODE_PLAN)
        return digits(m->ntasks ? m->ntasks - 1 : 0);
    if (m->mode == NGI_MODE_TOPO)
        return digits(m->npu ? m->npu - 1 : 0);
    unsigned most = 0;
    for (unsigned pu = 0; pu < m->npu; pu++)
        most = m->pu_runnable[pu] > most ? m->pu_runnable[pu] : most;
    return digits(most) + 2; /* the count and marks: ! oversubscribed, ^ piled */
}

/* The text of one core's cell and its colour (-1: none, -2: dim). */
static void cell_text(const map *p, const ngi_draw_cell *c, char *buf, size_t len)
{
    if (c->state == NGI_PU_EXCLUDED || c->state == NGI_PU_ABSENT)
        snprintf(buf, len, "-");
    else if (p->m->mode == NGI_MODE_TOPO)
        snprintf(buf, len, "%u", c->first_pu);
    else if (p->m->mode == NGI_MODE_CHECK)
        snprintf(buf, len, "%u%s%s", c->runnable, c->over ? "!" : "", c->piled ? "^" : "");
    else if (c->state != NGI_PU_TASK)
        snprintf(buf, len, ".");
    else if (c->shared)
        snprintf(buf, len, "*");
    else
        snprintf(buf, len, "%d", c->task);
}

static void cell(const map *p, hwloc_obj_t core)
{
    ngi_draw_cell c;
    char text[24];
    ngi_draw_cell_of(p->m, core->cpuset, &c);
    cell_text(p, &c, text, sizeof text);
    if (c.state == NGI_PU_EXCLUDED || c.state == NGI_PU_ABSENT)
        sgr(p, "2");
    else if (p->m->mode == NGI_MODE_CHECK)
        sgr_rgb(p, ngi_draw_heat_rgb(c.runnable));
    else if (c.state == NGI_PU_IDLE)
        sgr_rgb(p, ngi_draw_rgb(NGI_C_IDLE));
    else if (c.state == NGI_PU_TASK && !c.shared)
        sgr_rgb(p, ngi_draw_task_rgb((unsigned)c.task));
    if (c.highlight)
        sgr(p, "1;4");
    fprintf(p->f, "%*s", p->cell_w, text);
    sgr(p, "0");
}

static unsigned node_cores(const ngi_draw_model *m, hwloc_const_cpuset_t cpus)
{
    unsigned n = 0;
    for (hwloc_obj_t c = ngi_draw_next_core(m->hw, NULL); c; c = ngi_draw_next_core(m->hw, c))
        n += hwloc_bitmap_intersects(c->cpuset, cpus);
    return n;
}

/* The cells of the cores of @p cpus, @p per a line; returns the width of
 * the last line (to pad the memory column). */
static int cells(const map *p, hwloc_const_cpuset_t cpus, unsigned per)
{
    unsigned k = 0;
    const ngi_draw_model *m = p->m;
    for (hwloc_obj_t c = ngi_draw_next_core(m->hw, NULL); c; c = ngi_draw_next_core(m->hw, c)) {
        if (!hwloc_bitmap_intersects(c->cpuset, cpus))
            continue;
        if (k && k % per == 0)
            fprintf(p->f, "\n%*s", LABEL_W, "");
        fputs(k % per ? " " : "", p->f);
        cell(p, c);
        k++;
    }
    unsigned last = k ? (k - 1) % per + 1 : 0;
    return (int)last * (p->cell_w + 1) - 1;
}

static void mem_marks(const map *p, unsigned i)
{
    int t, k = 0;
    const ngi_draw_model *m = p->m;
    if (hwloc_bitmap_iszero(m->node_tasks[i]))
        return;
    fputs("  mem", p->f);
    hwloc_bitmap_foreach_begin(t, m->node_tasks[i]) {
        if (k++ == NGI_MAX_CHIPS) {
            fprintf(p->f, " +%d", hwloc_bitmap_weight(m->node_tasks[i]) - NGI_MAX_CHIPS);
            break;
        }
        fputc(' ', p->f);
        sgr_rgb(p, ngi_draw_task_rgb((unsigned)t));
        fprintf(p->f, "%d%c", t, ngi_draw_mode_letter(ngi_draw_task_mode(m, (unsigned)t)));
        sgr(p, "0");
    }
    hwloc_bitmap_foreach_end();
}

static const char *owner_text(const ngi_draw_model *m, unsigned os, char *buf, size_t len)
{
    for (unsigned g = 0; g < ng_topology_gpu_count(m->topo); g++)
        if (hwloc_bitmap_isset(ng_topology_gpu(m->topo, g)->memory_nodes, os)) {
            snprintf(buf, len, "(no CPUs; memory of GPU %u)", g);
            return buf;
        }
    return "(no CPUs)";
}

static void node_row(const map *p, unsigned i, unsigned per, int width)
{
    const ng_numa_info *ni = ng_topology_numa(p->m->topo, i);
    char size[32], own[64];
    ngi_draw_bytes(ni->memory_bytes, size, sizeof size);
    fprintf(p->f, "%4u %-7s %9s  ", ni->os_index, ng_mem_kind_name(ni->kind), size);
    int used;
    if (ni->has_cpus && node_cores(p->m, ni->cpus)) {
        used = cells(p, ni->cpus, per);
    } else {
        const char *t = owner_text(p->m, ni->os_index, own, sizeof own);
        used = (int)strlen(t);
        fputs(t, p->f);
    }
    if (!hwloc_bitmap_iszero(p->m->node_tasks[i]))
        fprintf(p->f, "%*s", width > used ? width - used : 0, "");
    mem_marks(p, i);
    fputc('\n', p->f);
}

/* PUs in no CPU node (their node offline, say); the caller frees them. */
static hwloc_bitmap_t homeless(const ngi_draw_model *m)
{
    hwloc_bitmap_t rest = hwloc_bitmap_dup(m->present);
    for (unsigned i = 0; rest && i < ng_topology_numa_count(m->topo); i++)
        if (ng_topology_numa(m->topo, i)->has_cpus)
            hwloc_bitmap_andnot(rest, rest, ng_topology_numa(m->topo, i)->cpus);
    return rest;
}

/* Their cores get a row of their own: every core is on the map. */
static void homeless_row(const map *p, unsigned per)
{
    hwloc_bitmap_t rest = homeless(p->m);
    if (rest && !hwloc_bitmap_iszero(rest)) {
        fprintf(p->f, "%4s %-7s %9s  ", "-", "no node", "");
        cells(p, rest, per);
        fputc('\n', p->f);
    }
    hwloc_bitmap_free(rest);
}

/* Cells per line: every node's cores in as few lines as LINE_W characters
 * allow (120 columns with the label), the lines of a node equally long. */
static unsigned per_line(const ngi_draw_model *m, int *width, int cell_w)
{
    hwloc_bitmap_t rest = homeless(m);
    unsigned most = rest ? node_cores(m, rest) : 0;
    hwloc_bitmap_free(rest);
    most = most ? most : 1;
    for (unsigned i = 0; i < ng_topology_numa_count(m->topo); i++) {
        const ng_numa_info *ni = ng_topology_numa(m->topo, i);
        unsigned n = ni->has_cpus ? node_cores(m, ni->cpus) : 0;
        most = n > most ? n : most;
    }
    unsigned fit = (unsigned)(LINE_W / (cell_w + 1));
    fit = fit < 8 ? 8 : fit;
    unsigned lines = (most + fit - 1) / fit;
    unsigned per = (most + lines - 1) / lines;
    *width = (int)per * (cell_w + 1) - 1;
    return per;
}

static void header(const map *p, const ngi_legend *lg)
{
    const ng_draw_request *r = p->m->req;
    ngi_draw_plain(p->f, r->title ? r->title : "numaguard");
    fputc('\n', p->f);
    if (r->subtitle) {
        ngi_draw_plain(p->f, r->subtitle);
        fputc('\n', p->f);
    }
    ngi_draw_plain(p->f, lg->summary);
    static const char *const what[] = {
        [NGI_MODE_TOPO] = "each core's first CPU number",
        [NGI_MODE_PLAN] = "the task on each core",
        [NGI_MODE_CHECK] = "runnable threads on each core",
    };
    fprintf(p->f, "\n\n%4s %-7s %9s  cores: %s\n", "node", "kind", "memory", what[p->m->mode]);
}

/* "task 1", "tasks 0-3", "no task". */
static void task_list(hwloc_const_bitmap_t tasks, char *buf, size_t len)
{
    char list[96];
    int n = hwloc_bitmap_weight(tasks);
    if (n <= 0)
        snprintf(buf, len, "no task");
    else if (ng_list_format(tasks, list, sizeof list) < 0)
        snprintf(buf, len, "%d tasks", n);
    else
        snprintf(buf, len, "task%s %s", n > 1 ? "s" : "", list);
}

static void devices(const map *p)
{
    const ngi_draw_model *m = p->m;
    char nodes[128], tasks[128];
    for (unsigned g = 0; g < ng_topology_gpu_count(m->topo); g++) {
        const ng_gpu_info *gi = ng_topology_gpu(m->topo, g);
        ngi_draw_list(gi->numa_nodes, nodes, sizeof nodes);
        task_list(m->gpu_tasks[g], tasks, sizeof tasks);
        fprintf(p->f, "GPU %-3u %s %-7s numa %s", g, gi->pci_bus_id,
                ng_gpu_vendor_name(gi->vendor), nodes);
        if (m->mode == NGI_MODE_PLAN)
            fprintf(p->f, " %s", tasks);
        fputc('\n', p->f);
    }
    for (unsigned n = 0; n < ng_topology_nic_count(m->topo); n++) {
        const ng_nic_info *ni = ng_topology_nic(m->topo, n);
        if (m->nic_shown[n] == NGI_NIC_HIDDEN)
            continue;
        ngi_draw_list(ni->numa_nodes, nodes, sizeof nodes);
        task_list(m->nic_tasks[n], tasks, sizeof tasks);
        fprintf(p->f, "NIC %-3u %s ", n, ni->pci_bus_id);
        ngi_draw_plain(p->f, ni->name);
        fprintf(p->f, " %s numa %s", ng_nic_kind_name(ni->kind), nodes);
        if (m->mode == NGI_MODE_PLAN && (m->nics_asked || !hwloc_bitmap_iszero(m->nic_tasks[n])))
            fprintf(p->f, " %s", tasks);
        fputc('\n', p->f);
    }
    if (m->nic_hidden)
        fprintf(p->f, "NICs not listed: %u (%u Ethernet, %u RDMA without a task); --all-nics lists "
                "them\n", m->nic_hidden, m->nic_hidden_eth, m->nic_hidden - m->nic_hidden_eth);
}

/* Which tasks share each shared core ("*" in its cell: one character
 * cannot name them): "shared cores: CPU 0: tasks 0,4; CPU 1: tasks 1,5",
 * the core named by its first CPU, at most MAX_SHARED_LISTED of them. */
#define MAX_SHARED_LISTED 16
static void shared_cores(const map *p)
{
    const ngi_draw_model *m = p->m;
    unsigned n = 0;
    if (m->mode != NGI_MODE_PLAN)
        return;
    for (hwloc_obj_t c = ngi_draw_next_core(m->hw, NULL); c; c = ngi_draw_next_core(m->hw, c)) {
        ngi_draw_cell cell;
        ngi_draw_cell_of(m, c->cpuset, &cell);
        if (cell.state != NGI_PU_TASK || !cell.shared)
            continue;
        if (n < MAX_SHARED_LISTED)
            fprintf(p->f, "%s CPU %u: %s%s", n ? ";" : "shared cores:", cell.first_pu,
                    strchr(cell.tasks, ' ') ? "" : "tasks ", cell.tasks);
        n++;
    }
    if (n > MAX_SHARED_LISTED)
        fprintf(p->f, "; %u more", n - MAX_SHARED_LISTED);
    if (n)
        fputc('\n', p->f);
}

static void key_symbol(const map *p, const ngi_legend_row *r)
{
    char sym[8];
    switch (r->swatch) {
    case NGI_SW_STATE:
        snprintf(sym, sizeof sym, "%s", r->value == NGI_PU_IDLE ? "." : r->value == NGI_PU_FREE
                                                                   ? "N" : "-");
        break;
    case NGI_SW_SHARED: snprintf(sym, sizeof sym, "*"); break;
    case NGI_SW_MODE: snprintf(sym, sizeof sym, "%c", ngi_draw_mode_letter((ng_mem_mode)r->value)); break;
    case NGI_SW_HEAT:
        snprintf(sym, sizeof sym, "%u%s", r->value, r->value + 1 < NGI_HEAT_LEVELS ? "" : "+");
        break;
    case NGI_SW_NONE: sym[0] = '\0'; break;
    case NGI_SW_OVER: snprintf(sym, sizeof sym, "!"); break;
    case NGI_SW_PILED: snprintf(sym, sizeof sym, "^"); break;
    default: snprintf(sym, sizeof sym, "%u", r->value); break;
    }
    if (r->swatch == NGI_SW_HEAT)
        sgr_rgb(p, ngi_draw_heat_rgb(r->value));
    else if (r->swatch == NGI_SW_STATE && r->value == NGI_PU_IDLE)
        sgr_rgb(p, ngi_draw_rgb(NGI_C_IDLE));
    else if (r->swatch == NGI_SW_HIGHLIGHT || r->swatch == NGI_SW_TASK)
        sgr_rgb(p, ngi_draw_task_rgb(r->value));
    fputs(sym, p->f);
    sgr(p, "0");
}

static void legend(const map *p, const ngi_legend *lg)
{
    fputs("\nkey:", p->f);
    for (unsigned i = 0; i < lg->nkeys; i++) {
        const ngi_legend_row *r = &lg->row[i];
        fputs(r->swatch == NGI_SW_HEAT ? " " : "  ", p->f);
        key_symbol(p, r);
        if (r->text[0] && r->swatch != NGI_SW_NONE)
            fputc(' ', p->f);
        ngi_draw_plain(p->f, r->text);
    }
    fputc('\n', p->f);
    for (unsigned i = lg->nkeys; i < lg->n; i++) {
        const ngi_legend_row *r = &lg->row[i];
        fputs("  ", p->f);
        /* A task's row starts "task K:": that part in the task's colour. */
        const char *colon = strchr(r->text, ':');
        if (r->swatch == NGI_SW_TASK && p->colour && colon) {
            sgr_rgb(p, ngi_draw_task_rgb(r->value));
            fprintf(p->f, "%.*s", (int)(colon - r->text), r->text);
            sgr(p, "0");
            ngi_draw_plain(p->f, colon);
        } else {
            ngi_draw_plain(p->f, r->text);
        }
        fputc('\n', p->f);
    }
}

int ngi_draw_map_write(FILE *f, const ngi_draw_model *m, const ngi_legend *lg)
{
    map p = {.f = f, .m = m, .colour = (m->req->flags & NG_DRAW_COLOR) != 0};
    p.cell_w = cell_width(m);
    int width;
    unsigned per = per_line(m, &width, p.cell_w);
    header(&p, lg);
    for (unsigned i = 0; i < ng_topology_numa_count(m->topo); i++)
        node_row(&p, i, per, width);
    homeless_row(&p, per);
    if (!hwloc_bitmap_iszero(m->absent)) {
        char list[256];
        ngi_draw_list(m->absent, list, sizeof list);
        fprintf(f, "offline or disallowed CPUs: %s\n", list);
    }
    devices(&p);
    shared_cores(&p);
    legend(&p, lg);
    return ferror(f) ? -1 : 0;
}
