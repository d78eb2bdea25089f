/* libFuzzer target: gres.conf content (ng_gres_order_from_conf: NodeName=
 * host lists, File=/MultipleFiles= bracket ranges, Count=, AutoDetect=,
 * continuations, comments) on the fake XE8640 (NVIDIA) and Corona (AMD)
 * trees, then SLURM_STEP_GPUS through the resulting order; and the File=
 * expansion alone (ngi_gres_order_from_files) with the input's lines as specs.
 *
 * Input: byte 0 = flags (bits 0-1 root: nvidia, amd, live "/"; bits 2-3
 * node name: NULL, "node01", "gpu0042", "rack07n064": several digits, as
 * production node names have), then the gres.conf text.
 * Invariants: on success at most NG_MAX_GPUS non-NULL entries, each under
 * the root and shorter than PATH_MAX; on failure no entries and a one-line
 * message; resolving every index through ng_task_gpus never misbehaves. */
#include "fuzz_common.h"

#include <limits.h>

static char roots[2][512], conf[600];
static ng_topology *topo[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_fake_root("nvidia-xe8640", roots[0], sizeof roots[0]);
    fz_fake_root("amd-corona", roots[1], sizeof roots[1]);
    topo[0] = fz_load_repo_topology("tests/topologies/xe8640-4xh100-spr8480-snc4.xml");
    topo[1] = fz_load_repo_topology("tests/topologies/corona-rome-8xmi50-rsmi.xml");
    snprintf(conf, sizeof conf, "%s/gres.conf", fz_tmpdir());
    return 0;
}

static void check_order(const ng_gres_order *o, const char *root, const char *what)
{
    FZ_ASSERT(o->count <= NG_MAX_GPUS, "%s: %u entries", what, o->count);
    for (unsigned i = 0; i < o->count; i++) {
        const char *f = o->device_files[i];
        FZ_ASSERT(f != NULL, "%s: entry %u NULL", what, i);
        FZ_ASSERT(strnlen(f, PATH_MAX) < PATH_MAX, "%s: entry %u too long", what, i);
        if (root)
            FZ_ASSERT(strncmp(f, root, strlen(root)) == 0, "%s: '%s' outside '%s'", what, f,
                      root);
    }
}

/* Every index of the order through SLURM_STEP_GPUS. */
static void resolve_all(const ng_gres_order *o, const ng_topology *t, const char *root)
{
    char step[NG_MAX_ARG + 1];
    size_t used = 0;
    step[0] = '\0';
    for (unsigned i = 0; i < o->count && used + 8 < sizeof step; i++)
        used += (size_t)snprintf(step + used, sizeof step - used, "%s%u", i ? "," : "", i);
    ng_gpu_env env = {step, NULL, NULL, NULL, NULL, NULL};
    int idx[NG_MAX_GPUS];
    unsigned n = 0;
    char err[512] = "";
    if (ng_task_gpus(t, o, &env, root, idx, NG_MAX_GPUS, &n, err, sizeof err) == 0) {
        FZ_ASSERT(n <= o->count, "%u GPUs from %u entries", n, o->count);
        for (unsigned i = 1; i < n; i++)
            FZ_ASSERT(idx[i] > idx[i - 1], "not sorted");
    } else {
        fz_check_message("ng_task_gpus", err, sizeof err);
    }
}

static void from_files(char *text)
{
    char *lines[8] = {NULL};
    unsigned n = fz_split(text, '\n', lines, 8);
    ng_gres_order o;
    char err[512] = "";
    if (ngi_gres_order_from_files(&o, (const char *const *)lines, n, err, sizeof err) == 0) {
        check_order(&o, NULL, "ngi_gres_order_from_files");
        ng_gres_order_free(&o);
    } else {
        FZ_ASSERT(o.count == 0 && o.device_files == NULL, "failure left entries");
        /* Specs are echoed as given; gres.conf tokens never hold a '\r'
         * (the conf reader splits at it), direct callers might. */
        int cr = 0;
        for (unsigned i = 0; i < n; i++)
            cr |= fz_has_newline(lines[i]);
        if (!cr)
            fz_check_message("ngi_gres_order_from_files", err, sizeof err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const nodes[4] = {NULL, "node01", "gpu0042", "rack07n064"};
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    unsigned r = flags & 3;
    const char *root = r < 2 ? roots[r] : NULL;
    fz_write_file(conf, data + 1, size - 1);
    ng_gres_order o;
    char err[512] = "";
    int rc = ng_gres_order_from_conf(&o, conf, nodes[(flags >> 2) & 3], root, err, sizeof err);
    FZ_ASSERT(rc == 0 || rc == -1, "rc %d", rc);
    if (rc == 0) {
        check_order(&o, root, "ng_gres_order_from_conf");
        if (o.count)
            resolve_all(&o, topo[r & 1], root);
        ng_gres_order_free(&o);
    } else {
        FZ_ASSERT(o.count == 0 && o.device_files == NULL, "failure left entries");
        fz_check_message("ng_gres_order_from_conf", err, sizeof err);
    }
    char *text = fz_cstr(data + 1, size - 1);
    from_files(text);
    free(text);
    return 0;
}
