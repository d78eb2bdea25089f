/* A process's launcher rank and GPUs from its environ block
 * (lib/inspect/proc_gpus.c, ngi_inspect_gpus), on the xe8640 topology
 * (4 H100: 0 = 4e, 1 = 5f, 2 = cb, 3 = db in bus order) with a fake
 * NVIDIA driver tree under a temporary fsroot: the driver's
 * /proc/driver/nvidia/gpus/<bus>/information files, as
 * tests/fakefs/mkfake.sh's nvidia-xe8640 profile writes them (no device
 * files: UUIDs are resolved from /proc alone, so no root is needed).
 *
 * Checked per case: the GPUs (topology indices, in order), gpu_source,
 * gpu_rule, local_rank / local_size / rank_source, and the error notes:
 * NUMAGUARD_GPUS (exact bus ids, first), CUDA_VISIBLE_DEVICES split per
 * local rank for torchrun, Open MPI, MPICH, PMI and Slurm variables,
 * UUIDs (full, prefix, MIG) through the driver tree, and GPUs that cannot
 * be identified. Runs from the repository root. */
#include "private/inspect.h"
#include "tap.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XE "tests/topologies/xe8640-4xh100-spr8480-snc4.xml"
#define UUID_4E "GPU-4e4e4e4e-0000-1111-2222-333344445555"
#define UUID_5F "GPU-5f5f5f5f-0000-1111-2222-333344445555"
#define UUID_CB "GPU-cbcbcbcb-0000-1111-2222-333344445555"
#define UUID_DB "GPU-dbdbdbdb-0000-1111-2222-333344445555"

static char root[64];
static ng_topology *topo;

/* ---- the fake driver tree ---- */

static int mkdirs(const char *path)
{
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    return mkdir(p, 0755) == 0 || access(p, F_OK) == 0 ? 0 : -1;
}

/* One GPU as the NVIDIA driver lists it (field names and separators of
 * nv-procfs.c, the same text tests/fakefs/mkfake.sh writes). */
static int nv_gpu(unsigned minor, const char *bus, const char *uuid)
{
    char dir[256], path[320];
    snprintf(dir, sizeof dir, "%s/proc/driver/nvidia/gpus/%s", root, bus);
    snprintf(path, sizeof path, "%s/information", dir);
    FILE *f = mkdirs(dir) == 0 ? fopen(path, "w") : NULL;
    if (!f)
        return -1;
    fprintf(f, "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t %u\nGPU UUID: \t %s\n"
            "Video BIOS: \t 96.00.74.00.0d\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n"
            "DMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\nDevice Minor: \t %u\n"
            "GPU Excluded:\t No\n", 500 + minor, uuid, bus, minor);
    return fclose(f);
}

static int rm_entry(const char *p, const struct stat *s, int flag, struct FTW *f)
{
    (void)s; (void)flag; (void)f;
    return remove(p);
}

/* ---- one inspection ---- */

typedef struct result {
    ngi_proc p;
    char gpus[256];   /* "3,0" topology indices */
} result;

/* The environ block: '|' written for NUL, a NUL after the last entry (as
 * ngi_environ_read leaves it); the process as inspect.c starts it. */
static void inspect_env(const char *env, result *r)
{
    size_t len = strlen(env);
    char *blk = malloc(len + 1);
    memcpy(blk, env, len + 1);
    for (size_t i = 0; i < len; i++)
        if (blk[i] == '|')
            blk[i] = '\0';
    memset(r, 0, sizeof *r);
    r->p.v.local_rank = r->p.v.local_size = -1;
    ngi_strlcpy(r->p.v.gpu_source, "none", sizeof r->p.v.gpu_source);
    ngi_inspect_gpus(topo, root, blk, len, &r->p);
    free(blk);
    size_t o = 0;
    for (unsigned i = 0; i < r->p.v.n_gpus; i++)
        o += (size_t)snprintf(r->gpus + o, sizeof r->gpus - o, "%s%d", i ? "," : "", r->p.gpus[i]);
}

