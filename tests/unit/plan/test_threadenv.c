/* Thread environment: the variables --omp-guard sets (auto/N/off/force/bind,
 * custom lists), OMP_PLACES text and the admin's variable list parser. */
#include "private/cgroup.h"
#include "private/plan.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const defaults[] = {
    "OMP_NUM_THREADS",  "MKL_NUM_THREADS",        "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS",
};
#define NDEF 7

static void test_default_list(void)
{
    int same = 1;
    for (int i = 0; i < NDEF; i++)
        same = same && ngi_default_thread_vars[i] && strcmp(ngi_default_thread_vars[i], defaults[i]) == 0;
    ok(same && ngi_default_thread_vars[NDEF] == NULL,
       "default list is the 7 documented variables, NULL-terminated");
}

/* Expected: every count variable = value (overwrite = force, flagged
 * auto-derived for auto), then OMP_PROC_BIND = bind when bind != NULL. */
static int env_is(const ng_env_var *e, int n, const char *const *names, int nnames,
                  const char *value, const char *bind, int force, int is_auto)
{
    if (n != nnames + (bind ? 1 : 0))
        return 0;
    for (int i = 0; i < nnames; i++)
        if (strcmp(e[i].name, names[i]) || strcmp(e[i].value, value) || e[i].overwrite != force ||
            e[i].flags != (is_auto ? (unsigned)NG_ENV_COUNT_AUTO : 0u))
            return 0;
    if (!bind)
        return 1;
    return strcmp(e[nnames].name, "OMP_PROC_BIND") == 0 && strcmp(e[nnames].value, bind) == 0 &&
           e[nnames].overwrite == force && e[nnames].flags == NG_ENV_BINDING;
}

static const struct {
    const char *guard;  /* --omp-guard value */
    unsigned threads;   /* places the task owns */
    int smt;
    const char *value, *bind;   /* bind NULL: no OMP_PROC_BIND */
    int force, is_auto;
} cases[] = {
    {"auto", 8, 0, "8", NULL, 0, 1},
    {"auto", 16, 1, "16", NULL, 0, 1},
    {"auto,force", 4, 0, "4", NULL, 1, 1},
    {"force", 1, 0, "1", NULL, 1, 1},
    {"auto", 0, 0, "1", NULL, 0, 1},      /* no whole core: still one thread */
    {"2", 8, 0, "2", NULL, 0, 0},
    {"1,force", 56, 0, "1", NULL, 1, 0},
    {"65536", 1, 0, "65536", NULL, 0, 0},
    /* ,bind: OMP_PROC_BIND close with one thread per place, else spread */
    {"auto,bind", 8, 0, "8", "close", 0, 1},
    {"bind", 16, 1, "16", "close", 0, 1},
    {"2,bind", 8, 0, "2", "spread", 0, 0},
    {"8,bind", 8, 1, "8", "close", 0, 0},
    {"32,bind", 8, 0, "32", "spread", 0, 0},
    {"1,bind,force", 56, 0, "1", "spread", 1, 0},
    {"bind,force", 4, 0, "4", "close", 1, 1},
};

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ng_omp_guard g;
        ng_env_var e[NG_MAX_ENV];
        memset(e, 0x41, sizeof e);
        if (ng_omp_guard_parse(cases[i].guard, &g, NULL, 0) < 0) {
            ok(0, "guard '%s' parses", cases[i].guard);
            continue;
        }
        int n = ngi_thread_env(&g, cases[i].threads, cases[i].smt, NULL, e, NG_MAX_ENV);
        ok(env_is(e, n, defaults, NDEF, cases[i].value, cases[i].bind, cases[i].force,
                  cases[i].is_auto),
           "guard '%s' threads %u smt %d -> %s=%s ... OMP_PROC_BIND=%s force %d (n=%d)",
           cases[i].guard, cases[i].threads, cases[i].smt, defaults[0], cases[i].value,
           cases[i].bind ? cases[i].bind : "(none)", cases[i].force, n);
        for (int k = 0; k < n; k++)
            if (strcmp(e[k].name, "OMP_PLACES") == 0)
                ok(0, "guard '%s': OMP_PLACES is never in the plan's list", cases[i].guard);
    }
}

