/* BLAS libraries with a pool of their own (docs/omp-adaptive.md, "BLAS
 * pools"): the governor interposes the calls that run most of numpy's
 * threaded work (cblas_?gemm for matmul and dot, cblas_?syrk for a @ a.T,
 * ?gesv_ for linalg.solve), counts each caller as it counts the callers of
 * outermost OpenMP regions, and sizes the library's pool to the caller's
 * share before the call, where the library lets it:
 *
 *  - OpenBLAS, pthreads build (openblas_get_parallel() == 1): one global
 *    count (openblas_set_num_threads sets blas_cpu_number for every
 *    thread; so does openblas_set_num_threads_local of 0.3.27+, which
 *    returns the old count). Set only when the share changes; never above
 *    the count OpenBLAS started with (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS)
 *    or the program's own openblas_set_num_threads.
 *  - OpenBLAS, OpenMP build (2): its pool is OpenMP regions, governed as
 *    any (omp_get_max_threads, which it asks on every call); nothing here.
 *  - MKL (mkl_rt): mkl_set_num_threads_local (its C function,
 *    MKL_Set_Num_Threads_Local), per thread, before each
 *    call whose share differs from the thread's last one; never above
 *    the thread's count as the program left it (t_mkl_cap).
 *  - BLIS (bli_thread_set_num_threads): in 0.9 (Debian 12's
 *    libblis4-pthread, -openmp) one global count, a count one thread sets
 *    every thread's next call uses (tried: tests/omp/blas_pool.c); AMD's
 *    AOCL-BLIS keeps one per thread as well (tl_rntm). Set from each
 *    thread whose share changed, right for both; never above the count it started with (BLIS_NUM_THREADS,
 *    else OMP_NUM_THREADS). Not when
 *    its loops are sized one by one (BLIS_JC_NT & co: the count would
 *    replace them): said once.
 *  - anything else (reference BLAS, one thread): forwarded, nothing said.
 *
 * Each call is forwarded to the definition its caller would have bound to
 * (runtimes.c). */
#include "gov.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SITE ((uintptr_t)__builtin_return_address(0))

enum { BLAS_UNKNOWN = 0, BLAS_NONE, BLAS_OPENBLAS_PTHREADS, BLAS_OPENBLAS_OPENMP, BLAS_MKL,
       BLAS_BLIS, BLAS_BLIS_WAYS };

/* OpenBLAS pthreads: the count it started with (or the program set), and
 * the one the governor set last (0: none yet). One library per process in
 * practice; a second OpenBLAS shares these (said in the docs). */
static _Atomic int ob_cap, ob_set;
#define NGO_TLS _Thread_local __attribute__((tls_model("initial-exec")))
/* BLIS: the count it started with; the one this thread set last (0:
 * none). Per thread: BLIS 0.9 (Debian 12) keeps one global count, AMD's
 * AOCL-BLIS one per thread too (its tl_rntm); setting it from each thread
 * whose share changed is right for both (while a pool runs every
 * caller's share is the same). A dim_t, 64 bits. */
static _Atomic long bl_cap;
static NGO_TLS long t_bl_set;
/* MKL: this thread's last mkl_set_num_threads_local (0: none yet), and
 * its cap: what mkl_get_max_threads() said when it did not answer ours
 * back (the program's count, global or this thread's; after a
 * mkl_set_num_threads_local(1) MKL answers 1 for the thread, so the cap
 * cannot be read after each of ours: it would stay 1 for good). */
static NGO_TLS int t_mkl_set, t_mkl_cap;

/* The pool's controls, looked up from the library's handle: in it or its
 * dependencies (Debian's libblas.so.3 of OpenBLAS is a thin library over
 * libopenblas.so.0, which holds them). */
enum { CTL_SET, CTL_GET, CTL_PAR };

static void *ctl(const ngo_rt *rt, const char *name)
{
    return rt->handle ? dlsym(rt->handle, name) : NULL;
}

static int call0(void *fn, int dflt)
{
    return fn ? ((int (*)(void))fn)() : dflt;
}

/* BLIS with a way of parallelism set for one of its loops (BLIS_JC_NT,
 * ..., or bli_thread_set_ways): bli_thread_get_*_nt() answers it, above 1. */
