/* Sizes and places of the boxes (draw_layout.c made them). Bottom-up: a box's
 * children have larger indices than the box, so walking the array
 * backwards sizes children first and places them relative to their parent;
 * one forward walk then makes the places absolute.
 *
 * A container is: its label, the bands of its CPU NUMA nodes, a grid of
 * its children (cores, or smaller containers), then a strip of devices
 * (GPUs, NICs, CPU-less nodes) that wraps at the container's width. The
 * grid's column count is the one whose shape is nearest a wide rectangle
 * (3:1 for cores: their box adds bands and devices below; 3:2 for boxes),
 * with few empty cells. */
#include "private/draw.h"

#include <stdlib.h>
#include <string.h>

unsigned ngi_draw_chip_rows(unsigned n, unsigned per_row)
{
    if (n > NGI_MAX_CHIPS)
        n = NGI_MAX_CHIPS + 1; /* the last chip says "+N" */
    return (n + per_row - 1) / per_row;
}

/* The text lines of a band, a memory box or a device (raw: escape them
 * when writing). */
static void task_text(const ngi_draw_model *m, hwloc_const_bitmap_t tasks, char *buf, size_t len)
{
    char list[64];
    int n = hwloc_bitmap_weight(tasks);
    if (m->mode != NGI_MODE_PLAN)
        buf[0] = '\0';
    else if (n <= 0)
        snprintf(buf, len, "no task");
    else if (ng_list_format(tasks, list, sizeof list) < 0)
        snprintf(buf, len, "%d tasks", n);
    else
        snprintf(buf, len, "task%s %s", n > 1 ? "s" : "", list);
}

static void gpu_lines(const ngi_draw_model *m, unsigned g, char lines[3][96])
{
    const ng_gpu_info *gi = ng_topology_gpu(m->topo, g);
    snprintf(lines[0], 96, "GPU %u (%s)", g, ng_gpu_vendor_name(gi->vendor));
    snprintf(lines[1], 96, "%s", gi->pci_bus_id);
    task_text(m, m->gpu_tasks[g], lines[2], 96);
    if (!lines[2][0] && gi->n_os_devices)
        snprintf(lines[2], 96, "%.40s%s%.40s", gi->os_devices[0], gi->n_os_devices > 1 ? " " : "",
                 gi->n_os_devices > 1 ? gi->os_devices[1] : "");
}

static void nic_lines(const ngi_draw_model *m, unsigned n, char lines[3][96])
{
    const ng_nic_info *ni = ng_topology_nic(m->topo, n);
    if (m->nic_shown[n] == NGI_NIC_SMALL) {
        snprintf(lines[0], 96, "%s %s", ni->name, ng_nic_kind_name(ni->kind));
        return;
    }
    snprintf(lines[0], 96, "%s", ni->name);
    snprintf(lines[1], 96, "%s%s%s", ng_nic_kind_name(ni->kind), ni->netdev[0] ? " " : "",
             ni->netdev);
    /* "no task" only where NICs were part of the request (--net-affinity):
     * without it no NIC has a task, and saying so reads as a finding. */
    if (m->mode != NGI_MODE_PLAN || m->nics_asked || !hwloc_bitmap_iszero(m->nic_tasks[n]))
        task_text(m, m->nic_tasks[n], lines[2], 96);
}

/* The box counting the NICs not drawn. */
static void nicsum_lines(const ngi_draw_model *m, char lines[3][96])
{
    unsigned rdma = m->nic_hidden - m->nic_hidden_eth;
    snprintf(lines[0], 96, "%u NIC%s not shown", m->nic_hidden, m->nic_hidden == 1 ? "" : "s");
    if (rdma && m->nic_hidden_eth)
        snprintf(lines[1], 96, "%u RDMA without a task, %u Ethernet", rdma, m->nic_hidden_eth);
    else if (rdma)
        snprintf(lines[1], 96, "RDMA, without a task%s", m->nics_asked ? "" : " (no --net-affinity)");
    else
        snprintf(lines[1], 96, "Ethernet (not RDMA)");
    snprintf(lines[2], 96, "--all-nics draws them");
}

