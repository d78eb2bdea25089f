/* ng_apply_task / ng_task_describe on the live machine: each case applies a
 * plan in a forked child, which reports what the kernel then says
 * (/proc/self/status Cpus_allowed_list, get_mempolicy) and the env it got.
 * Old-kernel fallbacks and EPERM are simulated through the syscall seam. */
#include "private/plan.h"
#include "private/task.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The syscalls the next cases run with (lib/private/sysops.h); NULL = the real
 * ones. A table of this test's own, passed to ngi_apply_task_sys. */
static const ngi_sys_ops *case_sys;

/* ---- a tiny environment for ng_env_ops ---- */
typedef struct env_store {
    unsigned n;
    char names[64][64];
    char values[64][NG_MAX_ARG];
} env_store;

static int env_find(env_store *e, const char *name)
{
    for (unsigned i = 0; i < e->n; i++)
        if (strcmp(e->names[i], name) == 0)
            return (int)i;
    return -1;
}

static int env_is_set(void *ctx, const char *name)
{
    return env_find(ctx, name) >= 0;
}

static int env_set(void *ctx, const char *name, const char *value)
{
    env_store *e = ctx;
    int i = env_find(e, name);
    if (i < 0) {
        if (e->n >= 64)
            return -1;
        i = (int)e->n++;
        ngi_strlcpy(e->names[i], name, sizeof e->names[i]);
    }
    ngi_strlcpy(e->values[i], value, sizeof e->values[i]);
    return 0;
}

static const char *env_get(env_store *e, const char *name)
{
    int i = env_find(e, name);
    return i < 0 ? NULL : e->values[i];
}

static int env_copy(void *ctx, const char *name, char *buf, size_t len)
{
    const char *v = env_get(ctx, name);
    if (!v)
        return -1;
    ngi_strlcpy(buf, v, len);
    return 0;
}

/* ---- what the child reports ---- */
typedef struct report {
    int rc;
    char err[512];
    char cpus[256];        /* Cpus_allowed_list after apply */
    int mode;              /* get_mempolicy mode after apply */
    char mems[256];        /* its nodes */
    ng_apply_result res;
    char line[1024];       /* ng_task_describe */
    env_store env;
} report;

static void read_cpus_allowed(char *buf, size_t len)
{
    char status[8192];
    buf[0] = '\0';
    if (ngi_read_small_file("/proc/self/status", status, sizeof status) < 0)
        return;
    const char *p = strstr(status, "Cpus_allowed_list:");
    if (!p)
        return;
    p += strlen("Cpus_allowed_list:");
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strcspn(p, "\n");
    if (n >= len)
        n = len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

#define MASK_WORDS ((NG_MAX_NUMA_OS_INDEX + 1) / (8 * sizeof(unsigned long)) + 1)

static void read_mempolicy(int *mode, char *buf, size_t len)
{
    unsigned long mask[MASK_WORDS];
    memset(mask, 0, sizeof mask);
    *mode = -1;
    buf[0] = '\0';
    if (syscall(SYS_get_mempolicy, mode, mask, (unsigned long)NG_MAX_NUMA_OS_INDEX + 2,
                NULL, 0UL) != 0)
        return;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (unsigned i = 0; i <= NG_MAX_NUMA_OS_INDEX; i++)
        if (mask[i / (8 * sizeof(unsigned long))] & (1ul << (i % (8 * sizeof(unsigned long)))))
            hwloc_bitmap_set(set, i);
    ng_list_format(set, buf, len);
    hwloc_bitmap_free(set);
}

typedef struct apply_case {
    const ng_topology *topo;
    const ng_plan *plan;
    unsigned local_id;
    ng_policy pol;
    unsigned flags;
    const char *preset_name;    /* a value the "user" set before */
    const char *preset_value;
} apply_case;

/* Fork, apply in the child, ship the report back through a pipe. */
static int run_case(const apply_case *c, report *r)
{
    int fd[2];
    memset(r, 0, sizeof *r);
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fd[0]);
        report *me = calloc(1, sizeof *me);
        if (!me)
            _exit(2);
        if (c->preset_name)
            env_set(&me->env, c->preset_name, c->preset_value);
        ng_env_ops ops = {env_is_set, env_set, &me->env, env_copy};
        me->rc = ngi_apply_task_sys(case_sys, c->topo, c->plan, c->local_id, &c->pol, c->flags, &ops,
                               &me->res, me->err, sizeof me->err);
        read_cpus_allowed(me->cpus, sizeof me->cpus);
        read_mempolicy(&me->mode, me->mems, sizeof me->mems);
        ng_task_describe(c->topo, c->plan, c->local_id, 3, &me->res, me->line,
                         sizeof me->line);
        const char *p = (const char *)me;
        size_t left = sizeof *me;
        while (left) {
            ssize_t w = write(fd[1], p, left);
            if (w <= 0)
                _exit(3);
            p += w;
            left -= (size_t)w;
        }
        _exit(0);
    }
    close(fd[1]);
    char *p = (char *)r;
    size_t left = sizeof *r;
    while (left) {
        ssize_t got = read(fd[0], p, left);
        if (got <= 0)
            break;
        p += got;
        left -= (size_t)got;
    }
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    return (left == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) ? 0 : -1;
}

