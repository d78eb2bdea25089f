/* The OpenMP API calls the governor answers: omp_get_max_threads (what
 * the next outermost region of this thread would get) and
 * omp_set_num_threads (a thread's own count, kept from then on). Both
 * are forwarded to the caller's runtime. */
#include "gov.h"

#define SITE ((uintptr_t)__builtin_return_address(0))

NGO_EXPORT int omp_get_max_threads(void)
{
    return ngo_max_threads(ngo_rt_for_site(SITE, NGO_OMP_GET_MAX_THREADS));
}

NGO_EXPORT void omp_set_num_threads(int n)
{
    const ngo_rt *rt = ngo_rt_for_site(SITE, NGO_OMP_SET_NUM_THREADS);
    if (ngo_set_num_threads(n))
        ((void (*)(int))rt->fn[NGO_OMP_SET_NUM_THREADS])(n);
}
