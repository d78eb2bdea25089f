/* Network affinity: NIC discovery on the corpus topologies, the
 * --net-affinity grammar and admin filter, golden per-task NICs and
 * variables (JUWELS Booster, XE8640, fewer NICs than GPUs, no NIC), and
 * properties over every topology of tests/topologies. Runs from the
 * repository root. */
#include "private/plan.h"
#include "private/task.h"
#include "tap.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_DIR "tests/topologies"

static char err[512];

static ng_topology *load(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TOPO_DIR, file);
    ng_topology_options o = {.xml_path = path};
    ng_topology *t = NULL;
    if (ng_topology_load(&t, &o, err, sizeof err) < 0)
        ok(0, "%s loads: %s", file, err);
    return t;
}

/* ---------------- grammar ---------------- */

static void test_grammar(void)
{
    static const struct { const char *in, *canon; } good[] = {
        {"auto", "auto"}, {"off", "off"}, {"1", "1"}, {"64", "64"}, {"2,force", "2,force"},
        {"force", "auto,force"}, {"nccl-per-rank", "auto,nccl-per-rank"},
        {"auto,nccl-per-rank,force", "auto,force,nccl-per-rank"}, {"", "off"},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        ng_net_affinity a;
        char buf[64] = "";
        int rc = ng_net_affinity_parse(good[i].in, &a, err, sizeof err);
        ngi_net_affinity_format(&a, buf, sizeof buf);
        ok(rc == 0 && strcmp(buf, good[i].canon) == 0, "--net-affinity='%s' -> '%s' (got %s%s)",
           good[i].in, good[i].canon, buf, rc ? err : "");
    }
    static const char *const bad[] = {"0", "65", "07", "-1", "auto,", ",force", "near",
                                      "force,force", "off,force", "auto,auto", "2 ", "auto,bind",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ng_net_affinity a;
        int rc = ng_net_affinity_parse(bad[i], &a, err, sizeof err);
        ok(rc < 0 && strstr(err, "--net-affinity: invalid value") && strstr(err, "expected auto") &&
               !strchr(err, '\n'),
           "--net-affinity='%s' refused in one line: %s", bad[i], err);
    }
    ng_net_affinity a;
    ok(ng_net_affinity_parse("\x1b[2Jx", &a, err, sizeof err) < 0 && !strchr(err, '\x1b'),
       "a terminal escape in the value is shown escaped: %s", err);
    ok(ng_net_affinity_parse(NULL, &a, err, sizeof err) == 0 && a.mode == NG_NET_OFF,
       "unset means off");
}