/* ---- simulated kernels ---- */
static long real_set_mempolicy(int mode, const unsigned long *mask, unsigned long maxnode)
{
    return syscall(SYS_set_mempolicy, mode, mask, maxnode);
}
static long old_kernel(int mode, const unsigned long *mask, unsigned long maxnode)
{
    if (mode == 5 || mode == 6) {   /* Linux < 5.15 knows neither */
        errno = EINVAL;
        return -1;
    }
    return real_set_mempolicy(mode, mask, maxnode);
}
static long no_cap(int mode, const unsigned long *mask, unsigned long maxnode)
{
    (void)mode; (void)mask; (void)maxnode;
    errno = EPERM;
    return -1;
}

static ng_plan *make_plan(const ng_topology *topo, unsigned ntasks, const char *policy,
                          const char *omp, ng_policy *pol_out)
{
    char err[512] = "";
    ng_plan_request req;
    memset(&req, 0, sizeof req);
    req.ntasks = ntasks;
    if (ng_policy_parse(policy, &req.policy, err, sizeof err) < 0 ||
        ng_omp_guard_parse(omp, &req.omp, err, sizeof err) < 0) {
        tap_diag("parse %s / %s: %s", policy, omp ? omp : "(null)", err);
        return NULL;
    }
    if (!omp)
        req.omp.mode = NG_OMP_OFF;
    *pol_out = req.policy;
    ng_plan *plan = NULL;
    if (ng_plan_compute(topo, &req, &plan, err, sizeof err) < 0)
        tap_diag("plan %s: %s", policy, err);
    return plan;
}

static const char *s(const char *v)
{
    return v ? v : "(unset)";
}

/* Expected values of one task of a plan. */
static void expect_lists(const ng_plan *plan, unsigned id, char *cpus, char *mems, size_t len)
{
    const ng_task_plan *tp = ng_plan_task(plan, id);
    ng_list_format(tp->cpus, cpus, len);
    ng_list_format(tp->mem_nodes, mems, len);
}

