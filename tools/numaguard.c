/* numaguard: the command-line face of the library.
 *   numaguard topo [--topology FILE] [--json]
 *   numaguard plan --tasks N [...] [--json]
 *   numaguard exec [options] -- CMD [ARGS...]
 *   numaguard check [--pid P ... | --all-mine] [--json]
 *   numaguard --version
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The Slurm headers of this build (the same ones the SPANK plugin was
 * compiled against, when it was built). */
#if defined(__has_include)
#if __has_include(<slurm/slurm_version.h>)
#include <slurm/slurm_version.h>
#endif
#endif

static const char usage[] =
    "usage: numaguard <command> [options]\n"
    "commands:\n"
    "  topo   NUMA nodes (kind, CPUs, memory) and GPUs (bus id, locality)\n"
    "  plan   where each task of a job goes on this node (or a topology file)\n"
    "  exec   place this rank (torchrun, mpirun, workstation) and run a command\n"
    "  check  CPU, memory and thread placement of running processes\n"
    "common options: --topology FILE (hwloc XML instead of this machine), --json\n"
    "run 'numaguard <command> --help' for the command's options,\n"
    "'numaguard --version' for the versions of numaguard, Slurm and hwloc\n";

/* numaguard's release, the Slurm release the plugin was built for (it
 * loads only into that major release) and hwloc's, built and running. */
static int print_version(void)
{
    unsigned hw = hwloc_get_api_version();
    printf("numaguard %s\n", NUMAGUARD_VERSION);
#ifdef SLURM_VERSION_NUMBER
    printf("slurm %u.%02u.%u (SPANK plugin built against these headers; it loads only into "
           "Slurm %u.%02u)\n", SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
           SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER),
           SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
#else
    printf("slurm none (built without Slurm headers: no SPANK plugin)\n");
#endif
    printf("hwloc API %u.%u.%u built, %u.%u.%u running\n", HWLOC_API_VERSION >> 16,
           (HWLOC_API_VERSION >> 8) & 0xff, HWLOC_API_VERSION & 0xff, hw >> 16, (hw >> 8) & 0xff,
           hw & 0xff);
    return 0;
}

long cli_parse_uint(const char *s, unsigned long max)
{
    if (!s || !isdigit((unsigned char)*s) || strnlen(s, 12) > 10)
        return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    return (errno || *end || v > max) ? -1 : (long)v;
}

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

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
        return print_version();
    if (!strcmp(argv[1], "topo"))
        return cmd_topo(argc - 1, argv + 1);
    if (!strcmp(argv[1], "plan"))
        return cmd_plan(argc - 1, argv + 1);
    if (!strcmp(argv[1], "exec"))
        return cmd_exec(argc - 1, argv + 1);
    if (!strcmp(argv[1], "check"))
        return cmd_check(argc - 1, argv + 1);
    fputs(usage, stderr);
    return cli_error(2, "unknown command '%.64s'", argv[1]);
}
