/* Minimal TAP output for C tests: every check prints "ok" or "not ok".
 * tests/run-all.sh counts these lines across all tests. */
#ifndef NG_TAP_H
#define NG_TAP_H
#include <stdio.h>
#include <stdarg.h>

static int tap_n, tap_failed;

static inline int tap_check(int cond, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int tap_check(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!cond)
        tap_failed++;
    fflush(stdout);
    return cond;
}
/* Print a diagnostic line (TAP comment). */
#define tap_diag(...) (printf("# " __VA_ARGS__), printf("\n"))
#define ok(cond, ...) tap_check(!!(cond), __VA_ARGS__)
static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
#endif
