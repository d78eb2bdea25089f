/* The SVG document: a title, the boxes in layout order (parents first, so
 * children are drawn over them), the legend. Plain SVG 1.1 shapes, four
 * patterns, no script, no external file or font. Every element that shows
 * a fact carries data-* attributes naming it (docs/draw.md), so tests and
 * tools can read the picture back; every string from a file, /proc or the
 * caller goes through ngi_draw_xml. Coordinates are whole pixels. */
#include "private/draw.h"

#include <string.h>

static void fill(FILE *f, const char *attr, ngi_rgb c)
{
    char hex[8];
    ngi_draw_hex(c, hex);
    fprintf(f, " %s=\"%s\"", attr, hex);
}

static void text_at(FILE *f, int x, int y, int px, const char *extra, const char *s)
{
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\"%s>", x, y, px, extra ? extra : "");
    ngi_draw_xml(f, s);
    fputs("</text>\n", f);
}

void ngi_draw_svg_defs(FILE *f)
{
    fputs("<defs>\n"
          "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"6\" fill=\"#000\" "
          "fill-opacity=\"0.3\"/></pattern>\n"
          "<pattern id=\"piled\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(-45)\"><rect width=\"1.5\" height=\"5\" fill=\"#000\" "
          "fill-opacity=\"0.55\"/>"
          "</pattern>\n"
          "<pattern id=\"stripes\" width=\"4\" height=\"3\" patternUnits=\"userSpaceOnUse\">"
          "<rect width=\"4\" height=\"1.5\" fill=\"#fff\"/></pattern>\n"
          "<pattern id=\"dots\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\">"
          "<rect width=\"1.6\" height=\"1.6\" fill=\"#fff\"/></pattern>\n"
          /* Tasks 8 and up: their colour repeats, one of these over it. Each
           * has a light and a dark line, to show on any colour. */
          "<pattern id=\"task1\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
          "<rect width=\"6\" height=\"1.5\" fill=\"#fff\" fill-opacity=\"0.75\"/>"
          "<rect y=\"3\" width=\"6\" height=\"1.5\" fill=\"#000\" fill-opacity=\"0.5\"/>"
          "</pattern>\n"
          "<pattern id=\"task2\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
          "<rect width=\"2\" height=\"2\" fill=\"#fff\" fill-opacity=\"0.8\"/>"
          "<rect x=\"3\" y=\"3\" width=\"2\" height=\"2\" fill=\"#000\" fill-opacity=\"0.55\"/>"
          "</pattern>\n"
          "<pattern id=\"task3\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
          "<rect width=\"1.5\" height=\"6\" fill=\"#fff\" fill-opacity=\"0.75\"/>"
          "<rect x=\"3\" width=\"1.5\" height=\"6\" fill=\"#000\" fill-opacity=\"0.5\"/>"
          "</pattern>\n"
          "</defs>\n", f);
}

/* The pattern of task @p t over a rect (tasks 8 and up; none below). */
static void task_pattern(FILE *f, unsigned t, int x, int y, int w, int h, int rx)
{
    unsigned p = ngi_draw_task_pattern(t);
    if (p)
        fprintf(f, "<rect class=\"task-pattern\" data-task=\"%u\" data-pattern=\"%u\" x=\"%d\" "
                   "y=\"%d\" width=\"%d\" height=\"%d\" rx=\"%d\" fill=\"url(#task%u)\"/>\n",
                t, p, x, y, w, h, rx, p);
}

/* ---- memory chips: one per task whose policy names the node ---- */

