/* Minimal TAP output for C tests: every check prints "ok" or "not ok".
 * tests/run-all.sh counts these lines across all tests. */
#ifndef NG_TAP_H
#define NG_TAP_H
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>

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
/* A check that cannot be made here, with why ("ok N - what # SKIP why"). */
#define tap_skip(what, ...) (printf("ok %d - %s # SKIP ", ++tap_n, (what)), \
                             printf(__VA_ARGS__), printf("\n"), fflush(stdout))
/* Set by make check-arm64 (tests/arm64/check-arm64.sh) for its runs under
 * qemu-user: what emulation cannot do is a skip that says so. */
#define tap_emulated() getenv("NG_EMULATED")

/* The bound (ms) of the timing checks that tell linear matching from the
 * old blow-up (issue 19; the old matcher took 30-45 s): 10 ms in the
 * normal build; sanitizers slow every byte down 5-20 times and qemu-user
 * more, so there it only tells linear from the blow-up (500 ms). */
static inline double tap_linear_ms(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
    return 500.0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 500.0;
#endif
#endif
    return tap_emulated() ? 500.0 : 10.0;
}
static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
#endif