static void test_policy_modes(const ng_topology *topo, unsigned ntasks, const char *orig_cpus)
{
    int ran; /* run before ok(): argument evaluation order is unspecified */
    static const struct { const char *policy; int kmode; const char *text; } cases[] = {
        {"local", 2, "bind"},
        {"prefer", 5, "preferred_many"},
        {"interleave", 3, "interleave"},
        {"weighted", 6, "weighted_interleave"},
    };
    for (size_t i = 0; i < NGI_ARRAY_LEN(cases); i++) {
        apply_case c = {topo, NULL, ntasks - 1, {0}, 0, NULL, NULL};
        ng_plan *plan = make_plan(topo, ntasks, cases[i].policy, NULL, &c.pol);
        if (!ok(plan != NULL, "%s: plan computed", cases[i].policy))
            continue;
        c.plan = plan;
        char ecpus[256], emems[256];
        expect_lists(plan, c.local_id, ecpus, emems, sizeof ecpus);
        report r;
        ran = run_case(&c, &r) == 0;
        ok(ran && r.rc == 0, "%s: applied (%s)", cases[i].policy, r.err);
        ok(strcmp(r.cpus, ecpus) == 0 && strcmp(r.cpus, orig_cpus) != 0,
           "%s: Cpus_allowed_list '%s' == plan '%s' (was '%s')", cases[i].policy, r.cpus,
           ecpus, orig_cpus);
        ok(r.mode == cases[i].kmode && strcmp(r.mems, emems) == 0,
           "%s: get_mempolicy mode %d nodes '%s' (want %d '%s')", cases[i].policy, r.mode,
           r.mems, cases[i].kmode, emems);
        ok(strcmp(s(env_get(&r.env, "NUMAGUARD_CPUS")), ecpus) == 0 &&
           strcmp(s(env_get(&r.env, "NUMAGUARD_MEMS")), emems) == 0 &&
           strcmp(s(env_get(&r.env, "NUMAGUARD_MEM_MODE")), cases[i].text) == 0 &&
           strcmp(s(env_get(&r.env, "NUMAGUARD_GPUS")), "") == 0 &&
           strcmp(s(env_get(&r.env, "NUMAGUARD_POLICY")), cases[i].policy) == 0,
           "%s: NUMAGUARD_* = cpus '%s' mems '%s' mode '%s' gpus '%s' policy '%s'",
           cases[i].policy, s(env_get(&r.env, "NUMAGUARD_CPUS")),
           s(env_get(&r.env, "NUMAGUARD_MEMS")), s(env_get(&r.env, "NUMAGUARD_MEM_MODE")),
           s(env_get(&r.env, "NUMAGUARD_GPUS")), s(env_get(&r.env, "NUMAGUARD_POLICY")));
        ok(r.res.cpus_applied && r.res.mem_applied && r.res.warning[0] == '\0',
           "%s: result says applied, no warning ('%s')", cases[i].policy, r.res.warning);
        ng_plan_free(plan);
    }
}

