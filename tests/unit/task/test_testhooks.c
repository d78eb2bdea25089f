/* The library's test seams (lib/private/sysops.h: an ngi_sys_ops table passed to
 * ngi_apply_task_sys / ngi_topology_load_sys) that the fault build of the
 * plugin uses for test_fault=: sched_setaffinity refused (EINVAL) and hwloc reporting no
 * NUMA node. Checks the library's outcome for each: ng_apply_task fails
 * with one line naming the problem and changes nothing (affinity, memory
 * policy, env); ng_topology_load refuses a topology without NUMA nodes. */
#include "private/base.h"
#include "private/task.h"
#include "private/topo.h"
#include "tap.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int refuse_affinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
    (void)pid;
    (void)size;
    (void)mask;
    errno = EINVAL;
    return -1;
}

static hwloc_obj_t no_numa(hwloc_topology_t hw, hwloc_obj_t prev)
{
    (void)hw;
    (void)prev;
    return NULL;
}

static unsigned env_sets;
static int env_set(void *ctx, const char *name, const char *value)
{
    (void)ctx;
    (void)name;
    (void)value;
    env_sets++;
    return 0;
}

/* Current memory policy mode of this thread, -1 on error. */
static int mempolicy_mode(void)
{
    int mode = -1;
    unsigned long mask[64] = {0};
    if (syscall(SYS_get_mempolicy, &mode, mask, 64ul * 8 * sizeof(unsigned long), NULL, 0ul) != 0)
        return -1;
    return mode;
}

static void test_affinity_refused(const ng_topology *topo)
{
    char err[512] = "", before[256], after[256];
    hwloc_bitmap_t cur = hwloc_bitmap_alloc();
    ng_current_cpus(cur);
    ng_list_format(cur, before, sizeof before);

    ng_plan_request req;
    memset(&req, 0, sizeof req);
    req.ntasks = 1;
    ng_policy_parse("local", &req.policy, NULL, 0);
    ng_plan *plan = NULL;
    int planned = ng_plan_compute(topo, &req, &plan, err, sizeof err) == 0;
    ok(planned, "plan for one task: %s", planned ? "ok" : err);
    if (!planned) {
        hwloc_bitmap_free(cur);
        return;
    }
    ng_env_ops ops = {.set = env_set};
    ng_apply_result res;
    const ngi_sys_ops refuse = {.sched_setaffinity = refuse_affinity};
    env_sets = 0;
    int rc = ngi_apply_task_sys(&refuse, topo, plan, 0, &req.policy, 0, &ops, &res, err,
                               sizeof err);
    ng_current_cpus(cur);
    ng_list_format(cur, after, sizeof after);
    ok(rc == -1 && strstr(err, "sched_setaffinity(") && strstr(err, "refused (EINVAL)") &&
       !strchr(err, '\n'), "EINVAL from sched_setaffinity: one line naming it: %s", err);
    ok(!res.cpus_applied && !res.mem_applied && env_sets == 0,
       "nothing applied or exported (cpus %d, mem %d, env %u)", res.cpus_applied,
       res.mem_applied, env_sets);
    ok(strcmp(before, after) == 0, "affinity unchanged ('%s' -> '%s')", before, after);
    errno = 0;
    if (mempolicy_mode() < 0 && errno == ENOSYS)
        tap_skip("memory policy still the default", "get_mempolicy is ENOSYS here (%s)",
                 tap_emulated() ? tap_emulated() : "no NUMA support");
    else
        ok(mempolicy_mode() == 0, "memory policy still the default (mode %d)", mempolicy_mode());
    ng_plan_free(plan);
    hwloc_bitmap_free(cur);
}

static void test_no_numa(void)
{
    char err[512] = "";
    ng_topology *topo = (ng_topology *)1;
    const ngi_sys_ops hide = {.next_numa = no_numa};
    int rc = ngi_topology_load_sys(&hide, &topo, NULL, err, sizeof err);
    ok(rc == -1 && topo == NULL && strstr(err, "no NUMA node") != NULL,
       "live load without NUMA nodes is refused: %s", err);
    ng_topology_options o = {0};
    o.xml_path = "tests/topologies/xeon-4s-offline-pus.xml";
    rc = ngi_topology_load_sys(&hide, &topo, &o, err, sizeof err);
    ok(rc == -1 && topo == NULL && strstr(err, "no NUMA node") != NULL,
       "XML load without NUMA nodes is refused: %s", err);
    rc = ng_topology_load(&topo, &o, err, sizeof err);
    ok(rc == 0 && ng_topology_numa_count(topo) == 1, "without the table the same XML loads (%u nodes)",
       ng_topology_numa_count(topo));
    ng_topology_free(topo);
}

int main(void)
{
    char err[512];
    ng_topology *topo = NULL;
    if (ng_topology_load(&topo, NULL, err, sizeof err) < 0) {
        ok(0, "load the live topology: %s", err);
        return tap_done();
    }
    test_affinity_refused(topo);
    ng_topology_free(topo);
    test_no_numa();
    return tap_done();
}
