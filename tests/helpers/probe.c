/*
 * probe: run as a task, print one parseable line describing where it runs.
 *
 *   probe [-m MIB] [-t TAG] [-w NODES]
 *
 * -w NODES first sets MPOL_WEIGHTED_INTERLEAVE over NODES itself (for the
 * raw kernel checks without the plugin) and prints setpolicy=ok or
 * setpolicy=<errno name> (EINVAL on kernels before 6.9).
 *
 * Output (one line, space-separated key=value, values never contain spaces):
 *   probe tag=T rank=R cpus=0-1 policy=bind polnodes=0 pages=16384,0,0
 *         pagesfail=0 env.OMP_NUM_THREADS=2 env.NUMAGUARD_...=...
 * - cpus:     sched_getaffinity as a cpulist
 * - policy:   get_mempolicy mode: default, preferred, bind, interleave, local,
 *             preferred_many, weighted_interleave (flags stripped; "flags=" is
 *             printed when the kernel reports mode flags)
 * - polnodes: the policy's nodemask as a list ("" for default/local)
 * - pages:    where the pages of an MIB-MiB buffer (default 64) it touched
 *             are, per node 0..N-1 (N = highest configured node + 1), counted
 *             with move_pages(pid 0, nodes NULL): THP is disabled for the
 *             buffer (MADV_NOHUGEPAGE) so the policy applies per 4 KiB page.
 * - env.X:    every NUMAGUARD_* variable, OMP_NUM_THREADS, OMP_PLACES,
 *             OMP_PROC_BIND and the Slurm GPU variables, percent-encoded.
 * Exit status 0, or 1 when a system call it needs failed (message on stderr).
 */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bitlist.h"

/* Newer modes than some numaif.h headers know (uapi values). */
#define PROBE_MPOL_PREFERRED_MANY 5
#define PROBE_MPOL_WEIGHTED_INTERLEAVE 6
#define PROBE_MAX_NODES 1024
#define PROBE_MODE_FLAGS 0xffff0000u  /* MPOL_F_STATIC_NODES etc. live up here */

extern char **environ;

static const char *mode_name(int mode)
{
    static const char *const names[] = {
        "default", "preferred", "bind", "interleave", "local",
        "preferred_many", "weighted_interleave"
    };
    if (mode >= 0 && mode <= PROBE_MPOL_WEIGHTED_INTERLEAVE)
        return names[mode];
    return "unknown";
}

/* " key=LIST" */
static void print_list(const char *key, int (*isset)(const void *, int),
                       const void *set, int nbits)
{
    printf(" %s=", key);
    print_bitlist(isset, set, nbits);
}

static int cpu_isset(const void *set, int i)
{
    return CPU_ISSET_S((size_t)i, CPU_ALLOC_SIZE(CPU_SETSIZE), (const cpu_set_t *)set);
}

static int mask_isset(const void *set, int i)
{
    const unsigned long *m = set;
    const int bits = (int)(8 * sizeof(unsigned long));
    return (m[i / bits] >> (i % bits)) & 1ul;
}

static int print_affinity(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        perror("probe: sched_getaffinity");
        return -1;
    }
    print_list("cpus", cpu_isset, &set, CPU_SETSIZE);
    return 0;
}

static int print_policy(void)
{
    unsigned long mask[PROBE_MAX_NODES / (8 * sizeof(unsigned long))];
    int mode = 0;
    memset(mask, 0, sizeof(mask));
    if (get_mempolicy(&mode, mask, PROBE_MAX_NODES, NULL, 0) != 0) {
        perror("probe: get_mempolicy");
        return -1;
    }
    unsigned flags = (unsigned)mode & PROBE_MODE_FLAGS;
    printf(" policy=%s", mode_name(mode & (int)~PROBE_MODE_FLAGS));
    if (flags)
        printf(" flags=0x%x", flags);
    print_list("polnodes", mask_isset, mask, PROBE_MAX_NODES);
    return 0;
}