void ngi_draw_box_lines(const ngi_draw_model *m, const ngi_box *b, char lines[3][96])
{
    lines[0][0] = lines[1][0] = lines[2][0] = '\0';
    if (b->kind == NGI_BOX_BAR || b->kind == NGI_BOX_MEM) {
        const ng_numa_info *ni = ng_topology_numa(m->topo, b->index);
        char size[32];
        ngi_draw_bytes(ni->memory_bytes, size, sizeof size);
        if (b->kind == NGI_BOX_BAR) {
            snprintf(lines[0], 96, "NUMA %u: %s, %s", ni->os_index, ng_mem_kind_name(ni->kind),
                     size);
        } else {
            snprintf(lines[0], 96, "NUMA %u: %s", ni->os_index, ng_mem_kind_name(ni->kind));
            snprintf(lines[1], 96, "%s, no CPUs", size);
        }
    } else if (b->kind == NGI_BOX_GPU) {
        gpu_lines(m, b->index, lines);
    } else if (b->kind == NGI_BOX_NIC) {
        nic_lines(m, b->index, lines);
    } else if (b->kind == NGI_BOX_NICSUM) {
        nicsum_lines(m, lines);
    }
}

static unsigned chips_of(const ngi_draw_model *m, unsigned node)
{
    int w = hwloc_bitmap_weight(m->node_tasks[node]);
    return w < 0 ? 0 : (unsigned)w > NGI_MAX_CHIPS ? NGI_MAX_CHIPS + 1 : (unsigned)w;
}

