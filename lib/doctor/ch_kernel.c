/* The kernel under the placements: the memory-policy modes the plugin
 * asks for (probed with the plugin's own call on the live kernel; under a
 * test fsroot, its /proc/sys/kernel/osrelease), weighted interleave's
 * weights, the cgroup hierarchy and its cpuset controller, online CPUs
 * and SMT, memory-only NUMA nodes and the kinds numaguard gives them. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define WI_DIR "/sys/kernel/mm/mempolicy/weighted_interleave"

/* A small file under fsroot, first line; -1 when absent. */
static int read_line(const ngi_doctor_ctx *x, const char *abs, char *buf, size_t len)
{
    char path[PATH_MAX];
    if (ngi_doctor_path(x, abs, path, sizeof path) < 0 ||
        ngi_read_small_file(path, buf, len) < 0)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* Under a test fsroot: is its kernel release at least maj.min? -1 unknown. */
static int release_at_least(const ngi_doctor_ctx *x, unsigned maj, unsigned min, char *rel,
                            size_t len)
{
    unsigned a, b;
    if (read_line(x, "/proc/sys/kernel/osrelease", rel, len) < 0 ||
        sscanf(rel, "%u.%u", &a, &b) != 2)
        return -1;
    return a > maj || (a == maj && b >= min);
}

/* 1 supported, 0 not, -1 cannot tell; @p how names the evidence. */
static int mode_supported(const ngi_doctor_ctx *x, ng_mem_mode mode, unsigned maj,
                          unsigned min, char *how, size_t len)
{
    char rel[64];
    if (x->live) {
        snprintf(how, len, "set_mempolicy probe");
        return ngi_mem_mode_supported(x->sys, mode);
    }
    int r = release_at_least(x, maj, min, rel, sizeof rel);
    snprintf(how, len, "%s/proc/sys/kernel/osrelease %s", x->fsroot, r < 0 ? "absent" : rel);
    return r;
}

static void check_preferred_many(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "kernel", "kernel.preferred_many");
    char how[PATH_MAX + 64];
    int r = mode_supported(x, NG_MEM_MODE_PREFERRED_MANY, 5, 15, how, sizeof how);
    ngi_doctor_fact(c, "evidence", "%s", how);
    if (r == 0)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "--numa-policy=prefer prefers one node (the task's first, its GPU's) "
                           "instead of all of its nodes",
                           "a kernel >= 5.15, or leave prefer out of allowed_policies",
                           "the kernel refuses MPOL_PREFERRED_MANY (Linux < 5.15; %s)", how);
    if (r < 0)
        ngi_doctor_end(x->r, c, "cannot tell whether the kernel has MPOL_PREFERRED_MANY (%s)",
                       how);
    else
        ngi_doctor_end(x->r, c, "the kernel accepts MPOL_PREFERRED_MANY (%s)", how);
}

/* The weights of the memory nodes; 1 when all are equal (and given). */
static int weights(ngi_doctor_ctx *x, ng_doctor_check *c, unsigned *kinds)
{
    char rel[96], v[32], first[32] = "";
    int equal = 1;
    unsigned seen = 0;
    *kinds = 0;
    for (unsigned i = 0; x->topo && i < ng_topology_numa_count(x->topo); i++) {
        const ng_numa_info *n = ng_topology_numa(x->topo, i);
        *kinds |= 1u << n->kind;
        snprintf(rel, sizeof rel, WI_DIR "/node%u", n->os_index);
        if (read_line(x, rel, v, sizeof v) < 0)
            continue;
        ngi_doctor_fact(c, rel, "%s (%s)", v, ng_mem_kind_name(n->kind));
        if (seen++ == 0)
            snprintf(first, sizeof first, "%s", v);
        else if (strcmp(v, first) != 0)
            equal = 0;
    }
    return seen > 0 && equal;
}

static void check_weighted(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "kernel", "kernel.weighted_interleave");
    char how[PATH_MAX + 64], automatic[16] = "";
    unsigned kinds;
    int r = mode_supported(x, NG_MEM_MODE_WEIGHTED, 6, 9, how, sizeof how);
    ngi_doctor_fact(c, "evidence", "%s", how);
    if (r == 0) {
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "--numa-policy=weighted falls back to plain interleave (an error "
                           "under strict)",
                           "a kernel >= 6.9, or leave weighted out of allowed_policies",
                           "the kernel has no MPOL_WEIGHTED_INTERLEAVE (Linux < 6.9; %s)", how);
        ngi_doctor_end(x->r, c, "-");
        return;
    }
    /* Linux 6.16 added "auto" (weights from the firmware's bandwidths). */
    if (read_line(x, WI_DIR "/auto", automatic, sizeof automatic) < 0)
        read_line(x, WI_DIR "/__auto_type", automatic, sizeof automatic);
    int equal = weights(x, c, &kinds);
    if (equal && (kinds & (kinds - 1)) && strcmp(automatic, "true") != 0)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "--numa-policy=weighted spreads pages evenly, as plain interleave "
                           "does, over memory of different speeds",
                           "set the weights at boot (docs/admin-guide.md, Weighted interleave)",
                           "the weights in " WI_DIR " are all equal on a node with several "
                           "memory kinds");
    if (r < 0)
        ngi_doctor_end(x->r, c, "cannot tell whether the kernel has weighted interleave (%s)",
                       how);
    else
        ngi_doctor_end(x->r, c, "the kernel accepts MPOL_WEIGHTED_INTERLEAVE (%s)%s%s", how,
                       automatic[0] ? ", auto weights " : "", automatic);
}

