/* Tests for lib/gpu/: gres order, device files ->
 * bus ids, task environment -> GPUs, on fake /dev,/proc,/sys trees built
 * by tests/fakefs/mkfake.sh (real layouts) and a fake libnvidia-ml.so.1
 * (tests/fakefs/fake_nvml.c) loaded by re-executing this test with
 * LD_LIBRARY_PATH pointing at it. Run from the repository root. */
#include "private/gpu.h"
#include "tap.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char root_nv[512], root_amd[512], root_empty[512], tmpdir[256];
static const char *XE = "tests/topologies/xe8640-4xh100-spr8480-snc4.xml";
static const char *CORONA = "tests/topologies/corona-rome-8xmi50-rsmi.xml";

static ng_topology *load(const char *xml)
{
    ng_topology_options o;
    char err[256];
    ng_topology *t = NULL;
    memset(&o, 0, sizeof(o));
    o.xml_path = xml;
    if (ng_topology_load(&t, &o, err, sizeof(err)))
        tap_diag("load %s: %s", xml, err);
    return t;
}

/* The task's GPUs as "bus,bus" (short "4e,cb" form), or "ERR: msg". */
static const char *task(const ng_topology *t, const ng_gres_order *o, const char *fsroot,
                        const ng_gpu_env *env)
{
    static char buf[1024];
    char err[512] = "";
    int idx[NG_MAX_GPUS];
    unsigned n = 99;
    if (ng_task_gpus(t, o, env, fsroot, idx, NG_MAX_GPUS, &n, err, sizeof(err))) {
        snprintf(buf, sizeof(buf), "ERR: %s", err);
        return buf;
    }
    buf[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        const char *b = ng_topology_gpu(t, (unsigned)idx[i])->pci_bus_id;
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof(buf) - l, "%s%.2s", i ? "," : "", b + 5);
        if (i && idx[i] <= idx[i - 1])
            return "ERR: indices not sorted/unique";
    }
    return buf;
}

static int has(const char *s, const char *sub)
{
    return strstr(s, sub) != NULL;
}

static void check_env(const ng_topology *t, const ng_gres_order *o, const char *fsroot,
                      const ng_gpu_env *env, const char *want, const char *what)
{
    const char *got = task(t, o, fsroot, env);
    int pass = !strncmp(want, "ERR:", 4) ? has(got, want + 4) && !strncmp(got, "ERR:", 4)
                                         : !strcmp(got, want);
    if (!ok(pass, "%s -> %s", what, want))
        tap_diag("got '%s'", got);
}

/* Order entries relative to a root, joined: "/dev/nvidia1,/dev/nvidia3". */
static const char *order_str(const ng_gres_order *o, const char *root)
{
    static char buf[2048];
    size_t rl = root ? strlen(root) : 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < o->count; i++) {
        const char *f = o->device_files[i];
        if (rl && !strncmp(f, root, rl))
            f += rl;
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof(buf) - l, "%s%s", i ? "," : "", f);
    }
    return buf;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int conf_order(const char *text, const char *node, const char *fsroot,
                      ng_gres_order *o, char *err, size_t errlen)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/gres.conf", tmpdir);
    write_file(path, text);
    return ng_gres_order_from_conf(o, path, node, fsroot, err, errlen);
}

static void check_conf(const char *text, const char *node, const char *fsroot,
                       const char *want, const char *what)
{
    ng_gres_order o;
    char err[256] = "";
    int rc = conf_order(text, node, fsroot, &o, err, sizeof(err));
    const char *got = rc ? err : order_str(&o, fsroot);
    int pass = !strncmp(want, "ERR:", 4) ? rc && has(err, want + 4) : !rc && !strcmp(got, want);
    if (!ok(pass, "gres.conf %s -> %s", what, want))
        tap_diag("got '%s'", got);
    if (!rc)
        ng_gres_order_free(&o);
}

