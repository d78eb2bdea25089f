/* libFuzzer target: --net-affinity values (ng_net_affinity_parse / format),
 * the admin's NIC lists (ng_nic_filter_parse, net_allow=/net_deny=) and the
 * per-task NICs they give on JUWELS Booster (ngi_net_plan_compute).
 * Input: "VALUE\nALLOW\nDENY\n" then bytes shaping the job (tasks, GPUs).
 * Invariants: round trip through the canonical text; rejections are one
 * printable line; every NIC given is admitted by the filter, at most N (or
 * one per GPU) per task; values are terminated; NCCL_IB_HCA is the same
 * in every task unless nccl-per-rank. */
#include "fuzz_common.h"

static ng_topology *juwels(void)
{
    static ng_topology *t;
    if (!t) {
        const char *repo = getenv("NG_FUZZ_REPO");
        char path[1024], err[256];
        snprintf(path, sizeof path, "%s/tests/topologies/juwels-booster-4xa100-epyc7402-nps4.xml",
                 repo ? repo : ".");
        ng_topology_options o = {.xml_path = path};
        FZ_ASSERT(ng_topology_load(&t, &o, err, sizeof err) == 0, "load %s: %s", path, err);
    }
    return t;
}

/* Next line of the input (consumed), or "" at the end. */
static char *line(char **p)
{
    char *s = *p, *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p = s + strlen(s);
    }
    return s;
}

static void check_affinity(const char *in, const ng_net_affinity *a)
{
    char canon[64], canon2[64];
    int n = ngi_net_affinity_format(a, canon, sizeof canon);
    FZ_ASSERT(n > 0, "'%s': format failed", in);
    ng_net_affinity back;
    char err[512];
    FZ_ASSERT(ng_net_affinity_parse(canon, &back, err, sizeof err) == 0, "'%s': '%s' rejected: %s",
              in, canon, err);
    FZ_ASSERT(back.mode == a->mode && back.force == a->force &&
                  back.nccl_per_rank == a->nccl_per_rank &&
                  (a->mode != NG_NET_COUNT || back.count == a->count),
              "'%s': '%s' parses differently", in, canon);
    FZ_ASSERT(ngi_net_affinity_format(&back, canon2, sizeof canon2) == n && !strcmp(canon, canon2),
              "'%s': not idempotent", in);
}

static void check_plan(const ng_net_affinity *a, const ng_nic_filter *f, const uint8_t *d,
                       size_t n)
{
    ng_topology *t = juwels();
    unsigned ntasks = n ? d[0] % 8 + 1 : 1, count[8], offset[8];
    int gpus[8];
    for (unsigned i = 0; i < ntasks; i++) {
        count[i] = n > i + 1 ? d[i + 1] % 2 : 1;  /* 0 = CPU-only */
        offset[i] = i;
        gpus[i] = (int)((n > i + 1 ? d[i + 1] / 2 : i) % 4);
    }
    ngi_net_request r = {.aff = *a, .filter = f, .ntasks = ntasks, .task_gpu_count = count,
                        .task_gpu_offset = offset, .task_gpus = gpus};
    ngi_net_plan *np = NULL;
    char err[256];
    FZ_ASSERT(ngi_net_plan_compute(t, &r, &np, err, sizeof err) == 0, "plan: %s", err);
    const char *nccl0 = NULL;
    for (unsigned i = 0; i < ntasks; i++) {
        const unsigned *nics;
        unsigned k = ngi_net_plan_task_nics(np, i, &nics);
        /* auto: every NIC equally near each GPU, at most 4 per GPU (4 for
         * a CPU-only task); N: at most N (docs/network.md). */
        unsigned max = a->mode == NG_NET_COUNT ? a->count : 4 * (count[i] ? count[i] : 1);
        FZ_ASSERT(a->mode != NG_NET_OFF || k == 0, "off gave %u NICs", k);
        FZ_ASSERT(k <= max, "task %u: %u NICs, at most %u", i, k, max);
        for (unsigned j = 0; j < k; j++)
            FZ_ASSERT(ng_nic_filter_admits(f, ng_topology_nic(t, nics[j])), "task %u: %s not admitted",
                      i, ng_topology_nic(t, nics[j])->name);
        const ng_net_env *e;
        unsigned ne = ngi_net_plan_task_env(np, i, &e);
        FZ_ASSERT(ne <= 4, "task %u: %u variables", i, ne);
        for (unsigned j = 0; j < ne; j++) {
            FZ_ASSERT(memchr(e[j].value, '\0', sizeof e[j].value) && e[j].value[0],
                      "task %u: %s unterminated or empty", i, e[j].name);
            FZ_ASSERT(e[j].overwrite == a->force, "task %u: overwrite", i);
            if (!strcmp(e[j].name, "NCCL_IB_HCA") && !a->nccl_per_rank) {
                FZ_ASSERT(!nccl0 || !strcmp(nccl0, e[j].value), "NCCL_IB_HCA differs: %s / %s",
                          nccl0, e[j].value);
                nccl0 = e[j].value;
            }
        }
    }
    ngi_net_plan_free(np);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fz_cstr(data, size), *p = in, err[512] = "";
    const char *value = line(&p), *allow = line(&p), *deny = line(&p);
    size_t used = (size_t)(p - in);
    ng_net_affinity a;
    int rc = ng_net_affinity_parse(value, &a, err, sizeof err);
    FZ_ASSERT(rc == 0 || rc == -1, "rc %d", rc);
    FZ_ASSERT(ng_net_affinity_parse(value, &a, NULL, 0) == rc, "verdict depends on err == NULL");
    if (rc < 0) {
        fz_check_printable("ng_net_affinity_parse", err, sizeof err);
        free(in);
        return 0;
    }
    check_affinity(value, &a);
    ng_nic_filter f;
    if (ng_nic_filter_parse(allow, deny, &f, err, sizeof err) < 0) {
        fz_check_printable("ng_nic_filter_parse", err, sizeof err);
        free(in);
        return 0;
    }
    check_plan(&a, &f, data + (used < size ? used : size), used < size ? size - used : 0);
    free(in);
    return 0;
}
