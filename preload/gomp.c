/* libgomp's entry points (GCC's ABI; libomp implements them too, for
 * GCC-compiled code linked against it). Each takes the region's
 * num_threads clause as an argument (0: none) and starts the team at
 * once, so the governor's answer simply replaces that argument. The
 * combined forms' region ends for the governor (ngo_region_end) when the
 * caller's own call of the region's function returns (run_region, below);
 * GOMP_parallel_reductions when the runtime returns; the pre-4.9 _start
 * forms end in GOMP_parallel_end, interposed for that alone. */
#include "gov.h"

#define SITE ((uintptr_t)__builtin_return_address(0))

typedef void (*ngo_fn)(void *);

/* The combined forms (but GOMP_parallel_reductions) hand the runtime the
 * region's function wrapped (run_region) and jump to the runtime: the
 * caller's own call of the function ends the region for the governor,
 * and the runtime returns straight to the program. Coming back into a
 * frame here after the runtime's team end (a futex wake, a system call;
 * perf puts the time on the instructions right after that return) cost
 * about 4 ns per region, an eighth of the governor's work
 * (bench/omp_region_cost.c, docs/omp-adaptive.md "Measured"). The
 * function and its data wait in this thread's entry for the region's
 * nesting depth; the team's threads read them there while the region
 * runs (the runtime's end barrier holds the caller until they have). */
typedef struct ngo_call {
    ngo_fn fn;
    void *data;
} ngo_call;
#define NEST_MAX 16   /* deeper nests take the plain way: call, then end */
static _Thread_local __attribute__((tls_model("initial-exec"))) ngo_call t_calls[NEST_MAX];
static _Thread_local __attribute__((tls_model("initial-exec"))) unsigned t_nest;

/* Every thread of the team runs this; the thread that started the region
 * (its entry is in this thread's own t_calls) ends it once its call of
 * the function returned. */
static void run_region(void *p)
{
    ngo_call *c = p;
    c->fn(c->data);
    uintptr_t a = (uintptr_t)c, lo = (uintptr_t)t_calls;
    if (a >= lo && a < lo + sizeof t_calls) {
        t_nest--;
        ngo_region_end();
    }
}

/* Wrap the region's @p fn and @p data for run_region; 0 when the nest is
 * too deep (the caller then ends the region itself). */
static int wrap(ngo_fn *fn, void **data)
{
    if (t_nest >= NEST_MAX)
        return 0;
    ngo_call *c = &t_calls[t_nest++];
    c->fn = *fn;
    c->data = *data;
    *fn = run_region;
    *data = c;
    return 1;
}

/* Start the region through the runtime's entry point @p real, whose
 * arguments are the region's function, its data, then @p ...: wrapped, a
 * jump (the last call of the entry point that uses it); in too deep a
 * nest, a call, then the region's end. */
#define RUN_WRAPPED(real, ...)                                                                \
    do {                                                                                      \
        if (!wrap(&fn, &data)) {                                                              \
            real(fn, data, __VA_ARGS__);                                                      \
            ngo_region_end();                                                                 \
            return;                                                                           \
        }                                                                                     \
        real(fn, data, __VA_ARGS__);                                                          \
    } while (0)

/* The team size to pass for a region of @p entry asking @p n threads. */
static inline const ngo_rt *decide(enum ngo_sym sym, const char *entry, uintptr_t site,
                                   unsigned *n)
{
    const ngo_rt *rt = ngo_rt_for_site(site, sym);
    ngo_ask a = {rt, entry, *n};
    unsigned give = ngo_decide(&a);
    if (give)
        *n = give;
    return rt;
}

NGO_EXPORT void GOMP_parallel(ngo_fn fn, void *data, unsigned n, unsigned flags)
{
    const ngo_rt *rt = decide(NGO_GOMP_PARALLEL, "GOMP_parallel", SITE, &n);
    void (*real)(ngo_fn, void *, unsigned, unsigned) =
        (void (*)(ngo_fn, void *, unsigned, unsigned))rt->fn[NGO_GOMP_PARALLEL];
    RUN_WRAPPED(real, n, flags);
}

/* Not wrapped: the runtime reads the task reductions' list from the
 * first word of @p data (libgomp's and libomp's GOMP_parallel_reductions),
 * so the data must be the program's own. */
NGO_EXPORT unsigned GOMP_parallel_reductions(ngo_fn fn, void *data, unsigned n, unsigned flags)
{
    const ngo_rt *rt = decide(NGO_GOMP_PARALLEL_REDUCTIONS, "GOMP_parallel_reductions", SITE, &n);
    unsigned r = ((unsigned (*)(ngo_fn, void *, unsigned, unsigned))
                      rt->fn[NGO_GOMP_PARALLEL_REDUCTIONS])(fn, data, n, flags);
    ngo_region_end();
    return r;
}

/* GCC before 4.9: start the team, the caller runs fn itself, then
 * GOMP_parallel_end, which ends the region. */
NGO_EXPORT void GOMP_parallel_start(ngo_fn fn, void *data, unsigned n)
{
    const ngo_rt *rt = decide(NGO_GOMP_PARALLEL_START, "GOMP_parallel_start", SITE, &n);
    ((void (*)(ngo_fn, void *, unsigned))rt->fn[NGO_GOMP_PARALLEL_START])(fn, data, n);
}