static int blis_by_ways(const ngo_rt *rt)
{
    static const char *const ways[] = {"bli_thread_get_jc_nt", "bli_thread_get_pc_nt",
                                       "bli_thread_get_ic_nt", "bli_thread_get_jr_nt",
                                       "bli_thread_get_ir_nt"};
    for (unsigned i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        void *fn = ctl(rt, ways[i]);
        if (fn && ((long (*)(void))fn)() > 1)
            return 1;
    }
    return 0;
}

/* Which pool @p rt runs, looked at once (said once where it cannot be governed). */
static int kind_of_blas(const ngo_rt *rt)
{
    ngo_rt *w = (ngo_rt *)rt;   /* the blas fields are this file's to fill */
    int k = atomic_load_explicit(&w->blas, memory_order_acquire);
    if (k)
        return k;
    void *ob_par = ctl(rt, "openblas_get_parallel"), *ob_set_fn = ctl(rt, "openblas_set_num_threads");
    /* MKL's C functions: mkl_service.h maps mkl_set_num_threads_local to
     * MKL_Set_Num_Threads_Local (by value); the lower-case symbol is the
     * Fortran one, which takes a pointer (called with a value: a crash). */
    void *mkl_set = ctl(rt, "MKL_Set_Num_Threads_Local"), *mkl_max = ctl(rt, "MKL_Get_Max_Threads");
    void *bl_set = ctl(rt, "bli_thread_set_num_threads");
    if (ob_par && ob_set_fn) {
        int par = call0(ob_par, 0);
        k = par == 1 ? BLAS_OPENBLAS_PTHREADS : par == 2 ? BLAS_OPENBLAS_OPENMP : BLAS_NONE;
        w->blas_ctl[CTL_SET] = ob_set_fn;
        w->blas_ctl[CTL_GET] = ctl(rt, "openblas_get_num_threads");
        if (k == BLAS_OPENBLAS_PTHREADS) {
            int zero = 0, n = call0(w->blas_ctl[CTL_GET], 1);
            atomic_compare_exchange_strong(&ob_cap, &zero, n > 0 ? n : 1);
        }
    } else if (mkl_set && mkl_max) {
        k = BLAS_MKL;
        w->blas_ctl[CTL_SET] = mkl_set;
        w->blas_ctl[CTL_GET] = mkl_max;
    } else if (bl_set) {
        k = blis_by_ways(rt) ? BLAS_BLIS_WAYS : BLAS_BLIS;
        w->blas_ctl[CTL_SET] = bl_set;
        w->blas_ctl[CTL_GET] = ctl(rt, "bli_thread_get_num_threads");
        long zero = 0, n = w->blas_ctl[CTL_GET] ? ((long (*)(void))w->blas_ctl[CTL_GET])() : 1;
        atomic_compare_exchange_strong(&bl_cap, &zero, n > 0 ? n : 1);
    } else {
        k = BLAS_NONE;
    }
    int was = 0;
    if (atomic_compare_exchange_strong(&w->blas, &was, k)) {
        if (k == BLAS_BLIS_WAYS) {
            ngo_say("%s (BLIS) sizes its loops one by one (BLIS_JC_NT, BLIS_IC_NT, ...): its "
                    "calls are not governed (a count would replace those ways)", rt->name);
            ngo_publish(NG_OMP_MARK_BLIS);
        }
        else if (ngo_debug_on())
            ngo_say("%s: %s", rt->name,
                    k == BLAS_OPENBLAS_PTHREADS ? "OpenBLAS, pthreads build: its pool governed"
                    : k == BLAS_OPENBLAS_OPENMP ? "OpenBLAS, OpenMP build: its OpenMP regions governed"
                    : k == BLAS_MKL ? "MKL: its pool governed per thread"
                    : k == BLAS_BLIS ? "BLIS: its pool governed (one global count)"
                                    : "no pool of its own");
    }
    return was ? was : k;
}