static void chip(FILE *f, int x, int y, int task, ng_mem_mode mode, unsigned node)
{
    ngi_rgb c = task >= 0 ? ngi_draw_task_rgb((unsigned)task) : (ngi_rgb){0x70, 0x70, 0x70};
    char label[16] = "";
    if (task >= 0)
        snprintf(label, sizeof label, "%d", task);
    if (task >= 0)
        fprintf(f, "<g class=\"mem\" data-node=\"%u\" data-task=\"%d\" data-mode=\"%s\">", node,
                task, ngi_draw_mode_word(mode));
    else /* the legend's key */
        fprintf(f, "<g class=\"mem-key\" data-mode=\"%s\">", ngi_draw_mode_word(mode));
    fprintf(f, "<rect class=\"chip\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\"", x, y,
            NGI_CHIP_W, NGI_CHIP_H);
    if (mode == NG_MEM_MODE_PREFERRED_MANY) {
        fill(f, "stroke", c);
        fputs(" stroke-width=\"2\" fill=\"#fff\"/>", f);
    } else {
        fill(f, "fill", c);
        fputs("/>", f);
    }
    /* Interleaving modes: a patterned band at the right end, clear of the
     * number (stripes: interleave, dots: weighted). */
    int band = mode == NG_MEM_MODE_INTERLEAVE || mode == NG_MEM_MODE_WEIGHTED;
    if (band)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"7\" height=\"%d\" fill=\"url(#%s)\"/>",
                x + NGI_CHIP_W - 7, y, NGI_CHIP_H,
                mode == NG_MEM_MODE_INTERLEAVE ? "stripes" : "dots");
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" font-weight=\"bold\" "
               "text-anchor=\"middle\"", x + (band ? (NGI_CHIP_W - 7) / 2 : NGI_CHIP_W / 2), y + 9);
    fill(f, "fill", mode != NG_MEM_MODE_PREFERRED_MANY && ngi_draw_dark(c) ? (ngi_rgb){255, 255, 255}
                                                                       : (ngi_rgb){0, 0, 0});
    fprintf(f, ">%s</text></g>\n", label);
}

/* The chips of NUMA index @p i from (x, y), @p per_row a row. */
static void chips(FILE *f, const ngi_draw_model *m, unsigned i, int x, int y, unsigned per_row)
{
    unsigned k = 0, os = ng_topology_numa(m->topo, i)->os_index;
    int n = hwloc_bitmap_weight(m->node_tasks[i]), t;
    hwloc_bitmap_foreach_begin(t, m->node_tasks[i]) {
        int cx = x + (int)(k % per_row) * (NGI_CHIP_W + NGI_CHIP_GAP);
        int cy = y + (int)(k / per_row) * (NGI_CHIP_H + NGI_CHIP_GAP);
        if (k == NGI_MAX_CHIPS) {
            fprintf(f, "<text class=\"more\" x=\"%d\" y=\"%d\" font-size=\"9\">+%d</text>\n", cx,
                    cy + 9, n - NGI_MAX_CHIPS);
            break;
        }
        chip(f, cx, cy, t, ngi_draw_task_mode(m, (unsigned)t), os);
        k++;
    }
    hwloc_bitmap_foreach_end();
}

/* ---- boxes ---- */

static void container(FILE *f, const ngi_box *b)
{
    static const struct {
        const char *cls, *fill, *stroke, *extra;
    } style[] = {
        [NGI_BOX_MACHINE] = {"machine", "#ffffff", "#404040", " stroke-width=\"1.5\""},
        [NGI_BOX_PACKAGE] = {"package", "#f3f3f3", "#808080", ""},
        [NGI_BOX_GROUP] = {"group", "#fafafa", "#a0a0a0", ""},
        [NGI_BOX_L3] = {"l3", "#ffffff", "#b0b0b0", " stroke-dasharray=\"3,2\""},
    };
    fprintf(f, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"4\" "
               "fill=\"%s\" stroke=\"%s\"%s/>\n", style[b->kind].cls, b->x, b->y, b->w, b->h,
            style[b->kind].fill, style[b->kind].stroke, style[b->kind].extra);
    if (b->label[0])
        text_at(f, b->x + NGI_PAD, b->y + NGI_PAD + 11, NGI_FONT,
                b->kind == NGI_BOX_L3 ? " fill=\"#606060\"" : " font-weight=\"bold\"", b->label);
}