/* Touch a buffer and report on which node each of its pages landed. */
static int print_pages(size_t mib)
{
    long psz = sysconf(_SC_PAGESIZE);
    size_t len = mib << 20, n = len / (size_t)psz;
    int nnodes = numa_max_node() + 1;   /* configured nodes, not the possible 1024 */
    if (nnodes > PROBE_MAX_NODES)
        nnodes = PROBE_MAX_NODES;
    char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void **pages = calloc(n, sizeof(*pages));
    int *status = calloc(n, sizeof(*status));
    unsigned long *count = calloc((size_t)nnodes, sizeof(*count));
    unsigned long fail = 0;
    int rc = -1;
    if (buf == MAP_FAILED || !pages || !status || !count) {
        fprintf(stderr, "probe: out of memory for %zu MiB\n", mib);
        goto out;
    }
    /* Without this, THP places 2 MiB at a time and counts come in 512s. */
    if (madvise(buf, len, MADV_NOHUGEPAGE) != 0)
        perror("probe: madvise(MADV_NOHUGEPAGE)");
    for (size_t i = 0; i < n; i++) {
        buf[i * (size_t)psz] = (char)i;
        pages[i] = buf + i * (size_t)psz;
    }
    if (move_pages(0, (unsigned long)n, pages, NULL, status, 0) != 0) {
        perror("probe: move_pages");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (status[i] >= 0 && status[i] < nnodes)
            count[status[i]]++;
        else
            fail++;
    }
    printf(" pages=");
    for (int i = 0; i < nnodes; i++)
        printf(i ? ",%lu" : "%lu", count[i]);
    printf(" pagesfail=%lu", fail);
    rc = 0;
out:
    if (buf != MAP_FAILED)
        munmap(buf, len);
    free(pages);
    free(status);
    free(count);
    return rc;
}

static int wanted_env(const char *entry)
{
    static const char *const exact[] = {
        "OMP_NUM_THREADS", "OMP_PLACES", "OMP_PROC_BIND", "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS",
        "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
        "SLURM_LOCALID", NULL
    };
    if (strncmp(entry, "NUMAGUARD_", 10) == 0)
        return 1;
    for (unsigned i = 0; exact[i]; i++) {
        size_t l = strlen(exact[i]);
        if (strncmp(entry, exact[i], l) == 0 && entry[l] == '=')
            return 1;
    }
    return 0;
}

/* env.NAME=VALUE with spaces, '%' and control bytes percent-encoded;
 * bounded so a huge variable cannot flood the line. */
static void print_env(void)
{
    for (char **e = environ; *e; e++) {
        if (!wanted_env(*e))
            continue;
        printf(" env.");
        size_t k = 0;
        for (const unsigned char *p = (const unsigned char *)*e; *p && k < 512; p++, k++) {
            if (*p <= ' ' || *p == '%' || *p >= 0x7f)
                printf("%%%02X", *p);
            else
                putchar(*p);
        }
    }
}

/* set_mempolicy(MPOL_WEIGHTED_INTERLEAVE, nodes); prints the outcome. */
static int set_weighted(const char *nodes)
{
    struct bitmask *bm = numa_parse_nodestring(nodes);
    if (!bm) {
        fprintf(stderr, "probe: bad node list\n");
        return -1;
    }
    long r = set_mempolicy(PROBE_MPOL_WEIGHTED_INTERLEAVE, bm->maskp, bm->size + 1);
    int e = errno;
    numa_bitmask_free(bm);
    printf(" setpolicy=%s", r == 0 ? "ok" : e == EINVAL ? "EINVAL" : "error");
    return 0;
}

int main(int argc, char **argv)
{
    size_t mib = 64;
    const char *tag = "-", *weighted = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "m:t:w:")) != -1) {
        if (opt == 'm' && atoi(optarg) > 0 && atoi(optarg) <= 4096)
            mib = (size_t)atoi(optarg);
        else if (opt == 't' && strlen(optarg) < 64 && !strpbrk(optarg, " \t\n"))
            tag = optarg;
        else if (opt == 'w' && strlen(optarg) < 256)
            weighted = optarg;
        else {
            fprintf(stderr, "usage: probe [-m MIB(1-4096)] [-t TAG] [-w NODES]\n");
            return 2;
        }
    }
    const char *rank = getenv("SLURM_PROCID");
    if (!rank || strlen(rank) > 16 || strpbrk(rank, " \t\n"))
        rank = "-1";
    if (numa_available() < 0) {
        fprintf(stderr, "probe: no NUMA support\n");
        return 1;
    }
    printf("probe tag=%s rank=%s", tag, rank);
    int rc = 0;
    if (weighted && set_weighted(weighted) != 0)
        return 1;
    if (print_affinity() != 0 || print_policy() != 0 || print_pages(mib) != 0)
        rc = 1;
    print_env();
    printf("\n");
    fflush(stdout);
    return rc;
}