static void test_filter(ng_topology *jw)
{
    ng_nic_filter f;
    ok(ng_nic_filter_parse("mlx5_*,enp225s0f0", "mlx5_2", &f, err, sizeof err) == 0,
       "filter lists parse");
    static const char *const bad[] = {"mlx5_0,", "mlx 5", "*", "a*b", "mlx5_0;rm"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ok(ng_nic_filter_parse(bad[i], NULL, &f, err, sizeof err) < 0 && strstr(err, "net_allow"),
           "net_allow='%s' refused: %s", bad[i], err);
    ng_nic_filter_parse("mlx5_*,enp225s0f0", "mlx5_2", &f, err, sizeof err);
    int n0 = ngi_topology_nic_by_name(jw, "mlx5_0"), n2 = ngi_topology_nic_by_name(jw, "mlx5_2");
    int e0 = ngi_topology_nic_by_name(jw, "enp225s0f0"), e1 = ngi_topology_nic_by_name(jw, "enp225s0f1");
    int ib3 = ngi_topology_nic_by_name(jw, "ib3");
    ok(n0 >= 0 && n2 >= 0 && e0 >= 0 && e1 >= 0 && ib3 >= 0, "NICs found by verbs and interface name");
    ok(ng_nic_filter_admits(&f, ng_topology_nic(jw, (unsigned)n0)) &&
           !ng_nic_filter_admits(&f, ng_topology_nic(jw, (unsigned)n2)) &&
           ng_nic_filter_admits(&f, ng_topology_nic(jw, (unsigned)e0)) &&
           !ng_nic_filter_admits(&f, ng_topology_nic(jw, (unsigned)e1)),
       "allow admits named Ethernet and mlx5_*, deny wins over allow");
    ok(ng_nic_filter_admits(NULL, ng_topology_nic(jw, (unsigned)n0)) &&
           !ng_nic_filter_admits(NULL, ng_topology_nic(jw, (unsigned)e0)),
       "default: RDMA NICs only, no management Ethernet");
}

/* ---------------- discovery ---------------- */

static void test_discovery(ng_topology *jw)
{
    static const struct { const char *name, *netdev, *bus, *kind, *numa; } want[] = {
        {"mlx5_0", "ib0", "0000:04:00.0", "IB", "3"},
        {"mlx5_1", "ib1", "0000:43:00.0", "IB", "1"},
        {"mlx5_2", "ib2", "0000:83:00.0", "IB", "7"},
        {"mlx5_3", "ib3", "0000:c3:00.0", "IB", "5"},
        {"enp225s0f0", "enp225s0f0", "0000:e1:00.0", "Ethernet", "4"},
        {"enp225s0f1", "enp225s0f1", "0000:e1:00.1", "Ethernet", "4"},
    };
    ok(ng_topology_nic_count(jw) == 6, "JUWELS Booster: 6 NICs (got %u)", ng_topology_nic_count(jw));
    for (unsigned i = 0; i < 6 && i < ng_topology_nic_count(jw); i++) {
        const ng_nic_info *n = ng_topology_nic(jw, i);
        char nodes[64];
        ng_list_format(n->numa_nodes, nodes, sizeof nodes);
        ok(strcmp(n->name, want[i].name) == 0 && strcmp(n->netdev, want[i].netdev) == 0 &&
               strcmp(n->pci_bus_id, want[i].bus) == 0 &&
               strcmp(ng_nic_kind_name(n->kind), want[i].kind) == 0 &&
               strcmp(nodes, want[i].numa) == 0 && n->rdma == (i < 4) &&
               n->ports == (i < 4 ? 2u : 0u) && n->ports_active == n->ports,
           "JUWELS NIC %u: %s %s %s %s numa %s", i, n->name, n->netdev, n->pci_bus_id,
           ng_nic_kind_name(n->kind), nodes);
    }
    for (unsigned g = 0; g < 4; g++)
        ok(ng_topology_gpu_nic_distance(jw, g, g) == NG_PCI_SWITCH,
           "JUWELS GPU %u and mlx5_%u share a PCIe switch", g, g);
    ok(ng_topology_gpu_nic_distance(jw, 0, 1) == NG_PCI_PACKAGE &&
           ng_topology_gpu_nic_distance(jw, 0, 2) == NG_PCI_SYSTEM,
       "JUWELS GPU 0: mlx5_1 in its package, mlx5_2 across the sockets");

    /* Kinds: RoCE (Ethernet-class ConnectX with a verbs device), EFA, mlx4 IB. */
    ng_topology *t = load("jusuf-1xv100-epyc7742-nps4-hwloc1.xml");
    int r = t ? ngi_topology_nic_by_name(t, "mlx5_0") : -1, i = t ? ngi_topology_nic_by_name(t, "mlx5_1") : -1;
    ok(r >= 0 && i >= 0 && ng_topology_nic(t, (unsigned)r)->kind == NG_NIC_ROCE &&
           ng_topology_nic(t, (unsigned)i)->kind == NG_NIC_IB,
       "JUSUF (hwloc 1.x XML): mlx5_0 is RoCE, mlx5_1 is IB");
    ng_topology_free(t);
    t = load("g4dn-metal-8xt4.xml");
    r = t ? ngi_topology_nic_by_name(t, "rdmap197s0") : -1;
    ok(r >= 0 && ng_topology_nic(t, (unsigned)r)->kind == NG_NIC_RDMA,
       "g4dn.metal: the EFA device is RDMA, not RoCE");
    ng_topology_free(t);
    t = load("xeon-2s-nvdimm-dax-nvme-mic.xml");
    r = t ? ngi_topology_nic_by_name(t, "mlx4_0") : -1;
    ok(r >= 0 && ng_topology_nic(t, (unsigned)r)->kind == NG_NIC_IB,
       "2-socket Xeon: ConnectX-3 (class 0280) with an IPoIB interface is IB");
    ng_topology_free(t);
}

/* ---------------- planning helpers ---------------- */

typedef struct job {
    unsigned ntasks;
    unsigned count[64], offset[64];
    int gpus[256];
    hwloc_bitmap_t cpus[64];
} job;

/* Task i gets GPUs per_task*i .. (0 GPUs per task: CPU-only). */
static void job_gpus(job *j, unsigned ntasks, unsigned per_task)
{
    memset(j, 0, sizeof *j);
    j->ntasks = ntasks;
    for (unsigned t = 0, o = 0; t < ntasks; t++) {
        j->count[t] = per_task;
        j->offset[t] = o;
        for (unsigned k = 0; k < per_task; k++)
            j->gpus[o++] = (int)(t * per_task + k);
    }
}

static ngi_net_plan *plan(const ng_topology *topo, const job *j, const char *aff,
                         const ng_nic_filter *f)
{
    ngi_net_request r = {.filter = f, .ntasks = j->ntasks};
    if (ng_net_affinity_parse(aff, &r.aff, err, sizeof err) < 0)
        return NULL;
    int any = 0;
    for (unsigned t = 0; t < j->ntasks; t++)
        any |= j->count[t] > 0;
    if (any) {
        r.task_gpu_count = j->count;
        r.task_gpu_offset = j->offset;
        r.task_gpus = j->gpus;
    }
    r.task_cpus = (const hwloc_const_cpuset_t *)j->cpus;
    ngi_net_plan *np = NULL;
    if (ngi_net_plan_compute(topo, &r, &np, err, sizeof err) < 0)
        return NULL;
    return np;
}

static const char *env_of(const ngi_net_plan *np, unsigned t, const char *name)
{
    const ng_net_env *e;
    unsigned n = ngi_net_plan_task_env(np, t, &e);
    for (unsigned k = 0; k < n; k++)
        if (strcmp(e[k].name, name) == 0)
            return e[k].value;
    return NULL;
}

/* "mlx5_0 mlx5_1" for task t. */
static const char *nic_names(const ng_topology *topo, const ngi_net_plan *np, unsigned t)
{
    static char buf[512];
    const unsigned *idx;
    unsigned n = ngi_net_plan_task_nics(np, t, &idx);
    buf[0] = '\0';
    for (unsigned k = 0; k < n; k++) {
        size_t u = strlen(buf);
        snprintf(buf + u, sizeof buf - u, "%s%s", k ? " " : "", ng_topology_nic(topo, idx[k])->name);
    }
    return buf;
}

static int streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Each task's NICs against want[t]; NCCL_IB_HCA against nccl in every task. */
static void expect(const char *what, const ng_topology *topo, const ngi_net_plan *np, unsigned ntasks,
                   const char *const *want, const char *nccl)
{
    if (!ok(np != NULL, "%s: planned%s%s", what, np ? "" : ": ", np ? "" : err))
        return;
    for (unsigned t = 0; t < ntasks; t++)
        ok(streq(nic_names(topo, np, t), want[t]), "%s: task %u -> '%s' (got '%s')", what, t,
           want[t], nic_names(topo, np, t));
    for (unsigned t = 0; nccl && t < ntasks; t++)
        ok(streq(env_of(np, t, "NCCL_IB_HCA"), nccl), "%s: task %u NCCL_IB_HCA=%s (got %s)", what,
           t, nccl, env_of(np, t, "NCCL_IB_HCA") ? env_of(np, t, "NCCL_IB_HCA") : "(unset)");
}

/* ---------------- golden plans ---------------- */

static void golden_juwels(ng_topology *jw)
{
    job j;
    job_gpus(&j, 4, 1);
    static const char *const own[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
    const char *nccl = "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1";
    ngi_net_plan *np = plan(jw, &j, "auto", NULL);
    expect("JUWELS 4 tasks x 1 GPU", jw, np, 4, own, nccl);
    for (unsigned t = 0; np && t < 4; t++) {
        char v[32];
        snprintf(v, sizeof v, "mlx5_%u:1", t);
        ok(streq(env_of(np, t, "UCX_NET_DEVICES"), v) && streq(env_of(np, t, "NVSHMEM_HCA_LIST"), v) &&
               streq(env_of(np, t, "OMPI_MCA_btl_openib_if_include"), v),
           "JUWELS task %u: UCX_NET_DEVICES, NVSHMEM_HCA_LIST, OMPI_MCA_btl_openib_if_include = %s",
           t, v);
        const ng_net_env *e;
        unsigned n = ngi_net_plan_task_env(np, t, &e);
        ok(n == 4 && !e[0].overwrite, "JUWELS task %u: 4 variables, user values kept", t);
    }
    ok(np && streq(ngi_net_plan_nccl_hca(np), nccl), "node NCCL_IB_HCA %s", nccl);
    ngi_net_plan_free(np);

    np = plan(jw, &j, "force,nccl-per-rank", NULL);
    const ng_net_env *e;
    ok(np && ngi_net_plan_task_env(np, 2, &e) == 4 && e[0].overwrite &&
           streq(env_of(np, 2, "NCCL_IB_HCA"), "=mlx5_2:1"),
       "force overwrites; nccl-per-rank gives task 2 its own NCCL_IB_HCA=%s",
       np ? env_of(np, 2, "NCCL_IB_HCA") : "");
    ngi_net_plan_free(np);

    static const char *const two[] = {"mlx5_0 mlx5_1", "mlx5_1 mlx5_0", "mlx5_2 mlx5_3", "mlx5_3 mlx5_2"};
    np = plan(jw, &j, "2", NULL);
    expect("JUWELS N=2: own HCA, then the package's other", jw, np, 4, two, nccl);
    ok(np && streq(env_of(np, 1, "UCX_NET_DEVICES"), "mlx5_1:1,mlx5_0:1"),
       "UCX_NET_DEVICES nearest first: %s", np ? env_of(np, 1, "UCX_NET_DEVICES") : "");
    ngi_net_plan_free(np);

    job_gpus(&j, 1, 4);
    static const char *const all[] = {"mlx5_0 mlx5_1 mlx5_2 mlx5_3"};
    np = plan(jw, &j, "auto", NULL);
    expect("JUWELS 1 task x 4 GPUs: the HCA of each GPU", jw, np, 1, all, nccl);
    ngi_net_plan_free(np);

    job_gpus(&j, 4, 1);
    ng_nic_filter f;
    ng_nic_filter_parse(NULL, "mlx5_0", &f, err, sizeof err);
    static const char *const deny0[] = {"mlx5_1", "mlx5_1", "mlx5_2", "mlx5_3"};
    np = plan(jw, &j, "auto", &f);
    expect("JUWELS net_deny=mlx5_0: GPU 0 falls back to its package's HCA", jw, np, 4, deny0,
           "=mlx5_1:1,mlx5_2:1,mlx5_3:1");
    ngi_net_plan_free(np);

    /* CPU-only tasks: the NIC local to their CPUs; no NVSHMEM_HCA_LIST. */
    job_gpus(&j, 2, 0);
    j.cpus[0] = hwloc_bitmap_alloc();
    j.cpus[1] = hwloc_bitmap_alloc();
    hwloc_bitmap_list_sscanf(j.cpus[0], "30-35");
    hwloc_bitmap_list_sscanf(j.cpus[1], "6-11");
    static const char *const cpu[] = {"mlx5_3", "mlx5_1"};
    np = plan(jw, &j, "auto", NULL);
    expect("JUWELS CPU-only tasks on NUMA 5 and 1", jw, np, 2, cpu, nccl);
    ok(np && !env_of(np, 0, "NVSHMEM_HCA_LIST") && streq(env_of(np, 0, "UCX_NET_DEVICES"), "mlx5_3:1"),
       "CPU-only task: UCX_NET_DEVICES, no NVSHMEM_HCA_LIST");
    ngi_net_plan_free(np);
    hwloc_bitmap_free(j.cpus[0]);
    hwloc_bitmap_free(j.cpus[1]);

    job_gpus(&j, 4, 1);
    np = plan(jw, &j, "off", NULL);
    ok(np && ngi_net_plan_task_nics(np, 0, NULL) == 0 && ngi_net_plan_task_env(np, 0, NULL) == 0,
       "off: no NIC, no variable");
    ngi_net_plan_free(np);
}

static void golden_others(void)
{
    job j;
    ng_topology *t = load("xe8640-4xh100-spr8480-snc4.xml");
    job_gpus(&j, 4, 1);
    /* GPU 0 ties on the two ports of one HCA (mlx5_0, mlx5_1): auto gives
     * both; GPUs 2 and 3 share mlx5_3 (GPU 2's nearest, in its package). */
    static const char *const xe[] = {"mlx5_0 mlx5_1", "mlx5_2", "mlx5_3", "mlx5_3"};
    ngi_net_plan *np = t ? plan(t, &j, "auto", NULL) : NULL;
    expect("XE8640 4 tasks x 1 GPU", t, np, 4, xe, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
    ngi_net_plan_free(np);
    job_gpus(&j, 1, 1);
    j.gpus[0] = 0;
    job jj;
    job_gpus(&jj, 2, 0);
    jj.count[0] = jj.count[1] = 1;
    jj.offset[1] = 1;
    /* Two tasks sharing GPU 0: both get its two ports, starting in turn. */
    jj.gpus[0] = jj.gpus[1] = 0;
    static const char *const shared[] = {"mlx5_0 mlx5_1", "mlx5_1 mlx5_0"};
    np = t ? plan(t, &jj, "auto", NULL) : NULL;
    expect("XE8640 2 tasks on GPU 0: ties taken in turn", t, np, 2, shared, NULL);
    ngi_net_plan_free(np);
    ng_topology_free(t);

    t = load("jwc-gpu-4xv100-skx6148-hwloc1.xml");
    job_gpus(&j, 4, 1);
    static const char *const jwc[] = {"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1"};
    np = t ? plan(t, &j, "auto", NULL) : NULL;
    expect("JUWELS Cluster GPU node: 4 GPUs, 2 HCAs, shared per socket", t, np, 4, jwc,
           "=mlx5_0:1,mlx5_1:1");
    ngi_net_plan_free(np);
    ng_topology_free(t);

    t = load("corona-rome-8xmi50-rsmi.xml");
    job_gpus(&j, 8, 1);
    static const char *const one[] = {"mlx5_0", "mlx5_0", "mlx5_0", "mlx5_0",
                                      "mlx5_0", "mlx5_0", "mlx5_0", "mlx5_0"};
    np = t ? plan(t, &j, "auto", NULL) : NULL;
    expect("Corona: 8 GPUs share the one HCA", t, np, 8, one, "=mlx5_0:1");
    ngi_net_plan_free(np);
    ng_topology_free(t);

    t = load("lassen-p9-4xv100.xml");
    job_gpus(&j, 4, 1);
    static const char *const las[] = {"mlx5_0 mlx5_1", "mlx5_1 mlx5_0", "mlx5_2 mlx5_3",
                                      "mlx5_3 mlx5_2"};
    np = t ? plan(t, &j, "auto", NULL) : NULL;
    expect("Lassen: 2 GPUs tie on 2 HCA ports per socket: both each, first ones in turn", t, np,
           4, las,
           "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
    ngi_net_plan_free(np);
    ng_topology_free(t);

    /* AWS p5.48xlarge model: 4 EFA adapters behind each H100's PCIe switch.
     * auto: every rank gets its 4 (aws-ofi-nccl pairs each GPU with all of
     * them); =N still caps; NCCL_IB_HCA stays the node's 32 (not eth0). */
    t = load("p5-48xlarge-8xh100-32efa-synthetic.xml");
    job_gpus(&j, 8, 1);
    static const char *const p5[] = {
        "rdmap79s0 rdmap80s0 rdmap81s0 rdmap82s0", "rdmap96s0 rdmap97s0 rdmap98s0 rdmap99s0",
        "rdmap113s0 rdmap114s0 rdmap115s0 rdmap116s0", "rdmap130s0 rdmap131s0 rdmap132s0 rdmap133s0",
        "rdmap147s0 rdmap148s0 rdmap149s0 rdmap150s0", "rdmap164s0 rdmap165s0 rdmap166s0 rdmap167s0",
        "rdmap181s0 rdmap182s0 rdmap183s0 rdmap184s0", "rdmap198s0 rdmap199s0 rdmap200s0 rdmap201s0"};
    char p5nccl[NG_NET_VALUE_LEN] = "=";
    for (unsigned g = 0; g < 8; g++)
        for (const char *w = p5[g]; *w;) {
            size_t len = strcspn(w, " "), u = strlen(p5nccl);
            snprintf(p5nccl + u, sizeof p5nccl - u, "%s%.*s:1", u > 1 ? "," : "", (int)len, w);
            w += len + (w[len] == ' ');
        }
    np = t ? plan(t, &j, "auto", NULL) : NULL;
    expect("p5.48xlarge 8 tasks x 1 GPU: each rank its GPU's 4 EFA adapters", t, np, 8, p5,
           p5nccl);
    ok(np && streq(env_of(np, 5, "UCX_NET_DEVICES"),
                   "rdmap164s0:1,rdmap165s0:1,rdmap166s0:1,rdmap167s0:1") &&
           streq(env_of(np, 5, "NVSHMEM_HCA_LIST"),
                 "rdmap164s0:1,rdmap165s0:1,rdmap166s0:1,rdmap167s0:1"),
       "p5.48xlarge task 5: UCX_NET_DEVICES and NVSHMEM_HCA_LIST name all 4");
    ngi_net_plan_free(np);
    static const char *const p5one[] = {"rdmap79s0", "rdmap96s0", "rdmap113s0", "rdmap130s0",
                                        "rdmap147s0", "rdmap164s0", "rdmap181s0", "rdmap198s0"};
    np = t ? plan(t, &j, "1", NULL) : NULL;
    expect("p5.48xlarge --net-affinity=1 still caps at 1", t, np, 8, p5one, p5nccl);
    ngi_net_plan_free(np);
    job_gpus(&j, 4, 2);
    static const char *const p5two[] = {
        "rdmap79s0 rdmap96s0 rdmap80s0 rdmap81s0 rdmap82s0 rdmap97s0 rdmap98s0 rdmap99s0",
        "rdmap113s0 rdmap130s0 rdmap114s0 rdmap115s0 rdmap116s0 rdmap131s0 rdmap132s0 rdmap133s0",
        "rdmap147s0 rdmap164s0 rdmap148s0 rdmap149s0 rdmap150s0 rdmap165s0 rdmap166s0 rdmap167s0",
        "rdmap181s0 rdmap198s0 rdmap182s0 rdmap183s0 rdmap184s0 rdmap199s0 rdmap200s0 rdmap201s0"};
    np = t ? plan(t, &j, "auto", NULL) : NULL;
    expect("p5.48xlarge 4 tasks x 2 GPUs: both GPUs' 4, each GPU's first one first", t, np, 4,
           p5two, p5nccl);
    ngi_net_plan_free(np);
    job_gpus(&j, 2, 0);
    j.cpus[0] = hwloc_bitmap_alloc();
    j.cpus[1] = hwloc_bitmap_alloc();
    hwloc_bitmap_list_sscanf(j.cpus[0], "0-11");
    hwloc_bitmap_list_sscanf(j.cpus[1], "12-23");
    static const char *const p5cpu[] = {"rdmap79s0 rdmap80s0 rdmap81s0 rdmap82s0",
                                        "rdmap80s0 rdmap81s0 rdmap82s0 rdmap96s0"};
    np = t ? plan(t, &j, "auto", NULL) : NULL;
    expect("p5.48xlarge CPU-only tasks: 4 of the socket's 16 (the cap), in turn", t, np, 2, p5cpu,
           NULL);
    ngi_net_plan_free(np);
    hwloc_bitmap_free(j.cpus[0]);
    hwloc_bitmap_free(j.cpus[1]);
    j.cpus[0] = j.cpus[1] = NULL;
    ng_topology_free(t);

    t = load("dgx2-16xv100.xml");
    job_gpus(&j, 16, 1);
    np = t ? plan(t, &j, "auto", NULL) : NULL;
    ok(np && ngi_net_plan_task_nics(np, 0, NULL) == 0 && ngi_net_plan_task_env(np, 15, NULL) == 0 &&
           streq(ngi_net_plan_nccl_hca(np), ""),
       "DGX-2 (no NIC in the XML): nothing exported, no error");
    ngi_net_plan_free(np);
    ng_topology_free(t);

    t = load("knl-7250-quad-flat-hwloc24.xml");
    job_gpus(&j, 2, 0);
    np = t ? plan(t, &j, "auto", NULL) : NULL;
    ok(np && ngi_net_plan_task_env(np, 0, NULL) == 0, "KNL with Ethernet only: nothing by default");
    ngi_net_plan_free(np);
    ng_nic_filter f;
    ng_nic_filter_parse("enp3s0", NULL, &f, err, sizeof err);
    np = t ? plan(t, &j, "auto", &f) : NULL;
    ok(np && ngi_net_plan_task_env(np, 0, NULL) == 1 && streq(env_of(np, 0, "UCX_NET_DEVICES"), "enp3s0"),
       "KNL net_allow=enp3s0: UCX_NET_DEVICES=enp3s0 only (no RDMA variables)");
    ngi_net_plan_free(np);
    ng_topology_free(t);
}

/* ---------------- properties over the corpus ---------------- */

static unsigned long cases;

static unsigned task_dist(const ng_topology *topo, const job *j, unsigned t, unsigned nic)
{
    if (!j->count[t])
        return ngi_topology_cpus_nic_distance(topo, j->cpus[t] ? j->cpus[t]
                                                 : ng_topology_allowed_cpus(topo), nic);
    unsigned best = NG_PCI_SYSTEM;
    for (unsigned k = 0; k < j->count[t]; k++) {
        unsigned d = ng_topology_gpu_nic_distance(topo, (unsigned)j->gpus[j->offset[t] + k], nic);
        best = d < best ? d : best;
    }
    return best;
}

/* auto: for each GPU of task t (its CPUs without), min(4, the number of
 * candidates at the smallest distance) of them are in the list, and the
 * list holds nothing else. */
static int all_near(const ng_topology *topo, const job *j, unsigned t, const unsigned *idx,
                    unsigned n)
{
    uint64_t listed = 0, want = 0;
    for (unsigned k = 0; k < n; k++)
        listed |= (uint64_t)1 << idx[k];
    for (unsigned k = 0; k < (j->count[t] ? j->count[t] : 1); k++) {
        uint64_t near = 0;
        unsigned best = NG_PCI_SYSTEM + 1;
        for (unsigned i = 0; i < ng_topology_nic_count(topo) && i < 64; i++) {
            if (!ng_nic_filter_admits(NULL, ng_topology_nic(topo, i)))
                continue;
            unsigned d = j->count[t] ? ng_topology_gpu_nic_distance(
                                           topo, (unsigned)j->gpus[j->offset[t] + k], i)
                                     : task_dist(topo, j, t, i);
            if (d < best)
                best = d, near = 0;
            if (d == best)
                near |= (uint64_t)1 << i;
        }
        unsigned size = (unsigned)__builtin_popcountll(near);
        unsigned have = (unsigned)__builtin_popcountll(near & listed);
        if (have != (size < 4 ? size : 4))
            return 0;
        want |= near;
    }
    return (listed & ~want) == 0;
}

static int check_plan(const char *file, const ng_topology *topo, const job *j, const char *aff)
{
    ngi_net_plan *np = plan(topo, j, aff, NULL), *again = plan(topo, j, aff, NULL);
    if (!np || !again) {
        ngi_net_plan_free(np);
        ngi_net_plan_free(again);
        return ok(0, "%s %s: plan failed: %s", file, aff, err);
    }
    unsigned mind = NG_PCI_SYSTEM + 1, cand = 0;
    int good = 1;
    const char *nccl0 = env_of(np, 0, "NCCL_IB_HCA");
    for (unsigned t = 0; t < j->ntasks; t++) {
        mind = NG_PCI_SYSTEM + 1;
        cand = 0;
        for (unsigned i = 0; i < ng_topology_nic_count(topo); i++)
            if (ng_nic_filter_admits(NULL, ng_topology_nic(topo, i))) {
                unsigned d = task_dist(topo, j, t, i);
                mind = d < mind ? d : mind;
                cand++;
            }
        const unsigned *idx;
        unsigned n = ngi_net_plan_task_nics(np, t, &idx);
        const char *nccl = env_of(np, t, "NCCL_IB_HCA");
        int same = strcmp(nic_names(topo, np, t), nic_names(topo, again, t)) == 0;
        int first = n == 0 ? cand == 0 : task_dist(topo, j, t, idx[0]) == mind;
        int admitted = 1, sorted = 1;
        for (unsigned k = 0; k < n; k++) {
            admitted &= ng_nic_filter_admits(NULL, ng_topology_nic(topo, idx[k]));
            if (k)
                sorted &= task_dist(topo, j, t, idx[k - 1]) <= task_dist(topo, j, t, idx[k]);
        }
        /* Node-uniform, except with nccl-per-rank: then the task's own list. */
        char own[NG_NET_VALUE_LEN + 1] = "";
        const char *ompi = env_of(np, t, "OMPI_MCA_btl_openib_if_include");
        if (ompi)
            snprintf(own, sizeof own, "=%s", ompi);
        int uniform = strstr(aff, "nccl-per-rank") ? (!nccl && !ompi) || streq(nccl, own)
                                                   : (!nccl && !nccl0) || streq(nccl, nccl0);
        int ucx = n == 0 || env_of(np, t, "UCX_NET_DEVICES") != NULL;
        int every = strncmp(aff, "auto", 4) != 0 || all_near(topo, j, t, idx, n);
        if (!(same && first && admitted && sorted && uniform && ucx && every)) {
            good = 0;
            ok(0, "%s %s task %u: deterministic %d, nearest first %d (min %s), admitted %d, "
                  "sorted %d, NCCL_IB_HCA node-uniform %d, UCX set %d, every near NIC %d", file,
               aff, t, same, first, ng_pci_distance_name((ng_pci_distance)(mind > 3 ? 3 : mind)),
               admitted, sorted, uniform, ucx, every);
            break;
        }
    }
    cases++;
    ngi_net_plan_free(np);
    ngi_net_plan_free(again);
    return good;
}

/* Ties: tasks with one GPU each whose nearest NICs are the same set take
 * them in turn, so within such a set the use counts differ by at most 1. */
static int check_ties(const char *file, const ng_topology *topo, const job *j)
{
    ngi_net_plan *np = plan(topo, j, "auto", NULL);
    if (!np)
        return ok(0, "%s: ties plan failed: %s", file, err);
    uint64_t key[64];
    unsigned pick[64], nnic = ng_topology_nic_count(topo);
    int good = 1;
    for (unsigned t = 0; t < j->ntasks; t++) {
        unsigned g = (unsigned)j->gpus[j->offset[t]], best = NG_PCI_SYSTEM + 1;
        key[t] = 0;
        for (unsigned i = 0; i < nnic && i < 64; i++) {
            if (!ng_nic_filter_admits(NULL, ng_topology_nic(topo, i)))
                continue;
            unsigned d = ng_topology_gpu_nic_distance(topo, g, i);
            if (d < best)
                best = d, key[t] = 0;
            if (d == best)
                key[t] |= (uint64_t)1 << i;
        }
        const unsigned *idx;
        pick[t] = ngi_net_plan_task_nics(np, t, &idx) ? idx[0] : 64;
        good &= !key[t] || (pick[t] < 64 && (key[t] >> pick[t] & 1));
    }
    for (unsigned t = 0; good && t < j->ntasks; t++) {
        unsigned lo = ~0u, hi = 0;
        for (unsigned i = 0; i < 64; i++) {
            if (!(key[t] >> i & 1))
                continue;
            unsigned c = 0;
            for (unsigned u = 0; u < j->ntasks; u++)
                c += key[u] == key[t] && pick[u] == i;
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
        good &= !key[t] || hi - lo <= 1;
    }
    ngi_net_plan_free(np);
    if (!good)
        ok(0, "%s: tasks tying on the same NICs do not take them in turn", file);
    return good;
}

static void properties(const char *file, ng_topology *topo)
{
    unsigned ngpu = ng_topology_gpu_count(topo);
    static const char *const affs[] = {"auto", "2", "auto,nccl-per-rank"};
    int good = 1;
    job j;
    for (size_t a = 0; a < sizeof affs / sizeof *affs; a++) {
        static const unsigned per[] = {1, 2};
        for (size_t p = 0; p < 2; p++)
            if (ngpu && ngpu / per[p] >= 1 && ngpu / per[p] <= 64) {
                job_gpus(&j, ngpu / per[p], per[p]);
                good &= check_plan(file, topo, &j, affs[a]);
                if (a == 0 && per[p] == 1)
                    good &= check_ties(file, topo, &j);
            }
        /* CPU-only tasks, one per NUMA node with CPUs (at most 16). */
        job_gpus(&j, 0, 0);
        for (unsigned k = 0; k < ng_topology_numa_count(topo) && j.ntasks < 16; k++)
            if (ng_topology_numa(topo, k)->has_cpus)
                j.cpus[j.ntasks++] = hwloc_bitmap_dup(ng_topology_numa(topo, k)->cpus);
        if (j.ntasks)
            good &= check_plan(file, topo, &j, affs[a]);
        for (unsigned t = 0; t < j.ntasks; t++)
            hwloc_bitmap_free(j.cpus[t]);
    }
    ok(good, "%s: %u NICs, %u GPUs: every task's first NIC at the smallest distance, list "
             "sorted, ties taken in turn, auto: every NIC equally near each GPU (at most 4), NCCL_IB_HCA the same in every task (nccl-per-rank: the task's own)", file, ng_topology_nic_count(topo), ngpu);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void corpus(void)
{
    DIR *d = opendir(TOPO_DIR);
    if (!ok(d != NULL, "open %s (run from the repository root)", TOPO_DIR))
        return;
    char *names[128];
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 128)
        if (strstr(e->d_name, ".xml"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    unsigned with_nics = 0;
    for (unsigned i = 0; i < n; i++) {
        ng_topology *t = load(names[i]);
        if (t) {
            with_nics += ng_topology_nic_count(t) > 0;
            properties(names[i], t);
        }
        ng_topology_free(t);
        free(names[i]);
    }
    ok(with_nics >= 20, "%u of %u corpus topologies have NICs", with_nics, n);
    tap_diag("%lu network plans checked", cases);
}

/* Through the planner: ng_plan_request.net fills each ng_task_plan. */
static void through_planner(ng_topology *jw)
{
    unsigned count[4] = {1, 1, 1, 1}, offset[4] = {0, 1, 2, 3};
    int gpus[4] = {0, 1, 2, 3};
    ng_plan_request req = {.ntasks = 4, .task_gpu_count = count, .task_gpu_offset = offset,
                           .task_gpus = gpus};
    ng_plan *plan = NULL;
    ok(ng_plan_compute(jw, &req, &plan, err, sizeof err) == 0 &&
           ng_plan_task(plan, 0)->n_nics == 0 && ng_plan_task(plan, 0)->n_net_env == 0,
       "planner without --net-affinity: no NIC, no variable");
    ng_plan_free(plan);
    ng_net_affinity_parse("auto", &req.net, err, sizeof err);
    ok(ng_plan_compute(jw, &req, &plan, err, sizeof err) == 0, "planner with --net-affinity=auto");
    for (unsigned t = 0; plan && t < 4; t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        char want[16];
        snprintf(want, sizeof want, "mlx5_%u", t);
        ok(tp->n_nics == 1 && strcmp(ng_topology_nic(jw, tp->nics[0])->name, want) == 0 &&
               tp->n_net_env == 4 && strcmp(tp->net_env[0].name, "UCX_NET_DEVICES") == 0,
           "planner: task %u -> %s, 4 network variables", t, want);
    }
    ng_plan_free(plan);
    /* CPU-only tasks: the planner's slices decide (task 0 on the first NUMA nodes). */
    ng_plan_request cpu = {.ntasks = 8};
    ng_net_affinity_parse("auto", &cpu.net, err, sizeof err);
    ok(ng_plan_compute(jw, &cpu, &plan, err, sizeof err) == 0, "planner: 8 CPU-only tasks");
    int good = plan != NULL;
    for (unsigned t = 0; plan && t < 8; t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        unsigned best = NG_PCI_SYSTEM;
        for (unsigned i = 0; i < 4; i++) {
            unsigned d = ngi_topology_cpus_nic_distance(jw, tp->cpus, i);
            best = d < best ? d : best;
        }
        unsigned near = 0;
        for (unsigned i = 0; i < 4; i++)
            near += ngi_topology_cpus_nic_distance(jw, tp->cpus, i) == best;
        good &= tp->n_nics == near;
        for (unsigned k = 0; k < tp->n_nics; k++)
            good &= ngi_topology_cpus_nic_distance(jw, tp->cpus, tp->nics[k]) == best;
    }
    ok(good, "planner: every CPU-only task gets the HCAs nearest to its slice, all of them");
    ng_plan_free(plan);
}

/* ngi_net_apply_env through a small recorded environment. */
typedef struct fake_env {
    unsigned n;
    char name[8][48], value[8][NG_NET_VALUE_LEN];
} fake_env;

static int fake_is_set(void *ctx, const char *name)
{
    fake_env *f = ctx;
    for (unsigned i = 0; i < f->n; i++)
        if (strcmp(f->name[i], name) == 0)
            return 1;
    return 0;
}

static int fake_set(void *ctx, const char *name, const char *value)
{
    fake_env *f = ctx;
    unsigned i = 0;
    while (i < f->n && strcmp(f->name[i], name) != 0)
        i++;
    if (i == 8)
        return -1;
    if (i == f->n)
        f->n++;
    snprintf(f->name[i], sizeof f->name[i], "%s", name);
    snprintf(f->value[i], sizeof f->value[i], "%s", value);
    return 0;
}

static const char *fake_get(const fake_env *f, const char *name)
{
    for (unsigned i = 0; i < f->n; i++)
        if (strcmp(f->name[i], name) == 0)
            return f->value[i];
    return NULL;
}

static void test_apply_env(ng_topology *jw)
{
    job j;
    job_gpus(&j, 4, 1);
    ngi_net_plan *np = plan(jw, &j, "auto", NULL);
    const ng_net_env *e;
    unsigned n = ngi_net_plan_task_env(np, 1, &e);
    fake_env f = {.n = 1};
    snprintf(f.name[0], sizeof f.name[0], "UCX_NET_DEVICES");
    snprintf(f.value[0], sizeof f.value[0], "mlx5_3:1");
    ng_env_ops ops = {fake_is_set, fake_set, &f, NULL};
    char kept[160];
    ok(ngi_net_apply_env(e, n, &ops, kept, sizeof kept, err, sizeof err) == 0 &&
           streq(fake_get(&f, "UCX_NET_DEVICES"), "mlx5_3:1") &&
           streq(kept, "UCX_NET_DEVICES") && streq(fake_get(&f, "NVSHMEM_HCA_LIST"), "mlx5_1:1") &&
           streq(fake_get(&f, "NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"),
       "apply: the user's UCX_NET_DEVICES kept (kept: %s), the other variables set", kept);
    ngi_net_plan_free(np);
    np = plan(jw, &j, "auto,force", NULL);
    n = ngi_net_plan_task_env(np, 1, &e);
    ok(ngi_net_apply_env(e, n, &ops, kept, sizeof kept, err, sizeof err) == 0 &&
           streq(fake_get(&f, "UCX_NET_DEVICES"), "mlx5_1:1") && kept[0] == '\0',
       "apply with force: UCX_NET_DEVICES overwritten");
    char names[64];
    const unsigned *idx;
    unsigned k = ngi_net_plan_task_nics(np, 1, &idx);
    ok(ng_nic_list_format(jw, idx, k, names, sizeof names) == 6 && streq(names, "mlx5_1"),
       "ng_nic_list_format: %s", names);
    ngi_net_plan_free(np);
}

int main(void)
{
    test_grammar();
    ng_topology *jw = load("juwels-booster-4xa100-epyc7402-nps4.xml");
    if (jw) {
        test_filter(jw);
        test_discovery(jw);
        golden_juwels(jw);
        through_planner(jw);
        test_apply_env(jw);
    }
    ng_topology_free(jw);
    golden_others();
    corpus();
    return tap_done();
}
