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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct slot {
    atomic_int state;        /* 0 empty, 1 known GPUs, 2 unknown */
    unsigned n;
    int gpus[NG_MAX_GPUS];
} slot;

/* The shared page holds only what tasks write. Its size and the task count
 * stay in private memory: the tasks run as the user and can write the
 * page, and slurmstepd (root) must never take a length from it. */
typedef struct shared {
    atomic_uint arrived;
    slot slots[];
} shared;

struct ng_exchange {
    size_t bytes;
    unsigned ntasks;
    shared *page;
};

ng_exchange *ng_exchange_create(unsigned ntasks)
{
    if (ntasks == 0 || ntasks > 4096)
        return NULL;
    ng_exchange *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    x->bytes = sizeof(shared) + (size_t)ntasks * sizeof(slot);
    x->ntasks = ntasks;
    void *mem = mmap(NULL, x->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        free(x);
        return NULL;
    }
    x->page = mem;   /* zero-filled by the kernel */
    return x;
}

void ng_exchange_destroy(ng_exchange *x)
{
    if (!x)
        return;
    munmap(x->page, x->bytes);
    free(x);
}

int ng_exchange_all(ng_exchange *x, unsigned local, const int *gpus, unsigned n,
                    unsigned timeout_ms)
{
    if (!x || local >= x->ntasks)
        return 0;
    slot *s = &x->page->slots[local];
    s->n = gpus && n <= NG_MAX_GPUS ? n : 0;
    if (s->n)
        memcpy(s->gpus, gpus, s->n * sizeof(int));
    atomic_store(&s->state, gpus ? 1 : 2);
    atomic_fetch_add(&x->page->arrived, 1);
    const struct timespec nap = {0, 200 * 1000};   /* 0.2 ms */
    for (unsigned waited_us = 0; waited_us < timeout_ms * 1000u; waited_us += 200) {
        if (atomic_load(&x->page->arrived) >= x->ntasks)
            return 1;
        nanosleep(&nap, NULL);
    }
    return atomic_load(&x->page->arrived) >= x->ntasks;
}

int ng_exchange_gpus(const ng_exchange *x, unsigned task, unsigned ngpus_max,
                     int *gpus, unsigned *n)
{
    if (!x || task >= x->ntasks)
        return 0;
    const slot *s = &x->page->slots[task];
    if (atomic_load((atomic_int *)&s->state) != 1)
        return 0;
    /* Another task (same user) wrote this: copy once, then check the copy. */
    unsigned k = s->n;
    if (k > NG_MAX_GPUS)
        return 0;
    memcpy(gpus, s->gpus, k * sizeof(int));
    for (unsigned i = 0; i < k; i++)
        if (gpus[i] < 0 || (unsigned)gpus[i] >= ngpus_max)
            return 0;
    *n = k;
    return 1;
}
