/* ng_draw_svg and ng_draw_map: the model (what the picture says), then
 * the layout and the SVG, or the map; the legend for both. */
#include "private/draw.h"

int ng_draw_svg(const ng_topology *topo, const ng_draw_request *req, FILE *out, char *err,
                size_t errlen)
{
    ngi_draw_model m;
    ngi_layout l;
    ngi_legend lg;
    if (!out)
        return ngi_fail(err, errlen, "draw: no output stream");
    if (ngi_draw_model_build(&m, topo, req, err, errlen) < 0)
        return -1;
    int rc = ngi_draw_layout(&l, &m, err, errlen);
    if (rc == 0 && (rc = ngi_draw_legend(&lg, &m, err, errlen)) < 0)
        ngi_draw_layout_free(&l);
    if (rc == 0) {
        if ((rc = ngi_draw_svg_write(out, &m, &l, &lg)) < 0)
            ngi_fail(err, errlen, "draw: cannot write the SVG");
        ngi_draw_legend_free(&lg);
        ngi_draw_layout_free(&l);
    }
    ngi_draw_model_free(&m);
    return rc;
}

int ng_draw_map(const ng_topology *topo, const ng_draw_request *req, FILE *out, char *err,
                size_t errlen)
{
    ngi_draw_model m;
    ngi_legend lg;
    if (!out)
        return ngi_fail(err, errlen, "draw: no output stream");
    if (ngi_draw_model_build(&m, topo, req, err, errlen) < 0)
        return -1;
    int rc = ngi_draw_legend(&lg, &m, err, errlen);
    if (rc == 0) {
        if ((rc = ngi_draw_map_write(out, &m, &lg)) < 0)
            ngi_fail(err, errlen, "draw: cannot write the map");
        ngi_draw_legend_free(&lg);
    }
    ngi_draw_model_free(&m);
    return rc;
}
