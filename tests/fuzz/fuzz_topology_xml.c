/* libFuzzer target: topology XML through the real loading path
 * (ng_topology_load on a temp file: hwloc's XML import, then numaguard's
 * NUMA kinds, CPU-less nodes, GPU detection and locality), then a plan for
 * a few tasks on the loaded topology (ng_plan_compute).
 *
 * Invariants: nodes sorted by OS index with consistent has_cpus/cpus, CPU
 * sets within the allowed set, GPUs sorted by canonical bus id, distances
 * defined for listed nodes only; a plan either fails with one line or gives
 * every task CPUs within the allowed set and memory nodes the topology has;
 * warnings are one line each.
 *
 * hwloc 2.9.0 itself crashes on some malformed XMLs (objects with a cpuset
 * but no complete_cpuset, PCI objects as root, MemoryTiersNr without tiers;
 * fixed upstream by open-mpi/hwloc PRs #783, #800, #816). Those are not
 * numaguard's bugs, so each input is first loaded by bare hwloc in a
 * separate helper process (tests/fuzz/hwloc_check.c, same flags as
 * lib/topo/); inputs that kill it, or make bare hwloc leak (hwloc 2.9
 * leaks objects when an XML import fails half way), are counted, the first
 * few saved to $NG_FUZZ_HWLOC_DIR, and skipped: LeakSanitizer in this
 * process then reports only leaks that numaguard's own code adds. */
#include "fuzz_common.h"

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

static char xml[600], checker[1024];
static unsigned long hwloc_crashes, hwloc_leaks;

static void report_hwloc_crashes(void)
{
    if (hwloc_crashes || hwloc_leaks)
        fprintf(stderr, "fuzz_topology_xml: bare hwloc %s crashed on %lu inputs and leaked on "
                "%lu (skipped)\n", HWLOC_VERSION, hwloc_crashes, hwloc_leaks);
}

/* The pre-screen helper: $NG_FUZZ_HWLOC_CHECK, else hwloc_check beside us. */
static void find_checker(void)
{
    const char *env = getenv("NG_FUZZ_HWLOC_CHECK");
    if (env && *env) {
        snprintf(checker, sizeof checker, "%s", env);
    } else {
        ssize_t n = readlink("/proc/self/exe", checker, sizeof checker - 32);
        char *slash = n > 0 ? memrchr(checker, '/', (size_t)n) : NULL;
        if (slash)
            strcpy(slash + 1, "hwloc_check");
        else
            checker[0] = '\0';
    }
    if (!checker[0] || access(checker, X_OK) != 0) {
        fprintf(stderr, "fuzz_topology_xml: no hwloc_check helper (%s): hwloc's own crashes "
                "and leaks will be reported as findings\n", checker);
        checker[0] = '\0';
    }
}

static void save_sample(const char *path, const char *kind)
{
    const char *dir = getenv("NG_FUZZ_HWLOC_DIR");
    if (!dir || !*dir || hwloc_crashes + hwloc_leaks > 5)
        return;
    char dst[1024], cmd[2304];
    mkdir(dir, 0755);
    snprintf(dst, sizeof dst, "%s/hwloc-%s-%d-%lu.xml", dir, kind, (int)getpid(),
             hwloc_crashes + hwloc_leaks);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, dst);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz: could not save %s\n", dst);
}

/* 1 if bare hwloc loads the file without dying or leaking (helper exit 0). */
static int hwloc_survives(const char *path, int include_disallowed)
{
    if (!checker[0])
        return 1;
    char *argv[] = {checker, (char *)path, include_disallowed ? "1" : "0", NULL};
    /* The gl/opencl/pci plugins play no part in XML import; not loading
     * them halves the helper's cost. */
    char *envp[] = {"GLIBC_TUNABLES=glibc.malloc.tcache_count=0", "HWLOC_XML_VERBOSE=0",
                    "HWLOC_HIDE_ERRORS=2", "HWLOC_PLUGINS_BLACKLIST=hwloc_gl,hwloc_opencl,hwloc_pci",
                    NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, checker, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return 1;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
        save_sample(path, "leak");
        hwloc_leaks++;
    } else {
        save_sample(path, "crash");
        hwloc_crashes++;
    }
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(xml, sizeof xml, "%s/topology.xml", fz_tmpdir());
    find_checker();
    atexit(report_hwloc_crashes);
    return 0;
}

/* An OS device name as the library promises them: 1..max bytes of
 * letters, digits, '_', '-', '.', not "." or "..". */
static int name_ok(const char *n, size_t max)
{
    size_t len = strlen(n);
    if (!len || len > max || !strcmp(n, ".") || !strcmp(n, ".."))
        return 0;
    return strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == len;
}

