/* The governor's one way to speak: a line on stderr. The lowest file of
 * preload/ (it calls no other), so that runtimes.c, which gov.c calls,
 * can speak without calling back up into gov.c. */
#include "gov.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

void ngo_say(const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "numaguard-omp: [%d:%ld] ", (int)getpid(),
                     (long)syscall(SYS_gettid));
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m >= sizeof line - (size_t)n - 1
                                                ? sizeof line - (size_t)n - 2 : (size_t)m);
    line[len++] = '\n';
    int saved = errno;   /* the program's errno is not ours to change */
    ssize_t w = write(2, line, len);
    (void)w;
    errno = saved;
}