static void test_fallbacks(const ng_topology *topo, unsigned ntasks, const char *orig_cpus)
{
    int ran; /* run before ok(): argument evaluation order is unspecified */
    apply_case c = {topo, NULL, 0, {0}, 0, NULL, NULL};
    report r;
    char ecpus[256], emems[256];
    static const ngi_sys_ops old = {.set_mempolicy = old_kernel};
    static const ngi_sys_ops eperm = {.set_mempolicy = no_cap};
    case_sys = &old;

    ng_plan *plan = make_plan(topo, ntasks, "prefer", NULL, &c.pol);
    c.plan = plan;
    expect_lists(plan, 0, ecpus, emems, sizeof ecpus);
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 && r.mode == 1 &&
       strcmp(r.mems, emems) == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_MEM_MODE")), "preferred") == 0,
       "prefer on Linux < 5.15: MPOL_PREFERRED (mode %d nodes '%s', env mode '%s')", r.mode,
       r.mems, s(env_get(&r.env, "NUMAGUARD_MEM_MODE")));
    ok(strstr(r.line, " mem preferred:") != NULL, "describe shows the fallback: %s", r.line);
    ng_plan_free(plan);

    plan = make_plan(topo, ntasks, "weighted", NULL, &c.pol);
    c.plan = plan;
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 && r.mode == 3 && strcmp(r.mems, emems) == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_MEM_MODE")), "interleave") == 0 &&
       strstr(r.res.warning, "6.9") != NULL,
       "weighted on Linux < 6.9: interleave + warning (mode %d, '%s')", r.mode, r.res.warning);
    ng_plan_free(plan);

    plan = make_plan(topo, ntasks, "weighted,strict", NULL, &c.pol);
    c.plan = plan;
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == -1 && strstr(r.err, "6.9") != NULL,
       "weighted,strict on Linux < 6.9 fails: %s", r.err);
    ok(strcmp(r.cpus, orig_cpus) == 0 && r.mode == 0 && env_get(&r.env, "NUMAGUARD_CPUS") == NULL,
       "failed apply restores affinity '%s', mode %d, exports nothing", r.cpus, r.mode);
    ng_plan_free(plan);

    /* EPERM (a container without CAP_SYS_NICE): the memory part alone is
     * dropped; the CPU binding and the variables stay, with a warning. */
    case_sys = &eperm;
    plan = make_plan(topo, ntasks, "local", NULL, &c.pol);
    c.plan = plan;
    expect_lists(plan, c.local_id, ecpus, emems, sizeof ecpus);
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 && strstr(r.res.warning, "EPERM") != NULL &&
       strstr(r.res.warning, "CPU binding and variables kept") != NULL,
       "EPERM without strict: applied with a warning (rc %d, '%s')", r.rc, r.res.warning);
    ok(strcmp(r.cpus, ecpus) == 0 && r.res.cpus_applied && !r.res.mem_applied && r.mode == 0,
       "EPERM: CPU binding kept '%s' (plan '%s'), memory policy default (mode %d)", r.cpus,
       ecpus, r.mode);
    ok(strcmp(s(env_get(&r.env, "NUMAGUARD_CPUS")), ecpus) == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_MEMS")), "") == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_MEM_MODE")), "none") == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_POLICY")), "local") == 0,
       "EPERM: variables set (cpus '%s', mems '%s', mode '%s', policy '%s')",
       s(env_get(&r.env, "NUMAGUARD_CPUS")), s(env_get(&r.env, "NUMAGUARD_MEMS")),
       s(env_get(&r.env, "NUMAGUARD_MEM_MODE")), s(env_get(&r.env, "NUMAGUARD_POLICY")));
    ng_plan_free(plan);
    plan = make_plan(topo, ntasks, "local,strict", NULL, &c.pol);
    c.plan = plan;
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == -1 && strstr(r.err, "EPERM") != NULL &&
       strcmp(r.cpus, orig_cpus) == 0 && env_get(&r.env, "NUMAGUARD_CPUS") == NULL,
       "EPERM with strict: error '%s', affinity back to '%s', nothing exported", r.err, r.cpus);
    ng_plan_free(plan);
    case_sys = NULL;
}

/* ,bind: OMP_PROC_BIND + explicit OMP_PLACES of the bound CPUs, and only
 * when the task was bound (not policy none, not plan only, not --cpu-bind). */
static void test_env_bind(const ng_topology *topo, unsigned ntasks)
{
    int ran; /* run before ok(): argument evaluation order is unspecified */
    apply_case c = {topo, NULL, 0, {0}, 0, NULL, NULL};
    report r;
    ng_plan *plan = make_plan(topo, ntasks, "local", "auto,bind", &c.pol);
    c.plan = plan;
    char want[NG_MAX_ARG * 4];
    ngi_omp_places_format(topo, ng_plan_task(plan, 0)->cpus, 0, want, sizeof want);
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 && strcmp(s(env_get(&r.env, "OMP_PROC_BIND")), "close") == 0 &&
       want[0] == '{' && strcmp(s(env_get(&r.env, "OMP_PLACES")), want) == 0,
       "auto,bind: OMP_PROC_BIND=%s OMP_PLACES=%s (want close, %s)",
       s(env_get(&r.env, "OMP_PROC_BIND")), s(env_get(&r.env, "OMP_PLACES")), want);
    static const struct { const char *policy; unsigned flags; const char *what; } no[] = {
        {"none", 0, "policy none"},
        {"local", NG_APPLY_SKIP_SYSCALLS, "plan only"},
        {"local", NG_APPLY_KEEP_CPUS, "user --cpu-bind"},
    };
    for (size_t i = 0; i < NGI_ARRAY_LEN(no); i++) {
        ng_plan_free(plan);
        plan = make_plan(topo, ntasks, no[i].policy, "auto,bind", &c.pol);
        c.plan = plan;
        c.flags = no[i].flags;
        ran = run_case(&c, &r) == 0;
        ok(ran && r.rc == 0 && env_get(&r.env, "OMP_PROC_BIND") == NULL &&
           env_get(&r.env, "OMP_PLACES") == NULL && env_get(&r.env, "OMP_NUM_THREADS") != NULL,
           "auto,bind with %s: no OMP_PROC_BIND (%s) / OMP_PLACES (%s), OMP_NUM_THREADS=%s",
           no[i].what, s(env_get(&r.env, "OMP_PROC_BIND")), s(env_get(&r.env, "OMP_PLACES")),
           s(env_get(&r.env, "OMP_NUM_THREADS")));
    }
    ng_plan_free(plan);
}