static const char *errors_of(const result *r)
{
    static char buf[2048];
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < r->p.v.errors.n; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "|" : "", r->p.v.errors.text[i]);
    return buf;
}

typedef struct expect {
    const char *what, *env;
    const char *gpus, *source, *rule;
    int rank, size;
    const char *rank_source, *errors;
} expect;

static void check(const expect *e)
{
    result r;
    inspect_env(e->env, &r);
    const char *errs = errors_of(&r);
    int pass = strcmp(r.gpus, e->gpus) == 0 && strcmp(r.p.v.gpu_source, e->source) == 0 &&
               strcmp(r.p.v.gpu_rule, e->rule) == 0 && r.p.v.local_rank == e->rank &&
               r.p.v.local_size == e->size && strcmp(r.p.v.rank_source, e->rank_source) == 0 &&
               strcmp(errs, e->errors) == 0;
    ok(pass, "%s: GPUs [%s] from %s, rank %d of %d (%s)%s%s", e->what, e->gpus, e->source, e->rank,
       e->size, *e->rank_source ? e->rank_source : "none", *e->errors ? ", error: " : "", e->errors);
    if (!pass)
        tap_diag("got [%s] from '%s', rule '%s', rank %d of %d ('%s'), errors '%s'", r.gpus,
                 r.p.v.gpu_source, r.p.v.gpu_rule, r.p.v.local_rank, r.p.v.local_size,
                 r.p.v.rank_source, errs);
}

static void test_numaguard_gpus(void)
{
    static const expect cases[] = {
        {"no variable at all", "HOME=/home/u|PATH=/bin", "", "none", "", -1, -1, "", ""},
        {"NUMAGUARD_GPUS wins over CUDA_VISIBLE_DEVICES, its order kept",
         "CUDA_VISIBLE_DEVICES=0|NUMAGUARD_GPUS=0000:db:00.0,0000:4e:00.0", "3,0", "NUMAGUARD_GPUS",
         "", -1, -1, "", ""},
        {"NUMAGUARD_GPUS: a short bus id (no domain) is found",
         "NUMAGUARD_GPUS=cb:00.0", "2", "NUMAGUARD_GPUS", "", -1, -1, "", ""},
        {"NUMAGUARD_GPUS: a bus id this node lacks is an error, the rest kept",
         "NUMAGUARD_GPUS=0000:99:00.0,0000:5f:00.0", "1", "NUMAGUARD_GPUS", "", -1, -1, "",
         "NUMAGUARD_GPUS: no GPU 0000:99:00.0 here"},
        {"NUMAGUARD_GPUS empty: numaguard gave the task no GPU",
         "NUMAGUARD_GPUS=|CUDA_VISIBLE_DEVICES=2", "", "NUMAGUARD_GPUS", "", -1, -1, "", ""},
        {"NUMAGUARD_GPUS with the launcher's rank: the rank is still read",
         "NUMAGUARD_GPUS=0000:5f:00.0|SLURM_LOCALID=1|SLURM_STEP_TASKS_PER_NODE=4", "1",
         "NUMAGUARD_GPUS", "", 1, 4, "SLURM_LOCALID", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i]);

    /* Longer than NG_MAX_ARG: not read; the visible list decides. */
    char env[1200 + 64];
    size_t o = (size_t)snprintf(env, sizeof env, "NUMAGUARD_GPUS=");
    while (o < NG_MAX_ARG + 20)
        o += (size_t)snprintf(env + o, sizeof env - o, "0000:4e:00.0,");
    snprintf(env + o, sizeof env - o, "|CUDA_VISIBLE_DEVICES=1");
    expect big = {"NUMAGUARD_GPUS over 1024 bytes is ignored", env, "1", "CUDA_VISIBLE_DEVICES",
                  "CUDA_VISIBLE_DEVICES, shared by 1 rank(s)", -1, -1, "", ""};
    check(&big);
}

