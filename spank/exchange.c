/* Task GPU exchange: the step's tasks tell each other which GPUs Slurm
 * really gave them, so that all of them can plan with the real lists.
 *
 * Why: a task's own GPU variables (CUDA_VISIBLE_DEVICES, per-task
 * SLURM_STEP_GPUS) exist only in task_init, in that task's process, and
 * slurmstepd does not expose --gpu-bind (map_gpu, mask_gpu, closest) to the
 * plugin. The plan made in user_init predicts the per-task split; when
 * Slurm bound differently, each task would otherwise sit next to the wrong
 * GPU.
 *
 * How: user_init (slurmstepd, before it forks the tasks) maps one shared
 * anonymous region. slurmstepd forks every task of the step and then lets
 * them run task_init together, so each task writes its slot, counts itself
 * in, and waits (bounded) for the others. When everyone arrived, every task
 * holds the same lists and the same deterministic planner gives every task
 * the same plan. On timeout (a task died before task_init) a task keeps the
 * prediction: its slice is still disjoint from the others'. */
#include "ng_spank.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct slot {
    atomic_int state;        /* 0 empty, 1 known GPUs, 2 unknown */
    unsigned n;
    int gpus[NG_MAX_GPUS];
} slot;

struct ng_exchange {
    size_t bytes;
    unsigned ntasks;
    atomic_uint arrived;
    slot slots[];
};

ng_exchange *ng_exchange_create(unsigned ntasks)
{
    if (ntasks == 0 || ntasks > 4096)
        return NULL;
    size_t bytes = sizeof(ng_exchange) + (size_t)ntasks * sizeof(slot);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return NULL;
    ng_exchange *x = mem;   /* zero-filled by the kernel */
    x->bytes = bytes;
    x->ntasks = ntasks;
    return x;
}

void ng_exchange_destroy(ng_exchange *x)
{
    if (x)
        munmap(x, x->bytes);
}

int ng_exchange_all(ng_exchange *x, unsigned local, const int *gpus, unsigned n,
                    unsigned timeout_ms)
{
    if (!x || local >= x->ntasks)
        return 0;
    slot *s = &x->slots[local];
    s->n = gpus && n <= NG_MAX_GPUS ? n : 0;
    if (s->n)
        memcpy(s->gpus, gpus, s->n * sizeof(int));
    atomic_store(&s->state, gpus ? 1 : 2);
    atomic_fetch_add(&x->arrived, 1);
    const struct timespec nap = {0, 200 * 1000};   /* 0.2 ms */
    for (unsigned waited_us = 0; waited_us < timeout_ms * 1000u; waited_us += 200) {
        if (atomic_load(&x->arrived) >= x->ntasks)
            return 1;
        nanosleep(&nap, NULL);
    }
    return atomic_load(&x->arrived) >= x->ntasks;
}

int ng_exchange_gpus(const ng_exchange *x, unsigned task, const int **gpus, unsigned *n)
{
    if (!x || task >= x->ntasks)
        return 0;
    const slot *s = &x->slots[task];
    if (atomic_load((atomic_int *)&s->state) != 1)
        return 0;
    *gpus = s->gpus;
    *n = s->n;
    return 1;
}
