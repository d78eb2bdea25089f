/* The plugin's per-step planning (spank/step.c), with no Slurm call: the
 * step's inputs (ng_step_input) and plugstack arguments (ng_spank_conf,
 * parsed by spank/config.c from "topology=... fsroot=... gres_conf=...")
 * filled here, as slurm_spank_user_init fills them.
 *
 * Topology: xe8640 (2 x 56 cores, SMT2; core i = PUs i and i+112; GPUs in
 * bus order 0 = 4e on node 3, 1 = 5f on node 1, 2 = cb on node 7, 3 = db
 * on node 5). fsroot: a fake NVIDIA driver tree as tests/fakefs/mkfake.sh's
 * nvidia-xe8640 profile makes it (/dev/nvidiaN char 195:N, minors not in
 * bus order: 4e = 1, 5f = 3, cb = 0, db = 2, and the driver's information
 * files), and gres.conf files written per case.
 *
 * Checked: abstract Slurm core lists mapped to PUs (and the message for a
 * core beyond the topology); the step's CPUs and where they came from; the
 * step's GPUs in gres order (File= reversed); each task's predicted GPUs
 * (SLURM_STEP_GPUS shared out by local task id) and the plan made with
 * them; the failure lines (unknown GPU index, a device file that is not
 * there, a topology that does not load); gres.conf naming other nodes only
 * or unparsable -> gres_warning and bus order; re-planning with the GPUs
 * the tasks really have. The device files need mknod (root): without it
 * the GPU cases are skipped. Runs from the repository root. */
#include "tap.h"

#if __has_include(<slurm/spank.h>)
#include "../../../spank/config.c"
#include "../../../spank/exchange.c"
#include "../../../spank/step.c"

#include <ftw.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define XE "tests/topologies/xe8640-4xh100-spr8480-snc4.xml"
#define DGX2 "tests/topologies/dgx2-16xv100.xml"

static char root[64], xe_path[PATH_MAX], gres_path[128];

