/* What every subcommand of the CLI shares: errors, numbers, the common
 * options (common_opts), loading the topology. Called by cmd_*.c; calls
 * nothing of the CLI's own. */
#include "cli.h"

#include <errno.h>
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

void cli_usage(FILE *f, const char *synopsis, const cli_opt_doc *docs)
{
    int w = 0;
    for (const cli_opt_doc *d = docs; d->opt; d++)
        w = (int)strlen(d->opt) > w ? (int)strlen(d->opt) : w;
    fprintf(f, "%s\noptions:\n", synopsis);
    for (const cli_opt_doc *d = docs; d->opt; d++)
        fprintf(f, "  %-*s  %s\n", w, d->opt, d->text);
}

/* --scale F: pixels per unit of the SVG, 0.25 to 8. */
static int scale_option(const char *cmd, const char *arg, common_opts *o)
{
    char *end = NULL;
    errno = 0;
    double v = arg ? strtod(arg, &end) : 0;
    if (!arg || end == arg || *end || errno || !(v >= 0.25 && v <= 8))
        return cli_error(2, "%s: --scale: invalid value '%.32s': expected a number 0.25-8 (pixels "
                         "per unit of the SVG; 2 doubles its size)", cmd, arg ? arg : "");
    o->scale = v;
    return 0;
}

int cli_common_option(const char *cmd, int c, const char *arg, common_opts *o)
{
    switch (c) {
    case 't': o->topology = arg; return 0;
    case 'r': o->fsroot = arg; return 0;
    case 'j': o->json = 1; return 0;
    case 'S': o->svg = arg; return 0;
    case 'M': o->map = 1; return 0;
    case 'Z': return scale_option(cmd, arg, o);
    case 'E': o->all_nics = 1; return 0;
    default: return -1;
    }
}

int cli_is_option_value(const char *opt, const char *word)
{
    if (!word || !*word || *word == '-' || strchr(word, '/'))
        return 0;
    if (!strcmp(opt, "--omp-guard")) {
        ng_omp_guard g;
        return ng_omp_guard_parse(word, &g, NULL, 0) == 0;
    }
    ng_net_affinity a;
    return !strcmp(opt, "--net-affinity") && ng_net_affinity_parse(word, &a, NULL, 0) == 0;
}

int cli_bare_value(const char *cmd, const char *opt, const char *word, const char *what)
{
    char shown[160];
    ng_text_escape(word, shown, sizeof shown);
    return cli_error(2, "%s: did you mean %s=%.64s? (its value follows '=': '%s %.64s' is the bare "
                     "%s and %s)", cmd, opt, shown, opt, shown, opt, what);
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