static int max3(int a, int b, int c)
{
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* A core: its PUs side by side; a shared one as wide as its tasks' list. */
static void size_core(const ngi_draw_model *m, ngi_box *b)
{
    int n = hwloc_bitmap_weight(b->obj->cpuset);
    int w = n * (NGI_PU_W + NGI_PU_GAP) - NGI_PU_GAP + 2 * NGI_CORE_PAD;
    b->w = w > NGI_CORE_W ? w : NGI_CORE_W;
    b->h = NGI_CORE_H;
    if (m->mode == NGI_MODE_PLAN) {
        ngi_draw_cell c;
        ngi_draw_cell_of(m, b->obj->cpuset, &c);
        int tw = c.tasks[0] ? ngi_draw_text_w(c.tasks, 9) * 11 / 10 + 6 : 0;
        b->w = tw > b->w ? tw : b->w;
    }
}

static void size_bar(const ngi_draw_model *m, ngi_box *b)
{
    char lines[3][96];
    ngi_draw_box_lines(m, b, lines);
    unsigned n = chips_of(m, b->index), rows = ngi_draw_chip_rows(n, NGI_BAR_CHIPS);
    unsigned per = n < NGI_BAR_CHIPS ? n : NGI_BAR_CHIPS;
    b->w = 8 + ngi_draw_text_w(lines[0], NGI_FONT) + (n ? 6 + (int)per * (NGI_CHIP_W + NGI_CHIP_GAP) : 0);
    b->h = NGI_BAR_H + (rows > 1 ? (int)(rows - 1) * (NGI_CHIP_H + NGI_CHIP_GAP) : 0);
}

static void size_mem(const ngi_draw_model *m, ngi_box *b)
{
    char lines[3][96];
    ngi_draw_box_lines(m, b, lines);
    unsigned n = chips_of(m, b->index), rows = ngi_draw_chip_rows(n, NGI_MEM_CHIPS);
    unsigned per = n < NGI_MEM_CHIPS ? n : NGI_MEM_CHIPS;
    int chips = per ? (int)per * (NGI_CHIP_W + NGI_CHIP_GAP) - NGI_CHIP_GAP : 0;
    b->w = 8 + max3(ngi_draw_text_w(lines[0], NGI_SMALL) * 11 / 10,
                    ngi_draw_text_w(lines[1], NGI_SMALL), chips);
    b->h = 8 + 2 * NGI_LINE + (int)rows * (NGI_CHIP_H + NGI_CHIP_GAP);
}

static void size_device(const ngi_draw_model *m, ngi_box *b)
{
    char lines[3][96];
    ngi_draw_box_lines(m, b, lines);
    int w = 10 + max3(ngi_draw_text_w(lines[0], NGI_SMALL) * 11 / 10,
                      ngi_draw_text_w(lines[1], NGI_SMALL),
                      ngi_draw_text_w(lines[2], NGI_SMALL));
    int min = b->kind == NGI_BOX_GPU ? 100 : 80;
    b->w = w > min ? w : min;
    b->h = 8 + 3 * NGI_LINE + 6; /* room for the band of a shared device */
    if (b->kind == NGI_BOX_NIC && m->nic_shown[b->index] == NGI_NIC_SMALL)
        b->w = w, b->h = 6 + NGI_LINE + 2; /* one line */
}

static void size_absent(const ngi_draw_model *m, ngi_box *b)
{
    int n = hwloc_bitmap_weight(m->absent), per = n < 16 ? n : 16;
    int cells = per * (NGI_CELL + 2) - 2;
    snprintf(b->label, sizeof b->label, "offline or disallowed CPUs");
    b->w = 2 * NGI_PAD + (cells > ngi_draw_text_w(b->label, NGI_FONT)
                              ? cells : ngi_draw_text_w(b->label, NGI_FONT));
    b->h = 2 * NGI_PAD + NGI_LABEL_H + ((n + 15) / 16) * (NGI_CELL + 2);
}

static unsigned count(const ngi_layout *l, int head)
{
    unsigned n = 0;
    for (int c = head; c >= 0; c = l->box[c].next)
        n++;
    return n;
}

/* Lay the list @p head out in @p cols columns from (x0, y0): each column
 * as wide as its widest child, each row as tall as its tallest. With
 * @p set 0 only the size is computed. */
static void grid_at(ngi_layout *l, int head, unsigned cols, int x0, int y0, int *gw, int *gh,
                    int set)
{
    unsigned n = count(l, head), rows = (n + cols - 1) / cols;
    int *cw = calloc(cols, sizeof *cw), *rh = calloc(rows ? rows : 1, sizeof *rh);
    unsigned k = 0;
    *gw = *gh = 0;
    if (!cw || !rh) {
        free(cw);
        free(rh);
        return;
    }
    for (int c = head; c >= 0; c = l->box[c].next, k++) {
        if (l->box[c].w > cw[k % cols])
            cw[k % cols] = l->box[c].w;
        if (l->box[c].h > rh[k / cols])
            rh[k / cols] = l->box[c].h;
    }
    for (unsigned i = 0; i < cols; i++)
        *gw += cw[i] + (i ? NGI_GAP : 0);
    for (unsigned i = 0; i < rows; i++)
        *gh += rh[i] + (i ? NGI_GAP : 0);
    k = 0;
    for (int c = head, x = x0, y = y0; set && c >= 0; c = l->box[c].next, k++) {
        l->box[c].x = x;
        l->box[c].y = y;
        x += cw[k % cols] + NGI_GAP;
        if (k % cols == cols - 1)
            x = x0, y += rh[k / cols] + NGI_GAP;
    }
    free(cw);
    free(rh);
}

/* Columns whose grid is nearest @p num:@p den wide, empty cells costing. */
static unsigned best_cols(ngi_layout *l, int head, int num, int den)
{
    unsigned n = count(l, head), best = 1;
    double best_score = 1e30;
    for (unsigned cols = 1; cols <= n && cols <= 64; cols++) {
        int gw, gh;
        grid_at(l, head, cols, 0, 0, &gw, &gh, 0);
        if (gw <= 0 || gh <= 0)
            continue;
        double r = (double)gw * den / ((double)gh * num);
        double empty = (double)(((n + cols - 1) / cols) * cols - n) / n;
        double score = (r > 1 ? r : 1 / r) + 6 * empty;
        if (score < best_score)
            best_score = score, best = cols;
    }
    return best;
}

/* The strip: left to right, wrapping at @p width; returns its height. */
static int flow(ngi_layout *l, int head, int x0, int y0, int width)
{
    int x = x0, y = y0, row = 0;
    for (int c = head; c >= 0; c = l->box[c].next) {
        ngi_box *b = &l->box[c];
        if (x > x0 && x + b->w > x0 + width)
            x = x0, y += row + NGI_GAP, row = 0;
        b->x = x;
        b->y = y;
        x += b->w + NGI_GAP;
        row = b->h > row ? b->h : row;
    }
    return head >= 0 ? y + row - y0 : 0;
}

/* The width the strip asks for: about the square root of its item count
 * in a row (16 GPUs of a DGX-2 make four rows of four, not a column), at
 * least its widest item. */
static int strip_w(const ngi_layout *l, int head)
{
    int w = 0, sum = 0, n = 0, per = 1;
    for (int c = head; c >= 0; c = l->box[c].next, n++) {
        w = l->box[c].w > w ? l->box[c].w : w;
        sum += l->box[c].w;
    }
    while (per * per < n)
        per++;
    int want = n ? per * sum / n + (per - 1) * NGI_GAP : 0;
    return want > w ? want : w;
}

/* The bands side by side, stretched to @p width together. */
static int bars_at(ngi_layout *l, int head, int x0, int y0, int width)
{
    int n = (int)count(l, head), sum = 0, h = 0;
    for (int c = head; c >= 0; c = l->box[c].next)
        sum += l->box[c].w;
    int extra = n ? (width - sum - (n - 1) * NGI_GAP) / n : 0;
    for (int c = head, x = x0; c >= 0; c = l->box[c].next) {
        ngi_box *b = &l->box[c];
        b->w += extra > 0 ? extra : 0;
        b->x = x;
        b->y = y0;
        x += b->w + NGI_GAP;
        h = b->h > h ? b->h : h;
    }
    return h;
}

static void size_container(ngi_layout *l, ngi_box *b)
{
    int label_h = b->label[0] ? NGI_LABEL_H : 0, gw = 0, gh = 0, bw = 0;
    unsigned cols = 1;
    for (int c = b->bars; c >= 0; c = l->box[c].next)
        bw += l->box[c].w + (c != b->bars ? NGI_GAP : 0);
    if (b->grid >= 0) {
        int cores = l->box[b->grid].kind == NGI_BOX_CORE;
        cols = best_cols(l, b->grid, 3, cores ? 1 : 2);
        grid_at(l, b->grid, cols, 0, 0, &gw, &gh, 0);
    }
    int inner = max3(ngi_draw_text_w(b->label, NGI_FONT) * 11 / 10, bw, gw);
    inner = max3(inner, strip_w(l, b->strip), 0);
    int y = NGI_PAD + label_h;
    if (b->bars >= 0)
        y += bars_at(l, b->bars, NGI_PAD, y, inner) + NGI_GAP;
    if (b->grid >= 0) {
        grid_at(l, b->grid, cols, NGI_PAD, y, &gw, &gh, 1);
        y += gh + NGI_GAP;
    }
    if (b->strip >= 0)
        y += flow(l, b->strip, NGI_PAD, y, inner) + NGI_GAP;
    b->w = inner + 2 * NGI_PAD;
    b->h = y - NGI_GAP + NGI_PAD;
}

/* A GPU with its memory nodes: the GPU on top, the nodes in rows of four
 * below it (the lines between them: draw_svg.c). */
static void size_gpuset(ngi_layout *l, ngi_box *b)
{
    int gpu = b->grid, gw = 0, gh = 0;
    ngi_box *g = &l->box[gpu];
    int mems = g->next;
    if (mems >= 0)
        grid_at(l, mems, NGI_MEM_CHIPS < count(l, mems) ? NGI_MEM_CHIPS : count(l, mems),
                NGI_PAD, NGI_PAD + g->h + 12, &gw, &gh, 1);
    b->w = 2 * NGI_PAD + (g->w > gw ? g->w : gw);
    g->x = (b->w - g->w) / 2;
    g->y = NGI_PAD;
    b->h = 2 * NGI_PAD + g->h + (mems >= 0 ? 12 + gh : 0);
}

static void size_box(ngi_layout *l, const ngi_draw_model *m, int i)
{
    ngi_box *b = &l->box[i];
    switch (b->kind) {
    case NGI_BOX_CORE: size_core(m, b); break;
    case NGI_BOX_BAR: size_bar(m, b); break;
    case NGI_BOX_MEM: size_mem(m, b); break;
    case NGI_BOX_GPU:
    case NGI_BOX_NIC:
    case NGI_BOX_NICSUM: size_device(m, b); break;
    case NGI_BOX_ABSENT: size_absent(m, b); break;
    case NGI_BOX_GPUSET: size_gpuset(l, b); break;
    default: size_container(l, b); break;
    }
}

void ngi_draw_place(ngi_layout *l, const ngi_draw_model *m)
{
    for (unsigned i = l->n; i-- > 0;)
        size_box(l, m, (int)i);
    if (!l->n)
        return;
    l->box[0].x = NGI_MARGIN;
    l->box[0].y = NGI_TITLE_H;
    for (unsigned i = 1; i < l->n; i++) {
        l->box[i].x += l->box[l->box[i].parent].x;
        l->box[i].y += l->box[l->box[i].parent].y;
    }
}