static void test_env(const ng_topology *topo, unsigned ntasks)
{
    int ran; /* run before ok(): argument evaluation order is unspecified */
    apply_case c = {topo, NULL, 0, {0}, 0, "OMP_NUM_THREADS", "7"};
    report r;
    ng_plan *plan = make_plan(topo, ntasks, "local", "auto", &c.pol);
    c.plan = plan;
    const ng_task_plan *tp = ng_plan_task(plan, 0);
    char want[32];
    snprintf(want, sizeof want, "%u", tp->threads);
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 &&
       strcmp(s(env_get(&r.env, "OMP_NUM_THREADS")), "7") == 0 &&
       strcmp(s(env_get(&r.env, "MKL_NUM_THREADS")), want) == 0,
       "omp-guard auto keeps user OMP_NUM_THREADS=%s, sets MKL_NUM_THREADS=%s (want 7, %s)",
       s(env_get(&r.env, "OMP_NUM_THREADS")), s(env_get(&r.env, "MKL_NUM_THREADS")), want);
    ok(strcmp(r.res.kept, "OMP_NUM_THREADS=7") == 0 &&
       strstr(r.line, "(kept OMP_NUM_THREADS=7)") != NULL,
       "kept value named once: res '%s', line: %s", r.res.kept, r.line);
    ng_plan_free(plan);

    plan = make_plan(topo, ntasks, "local", "auto,force", &c.pol);
    c.plan = plan;
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 &&
       strcmp(s(env_get(&r.env, "OMP_NUM_THREADS")), want) == 0,
       "omp-guard auto,force overwrites OMP_NUM_THREADS: %s (want %s)",
       s(env_get(&r.env, "OMP_NUM_THREADS")), want);
    ng_plan_free(plan);

    c.preset_name = NULL;
    plan = make_plan(topo, ntasks, "local", "3", &c.pol);
    c.plan = plan;
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 &&
       strcmp(s(env_get(&r.env, "OMP_NUM_THREADS")), "3") == 0 &&
       env_get(&r.env, "OMP_PLACES") == NULL && env_get(&r.env, "OMP_PROC_BIND") == NULL &&
       r.res.threads == 3 && strstr(r.line, " threads 3") != NULL,
       "omp-guard 3: OMP_NUM_THREADS=%s, no OMP_PLACES (%s) / OMP_PROC_BIND (%s); line: %s",
       s(env_get(&r.env, "OMP_NUM_THREADS")), s(env_get(&r.env, "OMP_PLACES")),
       s(env_get(&r.env, "OMP_PROC_BIND")), r.line);
    ng_plan_free(plan);

    test_env_bind(topo, ntasks);

    plan = make_plan(topo, ntasks, "local", NULL, &c.pol);
    c.plan = plan;
    ran = run_case(&c, &r) == 0;
    ok(ran && env_get(&r.env, "OMP_NUM_THREADS") == NULL,
       "no omp-guard: OMP_NUM_THREADS not set");
    ng_plan_free(plan);
}

