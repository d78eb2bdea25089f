/* Thread environment: the variables --omp-guard sets (auto/N/off/force, smt,
 * custom lists) and the admin's variable list parser. */
#include "numaguard.h"
#include "tap.h"

#include <string.h>

static const char *const defaults[] = {
    "OMP_NUM_THREADS",  "MKL_NUM_THREADS",        "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS",
};
#define NDEF 7

static void test_default_list(void)
{
    int same = 1;
    for (int i = 0; i < NDEF; i++)
        same = same && ng_default_thread_vars[i] && strcmp(ng_default_thread_vars[i], defaults[i]) == 0;
    ok(same && ng_default_thread_vars[NDEF] == NULL,
       "default list is the 7 documented variables, NULL-terminated");
}

/* Expected: every count variable = value, then OMP_PLACES and OMP_PROC_BIND,
 * all with overwrite = force. */
static int env_is(const ng_env_var *e, int n, const char *const *names, int nnames,
                  const char *value, const char *places, const char *bind, int force)
{
    if (n != nnames + 2)
        return 0;
    for (int i = 0; i < nnames; i++)
        if (strcmp(e[i].name, names[i]) || strcmp(e[i].value, value) || e[i].overwrite != force)
            return 0;
    return strcmp(e[nnames].name, "OMP_PLACES") == 0 && strcmp(e[nnames].value, places) == 0 &&
           e[nnames].overwrite == force && strcmp(e[nnames + 1].name, "OMP_PROC_BIND") == 0 &&
           strcmp(e[nnames + 1].value, bind) == 0 && e[nnames + 1].overwrite == force;
}

static const struct {
    const char *guard;  /* --omp-guard value */
    unsigned threads;   /* places the task owns */
    int smt;
    const char *value, *places, *bind;
    int force;
} cases[] = {
    {"auto", 8, 0, "8", "cores", "close", 0},
    {"auto", 16, 1, "16", "threads", "close", 0},
    {"auto,force", 4, 0, "4", "cores", "close", 1},
    {"force", 1, 0, "1", "cores", "close", 1},
    {"auto", 0, 0, "1", "cores", "close", 0},      /* no whole core: still one thread */
    {"2", 8, 0, "2", "cores", "spread", 0},         /* fewer than places: spread them */
    {"8", 8, 1, "8", "threads", "close", 0},
    {"32", 8, 0, "32", "cores", "spread", 0},       /* oversubscribed: spread */
    {"1,force", 56, 0, "1", "cores", "spread", 1},
    {"65536", 1, 0, "65536", "cores", "spread", 0},
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
        int n = ng_thread_env(&g, cases[i].threads, cases[i].smt, NULL, e, NG_MAX_ENV);
        ok(env_is(e, n, defaults, NDEF, cases[i].value, cases[i].places, cases[i].bind,
                  cases[i].force),
           "guard '%s' threads %u smt %d -> %s=%s ... OMP_PLACES=%s OMP_PROC_BIND=%s force %d "
           "(n=%d)", cases[i].guard, cases[i].threads, cases[i].smt, defaults[0],
           cases[i].value, cases[i].places, cases[i].bind, cases[i].force, n);
    }
}

static void test_off_and_limits(void)
{
    ng_omp_guard off = {NG_OMP_OFF, 0, 0}, aut = {NG_OMP_AUTO, 0, 0};
    ng_env_var e[NG_MAX_ENV];
    ok(ng_thread_env(&off, 8, 0, NULL, e, NG_MAX_ENV) == 0, "off -> no variables");
    ok(ng_thread_env(&off, 8, 0, NULL, NULL, 0) == 0, "off needs no room");
    ok(ng_thread_env(&aut, 8, 0, NULL, e, NDEF + 1) == -1, "max too small by one -> -1");
    ok(ng_thread_env(&aut, 8, 0, NULL, e, NDEF + 2) == NDEF + 2, "max exactly enough -> %d",
       NDEF + 2);
    ok(ng_thread_env(&aut, 8, 0, NULL, e, 0) == -1, "max 0 -> -1");
    ok(ng_thread_env(NULL, 8, 0, NULL, e, NG_MAX_ENV) == -1, "NULL guard -> -1");
    ng_omp_guard zero = {NG_OMP_FIXED, 0, 0};
    ok(ng_thread_env(&zero, 8, 0, NULL, e, NG_MAX_ENV) == -1, "fixed 0 threads -> -1");
}

static void test_custom_vars(void)
{
    ng_omp_guard g = {NG_OMP_FIXED, 3, 1};
    ng_env_var e[NG_MAX_ENV];
    const char *const one[] = {"OMP_NUM_THREADS", NULL};
    int n = ng_thread_env(&g, 6, 1, one, e, NG_MAX_ENV);
    ok(env_is(e, n, one, 1, "3", "threads", "spread", 1),
       "custom list {OMP_NUM_THREADS}: 3 entries, OMP_NUM_THREADS=3 places threads spread");
    const char *const none[] = {NULL};
    n = ng_thread_env(&g, 3, 0, none, e, NG_MAX_ENV);
    ok(env_is(e, n, none, 0, "3", "cores", "close", 1), "empty list: only OMP_PLACES/PROC_BIND");
    /* Duplicates and place variables in a count list are dropped. */
    const char *const messy[] = {"TBB_NUM_THREADS", "OMP_PLACES", "TBB_NUM_THREADS",
                                 "OMP_PROC_BIND", "OMP_NUM_THREADS", NULL};
    const char *const clean[] = {"TBB_NUM_THREADS", "OMP_NUM_THREADS"};
    n = ng_thread_env(&g, 3, 0, messy, e, NG_MAX_ENV);
    ok(env_is(e, n, clean, 2, "3", "cores", "close", 1),
       "duplicates and OMP_PLACES/OMP_PROC_BIND in the count list are dropped (n=%d)", n);
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
    /* Parsed lists feed ng_thread_env directly. */
    ng_omp_guard g = {NG_OMP_AUTO, 0, 0};
    ng_env_var e[NG_MAX_ENV];
    ng_thread_vars_parse("OMP_NUM_THREADS,TBB_NUM_THREADS", names, ptrs, 8, NULL, 0);
    int n = ng_thread_env(&g, 5, 0, ptrs, e, NG_MAX_ENV);
    ok(n == 4 && strcmp(e[1].name, "TBB_NUM_THREADS") == 0 && strcmp(e[1].value, "5") == 0,
       "parsed list drives ng_thread_env");

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

int main(void)
{
    test_default_list();
    test_cases();
    test_off_and_limits();
    test_custom_vars();
    test_vars_parse();
    return tap_done();
}