static void test_off_and_limits(void)
{
    ng_omp_guard off = {NG_OMP_OFF, 0, 0, 0}, aut = {NG_OMP_AUTO, 0, 0, 0};
    ng_omp_guard bnd = {NG_OMP_AUTO, 0, 0, 1};
    ng_env_var e[NG_MAX_ENV];
    ok(ngi_thread_env(&off, 8, 0, NULL, e, NG_MAX_ENV) == 0, "off -> no variables");
    ok(ngi_thread_env(&off, 8, 0, NULL, NULL, 0) == 0, "off needs no room");
    ok(ngi_thread_env(&aut, 8, 0, NULL, e, NDEF - 1) == -1, "max too small by one -> -1");
    ok(ngi_thread_env(&aut, 8, 0, NULL, e, NDEF) == NDEF, "max exactly enough -> %d", NDEF);
    ok(ngi_thread_env(&bnd, 8, 0, NULL, e, NDEF) == -1, "bind: max too small by one -> -1");
    ok(ngi_thread_env(&bnd, 8, 0, NULL, e, NDEF + 1) == NDEF + 1, "bind: max exactly enough");
    ok(ngi_thread_env(&aut, 8, 0, NULL, e, 0) == -1, "max 0 -> -1");
    ok(ngi_thread_env(NULL, 8, 0, NULL, e, NG_MAX_ENV) == -1, "NULL guard -> -1");
    ng_omp_guard zero = {NG_OMP_FIXED, 0, 0, 0};
    ok(ngi_thread_env(&zero, 8, 0, NULL, e, NG_MAX_ENV) == -1, "fixed 0 threads -> -1");
}

static void test_custom_vars(void)
{
    ng_omp_guard g = {NG_OMP_FIXED, 3, 1, 1};
    ng_env_var e[NG_MAX_ENV];
    const char *const one[] = {"OMP_NUM_THREADS", NULL};
    int n = ngi_thread_env(&g, 6, 1, one, e, NG_MAX_ENV);
    ok(env_is(e, n, one, 1, "3", "spread", 1, 0),
       "custom list {OMP_NUM_THREADS}, 3,bind,force: OMP_NUM_THREADS=3, OMP_PROC_BIND spread");
    const char *const none[] = {NULL};
    n = ngi_thread_env(&g, 3, 0, none, e, NG_MAX_ENV);
    ok(env_is(e, n, none, 0, "3", "close", 1, 0), "empty list: only OMP_PROC_BIND");
    /* Duplicates and place variables in a count list are dropped. */
    const char *const messy[] = {"TBB_NUM_THREADS", "OMP_PLACES", "TBB_NUM_THREADS",
                                 "OMP_PROC_BIND", "OMP_NUM_THREADS", NULL};
    const char *const clean[] = {"TBB_NUM_THREADS", "OMP_NUM_THREADS"};
    n = ngi_thread_env(&g, 3, 0, messy, e, NG_MAX_ENV);
    ok(env_is(e, n, clean, 2, "3", "close", 1, 0),
       "duplicates and OMP_PLACES/OMP_PROC_BIND in the count list are dropped (n=%d)", n);
}

/* OMP_PLACES text on real topologies: one place per core (its PUs), runs
 * written as intervals; smt: one place per PU. */