static void test_flags(const ng_topology *topo, unsigned ntasks, const char *orig_cpus)
{
    int ran; /* run before ok(): argument evaluation order is unspecified */
    apply_case c = {topo, NULL, ntasks - 1, {0}, NG_APPLY_SKIP_SYSCALLS, NULL, NULL};
    report r;
    char ecpus[256], emems[256], want[1024];
    ng_plan *plan = make_plan(topo, ntasks, "local", NULL, &c.pol);
    c.plan = plan;
    expect_lists(plan, c.local_id, ecpus, emems, sizeof ecpus);
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 && strcmp(r.cpus, orig_cpus) == 0 && r.mode == 0 &&
       !r.res.cpus_applied && !r.res.mem_applied,
       "SKIP_SYSCALLS: affinity stays '%s', mode %d", r.cpus, r.mode);
    ok(strcmp(s(env_get(&r.env, "NUMAGUARD_CPUS")), ecpus) == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_MEM_MODE")), "bind") == 0,
       "SKIP_SYSCALLS: NUMAGUARD_CPUS '%s' is the plan's '%s'",
       s(env_get(&r.env, "NUMAGUARD_CPUS")), ecpus);
    /* No --omp-guard: no "threads" (it names what was exported). */
    snprintf(want, sizeof want, "numaguard: rank 3 (local %u): gpus none numa 0 cpus %s "
             "mem bind:%s (plan only)", c.local_id, ecpus, emems);
    ok(strcmp(r.line, want) == 0, "describe: '%s' (want '%s')", r.line, want);

    c.flags = NG_APPLY_KEEP_CPUS;
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 && strcmp(r.cpus, orig_cpus) == 0 && r.mode == 2 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_CPUS")), orig_cpus) == 0 &&
       strstr(r.line, "(cpus kept from --cpu-bind)") != NULL,
       "KEEP_CPUS: affinity '%s' kept, mode %d, NUMAGUARD_CPUS '%s', line '%s'", r.cpus,
       r.mode, s(env_get(&r.env, "NUMAGUARD_CPUS")), r.line);
    ng_plan_free(plan);

    c.flags = 0;
    plan = make_plan(topo, ntasks, "none", "auto", &c.pol);
    c.plan = plan;
    ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 && strcmp(r.cpus, orig_cpus) == 0 && r.mode == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_MEM_MODE")), "none") == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_MEMS")), "") == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_CPUS")), orig_cpus) == 0 &&
       env_get(&r.env, "OMP_NUM_THREADS") != NULL,
       "policy none: nothing bound, NUMAGUARD_CPUS '%s', OMP_NUM_THREADS %s",
       s(env_get(&r.env, "NUMAGUARD_CPUS")), s(env_get(&r.env, "OMP_NUM_THREADS")));
    ng_plan_free(plan);
}