static void node_box(FILE *f, const ngi_draw_model *m, const ngi_box *b)
{
    char lines[3][96];
    const ng_numa_info *ni = ng_topology_numa(m->topo, b->index);
    ngi_draw_box_lines(m, b, lines);
    fprintf(f, "<rect class=\"numa%s\" data-node=\"%u\" x=\"%d\" y=\"%d\" width=\"%d\" "
               "height=\"%d\" rx=\"3\"", b->kind == NGI_BOX_MEM ? " cpuless" : "", ni->os_index,
            b->x, b->y, b->w, b->h);
    fill(f, "fill", ngi_draw_kind_rgb(ni->kind));
    fputs(" stroke=\"#6c7f99\"/>\n", f);
    if (b->kind == NGI_BOX_BAR) {
        text_at(f, b->x + 4, b->y + 13, NGI_FONT, NULL, lines[0]);
        chips(f, m, b->index, b->x + 10 + ngi_draw_text_w(lines[0], NGI_FONT), b->y + 3,
              NGI_BAR_CHIPS);
        return;
    }
    text_at(f, b->x + 4, b->y + 4 + 9, NGI_SMALL, " font-weight=\"bold\"", lines[0]);
    text_at(f, b->x + 4, b->y + 4 + NGI_LINE + 9, NGI_SMALL, NULL, lines[1]);
    chips(f, m, b->index, b->x + 4, b->y + 6 + 2 * NGI_LINE, NGI_MEM_CHIPS);
}

/* A GPU or NIC in its task's colour; used by several tasks, a band of
 * stripes (one per task) under its text. */
static void device_tasks(FILE *f, const ngi_draw_model *m, const ngi_box *b, int gpu)
{
    hwloc_const_bitmap_t tasks = gpu ? m->gpu_tasks[b->index] : m->nic_tasks[b->index];
    int n = hwloc_bitmap_weight(tasks), t, k = 0;
    int y = n > 1 ? b->y + b->h - 10 : b->y, h = n > 1 ? 10 : b->h;
    hwloc_bitmap_foreach_begin(t, tasks) {
        int x0 = b->x + k * b->w / n, x1 = b->x + (k + 1) * b->w / n;
        fprintf(f, "<rect class=\"%s-task\" data-%s=\"%u\" data-task=\"%d\" x=\"%d\" y=\"%d\" "
                   "width=\"%d\" height=\"%d\"", gpu ? "gpu" : "nic", gpu ? "gpu" : "nic",
                b->index, t, x0, y, x1 - x0, h);
        fill(f, "fill", ngi_draw_task_rgb((unsigned)t));
        fputs(" stroke=\"#303030\" stroke-width=\"0.5\"/>\n", f);
        task_pattern(f, (unsigned)t, x0, y, x1 - x0, h, 0);
        k++;
    }
    hwloc_bitmap_foreach_end();
}

/* A NIC drawn small (topo, check): one line, name and kind. */
static void small_nic(FILE *f, const ngi_draw_model *m, const ngi_box *b)
{
    char lines[3][96];
    fprintf(f, "<rect class=\"nic small\" data-nic=\"%u\" x=\"%d\" y=\"%d\" width=\"%d\" "
               "height=\"%d\"", b->index, b->x, b->y, b->w, b->h);
    fill(f, "fill", ngi_draw_rgb(NGI_C_DEVICE));
    fputs(" stroke=\"#303030\"/>\n", f);
    ngi_draw_box_lines(m, b, lines);
    text_at(f, b->x + 5, b->y + 4 + 9, NGI_SMALL, NULL, lines[0]);
}

/* The one box for the NICs not drawn: how many, which kinds. */
static void nic_summary(FILE *f, const ngi_draw_model *m, const ngi_box *b)
{
    char lines[3][96];
    fprintf(f, "<rect class=\"nic-summary\" data-hidden=\"%u\" data-ethernet=\"%u\" x=\"%d\" "
               "y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" stroke=\"#808080\" "
               "stroke-dasharray=\"3,2\"/>\n", m->nic_hidden, m->nic_hidden_eth, b->x, b->y,
            b->w, b->h);
    ngi_draw_box_lines(m, b, lines);
    for (int i = 0; i < 3; i++)
        text_at(f, b->x + 5, b->y + 4 + 9 + i * NGI_LINE, NGI_SMALL,
                i ? " fill=\"#505050\"" : " font-weight=\"bold\"", lines[i]);
}

