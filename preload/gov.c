/* The governor's decision (docs/omp-adaptive.md, "The rule"):
 *
 *  - budget B: the task's cores, NUMAGUARD_OMP_CORES (what --omp-guard=auto
 *    exports as OMP_NUM_THREADS), else the CPUs of the process's affinity;
 *  - callers C: the threads inside an outermost region they started, and
 *    those that ended one in the last window W (a thread counts from its
 *    first region on, at once, for as long as that region runs, however
 *    long; it stops counting W after the END of its last one; W:
 *    NUMAGUARD_OMP_WINDOW_MS, default 100 ms), once two callers were seen
 *    at once (before that, threads that take turns are one caller each);
 *  - an outermost region without num_threads gets min(what the runtime
 *    would give, max(1, B / C)), or what omp_get_max_threads() told this
 *    thread just before, when that was more (code sizes its work by it);
 *  - an explicit num_threads(k), or a thread's own omp_set_num_threads(k),
 *    is kept up to B (a team the program sized itself may be waited for
 *    by each of its k jobs: OpenBLAS's OpenMP build spins on them);
 *  - a nested region is left alone unless the nest would run more than
 *    the outermost caller's share (explicit: B) at once; then each inner
 *    team is cut to max(1, share / threads already in the nest).
 *
 * The entry points call ngo_decide() before the runtime starts a team and
 * ngo_region_end() once the runtime returned (the caller's team is done;
 * libgomp's combined forms: once the caller's own share of it returned).
 * Per region a single caller pays a coarse clock read, a few thread-local
 * accesses, two calls into the runtime (its level and its nthreads-var)
 * and one atomic exchange on the way in; a thread-local decrement, a
 * coarse clock read and one store on the way out. A caller whose share
 * is one core (a pool's) makes one call into the runtime: its level. */
#include "gov.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WINDOW_MS 100      /* default: a caller is "recent" this long after its last region ended */
#define WINDOW_MS_MAX 60000
#define RECOUNT_MS 10      /* how often the callers that left are taken off */
#define SLOTS 1024         /* callers tracked one by one; more share one count */

/* A caller's state is one word, so that a recount can never take off a
 * thread that is entering a region at the same moment: the recount's
 * compare-and-swap expects the very value it judged (not INSIDE, COUNTED,
 * an old end), and an arrival changes it. While INSIDE, only the thread
 * itself writes the word (and COUNTED stays set): the way out is a store
 * of the end's time (a coarse clock read, about 5 ns here: stamping it
 * later, at the next recount, would make a caller that ended long before
 * a quiet spell count again when the next region starts). */
#define ST_INSIDE (UINT64_C(1) << 63)    /* in an outermost region it started */
#define ST_COUNTED (UINT64_C(1) << 62)   /* included in g_recent */
#define ST_TOUCH (UINT64_C(1) << 61)     /* its last call was omp_get_max_threads (touch) */
#define ST_MS (ST_TOUCH - 1)             /* ms: its last region's end (start while INSIDE) */

/* One cache line per caller, aligned to one: each caller writes its own
 * slot twice a region, and neighbours on one line would bounce it between
 * their cores. The 64-byte size alone is not enough: unaligned, the array
 * started 0x20 into a line, so each slot straddled two. */
#define SLOT_LINE 64
typedef struct slot {
    _Alignas(SLOT_LINE) _Atomic uint64_t state;   /* ST_* */
    _Atomic int owned;                             /* a live thread holds it */
} slot;
_Static_assert(sizeof(slot) == SLOT_LINE, "a slot is one cache line");

static slot slots[SLOTS];
static _Atomic unsigned g_hiwater;     /* slots ever handed out */
static _Atomic unsigned g_recent;      /* callers counted now */
static _Atomic uint64_t g_next_recount;
static unsigned g_budget = 1;
static unsigned g_default;             /* the team a thread gets by default (echo_of_default) */
static int g_look_at_load = 1;         /* NUMAGUARD_OMP_LOAD */
static _Atomic int g_together;         /* two callers were seen at once (callers) */
static uint64_t g_window_ms = WINDOW_MS;   /* NUMAGUARD_OMP_WINDOW_MS */
static int g_debug;
static pthread_key_t g_key;