/* Plan only on an XML with GPUs: GPU bus ids and GPU-local nodes reach the env. */
static void test_gpu_xml(void)
{
    char err[512] = "";
    ng_topology *topo = NULL;
    ng_topology_options opts;
    memset(&opts, 0, sizeof opts);
    opts.xml_path = "tests/topologies/corona-naples-4xmi50-opencl.xml";
    if (!ok(ng_topology_load(&topo, &opts, err, sizeof err) == 0 && ng_topology_gpu_count(topo) == 4,
            "corona XML loads with 4 GPUs (%s)", topo ? "ok" : err)) {
        ng_topology_free(topo);
        return;
    }
    unsigned count[4] = {1, 1, 1, 1}, offset[4] = {0, 1, 2, 3};
    int gpus[4] = {0, 1, 2, 3};
    ng_plan_request req;
    memset(&req, 0, sizeof req);
    req.ntasks = 4;
    req.task_gpu_count = count;
    req.task_gpu_offset = offset;
    req.task_gpus = gpus;
    /* -c 12 = 6 cores, the GPU's own node (without -c the planner shares
     * out the whole node: 12 cores, nodes 2-3 for this task). */
    req.cpus_per_task = 12;
    ng_policy_parse("local", &req.policy, NULL, 0);
    req.omp.mode = NG_OMP_OFF;
    ng_plan *plan = NULL;
    if (!ok(ng_plan_compute(topo, &req, &plan, err, sizeof err) == 0, "corona plan (%s)", err)) {
        ng_topology_free(topo);
        return;
    }
    apply_case c = {topo, plan, 1, req.policy, NG_APPLY_SKIP_SYSCALLS, NULL, NULL};
    report r;
    int ran = run_case(&c, &r) == 0;
    ok(ran && r.rc == 0 && strcmp(s(env_get(&r.env, "NUMAGUARD_GPUS")), "0000:23:00.0") == 0 &&
       strcmp(s(env_get(&r.env, "NUMAGUARD_MEMS")), "2") == 0,
       "corona task 1: NUMAGUARD_GPUS '%s' MEMS '%s' (want 0000:23:00.0, 2)",
       s(env_get(&r.env, "NUMAGUARD_GPUS")), s(env_get(&r.env, "NUMAGUARD_MEMS")));
    ok(strstr(r.line, "numaguard: rank 3 (local 1): gpus 0000:23:00.0 numa 2 cpus ") == r.line &&
       strstr(r.line, " mem bind:2 (plan only)"),
       "corona describe: %s", r.line);
    ng_plan_free(plan);
    ng_topology_free(topo);
}

int main(void)
{
    char err[512] = "", orig[256];
    ng_topology *topo = NULL;
    ng_topology_options opts;
    memset(&opts, 0, sizeof opts);
    if (!ok(ng_topology_load(&topo, &opts, err, sizeof err) == 0, "live topology (%s)",
            topo ? "ok" : err))
        return tap_done();
    read_cpus_allowed(orig, sizeof orig);
    unsigned ncpus = (unsigned)hwloc_bitmap_weight(ng_topology_allowed_cpus(topo));
    /* Two tasks on a machine with >= 2 cores: each gets a strict subset. */
    unsigned ntasks = ncpus >= 2 ? 2 : 1;
    tap_diag("allowed cpus '%s', %u tasks", orig, ntasks);
    if (ntasks < 2) {
        tap_diag("one CPU only: affinity cases cannot show a change");
        return tap_done();
    }
    /* qemu-user has no set_mempolicy (ENOSYS): the cases that read the
     * kernel's memory policy back cannot run there (the rest can). */
    errno = 0;
    if (syscall(SYS_set_mempolicy, 0, NULL, 0UL) != 0 && errno == ENOSYS) {
        const char *why = "set_mempolicy is ENOSYS here (%s): the memory policy cannot be read back";
        const char *where = tap_emulated() ? tap_emulated() : "no NUMA support";
        tap_skip("policy modes", why, where);
        tap_skip("old-kernel fallbacks and EPERM", why, where);
        tap_skip("apply flags", why, where);
    } else {
        test_policy_modes(topo, ntasks, orig);
        test_fallbacks(topo, ntasks, orig);
        test_flags(topo, ntasks, orig);
    }
    test_env(topo, ntasks);
    test_gpu_xml();

    ng_policy pol;
    ng_plan *plan = make_plan(topo, ntasks, "local", NULL, &pol);
    char line[16];
    ok(ng_task_describe(topo, plan, 0, 0, NULL, line, sizeof line) == -1 && strlen(line) == 15,
       "describe truncates safely into a short buffer ('%s')", line);
    ok(ng_task_describe(topo, plan, 99, 0, NULL, line, sizeof line) == -1,
       "describe of a task not in the plan fails");
    ng_apply_result res;
    env_store env;
    memset(&env, 0, sizeof env);
    ng_env_ops ops = {env_is_set, env_set, &env, env_copy};
    ok(ng_apply_task(topo, plan, 5, &pol, 0, &ops, &res, err, sizeof err) == -1 &&
       strstr(err, "no plan") != NULL, "apply of a task not in the plan fails: %s", err);
    ng_plan_free(plan);
    ng_topology_free(topo);
    return tap_done();
}