static void device(FILE *f, const ngi_draw_model *m, const ngi_box *b)
{
    int gpu = b->kind == NGI_BOX_GPU;
    if (!gpu && m->nic_shown[b->index] == NGI_NIC_SMALL) {
        small_nic(f, m, b);
        return;
    }
    hwloc_const_bitmap_t tasks = gpu ? m->gpu_tasks[b->index] : m->nic_tasks[b->index];
    int first = hwloc_bitmap_weight(tasks) == 1 ? hwloc_bitmap_first(tasks) : -1;
    char lines[3][96], bold[64];
    fprintf(f, "<rect class=\"%s\" data-%s=\"%u\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"",
            gpu ? "gpu" : "nic", gpu ? "gpu" : "nic", b->index, b->x, b->y, b->w, b->h);
    fill(f, "fill", ngi_draw_rgb(NGI_C_DEVICE));
    fputs(" stroke=\"#303030\"/>\n", f);
    device_tasks(f, m, b, gpu);
    ngi_draw_box_lines(m, b, lines);
    const char *ink = first >= 0 && ngi_draw_dark(ngi_draw_task_rgb((unsigned)first))
                          ? " fill=\"#ffffff\"" : " fill=\"#000000\"";
    snprintf(bold, sizeof bold, "%s font-weight=\"bold\"", ink);
    for (int i = 0; i < 3; i++)
        text_at(f, b->x + 5, b->y + 4 + 9 + i * NGI_LINE, NGI_SMALL, i ? ink : bold, lines[i]);
}

/* The frame around a GPU and its memory nodes, and a bus from the GPU to
 * the first row of nodes. */
static void gpuset(FILE *f, const ngi_layout *l, const ngi_box *b)
{
    const ngi_box *g = &l->box[b->grid];
    int first = g->next, x0 = -1, x1 = -1;
    fprintf(f, "<rect class=\"gpuset\" data-gpu=\"%u\" x=\"%d\" y=\"%d\" width=\"%d\" "
               "height=\"%d\" rx=\"4\" fill=\"none\" stroke=\"#8e7cb0\" "
               "stroke-dasharray=\"4,2\"/>\n", b->index, b->x, b->y, b->w, b->h);
    if (first < 0)
        return;
    int top = l->box[first].y, bus = top - 6;
    for (int c = first; c >= 0 && l->box[c].y == top; c = l->box[c].next) {
        int cx = l->box[c].x + l->box[c].w / 2;
        x0 = x0 < 0 || cx < x0 ? cx : x0;
        x1 = cx > x1 ? cx : x1;
        fprintf(f, "<line class=\"link\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                   "stroke=\"#8e7cb0\"/>\n", cx, bus, cx, top);
    }
    int gx = g->x + g->w / 2;
    fprintf(f, "<line class=\"link\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#8e7cb0\"/>\n"
               "<line class=\"link\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#8e7cb0\"/>\n",
            gx, g->y + g->h, gx, bus, x0 < gx ? x0 : gx, bus, x1 > gx ? x1 : gx, bus);
}

static void absent(FILE *f, const ngi_draw_model *m, const ngi_box *b)
{
    int pu, k = 0;
    fprintf(f, "<rect class=\"absent\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" "
               "fill=\"#ffffff\" stroke=\"#b0b0b0\" stroke-dasharray=\"3,2\"/>\n",
            b->x, b->y, b->w, b->h);
    text_at(f, b->x + NGI_PAD, b->y + NGI_PAD + 11, NGI_FONT, " fill=\"#707070\"", b->label);
    hwloc_bitmap_foreach_begin(pu, m->absent) {
        int x = b->x + NGI_PAD + (k % 16) * (NGI_CELL + 2);
        int y = b->y + NGI_PAD + NGI_LABEL_H + (k / 16) * (NGI_CELL + 2);
        fprintf(f, "<rect class=\"pu absent\" data-pu=\"%d\" x=\"%d\" y=\"%d\" width=\"%d\" "
                   "height=\"%d\"", pu, x, y, NGI_CELL, NGI_CELL);
        fill(f, "fill", ngi_draw_rgb(NGI_C_DIM));
        fprintf(f, " stroke=\"#b0b0b0\" stroke-dasharray=\"2,2\"><title>CPU %d: offline or "
                   "disallowed</title></rect>\n", pu);
        if (pu < 1000)
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"8\" fill=\"#909090\" "
                       "text-anchor=\"middle\">%d</text>\n", x + NGI_CELL / 2, y + 11, pu);
        k++;
    }
    hwloc_bitmap_foreach_end();
}

