/* A whole job in one picture (`numaguard check --job J --svg`): a panel
 * per node, each the picture `numaguard check --job J --local --svg` drew
 * on that node (ng_draw_svg there, with that node's topology), under a
 * band with the node's name, what it said, and its tasks in the task
 * colours. A task's colour is its global rank's (ngi_draw_task_rgb), so
 * task 5 has the same colour in every panel and in the plan pictures.
 * A node without a picture (it did not answer) gets its band alone.
 *
 * The panels come from other hosts' output: each is checked to be the
 * kind of SVG numaguard writes (printable ASCII; only the elements
 * draw_svg.c writes; no href, no event attribute, no DOCTYPE or
 * processing instruction past the XML declaration) and is refused
 * (its band says so) otherwise. Its ids are prefixed per panel so that
 * two panels' patterns do not collide. */
#include "private/draw.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { BAND_H = 24, ROW_H = 16, CHIP = 12, PANEL_GAP = 14, MIN_W = 420 };

/* Elements a panel may hold (what draw_svg.c writes, and a few plain shapes). */
static int allowed_element(const char *name, size_t n)
{
    static const char *const ok[] = {"svg", "g", "defs", "pattern", "rect", "line", "text",
                                     "tspan", "title", "desc", "path", "polygon", "polyline",
                                     "circle", "ellipse", NULL};
    for (const char *const *e = ok; *e; e++)
        if (strlen(*e) == n && strncmp(*e, name, n) == 0)
            return 1;
    return 0;
}

/* Inside one tag: no href (links, external content), no on* attribute
 * (scripts), no style attribute (CSS can fetch). */
static int tag_safe(const char *t, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        char c = (char)tolower((unsigned char)t[i]);
        if (c == 'h' && i + 4 <= n && strncasecmp(t + i, "href", 4) == 0)
            return 0;
        if (isspace((unsigned char)t[i]) && i + 3 <= n &&
            (strncasecmp(t + i + 1, "on", 2) == 0 || strncasecmp(t + i + 1, "style", 5) == 0))
            return 0;
    }
    return 1;
}

/* Printable ASCII, newlines and tabs only: what draw_svg.c writes (it
 * escapes everything else), so anything else is not our picture. */
static int panel_printable(const char *svg, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!((svg[i] >= 0x20 && svg[i] <= 0x7e) || svg[i] == '\n' || svg[i] == '\t'))
            return 0;
    return 1;
}

/* Past the XML declaration, if there is one; NULL where it does not end
 * with "?>" (a DOCTYPE or anything else hiding in it). */
static const char *panel_skip_decl(const char *p, size_t len)
{
    if (len <= 5 || strncmp(p, "<?xml", 5) != 0)
        return p;
    const char *q = memchr(p, '>', len);
    return q && q[-1] == '?' ? q + 1 : NULL;
}

/* Every tag in [p, e) names an allowed element and is safe; a '<' with no
 * '>' after it refuses the panel. A comment, DOCTYPE or processing
 * instruction fails too: its name ("!", "?") is not an allowed element. */
static int panel_tags_ok(const char *p, const char *e)
{
    for (const char *t = p; t < e; t++) {
        if (*t != '<')
            continue;
        const char *q = memchr(t, '>', (size_t)(e - t));
        if (!q)
            return 0;
        const char *name = t + 1 + (t[1] == '/');
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
        if (!allowed_element(name, n) || !tag_safe(t, (size_t)(q - t)))
            return 0;
        t = q;
    }
    return 1;
}

/* The root tag's width and height (whole pixels, 1 to 100000: a panel
 * claiming more would make the job's picture absurd). The root tag is
 * read from a bounded copy; a longer one is cut and then misses them. */
static int panel_size(const char *p, const char *e, unsigned *w, unsigned *h)
{
    const char *root_end = memchr(p, '>', (size_t)(e - p));
    char root[512];
    snprintf(root, sizeof root, "%.*s", (int)(root_end - p), p);
    const char *wa = strstr(root, " width=\""), *ha = strstr(root, " height=\"");
    if (!wa || !ha || sscanf(wa + 8, "%u", w) != 1 || sscanf(ha + 9, "%u", h) != 1)
        return -1;
    return *w && *h && *w <= 100000 && *h <= 100000 ? 0 : -1;
}

/* The panel's root element: [start, end) from "<svg" to past "</svg>";
 * its width and height. -1 when it is not a numaguard-like SVG. */
static int panel_check(const char *svg, size_t len, const char **start, const char **end,
                       unsigned *w, unsigned *h)
{
    const char *p, *e = svg + len;
    if (!panel_printable(svg, len) || !(p = panel_skip_decl(svg, len)))
        return -1;
    while (p < e && isspace((unsigned char)*p))
        p++;
    while (e > p && isspace((unsigned char)e[-1]))
        e--;
    if (e - p < 12 || strncmp(p, "<svg ", 5) != 0 || strncmp(e - 6, "</svg>", 6) != 0)
        return -1;
    if (!panel_tags_ok(p, e) || panel_size(p, e, w, h) < 0)
        return -1;
    *start = p;
    *end = e;
    return 0;
}

/* The panel's content, its root tag replaced by a nested <svg> placed at
 * (x, y), ids and references prefixed with "pN-". */