static void check_topology(const ng_topology *t)
{
    hwloc_const_cpuset_t allowed = ng_topology_allowed_cpus(t);
    unsigned nn = ng_topology_numa_count(t), ng = ng_topology_gpu_count(t);
    FZ_ASSERT(allowed != NULL, "no allowed set");
    /* Node OS indices are unique (the API looks nodes up by them). */
    for (unsigned i = 1; i < nn; i++)
        FZ_ASSERT(ng_topology_numa(t, i - 1)->os_index < ng_topology_numa(t, i)->os_index,
                  "NUMA OS index %u listed twice or unsorted", ng_topology_numa(t, i)->os_index);
    for (unsigned i = 0; i < nn; i++) {
        const ng_numa_info *ni = ng_topology_numa(t, i);
        FZ_ASSERT(ni && ni->cpus, "node %u missing", i);
        FZ_ASSERT(i == 0 || ng_topology_numa(t, i - 1)->os_index < ni->os_index,
                  "nodes not sorted/unique at %u", i);
        FZ_ASSERT(ni->has_cpus == !hwloc_bitmap_iszero(ni->cpus), "node %u has_cpus %d",
                  ni->os_index, ni->has_cpus);
        FZ_ASSERT(hwloc_bitmap_isincluded(ni->cpus, allowed), "node %u CPUs not allowed",
                  ni->os_index);
        FZ_ASSERT((unsigned)ni->kind <= NG_MEM_UNKNOWN, "node %u kind %d", ni->os_index,
                  (int)ni->kind);
        FZ_ASSERT(ng_topology_numa_by_os(t, ni->os_index) == ni, "lookup of %u", ni->os_index);
        (void)ng_topology_distance(t, ni->os_index, ng_topology_numa(t, 0)->os_index);
    }
    for (unsigned i = 0; i < ng; i++) {
        const ng_gpu_info *g = ng_topology_gpu(t, i);
        char again[NG_BUSID_LEN];
        FZ_ASSERT(ngi_busid_normalize(g->pci_bus_id, again) == 0 &&
                  strcmp(again, g->pci_bus_id) == 0, "GPU %u bus '%s'", i, g->pci_bus_id);
        FZ_ASSERT(i == 0 || strcmp(ng_topology_gpu(t, i - 1)->pci_bus_id, g->pci_bus_id) < 0,
                  "GPUs not sorted/unique at %u", i);
        FZ_ASSERT(ng_topology_gpu_by_busid(t, g->pci_bus_id) == (int)i, "lookup of %s",
                  g->pci_bus_id);
        FZ_ASSERT(hwloc_bitmap_isincluded(g->cpus, allowed), "GPU %u CPUs not allowed", i);
        for (unsigned k = 0; k < g->n_os_devices; k++)
            FZ_ASSERT(g->os_devices[k] && name_ok(g->os_devices[k], 63), "GPU %u osdev '%s'", i,
                      g->os_devices[k] ? g->os_devices[k] : "(null)");
        FZ_ASSERT(g->os_devices[g->n_os_devices] == NULL, "GPU %u osdev list", i);
    }
    FZ_ASSERT(ng <= NG_MAX_GPUS, "%u GPUs", ng);
    /* NIC names go into comma lists and onto terminals (issue 19). */
    for (unsigned i = 0; i < ng_topology_nic_count(t); i++) {
        const ng_nic_info *n = ng_topology_nic(t, i);
        FZ_ASSERT(name_ok(n->name, NG_NIC_NAME_LEN - 1), "NIC %u name '%s'", i, n->name);
        FZ_ASSERT(!n->netdev[0] || name_ok(n->netdev, 15), "NIC %u netdev '%s'", i, n->netdev);
    }
}

static void check_plan(const ng_topology *t, unsigned ntasks, int with_gpus, int smt)
{
    unsigned ng = ng_topology_gpu_count(t);
    unsigned count[8], offset[8];
    int gpus[8];
    ng_plan_request req;
    memset(&req, 0, sizeof req);
    req.ntasks = ntasks;
    req.omp.mode = NG_OMP_AUTO;
    req.policy.kind = NG_POLICY_LOCAL;
    req.policy.mods = smt ? NG_MOD_SMT : 0;
    if (with_gpus && ng) {
        for (unsigned i = 0; i < ntasks; i++) {
            count[i] = 1;
            offset[i] = i;
            gpus[i] = (int)(i % ng);
        }
        req.task_gpu_count = count;
        req.task_gpu_offset = offset;
        req.task_gpus = gpus;
    }
    ng_plan *plan = NULL;
    char err[512] = "";
    if (ng_plan_compute(t, &req, &plan, err, sizeof err) < 0) {
        fz_check_message("ng_plan_compute", err, sizeof err);
        return;
    }
    FZ_ASSERT(ng_plan_task_count(plan) == ntasks, "%u tasks planned", ng_plan_task_count(plan));
    for (unsigned i = 0; i < ntasks; i++) {
        const ng_task_plan *tp = ng_plan_task(plan, i);
        FZ_ASSERT(tp && tp->local_id == i, "task %u", i);
        if (tp->cpus) {
            FZ_ASSERT(!hwloc_bitmap_iszero(tp->cpus), "task %u: empty CPU set", i);
            FZ_ASSERT(hwloc_bitmap_isincluded(tp->cpus, ng_topology_allowed_cpus(t)),
                      "task %u: CPUs outside the allowed set", i);
        }
        if (tp->mem_nodes) {
            int os;
            hwloc_bitmap_foreach_begin(os, tp->mem_nodes)
                FZ_ASSERT(ng_topology_numa_by_os(t, (unsigned)os), "task %u: node %d", i, os);
            hwloc_bitmap_foreach_end();
        }
        FZ_ASSERT(tp->n_env <= NG_MAX_ENV, "task %u: %u env", i, tp->n_env);
    }
    for (unsigned w = 0; w < ng_plan_warning_count(plan); w++)
        fz_check_message("plan warning", ng_plan_warning(plan, w), 4096);
    ng_plan_free(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_write_file(xml, data, size);
    ng_topology_options o;
    memset(&o, 0, sizeof o);
    o.xml_path = xml;
    o.include_disallowed = size & 1;
    if (!hwloc_survives(xml, o.include_disallowed))
        return 0;
    ng_topology *t = NULL;
    char err[512] = "";
    if (ng_topology_load(&t, &o, err, sizeof err) < 0) {
        FZ_ASSERT(t == NULL, "failure with a topology");
        fz_check_printable("ng_topology_load", err, sizeof err);
        return 0;
    }
    check_topology(t);
    check_plan(t, 1 + (unsigned)(size % 4), (size >> 2) & 1, (size >> 3) & 1);
    ng_topology_free(t);
    return 0;
}