/* ---- cores ---- */

static ngi_rgb state_rgb(ngi_pu_state s)
{
    return ngi_draw_rgb(s == NGI_PU_IDLE ? NGI_C_IDLE : s == NGI_PU_FREE ? NGI_C_FREE : NGI_C_DIM);
}

static ngi_rgb core_rgb(const ngi_draw_model *m, const ngi_draw_cell *c)
{
    if (c->state == NGI_PU_EXCLUDED || c->state == NGI_PU_ABSENT)
        return ngi_draw_rgb(NGI_C_DIM);
    if (m->mode == NGI_MODE_CHECK)
        return ngi_draw_heat_rgb(c->runnable);
    if (c->state == NGI_PU_TASK)
        return c->shared ? ngi_draw_rgb(NGI_C_SHARED) : ngi_draw_task_rgb((unsigned)c->task);
    return state_rgb(c->state);
}

static ngi_rgb pu_rgb(const ngi_draw_model *m, unsigned pu)
{
    ngi_pu_state s = ngi_draw_pu_state(m, pu);
    if (s == NGI_PU_EXCLUDED || s == NGI_PU_ABSENT)
        return ngi_draw_rgb(NGI_C_DIM);
    if (m->mode == NGI_MODE_CHECK || m->mode == NGI_MODE_JOB)   /* job: the load marker */
        return ngi_draw_heat_rgb(m->pu_runnable[pu]);
    if (m->mode == NGI_MODE_TOPO)
        return (ngi_rgb){255, 255, 255};
    return s == NGI_PU_TASK ? ngi_draw_task_rgb((unsigned)m->pu_task[pu]) : state_rgb(s);
}

static void core_label(const ngi_draw_model *m, const ngi_draw_cell *c, char *buf, size_t len)
{
    buf[0] = '\0';
    if (c->state == NGI_PU_EXCLUDED || c->state == NGI_PU_ABSENT)
        return;
    if (m->mode == NGI_MODE_CHECK)
        snprintf(buf, len, "%u", c->runnable);
    else if (m->mode == NGI_MODE_TOPO)
        snprintf(buf, len, "%u", c->first_pu);
    else if (c->state == NGI_PU_TASK && c->tasks[0])
        snprintf(buf, len, "%s", c->tasks); /* shared: its tasks */
    else if (c->state == NGI_PU_TASK)
        snprintf(buf, len, "%d%s", c->task, c->shared ? "+" : "");
}

static void core_rect(FILE *f, const ngi_draw_model *m, const ngi_box *b, const ngi_draw_cell *c,
                      ngi_rgb bg)
{
    fprintf(f, "<rect class=\"core\" data-core=\"%u\" data-task=\"%d\"", b->obj->logical_index,
            c->state == NGI_PU_TASK ? c->task : -1);
    if (c->tasks[0])
        fprintf(f, " data-tasks=\"%s\"", c->tasks);
    fprintf(f, " x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\"", b->x, b->y, b->w,
            b->h);
    fill(f, "fill", bg);
    if (c->over) {
        fill(f, "stroke", ngi_draw_over_rgb());
        fputs(" stroke-width=\"2.5\"/>\n", f);
    } else if (c->highlight)
        fputs(" stroke=\"#000000\" stroke-width=\"2.5\"/>\n", f);
    else if (c->state == NGI_PU_EXCLUDED || c->state == NGI_PU_ABSENT)
        fputs(" stroke=\"#b0b0b0\" stroke-dasharray=\"2,2\"/>\n", f);
    else
        fputs(" stroke=\"#505050\" stroke-width=\"0.6\"/>\n", f);
    if (c->shared || c->piled)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" "
                   "fill=\"url(#%s)\"/>\n", b->x, b->y, b->w, b->h, c->piled ? "piled" : "hatch");
    else if (c->state == NGI_PU_TASK && (m->mode == NGI_MODE_PLAN || m->mode == NGI_MODE_JOB))
        task_pattern(f, (unsigned)c->task, b->x, b->y, b->w, b->h, 3);
}

