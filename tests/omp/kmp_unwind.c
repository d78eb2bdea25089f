/* backtrace() inside a region compiled by clang -fopenmp, the program
 * linked against tests/omp/kmp_mini.c's runtime instead of libomp
 * (tests/arm64/governor.sh says why). Prints "unwind caller F via
 * SYM@OBJ ..." (F: 1 when the frame of the function that opened the
 * region was found; the __kmpc_fork_call frames on the way, innermost
 * first) and "team N" (what omp_get_num_threads said inside). */
#include <execinfo.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include "../helpers/unwind_via.h"

static void *want;
static int found, team;
static char via[160];

static __attribute__((noinline)) void look(void)
{
    void *frames[64];
    int n = backtrace(frames, 64);
    for (int i = 0; i < n; i++) {
        if (frames[i] == want)
            found = 1;
        ng_unwind_via(via, sizeof via, frames[i]);
    }
}

static __attribute__((noinline)) void opens_region(int *seen)
{
    want = __builtin_return_address(0);
#pragma omp parallel shared(seen)
    {
        *seen = omp_get_num_threads();
        look();
    }
}

int main(void)
{
    void *warm[4];
    backtrace(warm, 4);   /* loads the unwinder before the region */
    opens_region(&team);
    printf("unwind caller %d via %s\nteam %d\n", found, via[0] ? via : "-", team);
    return 0;
}
