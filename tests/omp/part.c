/* A shared library with OpenMP regions, built twice by mk/omp-adaptive.mk:
 * gcc (needs libgomp) and clang (needs libomp). tests/omp/two_runtimes.py
 * loads both RTLD_LOCAL into one Python process, as wheels that bundle
 * their own runtime are loaded, and calls them from threads: the governor
 * must forward each call to its own library's runtime. */
#include <omp.h>

static volatile double sink;

/* The largest team over @p regions outermost regions. */
int ng_part_teams(int regions)
{
    int most = 0;
    for (int r = 0; r < regions; r++) {
        int n = 0;
#pragma omp parallel
        {
            double x = 0;
            for (int i = 0; i < 20000; i++)
                x += i * 0.5;
            sink = x;
#pragma omp single
            n = omp_get_num_threads();
        }
        most = n > most ? n : most;
    }
    return most;
}

/* The team of the last of @p regions regions. */
int ng_part_last(int regions)
{
    int n = 0;
    for (int r = 0; r < regions; r++) {
#pragma omp parallel
        {
#pragma omp single
            n = omp_get_num_threads();
        }
    }
    return n;
}