static void core_pus(FILE *f, const ngi_draw_model *m, const ngi_box *b)
{
    int n = hwloc_bitmap_weight(b->obj->cpuset), pu, k = 0;
    int row = n * (NGI_PU_W + NGI_PU_GAP) - NGI_PU_GAP;
    int x0 = b->x + (b->w - row) / 2, y = b->y + b->h - NGI_CORE_PAD - NGI_PU_H;
    hwloc_bitmap_foreach_begin(pu, b->obj->cpuset) {
        fprintf(f, "<rect class=\"pu\" data-pu=\"%d\"", pu);
        if ((m->mode == NGI_MODE_PLAN || m->mode == NGI_MODE_JOB) && (unsigned)pu < m->npu &&
            m->pu_task[pu] >= 0)
            fprintf(f, " data-task=\"%d\"", m->pu_task[pu]);
        if (m->mode == NGI_MODE_JOB && (unsigned)pu < m->npu)
            fprintf(f, " data-runnable=\"%u\"", m->pu_runnable[pu]);
        fprintf(f, " x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"",
                x0 + k * (NGI_PU_W + NGI_PU_GAP), y, NGI_PU_W, NGI_PU_H);
        fill(f, "fill", pu_rgb(m, (unsigned)pu));
        fprintf(f, " stroke=\"#000\" stroke-opacity=\"0.45\" stroke-width=\"0.5\">"
                   "<title>CPU %d</title></rect>\n", pu);
        k++;
    }
    hwloc_bitmap_foreach_end();
}

static void core(FILE *f, const ngi_draw_model *m, const ngi_box *b)
{
    ngi_draw_cell c;
    char label[48];
    ngi_draw_cell_of(m, b->obj->cpuset, &c);
    ngi_rgb bg = core_rgb(m, &c);
    core_rect(f, m, b, &c, bg);
    core_label(m, &c, label, sizeof label);
    if (label[0]) {
        int px = strlen(label) > 3 && !c.tasks[0] ? 8 : strlen(label) > 2 ? 9 : 10;
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" font-weight=\"bold\" "
                   "text-anchor=\"middle\"", b->x + (b->w - (c.over ? 8 : 0)) / 2, b->y + 11, px);
        fill(f, "fill", ngi_draw_dark(bg) && !c.shared && !c.piled ? (ngi_rgb){255, 255, 255}
                                                                   : (ngi_rgb){0, 0, 0});
        fprintf(f, ">%s</text>\n", label);
    }
    if (c.over) { /* a blue badge with a white "!": it shows on every heat colour */
        fprintf(f, "<rect class=\"over-mark\" x=\"%d\" y=\"%d\" width=\"7\" height=\"10\" rx=\"2\"",
                b->x + b->w - 8, b->y + 1);
        fill(f, "fill", ngi_draw_over_rgb());
        fprintf(f, "/>\n<text x=\"%d\" y=\"%d\" font-size=\"9\" font-weight=\"bold\" "
                   "fill=\"#ffffff\" text-anchor=\"middle\">!</text>\n", b->x + b->w - 4, b->y + 9);
    }
    core_pus(f, m, b);
}

static void box(FILE *f, const ngi_draw_model *m, const ngi_layout *l, const ngi_box *b)
{
    switch (b->kind) {
    case NGI_BOX_CORE: core(f, m, b); break;
    case NGI_BOX_BAR:
    case NGI_BOX_MEM: node_box(f, m, b); break;
    case NGI_BOX_GPU:
    case NGI_BOX_NIC: device(f, m, b); break;
    case NGI_BOX_NICSUM: nic_summary(f, m, b); break;
    case NGI_BOX_GPUSET: gpuset(f, l, b); break;
    case NGI_BOX_ABSENT: absent(f, m, b); break;
    default: container(f, b); break;
    }
}

void ngi_draw_svg_boxes(FILE *f, const ngi_draw_model *m, const ngi_layout *l)
{
    for (unsigned i = 0; i < l->n; i++)
        box(f, m, l, &l->box[i]);
}

/* ---- legend ---- */

#define SW 14       /* swatch size */
#define AUTO_WIDTH 720  /* pictures narrower than this are scaled up (picture_scale) */
#define ROW_H 18    /* legend line height */

