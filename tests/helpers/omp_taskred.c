/* A parallel region with a task reduction (OpenMP 5.0: `reduction(task,
 * +: x)`, tasks with `in_reduction`): GCC compiles it to
 * GOMP_parallel_reductions, whose runtime reads the reductions' list
 * from the first word of the region's data. Run under the governor, it
 * shows that data reaches the runtime as the program's own.
 *
 *   omp_taskred [ROUNDS]   default 20
 *
 * Prints "taskred rounds R wrong W teams MIN-MAX" (W: rounds whose sum
 * was not 0 + 1 + ... + 99 = 4950). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    if (rounds < 1 || rounds > 100000) {
        fprintf(stderr, "usage: omp_taskred [ROUNDS 1-100000]\n");
        return 2;
    }
    int wrong = 0, tmin = 1 << 30, tmax = 0;
    for (int r = 0; r < rounds; r++) {
        long x = 0;
        int team = 0;
#pragma omp parallel reduction(task, + : x)
        {
#pragma omp single
            {
                team = omp_get_num_threads();
                for (int i = 0; i < 100; i++) {
#pragma omp task in_reduction(+ : x)
                    x += i;
                }
            }
        }
        wrong += x != 4950;
        tmin = team < tmin ? team : tmin;
        tmax = team > tmax ? team : tmax;
    }
    printf("taskred rounds %d wrong %d teams %d-%d\n", rounds, wrong, tmin, tmax);
    return wrong != 0;
}
