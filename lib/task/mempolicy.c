/* The calling thread's memory policy: raw set_mempolicy (no libnuma) with
 * the kernel-version fallbacks (PREFERRED_MANY -> PREFERRED on Linux <
 * 5.15, WEIGHTED_INTERLEAVE -> INTERLEAVE on < 6.9), the nodes clipped to
 * what the task may use. Which kernel mode each ng_mem_mode is: the table
 * below (the policy kinds' table, lib/options/policy.c, says which
 * ng_mem_mode a kind gets). */
#include "private/task.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>


#ifndef MPOL_DEFAULT
#define MPOL_DEFAULT 0
#endif
#ifndef MPOL_PREFERRED
#define MPOL_PREFERRED 1
#endif
#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif
#ifndef MPOL_INTERLEAVE
#define MPOL_INTERLEAVE 3
#endif
#ifndef MPOL_F_MEMS_ALLOWED
#define MPOL_F_MEMS_ALLOWED (1 << 2)
#endif
/* Linux 5.15 and 6.9; glibc/libnuma headers of older distros lack them. */
#define NG_MPOL_PREFERRED_MANY 5
#define NG_MPOL_WEIGHTED_INTERLEAVE 6

/* The kernel's mode for each memory mode (designated: the enum's order
 * does not matter; 0 = not a mode the kernel is given). A new mode is a
 * row here; its fallback, if it has one, a branch in ngi_mem_apply. */
static const int kernel_modes[] = {
    [NG_MEM_MODE_NONE] = 0,
    [NG_MEM_MODE_BIND] = MPOL_BIND,
    [NG_MEM_MODE_PREFERRED_MANY] = NG_MPOL_PREFERRED_MANY,
    [NG_MEM_MODE_INTERLEAVE] = MPOL_INTERLEAVE,
    [NG_MEM_MODE_WEIGHTED] = NG_MPOL_WEIGHTED_INTERLEAVE,
};
_Static_assert(NGI_ARRAY_LEN(kernel_modes) == NG_MEM_MODE_COUNT,
               "kernel_modes: one kernel mode per ng_mem_mode");

/* Node masks passed to the kernel: room for NG_MAX_NUMA_OS_INDEX plus one
 * spare word (the kernel's historical "maxnode - 1" convention). */
#define NG_MASK_BITS (NG_MAX_NUMA_OS_INDEX + 1)
#define NG_ULONG_BITS (8 * sizeof(unsigned long))
#define NG_MASK_WORDS (NG_MASK_BITS / NG_ULONG_BITS + 1)


static long ng_sys_set_mempolicy(int mode, const unsigned long *mask, unsigned long maxnode)
{
    return syscall(SYS_set_mempolicy, mode, mask, maxnode);
}

/* The real call behind ng_apply_task. Tests reach others only through
 * ngi_apply_task_sys (lib/private/task.h): a table the caller passes in,
 * never a writable global. */
static long sys_set_mempolicy(const ngi_sys_ops *sys, int mode, const unsigned long *mask,
                              unsigned long maxnode)
{
    if (sys && sys->set_mempolicy)
        return sys->set_mempolicy(mode, mask, maxnode);
    return ng_sys_set_mempolicy(mode, mask, maxnode);
}

static void bitmap_to_mask(hwloc_const_bitmap_t set, unsigned long *mask)
{
    memset(mask, 0, NG_MASK_WORDS * sizeof *mask);
    unsigned i;
    hwloc_bitmap_foreach_begin(i, set)
        if (i < NG_MASK_BITS)
            mask[i / NG_ULONG_BITS] |= 1ul << (i % NG_ULONG_BITS);
    hwloc_bitmap_foreach_end();
}

/* Nodes this task may allocate from (cgroup cpuset.mems / Mems_allowed).
 * -1 if the kernel would not tell (then the caller does not filter). */
