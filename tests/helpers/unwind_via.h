/* For the probes that unwind from inside a region (omp_args.c,
 * kmp_unwind.c): appends "SYM@OBJ" to V when PC lies in an OpenMP entry
 * point (__kmpc_fork_call, GOMP_parallel*: the runtime's or the
 * governor's), so a test can say which ones the unwinder went through. */
#ifndef NG_TESTS_UNWIND_VIA_H
#define NG_TESTS_UNWIND_VIA_H
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static inline void ng_unwind_via(char *v, size_t size, void *pc)
{
    Dl_info di;
    size_t used = strlen(v);
    if (dladdr(pc, &di) && di.dli_sname && di.dli_fname &&
        (strncmp(di.dli_sname, "__kmpc_fork_call", 16) == 0 ||
         strncmp(di.dli_sname, "GOMP_parallel", 13) == 0)) {
        const char *base = strrchr(di.dli_fname, '/');
        snprintf(v + used, size - used, "%s%s@%s", used ? " " : "", di.dli_sname,
                 base ? base + 1 : di.dli_fname);
    }
}
#endif
