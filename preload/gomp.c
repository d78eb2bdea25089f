/* libgomp's entry points (GCC's ABI; libomp implements them too, for
 * GCC-compiled code linked against it). Each takes the region's
 * num_threads clause as an argument (0: none) and starts the team at
 * once, so the governor's answer simply replaces that argument. The
 * combined forms return when the region is over: the governor is told
 * there (ngo_region_end); the pre-4.9 _start forms end in
 * GOMP_parallel_end, interposed for that alone. */
#include "gov.h"

#define SITE ((uintptr_t)__builtin_return_address(0))

typedef void (*ngo_fn)(void *);

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
    ((void (*)(ngo_fn, void *, unsigned, unsigned))rt->fn[NGO_GOMP_PARALLEL])(fn, data, n, flags);
    ngo_region_end();
}

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
    ((void (*)(ngo_fn, void *, unsigned, unsigned, unsigned))rt->fn[NGO_GOMP_PARALLEL_SECTIONS])(
        fn, data, n, count, flags);
    ngo_region_end();
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
        ((void (*)(ngo_fn, void *, unsigned, long, long, long, long, unsigned))rt->fn[sym])(  \
            fn, data, n, start, end, incr, chunk, flags);                                     \
        ngo_region_end();                                                                     \
    }
#define LOOP_RUNTIME(name, sym)                                                               \
    NGO_EXPORT void name(ngo_fn fn, void *data, unsigned n, long start, long end, long incr,  \
                         unsigned flags)                                                      \
    {                                                                                         \
        const ngo_rt *rt = decide(sym, #name, SITE, &n);                                      \
        ((void (*)(ngo_fn, void *, unsigned, long, long, long, unsigned))rt->fn[sym])(        \
            fn, data, n, start, end, incr, flags);                                            \
        ngo_region_end();                                                                     \
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