/* Per thread: its slot, how deep it is in regions it started itself (1:
 * in its outermost one; each of its nested regions adds one), what
 * omp_get_max_threads last told it, whether it set its own count,
 * libomp's pending num_threads clause. */
/* initial-exec: the library is preloaded, its few bytes of TLS are in the
 * static block, and each access is one instruction, not a call to
 * __tls_get_addr (several per region otherwise). */
#define NGO_TLS _Thread_local __attribute__((tls_model("initial-exec")))
static NGO_TLS int t_slot = -1;
static NGO_TLS unsigned t_depth;
static NGO_TLS unsigned t_promise;
static NGO_TLS int t_own_count;
static NGO_TLS unsigned t_clause;
static NGO_TLS int t_blas_outer;   /* the outermost call (t_depth 1) is a BLAS call */

int ngo_debug_on(void)
{
    return g_debug;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---------------------------------------------------------------- */
/* Callers                                                            */
/* ---------------------------------------------------------------- */

/* A thread exits (also inside a region: pthread_exit from its team's
 * code): it no longer counts. A destructor that runs after this one and
 * starts a region claims a slot afresh. */
static void thread_gone(void *v)
{
    int i = (int)(intptr_t)v - 1;
    t_slot = -1;
    t_depth = 0;
    if (i < 0 || i >= SLOTS)
        return;
    slot *s = &slots[i];
    uint64_t st = atomic_load(&s->state);
    while ((st & ST_COUNTED) && !atomic_compare_exchange_weak(&s->state, &st, st & ST_MS))
        ;
    if (st & ST_COUNTED)
        atomic_fetch_sub(&g_recent, 1);
    atomic_store(&s->owned, 0);
}

static int claim_slot(void)
{
    for (unsigned i = 0; i < SLOTS; i++) {
        int zero = 0;
        if (!atomic_compare_exchange_strong(&slots[i].owned, &zero, 1))
            continue;
        unsigned h = atomic_load(&g_hiwater);
        while (h < i + 1 && !atomic_compare_exchange_weak(&g_hiwater, &h, i + 1))
            ;
        pthread_setspecific(g_key, (void *)(intptr_t)(i + 1));
        return (int)i;
    }
    return -2;   /* no slot: counted as one more caller on each of its regions */
}

/* Take off the callers outside any region whose last one ended more than
 * the window ago; one thread at a time, every RECOUNT_MS. A thread inside
 * a region is never taken off, however long the region runs. */
static void recount(uint64_t now)
{
    uint64_t due = atomic_load_explicit(&g_next_recount, memory_order_relaxed);
    if (now < due || !atomic_compare_exchange_strong(&g_next_recount, &due, now + RECOUNT_MS))
        return;
    unsigned hi = atomic_load(&g_hiwater);
    for (unsigned i = 0; i < hi && i < SLOTS; i++) {
        uint64_t st = atomic_load_explicit(&slots[i].state, memory_order_relaxed);
        if ((st & (ST_COUNTED | ST_INSIDE)) == ST_COUNTED && (st & ST_MS) + g_window_ms < now &&
            atomic_compare_exchange_strong(&slots[i].state, &st, st & ~ST_COUNTED))
            atomic_fetch_sub(&g_recent, 1);
    }
}

/* This thread starts an outermost region: it counts from now on, and
 * until the window after the region ends. */
static void arrive(uint64_t now)
{
    if (t_slot == -1)
        t_slot = claim_slot();
    if (t_slot < 0)
        return;
    uint64_t was = atomic_exchange(&slots[t_slot].state, ST_INSIDE | ST_COUNTED | (now & ST_MS));
    if (!(was & ST_COUNTED))
        atomic_fetch_add(&g_recent, 1);
}

void ngo_region_end(void)
{
    if (t_depth == 0 || --t_depth > 0)
        return;   /* a team member's region, or a nested one: the outermost goes on */
    if (t_slot >= 0)
        atomic_store_explicit(&slots[t_slot].state, ST_COUNTED | (now_ms() & ST_MS),
                              memory_order_relaxed);
}

/* Callers at this very moment: threads inside a region they started, and
 * those whose last call was omp_get_max_threads within the window
 * (OpenBLAS's OpenMP build then works on the calling thread, with no
 * region to be inside). A few relaxed loads: the slots ever handed out. */
static unsigned callers_at_once(void)
{
    unsigned n = 0, hi = atomic_load_explicit(&g_hiwater, memory_order_relaxed);
    for (unsigned i = 0; i < hi && i < SLOTS; i++) {
        uint64_t st = atomic_load_explicit(&slots[i].state, memory_order_relaxed);
        n += (st & ST_INSIDE) || (st & (ST_COUNTED | ST_TOUCH)) == (ST_COUNTED | ST_TOUCH);
    }
    return n;
}

/* The callers now; @p me: count this thread even if it has no region yet.
 * Until two callers have been seen at once, a thread whose region ended
 * is no caller any more: threads that take turns (numpy's main thread,
 * then one pool worker, each calling BLAS; a worker started when the last
 * one returned) are one caller at a time and each gets all the cores,
 * where the window would have halved the next one's team for 100 ms.
 * From the first time two are seen together (a pool), for good, a caller
 * counts for the window after its last region, as the rule says. */
static unsigned callers(int me)
{
    unsigned c = atomic_load_explicit(&g_recent, memory_order_relaxed);
    int counted = t_slot >= 0 &&
                  (atomic_load_explicit(&slots[t_slot].state, memory_order_relaxed) & ST_COUNTED);
    unsigned extra = (me && !counted) || t_slot == -2;
    if (!atomic_load_explicit(&g_together, memory_order_relaxed)) {
        unsigned now = callers_at_once() + extra;
        if (now < 2)
            return 1;
        atomic_store_explicit(&g_together, 1, memory_order_relaxed);
        if (g_debug)
            ngo_say("%u callers at once: a pool; callers count for the window after their "
                    "regions from now on", now);
    }
    c += extra;
    return c ? c : 1;
}

/* The cores to share: those of B that others' load leaves free. A team
 * wider than the free cores waits at each barrier for a partner another
 * thread holds: a lone caller on busy cores (a pool's last caller; a
 * program's first product before its pool starts) loses to a team of 1,
 * by milliseconds per region. One caller on quiet cores gets all of them. */
static unsigned cores_now(unsigned c, uint64_t now)
{
    if (!g_look_at_load || g_budget < 2)
        return g_budget;
    return ngo_free_cores(now, g_budget, c);
}

/* Each of @p c callers' share of @p cores: at least 1. */
static unsigned share_in(unsigned cores, unsigned c)
{
    unsigned s = cores / c;
    return s ? s : 1;
}

static unsigned share_of(unsigned c, uint64_t now)
{
    return share_in(cores_now(c, now), c);
}

/* Is @p n what the task's defaults give a thread that asked nothing (the
 * runtime's default, OMP_NUM_THREADS or the CPUs; or the task's cores)?
 * Then omp_set_num_threads(n) or num_threads(n) echoes the default (torch
 * sets OMP_NUM_THREADS's count in each of its threads; scikit-learn passes
 * omp_get_max_threads() as num_threads) and is governed like no request.
 * A count below it is the program's choice. */
static int echo_of_default(unsigned n)
{
    return n >= 2 && (n == g_default || n == g_budget);
}

/* ---------------------------------------------------------------- */
/* The decision                                                       */
/* ---------------------------------------------------------------- */

static int call_int0(const ngo_rt *rt, enum ngo_sym s, int dflt)
{
    return rt->fn[s] ? ((int (*)(void))rt->fn[s])() : dflt;
}

/* Nested: cut the inner team when the nest would exceed @p budget. */
static unsigned nested(const ngo_ask *a, int level, unsigned asked, unsigned budget)
{
    int active = call_int0(a->rt, NGO_OMP_GET_ACTIVE_LEVEL, 0);
    int max_active = call_int0(a->rt, NGO_OMP_GET_MAX_ACTIVE_LEVELS, 1);
    if (active >= max_active)
        return 0;   /* the runtime runs it with one thread anyway */
    unsigned in_nest = 1;
    int (*team_size)(int) = (int (*)(int))a->rt->fn[NGO_OMP_GET_TEAM_SIZE];
    for (int l = 1; team_size && l <= level && in_nest < budget; l++) {
        int t = team_size(l);
        in_nest *= t > 0 ? (unsigned)t : 1u;
    }
    unsigned want = asked ? asked : (unsigned)call_int0(a->rt, NGO_OMP_GET_MAX_THREADS, 1);
    if ((unsigned long)in_nest * want <= budget)
        return 0;
    unsigned cut = budget / in_nest;
    cut = cut ? cut : 1;
    if (g_debug)
        ngo_say("%s %s: nested level %d, %u threads in the nest, asked %u, budget %u -> %u",
                a->rt->kind, a->entry, level, in_nest, want, budget, cut);
    return cut < want ? cut : 0;
}

/* An explicit team (clause or the thread's own count): kept up to B. */
static unsigned explicit_team(const ngo_ask *a, unsigned c)
{
    unsigned k = a->clause ? a->clause : (unsigned)call_int0(a->rt, NGO_OMP_GET_MAX_THREADS, 1);
    unsigned give = k > g_budget ? g_budget : k;
    if (g_debug)
        ngo_say("%s %s: outermost, %s %u, %u caller%s, %u cores -> %u", a->rt->kind, a->entry,
                a->clause ? "num_threads" : "omp_set_num_threads", k, c, c == 1 ? "" : "s",
                g_budget, give);
    return give < k ? give : a->clause;
}

/* The team of this thread's outermost region (arrived, counted). */
static unsigned outermost(const ngo_ask *a, uint64_t now)
{
    unsigned c = callers(1);
    unsigned promise = t_promise;
    t_promise = 0;
    int echo = a->clause && echo_of_default(a->clause);
    if ((a->clause && !echo) || t_own_count)
        return explicit_team(a, c);
    unsigned cores = cores_now(c, now);
    unsigned share = share_in(cores, c);
    /* A team of 1 (a pool's callers, most of its regions) needs no look
     * at the runtime's count, which is at least 1: one call into the
     * runtime less per region (with the count at 1 as well, 1 passed
     * where 0 would be: the same team). */
    if (share <= 1 && promise <= 1 && !echo && !g_debug)
        return 1;
    /* the most it may get: the runtime's count, or the clause it echoes */
    unsigned icv = echo ? a->clause : (unsigned)call_int0(a->rt, NGO_OMP_GET_MAX_THREADS, 1);
    unsigned give = share > promise ? share : promise;
    give = give < icv ? give : icv;
    if (g_debug)
        ngo_say("%s %s: outermost, %s %u, %u caller%s share %u cores%s%s -> %u", a->rt->kind,
                a->entry, echo ? "num_threads echoing the default" : "runtime would give", icv, c,
                c == 1 ? "" : "s", cores, cores < g_budget ? " (others' load leaves free)" : "",
                promise > share ? " (kept what omp_get_max_threads said)" : "", give);
    return give < icv || echo ? give : 0;
}

unsigned ngo_decide(const ngo_ask *a)
{
    int level = call_int0(a->rt, NGO_OMP_GET_LEVEL, 0);
    uint64_t now = now_ms();
    recount(now);
    /* Depth, not the runtime's level, tells the outermost region's end:
     * a region of another runtime inside this one's is at that runtime's
     * level 0, and the way out needs no call into the runtime. */
    if (t_depth)
        t_depth++;
    if (level > 0) {
        unsigned budget = a->clause || t_own_count ? g_budget : share_of(callers(0), now);
        unsigned cut = nested(a, level, a->clause, budget);
        return cut ? cut : a->clause;
    }
    if (!t_depth) {
        arrive(now);
        t_depth = 1;
        t_blas_outer = 0;
    }
    return outermost(a, now);
}

unsigned ngo_blas_enter(int *counted)
{
    /* Inside a region, the call is part of a team's work: not a caller
     * anew, and its pool is 1 thread (as OpenBLAS's OpenMP build runs
     * calls from inside a region; its pthreads build would otherwise add
     * its whole pool to each thread of the team). Inside another BLAS
     * call of this thread (BLIS's cblas_dgemm calls its dgemm_ through
     * the PLT, so through here), the pool stays as the outer call sized
     * it: 0, nothing to set (1 would run the caller's own call alone). */
    *counted = 1;
    if (t_depth) {
        t_depth++;
        return t_blas_outer ? 0 : 1;
    }
    if (ngo_in_gomp_region()) {
        *counted = 0;   /* a team's thread: no region of its own to end */
        return 1;
    }
    uint64_t now = now_ms();
    recount(now);
    arrive(now);
    t_depth = 1;
    t_blas_outer = 1;
    return share_of(callers(1), now);
}

/* A thread that asks omp_get_max_threads outside any region counts as a
 * caller for the window, as if it had run a region: OpenBLAS's OpenMP
 * build asks on every call and runs small ones on the calling thread
 * alone, with no region; its threads busy that way are callers too. */
static void touch(uint64_t now)
{
    if (t_depth)
        return;
    if (t_slot == -1)
        t_slot = claim_slot();
    if (t_slot < 0)
        return;
    uint64_t was = atomic_load_explicit(&slots[t_slot].state, memory_order_relaxed);
    if (was & ST_INSIDE)
        return;
    was = atomic_exchange(&slots[t_slot].state, ST_COUNTED | ST_TOUCH | (now & ST_MS));
    if (!(was & ST_COUNTED))
        atomic_fetch_add(&g_recent, 1);
}

int ngo_max_threads(const ngo_rt *rt)
{
    int icv = call_int0(rt, NGO_OMP_GET_MAX_THREADS, 1);
    if (t_own_count || icv <= 1 || call_int0(rt, NGO_OMP_GET_LEVEL, 0) > 0)
        return icv;
    uint64_t now = now_ms();
    recount(now);
    touch(now);
    unsigned c = callers(1), cores = cores_now(c, now);
    unsigned share = share_in(cores, c);
    unsigned give = share < (unsigned)icv ? share : (unsigned)icv;
    t_promise = give;
    if (g_debug && give < (unsigned)icv)
        ngo_say("%s omp_get_max_threads: %u instead of %d (%u callers share %u cores%s)", rt->kind,
                give, icv, c, cores, cores < g_budget ? ", others' load leaving those free" : "");
    return (int)give;
}

int ngo_set_num_threads(int n)
{
    if (n > 0 && t_promise && (unsigned)n == t_promise) {
        if (g_debug)
            ngo_say("omp_set_num_threads(%d) echoes omp_get_max_threads: not passed on", n);
        return 0;
    }
    if (n > 0 && echo_of_default((unsigned)n)) {
        t_own_count = 0;
        if (g_debug)
            ngo_say("omp_set_num_threads(%d) echoes the default: this thread stays governed", n);
        return 1;
    }
    t_own_count = n > 0;
    if (g_debug)
        ngo_say("omp_set_num_threads(%d): this thread's count is the program's from now on", n);
    return 1;
}

void ngo_note_clause(int n)
{
    t_clause = n > 0 ? (unsigned)n : 0;
}

unsigned ngo_take_clause(void)
{
    unsigned k = t_clause;
    t_clause = 0;
    return k;
}

/* ---------------------------------------------------------------- */
/* Start, fork                                                        */
/* ---------------------------------------------------------------- */

/* A fork's child has one thread, the one that forked: nobody else's slot
 * is alive there, and a recount in progress in the parent never ends. */
static void after_fork_child(void)
{
    for (unsigned i = 0; i < SLOTS; i++) {
        atomic_store(&slots[i].owned, 0);
        atomic_store(&slots[i].state, 0);
    }
    atomic_store(&g_hiwater, 0);
    atomic_store(&g_recent, 0);
    atomic_store(&g_next_recount, 0);
    atomic_store(&g_together, 0);
    t_slot = -1;
    t_depth = 0;   /* a fork inside a region: the child's way out ends nothing */
    t_promise = 0;
    pthread_setspecific(g_key, NULL);   /* its slot number was the parent's */
}

/* The decimal number 1..@max in environment variable @name, else 0 (unset,
 * empty, a sign, a leading zero, trailing characters, too large). */
static unsigned long env_count(const char *name, unsigned long max)
{
    const char *v = getenv(name);
    char *end;
    unsigned long n = v && *v >= '1' && *v <= '9' ? strtoul(v, &end, 10) : 0;
    return n && *end == '\0' && n <= max ? n : 0;
}

/* The CPUs of the process's affinity (what the runtimes count by default). */
static unsigned affinity_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (unsigned)c : 1;
}