static int mems_allowed(hwloc_bitmap_t set)
{
    unsigned long mask[NG_MASK_WORDS];
    int mode = 0;
    memset(mask, 0, sizeof mask);
    if (syscall(SYS_get_mempolicy, &mode, mask, (unsigned long)NG_MASK_BITS + 1, NULL,
                (unsigned long)MPOL_F_MEMS_ALLOWED) != 0)
        return -1;
    hwloc_bitmap_zero(set);
    for (unsigned i = 0; i < NG_MASK_BITS; i++)
        if (mask[i / NG_ULONG_BITS] & (1ul << (i % NG_ULONG_BITS)))
            hwloc_bitmap_set(set, i);
    return 0;
}

static int set_policy(const ngi_sys_ops *sys, int mode, hwloc_const_bitmap_t nodes)
{
    unsigned long mask[NG_MASK_WORDS];
    bitmap_to_mask(nodes, mask);
    return sys_set_mempolicy(sys, mode, mask, (unsigned long)NG_MASK_BITS + 1) == 0 ? 0 : -1;
}

static int mempolicy_error(int e, const char *what, hwloc_const_bitmap_t nodes,
                           char *err, size_t errlen)
{
    char list[128];
    if (ng_list_format(nodes, list, sizeof list) < 0)
        ngi_strlcpy(list, "(long list)", sizeof list);
    if (e == EPERM)
        return ngi_fail(err, errlen,
                       "set_mempolicy(%s:%s) refused (EPERM): a container without "
                       "CAP_SYS_NICE? memory policy not applied", what, list);
    /* EINVAL after the mode fallbacks: the nodes, not the mode, were refused
     * (outside cpuset.mems, offline) or the kernel predates the mode. */
    if (e == EINVAL)
        return ngi_fail(err, errlen,
                       "set_mempolicy(%s:%s) refused (EINVAL): nodes outside the task's "
                       "cpuset.mems or a kernel without this mode? memory policy not applied",
                       what, list);
    return ngi_fail(err, errlen, "set_mempolicy(%s:%s) failed: %s", what, list, strerror(e));
}

/* The one node MPOL_PREFERRED names when PREFERRED_MANY is refused: the
 * plan's first node (prefer: the GPU's node) while it survived the clip to
 * the allowed mems, else the lowest remaining one. */
int ngi_mem_preferred_node(hwloc_const_bitmap_t nodes, int first)
{
    if (first >= 0 && hwloc_bitmap_isset(nodes, (unsigned)first))
        return first;
    return hwloc_bitmap_first(nodes);
}

/* Apply @p mode on @p nodes with the documented fallbacks. Sets
 * res->mem_mode and res->mem_mode_text to what the kernel accepted.
 * @p first is the plan's mem_first (-1: none). */
int ngi_mem_apply(const ngi_sys_ops *sys, ng_mem_mode mode, hwloc_const_bitmap_t nodes, int first,
                  int strict, ng_apply_result *res, char *err, size_t errlen)
{
    int kmode = (unsigned)mode < NGI_ARRAY_LEN(kernel_modes) ? kernel_modes[mode] : 0;
    if (kmode <= 0)
        return ngi_fail(err, errlen, "unknown memory mode %d", (int)mode);
    if (set_policy(sys, kmode, nodes) == 0) {
        res->mem_mode = mode;
        ngi_strlcpy(res->mem_mode_text, ng_mem_mode_name(mode), sizeof res->mem_mode_text);
        return 0;
    }
    int e = errno;
    if (e == EINVAL && mode == NG_MEM_MODE_PREFERRED_MANY) {
        /* Linux < 5.15: MPOL_PREFERRED takes one node; use the plan's first. */
        int node = ngi_mem_preferred_node(nodes, first);
        hwloc_bitmap_t one = hwloc_bitmap_alloc();
        if (!one)
            return ngi_fail(err, errlen, "out of memory");
        hwloc_bitmap_only(one, (unsigned)node);
        int rc = set_policy(sys, MPOL_PREFERRED, one);
        e = errno;
        if (rc == 0) {
            res->mem_mode = NG_MEM_MODE_PREFERRED_MANY;
            ngi_strlcpy(res->mem_mode_text, "preferred", sizeof res->mem_mode_text);
            if (hwloc_bitmap_weight(nodes) > 1) {
                char msg[160];
                snprintf(msg, sizeof msg, "MPOL_PREFERRED_MANY unsupported (Linux < 5.15): "
                         "preferring node %d only", node);
                ngi_result_warn(res, msg);
            }
        }
        hwloc_bitmap_free(one);
        return rc == 0 ? 0 : mempolicy_error(e, "preferred", nodes, err, errlen);
    }
    if (e == EINVAL && mode == NG_MEM_MODE_WEIGHTED) {
        if (strict)
            return ngi_fail(err, errlen, "weighted interleave needs Linux >= 6.9 "
                           "(set_mempolicy: EINVAL); strict: not falling back");
        if (set_policy(sys, MPOL_INTERLEAVE, nodes) != 0)
            return mempolicy_error(errno, "interleave", nodes, err, errlen);
        res->mem_mode = NG_MEM_MODE_INTERLEAVE;
        ngi_strlcpy(res->mem_mode_text, ng_mem_mode_name(NG_MEM_MODE_INTERLEAVE),
                   sizeof res->mem_mode_text);
        ngi_result_warn(res, "weighted interleave needs Linux >= 6.9: using plain interleave");
        return 0;
    }
    return mempolicy_error(e, ng_mem_mode_name(mode), nodes, err, errlen);
}

