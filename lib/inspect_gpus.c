/* A running process's GPUs, read back from its environ block for
 * `numaguard check`: NUMAGUARD_GPUS (bus ids: what numaguard applied),
 * else the visible-devices list, split per rank by the launcher rules. */
#include "inspect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NUMAGUARD_GPUS: exact bus ids. */
static void gpus_from_numaguard(const ng_topology *topo, ng_proc *p, const char *v)
{
    char buf[NG_MAX_ARG + 1], *save = NULL;
    ng_strlcpy(p->v.gpu_source, "NUMAGUARD_GPUS", sizeof p->v.gpu_source);
    ng_strlcpy(buf, v, sizeof buf);
    for (char *it = strtok_r(buf, ",", &save); it && p->v.n_gpus < NG_MAX_GPUS;
         it = strtok_r(NULL, ",", &save)) {
        int g = ng_topology_gpu_by_busid(topo, it);
        if (g < 0)
            ng_note(&p->v.errors, "NUMAGUARD_GPUS: no GPU %.32s here", it);
        else
            p->gpus[p->v.n_gpus++] = g;
    }
}

/* Entry LOCAL_RANK of the list when it has LOCAL_WORLD_SIZE entries (the
 * torchrun convention, as numaguard exec applies it); else the whole list. */
static void pick_local_entry(const char *blk, size_t len, const char *v, ng_proc *p,
                             char *out, size_t olen)
{
    const char *r = ng_env_block_get(blk, len, "LOCAL_RANK");
    const char *s = ng_env_block_get(blk, len, "LOCAL_WORLD_SIZE");
    ng_strlcpy(out, v, olen);
    if (!r || !s)
        return;
    unsigned long rank = strtoul(r, NULL, 10), size = strtoul(s, NULL, 10), n = 1;
    for (const char *c = v; *c; c++)
        n += *c == ',';
    p->v.local_rank = (int)rank;
    p->v.local_size = (int)size;
    ng_strlcpy(p->v.rank_source, "LOCAL_RANK", sizeof p->v.rank_source);
    if (size < 2 || n != size || rank >= size || !*v)
        return;
    const char *e = v;
    for (unsigned long i = 0; i < rank; i++)
        e = strchr(e, ',') + 1;
    size_t el = strcspn(e, ",");
    snprintf(out, olen, "%.*s", (int)el, e);
    snprintf(p->v.gpu_rule, sizeof p->v.gpu_rule, "entry %lu of %lu (LOCAL_RANK)", rank, size);
}

void ng_inspect_gpus(const ng_topology *topo, const char *fsroot, const char *blk, size_t len,
                     ng_proc *p)
{
    static const char *const names[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};
    char err[256], entry[NG_MAX_ARG + 1];
    const char *v = ng_env_block_get(blk, len, "NUMAGUARD_GPUS");
    if (v && strlen(v) <= NG_MAX_ARG) {
        gpus_from_numaguard(topo, p, v);
        return;
    }
    for (int i = 0; i < 2; i++) {
        v = ng_env_block_get(blk, len, names[i]);
        if (!v || strlen(v) > NG_MAX_ARG)
            continue;
        pick_local_entry(blk, len, v, p, entry, sizeof entry);
        ng_gpu_env env = {0};
        if (i == 0)
            env.cuda_visible_devices = entry;
        else
            env.rocr_visible_devices = entry;
        ng_strlcpy(p->v.gpu_source, names[i], sizeof p->v.gpu_source);
        if (ng_task_gpus(topo, NULL, &env, fsroot, p->gpus, NG_MAX_GPUS, &p->v.n_gpus,
                         err, sizeof err) < 0)
            ng_note(&p->v.errors, "%s", err);
        return;
    }
}