/* The budget, lowered to the cgroup's CPU quota (a process with a quota of
 * one core gains nothing from a team of two; the plugin lowers
 * NUMAGUARD_OMP_CORES the same way, numaguard exec or a quota set by
 * hand may not). */
static unsigned budget_from_env(const char **from)
{
    unsigned long n = env_count("NUMAGUARD_OMP_CORES", 65536);
    *from = n ? "NUMAGUARD_OMP_CORES" : "the process's CPU affinity";
    unsigned b = n ? (unsigned)n : affinity_cpus();
    unsigned q = ngo_quota_cores();
    if (q && q < b) {
        *from = n ? "NUMAGUARD_OMP_CORES, lowered to the cgroup's CPU quota"
                  : "the process's CPU affinity, lowered to the cgroup's CPU quota";
        b = q;
    }
    return b;
}

/* The count a thread that set none gets: OMP_NUM_THREADS's first number
 * ("4" or "4,2"), else the CPUs of the affinity (libgomp and libomp). */
static unsigned default_team(void)
{
    const char *v = getenv("OMP_NUM_THREADS");
    char *end;
    unsigned long n = v && *v >= '1' && *v <= '9' ? strtoul(v, &end, 10) : 0;
    if (n && n <= 65536 && (*end == '\0' || *end == ','))
        return (unsigned)n;
    return affinity_cpus();
}

