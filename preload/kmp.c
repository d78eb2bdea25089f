/* LLVM/Intel libomp's entry points (clang -fopenmp, icx, the Intel and
 * LLVM runtimes). A region is __kmpc_push_num_threads (only with a
 * num_threads clause) then __kmpc_fork_call(loc, argc, microtask, ...):
 * the governor's answer is pushed just before the fork, the way the
 * compiler pushes a clause, and the governor is told when the fork
 * returned (the region is over). __kmpc_fork_call is variadic (argc shared
 * variables, any number): it cannot be re-called from C with its
 * arguments, so an entry stub per architecture (kmp_stub_x86_64.S,
 * kmp_stub_aarch64.S: a frame of its own, unwind information) asks
 * ngo_kmp_fork_prepare for the real entry point, calls it with the
 * caller's registers and a copy of its stack arguments, then calls
 * ngo_region_end. Where there is no stub, __kmpc_fork_call is not
 * interposed: libomp's regions keep the runtime's team sizes (libgomp's
 * are governed), and the process is told so once. */
#include "gov.h"

#include <dlfcn.h>
#include <sys/utsname.h>

typedef struct ident ident_t;

/* Each entry point's type, written once: the definitions below are
 * declared with it (a definition that differs does not compile) and the
 * calls into the runtime cast to it. */
typedef void kmpc_push_num_threads_fn(ident_t *loc, int gtid, int n);
typedef void kmpc_fork_call_if_fn(ident_t *loc, int argc, void *microtask, int cond, void *args);
typedef int kmpc_global_thread_num_fn(ident_t *loc);
NGO_EXPORT kmpc_push_num_threads_fn __kmpc_push_num_threads;
NGO_EXPORT kmpc_fork_call_if_fn __kmpc_fork_call_if;

/* The stubs exist for these; the Makefile links kmp_stub_<arch>.S and
 * lists __kmpc_fork_call in the version script for the same ones.
 * -DNGO_KMP_STUB=0 builds the stubless case anywhere (its test). */
#ifndef NGO_KMP_STUB
#if defined(__x86_64__) || defined(__aarch64__)
#define NGO_KMP_STUB 1
#else
#define NGO_KMP_STUB 0
#endif
#endif
static void say_ungoverned(void);

void __kmpc_push_num_threads(ident_t *loc, int gtid, int n)
{
    const ngo_rt *rt = ngo_rt_for_site((uintptr_t)__builtin_return_address(0),
                                       NGO_KMPC_PUSH_NUM_THREADS);
    say_ungoverned();
    ngo_note_clause(n);
    ((kmpc_push_num_threads_fn *)rt->fn[NGO_KMPC_PUSH_NUM_THREADS])(loc, gtid, n);
}

/* Decide the team of the fork about to happen; push it when it differs
 * from what the program asked. */
static void prepare(const ngo_rt *rt, ident_t *loc, const char *entry)
{
    unsigned clause = ngo_take_clause();
    ngo_ask a = {rt, entry, clause};
    unsigned give = ngo_decide(&a);
    void *push = rt->fn[NGO_KMPC_PUSH_NUM_THREADS], *gtid = rt->fn[NGO_KMPC_GLOBAL_THREAD_NUM];
    if (give && give != clause && push && gtid)
        ((kmpc_push_num_threads_fn *)push)(loc, ((kmpc_global_thread_num_fn *)gtid)(loc),
                                           (int)give);
}

/* Called by the stub (kmp_stub_<arch>.S) with the caller's first two
 * arguments and its return address; returns the runtime's
 * __kmpc_fork_call. The stub calls ngo_region_end when that returned. */
NGO_HIDDEN void *ngo_kmp_fork_prepare(ident_t *loc, int argc, uintptr_t site);
void *ngo_kmp_fork_prepare(ident_t *loc, int argc, uintptr_t site)
{
    (void)argc;
    const ngo_rt *rt = ngo_rt_for_site(site, NGO_KMPC_FORK_CALL);
    prepare(rt, loc, "__kmpc_fork_call");
    return rt->fn[NGO_KMPC_FORK_CALL];
}

/* LLVM 17+: the if clause's form, not variadic. */
void __kmpc_fork_call_if(ident_t *loc, int argc, void *microtask, int cond, void *args)
{
    const ngo_rt *rt = ngo_rt_for_site((uintptr_t)__builtin_return_address(0),
                                       NGO_KMPC_FORK_CALL_IF);
    if (cond)
        prepare(rt, loc, "__kmpc_fork_call_if");
    else
        ngo_take_clause();
    ((kmpc_fork_call_if_fn *)rt->fn[NGO_KMPC_FORK_CALL_IF])(loc, argc, microtask, cond, args);
    if (cond)
        ngo_region_end();   /* paired with prepare's ngo_decide */
}

/* No stub on this architecture: libomp's __kmpc_fork_call goes straight
 * to the runtime. Said once per process (to stderr, as the governor's
 * other notes), when the process has libomp at start or first reaches one
 * of its entry points the governor does interpose. */
#if NGO_KMP_STUB
static void say_ungoverned(void)
{
}
#else
static void say_ungoverned(void)
{
    static int said;
    if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        return;
    struct utsname u;
    ngo_say("libomp's regions (__kmpc_fork_call) cannot be governed on %s: no entry stub for "
            "this architecture; they keep the runtime's team sizes (libgomp's are governed)",
            uname(&u) == 0 ? u.machine : "this architecture");
    ngo_publish(NG_OMP_MARK_LIBOMP_ARCH);
}

__attribute__((constructor)) static void ngo_kmp_check(void)
{
    if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call"))
        say_ungoverned();
}
#endif