static void test_files(void)
{
    ng_gres_order o;
    char err[256];
    const char *a[] = {"/dev/nvidia[0-3]"};
    ok(!ngi_gres_order_from_files(&o, a, 1, err, sizeof(err)) &&
           !strcmp(order_str(&o, NULL), "/dev/nvidia0,/dev/nvidia1,/dev/nvidia2,/dev/nvidia3"),
       "File=/dev/nvidia[0-3] expands to 4 files in order");
    ng_gres_order_free(&o);
    const char *b[] = {"/dev/nvidia[2,0]", "/dev/nvidia1,/dev/nvidia3"};
    ok(!ngi_gres_order_from_files(&o, b, 2, err, sizeof(err)) &&
           !strcmp(order_str(&o, NULL), "/dev/nvidia2,/dev/nvidia0,/dev/nvidia1,/dev/nvidia3"),
       "several File= values and lists keep the written order (no sorting)");
    ng_gres_order_free(&o);
    const char *c[] = {"/dev/dri/renderD[128-129,131],/dev/x[08-10]"};
    ok(!ngi_gres_order_from_files(&o, c, 1, err, sizeof(err)) &&
           !strcmp(order_str(&o, NULL), "/dev/dri/renderD128,/dev/dri/renderD129,"
                                        "/dev/dri/renderD131,/dev/x08,/dev/x09,/dev/x10"),
       "ranges with commas and zero padding");
    ng_gres_order_free(&o);
    struct { const char *spec, *msg; } bad[] = {
        {"/dev/nvidia[3-1]", "reversed"}, {"/dev/nvidia[0-", "missing ']'"},
        {"/dev/nvidia[]", "empty []"}, {"", "empty"}, {"/dev/a,,/dev/b", "empty name"},
        {"/dev/nvidia[0-999]", "range larger"}, {"/dev/n[a-b]", "expected a number"},
        {"/dev/nvidia[0-1]x", "text after the last ']'"},
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *s[] = {bad[i].spec};
        err[0] = '\0';
        int rc = ngi_gres_order_from_files(&o, s, 1, err, sizeof(err));
        if (!ok(rc == -1 && has(err, bad[i].msg) && o.count == 0,
                "File='%s' is refused (%s)", bad[i].spec, bad[i].msg))
            tap_diag("rc %d err '%s'", rc, err);
    }
}

/* One gres.conf for the whole cluster (issue 12): only this node's records. */
static void test_shared_conf(void)
{
    const char *shared =
        "NodeName=other[01-04] Name=gpu File=/dev/nvidia[7,6,5,4,3,2,1,0]\n"
        "NodeName=ng1 Name=gpu File=/dev/nvidia[0-3]\n"
        "NodeName=ng[2-3],big Name=gpu File=/dev/nvidia[4-5]\n"
        "Name=gpu File=/dev/nvidia9\n";
    check_conf(shared, "ng1", NULL, "/dev/nvidia0,/dev/nvidia1,/dev/nvidia2,/dev/nvidia3,"
               "/dev/nvidia9", "shared: ng1 takes its record and the NodeName-less one");
    check_conf(shared, "ng2", NULL, "/dev/nvidia4,/dev/nvidia5,/dev/nvidia9",
               "shared: ng2 matches NodeName=ng[2-3],big");
    check_conf(shared, "other03", NULL, "/dev/nvidia7,/dev/nvidia6,/dev/nvidia5,/dev/nvidia4,"
               "/dev/nvidia3,/dev/nvidia2,/dev/nvidia1,/dev/nvidia0,/dev/nvidia9",
               "shared: other03 keeps its reversed File= order");
    check_conf(shared, "other3", NULL, "/dev/nvidia9",
               "shared: other3 is not other03 (exact names, as slurmd)");
    check_conf("NodeName=other[01-04] Name=gpu File=/dev/nvidia[0-1]\n"
               "NodeName=ng2 Name=gpu File=/dev/nvidia[0-1]\n", "ng1", NULL,
               "ERR:none of its 2 Name=gpu records names node 'ng1'",
               "shared: no record for this node is an error naming the node");
    check_conf("NodeName=other[01-04] Name=gpu File=/dev/nvidia[0-1]\nAutoDetect=off\n", "ng1",
               NULL, "ERR:names node 'ng1'", "shared: AutoDetect=off does not hide the mismatch");
    check_conf("NodeName=ng1 Name=gpu File=/dev/nvidia0\nNodeName=ng[1-2 Name=gpu File=/dev/x\n",
               "ng1", NULL, "ERR:gres.conf line 2: NodeName='ng[1-2': missing ']'",
               "shared: a malformed NodeName= names its line");
    check_conf("NodeName=other1 Name=mps Count=100\n", "ng1", NULL, "",
               "shared: only other nodes' non-gpu records: no GPUs, no error");
}

/* The bound of issue 19's timing checks: tap_linear_ms() (tap.h). */
#define LINEAR_MS tap_linear_ms()

/* Issue 19: three 4,090-byte NodeName= lines (node[0,0,...x674] x 3 then
 * [9]) before the node's own record cost 113 s per step in slurmstepd;
 * hostlist matching is linear now: the whole file in under 10 ms. */