/* data-key of a legend key: what it explains (docs/draw.md). */
static const char *key_name(const ngi_legend_row *r)
{
    static const char *const state[] = {[NGI_PU_FREE] = "free", [NGI_PU_IDLE] = "idle",
                                        [NGI_PU_TASK] = "task", [NGI_PU_EXCLUDED] = "excluded",
                                        [NGI_PU_ABSENT] = "excluded"};
    static const char *const heat[NGI_HEAT_LEVELS] = {"heat-0", "heat-1", "heat-2",
                                                      "heat-3", "heat-4", "heat-5"};
    switch (r->swatch) {
    case NGI_SW_STATE: return r->value <= NGI_PU_ABSENT ? state[r->value] : "?";
    case NGI_SW_SHARED: return "shared";
    case NGI_SW_HEAT: return heat[r->value < NGI_HEAT_LEVELS ? r->value : NGI_HEAT_LEVELS - 1];
    case NGI_SW_OVER: return "over";
    case NGI_SW_PILED: return "piled";
    case NGI_SW_HIGHLIGHT: return "highlight";
    default: return "?";
    }
}

/* A swatch's look: its fill, its border, the number in it. */
typedef struct look {
    ngi_rgb c;
    const char *border;
    char num[16];
} look;

static void swatch_look(const ngi_legend_row *r, look *k)
{
    k->c = (ngi_rgb){255, 255, 255};
    k->border = " stroke=\"#505050\" stroke-width=\"0.6\"";
    k->num[0] = '\0';
    if (r->swatch == NGI_SW_TASK || r->swatch == NGI_SW_HIGHLIGHT) {
        k->c = ngi_draw_task_rgb(r->value);
        snprintf(k->num, sizeof k->num, "%u", r->value);
        if (r->swatch == NGI_SW_HIGHLIGHT)
            k->border = " stroke=\"#000000\" stroke-width=\"2.5\"";
    } else if (r->swatch == NGI_SW_STATE) {
        k->c = state_rgb((ngi_pu_state)r->value);
        if (r->value == NGI_PU_EXCLUDED)
            k->border = " stroke=\"#b0b0b0\" stroke-dasharray=\"2,2\"";
    } else if (r->swatch == NGI_SW_HEAT) {
        k->c = ngi_draw_heat_rgb(r->value);
        snprintf(k->num, sizeof k->num, "%u%s", r->value,
                 r->value + 1 < NGI_HEAT_LEVELS ? "" : "+");
    } else if (r->swatch == NGI_SW_OVER) {
        static char over[64];
        char hex[8];
        ngi_draw_hex(ngi_draw_over_rgb(), hex);
        snprintf(over, sizeof over, " stroke=\"%s\" stroke-width=\"2.5\"", hex);
        k->border = over;
    }
}

static void swatch(FILE *f, const ngi_legend_row *r, int x, int y)
{
    look k;
    if (r->swatch == NGI_SW_MODE) {
        chip(f, x, y + 1, -1, (ng_mem_mode)r->value, 0);
        return;
    }
    swatch_look(r, &k);
    if (r->swatch == NGI_SW_TASK)
        fprintf(f, "<rect class=\"legend-task\" data-task=\"%u\"", r->value);
    else
        fprintf(f, "<rect class=\"legend-key\" data-key=\"%s\"", key_name(r));
    fprintf(f, " x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\"", x, y, SW, SW);
    fill(f, "fill", k.c);
    fprintf(f, "%s/>\n", k.border);
    if (r->swatch == NGI_SW_TASK)
        task_pattern(f, r->value, x, y, SW, SW, 2);
    if (r->swatch == NGI_SW_SHARED || r->swatch == NGI_SW_PILED)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"url(#%s)\"/>\n", x,
                y, SW, SW, r->swatch == NGI_SW_PILED ? "piled" : "hatch");
    if (!k.num[0])
        return;
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" font-weight=\"bold\" "
               "text-anchor=\"middle\"", x + SW / 2, y + 11, strlen(k.num) > 2 ? 7 : 9);
    fill(f, "fill", ngi_draw_dark(k.c) ? (ngi_rgb){255, 255, 255} : (ngi_rgb){0, 0, 0});
    fprintf(f, ">%s</text>\n", k.num);
}

/* The keys on lines that wrap at @p width, then one row per line. With
 * @p f NULL only measures; returns the height, *w the width used. */
