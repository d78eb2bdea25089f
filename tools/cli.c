/* numaguard: the command-line face of the library. main() and the one
 * table of subcommands: the usage text and the dispatch both come from
 * it, so a new subcommand is one row here plus its cmd_<name>.c.
 * `numaguard <command> --help` prints each command's own options. */
#include "cli.h"

#include <string.h>

/* The Slurm headers of this build (the same ones the SPANK plugin was
 * compiled against, when it was built). */
#if defined(__has_include)
#if __has_include(<slurm/slurm_version.h>)
#include <slurm/slurm_version.h>
#endif
#endif

/* The subcommands, in the order the usage lists them. */
static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"topo", cmd_topo, "NUMA nodes (kind, CPUs, memory) and GPUs (bus id, locality)"},
    {"plan", cmd_plan, "where each task of a job goes on this node (or a topology file)"},
    {"exec", cmd_exec, "place this rank (torchrun, mpirun, workstation) and run a command"},
    {"check", cmd_check, "CPU, memory and thread placement of running processes"},
    {"doctor", cmd_doctor, "check this node's drivers, Slurm configuration and kernel (health check)"},
};

static void usage(FILE *f)
{
    int width = 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        width = (int)strlen(commands[i].name) > width ? (int)strlen(commands[i].name) : width;
    fputs("usage: numaguard <command> [options]\ncommands:\n", f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-*s  %s\n", width, commands[i].name, commands[i].summary);
    fputs("common options: --topology FILE (hwloc XML instead of this machine), --json\n"
          "run 'numaguard <command> --help' for the command's options,\n"
          "'numaguard --version' for the versions of numaguard, Slurm and hwloc\n", f);
}

/* numaguard's release, the Slurm release the plugin was built for (it
 * loads only into that major release) and hwloc's, running and built. */
static int print_version(void)
{
    char hw[40];
    ng_hwloc_version(hw, sizeof hw);
    printf("numaguard %s\n", ng_version_string());
#ifdef SLURM_VERSION_NUMBER
    printf("slurm %u.%02u.%u (SPANK plugin built against these headers; it loads only into "
           "Slurm %u.%02u)\n", SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
           SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER),
           SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
#else
    printf("slurm none (built without Slurm headers: no SPANK plugin)\n");
#endif
#ifdef HWLOC_VERSION
    printf("hwloc %s running (built with the hwloc %s headers, API %u.%u)\n", hw, HWLOC_VERSION,
           HWLOC_API_VERSION >> 16, (HWLOC_API_VERSION >> 8) & 0xff);
#else
    printf("hwloc %s running (built with hwloc API %u.%u)\n", hw, HWLOC_API_VERSION >> 16,
           (HWLOC_API_VERSION >> 8) & 0xff);
#endif
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
        return print_version();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    usage(stderr);
    if (!strcmp(argv[1], "version"))
        return cli_error(2, "unknown command 'version': the versions are 'numaguard --version'");
    return cli_error(2, "unknown command '%.64s'", argv[1]);
}
