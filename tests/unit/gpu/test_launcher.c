/* Launcher rules (lib/gpu/launcher.c): local rank and size from each launcher's
 * variables and their priority, Slurm's tasks-per-node lists, bad values;
 * the pre-bound test; the per-rank GPU split of visible lists on a real
 * 4xH100 topology and on a GPU-less one. Environments are given through an
 * ng_env_view, never the test's own. */
#include "numaguard.h"
#include "tap.h"

#include <string.h>

/* An environment as "NAME=value" strings, NULL-terminated. */
static const char *view_get(void *ctx, const char *name)
{
    size_t n = strlen(name);
    for (const char *const *e = ctx; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static int rank_of(const char *const *env, ng_local_rank *lr, char *err, size_t len)
{
    ng_env_view v = {view_get, (void *)env};
    err[0] = '\0';
    return ng_launcher_local_rank(&v, lr, err, len);
}

static void test_local_rank(void)
{
    static const struct {
        const char *env[8];
        unsigned rank, size;
        int global;
        const char *launcher;
    } good[] = {
        {{NULL}, 0, 1, -1, NULL},
        {{"LOCAL_RANK=2", "LOCAL_WORLD_SIZE=4", "RANK=6", NULL}, 2, 4, 6, "torchrun"},
        {{"OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
          "OMPI_COMM_WORLD_RANK=3", NULL}, 1, 2, 3, "Open MPI"},
        {{"MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=4", "PMI_RANK=5", NULL}, 1, 4, 5, "MPICH"},
        {{"PMI_LOCAL_RANK=0", "PMI_LOCAL_SIZE=2", NULL}, 0, 2, -1, "PMI"},
        {{"SLURM_LOCALID=1", "SLURM_NODEID=1", "SLURM_STEP_TASKS_PER_NODE=3,2(x2)",
          "SLURM_PROCID=4", NULL}, 1, 2, 4, "Slurm"},
        {{"SLURM_LOCALID=2", "SLURM_TASKS_PER_NODE=4(x2)", NULL}, 2, 4, -1, "Slurm"},
        /* torchrun under srun: the inner launcher wins */
        {{"LOCAL_RANK=0", "LOCAL_WORLD_SIZE=2", "SLURM_LOCALID=1",
          "SLURM_STEP_TASKS_PER_NODE=2", NULL}, 0, 2, -1, "torchrun"},
        /* mpirun inside a batch step */
        {{"OMPI_COMM_WORLD_LOCAL_RANK=3", "OMPI_COMM_WORLD_LOCAL_SIZE=4", "SLURM_LOCALID=0",
          "SLURM_STEP_TASKS_PER_NODE=1", NULL}, 3, 4, -1, "Open MPI"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ng_local_rank lr;
        int rc = rank_of(good[i].env, &lr, err, sizeof err);
        ok(rc == 0 && lr.rank == good[i].rank && lr.size == good[i].size &&
               lr.global_rank == good[i].global &&
               ((!lr.launcher && !good[i].launcher) ||
                (lr.launcher && good[i].launcher && !strcmp(lr.launcher, good[i].launcher))),
           "env #%zu (%s): rank %u of %u, global %d, %s (%s)", i,
           good[i].env[0] ? good[i].env[0] : "empty", lr.rank, lr.size, lr.global_rank,
           lr.launcher ? lr.launcher : "no launcher", err);
    }
    static const struct {
        const char *env[4];
        const char *want;
    } bad[] = {
        {{"LOCAL_RANK=3", "LOCAL_WORLD_SIZE=2", NULL},
         "LOCAL_RANK=3 with LOCAL_WORLD_SIZE=2 is not a valid local rank and size"},
        {{"LOCAL_RANK=0", NULL}, "LOCAL_WORLD_SIZE=(unset)"},
        {{"OMPI_COMM_WORLD_LOCAL_RANK=x", "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL},
         "OMPI_COMM_WORLD_LOCAL_RANK=x"},
        {{"SLURM_LOCALID=0", NULL}, "SLURM_STEP_TASKS_PER_NODE=(unusable)"},
        {{"SLURM_LOCALID=0", "SLURM_STEP_TASKS_PER_NODE=2(x", NULL}, "(unusable)"},
        {{"MPI_LOCALRANKID=0", "MPI_LOCALNRANKS=0", NULL}, "MPI_LOCALNRANKS=0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ng_local_rank lr;
        int rc = rank_of(bad[i].env, &lr, err, sizeof err);
        ok(rc == -1 && strstr(err, bad[i].want) && strstr(err, "give --local-rank") &&
               !strchr(err, '\n') && lr.launcher != NULL,
           "bad env #%zu rejected: %s", i, err);
    }
    ng_local_rank lr = {.launcher = "Open MPI"};
    ok(strcmp(ng_launcher_unbind_hint(&lr), "mpirun --bind-to none") == 0, "Open MPI hint");
    lr.launcher = "Slurm";
    ok(strcmp(ng_launcher_unbind_hint(&lr), "srun --cpu-bind=none") == 0, "Slurm hint");
    lr.launcher = NULL;
    ok(strstr(ng_launcher_unbind_hint(&lr), "--bind-to none") &&
           strstr(ng_launcher_unbind_hint(NULL), "--cpu-bind=none"), "unknown launcher: both");
}

static void test_prebound(void)
{
    static const struct {
        const char *cur, *allowed;
        int want;
    } c[] = {
        {"0-1", "0-1", 0}, {"1", "0-1", 1}, {"0", "0-3", 1}, {"0-3,8", "0-3", 0},
        {"8", "0-3", 0},   {"", "0-3", 0},  {"0-3", "0-1,2-3", 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
        ng_list_parse(c[i].cur, a, 1024, NULL, 0);
        ng_list_parse(c[i].allowed, b, 1024, NULL, 0);
        ok(ng_launcher_prebound(a, b) == c[i].want, "mask '%s' in allowed '%s': prebound %d",
           c[i].cur, c[i].allowed, c[i].want);
        hwloc_bitmap_free(a);
        hwloc_bitmap_free(b);
    }
    ok(ng_launcher_prebound(NULL, NULL) == 0, "NULL sets: not prebound");
}

static ng_topology *load(const char *xml)
{
    ng_topology *t = NULL;
    ng_topology_options o;
    memset(&o, 0, sizeof o);
    o.xml_path = xml;
    char err[256];
    if (ng_topology_load(&t, &o, err, sizeof err) < 0)
        tap_diag("load %s: %s", xml, err);
    return t;
}

/* "r0|r1|..." with each rank's GPU indices ("0,1" or "-"). */
static void lists(const ng_rank_gpus *rg, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned r = 0; r < rg->size && used < len; r++) {
        used += (size_t)snprintf(buf + used, len - used, "%s", r ? "|" : "");
        for (unsigned k = 0; k < rg->count[r] && used < len; k++)
            used += (size_t)snprintf(buf + used, len - used, "%s%d", k ? "," : "",
                                     rg->gpus[rg->offset[r] + k]);
        if (!rg->count[r] && used < len)
            used += (size_t)snprintf(buf + used, len - used, "-");
    }
}

static void test_gpus(void)
{
    ng_topology *xe = load("tests/topologies/xe8640-4xh100-spr8480-snc4.xml");
    ng_topology *cpu = load("tests/topologies/laptop-hp-elitebook-i7-1370p.xml");
    if (!ok(xe && cpu && ng_topology_gpu_count(xe) == 4 && ng_topology_gpu_count(cpu) == 0,
            "topologies load (4 GPUs, none)")) {
        ng_topology_free(xe);
        ng_topology_free(cpu);
        return;
    }
    static const struct {
        int gpu_less;
        const char *env[3], *option;
        unsigned size;
        int rc;
        const char *want, *warn;
    } c[] = {
        {0, {"CUDA_VISIBLE_DEVICES=0,1,2,3", NULL}, NULL, 4, 0, "0|1|2|3", ""},
        {0, {"CUDA_VISIBLE_DEVICES=3,2,1,0", NULL}, NULL, 4, 0, "3|2|1|0", ""},
        {0, {"CUDA_VISIBLE_DEVICES=1", NULL}, NULL, 2, 0, "1|1", ""},
        {0, {"CUDA_VISIBLE_DEVICES=0,1,2,3", NULL}, NULL, 2, 0, "0,1,2,3|0,1,2,3", ""},
        {0, {"CUDA_VISIBLE_DEVICES=2,3", NULL}, NULL, 2, 0, "2|3", ""},
        {0, {"CUDA_VISIBLE_DEVICES=-1", NULL}, NULL, 2, 0, "-|-", "hides every GPU"},
        {0, {"CUDA_VISIBLE_DEVICES=", NULL}, NULL, 1, 0, "-", "hides every GPU"},
        {0, {"CUDA_VISIBLE_DEVICES=7", NULL}, NULL, 1, -1, "", ""},
        {0, {NULL}, NULL, 2, 0, "-|-", ""},
        {0, {"CUDA_VISIBLE_DEVICES=0", NULL}, "all", 4, 0, "0|1|2|3", ""},
        {0, {NULL}, "all", 2, 0, "0,1,2,3|0,1,2,3", ""},
        {0, {NULL}, "none", 2, 0, "-|-", ""},
        {0, {NULL}, "3,0000:4e:00.0", 2, 0, "3|0", ""},
        {0, {NULL}, "9", 2, -2, "", ""},
        {1, {"CUDA_VISIBLE_DEVICES=0,1", NULL}, NULL, 2, 0, "-|-", "this node has no GPU"},
        {1, {"ROCR_VISIBLE_DEVICES=0", NULL}, NULL, 1, 0, "-", "this node has no GPU"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        ng_env_view v = {view_get, (void *)c[i].env};
        ng_rank_gpus rg;
        char err[512] = "", got[256] = "";
        int rc = ng_launcher_rank_gpus(c[i].gpu_less ? cpu : xe, &v, NULL, c[i].option,
                                       c[i].size, &rg, err, sizeof err);
        if (rc == 0)
            lists(&rg, got, sizeof got);
        ok(rc == c[i].rc && strcmp(got, c[i].want) == 0 &&
               (rc != 0 || (c[i].warn[0] ? strstr(rg.warning, c[i].warn) != NULL
                                         : rg.warning[0] == '\0')) &&
               (rc == 0 || err[0]),
           "case #%zu %s%s%s x%u: rc %d lists '%s' (want %d '%s') warning '%s' err '%s'", i,
           c[i].env[0] ? c[i].env[0] : "", c[i].option ? " --gpus " : "",
           c[i].option ? c[i].option : "", c[i].size, rc, got, c[i].rc, c[i].want,
           rc == 0 ? rg.warning : "", err);
        ng_rank_gpus_free(&rg);
    }
    ng_topology_free(xe);
    ng_topology_free(cpu);
}

int main(void)
{
    test_local_rank();
    test_prebound();
    test_gpus();
    return tap_done();
}