/* ---- the fake node ---- */

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

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* One GPU as the NVIDIA driver shows it: /dev/nvidiaN and its
 * information file (nv-procfs.c's fields, as mkfake.sh writes them). */
static int nv_gpu(unsigned minor, const char *bus)
{
    char dir[256], path[320], text[512];
    snprintf(dir, sizeof dir, "%s/proc/driver/nvidia/gpus/%s", root, bus);
    snprintf(path, sizeof path, "%s/information", dir);
    snprintf(text, sizeof text, "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t %u\n"
             "GPU UUID: \t GPU-%.2s%.2s%.2s%.2s-0000-1111-2222-333344445555\nVideo BIOS: \t "
             "96.00.74.00.0d\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t "
             "0xfffffffffffff\nBus Location: \t %s\nDevice Minor: \t %u\nGPU Excluded:\t No\n",
             500 + minor, bus + 5, bus + 5, bus + 5, bus + 5, bus, minor);
    if (mkdirs(dir) < 0 || write_file(path, text) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/dev/nvidia%u", root, minor);
    return mknod(path, S_IFCHR | 0666, makedev(195, minor));
}

static int fake_node(void)
{
    char dev[128];
    snprintf(dev, sizeof dev, "%s/dev", root);
    if (mkdirs(dev) < 0)
        return -1;
    return nv_gpu(1, "0000:4e:00.0") == 0 && nv_gpu(3, "0000:5f:00.0") == 0 &&
           nv_gpu(0, "0000:cb:00.0") == 0 && nv_gpu(2, "0000:db:00.0") == 0 ? 0 : -1;
}

static int rm_entry(const char *p, const struct stat *s, int flag, struct FTW *f)
{
    (void)s; (void)flag; (void)f;
    return remove(p);
}

/* ---- a step ---- */

/* plugstack.conf arguments: topology=, fsroot=, gres_conf=. */
static int make_conf(ng_spank_conf *conf, const char *topology, const char *gres_text)
{
    char a[3][PATH_MAX + 16];
    char *argv[3] = {a[0], a[1], a[2]};
    snprintf(a[0], sizeof a[0], "topology=%s", topology);
    snprintf(a[1], sizeof a[1], "fsroot=%s", root);
    snprintf(a[2], sizeof a[2], "gres_conf=%s", gres_path);
    unlink(gres_path);
    if (gres_text && write_file(gres_path, gres_text) < 0)
        return -1;
    int rc = ng_spank_conf_parse(conf, 3, argv);
    if (rc < 0)
        tap_diag("conf: %s", conf->disabled_why);
    return rc;
}

/* ng_step_plan as user_init calls it; the policy as node_options sets it. */
static int plan_step(ng_step *step, const char *gres_text, unsigned ntasks, unsigned cpt,
                     const char *cores, const char *gpus)
{
    ng_spank_conf conf;
    memset(step, 0, sizeof *step);
    if (make_conf(&conf, xe_path, gres_text) < 0)
        return -2;
    ng_policy_parse("local", &step->policy, NULL, 0);
    ng_step_input in = {.ntasks = ntasks, .cpus_per_task = cpt, .step_cores = cores,
                        .step_gpus = gpus, .node_name = "ng1"};
    return ng_step_plan(step, &conf, &in);
}

static const char *fmt(hwloc_const_bitmap_t s)
{
    static char buf[8][512];
    static int slot;
    char *b = buf[slot++ & 7];
    if (!s)
        return "(null)";
    ng_list_format(s, b, 512);
    return b;
}

/* "a,b" of n ints. */
static const char *ints(const int *v, unsigned n)
{
    static char buf[4][256];
    static int slot;
    char *b = buf[slot++ & 3];
    size_t o = 0;
    b[0] = '\0';
    for (unsigned i = 0; i < n; i++)
        o += (size_t)snprintf(b + o, 256 - o, "%s%d", i ? "," : "", v[i]);
    return b;
}

/* Predicted GPUs per task: "1|3|0|2" ("-" for none). */
static const char *predicted(const ng_step *s)
{
    static char buf[512];
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned t = 0; s->gpu_prediction && t < s->ntasks; t++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", t ? "|" : "",
                              s->pred_count[t] ? ints(s->pred_gpus + s->pred_offset[t], s->pred_count[t])
                                               : "-");
    return buf;
}

static const char *plan_cpus(const ng_plan *pl)
{
    static char buf[1024];
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned t = 0; pl && t < ng_plan_task_count(pl); t++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", t ? "|" : "",
                              fmt(ng_plan_task(pl, t)->cpus));
    return buf;
}

/* ---- cases ---- */

static void test_cores(void)
{
    ng_topology_options o = {.xml_path = XE};
    ng_topology *xe = NULL, *dgx = NULL;
    char err[256];
    if (!ok(ng_topology_load(&xe, &o, err, sizeof err) == 0, "xe8640 loads"))
        return;
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    int rc = ng_step_cores_to_cpus(xe, "0-3,8", cpus, err, sizeof err);
    ok(rc == 0 && strcmp(fmt(cpus), "0-3,8,112-115,120") == 0,
       "Slurm cores 0-3,8 -> both PUs of each: 0-3,8,112-115,120 (got %s)", fmt(cpus));
    rc = ng_step_cores_to_cpus(xe, "56,111", cpus, err, sizeof err);
    ok(rc == 0 && strcmp(fmt(cpus), "56,111,168,223") == 0, "cores 56,111 -> 56,111,168,223 (got %s)", fmt(cpus));
    err[0] = '\0';
    rc = ng_step_cores_to_cpus(xe, "0,112", cpus, err, sizeof err);
    ok(rc == -1 && strcmp(err, "Slurm core 112 does not exist in the topology (112 cores): node config and "
                   "hardware differ") == 0, "core 112 of 112: '%s'", err);
    err[0] = '\0';
    rc = ng_step_cores_to_cpus(xe, "3-1", cpus, err, sizeof err);
    ok(rc == -1 && strcmp(err, "'3-1': range 3-1 is reversed") == 0, "a reversed range: '%s'", err);
    ng_topology_free(xe);
    /* dgx2 (trimmed): 4 cores, PUs 0, 1, 24, 25: abstract core i is the
     * i-th core in hwloc order, not PU number i. */
    o.xml_path = DGX2;
    if (ng_topology_load(&dgx, &o, err, sizeof err) == 0) {
        rc = ng_step_cores_to_cpus(dgx, "2-3", cpus, err, sizeof err);
        ok(rc == 0 && strcmp(fmt(cpus), "24-25") == 0, "dgx2 cores 2-3 -> PUs 24-25 (got %s)", fmt(cpus));
        rc = ng_step_cores_to_cpus(dgx, "4", cpus, err, sizeof err);
        ok(rc == -1 && strcmp(err, "Slurm core 4 does not exist in the topology (4 cores): node config and "
                       "hardware differ") == 0, "dgx2 core 4: '%s'", err);
    }
    ng_topology_free(dgx);
    hwloc_bitmap_free(cpus);
}