static void test_conf_linear(void)
{
    size_t cap = 16384, used = 0;
    char *text = malloc(cap);
    if (!ok(text != NULL, "memory for the gres.conf"))
        return;
    for (int line = 0; line < 3; line++) {
        size_t start = used;
        used += (size_t)snprintf(text + used, cap - used, "NodeName=node");
        for (int b = 0; b < 3; b++) {
            text[used++] = '[';
            for (int i = 0; i < 674; i++)
                used += (size_t)snprintf(text + used, cap - used, "%s0", i ? "," : "");
            text[used++] = ']';
        }
        used += (size_t)snprintf(text + used, cap - used, "[9] Name=gpu File=/dev/nvidia0");
        if (line == 0)
            ok(used - start == 4090, "each NodeName= line is 4,090 bytes");
        text[used++] = '\n';
    }
    snprintf(text + used, cap - used, "NodeName=node0000 Name=gpu File=/dev/nvidia[1-2]\n");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    check_conf(text, "node0000", NULL, "/dev/nvidia1,/dev/nvidia2",
               "three 4,090-byte NodeName= lines, then node0000's record");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    ok(ms < LINEAR_MS, "gres.conf with three 4,090-byte NodeName= lines read in %.3f ms (< %.0f ms)", ms,
       LINEAR_MS);
    tap_diag("issue 19 gres.conf (3 lines + node0000's): %.3f ms", ms);
    free(text);
}

static void test_conf(void)
{
    test_conf_linear();
    check_conf("# comment\nName=gpu File=/dev/nvidia[0-1] # two\nName=gpu File=/dev/nvidia3\n",
               NULL, NULL, "/dev/nvidia0,/dev/nvidia1,/dev/nvidia3", "two lines, comments");
    check_conf("NodeName=gpu[01-02] Name=gpu Type=a100 File=/dev/nvidia[0-1]\n"
               "NodeName=gpu03 Name=gpu File=/dev/nvidia7\n"
               "Name=mps Count=100 File=/dev/nvidia0\n"
               "NodeName=gpu02 Name=gpu Type=v100 File=/dev/nvidia[4-5] Cores=0-7\n",
               "gpu02", NULL, "/dev/nvidia0,/dev/nvidia1,/dev/nvidia4,/dev/nvidia5",
               "NodeName= filter, Type= and Cores= keep line order, mps ignored");
    check_conf("Name=gpu File=/dev/nvidia[0-3] Count=2\n", NULL, NULL,
               "/dev/nvidia0,/dev/nvidia1", "Count= truncates File= (as Slurm's _set_file_subset)");
    check_conf("Name=gpu \\\n  File=/dev/nvidia2\nName=gpu Count=2\n", NULL, NULL, "/dev/nvidia2",
               "line continuation; File-less lines get no index");
    check_conf("Name=gpu Type=1g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21\n"
               "Name=gpu Type=1g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap30\n",
               NULL, NULL, "/dev/nvidia0,/dev/nvidia0", "MultipleFiles= (MIG): one index per line");
    check_conf("Name=gpu File=/dev/nvidia[0-1\n", NULL, NULL, "ERR:missing ']'", "bad range");
    check_conf("Name=gpu Fileo\n", NULL, NULL, "ERR:not Key=Value", "junk token");
    check_conf("AutoDetect=magic\n", NULL, NULL, "ERR:AutoDetect=magic", "unknown AutoDetect");
    test_shared_conf();
    ng_gres_order o;
    char err[256] = "";
    ok(ng_gres_order_from_conf(&o, "/nonexistent/gres.conf", NULL, NULL, err, sizeof(err)) == -1 &&
           has(err, "/nonexistent/gres.conf"),
       "missing gres.conf names the file");
    /* A FIFO is refused at once, never read (read would block: no writer). */
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo-gres.conf", tmpdir);
    unlink(fifo);
    err[0] = '\0';
    int made = mkfifo(fifo, 0600) == 0;
    ok(made && ng_gres_order_from_conf(&o, fifo, NULL, NULL, err, sizeof(err)) == -1 &&
           has(err, "is not a regular file"),
       "a FIFO as gres.conf: refused without blocking (%s)", err);
    err[0] = '\0';
    ok(ng_gres_order_from_conf(&o, tmpdir, NULL, NULL, err, sizeof(err)) == -1 &&
           has(err, "is not a regular file"),
       "a directory as gres.conf: refused (%s)", err);
}

/* Without a devices cgroup that denies anything (this test process), the
 * cgroup is no evidence: 0, and the environment decides. Denials are
 * exercised for real by tests/slurm/t-slurm-cgroup.sh (task/cgroup). */
