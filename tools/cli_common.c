/* What every subcommand of the CLI shares: errors, numbers, loading the
 * topology. Called by cmd_*.c; calls nothing of the CLI's own. */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("numaguard: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

ng_topology *cli_load_topology(const common_opts *o)
{
    ng_topology_options to = {.xml_path = o->topology, .fsroot = o->fsroot};
    ng_topology *topo = NULL;
    char err[512];
    if (ng_topology_load(&topo, &to, err, sizeof(err)) < 0) {
        cli_error(1, "cannot load topology%s%s: %s", o->topology ? " " : "",
                  o->topology ? o->topology : "", err);
        return NULL;
    }
    return topo;
}
