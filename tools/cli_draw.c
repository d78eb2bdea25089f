/* --svg FILE and --map, shared by topo, plan, exec --dry-run and check:
 * where the picture goes and whether the map gets colour. The drawing
 * itself is the library's (ng_draw_svg, ng_draw_map). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_draw_stdout(const common_opts *o)
{
    return o->map || (o->svg && !strcmp(o->svg, "-"));
}

int cli_draw_check(const char *cmd, const common_opts *o)
{
    if (o->map + (o->svg && !strcmp(o->svg, "-")) + o->json > 1)
        return cli_error(2, "%s: --json, --map and --svg - each take stdout: give one of them "
                         "(or --svg FILE)", cmd);
    if (o->svg && !o->svg[0])
        return cli_error(2, "%s: --svg needs a file name, or - for stdout", cmd);
    return 0;
}

/* Colour only for a terminal; NO_COLOR set to anything but "" (no-color.org)
 * or TERM=dumb turn it off. */
static int want_colour(void)
{
    const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
    return isatty(STDOUT_FILENO) && !(nc && nc[0]) && !(term && !strcmp(term, "dumb"));
}

static int draw_svg(const char *cmd, const char *path, const ng_topology *topo,
                    const ng_draw_request *req)
{
    char err[512];
    int to_stdout = !strcmp(path, "-");
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f)
        return cli_error(1, "%s: --svg: cannot write '%.200s': %s", cmd, path, strerror(errno));
    int rc = ng_draw_svg(topo, req, f, err, sizeof err);
    if ((to_stdout ? fflush(f) : fclose(f)) != 0 && rc == 0)
        snprintf(err, sizeof err, "write error: %s", strerror(errno)), rc = -1;
    return rc < 0 ? cli_error(1, "%s: --svg %.200s: %s", cmd, path, err) : 0;
}

int cli_draw(const char *cmd, const common_opts *o, const ng_topology *topo,
             ng_draw_request *req)
{
    char err[512];
    req->scale = o->scale;
    if (o->all_nics)
        req->flags |= NG_DRAW_ALL_NICS;
    if (o->map) {
        if (want_colour())
            req->flags |= NG_DRAW_COLOR;
        if (ng_draw_map(topo, req, stdout, err, sizeof err) < 0)
            return cli_error(1, "%s: --map: %s", cmd, err);
        req->flags &= ~(unsigned)NG_DRAW_COLOR;
    }
    return o->svg ? draw_svg(cmd, o->svg, topo, req) : 0;
}

const char *cli_topology_name(const common_opts *o, char *buf, size_t len)
{
    char host[256] = "";
    if (o->topology) {
        const char *slash = strrchr(o->topology, '/');
        snprintf(buf, len, "%s", slash && slash[1] ? slash + 1 : o->topology);
    } else if (gethostname(host, sizeof host - 1) == 0 && host[0]) {
        snprintf(buf, len, "this machine (%s)", host);
    } else {
        snprintf(buf, len, "this machine");
    }
    return buf;
}