static void test_cgroup_evidence(ng_topology *t)
{
    char err[256] = "", p0[600], p1[600];
    int idx[NG_MAX_GPUS];
    unsigned n = 99;
    snprintf(p0, sizeof p0, "%s/dev/nvidia1", root_nv);
    snprintf(p1, sizeof p1, "%s/dev/nvidia3", root_nv);
    char *files[] = {p0, p1};
    ng_gres_order o = {2, files};
    ok(ngi_task_gpus_from_cgroup(t, &o, root_nv, idx, NG_MAX_GPUS, &n, err, sizeof err) == 0 &&
           n == 0, "devices cgroup: nothing denied -> no evidence (0)");
    snprintf(p1, sizeof p1, "%s/dev/nvidia-missing", root_nv);
    ok(ngi_task_gpus_from_cgroup(t, &o, root_nv, idx, NG_MAX_GPUS, &n, err, sizeof err) == 0,
       "devices cgroup: a missing device file -> cannot tell (0)");
    snprintf(p1, sizeof p1, "%s", p0);
    ok(ngi_task_gpus_from_cgroup(t, &o, root_nv, idx, NG_MAX_GPUS, &n, err, sizeof err) == 0,
       "devices cgroup: a file twice (MIG parent) -> cannot tell (0)");
    ok(ngi_task_gpus_from_cgroup(t, NULL, root_nv, idx, NG_MAX_GPUS, &n, err, sizeof err) == 0,
       "devices cgroup: no gres order -> 0");
}