static void test_cpu_only(void)
{
    ng_step s;
    int rc = plan_step(&s, NULL, 2, 0, "0-13", NULL);
    ok(rc == 0 && !s.failed && s.plan_only && strcmp(s.cpu_source, "step cores 0-13") == 0 &&
       strcmp(fmt(s.cpus), "0-13,112-125") == 0,
       "2 tasks on Slurm cores 0-13: the step's CPUs are node 0's PUs, from the core list "
       "(%s, '%s')", fmt(s.cpus), s.cpu_source);
    ok(rc == 0 && strcmp(plan_cpus(s.plan), "0-6,112-118|7-13,119-125") == 0 &&
       !s.gpu_prediction && s.n_step_gpus == 0 && !s.exchange && !s.have_order &&
       s.gres_warning[0] == '\0',
       "... cut 7|7 (%s); no GPUs: no prediction, no exchange, gres.conf not read",
       plan_cpus(s.plan));
    ng_step_free(&s);

    rc = plan_step(&s, NULL, 1, 0, NULL, NULL);
    ok(rc == 0 && strcmp(s.cpu_source, "whole topology") == 0 && strcmp(fmt(s.cpus), "0-223") == 0 &&
       s.ntasks == 1 && !s.cpu_warning[0], "no core list (plan only): the whole topology, 0-223");
    ng_step_free(&s);

    /* Slurm's cores beyond the topology (node config and hardware differ):
     * the fallback plans, and the admin and the user are told why. */
    rc = plan_step(&s, NULL, 2, 0, "0-13,300", NULL);
    ok(rc == 0 && strcmp(s.cpu_source, "whole topology") == 0 &&
       strcmp(s.cpu_warning, "Slurm's core list 0-13,300 does not fit the topology (Slurm core 300 "
              "does not exist in the topology (112 cores): node config and hardware differ); "
              "the step's CPUs are taken from whole topology instead") == 0,
       "cores 0-13,300 on 112 cores: planned from the fallback, said in cpu_warning ('%s')",
       s.cpu_warning);
    ng_step_free(&s);

    ng_spank_conf conf;
    memset(&s, 0, sizeof s);
    ng_step_input in = {.ntasks = 1, .node_name = "ng1"};
    char missing[PATH_MAX + 16];
    snprintf(missing, sizeof missing, "%s/no-such-topology.xml", root);
    rc = make_conf(&conf, missing, NULL) == 0 ? ng_step_plan(&s, &conf, &in) : -2;
    ok(rc == -1 && s.failed && s.admin_failure &&
       strncmp(s.failure, "cannot load the topology: ", 26) == 0 && strstr(s.failure, missing),
       "a topology= file that is not there: an admin failure naming it ('%s')", s.failure);
    ng_step_free(&s);
}

static const char *reversed = "NodeName=ng1 Name=gpu File=/dev/nvidia3\n"
                              "NodeName=ng1 Name=gpu File=/dev/nvidia2\n"
                              "NodeName=ng1 Name=gpu File=/dev/nvidia1\n"
                              "NodeName=ng1 Name=gpu File=/dev/nvidia0\n";

