/* libFuzzer target: the admin's thread variable list (plugstack omp_vars=,
 * ng_thread_vars_parse) and ngi_thread_env with that list.
 * Invariants: accepted names are [A-Z_][A-Z0-9_]{0,62}, unique, each an item
 * of the input, NULL-terminated within max + 1 pointers; on failure the list
 * is empty and the message is one printable line; ngi_thread_env (with ,bind)
 * sets OMP_PROC_BIND once and never lists OMP_PLACES. */
#include "fuzz_common.h"

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

/* 1 if name is one of the comma items of in. */
static int is_item(const char *in, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = in;; p++) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, name, n) == 0)
            return 1;
        p += k;
        if (!*p)
            return 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fz_cstr(data, size);
    /* The plugin passes NG_MAX_ENV - 2 (room for the two placement vars);
     * vary max from the input length to exercise the limit. */
    unsigned max = size % 3 == 0 ? 1 + (unsigned)(size % 7) : NG_MAX_ENV - 2;
    char (*names)[64] = malloc(max * sizeof *names);
    const char **ptrs = malloc((max + 1) * sizeof *ptrs);
    FZ_ASSERT(names && ptrs, "oom");
    char err[512] = "";
    int rc = ng_thread_vars_parse(in, names, ptrs, max, err, sizeof err);
    FZ_ASSERT(rc == 0 || rc == -1, "rc %d", rc);
    if (rc < 0) {
        FZ_ASSERT(ptrs[0] == NULL, "'%s': list not emptied on failure", in);
        fz_check_printable("ng_thread_vars_parse", err, sizeof err);
    } else {
        unsigned n = 0;
        while (n <= max && ptrs[n])
            n++;
        FZ_ASSERT(n >= 1 && n <= max, "'%s': %u names for max %u", in, n, max);
        for (unsigned i = 0; i < n; i++) {
            FZ_ASSERT(valid_name(ptrs[i]), "'%s': invalid name accepted '%s'", in, ptrs[i]);
            FZ_ASSERT(is_item(in, ptrs[i]), "'%s': '%s' is not an input item", in, ptrs[i]);
            for (unsigned j = 0; j < i; j++)
                FZ_ASSERT(strcmp(ptrs[i], ptrs[j]) != 0, "'%s': '%s' twice", in, ptrs[i]);
        }
        ng_omp_guard g = {NG_OMP_AUTO, 0, 1, 1};
        ng_env_var out[NG_MAX_ENV];
        int m = ngi_thread_env(&g, 4, 0, ptrs, out, NG_MAX_ENV);
        FZ_ASSERT(m >= 1 && m <= (int)n + 1, "'%s': ngi_thread_env gave %d for %u names", in, m, n);
        int places = 0, binds = 0;
        for (int i = 0; i < m; i++) {
            places += strcmp(out[i].name, "OMP_PLACES") == 0;
            binds += strcmp(out[i].name, "OMP_PROC_BIND") == 0;
        }
        FZ_ASSERT(places == 0 && binds == 1, "'%s': OMP_PLACES listed %d, OMP_PROC_BIND %d times",
                  in, places, binds);
    }
    free(names);
    free(ptrs);
    free(in);
    return 0;
}