static void test_nvidia(void)
{
    char err[512], bus[NG_BUSID_LEN], path[600];
    ng_topology *t = load(XE);
    if (!ok(t && ng_topology_gpu_count(t) == 4, "xe8640 topology has 4 GPUs"))
        return;
    /* device files */
    struct { const char *dev, *bus; } m[] = {
        {"/dev/nvidia0", "0000:cb:00.0"}, {"/dev/nvidia1", "0000:4e:00.0"},
        {"/dev/nvidia2", "0000:db:00.0"}, {"/dev/nvidia3", "0000:5f:00.0"},
    };
    test_cgroup_evidence(t);
    for (unsigned i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s%s", root_nv, m[i].dev);
        int rc = ngi_device_file_busid(root_nv, path, bus, err, sizeof(err));
        if (!ok(rc == 0 && !strcmp(bus, m[i].bus), "%s (195:%u) -> %s via Device Minor",
                m[i].dev, i, m[i].bus))
            tap_diag("rc %d bus '%s' err '%s'", rc, bus, err);
    }
    snprintf(path, sizeof(path), "%s/dev/nvidiactl", root_nv);
    ok(ngi_device_file_busid(root_nv, path, bus, err, sizeof(err)) == -1 &&
           has(err, "control device"), "/dev/nvidiactl is refused");
    snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/0000:4e:00.0/information", root_nv);
    ok(ngi_device_file_busid(root_nv, path, bus, err, sizeof(err)) == -1 &&
           has(err, "not a character device"), "a regular file is refused");
    snprintf(path, sizeof(path), "%s/dev/nvidia9", root_nv);
    ok(ngi_device_file_busid(root_nv, path, bus, err, sizeof(err)) == -1 && has(err, "nvidia9"),
       "a missing device file is named");
    snprintf(path, sizeof(path), "%s/dev/nvidia0", root_nv);
    ok(ngi_device_file_busid(root_empty, path, bus, err, sizeof(err)) == -1 &&
           has(err, "Device Minor 0"), "minor with no /proc entry: clear error");

    /* gres orders */
    ng_gres_order files, nvml;
    ok(!conf_order("Name=gpu File=/dev/nvidia[0-3]\n", NULL, root_nv, &files, err, sizeof(err)) &&
           !strcmp(order_str(&files, root_nv), "/dev/nvidia0,/dev/nvidia1,/dev/nvidia2,/dev/nvidia3"),
       "File= paths are taken under fsroot");
    ok(!conf_order("AutoDetect=nvml\n", NULL, root_nv, &nvml, err, sizeof(err)) &&
           !strcmp(order_str(&nvml, root_nv), "/dev/nvidia1,/dev/nvidia3,/dev/nvidia0,/dev/nvidia2"),
       "AutoDetect=nvml: NVML index order = PCI bus order (4e,5f,cb,db)");
    check_conf("AutoDetect=nvidia\n", NULL, root_nv,
               "/dev/nvidia0,/dev/nvidia1,/dev/nvidia2,/dev/nvidia3",
               "AutoDetect=nvidia: no Links, natural file order");
    check_conf("AutoDetect=nvml\nName=gpu File=/dev/nvidia[0-1]\nName=gpu File=/dev/nvidia9\n",
               NULL, root_nv, "/dev/nvidia1,/dev/nvidia0,/dev/nvidia9",
               "AutoDetect + File=: matched GPUs in bus order, config-only last");
    check_conf("AutoDetect=off\nNodeName=n1 AutoDetect=nvml\nName=gpu File=/dev/nvidia[0-1]\n",
               "n2", root_nv, "/dev/nvidia0,/dev/nvidia1", "per-node AutoDetect only for that node");
    check_conf("Name=gpu File=/dev/nvidia10\nName=gpu File=/dev/nvidia2\nAutoDetect=nvml\n", NULL,
               root_nv, "/dev/nvidia2,/dev/nvidia10", "natural sort of config-only files");

    ng_gpu_env e;
#define ENV(...) (memset(&e, 0, sizeof(e)), (ng_gpu_env){__VA_ARGS__})
    e = ENV(.slurm_step_gpus = "0", .cuda_visible_devices = "0");
    check_env(t, &files, root_nv, &e, "cb", "SLURM_STEP_GPUS=0 via File= order (/dev/nvidia0)");
    check_env(t, &nvml, root_nv, &e, "4e", "SLURM_STEP_GPUS=0 via AutoDetect=nvml order");
    e = ENV(.slurm_step_gpus = "3,1", .cuda_visible_devices = "0,1");
    check_env(t, &files, root_nv, &e, "4e,5f", "renumbered CUDA_VISIBLE_DEVICES (ConstrainDevices): "
              "global SLURM_STEP_GPUS=3,1 wins");
    e = ENV(.slurm_job_gpus = "2", .cuda_visible_devices = "0");
    check_env(t, &files, root_nv, &e, "4e", "SLURM_JOB_GPUS is never read: CUDA_VISIBLE_DEVICES "
              "decides");
    e = ENV(.slurm_job_gpus = "0,1");
    check_env(t, &files, root_nv, &e, "", "SLURM_JOB_GPUS alone (a CPU-only step of a GPU job) "
              "-> no GPU");
    e = ENV(.slurm_step_gpus = "2", .cuda_visible_devices = "2");
    check_env(t, NULL, root_nv, &e, "cb", "no gres order: global index = position in bus order");
    e = ENV(.cuda_visible_devices = "1,0", .rocr_visible_devices = "1,0", .ze_affinity_mask = "1,0");
    check_env(t, NULL, root_nv, &e, "4e,5f", "CUDA_VISIBLE_DEVICES alone: NVIDIA positions");
    e = ENV(.cuda_visible_devices = "GPU-dbdbdbdb-0000-1111-2222-333344445555", .slurm_step_gpus = "0");
    check_env(t, &files, root_nv, &e, "db", "GPU- UUID from /proc wins over gres indices");
    e = ENV(.cuda_visible_devices = "GPU-5F5F,GPU-4e4e4e4e-0000-1111-2222-333344445555");
    check_env(t, NULL, root_nv, &e, "4e,5f", "UUID prefix and case as CUDA accepts");
    e = ENV(.cuda_visible_devices = "MIG-GPU-cbcbcbcb-0000-1111-2222-333344445555/1/0,"
                                    "MIG-GPU-cbcbcbcb-0000-1111-2222-333344445555/2/0",
            .slurm_step_gpus = "5,6");
    check_env(t, &files, root_nv, &e, "cb", "old MIG UUIDs resolve from /proc alone; one GPU");
    e = ENV(.cuda_visible_devices = "", .slurm_step_gpus = NULL);
    check_env(t, NULL, root_nv, &e, "", "CUDA_VISIBLE_DEVICES='' -> no GPU");
    e = ENV(.cuda_visible_devices = "-1");
    check_env(t, NULL, root_nv, &e, "", "CUDA_VISIBLE_DEVICES=-1 -> no GPU");
    e = ENV(.slurm_step_gpus = "NoDevFiles", .cuda_visible_devices = "NoDevFiles");
    check_env(t, &files, root_nv, &e, "", "NoDevFiles (no File= in gres.conf) -> no evidence");
    e = ENV(.cuda_visible_devices = NULL);
    check_env(t, &files, root_nv, &e, "", "nothing set -> no GPU");

    /* A step with no GPU on this node (srun --gres=none in a GPU job): its
     * tasks have none, whatever their variables say; with GPUs the task
     * rule answers. */
    {
        int idx[NG_MAX_GPUS];
        unsigned n = 99;
        char err[256] = "";
        e = ENV(.slurm_step_gpus = "0", .slurm_job_gpus = "0,1", .cuda_visible_devices = "0");
        ok(ng_step_task_gpus(t, &files, 0, &e, root_nv, idx, NG_MAX_GPUS, &n, err, sizeof err) == 0 &&
               n == 0, "ng_step_task_gpus: a step without GPUs -> no GPU for its tasks");
        n = 99;
        ok(ng_step_task_gpus(t, &files, 2, &e, root_nv, idx, NG_MAX_GPUS, &n, err, sizeof err) == 0 &&
               n == 1 && !strcmp(ng_topology_gpu(t, (unsigned)idx[0])->pci_bus_id, "0000:cb:00.0"),
           "ng_step_task_gpus: a step with GPUs -> the task rule (SLURM_STEP_GPUS=0 via File=)");
        e = ENV(.slurm_step_gpus = "7");
        ok(ng_step_task_gpus(t, &files, 0, &e, root_nv, idx, NG_MAX_GPUS, &n, err, sizeof err) == 0 &&
               n == 0, "ng_step_task_gpus: no step GPU -> nothing read, no error");
    }

    /* errors */
    e = ENV(.slurm_step_gpus = "7", .cuda_visible_devices = "0");
    check_env(t, &files, root_nv, &e, "ERR:SLURM_STEP_GPUS=7: unknown GPU index 7",
              "index beyond the gres list");
    e = ENV(.slurm_step_gpus = "abc");
    check_env(t, &files, root_nv, &e, "ERR:SLURM_STEP_GPUS=abc: 'abc' is not a GPU index",
              "malformed SLURM_STEP_GPUS");
    e = ENV(.slurm_step_gpus = "1,,2");
    check_env(t, &files, root_nv, &e, "ERR:SLURM_STEP_GPUS=1,,2: empty entry", "empty entry");
    e = ENV(.slurm_step_gpus = "300");
    check_env(t, &files, root_nv, &e, "ERR:SLURM_STEP_GPUS=300", "index >= NG_MAX_GPUS");
    e = ENV(.cuda_visible_devices = "4");
    check_env(t, NULL, root_nv, &e, "ERR:CUDA_VISIBLE_DEVICES=4: unknown GPU index 4",
              "unknown CUDA index");
    e = ENV(.cuda_visible_devices = "GPU-12zz");
    check_env(t, NULL, root_nv, &e, "ERR:CUDA_VISIBLE_DEVICES: malformed UUID 'GPU-12zz'",
              "bad UUID charset");
    e = ENV(.cuda_visible_devices = "GPU-cbcbcbcb-0000-1111-2222-333344445555,1");
    check_env(t, NULL, root_nv, &e, "ERR:mixes an index with UUIDs", "UUIDs mixed with indices");
    e = ENV(.cuda_visible_devices = "MIG-GPU-cbcbcbcb/x/0");
    check_env(t, NULL, root_nv, &e, "ERR:malformed MIG UUID", "bad old-form MIG UUID");
    e = ENV(.ze_affinity_mask = "0");
    check_env(t, NULL, root_nv, &e, "ERR:ZE_AFFINITY_MASK=0: the topology has no intel GPU",
              "vendor variable without such GPUs");
    char big[2000];
    memset(big, '1', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    e = ENV(.cuda_visible_devices = big);
    check_env(t, NULL, root_nv, &e, "ERR:CUDA_VISIBLE_DEVICES is longer than", "oversized value");
    void *real = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!real) {
        e = ENV(.cuda_visible_devices = "MIG-0c0c0c0c-aaaa-5bbb-8ccc-cbcb00000001");
        check_env(t, NULL, root_nv, &e, "ERR:NVML (libnvidia-ml.so.1) is not available",
                  "new MIG UUID without NVML: clear error");
    } else {
        ok(1, "# SKIP a real libnvidia-ml.so.1 is installed");
        dlclose(real);
    }
    ng_gres_order_free(&files);
    ng_gres_order_free(&nvml);
    ng_topology_free(t);
}