static void test_places(void)
{
    static const struct {
        const char *xml, *cpus;
        int smt;
        const char *want;
    } pc[] = {
        /* 2 sockets x 28 cores, SMT2 (PU i and i+112 on one core) */
        {"tests/topologies/xe8640-4xh100-spr8480-snc4.xml", "0-3,112-115", 0, "{0,112}:4"},
        {"tests/topologies/xe8640-4xh100-spr8480-snc4.xml", "0-3", 0, "{0}:4"},
        {"tests/topologies/xe8640-4xh100-spr8480-snc4.xml", "0-1,112-113", 0, "{0,112}:2"},
        {"tests/topologies/xe8640-4xh100-spr8480-snc4.xml", "0-1,112-113", 1, "{0}:2,{112}:2"},
        {"tests/topologies/xe8640-4xh100-spr8480-snc4.xml", "0,2,112", 0, "{0,112},{2}"},
        {"tests/topologies/xe8640-4xh100-spr8480-snc4.xml", "5", 1, "{5}"},
    };
    for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
        ng_topology *topo = NULL;
        ng_topology_options o;
        memset(&o, 0, sizeof o);
        o.xml_path = pc[i].xml;
        char err[256] = "", buf[256] = "";
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        int rc = -2;
        if (ng_topology_load(&topo, &o, err, sizeof err) == 0 &&
            ng_list_parse(pc[i].cpus, set, NG_MAX_PU_OS_INDEX, err, sizeof err) == 0)
            rc = ngi_omp_places_format(topo, set, pc[i].smt, buf, sizeof buf);
        ok(rc == (int)strlen(pc[i].want) && strcmp(buf, pc[i].want) == 0,
           "places of %s smt %d: '%s' (want '%s') %s", pc[i].cpus, pc[i].smt, buf, pc[i].want,
           err);
        char tiny[3];
        ok(topo && ngi_omp_places_format(topo, set, pc[i].smt, tiny, sizeof tiny) == -1 &&
           tiny[0] == '\0', "places of %s into 3 bytes: -1, empty", pc[i].cpus);
        hwloc_bitmap_free(set);
        ng_topology_free(topo);
    }
}