/* OpenBLAS's pthreads build: a server thread with no work spins, calling
 * sched_yield, for 2^OPENBLAS_THREAD_TIMEOUT cycles (default 28: about
 * 0.1 s) before it sleeps. Where the governor has set the pool to 1 (a
 * pool of callers) those threads have no work, and spin through the
 * callers' time: 32,000-59,000 sched_yield calls in one np_pool.py 16 6
 * 192 run (0 under OMP_NUM_THREADS=1), CPU time a cgroup quota charges
 * to the task. 2^20 cycles (about 0.3 ms) keeps the threads awake
 * between the calls of a lone caller. OpenBLAS reads the variable when
 * it is loaded, after this (a preload's constructor runs first); a value
 * the task has is kept. */
#define OB_THREAD_TIMEOUT "20"
__attribute__((constructor)) static void ngo_blas_init(void)
{
    setenv("OPENBLAS_THREAD_TIMEOUT", OB_THREAD_TIMEOUT, 0);
}

/* Size the library's pool for this thread's call: @p share cores. */
static void size_pool(const ngo_rt *rt, unsigned share)
{
    int k = kind_of_blas(rt);
    if (k == BLAS_OPENBLAS_PTHREADS) {
        int cap = atomic_load_explicit(&ob_cap, memory_order_relaxed);
        int want = (int)share < cap ? (int)share : cap;
        if (atomic_exchange_explicit(&ob_set, want, memory_order_relaxed) != want) {
            ((void (*)(int))rt->blas_ctl[CTL_SET])(want);
            if (ngo_debug_on())
                ngo_say("%s: OpenBLAS's pool set to %d (its cap %d)", rt->name, want, cap);
        }
    } else if (k == BLAS_BLIS) {
        long cap = atomic_load_explicit(&bl_cap, memory_order_relaxed);
        long want = (long)share < cap ? (long)share : cap;
        if (t_bl_set != want) {
            t_bl_set = want;
            ((void (*)(long))rt->blas_ctl[CTL_SET])(want);
            if (ngo_debug_on())
                ngo_say("%s: BLIS's pool set to %ld (its cap %ld)", rt->name, want, cap);
        }
    } else if (k == BLAS_MKL) {
        int now = call0(rt->blas_ctl[CTL_GET], 1);
        if (now != t_mkl_set)   /* the program's own count (or the first call) */
            t_mkl_cap = now > 0 ? now : 1;
        int want = (int)share < t_mkl_cap ? (int)share : t_mkl_cap;
        if (want != t_mkl_set) {
            ((int (*)(int))rt->blas_ctl[CTL_SET])(want);
            t_mkl_set = want;
            if (ngo_debug_on())
                ngo_say("%s: MKL's pool set to %d for this thread (its cap %d)", rt->name, want,
                        t_mkl_cap);
        }
    }
}

static const ngo_rt *enter(uintptr_t site, enum ngo_sym sym, int *counted)
{
    const ngo_rt *rt = ngo_rt_for_site(site, sym);
    unsigned share = ngo_blas_enter(counted);
    if (share)
        size_pool(rt, share);
    return rt;
}

static void leave(int counted)
{
    if (counted)
        ngo_region_end();
}

/* The program's own count: the cap from now on (0 or less: OpenBLAS's own
 * default, which it keeps as the cap too). */
NGO_EXPORT void openblas_set_num_threads(int n)
{
    const ngo_rt *rt = ngo_rt_for_site(SITE, NGO_OPENBLAS_SET_NUM_THREADS);
    ((void (*)(int))rt->fn[NGO_OPENBLAS_SET_NUM_THREADS])(n);
    if (kind_of_blas(rt) == BLAS_OPENBLAS_PTHREADS) {
        int now = call0(rt->blas_ctl[CTL_GET], 1);
        atomic_store(&ob_cap, now > 0 ? now : 1);
        atomic_store(&ob_set, now);
        if (ngo_debug_on())
            ngo_say("openblas_set_num_threads(%d): the program's count, %d at most from now on", n,
                    now);
    }
}

/* cblas_?gemm: order, transa, transb, m, n, k, alpha, a, lda, b, ldb,
 * beta, c, ldc (alpha and beta by value for s and d, by pointer for c, z). */