int ngi_draw_svg_legend(FILE *f, const ngi_legend *lg, int x0, int y0, int width, int *w)
{
    int x = x0, y = y0;
    *w = 0;
    for (unsigned i = 0; i < lg->nkeys; i++) {
        const ngi_legend_row *r = &lg->row[i];
        int sw = r->swatch == NGI_SW_MODE ? NGI_CHIP_W + 3 : r->swatch != NGI_SW_NONE ? SW + 5 : 0;
        int kw = sw + (r->text[0] ? ngi_draw_text_w(r->text, NGI_FONT) + 16 : 4);
        if (x > x0 && x + kw > x0 + width)
            x = x0, y += ROW_H;
        if (f && sw)
            swatch(f, r, x, y);
        if (f && r->text[0])
            text_at(f, x + sw, y + 11, NGI_FONT, NULL, r->text);
        x += kw;
        *w = x - x0 > *w ? x - x0 : *w;
    }
    if (lg->nkeys)
        y += ROW_H + 4;
    for (unsigned i = lg->nkeys; i < lg->n; i++, y += ROW_H) {
        int tw = SW + 6 + ngi_draw_text_w(lg->row[i].text, NGI_FONT);
        *w = tw > *w ? tw : *w;
        if (!f)
            continue;
        if (lg->row[i].swatch != NGI_SW_NONE)
            swatch(f, &lg->row[i], x0, y);
        text_at(f, x0 + SW + 6, y + 11, NGI_FONT, NULL, lg->row[i].text);
    }
    return y - y0;
}

static void title(FILE *f, const ngi_draw_model *m, const ngi_legend *lg)
{
    const char *t = m->req->title ? m->req->title : "numaguard";
    text_at(f, NGI_MARGIN, 24, 16, " font-weight=\"bold\"", t);
    if (m->req->subtitle)
        text_at(f, NGI_MARGIN, 41, 12, NULL, m->req->subtitle);
    text_at(f, NGI_MARGIN, m->req->subtitle ? 57 : 41, NGI_FONT, " fill=\"#505050\"", lg->summary);
}

static int title_w(const ngi_draw_model *m, const ngi_legend *lg)
{
    int a = ngi_draw_text_w(m->req->title ? m->req->title : "numaguard", 16) * 11 / 10;
    int b = ngi_draw_text_w(m->req->subtitle, 12), c = ngi_draw_text_w(lg->summary, NGI_FONT);
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* Pixels per drawing unit: the caller's (0.25-8), else 1, or what makes a
 * small machine's picture (a 2-core laptop: ~250 units) 720 pixels wide,
 * at most 3: the viewBox stays, so every renderer scales it crisply. */
static double picture_scale(double want, int w)
{
    if (want > 0)
        return want < 0.25 ? 0.25 : want > 8 ? 8 : want;
    if (w >= AUTO_WIDTH || w <= 0)
        return 1;
    double s = (double)AUTO_WIDTH / w;
    return s > 3 ? 3 : s;
}

int ngi_draw_svg_write(FILE *f, const ngi_draw_model *m, const ngi_layout *l,
                       const ngi_legend *lg)
{
    const ngi_box *mach = &l->box[0];
    int lw, top = mach->y + mach->h + 16;
    int tw = title_w(m, lg), wrap = mach->w > tw ? mach->w : tw;
    wrap = wrap > 480 ? wrap : 480;
    int lh = ngi_draw_svg_legend(NULL, lg, NGI_MARGIN, top, wrap, &lw);
    int w = mach->w > lw ? mach->w : lw;
    w = (w > tw ? w : tw) + 2 * NGI_MARGIN;
    int h = top + lh + NGI_MARGIN;
    double s = picture_scale(m->req->scale, w);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>",
            (int)(w * s + 0.5), (int)(h * s + 0.5), w, h);
    ngi_draw_xml(f, m->req->title ? m->req->title : "numaguard");
    fputs("</title>\n", f);
    ngi_draw_svg_defs(f);
    fprintf(f, "<rect class=\"background\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h);
    title(f, m, lg);
    ngi_draw_svg_boxes(f, m, l);
    ngi_draw_svg_legend(f, lg, NGI_MARGIN, top, wrap, &lw);
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}