NGO_EXPORT void GOMP_parallel_end(void)
{
    const ngo_rt *rt = ngo_rt_for_site(SITE, NGO_GOMP_PARALLEL_END);
    ((void (*)(void))rt->fn[NGO_GOMP_PARALLEL_END])();
    ngo_region_end();
}

NGO_EXPORT void GOMP_parallel_sections(ngo_fn fn, void *data, unsigned n, unsigned count,
                                       unsigned flags)
{
    const ngo_rt *rt = decide(NGO_GOMP_PARALLEL_SECTIONS, "GOMP_parallel_sections", SITE, &n);
    void (*real)(ngo_fn, void *, unsigned, unsigned, unsigned) =
        (void (*)(ngo_fn, void *, unsigned, unsigned, unsigned))rt->fn[NGO_GOMP_PARALLEL_SECTIONS];
    RUN_WRAPPED(real, n, count, flags);
}

NGO_EXPORT void GOMP_parallel_sections_start(ngo_fn fn, void *data, unsigned n, unsigned count)
{
    const ngo_rt *rt = decide(NGO_GOMP_PARALLEL_SECTIONS_START, "GOMP_parallel_sections_start",
                              SITE, &n);
    ((void (*)(ngo_fn, void *, unsigned, unsigned))rt->fn[NGO_GOMP_PARALLEL_SECTIONS_START])(
        fn, data, n, count);
}

/* The combined parallel loops: with a chunk size and flags (4.9+), with
 * flags only (runtime schedules), and the pre-4.9 _start forms. */
#define LOOP_CHUNK(name, sym)                                                                 \
    NGO_EXPORT void name(ngo_fn fn, void *data, unsigned n, long start, long end, long incr,  \
                         long chunk, unsigned flags)                                          \
    {                                                                                         \
        const ngo_rt *rt = decide(sym, #name, SITE, &n);                                      \
        void (*real)(ngo_fn, void *, unsigned, long, long, long, long, unsigned) =            \
            (void (*)(ngo_fn, void *, unsigned, long, long, long, long, unsigned))rt->fn[sym]; \
        RUN_WRAPPED(real, n, start, end, incr, chunk, flags);                                 \
    }
#define LOOP_RUNTIME(name, sym)                                                               \
    NGO_EXPORT void name(ngo_fn fn, void *data, unsigned n, long start, long end, long incr,  \
                         unsigned flags)                                                      \
    {                                                                                         \
        const ngo_rt *rt = decide(sym, #name, SITE, &n);                                      \
        void (*real)(ngo_fn, void *, unsigned, long, long, long, unsigned) =                  \
            (void (*)(ngo_fn, void *, unsigned, long, long, long, unsigned))rt->fn[sym];      \
        RUN_WRAPPED(real, n, start, end, incr, flags);                                        \
    }
#define LOOP_START(name, sym)                                                                 \
    NGO_EXPORT void name(ngo_fn fn, void *data, unsigned n, long start, long end, long incr,  \
                         long chunk)                                                          \
    {                                                                                         \
        const ngo_rt *rt = decide(sym, #name, SITE, &n);                                      \
        ((void (*)(ngo_fn, void *, unsigned, long, long, long, long))rt->fn[sym])(            \
            fn, data, n, start, end, incr, chunk);                                            \
    }

LOOP_CHUNK(GOMP_parallel_loop_static, NGO_GOMP_PARALLEL_LOOP_STATIC)
LOOP_CHUNK(GOMP_parallel_loop_dynamic, NGO_GOMP_PARALLEL_LOOP_DYNAMIC)
LOOP_CHUNK(GOMP_parallel_loop_guided, NGO_GOMP_PARALLEL_LOOP_GUIDED)
LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_dynamic, NGO_GOMP_PARALLEL_LOOP_NONMONOTONIC_DYNAMIC)
LOOP_CHUNK(GOMP_parallel_loop_nonmonotonic_guided, NGO_GOMP_PARALLEL_LOOP_NONMONOTONIC_GUIDED)
LOOP_RUNTIME(GOMP_parallel_loop_runtime, NGO_GOMP_PARALLEL_LOOP_RUNTIME)
LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime, NGO_GOMP_PARALLEL_LOOP_NONMONOTONIC_RUNTIME)
LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime,
             NGO_GOMP_PARALLEL_LOOP_MAYBE_NONMONOTONIC_RUNTIME)
LOOP_START(GOMP_parallel_loop_static_start, NGO_GOMP_PARALLEL_LOOP_STATIC_START)
LOOP_START(GOMP_parallel_loop_dynamic_start, NGO_GOMP_PARALLEL_LOOP_DYNAMIC_START)
LOOP_START(GOMP_parallel_loop_guided_start, NGO_GOMP_PARALLEL_LOOP_GUIDED_START)

NGO_EXPORT void GOMP_parallel_loop_runtime_start(ngo_fn fn, void *data, unsigned n, long start,
                                                 long end, long incr)
{
    const ngo_rt *rt = decide(NGO_GOMP_PARALLEL_LOOP_RUNTIME_START,
                              "GOMP_parallel_loop_runtime_start", SITE, &n);
    ((void (*)(ngo_fn, void *, unsigned, long, long, long))rt->fn[NGO_GOMP_PARALLEL_LOOP_RUNTIME_START])(
        fn, data, n, start, end, incr);
}