#define GEMM(name, sym, T, S)                                                                   \
    NGO_EXPORT void name(int o, int ta, int tb, int m, int n, int k, S al, const T *a, int lda, \
                         const T *b, int ldb, S be, T *c, int ldc)                              \
    {                                                                                           \
        int counted;                                                                            \
        const ngo_rt *rt = enter(SITE, sym, &counted);                                                    \
        ((void (*)(int, int, int, int, int, int, S, const T *, int, const T *, int, S, T *,     \
                   int))rt->fn[sym])(o, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);       \
        leave(counted);                                                                         \
    }
GEMM(cblas_sgemm, NGO_CBLAS_SGEMM, float, float)
GEMM(cblas_dgemm, NGO_CBLAS_DGEMM, double, double)
GEMM(cblas_cgemm, NGO_CBLAS_CGEMM, void, const void *)
GEMM(cblas_zgemm, NGO_CBLAS_ZGEMM, void, const void *)

/* cblas_?syrk: order, uplo, trans, n, k, alpha, a, lda, beta, c, ldc. */
#define SYRK(name, sym, T, S)                                                                   \
    NGO_EXPORT void name(int o, int up, int tr, int n, int k, S al, const T *a, int lda, S be,  \
                         T *c, int ldc)                                                         \
    {                                                                                           \
        int counted;                                                                            \
        const ngo_rt *rt = enter(SITE, sym, &counted);                                                    \
        ((void (*)(int, int, int, int, int, S, const T *, int, S, T *, int))rt->fn[sym])(       \
            o, up, tr, n, k, al, a, lda, be, c, ldc);                                           \
        leave(counted);                                                                         \
    }
SYRK(cblas_ssyrk, NGO_CBLAS_SSYRK, float, float)
SYRK(cblas_dsyrk, NGO_CBLAS_DSYRK, double, double)
SYRK(cblas_csyrk, NGO_CBLAS_CSYRK, void, const void *)
SYRK(cblas_zsyrk, NGO_CBLAS_ZSYRK, void, const void *)

/* Fortran BLAS ?gemm_ (PyTorch calls these): transa, transb, m, n, k,
 * alpha, a, lda, b, ldb, beta, c, ldc, all by reference, then the two
 * hidden lengths of the character arguments that gfortran-compiled
 * callers pass (C callers such as PyTorch do not: what is in those two
 * stack slots is passed on unread; OpenBLAS's and the reference BLAS's
 * own code never reads them). */
#define FGEMM(name, sym)                                                                       \
    NGO_EXPORT void name(const char *ta, const char *tb, const int *m, const int *n,          \
                         const int *k, const void *al, const void *a, const int *lda,         \
                         const void *b, const int *ldb, const void *be, void *c,              \
                         const int *ldc, unsigned long la, unsigned long lb)                  \
    {                                                                                          \
        int counted;                                                                            \
        const ngo_rt *rt = enter(SITE, sym, &counted);                                                   \
        ((void (*)(const char *, const char *, const int *, const int *, const int *,          \
                   const void *, const void *, const int *, const void *, const int *,         \
                   const void *, void *, const int *, unsigned long, unsigned long))           \
             rt->fn[sym])(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc, la, lb);            \
        leave(counted);                                                                        \
    }
FGEMM(sgemm_, NGO_SGEMM)
FGEMM(dgemm_, NGO_DGEMM)

/* LAPACK's ?gesv_ (Fortran: every argument by reference, no character
 * argument, so no hidden lengths): n, nrhs, a, lda, ipiv, b, ldb, info. */
#define GESV(name, sym)                                                                       \
    NGO_EXPORT void name(const int *n, const int *nrhs, void *a, const int *lda, int *ipiv,   \
                         void *b, const int *ldb, int *info)                                  \
    {                                                                                         \
        int counted;                                                                            \
        const ngo_rt *rt = enter(SITE, sym, &counted);                                                  \
        ((void (*)(const int *, const int *, void *, const int *, int *, void *, const int *, \
                   int *))rt->fn[sym])(n, nrhs, a, lda, ipiv, b, ldb, info);                  \
        leave(counted);                                                                       \
    }
GESV(sgesv_, NGO_SGESV)
GESV(dgesv_, NGO_DGESV)
GESV(cgesv_, NGO_CGESV)
GESV(zgesv_, NGO_ZGESV)