static void test_amd(void)
{
    char err[512], bus[NG_BUSID_LEN], path[600];
    ng_topology *t = load(CORONA);
    if (!ok(t && ng_topology_gpu_count(t) == 8, "corona topology has 8 GPUs"))
        return;
    snprintf(path, sizeof(path), "%s/dev/dri/renderD130", root_amd);
    int rc = ngi_device_file_busid(root_amd, path, bus, err, sizeof(err));
    if (!ok(rc == 0 && !strcmp(bus, "0000:03:00.0"), "renderD130 (226:130) -> 0000:03:00.0 via sysfs"))
        tap_diag("rc %d bus %s err %s", rc, bus, err);
    snprintf(path, sizeof(path), "%s/dev/dri/card7", root_amd);
    rc = ngi_device_file_busid(root_amd, path, bus, err, sizeof(err));
    ok(rc == 0 && !strcmp(bus, "0000:a3:00.0"), "card7 (226:7) -> 0000:a3:00.0");
    snprintf(path, sizeof(path), "%s/dev/dri/card7", root_amd);
    ok(ngi_device_file_busid(root_empty, path, bus, err, sizeof(err)) == -1 &&
           has(err, "226:7"), "DRM device without sysfs entry: clear error");

    ng_gres_order rsmi, files;
    ok(!conf_order("AutoDetect=rsmi\n", NULL, root_amd, &rsmi, err, sizeof(err)) &&
           !strcmp(order_str(&rsmi, root_amd),
                   "/dev/dri/renderD128,/dev/dri/renderD129,/dev/dri/renderD130,/dev/dri/renderD131,"
                   "/dev/dri/renderD132,/dev/dri/renderD133,/dev/dri/renderD134,/dev/dri/renderD135"),
       "AutoDetect=rsmi: render minor (rsmi index) order");
    ok(!conf_order("Name=gpu File=/dev/dri/renderD[130,131,129,128]\n", NULL, root_amd, &files, err,
                   sizeof(err)) && files.count == 4, "File= list of render nodes");
    ng_gpu_env e;
    e = ENV(.slurm_step_gpus = "0", .rocr_visible_devices = "0", .gpu_device_ordinal = "0");
    check_env(t, &rsmi, root_amd, &e, "63", "SLURM_STEP_GPUS=0 with rsmi order -> rsmi0 (63)");
    e = ENV(.slurm_step_gpus = "0,1", .rocr_visible_devices = "0,1");
    check_env(t, &files, root_amd, &e, "03,27", "SLURM_STEP_GPUS=0,1 through File= order");
    e = ENV(.rocr_visible_devices = "GPU-a2c5d1e2f3040506,GPU-7c5d1e2f3040506");
    check_env(t, NULL, root_amd, &e, "03,a3", "ROCR_VISIBLE_DEVICES GPU-<unique_id>");
    e = ENV(.rocr_visible_devices = "2", .cuda_visible_devices = "2");
    check_env(t, NULL, root_amd, &e, "43", "ROCR_VISIBLE_DEVICES index: AMD positions (bus order)");
    e = ENV(.gpu_device_ordinal = "1");
    check_env(t, NULL, root_amd, &e, "27", "GPU_DEVICE_ORDINAL index");
    e = ENV(.rocr_visible_devices = "GPU-ffffffffffffffff");
    check_env(t, NULL, root_amd, &e, "ERR:no AMD GPU with unique_id", "unknown AMD UUID");
    e = ENV(.rocr_visible_devices = "GPU-0123456789abcdef0");
    check_env(t, NULL, root_amd, &e, "ERR:malformed AMD UUID", "AMD UUID too long");
    e = ENV(.ze_affinity_mask = "0.1", .rocr_visible_devices = "x");
    check_env(t, NULL, root_amd, &e, "ERR:ROCR_VISIBLE_DEVICES=x: 'x' is not a GPU index",
              "malformed ROCR_VISIBLE_DEVICES names variable and value");
    ng_gres_order_free(&rsmi);
    ng_gres_order_free(&files);
    ng_topology_free(t);
}