static void panel_write(FILE *f, const char *start, const char *end, unsigned w, unsigned h,
                        int x, int y, unsigned k)
{
    const char *body = memchr(start, '>', (size_t)(end - start)) + 1;
    const char *close = end - 6;   /* "</svg>" */
    fprintf(f, "<svg class=\"node-picture\" x=\"%d\" y=\"%d\" width=\"%u\" height=\"%u\" "
               "viewBox=\"0 0 %u %u\">", x, y, w, h, w, h);
    for (const char *p = body; p < close;) {
        if ((size_t)(close - p) > 4 && strncmp(p, "id=\"", 4) == 0) {
            fprintf(f, "id=\"p%u-", k);
            p += 4;
        } else if ((size_t)(close - p) > 5 && strncmp(p, "url(#", 5) == 0) {
            fprintf(f, "url(#p%u-", k);
            p += 5;
        } else {
            fputc(*p++, f);
        }
    }
    fputs("</svg>\n", f);
}

typedef struct panel_geo {
    int ok;                   /* the picture passed panel_check */
    const char *start, *end;
    unsigned w, h;
} panel_geo;

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

/* The band: the node's name and note, one row per task with its chip. */
static void band_write(FILE *f, const ng_draw_panel *p, int y, int w, int bad_picture)
{
    char hex[8], line[600];
    fprintf(f, "<rect class=\"node-band\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
               "fill=\"#eeeeee\" stroke=\"#808080\"/>\n", NGI_MARGIN, y, w, band_h(p));
    text_at(f, NGI_MARGIN + 6, y + 16, 13, "bold", p->name ? p->name : "?");
    snprintf(line, sizeof line, "%s%s%s", p->note ? p->note : "",
             p->note && bad_picture ? "; " : "",
             bad_picture ? "its picture is not one numaguard drew: left out" : "");
    text_at(f, NGI_MARGIN + 18 + ngi_draw_text_w(p->name ? p->name : "?", 13), y + 16, 11,
            NULL, line);
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

/* How wide panel p must be: its picture, its task rows, its name and
 * note. Checks the picture on the way (g->ok). */
static int panel_measure(const ng_draw_panel *p, panel_geo *g)
{
    g->ok = p->svg && panel_check(p->svg, p->svg_len, &g->start, &g->end, &g->w, &g->h) == 0;
    int pw = g->ok ? (int)g->w : 0;
    for (unsigned t = 0; t < p->n_tasks; t++) {
        const char *label = p->task_labels && p->task_labels[t] ? p->task_labels[t] : "";
        int tw = 40 + ngi_draw_text_w(label, 11);
        pw = tw > pw ? tw : pw;
    }
    int nw = 40 + ngi_draw_text_w(p->name ? p->name : "?", 13) +
             ngi_draw_text_w(p->note ? p->note : "", 11);
    return nw > pw ? nw : pw;
}

/* The document's head: its size, title, background and heading. */
static void job_head(FILE *out, const char *title, const char *subtitle, int w, int h)
{
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
                 "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>",
            w, h, w, h);
    ngi_draw_xml(out, title ? title : "numaguard");
    fprintf(out, "</title>\n<rect class=\"background\" width=\"%d\" height=\"%d\" "
                 "fill=\"#ffffff\"/>\n", w, h);
    text_at(out, NGI_MARGIN, 24, 16, "bold", title ? title : "numaguard");
    if (subtitle)
        text_at(out, NGI_MARGIN, 41, 12, NULL, subtitle);
}

/* Panel k at height y: its band, then its picture when it passed the
 * check (a refused one is named in the band). Returns the next y. */
static int job_panel(FILE *out, const ng_draw_panel *p, const panel_geo *g, unsigned k, int y,
                     int w)
{
    fprintf(out, "<g class=\"node\" data-node-name=\"");
    ngi_draw_xml(out, p->name ? p->name : "?");
    fprintf(out, "\" data-picture=\"%s\">\n", g->ok ? "yes" : "no");
    band_write(out, p, y, w - 2 * NGI_MARGIN, p->svg && !g->ok);
    y += band_h(p);
    if (g->ok) {
        panel_write(out, g->start, g->end, g->w, g->h, NGI_MARGIN, y, k);
        y += (int)g->h;
    }
    fputs("</g>\n", out);
    return y + PANEL_GAP;
}

int ng_draw_svg_job(const char *title, const char *subtitle, const ng_draw_panel *panels,
                    unsigned n, FILE *out, char *err, size_t errlen)
{
    if (!out || (n && !panels))
        return ngi_fail(err, errlen, "draw: no output or no panels");
    panel_geo *g = calloc(n ? n : 1, sizeof *g);
    if (!g)
        return ngi_fail(err, errlen, "draw: out of memory");
    int w = MIN_W, h = NGI_TITLE_H - 20;
    for (unsigned i = 0; i < n; i++) {
        int pw = panel_measure(&panels[i], &g[i]);
        w = pw + 2 * NGI_MARGIN > w ? pw + 2 * NGI_MARGIN : w;
        h += band_h(&panels[i]) + (g[i].ok ? (int)g[i].h : 0) + PANEL_GAP;
    }
    job_head(out, title, subtitle, w, h);
    int y = NGI_TITLE_H - 14;
    for (unsigned i = 0; i < n; i++)
        y = job_panel(out, &panels[i], &g[i], i, y, w);
    fputs("</svg>\n", out);
    free(g);
    if (fflush(out) != 0 || ferror(out))
        return ngi_fail(err, errlen, "draw: cannot write the picture");
    return 0;
}