void ngi_check_kernel_mempolicy(ngi_doctor_ctx *x)
{
    check_preferred_many(x);
    check_weighted(x);
}

/* 1 if @p list (comma or space separated) names @p word. */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ' || p[-1] == ',') && (!p[n] || strchr(" ,\n", p[n])))
            return 1;
    return 0;
}

void ngi_check_kernel_cgroup(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "kernel", "kernel.cgroup");
    char ctrls[512], path[PATH_MAX], tp[256] = "";
    struct stat st;
    const char *version = "none";
    int cpuset = 0;
    if (read_line(x, "/sys/fs/cgroup/cgroup.controllers", ctrls, sizeof ctrls) == 0) {
        version = "v2";
        cpuset = has_word(ctrls, "cpuset");
        ngi_doctor_fact(c, "cgroup.controllers", "%s", ctrls);
    } else if (ngi_doctor_path(x, "/sys/fs/cgroup/cpuset", path, sizeof path) == 0 &&
               stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        version = "v1";
        cpuset = 1;
    }
    if (x->slurm_text)
        ngi_conf_value(x->slurm_text, "TaskPlugin", tp, sizeof tp);
    if (!cpuset && strstr(tp, "task/cgroup"))
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "task/cgroup cannot give steps a cpuset: their tasks are not "
                           "confined to their CPUs",
                           "mount the cgroup hierarchy with the cpuset controller (v2: enable "
                           "+cpuset in the subtree_control files slurmd uses)",
                           "cgroup %s at /sys/fs/cgroup without the cpuset controller", version);
    ngi_doctor_end(x->r, c, "cgroup %s%s", version,
                   cpuset ? " with the cpuset controller" : " (no cpuset controller)");
}

/* The kernel's smt/control word in plain words (Documentation/ABI:
 * on, off, forceoff, notsupported, notimplemented). */
static const char *smt_words(const char *v)
{
    static const struct {
        const char *word, *text;
    } map[] = {
        {"on", "on"},
        {"off", "off (disabled)"},
        {"forceoff", "off (disabled, cannot be re-enabled until reboot)"},
        {"notsupported", "not supported by these CPUs (one thread per core)"},
        {"notimplemented", "state not reported by this kernel"},
        {"unknown", "state unknown (no /sys/devices/system/cpu/smt/control)"},
    };
    for (size_t i = 0; i < NGI_ARRAY_LEN(map); i++)
        if (!strcmp(v, map[i].word))
            return map[i].text;
    return v;
}

void ngi_check_kernel_cpus(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "kernel", "kernel.cpus");
    char online[256] = "", offline[256] = "", smt[32] = "";
    int have = read_line(x, "/sys/devices/system/cpu/online", online, sizeof online) == 0;
    read_line(x, "/sys/devices/system/cpu/offline", offline, sizeof offline);
    if (read_line(x, "/sys/devices/system/cpu/smt/control", smt, sizeof smt) < 0)
        snprintf(smt, sizeof smt, "unknown");
    ngi_doctor_fact(c, "online", "%s", online);
    ngi_doctor_fact(c, "offline", "%s", offline);
    ngi_doctor_fact(c, "smt", "%s", smt);
    if (offline[0])
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "hwloc, the topology cache and Slurm see fewer CPUs than the node "
                           "has; when they come back the cache's stamp no longer matches and "
                           "every step discovers the node live until slurmd restarts",
                           "online them (echo 1 > /sys/devices/system/cpu/cpuN/online) or set "
                           "slurm.conf's CPUs to what is online",
                           "CPUs %s are offline", offline);
    if (!have)
        ngi_doctor_end(x->r, c, "no /sys/devices/system/cpu/online under %s: not checked",
                       x->fsroot ? x->fsroot : "/");
    else
        ngi_doctor_end(x->r, c, "CPUs %s online, none offline, SMT %s%s", online, smt_words(smt),
                       strcmp(smt, "on") ? "" : " (numaguard counts cores unless ,smt)");
}

void ngi_check_memory_nodes(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "kernel", "kernel.memory_nodes");
    char list[512] = "";
    size_t used = 0;
    unsigned n = 0;
    for (unsigned i = 0; x->topo && i < ng_topology_numa_count(x->topo); i++) {
        const ng_numa_info *ni = ng_topology_numa(x->topo, i);
        if (ni->has_cpus)
            continue;
        n++;
        ngi_doctor_fact(c, "node", "%u %s %.1f GiB", ni->os_index, ng_mem_kind_name(ni->kind),
                        (double)ni->memory_bytes / (1024.0 * 1024 * 1024));
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%u %s", n > 1 ? ", " : "",
                                     ni->os_index, ng_mem_kind_name(ni->kind));
        if (ni->kind == NG_MEM_UNKNOWN)
            ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                               "numaguard cannot tell what its memory is: no policy puts a "
                               "GPU's tasks there, and interleave:all,cpuless treats it as "
                               "plain memory",
                               "give hwloc the firmware's memory attributes (hwloc >= 2.x, ACPI "
                               "HMAT; the driver's numa_status for GPU memory)",
                               "memory-only NUMA node %u: kind unknown", ni->os_index);
    }
    if (!x->topo)
        ngi_doctor_end(x->r, c, "no topology: not checked");
    else if (!n)
        ngi_doctor_end(x->r, c, "no memory-only NUMA node");
    else
        ngi_doctor_end(x->r, c, "%u memory-only NUMA nodes: %s", n, list);
}
