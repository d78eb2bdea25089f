/* A whole job in one picture (`numaguard check --job J --svg`): per node a
 * band titled with the node's name (what it said, its tasks in the task
 * colours), then its machine drawn here from the facts the node sent (its
 * topology, its tasks' CPUs, its runnable threads per CPU) by the boxes
 * of draw_svg.c in NGI_MODE_JOB: each core in its task's colour as in
 * `plan --svg` (a task's colour is its global rank's, so task 5 has the
 * same colour in every panel and in the plan pictures), each PU in the
 * heat colour of its runnable threads (the load as a marker), the
 * oversubscribed and piled marks of `check --svg`. One legend at the end.
 *
 * No node's picture is ever copied in: a node's answer comes from a
 * process its job's owner controls (docs/check.md), so everything here is
 * drawn by this code and every string of theirs is XML-escaped. */
#include "private/draw.h"

#include <stdlib.h>
#include <string.h>

enum { BAND_H = 24, ROW_H = 16, CHIP = 12, PANEL_GAP = 14, MIN_W = 420, LEGEND_W = 640 };

static void text_at(FILE *f, int x, int y, int px, const char *weight, const char *s)
{
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\"%s%s%s>", x, y, px,
            weight ? " font-weight=\"" : "", weight ? weight : "", weight ? "\"" : "");
    ngi_draw_xml(f, s);
    fputs("</text>\n", f);
}

static int band_h(const ng_draw_panel *p)
{
    return BAND_H + (int)p->n_tasks * ROW_H + (p->n_tasks ? 4 : 0);
}

static const char *panel_name(const ng_draw_panel *p)
{
    return p->name ? p->name : "?";
}

/* The band: the node's name and note, one row per task with its chip. */
static void band_write(FILE *f, const ng_draw_panel *p, int y, int w)
{
    char hex[8];
    fprintf(f, "<rect class=\"node-band\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
               "fill=\"#eeeeee\" stroke=\"#808080\"/>\n", NGI_MARGIN, y, w, band_h(p));
    text_at(f, NGI_MARGIN + 6, y + 16, 13, "bold", panel_name(p));
    text_at(f, NGI_MARGIN + 18 + ngi_draw_text_w(panel_name(p), 13), y + 16, 11, NULL,
            p->note ? p->note : "");
    for (unsigned t = 0; t < p->n_tasks; t++) {
        int ty = y + BAND_H + (int)t * ROW_H, rank = p->task_ranks ? p->task_ranks[t] : -1;
        ngi_rgb c = rank >= 0 ? ngi_draw_task_rgb((unsigned)rank) : ngi_draw_rgb(NGI_C_IDLE);
        ngi_draw_hex(c, hex);
        fprintf(f, "<rect class=\"task-chip\" data-task=\"%d\" x=\"%d\" y=\"%d\" width=\"%d\" "
                   "height=\"%d\" fill=\"%s\" stroke=\"#404040\" stroke-width=\"0.5\"/>\n",
                rank, NGI_MARGIN + 8, ty, CHIP * 2, CHIP, hex);
        if (rank >= 0)
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\" "
                       "fill=\"%s\">%d</text>\n", NGI_MARGIN + 8 + CHIP, ty + 9,
                    ngi_draw_dark(c) ? "#ffffff" : "#000000", rank);
        text_at(f, NGI_MARGIN + 14 + CHIP * 2, ty + 10, 11, NULL,
                p->task_labels && p->task_labels[t] ? p->task_labels[t] : "");
    }
}

/* One node's machine: a model in NGI_MODE_JOB (a TOPO model, then its
 * tasks by rank, runnable threads and piled CPUs) and its boxes. */
typedef struct panel_draw {
    int ok;
    ngi_draw_model m;
    ngi_layout l;
    ng_draw_request req;
} panel_draw;

static void job_fill(ngi_draw_model *m, const ng_draw_panel *p)
{
    m->mode = NGI_MODE_JOB;
    for (unsigned t = 0; p->task_cpus && t < p->n_tasks; t++) {
        int rank = p->task_ranks ? p->task_ranks[t] : -1, pu;
        if (rank < 0 || !p->task_cpus[t])
            continue;
        hwloc_bitmap_foreach_begin(pu, p->task_cpus[t]) {
            if ((unsigned)pu >= m->npu)
                break;
            if (m->pu_task[pu] < 0 || rank < m->pu_task[pu])
                m->pu_task[pu] = rank;
            m->pu_ntasks[pu]++;
        }
        hwloc_bitmap_foreach_end();
    }
    for (unsigned c = 0; p->runnable && c < p->n_runnable && c < m->npu; c++)
        m->pu_runnable[c] = p->runnable[c];
    if (p->piled)
        hwloc_bitmap_or(m->piled, m->piled, p->piled);
}

static int panel_build(panel_draw *d, const ng_draw_panel *p, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (!p->topo)
        return 0;
    if (ngi_draw_model_build(&d->m, p->topo, &d->req, err, errlen) < 0)
        return -1;
    job_fill(&d->m, p);
    if (ngi_draw_layout(&d->l, &d->m, err, errlen) < 0) {
        ngi_draw_model_free(&d->m);
        return -1;
    }
    /* The machine's box is titled with the node's name (raw here, escaped
     * when written, cut to the label's size). */
    snprintf(d->l.box[0].label, sizeof d->l.box[0].label, "%s", panel_name(p));
    d->ok = 1;
    return 0;
}

