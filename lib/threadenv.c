/* Thread environment: the variables --omp-guard sets in a task, and the
 * admin's list of thread-count variables. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define VARS_WHAT "thread variable list"
#define VARS_FORMS "expected a comma list of names like OMP_NUM_THREADS,MKL_NUM_THREADS " \
    "([A-Z_][A-Z0-9_]*, at most 63 characters each)"

const char *const ng_default_thread_vars[] = {
    "OMP_NUM_THREADS",     "MKL_NUM_THREADS",        "OPENBLAS_NUM_THREADS",
    "BLIS_NUM_THREADS",    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS",
    "NUMBA_NUM_THREADS",   NULL,
};

/* 1 if s[0..n) is a valid variable name [A-Z_][A-Z0-9_]* of 1..63 bytes. */
static int valid_name(const char *s, size_t n)
{
    if (n == 0 || n > 63 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

static int already(const ng_env_var *out, unsigned n, const char *name)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(out[i].name, name) == 0)
            return 1;
    return 0;
}

static int add(ng_env_var *out, unsigned *n, unsigned max, const char *name,
               const char *value, int overwrite)
{
    if (*n >= max)
        return -1;
    ng_env_var *e = &out[*n];
    memset(e, 0, sizeof *e);
    if (ng_strlcpy(e->name, name, sizeof e->name) < 0 ||
        ng_strlcpy(e->value, value, sizeof e->value) < 0)
        return -1;
    e->overwrite = overwrite;
    (*n)++;
    return 0;
}

/* OMP_PLACES/OMP_PROC_BIND are written after the counts; a count list that
 * names them too would set them twice with a number, so they are skipped. */
static int is_place_var(const char *name)
{
    return strcmp(name, "OMP_PLACES") == 0 || strcmp(name, "OMP_PROC_BIND") == 0;
}

int ng_thread_env(const ng_omp_guard *guard, unsigned threads, int smt,
                  const char *const *vars, ng_env_var *out, unsigned max)
{
    if (!guard || (!out && max))
        return -1;
    if (guard->mode == NG_OMP_OFF)
        return 0;
    /* A task always runs at least one thread, even if it owns no whole core. */
    unsigned owned = threads ? threads : 1;
    unsigned count;
    if (guard->mode == NG_OMP_AUTO)
        count = owned;
    else if (guard->mode == NG_OMP_FIXED && guard->nthreads >= 1)
        count = guard->nthreads;
    else
        return -1;
    if (!vars)
        vars = ng_default_thread_vars;
    char value[16];
    snprintf(value, sizeof value, "%u", count);
    unsigned n = 0;
    for (const char *const *v = vars; *v; v++) {
        if (!valid_name(*v, strnlen(*v, 64)) || is_place_var(*v) || already(out, n, *v))
            continue;
        if (add(out, &n, max, *v, value, guard->force) < 0)
            return -1;
    }
    /* Places follow what a thread is (core or PU). With exactly one thread per
     * place the pool is packed ("close"); otherwise spread it over the places
     * so fewer threads do not pile onto the first cores. */
    if (add(out, &n, max, "OMP_PLACES", smt ? "threads" : "cores", guard->force) < 0 ||
        add(out, &n, max, "OMP_PROC_BIND", count == owned ? "close" : "spread",
            guard->force) < 0)
        return -1;
    return (int)n;
}

static int vars_bad(char *err, size_t errlen, const char *text, size_t len,
                    const char *why, const char *item, size_t ilen)
{
    char v[NG_SHOW_MAX * 4 + 8], it[NG_SHOW_MAX * 4 + 8];
    ng_show_bytes(text, len, v, sizeof v);
    ng_show_bytes(item, ilen, it, sizeof it);
    char reason[sizeof it + 64];
    snprintf(reason, sizeof reason, why, it);
    return ng_fail(err, errlen, VARS_WHAT ": invalid value '%s': %s; " VARS_FORMS, v, reason);
}

static int vars_parse(const char *text, char names[][64], const char **ptrs,
                      unsigned max, char *err, size_t errlen)
{
    if (!names || !ptrs)
        return ng_fail(err, errlen, VARS_WHAT ": no output");
    ptrs[0] = NULL;
    if (!text || !*text)
        return vars_bad(err, errlen, "", 0, "empty list%s", NULL, 0);
    size_t len = strnlen(text, NG_MAX_ARG + 1);
    if (len > NG_MAX_ARG)
        return vars_bad(err, errlen, text, len, "longer than 1024 bytes%s", NULL, 0);
    unsigned n = 0;
    const char *p = text;
    for (;;) {
        size_t ilen = strcspn(p, ",");
        if (ilen == 0)
            return vars_bad(err, errlen, text, len, "empty item%s", NULL, 0);
        if (!valid_name(p, ilen))
            return vars_bad(err, errlen, text, len, "invalid name '%s'", p, ilen);
        int dup = 0;
        for (unsigned i = 0; i < n; i++)
            if (strlen(names[i]) == ilen && strncmp(names[i], p, ilen) == 0)
                dup = 1;
        if (!dup) {
            if (n >= max) {
                char why[64];
                snprintf(why, sizeof why, "more than %u names%%s", max);
                return vars_bad(err, errlen, text, len, why, NULL, 0);
            }
            memcpy(names[n], p, ilen);
            names[n][ilen] = '\0';
            ptrs[n] = names[n];
            n++;
            ptrs[n] = NULL;
        }
        p += ilen;
        if (*p == '\0')
            return 0;
        p++;
        if (*p == '\0')
            return vars_bad(err, errlen, text, len, "empty item%s", NULL, 0);
    }
}

/* @p max is the number of names @p names holds; @p ptrs must hold max + 1
 * pointers (the list is NULL-terminated). Duplicate names are kept once.
 * On failure the list is empty (ptrs[0] == NULL), never half-filled. */
int ng_thread_vars_parse(const char *text, char names[][64], const char **ptrs,
                         unsigned max, char *err, size_t errlen)
{
    int rc = vars_parse(text, names, ptrs, max, err, errlen);
    if (rc < 0 && ptrs)
        ptrs[0] = NULL;
    return rc;
}
