/* The thread-count variables: the one table of the variables --omp-guard
 * sets (the help text, the planner's defaults and `check`'s reading of a
 * process's caps all come from it), and the admin's own list (omp_vars=).
 * A new variable is one row here. */
#include "private/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VARS_WHAT "thread variable list"
#define VARS_FORMS "expected a comma list of names like OMP_NUM_THREADS,MKL_NUM_THREADS " \
    "([A-Z_][A-Z0-9_]*, at most 63 characters each)"

const char *const ngi_default_thread_vars[] = {
    "OMP_NUM_THREADS",          /* OpenMP (libgomp, libomp, Intel) */
    "MKL_NUM_THREADS",          /* Intel oneMKL */
    "OPENBLAS_NUM_THREADS",     /* OpenBLAS */
    "BLIS_NUM_THREADS",         /* BLIS, AMD AOCL-BLIS */
    "VECLIB_MAXIMUM_THREADS",   /* Apple Accelerate (and numpy's probes) */
    "NUMEXPR_NUM_THREADS",      /* numexpr */
    "NUMBA_NUM_THREADS",        /* Numba */
    NULL,
};

unsigned ngi_thread_var_count(void)
{
    return (unsigned)(NGI_ARRAY_LEN(ngi_default_thread_vars) - 1);
}

/* 1 if s[0..n) is a valid variable name [A-Z_][A-Z0-9_]* of 1..63 bytes. */
int ngi_thread_var_name_ok(const char *s, size_t n)
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

/* ---------------- OMP_PLACES ---------------- */

static int vars_bad(char *err, size_t errlen, const char *text, size_t len,
                    const char *why, const char *item, size_t ilen)
{
    char v[NGI_SHOW_MAX * 4 + 8], it[NGI_SHOW_MAX * 4 + 8];
    ngi_show_bytes(text, len, v, sizeof v);
    ngi_show_bytes(item, ilen, it, sizeof it);
    char reason[sizeof it + 64];
    snprintf(reason, sizeof reason, why, it);
    return ngi_fail(err, errlen, VARS_WHAT ": invalid value '%s': %s; " VARS_FORMS, v, reason);
}

static int vars_parse(const char *text, char names[][64], const char **ptrs,
                      unsigned max, char *err, size_t errlen)
{
    if (!names || !ptrs)
        return ngi_fail(err, errlen, VARS_WHAT ": no output");
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
        if (!ngi_thread_var_name_ok(p, ilen))
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