static void test_gpus(void)
{
    ng_step s;
    /* gres index 0 = nvidia3 = 5f (GPU 1), 1 = nvidia2 = db (3),
     * 2 = nvidia1 = 4e (0), 3 = nvidia0 = cb (2). */
    int rc = plan_step(&s, reversed, 4, 28, "0-111", "0,1,2,3");
    ok(rc == 0 && s.have_order && s.order.count == 4 && strcmp(ints(s.step_gpus, s.n_step_gpus), "1,3,0,2") == 0,
       "File= reversed: the step's GPUs in gres order are 1,3,0,2 (got %s)",
       ints(s.step_gpus, s.n_step_gpus));
    ok(rc == 0 && s.gpu_prediction && strcmp(predicted(&s), "1|3|0|2") == 0 && s.exchange != NULL,
       "4 tasks: one GPU each by local id (1|3|0|2, got %s), and an exchange to check it", predicted(&s));
    ok(rc == 0 && strcmp(plan_cpus(s.plan), "14-27,126-139|70-83,182-195|42-55,154-167|"
                                           "98-111,210-223") == 0,
       "... -c 28: each task on its predicted GPU's node 1, 5, 3, 7 (%s)", plan_cpus(s.plan));
    ng_plan *re = NULL;
    char err[256] = "";
    /* The tasks really got 0, 1, 2, 3. */
    unsigned count[4] = {1, 1, 1, 1}, offset[4] = {0, 1, 2, 3};
    int real[4] = {0, 1, 2, 3};
    int rr = rc == 0 ? ng_step_replan(&s, count, offset, real, &re, err, sizeof err) : -2;
    ok(rr == 0 && strcmp(plan_cpus(re), "42-55,154-167|14-27,126-139|98-111,210-223|70-83,182-195") == 0,
       "replan with the GPUs the tasks have (0,1,2,3): same -c, nodes 3, 1, 7, 5 (%s)", plan_cpus(re));
    ng_plan_free(re);
    re = NULL;
    /* Task 0 holds GPUs 0 and 1 (nodes 3 and 1), task 1 none, tasks 2-3
     * GPU 3 (node 5): 14 cores each, so one of GPU 3's tasks stays on
     * node 5 and the other takes node 4 beside it. */
    unsigned c2[4] = {2, 0, 1, 1}, o2[4] = {0, 2, 2, 3};
    int g2[4] = {0, 1, 3, 3};
    rr = rc == 0 ? ng_step_replan(&s, c2, o2, g2, &re, err, sizeof err) : -2;
    ok(rr == 0 && ng_plan_task(re, 0)->n_gpus == 2 && ng_plan_task(re, 1)->n_gpus == 0 &&
       strcmp(plan_cpus(re), "14-27,126-139|0-13,112-125|56-69,168-181|70-83,182-195") == 0,
       "replan with GPUs 0+1, none, 3, 3: %s", plan_cpus(re));
    ng_plan_free(re);
    re = NULL;
    int bad[4] = {9, 1, 2, 3};
    err[0] = '\0';
    rr = rc == 0 ? ng_step_replan(&s, count, offset, bad, &re, err, sizeof err) : -2;
    ok(rr == -1 && !re &&
       strcmp(err, "task 0: GPU index 9 is not a GPU of this topology (it has 4)") == 0,
       "replan with a GPU index the node lacks: '%s'", err);
    ng_step_free(&s);

    rc = plan_step(&s, reversed, 2, 0, "0-111", "1,3");
    ok(rc == 0 && strcmp(ints(s.step_gpus, s.n_step_gpus), "3,2") == 0 && strcmp(predicted(&s), "3|2") == 0,
       "SLURM_STEP_GPUS=1,3 with 2 tasks: GPUs 3 (db) and 2 (cb), one each (got %s)", predicted(&s));
    ng_step_free(&s);

    rc = plan_step(&s, reversed, 2, 0, "0-111", "0,1,2,3");
    ok(rc == 0 && strcmp(predicted(&s), "1,3|0,2") == 0 && s.pred_offset[1] == 2,
       "4 GPUs for 2 tasks: two each, in gres order (got %s)", predicted(&s));
    ng_step_free(&s);

    rc = plan_step(&s, reversed, 3, 0, "0-111", "2,0");
    ok(rc == 0 && strcmp(predicted(&s), "0|0|1") == 0,
       "2 GPUs for 3 tasks: tasks 0 and 1 share the first (got %s)", predicted(&s));
    ng_step_free(&s);

    rc = plan_step(&s, reversed, 1, 0, "0-111", "2");
    ok(rc == 0 && strcmp(predicted(&s), "0") == 0 && s.exchange == NULL,
       "one task: its GPU predicted, no exchange to wait for (got %s)", predicted(&s));
    ng_step_free(&s);
}