/* Restrict @p nodes to the task's allowed mems; warn if that drops nodes,
 * fail if nothing is left. Unknown allowed set: keep @p nodes as they are. */
int ngi_mem_clip_to_allowed(hwloc_bitmap_t nodes, ng_apply_result *res, char *err, size_t errlen)
{
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (!allowed)
        return ngi_fail(err, errlen, "out of memory");
    int rc = 0;
    if (mems_allowed(allowed) == 0 && !hwloc_bitmap_isincluded(nodes, allowed)) {
        char want[96], ok[96], msg[256];
        if (ng_list_format(nodes, want, sizeof want) < 0)
            ngi_strlcpy(want, "(long list)", sizeof want);
        if (ng_list_format(allowed, ok, sizeof ok) < 0)
            ngi_strlcpy(ok, "(long list)", sizeof ok);
        hwloc_bitmap_and(nodes, nodes, allowed);
        if (hwloc_bitmap_iszero(nodes)) {
            rc = ngi_fail(err, errlen, "memory nodes %s are all outside this task's "
                         "allowed nodes %s; memory policy not applied", want, ok);
        } else {
            snprintf(msg, sizeof msg, "memory nodes %s restricted to allowed nodes %s",
                     want, ok);
            ngi_result_warn(res, msg);
        }
    }
    hwloc_bitmap_free(allowed);
    return rc;
}

/* Does the kernel accept @p mode? The same call and node mask a task's
 * apply makes (set_policy through @p sys), in a forked child so that the
 * caller's own policy is never touched; the mask (the first node this
 * process may use) is built before the fork, the child only makes the
 * syscall. EINVAL is what the fallbacks above act on. */
int ngi_mem_mode_supported(const ngi_sys_ops *sys, ng_mem_mode mode)
{
    int kmode = (unsigned)mode < NGI_ARRAY_LEN(kernel_modes) ? kernel_modes[mode] : 0;
    unsigned long mask[NG_MASK_WORDS];
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (kmode <= 0 || !allowed) {
        hwloc_bitmap_free(allowed);
        return -1;
    }
    if (mems_allowed(allowed) < 0 || hwloc_bitmap_iszero(allowed))
        hwloc_bitmap_only(allowed, 0);
    hwloc_bitmap_only(allowed, (unsigned)hwloc_bitmap_first(allowed));
    bitmap_to_mask(allowed, mask);
    hwloc_bitmap_free(allowed);
    pid_t pid = fork();
    if (pid == 0) {
        long rc = sys_set_mempolicy(sys, kmode, mask, (unsigned long)NG_MASK_BITS + 1);
        _exit(rc == 0 ? 0 : errno == EINVAL ? 1 : 2);
    }
    int status = 0;
    if (pid < 0)
        return -1;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
        return -1;
    return WEXITSTATUS(status) == 0;
}