static void panel_free(panel_draw *d)
{
    if (!d->ok)
        return;
    ngi_draw_layout_free(&d->l);
    ngi_draw_model_free(&d->m);
    d->ok = 0;
}

/* How wide panel p must be: its machine, its task rows, its name and note. */
static int panel_width(const ng_draw_panel *p, const panel_draw *d)
{
    int pw = d->ok ? d->l.box[0].w : 0;
    for (unsigned t = 0; t < p->n_tasks; t++) {
        const char *label = p->task_labels && p->task_labels[t] ? p->task_labels[t] : "";
        int tw = 40 + ngi_draw_text_w(label, 11);
        pw = tw > pw ? tw : pw;
    }
    int nw = 40 + ngi_draw_text_w(panel_name(p), 13) + ngi_draw_text_w(p->note ? p->note : "", 11);
    return nw > pw ? nw : pw;
}

static int panel_height(const ng_draw_panel *p, const panel_draw *d)
{
    return band_h(p) + (d->ok ? 4 + d->l.box[0].h : 0) + PANEL_GAP;
}

/* The document's head: its size, title, patterns, background, heading. */
static void job_head(FILE *out, const char *title, const char *subtitle, int w, int h)
{
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
                 "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>",
            w, h, w, h);
    ngi_draw_xml(out, title ? title : "numaguard");
    fputs("</title>\n", out);
    ngi_draw_svg_defs(out);
    fprintf(out, "<rect class=\"background\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w,
            h);
    text_at(out, NGI_MARGIN, 24, 16, "bold", title ? title : "numaguard");
    if (subtitle)
        text_at(out, NGI_MARGIN, 41, 12, NULL, subtitle);
}

/* Panel p at height y: its band, then its machine moved below it (the
 * layout placed it at (NGI_MARGIN, NGI_TITLE_H)). Returns the next y. */
static int job_panel(FILE *out, const ng_draw_panel *p, const panel_draw *d, int y, int w)
{
    fputs("<g class=\"node\" data-node-name=\"", out);
    ngi_draw_xml(out, panel_name(p));
    fprintf(out, "\" data-picture=\"%s\">\n", d->ok ? "yes" : "no");
    band_write(out, p, y, w - 2 * NGI_MARGIN);
    if (d->ok) {
        fprintf(out, "<g class=\"node-machine\" transform=\"translate(0,%d)\">\n",
                y + band_h(p) + 4 - NGI_TITLE_H);
        ngi_draw_svg_boxes(out, &d->m, &d->l);
        fputs("</g>\n", out);
    }
    fputs("</g>\n", out);
    return y + panel_height(p, d);
}

/* The one legend: the keys of NGI_MODE_JOB (the same for every node). */
static int job_legend(ngi_legend *lg, char *err, size_t errlen)
{
    static const ng_draw_request none;
    ngi_draw_model m = {.mode = NGI_MODE_JOB, .req = &none};
    return ngi_draw_legend(lg, &m, err, errlen);
}

static int job_write(FILE *out, const char *title, const char *subtitle,
                     const ng_draw_panel *panels, const panel_draw *d, unsigned n, char *err,
                     size_t errlen)
{
    ngi_legend lg;
    if (job_legend(&lg, err, errlen) < 0)
        return -1;
    int w = MIN_W, h = NGI_TITLE_H - 14, lw;
    int tw = ngi_draw_text_w(title ? title : "numaguard", 16) * 11 / 10;
    w = tw + 2 * NGI_MARGIN > w ? tw + 2 * NGI_MARGIN : w;
    for (unsigned i = 0; i < n; i++) {
        int pw = panel_width(&panels[i], &d[i]) + 2 * NGI_MARGIN;
        w = pw > w ? pw : w;
        h += panel_height(&panels[i], &d[i]);
    }
    /* The legend wraps at the panels' width, or LEGEND_W on a narrow job
     * (its key lines read as one: a 2-core node is 200 px wide). */
    int wrap = w - 2 * NGI_MARGIN > LEGEND_W ? w - 2 * NGI_MARGIN : LEGEND_W;
    int lh = ngi_draw_svg_legend(NULL, &lg, NGI_MARGIN, h, wrap, &lw);
    w = lw + 2 * NGI_MARGIN > w ? lw + 2 * NGI_MARGIN : w;
    int legend_y = h;
    h += lh + NGI_MARGIN;
    job_head(out, title, subtitle, w, h);
    int y = NGI_TITLE_H - 14;
    for (unsigned i = 0; i < n; i++)
        y = job_panel(out, &panels[i], &d[i], y, w);
    ngi_draw_svg_legend(out, &lg, NGI_MARGIN, legend_y, wrap, &lw);
    fputs("</svg>\n", out);
    ngi_draw_legend_free(&lg);
    return 0;
}

int ng_draw_svg_job(const char *title, const char *subtitle, const ng_draw_panel *panels,
                    unsigned n, FILE *out, char *err, size_t errlen)
{
    if (!out || (n && !panels))
        return ngi_fail(err, errlen, "draw: no output or no panels");
    panel_draw *d = calloc(n ? n : 1, sizeof *d);
    if (!d)
        return ngi_fail(err, errlen, "draw: out of memory");
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++)
        rc = panel_build(&d[i], &panels[i], err, errlen);
    if (rc == 0)
        rc = job_write(out, title, subtitle, panels, d, n, err, errlen);
    for (unsigned i = 0; i < n; i++)
        panel_free(&d[i]);
    free(d);
    if (rc == 0 && (fflush(out) != 0 || ferror(out)))
        return ngi_fail(err, errlen, "draw: cannot write the picture");
    return rc;
}
