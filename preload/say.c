/* The governor's one way to speak: a line on stderr. The lowest file of
 * preload/ (it calls no other), so that runtimes.c, which gov.c calls,
 * can speak without calling back up into gov.c. */
#include "gov.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
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

/* One page of an empty memfd named for @p kind, mapped and kept: the
 * kernel shows the name in /proc/PID/maps and numa_maps, where `numaguard
 * check` reads it (numaguard/omp_marks.h says why not a file). Nothing is
 * ever written to it (no memory used); a failure is silent (the stderr
 * line was said). memfd_create(2) by its number: glibc 2.27 added the
 * wrapper, the governor needs 2.17. */
void ngo_publish(const char *kind)
{
#ifdef SYS_memfd_create
    char name[64];
    snprintf(name, sizeof name, NG_OMP_MARK_PREFIX "%s", kind);
    int saved = errno;
    int fd = (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */);
    if (fd >= 0) {
        long page = sysconf(_SC_PAGESIZE);
        void *p = mmap(NULL, page > 0 ? (size_t)page : 4096u, PROT_READ, MAP_SHARED, fd, 0);
        (void)p;   /* MAP_FAILED: nothing to tell check with */
        close(fd);
    }
    errno = saved;
#else
    (void)kind;
#endif
}
