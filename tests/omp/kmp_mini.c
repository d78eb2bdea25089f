/* A one-thread OpenMP runtime with libomp's entry points, for the one
 * case real libomp cannot show on aarch64 (tests/arm64/governor.sh): an
 * unwinder called inside a region gets through the governor's
 * __kmpc_fork_call stub to the function that opened the region. There
 * libomp's own frame between the region and its fork call cannot be
 * crossed, with or without the governor: __kmp_invoke_microtask's unwind
 * entry is empty, and with OMPT its x29 points at the x19/x20 pair rather
 * than at its frame record (Debian 12's libomp 14; LLVM's main branch has
 * the same code). This runtime calls the region's function from a C
 * function the compiler gives unwind information, so what the unwinder
 * meets on the way is the governor's stub and nothing else of ours.
 * The interface is libomp's (kmp.h): __kmpc_fork_call(loc, argc,
 * microtask, ...) calls microtask(&gtid, &tid, the argc pointers). */
#include <stdarg.h>

typedef void microtask_fn(int *gtid, int *tid, ...);

static int pushed;

int __kmpc_global_thread_num(void *loc)
{
    (void)loc;
    return 0;
}

void __kmpc_push_num_threads(void *loc, int gtid, int n)
{
    (void)loc;
    (void)gtid;
    pushed = n;
}

/* The team is this thread alone; the count pushed before the fork is
 * what omp_get_num_threads reports inside it (the governor's decision). */
void __kmpc_fork_call(void *loc, int argc, microtask_fn *fn, ...)
{
    (void)loc;
    void *a[3] = {0, 0, 0};
    va_list ap;
    va_start(ap, fn);
    for (int i = 0; i < argc && i < 3; i++)
        a[i] = va_arg(ap, void *);
    va_end(ap);
    int gtid = 0, tid = 0;
    switch (argc) {
    case 0: fn(&gtid, &tid); break;
    case 1: fn(&gtid, &tid, a[0]); break;
    case 2: fn(&gtid, &tid, a[0], a[1]); break;
    default: fn(&gtid, &tid, a[0], a[1], a[2]); break;
    }
    pushed = 0;
}

int omp_get_thread_num(void)
{
    return 0;
}

int omp_get_num_threads(void)
{
    return pushed ? pushed : 1;
}

int omp_get_max_threads(void)
{
    return 1;
}
