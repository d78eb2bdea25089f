/*
 * ng_probe: print what a task really got, for the Slurm integration tests.
 *
 *   ng_probe [VAR...]
 *
 * One line, tab-separated key=value fields:
 *   rank=<SLURM_PROCID> local=<SLURM_LOCALID> node=<SLURMD_NODENAME>
 *   affinity=<sched_getaffinity cpulist> mempolicy=<get_mempolicy mode>
 *   memnodes=<policy nodelist> then VAR=<value> for each argument
 *   (VAR=<unset> when the variable is absent); an argument ending in '*'
 *   ("NUMAGUARD_*") prints every variable with that prefix, sorted.
 * The kernel is asked directly (not /proc text, not numactl), so the tests
 * see the syscalls' effect exactly as the application would.
 */
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitlist.h"

#ifndef MPOL_PREFERRED_MANY
#define MPOL_PREFERRED_MANY 5
#endif
#ifndef MPOL_WEIGHTED_INTERLEAVE
#define MPOL_WEIGHTED_INTERLEAVE 6
#endif

/* Mode flags the kernel may OR into the mode (linux/mempolicy.h). */
#ifndef MPOL_F_STATIC_NODES
#define MPOL_F_STATIC_NODES (1 << 15)
#endif
#ifndef MPOL_F_RELATIVE_NODES
#define MPOL_F_RELATIVE_NODES (1 << 14)
#endif

#define MAX_NODES 4096

extern char **environ;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Print "\tNAME=value" for every variable starting with prefix (sorted). */
static void print_prefixed(const char *prefix, size_t plen)
{
    const char *found[512];
    size_t n = 0;
    for (char **e = environ; *e && n < 512; e++)
        if (strncmp(*e, prefix, plen) == 0)
            found[n++] = *e;
    qsort(found, n, sizeof(found[0]), cmp_str);
    for (size_t i = 0; i < n; i++)
        printf("\t%s", found[i]);
}

static const char *mode_name(int mode)
{
    switch (mode & ~(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES)) {
    case MPOL_DEFAULT: return "default";
    case MPOL_PREFERRED: return "preferred";
    case MPOL_BIND: return "bind";
    case MPOL_INTERLEAVE: return "interleave";
    case MPOL_LOCAL: return "local";
    case MPOL_PREFERRED_MANY: return "preferred_many";
    case MPOL_WEIGHTED_INTERLEAVE: return "weighted_interleave";
    default: break;
    }
    return "unknown";
}

static int cpu_isset(const void *set, int i)
{
    return CPU_ISSET((size_t)i, (const cpu_set_t *)set);
}

static int node_isset(const void *set, int i)
{
    const unsigned long *m = set;
    size_t bits = 8 * sizeof(unsigned long);
    return (int)((m[(size_t)i / bits] >> ((size_t)i % bits)) & 1UL);
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v ? v : dflt;
}

int main(int argc, char **argv)
{
    cpu_set_t cpus;
    unsigned long nodes[MAX_NODES / (8 * sizeof(unsigned long))];
    int mode = -1;

    printf("rank=%s\tlocal=%s\tnode=%s\taffinity=", env_or("SLURM_PROCID", ""),
           env_or("SLURM_LOCALID", ""), env_or("SLURMD_NODENAME", ""));
    CPU_ZERO(&cpus);
    if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
        print_bitlist(cpu_isset, &cpus, CPU_SETSIZE);
    memset(nodes, 0, sizeof(nodes));
    if (get_mempolicy(&mode, nodes, MAX_NODES, NULL, 0) != 0)
        mode = -1;
    printf("\tmempolicy=%s\tmemnodes=", mode < 0 ? "error" : mode_name(mode));
    if (mode >= 0)
        print_bitlist(node_isset, nodes, MAX_NODES);
    for (int i = 1; i < argc; i++) {
        size_t len = strlen(argv[i]);
        if (len > 0 && argv[i][len - 1] == '*')
            print_prefixed(argv[i], len - 1);
        else
            printf("\t%s=%s", argv[i], env_or(argv[i], "<unset>"));
    }
    printf("\n");
    return 0;
}
