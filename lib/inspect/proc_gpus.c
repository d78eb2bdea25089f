/* A running process's launcher rank and GPUs, read back from its environ
 * block for `numaguard check`: NUMAGUARD_GPUS (bus ids: what numaguard
 * applied), else the visible-devices list split per rank by the launcher
 * rules of lib/gpu/launcher.c, the same ones `numaguard exec` applies. */
#include "private/inspect.h"

#include <stdio.h>
#include <string.h>

typedef struct env_block {
    const char *blk;
    size_t len;
} env_block;

static const char *block_get(void *ctx, const char *name)
{
    const env_block *b = ctx;
    return ngi_env_block_get(b->blk, b->len, name);
}

/* NUMAGUARD_GPUS: exact bus ids. */
static void gpus_from_numaguard(const ng_topology *topo, ngi_proc *p, const char *v)
{
    char buf[NG_MAX_ARG + 1], *save = NULL;
    ngi_strlcpy(p->v.gpu_source, "NUMAGUARD_GPUS", sizeof p->v.gpu_source);
    ngi_strlcpy(buf, v, sizeof buf);
    for (char *it = strtok_r(buf, ",", &save); it && p->v.n_gpus < NG_MAX_GPUS;
         it = strtok_r(NULL, ",", &save)) {
        int g = ng_topology_gpu_by_busid(topo, it);
        if (g < 0)
            ngi_note(&p->v.errors, "NUMAGUARD_GPUS: no GPU %.32s here", it);
        else
            p->gpus[p->v.n_gpus++] = g;
    }
}

/* Local rank and size; an inconsistent pair is an error and the process
 * is taken as rank 0 of 1 (its whole list). */
static void read_rank(const ng_env_view *view, ngi_proc *p, ng_local_rank *lr)
{
    char err[256];
    if (ng_launcher_local_rank(view, lr, err, sizeof err) < 0) {
        err[strcspn(err, ";")] = '\0';   /* drop exec's "; give --local-rank ..." */
        ngi_note(&p->v.errors, "%s", err);
        lr->rank = 0;
        lr->size = 1;
        lr->source = NULL;
        return;
    }
    p->v.global_rank = lr->global_rank;
    if (!lr->source)
        return;
    p->v.local_rank = (int)lr->rank;
    p->v.local_size = (int)lr->size;
    ngi_strlcpy(p->v.rank_source, lr->source, sizeof p->v.rank_source);
}

/* The visible list as the launcher rules split it; this rank's share. */
static void gpus_from_visible(const ng_topology *topo, const char *fsroot,
                              const ng_env_view *view, const ng_local_rank *lr, ngi_proc *p)
{
    static const char *const names[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};
    ng_rank_gpus rg = {0};
    char err[256];
    /* Only the label: the launcher rules pick the variable (same order). */
    for (int i = 1; i >= 0; i--)
        if (view->get(view->ctx, names[i]))
            ngi_strlcpy(p->v.gpu_source, names[i], sizeof p->v.gpu_source);
    if (strcmp(p->v.gpu_source, "none") == 0)
        return;   /* no list: no GPU (exec's "--gpus all" hint does not apply) */
    if (ng_launcher_rank_gpus(topo, view, fsroot, NULL, lr->size, &rg, err, sizeof err) < 0) {
        ngi_note(&p->v.errors, "%s", err);
    } else {
        unsigned n = rg.count[lr->rank];
        n = n < NG_MAX_GPUS ? n : NG_MAX_GPUS;
        memcpy(p->gpus, rg.gpus + rg.offset[lr->rank], n * sizeof *p->gpus);
        p->v.n_gpus = n;
        if (lr->source)
            snprintf(p->v.gpu_rule, sizeof p->v.gpu_rule, "%.160s: local rank %u of %u (%.40s)", rg.how,
                     lr->rank, lr->size, lr->source);
        else
            snprintf(p->v.gpu_rule, sizeof p->v.gpu_rule, "%s", rg.how);
    }
    ng_rank_gpus_free(&rg);
}

void ngi_inspect_gpus(const ng_topology *topo, const char *fsroot, const char *blk, size_t len,
                     ngi_proc *p)
{
    env_block b = {blk, len};
    ng_env_view view = {block_get, &b};
    ng_local_rank lr;
    read_rank(&view, p, &lr);
    const char *v = ngi_env_block_get(blk, len, "NUMAGUARD_GPUS");
    if (v && strlen(v) <= NG_MAX_ARG)
        gpus_from_numaguard(topo, p, v);
    else
        gpus_from_visible(topo, fsroot, &view, &lr, p);
}