/* Intel: ZE_AFFINITY_MASK needs Intel GPUs; none of our real topologies
 * has one, so only the parser is checked here, on the AMD node. */
static void test_ze(void)
{
    ng_topology *t = load(CORONA);
    if (!t)
        return;
    ng_gpu_env e;
    e = ENV(.ze_affinity_mask = "0.1,1");
    check_env(t, NULL, root_amd, &e, "ERR:ZE_AFFINITY_MASK=0.1,1: the topology has no intel GPU",
              "ZE_AFFINITY_MASK N.M parses; no Intel GPU here");
    e = ENV(.ze_affinity_mask = "0.x");
    check_env(t, NULL, root_amd, &e, "ERR:ZE_AFFINITY_MASK=0.x", "ZE_AFFINITY_MASK 0.x refused");
    ng_topology_free(t);
}

/* Runs in the re-executed child, with the fake NVML on LD_LIBRARY_PATH. */
static void test_nvml(void)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    int *inits = h ? dlsym(h, "fake_nvml_inits") : NULL;
    int *shut = h ? dlsym(h, "fake_nvml_shutdowns") : NULL;
    if (!ok(inits && shut, "the fake libnvidia-ml.so.1 is the one dlopen() finds"))
        return;
    ng_topology *t = load(XE);
    if (!t)
        return;
    ng_gpu_env e;
    e = ENV(.cuda_visible_devices = "MIG-0c0c0c0c-aaaa-5bbb-8ccc-cbcb00000001", .slurm_step_gpus = "4");
    check_env(t, NULL, root_nv, &e, "cb", "new MIG UUID via NVML (parent of the MIG handle)");
    e = ENV(.cuda_visible_devices = "MIG-0c0c0c0c-aaaa-5bbb-8ccc-cbcb00000001,"
                                    "MIG-0c0c0c0c-aaaa-5bbb-8ccc-cbcb00000002,"
                                    "MIG-0d0d0d0d-aaaa-5bbb-8ccc-dbdb00000001");
    check_env(t, NULL, root_nv, &e, "cb,db", "three MIG slices on two GPUs -> 2 GPUs");
    e = ENV(.cuda_visible_devices = "GPU-5f5f5f5f-0000-1111-2222-333344445555");
    check_env(t, NULL, root_empty, &e, "5f", "GPU UUID /proc lacks -> NVML");
    e = ENV(.cuda_visible_devices = "MIG-99999999-aaaa-5bbb-8ccc-000000000000");
    check_env(t, NULL, root_nv, &e, "ERR:no GPU with UUID 'MIG-99999999", "unknown MIG UUID");
    char err[256], bus[NG_BUSID_LEN], path[600];
    snprintf(path, sizeof(path), "%s/dev/nvidia2", root_nv);
    ok(ngi_device_file_busid(root_empty, path, bus, err, sizeof(err)) == -1,
       "minor lookup never asks NVML for a fake fsroot");
    ok(*inits > 0 && *inits == *shut, "nvmlInit_v2/nvmlShutdown balanced (%d/%d)", *inits, *shut);
    ng_topology_free(t);
    dlclose(h);
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    return rc == 0 ? 0 : -1;
}