static void test_launchers(void)
{
    static const expect cases[] = {
        {"torchrun, 4 entries for 4 ranks: rank 1 owns entry 1",
         "CUDA_VISIBLE_DEVICES=0,1,2,3|LOCAL_RANK=1|LOCAL_WORLD_SIZE=4|RANK=5", "1",
         "CUDA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES, one entry per rank: local rank 1 of 4 (LOCAL_RANK)",
         1, 4, "LOCAL_RANK", ""},
        {"torchrun, entries in another order: entry 3 is GPU 0",
         "CUDA_VISIBLE_DEVICES=3,2,1,0|LOCAL_RANK=3|LOCAL_WORLD_SIZE=4", "0", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, one entry per rank: local rank 3 of 4 (LOCAL_RANK)", 3, 4,
         "LOCAL_RANK", ""},
        {"Open MPI, 2 entries for 4 ranks: shared by all",
         "CUDA_VISIBLE_DEVICES=0,1|OMPI_COMM_WORLD_LOCAL_RANK=1|OMPI_COMM_WORLD_LOCAL_SIZE=4", "0,1",
         "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, shared by 4 rank(s): local rank 1 of 4 (OMPI_COMM_WORLD_LOCAL_RANK)", 1, 4,
         "OMPI_COMM_WORLD_LOCAL_RANK", ""},
        {"MPICH, 2 entries for 2 ranks",
         "CUDA_VISIBLE_DEVICES=2,3|MPI_LOCALRANKID=0|MPI_LOCALNRANKS=2", "2", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, one entry per rank: local rank 0 of 2 (MPI_LOCALRANKID)", 0, 2,
         "MPI_LOCALRANKID", ""},
        {"PMI, 2 entries for 2 ranks",
         "PMI_LOCAL_RANK=1|PMI_LOCAL_SIZE=2|CUDA_VISIBLE_DEVICES=2,3", "3", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, one entry per rank: local rank 1 of 2 (PMI_LOCAL_RANK)", 1, 2,
         "PMI_LOCAL_RANK", ""},
        {"Slurm: size from this node's entry of SLURM_STEP_TASKS_PER_NODE",
         "SLURM_LOCALID=1|SLURM_NODEID=2|SLURM_STEP_TASKS_PER_NODE=4,2(x2)|CUDA_VISIBLE_DEVICES=1,3",
         "3", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, one entry per rank: local rank 1 of 2 (SLURM_LOCALID)", 1, 2,
         "SLURM_LOCALID", ""},
        {"Slurm: SLURM_TASKS_PER_NODE when the step's list is absent",
         "SLURM_LOCALID=2|SLURM_NODEID=0|SLURM_TASKS_PER_NODE=3,1|CUDA_VISIBLE_DEVICES=0,1,2",
         "2", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, one entry per rank: local rank 2 of 3 (SLURM_LOCALID)", 2, 3,
         "SLURM_LOCALID", ""},
        {"torchrun inside Slurm: the inner launcher (torchrun) decides",
         "SLURM_LOCALID=0|SLURM_STEP_TASKS_PER_NODE=1|LOCAL_RANK=2|LOCAL_WORLD_SIZE=4|"
         "CUDA_VISIBLE_DEVICES=0,1,2,3", "2", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, one entry per rank: local rank 2 of 4 (LOCAL_RANK)", 2, 4,
         "LOCAL_RANK", ""},
        {"no launcher: the whole list, no rank",
         "CUDA_VISIBLE_DEVICES=2,0", "0,2", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, shared by 1 rank(s)", -1, -1, "", ""},
        {"a rank that is not below its size: an error, taken as rank 0 of 1",
         "LOCAL_RANK=4|LOCAL_WORLD_SIZE=4|CUDA_VISIBLE_DEVICES=0,1", "0,1", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, shared by 1 rank(s)", -1, -1, "",
         "LOCAL_RANK=4 with LOCAL_WORLD_SIZE=4 is not a valid local rank and size"},
        {"Slurm rank without a usable tasks-per-node list: an error",
         "SLURM_LOCALID=0|CUDA_VISIBLE_DEVICES=1", "1", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, shared by 1 rank(s)", -1, -1, "",
         "SLURM_LOCALID=0 with SLURM_STEP_TASKS_PER_NODE=(unusable) is not a valid local rank and size"},
        {"CUDA_VISIBLE_DEVICES=-1 hides every GPU: none, not an error",
         "CUDA_VISIBLE_DEVICES=-1|LOCAL_RANK=0|LOCAL_WORLD_SIZE=2", "", "CUDA_VISIBLE_DEVICES",
         "none (CUDA_VISIBLE_DEVICES=-1): local rank 0 of 2 (LOCAL_RANK)", 0, 2, "LOCAL_RANK", ""},
        {"look-alike names are not the variable",
         "XCUDA_VISIBLE_DEVICES=3|CUDA_VISIBLE_DEVICES_OLD=2|CUDA_VISIBLE_DEVICES=1", "1",
         "CUDA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES, shared by 1 rank(s)", -1, -1, "", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i]);
}

static void test_uuids(void)
{
    static const expect cases[] = {
        {"UUIDs one per rank, through the driver's information files",
         "CUDA_VISIBLE_DEVICES=" UUID_DB "," UUID_4E "|LOCAL_RANK=0|LOCAL_WORLD_SIZE=2", "3",
         "CUDA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES, one entry per rank: local rank 0 of 2 (LOCAL_RANK)",
         0, 2, "LOCAL_RANK", ""},
        {"... rank 1 of the same list",
         "CUDA_VISIBLE_DEVICES=" UUID_DB "," UUID_4E "|LOCAL_RANK=1|LOCAL_WORLD_SIZE=2", "0",
         "CUDA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES, one entry per rank: local rank 1 of 2 (LOCAL_RANK)",
         1, 2, "LOCAL_RANK", ""},
        {"UUIDs shared (no launcher), upper case",
         "CUDA_VISIBLE_DEVICES=GPU-5F5F5F5F-0000-1111-2222-333344445555," UUID_CB, "1,2",
         "CUDA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES, shared by 1 rank(s)", -1, -1, "", ""},
        {"a unique UUID prefix, as CUDA accepts", "CUDA_VISIBLE_DEVICES=GPU-cbcb", "2",
         "CUDA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES, shared by 1 rank(s)", -1, -1, "", ""},
        {"a MIG device of the old form names its parent GPU",
         "CUDA_VISIBLE_DEVICES=MIG-" UUID_DB "/1/0", "3", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, shared by 1 rank(s)", -1, -1, "", ""},
        {"an index beyond the node's GPUs: an error",
         "CUDA_VISIBLE_DEVICES=7", "", "CUDA_VISIBLE_DEVICES", "", -1, -1, "",
         "CUDA_VISIBLE_DEVICES=7: unknown GPU index 7 (the topology has 4 nvidia GPUs)"},
        {"an index mixed with UUIDs: an error",
         "CUDA_VISIBLE_DEVICES=" UUID_DB ",1", "", "CUDA_VISIBLE_DEVICES", "", -1, -1, "",
         "CUDA_VISIBLE_DEVICES=" UUID_DB ",1: '1' mixes an index with UUIDs"},
        {"a malformed UUID: an error",
         "CUDA_VISIBLE_DEVICES=GPU-zz", "", "CUDA_VISIBLE_DEVICES", "", -1, -1, "",
         "CUDA_VISIBLE_DEVICES: malformed UUID 'GPU-zz'"},
        {"ROCR_VISIBLE_DEVICES on an NVIDIA node: an error naming it",
         "ROCR_VISIBLE_DEVICES=0", "", "ROCR_VISIBLE_DEVICES", "", -1, -1, "",
         "ROCR_VISIBLE_DEVICES=0: the topology has no amd GPU"},
        {"CUDA and ROCR both set: CUDA's list is the one read",
         "ROCR_VISIBLE_DEVICES=0|CUDA_VISIBLE_DEVICES=3", "3", "CUDA_VISIBLE_DEVICES",
         "CUDA_VISIBLE_DEVICES, shared by 1 rank(s)", -1, -1, "", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(&cases[i]);

    /* A UUID the driver does not list: unidentifiable. Without NVML (this
     * test's machines) the note says so; with a real one, NVML answers no. */
    result r;
    const char *unknown = "GPU-ffffffff-0000-1111-2222-333344445555";
    inspect_env("CUDA_VISIBLE_DEVICES=GPU-ffffffff-0000-1111-2222-333344445555", &r);
    char no_nvml[256], no_gpu[256];
    snprintf(no_nvml, sizeof no_nvml, "CUDA_VISIBLE_DEVICES: cannot identify '%s': not in "
             "/proc/driver/nvidia and NVML (libnvidia-ml.so.1) is not available", unknown);
    snprintf(no_gpu, sizeof no_gpu, "CUDA_VISIBLE_DEVICES: no GPU with UUID '%s'", unknown);
    const char *errs = errors_of(&r);
    ok(r.p.v.n_gpus == 0 && strcmp(r.p.v.gpu_source, "CUDA_VISIBLE_DEVICES") == 0 &&
       r.p.v.gpu_rule[0] == '\0' && (strcmp(errs, no_nvml) == 0 || strcmp(errs, no_gpu) == 0),
       "a UUID the driver does not list: no GPU, one error (%s)", errs);

    /* Two GPUs whose UUIDs share a prefix: the prefix is ambiguous. */
    nv_gpu(7, "0000:ee:00.0", "GPU-cbcbcbcb-9999-1111-2222-333344445555");
    expect amb = {"a UUID prefix two GPUs share: an error",
                  "CUDA_VISIBLE_DEVICES=GPU-cbcbcbcb", "", "CUDA_VISIBLE_DEVICES", "", -1, -1, "",
                  "CUDA_VISIBLE_DEVICES: UUID prefix 'GPU-cbcbcbcb' matches several GPUs"};
    check(&amb);
    /* The driver lists a GPU the topology does not have. */
    expect absent = {"a UUID of a GPU the topology lacks: an error",
                     "CUDA_VISIBLE_DEVICES=GPU-cbcbcbcb-9999-1111-2222-333344445555", "",
                     "CUDA_VISIBLE_DEVICES", "", -1, -1, "",
                     "CUDA_VISIBLE_DEVICES=GPU-cbcbcbcb-9999-1111-2222-333344445555: "
                     "GPU-cbcbcbcb-9999-1111-2222-333344445555 is GPU 0000:ee:00.0, which the topology "
                     "does not have"};
    check(&absent);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/ng-procgpus-XXXXXX");
    if (!mkdtemp(root)) {
        ok(0, "temporary fsroot");
        return tap_done();
    }
    /* Minors deliberately not in bus order (as mkfake.sh's profile). */
    int built = nv_gpu(1, "0000:4e:00.0", UUID_4E) == 0 && nv_gpu(3, "0000:5f:00.0", UUID_5F) == 0 &&
                nv_gpu(0, "0000:cb:00.0", UUID_CB) == 0 && nv_gpu(2, "0000:db:00.0", UUID_DB) == 0;
    ng_topology_options o = {.xml_path = XE};
    char err[256];
    if (ok(built && ng_topology_load(&topo, &o, err, sizeof err) == 0 &&
           ng_topology_gpu_count(topo) == 4, "xe8640 topology and a fake NVIDIA driver tree")) {
        test_numaguard_gpus();
        test_launchers();
        test_uuids();
    }
    ng_topology_free(topo);
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