static void test_vars_parse(void)
{
    char names[8][64];
    const char *ptrs[9];
    char err[512];
    int rc = ng_thread_vars_parse("OMP_NUM_THREADS,MKL_NUM_THREADS,_X9", names, ptrs, 8, err,
                                  sizeof err);
    ok(rc == 0 && ptrs[0] && strcmp(ptrs[0], "OMP_NUM_THREADS") == 0 && ptrs[1] &&
           strcmp(ptrs[1], "MKL_NUM_THREADS") == 0 && ptrs[2] && strcmp(ptrs[2], "_X9") == 0 &&
           ptrs[3] == NULL,
       "three names parse, NULL-terminated");
    rc = ng_thread_vars_parse("A,B,A", names, ptrs, 8, err, sizeof err);
    ok(rc == 0 && strcmp(ptrs[0], "A") == 0 && strcmp(ptrs[1], "B") == 0 && ptrs[2] == NULL,
       "duplicates kept once");
    rc = ng_thread_vars_parse("A,B", names, ptrs, 2, err, sizeof err);
    ok(rc == 0 && ptrs[2] == NULL, "exactly max names fit");
    char n63[80];
    memset(n63, 'A', 63);
    n63[63] = '\0';
    rc = ng_thread_vars_parse(n63, names, ptrs, 8, err, sizeof err);
    ok(rc == 0 && strlen(ptrs[0]) == 63 && ptrs[1] == NULL, "a 63-character name is accepted");
    /* Parsed lists feed ngi_thread_env directly. */
    ng_omp_guard g = {NG_OMP_AUTO, 0, 0, 0};
    ng_env_var e[NG_MAX_ENV];
    ng_thread_vars_parse("OMP_NUM_THREADS,TBB_NUM_THREADS", names, ptrs, 8, NULL, 0);
    int n = ngi_thread_env(&g, 5, 0, ptrs, e, NG_MAX_ENV);
    ok(n == 2 && strcmp(e[1].name, "TBB_NUM_THREADS") == 0 && strcmp(e[1].value, "5") == 0,
       "parsed list drives ngi_thread_env");

    static const struct {
        const char *in;
        unsigned max;
        const char *want;
    } bad[] = {
        {NULL, 8, "empty list"},
        {"", 8, "empty list"},
        {"OMP_NUM_THREADS,", 8, "empty item"},
        {",OMP_NUM_THREADS", 8, "empty item"},
        {"A,,B", 8, "empty item"},
        {"omp_num_threads", 8, "invalid name 'omp_num_threads'"},
        {"OMP_NUM_THREADS,9X", 8, "invalid name '9X'"},
        {"A B", 8, "invalid name 'A B'"},
        {"A-B", 8, "invalid name 'A-B'"},
        {"A=1", 8, "invalid name 'A=1'"},
        {"A\nB", 8, "'A\\x0aB'"},
        {"A,B,C", 2, "more than 2 names"},
        {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 8,
         "invalid name 'AAAAAAAA"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ptrs[0] = "junk";
        rc = ng_thread_vars_parse(bad[i].in, names, ptrs, bad[i].max, err, sizeof err);
        ok(rc == -1 && ptrs[0] == NULL && strstr(err, "thread variable list: invalid value '") &&
               strstr(err, bad[i].want) && strstr(err, "expected a comma list of names") &&
               !strchr(err, '\n'),
           "vars list #%zu rejected: %s", i, err);
    }
    static char longv[NG_MAX_ARG + 8];
    memset(longv, 'A', sizeof longv - 1);
    for (size_t i = 8; i < sizeof longv - 1; i += 9)
        longv[i] = ',';
    rc = ng_thread_vars_parse(longv, names, ptrs, 8, err, sizeof err);
    ok(rc == -1 && strstr(err, "longer than 1024 bytes") && strlen(err) < 500,
       "over-long list rejected before parsing: %.80s...", err);
}

/* cgroup v2 cpu.max under a fake root: the smallest ceil(quota/period) on
 * the way from the process's cgroup up to the root. */
static void put(const char *root, const char *rel, const char *text)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    if (system(cmd) != 0)
        return;
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_quota(void)
{
    char root[] = "/tmp/ng-quota-XXXXXX";
    if (!ok(mkdtemp(root) != NULL, "temporary root"))
        return;
    unsigned q = 99;
    ok(ngi_cgroup_cpu_quota(root, &q) == 0 && q == 0, "no /proc/self/cgroup: no quota");
    put(root, "/proc/self/cgroup", "12:cpu,cpuacct:/x\n0::/job/step/task_0\n");
    ok(ngi_cgroup_cpu_quota(root, &q) == 0 && q == 0, "no cpu.max files: no quota");
    put(root, "/sys/fs/cgroup/job/step/task_0/cpu.max", "max 100000\n");
    put(root, "/sys/fs/cgroup/job/step/cpu.max", "250000 100000\n");
    ok(ngi_cgroup_cpu_quota(root, &q) == 1 && q == 3, "step 2.5 CPUs: 3 (got %u)", q);
    put(root, "/sys/fs/cgroup/job/cpu.max", "100000 100000\n");
    ok(ngi_cgroup_cpu_quota(root, &q) == 1 && q == 1, "the job's 1 CPU is smaller: 1 (got %u)", q);
    put(root, "/sys/fs/cgroup/job/cpu.max", "max 100000\n");
    put(root, "/sys/fs/cgroup/cpu.max", "50000 100000\n");
    ok(ngi_cgroup_cpu_quota(root, &q) == 1 && q == 1, "root 0.5 CPU: 1 (got %u)", q);
    put(root, "/sys/fs/cgroup/cpu.max", "garbage\n");
    ok(ngi_cgroup_cpu_quota(root, &q) == 1 && q == 3, "malformed file ignored: 3 (got %u)", q);
    put(root, "/proc/self/cgroup", "0::/../../etc\n");
    ok(ngi_cgroup_cpu_quota(root, &q) == 0 && q == 0, "a path with .. is refused");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ok(system(cmd) == 0, "cleanup");
}

int main(void)
{
    test_default_list();
    test_cases();
    test_off_and_limits();
    test_custom_vars();
    test_places();
    test_quota();
    test_vars_parse();
    return tap_done();
}