static void test_gpu_failures(void)
{
    ng_step s;
    int rc = plan_step(&s, reversed, 2, 0, "0-111", "0,7");
    ok(rc == -1 && s.failed && !s.admin_failure &&
       strcmp(s.failure, "cannot identify the step's GPU 7: SLURM_STEP_GPUS=7: unknown GPU index 7 "
                         "(the node's gres list has 4)") == 0,
       "SLURM_STEP_GPUS names gres index 7 of 4: '%s'", s.failure);
    ng_step_free(&s);

    char want[1024];
    rc = plan_step(&s, "NodeName=ng1 Name=gpu File=/dev/nvidia[0-1]\nNodeName=ng1 Name=gpu File=/dev/nvidia5\n",
                   2, 0, "0-111", "2");
    snprintf(want, sizeof want, "cannot identify the step's GPU 2: SLURM_STEP_GPUS=2: GPU index 2: "
             "%s/dev/nvidia5: No such file or directory", root);
    ok(rc == -1 && s.failed && strcmp(s.failure, want) == 0,
       "gres index 2 is a device file that is not there: '%s'", s.failure);
    ng_step_free(&s);

    /* A shared gres.conf whose records are all for other nodes: warned,
     * and the step's indices read as positions in bus order. */
    rc = plan_step(&s, "NodeName=other[1-2] Name=gpu File=/dev/nvidia[0-3]\n", 2, 0, "0-111", "0,3");
    snprintf(want, sizeof want, "gres.conf '%s': none of its 1 Name=gpu records names node 'ng1' "
             "(NodeName=); GPU indices are read in PCI bus order instead", gres_path);
    ok(rc == 0 && !s.failed && !s.have_order && strcmp(s.gres_warning, want) == 0,
       "gres.conf for other nodes only: gres_warning '%s'", s.gres_warning);
    ok(rc == 0 && strcmp(ints(s.step_gpus, s.n_step_gpus), "0,3") == 0 && strcmp(predicted(&s), "0|3") == 0,
       "... and indices 0,3 are the 1st and 4th GPU in bus order (got %s)", predicted(&s));
    ng_step_free(&s);

    rc = plan_step(&s, "Name=gpu File=/dev/nvidia[0-1\n", 1, 0, "0-111", "1");
    ok(rc == 0 && !s.have_order && strstr(s.gres_warning, "missing ']'") &&
       strstr(s.gres_warning, "; GPU indices are read in PCI bus order instead") &&
       strcmp(predicted(&s), "1") == 0,
       "an unparsable gres.conf: warned ('%s'), bus order", s.gres_warning);
    ng_step_free(&s);

    /* No gres.conf at all (AutoDetect-only sites): quiet, bus order. */
    rc = plan_step(&s, NULL, 1, 0, "0-111", "3");
    ok(rc == 0 && !s.have_order && s.gres_warning[0] == '\0' && strcmp(predicted(&s), "3") == 0,
       "no gres.conf: no warning, index 3 = 4th GPU in bus order (got %s)", predicted(&s));
    ng_step_free(&s);

    /* An empty SLURM_STEP_GPUS is no GPU: gres.conf not even read. */
    rc = plan_step(&s, "Name=gpu File=/dev/nvidia[0-1\n", 1, 0, "0-111", "");
    ok(rc == 0 && !s.gpu_prediction && s.gres_warning[0] == '\0',
       "SLURM_STEP_GPUS empty: no prediction, no gres.conf read");
    ng_step_free(&s);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/ng-step-XXXXXX");
    if (!mkdtemp(root) || !realpath(XE, xe_path)) {
        ok(0, "temporary fsroot and the topology's absolute path");
        return tap_done();
    }
    snprintf(gres_path, sizeof gres_path, "%s/gres.conf", root);
    test_cores();
    test_cpu_only();
    if (getuid() != 0 || fake_node() < 0)
        ok(1, "# SKIP fake NVIDIA device files need root (mknod)");
    else {
        test_gpus();
        test_gpu_failures();
    }
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
#else
int main(void)
{
    printf("1..0 # SKIP Slurm headers (slurm/spank.h) not installed\n");
    return 0;
}
#endif
