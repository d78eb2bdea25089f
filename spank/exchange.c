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
 * in, and sleeps (futex on the shared counter, bounded by CLOCK_MONOTONIC)
 * until the others arrived. When everyone arrived, every task
 * holds the same lists and the same deterministic planner gives every task
 * the same plan. On timeout (a task died before task_init) a task keeps the
 * prediction: its slice is still disjoint from the others'. */
#include "ng_spank.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

/* @p t + @p ms milliseconds. */
static void add_ms(struct timespec *t, unsigned ms)
{
    t->tv_sec += ms / 1000;
    t->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static int past(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec ||
           (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* Sleep while *word still holds @p seen, until woken or @p deadline
 * (absolute, CLOCK_MONOTONIC: FUTEX_WAIT_BITSET's clock). The page is
 * shared between processes, so no FUTEX_PRIVATE_FLAG. atomic_uint has the
 * representation of unsigned on Linux, which the futex word needs. */
static void sleep_while(atomic_uint *word, unsigned seen, const struct timespec *deadline)
{
    long rc = syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_BITSET, seen, deadline, NULL,
                      FUTEX_BITSET_MATCH_ANY);
    if (rc < 0 && errno != EAGAIN && errno != ETIMEDOUT && errno != EINTR) {
        /* No futex (seccomp, emulation): still sleep, never spin. */
        const struct timespec nap = {0, 2 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

static void wake_all(atomic_uint *word)
{
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Bounded by the clock, not by a count of naps: with hundreds of tasks
 * on few CPUs each nap overslept, and the old 0.2 ms polling loop took
 * 30 s for a "3 s" timeout while keeping every CPU busy. Now each task
 * sleeps in the kernel until the last one arrives (one wake-up for all)
 * or the deadline passes. */
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
    atomic_uint *arrived = &x->page->arrived;
    if (atomic_fetch_add(arrived, 1) + 1 >= x->ntasks) {
        wake_all(arrived);
        return 1;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    add_ms(&deadline, timeout_ms);
    for (;;) {
        unsigned seen = atomic_load(arrived);
        if (seen >= x->ntasks)
            return 1;
        if (past(&deadline))
            return 0;
        sleep_while(arrived, seen, &deadline);
    }
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