static void cleanup(void)
{
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (tmpdir[0] == '/' && strstr(tmpdir, "ng-gpumap."))
        run(cmd);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *child = getenv("NG_GPUMAP_CHILD");
    if (child) {   /* second half: NVML tests, continuing the TAP count */
        snprintf(tmpdir, sizeof(tmpdir), "%s", child);
        tap_n = atoi(getenv("NG_TAP_N") ? getenv("NG_TAP_N") : "0");
        tap_failed = atoi(getenv("NG_TAP_FAILED") ? getenv("NG_TAP_FAILED") : "0");
        snprintf(root_nv, sizeof(root_nv), "%s/nv", tmpdir);
        snprintf(root_empty, sizeof(root_empty), "%s/empty", tmpdir);
        test_nvml();
        cleanup();
        return tap_done();
    }
    test_files();
    char tmpl[] = "/tmp/ng-gpumap.XXXXXX";
    if (!mkdtemp(tmpl))
        return ok(0, "mkdtemp"), tap_done();
    snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
    test_conf();
    snprintf(root_nv, sizeof(root_nv), "%s/nv", tmpdir);
    snprintf(root_amd, sizeof(root_amd), "%s/amd", tmpdir);
    snprintf(root_empty, sizeof(root_empty), "%s/empty", tmpdir);
    mkdir(root_empty, 0755);
    char cmd[1200];
    if (geteuid() != 0) {
        ok(1, "# SKIP fake device trees need root (mknod)");
        cleanup();
        return tap_done();
    }
    snprintf(cmd, sizeof(cmd), "sh tests/fakefs/mkfake.sh '%s' nvidia-xe8640 && "
             "sh tests/fakefs/mkfake.sh '%s' amd-corona", root_nv, root_amd);
    if (!ok(run(cmd) == 0, "fake /dev,/proc,/sys trees built by tests/fakefs/mkfake.sh")) {
        cleanup();
        return tap_done();
    }
    test_nvidia();
    test_amd();
    test_ze();
    /* Build the fake NVML and re-exec ourselves so dlopen() finds it. */
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/lib' && ${CC:-cc} -shared -fPIC -o "
             "'%s/lib/libnvidia-ml.so.1' tests/fakefs/fake_nvml.c", tmpdir, tmpdir);
    if (run(cmd) != 0) {
        ok(1, "# SKIP no C compiler for the fake NVML");
        cleanup();
        return tap_done();
    }
    char lib[400], n[16], f[16];
    snprintf(lib, sizeof(lib), "%s/lib", tmpdir);
    snprintf(n, sizeof(n), "%d", tap_n);
    snprintf(f, sizeof(f), "%d", tap_failed);
    setenv("LD_LIBRARY_PATH", lib, 1);
    setenv("NG_GPUMAP_CHILD", tmpdir, 1);
    setenv("NG_TAP_N", n, 1);
    setenv("NG_TAP_FAILED", f, 1);
    fflush(stdout);
    execv("/proc/self/exe", argv);
    ok(0, "re-exec with the fake NVML");
    cleanup();
    return tap_done();
}