/* NUMAGUARD_OMP_WINDOW_MS: how long a caller counts after its last
 * region ended, 1-60000 ms (default 100). Longer keeps a caller that is
 * descheduled between regions on a loaded node counted (its peers keep
 * small teams), at the price of a lone caller getting all the cores that
 * much later after the others stopped. Anything else: the default. */
static uint64_t window_from_env(void)
{
    unsigned long n = env_count("NUMAGUARD_OMP_WINDOW_MS", WINDOW_MS_MAX);
    return n ? n : WINDOW_MS;
}

__attribute__((constructor)) static void ngo_init(void)
{
    const char *d = getenv("NUMAGUARD_OMP_DEBUG");
    g_debug = d && *d && strcmp(d, "0") != 0;
    const char *from = "";
    g_budget = budget_from_env(&from);
    g_default = default_team();
    g_window_ms = window_from_env();
    const char *l = getenv("NUMAGUARD_OMP_LOAD");
    g_look_at_load = !(l && strcmp(l, "0") == 0);
    ngo_load_init();
    if (g_look_at_load && g_budget >= 2)
        ngo_load_start();
    pthread_key_create(&g_key, thread_gone);
    pthread_atfork(NULL, NULL, after_fork_child);
    if (g_debug)
        ngo_say("governing OpenMP teams: %u cores (from %s), callers counted in their regions "
                "and %u ms after; a count of %u is the default's echo%s",
                g_budget, from, (unsigned)g_window_ms, g_default,
                g_look_at_load ? "" : "; others' load not looked at (NUMAGUARD_OMP_LOAD=0)");
    ngo_rt_scan_static();
}
