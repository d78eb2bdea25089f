/* libFuzzer target: a task's GPU lists from every variable a launcher sets
 * (ng_task_gpus: SLURM_STEP_GPUS, SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES with
 * indices, GPU-/MIG- UUIDs, ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK,
 * GPU_DEVICE_ORDINAL), on real topologies (XE8640 4x H100, Corona 8x MI50)
 * with the fake driver trees of tests/fakefs/mkfake.sh.
 *
 * Input: byte 0 = flags (bit 0 topology, bit 1 gres order given, bit 2
 * fsroot = live "/" instead of the fake tree, bits 3-5 max/16), byte 1 =
 * which of the six variables are unset (bit i), then the six values
 * separated by 0x1e.
 * Invariants: indices are sorted, unique, valid and at most max; an error
 * is one printable line (values are shown escaped); SLURM_JOB_GPUS changes
 * nothing (never a step's evidence); ng_step_task_gpus for a step without
 * GPUs gives none. */
#include "fuzz_common.h"

static ng_topology *topo[2];
static ng_gres_order order[2];
static char root[2][512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char err[256], spec[1024];
    static const char *const profiles[2] = {"nvidia-xe8640", "amd-corona"};
    static const char *const xmls[2] = {"tests/topologies/xe8640-4xh100-spr8480-snc4.xml",
                                        "tests/topologies/corona-rome-8xmi50-rsmi.xml"};
    static const char *const files[2] = {"/dev/nvidia[0-3]", "/dev/dri/renderD[128-135]"};
    for (int i = 0; i < 2; i++) {
        fz_fake_root(profiles[i], root[i], sizeof root[i]);
        topo[i] = fz_load_repo_topology(xmls[i]);
        snprintf(spec, sizeof spec, "%s%s", root[i], files[i]);
        const char *specs[1] = {spec};
        if (ngi_gres_order_from_files(&order[i], specs, 1, err, sizeof err) < 0) {
            fprintf(stderr, "fuzz: gres order %s: %s\n", spec, err);
            abort();
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned flags = data[0], unset = data[1];
    int t = flags & 1;
    unsigned max = ((flags >> 3) & 7) * 16;     /* 0, 16, ..., 112 */
    char *in = fz_cstr(data + 2, size - 2);
    char *f[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    fz_split(in, '\x1e', f, 6);
    for (int i = 0; i < 6; i++)
        if (unset & (1u << i))
            f[i] = NULL;
    ng_gpu_env env = {f[0], f[1], f[2], f[3], f[4], f[5]};

    int idx[NG_MAX_GPUS + 1];
    unsigned n = 12345;
    char err[512] = "";
    idx[max] = -7; /* canary right after the room we give */
    const ng_gres_order *o = (flags & 2) ? &order[t] : NULL;
    const char *fsroot = (flags & 4) ? NULL : root[t];
    int rc = ng_task_gpus(topo[t], o, &env, fsroot, idx, max, &n, err, sizeof err);
    FZ_ASSERT(rc == 0 || rc == -1, "rc %d", rc);
    FZ_ASSERT(idx[max] == -7, "wrote past max %u", max);
    if (rc == 0) {
        FZ_ASSERT(n <= max, "%u GPUs for max %u", n, max);
        for (unsigned i = 0; i < n; i++) {
            FZ_ASSERT(idx[i] >= 0 && (unsigned)idx[i] < ng_topology_gpu_count(topo[t]),
                      "index %d out of range", idx[i]);
            FZ_ASSERT(i == 0 || idx[i] > idx[i - 1], "indices not sorted/unique");
        }
    } else {
        FZ_ASSERT(n == 0, "failure with n_out %u", n);
        /* Values are shown escaped: one printable line whatever they hold. */
        fz_check_printable("ng_task_gpus", err, sizeof err);
    }
    /* SLURM_JOB_GPUS is never evidence for a step's task (issue 19); a
     * step without GPUs gives its tasks none, with no lookup at all. */
    ng_gpu_env nojob = env;
    nojob.slurm_job_gpus = NULL;
    int idx2[NG_MAX_GPUS + 1];
    unsigned n2 = 12345;
    char err2[512] = "";
    int rc2 = ng_task_gpus(topo[t], o, &nojob, fsroot, idx2, max, &n2, err2, sizeof err2);
    FZ_ASSERT(rc2 == rc && n2 == n && (rc || !n || !memcmp(idx, idx2, n * sizeof *idx)) &&
              !strcmp(err, err2), "SLURM_JOB_GPUS changed the answer (%d/%u vs %d/%u)", rc, n,
              rc2, n2);
    n2 = 12345;
    FZ_ASSERT(ng_step_task_gpus(topo[t], o, 0, &env, fsroot, idx2, max, &n2, err2,
                                sizeof err2) == 0 && n2 == 0, "a step without GPUs: %u", n2);
    free(in);
    return 0;
}
