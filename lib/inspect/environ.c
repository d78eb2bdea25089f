/* A process's environment block (/proc/PID/environ, bounded): the values
 * `check` reads from it (the thread caps; the GPUs and the launcher rank
 * are proc_gpus.c's; never the Slurm job, which is the kernel's to say). Values are raw bytes: escaped when
 * shown. */
#include "private/inspect.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *ngi_env_block_get(const char *blk, size_t len, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < len;) {
        const char *e = blk + i;
        size_t el = strnlen(e, len - i);
        if (el > nl && !strncmp(e, name, nl) && e[nl] == '=')
            return e + nl + 1;
        i += el + 1;
    }
    return NULL;
}

/* Read environ into a fresh block (NUL-terminated); NULL when unreadable. */
char *ngi_environ_read(const char *fsroot, int pid, size_t *len)
{
    char *blk = malloc(NGI_ENVIRON_MAX);
    long n = blk ? ngi_read_pid_file(fsroot, pid, "environ", blk, NGI_ENVIRON_MAX) : -1;
    if (n < 0) {
        free(blk);
        return NULL;
    }
    *len = (size_t)n;
    return blk;
}

/* The thread-count variables the process started with ("" if none). */
void ngi_environ_thread_caps(const char *blk, size_t len, ngi_proc *p)
{
    char *out = p->caps;
    size_t used = 0, cap = p->caps_len;
    out[0] = '\0';
    for (const char *const *v = ngi_default_thread_vars; *v; v++) {
        const char *val = ngi_env_block_get(blk, len, *v);
        if (!val)
            continue;
        int w = snprintf(out + used, cap - used, "%s%s=%.16s", used ? " " : "", *v, val);
        if (w < 0 || (size_t)w >= cap - used) {
            out[used] = '\0';
            break;
        }
        used += (size_t)w;
    }
    p->v.numaguard_started = ngi_env_block_get(blk, len, "NUMAGUARD_POLICY") != NULL;
    /* The governor's promise (lib/task/preload.c), held against the maps. */
    const char *gov = ngi_env_block_get(blk, len, "NUMAGUARD_OMP_GOVERNOR");
    snprintf(p->v.omp_promised, sizeof p->v.omp_promised, "%s", gov ? gov : "");
}

/* The variables that choose a task's NICs (those --net-affinity sets,
 * lib/plan/netaff.c, and NCCL's interface list). */
static const char *const nic_vars[] = {"UCX_NET_DEVICES", "NCCL_IB_HCA", "NVSHMEM_HCA_LIST",
                                       "OMPI_MCA_btl_openib_if_include", "NCCL_SOCKET_IFNAME",
                                       NULL};

void ngi_environ_nic_vars(const char *blk, size_t len, ngi_proc *p)
{
    char *out = p->v.nic_vars;
    size_t used = 0, cap = sizeof p->v.nic_vars;
    out[0] = '\0';
    for (const char *const *v = nic_vars; *v; v++) {
        const char *val = ngi_env_block_get(blk, len, *v);
        if (!val)
            continue;
        int w = snprintf(out + used, cap - used, "%s%s=%.64s", used ? " " : "", *v, val);
        if (w < 0 || (size_t)w >= cap - used) {
            out[used] = '\0';
            break;
        }
        used += (size_t)w;
    }
}
