/* The planner's phases and the state they share (lib/plan/). Private to the
 * library (ngi_* names). Each file calls only the ones listed before it:
 *
 *   common.c   the plan's warnings, a task's GPUs in the request
 *   line.c     a line of cores: the objective's terms, the even-size cuts
 *   align.c    the aligned cuts (domains, packages, CPU groups)
 *   cut.c      choosing among the families, cutting units into slices
 *   record.c   the cuts' records for the explanation; each task's last one
 *   domains.c  units (cores), domains (memory node + its CPUs), CPU groups
 *   bound.c    GPU tasks kept on their GPU's package: groups and sizes
 *   home.c     GPU tasks' homes (their GPUs' units, or one nearest domain)
 *   seat.c     GPU tasks: components, spilling, sharing cores
 *   mem.c      memory nodes of a task
 *   threads.c  the thread variables of a task
 *   net.c      the NICs of each task (--net-affinity)
 *   plan.c     request checks, orchestration, sizes, the public calls
 *   why.c      one sentence per task (plans alternatives again: above plan.c)
 *   explain.c  ng_plan_explain: the objective's terms, the cuts, the sentences
 *
 * Vocabulary (docs/planner.md):
 *  - unit:   one core (its allowed PUs together) or a lone PU.
 *  - domain: a CPU-bearing NUMA node with its allowed units, plus the
 *            memoryless units attached to it (nearest by distance).
 *  - line:   units in domain-major order; slices are runs of a line.
 *  - home:   the units local to a task's GPUs (or one nearest domain).
 */
#ifndef NGI_PLAN_H
#define NGI_PLAN_H

#include "options.h"
#include "topo.h"

/* ---- net.c: --net-affinity, the NICs of each task (docs/network.md) ---- */

/** Input of ngi_net_plan_compute: the tasks of one node. */
typedef struct ngi_net_request {
    ng_net_affinity aff;
    const ng_nic_filter *filter;     /**< NULL = default */
    unsigned ntasks;
    /** Per-task GPU lists, as in ng_plan_request (all NULL = no GPUs). */
    const unsigned *task_gpu_count;
    const unsigned *task_gpu_offset;
    const int *task_gpus;
    /** Per-task CPUs (for tasks without GPUs); NULL, or a NULL entry = the
     *  topology's allowed CPUs. */
    const hwloc_const_cpuset_t *task_cpus;
} ngi_net_request;

/** Opaque: each task's NICs and network variables on one node. */
typedef struct ngi_net_plan ngi_net_plan;

/**
 * Per task, the NIC(s) nearest its GPU(s) (its CPUs when it has none):
 * with auto, for each of its GPUs the NICs at the smallest distance; when
 * several tie, the tasks that tie on the same NICs take them in turn
 * (round robin in task order). With N, the task's list goes on with the
 * next nearest NICs up to N. Variables: UCX_NET_DEVICES (dev:port,
 * nearest first), for RDMA NICs OMPI_MCA_btl_openib_if_include and, for
 * tasks with GPUs, NVSHMEM_HCA_LIST; NCCL_IB_HCA ("=dev:port,...", exact
 * names) is one list for the whole node: the RDMA NICs nearest to any GPU
 * of the topology, the same in every task (nccl_per_rank: the task's own).
 * No NIC (or mode off): nothing exported, not an error. Pure.
 */
int ngi_net_plan_compute(const ng_topology *topo, const ngi_net_request *req,
                         ngi_net_plan **out, char *err, size_t errlen);
void ngi_net_plan_free(ngi_net_plan *np);
/** Task @p task's NICs (topology NIC indices, nearest first); returns the count. */
unsigned ngi_net_plan_task_nics(const ngi_net_plan *np, unsigned task, const unsigned **nics);
/** Task @p task's variables; returns the count. */
unsigned ngi_net_plan_task_env(const ngi_net_plan *np, unsigned task, const ng_net_env **env);
/** The node's NCCL_IB_HCA value ("" when none). */
const char *ngi_net_plan_nccl_hca(const ngi_net_plan *np);

/* ---- threads.c: the thread variables of a task ---- */

/**
 * Compute the thread variables for a task owning @p threads threads.
 * @param vars  NULL-terminated list of count variables, or NULL for the default
 * @param smt   1 if places are hardware threads (with guard->bind)
 * Fills @p out with the count variables; with guard->bind, followed by
 * OMP_PROC_BIND (flag NG_ENV_BINDING: "close" when there is one thread per
 * place, else "spread"). OMP_PLACES is not in the list: ng_apply_task
 * writes it from the CPUs it bound (ngi_omp_places_format). Returns the
 * number of entries, or -1.
 */
int ngi_thread_env(const ng_omp_guard *guard, unsigned threads, int smt,
                   const char *const *vars, ng_env_var *out, unsigned max);

/**
 * OMP_PLACES for the PUs @p cpus: explicit places, one per core (its PUs in
 * @p cpus) or, with @p smt, one per PU; runs of places that repeat with a
 * stride of 1 are written as OpenMP intervals ("{0}:4", "{0,28}:28").
 * Returns the length, or -1 if empty or it does not fit in @p len.
 */
int ngi_omp_places_format(const ng_topology *topo, hwloc_const_cpuset_t cpus, int smt,
                          char *buf, size_t len);

/* The cutter's line, score and trace (line.c, align.c, cut.c). */
typedef struct ngi_cut_line {
    unsigned n;            /* units on the line */
    const unsigned *dom;   /* per unit: domain id, in runs (non-decreasing ids not required) */
    unsigned ndom;         /* domain ids are < ndom */
    const unsigned *dist;  /* ndom x ndom, 10 = local */
    const unsigned *pkg;   /* per unit: package id, in runs; NULL = no package family */
    const unsigned *grp;   /* per unit: CPU group id (L3, memoryless die), in runs; NULL = none */
} ngi_cut_line;

typedef struct ngi_cut_score {
    double min_eff;        /* smallest effective cores (off-node discounted) */
    unsigned min_raw;      /* smallest slice */
    unsigned idle;         /* units of the line no slice owns */
    unsigned straddles;    /* slices over more than one domain */
    unsigned spans;        /* CPU groups split: held in part by a slice over two or more */
} ngi_cut_score;

enum { NGI_CUT_CONSECUTIVE = 0, NGI_CUT_MOVED, NGI_CUT_ALIGNED, NGI_CUT_PACKAGE, NGI_CUT_GROUP,
       NGI_CUT_FAMILIES };
/* ngi_cut_choose_mode: ABSORB: idle units go to neighbouring slices when
 * that costs the objective nothing; FULL: no cut leaving more units idle
 * than the sizes do; EXACT: no cut using more units than the sizes, nor
 * leaving idle units between slices. */
enum { NGI_CUT_ABSORB = 1, NGI_CUT_FULL = 2, NGI_CUT_EXACT = 4 };

/** What the chooser saw: each family's score (found[f] 0 = no such cut). */
typedef struct ngi_cut_trace {
    int found[NGI_CUT_FAMILIES];
    ngi_cut_score score[NGI_CUT_FAMILIES];
    int chosen;
} ngi_cut_trace;

/** A cut the planner made (for ng_plan_explain): its tasks in slice order,
 *  the units it cut, what they were, and what the chooser saw. A pass
 *  after the cut that re-lays tasks (home.c's settle, pack.c) records its
 *  own (NGI_CUT_WHAT_MOVED..L3S, no candidates; @before/@after: its tasks
 *  over two nodes or L3s as cut and now); ngi_plan_final_cuts then leaves
 *  each task and unit to the last record that laid it out. */
typedef struct ngi_cut_record {
    unsigned *tasks;
    unsigned nt;
    unsigned units;        /* units of @set */
    int what;              /* NGI_CUT_WHAT_* */
    ngi_cut_trace trace;
    hwloc_bitmap_t set;    /* its units (indices into the planner's units) */
    unsigned cut_nt, cut_units; /* as it was cut: more than nt, units when tasks left */
    unsigned before, after;
} ngi_cut_record;

enum { NGI_CUT_WHAT_CPU = 0, NGI_CUT_WHAT_HOME, NGI_CUT_WHAT_REGION, NGI_CUT_WHAT_NEAREST,
       NGI_CUT_WHAT_SHARED, NGI_CUT_WHAT_MOVED, NGI_CUT_WHAT_NODES, NGI_CUT_WHAT_SWAP,
       NGI_CUT_WHAT_L3S };

/** How the sizes were set (plan.c), for the explanation. */
typedef struct ngi_sizing {
    unsigned units;        /* allocated units (cores) */
    unsigned smt;          /* PUs per core (the most of any core) */
    unsigned base, extra;  /* the even level and the +1s left after it */
    int fixed;             /* -c is every task's size */
    int shared;            /* fewer cores than tasks */
} ngi_sizing;

/** Per task: its package group when bound (bound.c). */
typedef struct ngi_task_sizing {
    unsigned pkg_units, pkg_tasks;  /* allocated units of its GPUs' packages, GPU tasks there */
    int capped;                     /* those packages set its size */
} ngi_task_sizing;

#define NGI_MAX_TASKS 65536
#define NGI_MAX_WARNINGS 16

typedef struct ngi_unit {
    hwloc_bitmap_t pus;
    int node;      /* topology NUMA index of its CPU-bearing node, -1 if none */
    int dom;       /* domain index */
    int pkg;       /* package logical index, -1 if none */
    int l3;        /* L3 cache logical index, -1 if none */
    int l3g;       /* the same when that L3 holds more than one core, else -1 */
    const void *root; /* CPUs of no node: the object they attach with (domains.c) */
    unsigned grp;  /* CPU group on the line: runs of one domain, node, memoryless
                      root and L3 (docs/planner.md, "levels") */
    unsigned pos;  /* hwloc logical order of its first PU */
} ngi_unit;

typedef struct ngi_domain {
    int mem;        /* topology NUMA index of its memory node */
    unsigned first; /* its units are [first, first + count) */
    unsigned count;
    int pkg, l3;    /* of its first unit */
} ngi_domain;

struct ng_plan {
    unsigned ntasks;
    ng_task_plan *tasks;
    int *gpu_store;
    hwloc_bitmap_t *cpus;
    hwloc_bitmap_t *mems;
    ng_env_var *env_store;
    ngi_net_plan *net;       /* --net-affinity: NICs and variables per task */
    unsigned n_warnings;
    char warnings[NGI_MAX_WARNINGS][256];
    ngi_cut_record *cuts;    /* the cuts made, in order (explain.c) */
    unsigned n_cuts;
    char note[256];          /* ng_task_plan.note of GPU tasks kept (bound.c) */
    char note_widened[128];  /* ... and of widened ones */
    ngi_sizing sizing;       /* how the sizes were set (explain.c) */
    ngi_task_sizing *tsz;    /* per task (explain.c) */
};

/** Package groups of GPU tasks kept on their GPU's package (bound.c). */
typedef struct ngi_pkg_groups {
    unsigned n;
    int *of_task;          /* per task: its group, -1 for CPU-only tasks */
    hwloc_bitmap_t *pkgs;  /* per group: package logical indices + 1 */
    unsigned *cap;         /* per group: allocated units in those packages */
    unsigned *k;           /* per group: GPU tasks */
    unsigned *room;        /* per group: units its tasks may still take as +1s */
    int *capped;           /* per group: its packages cannot give each task the level */
    int *released;         /* per group: too few cores there (rule 2): sized and seated
                              like CPU-only tasks, memory still on its GPUs' nodes */
} ngi_pkg_groups;

typedef struct ngi_planner {
    const ng_topology *topo;
    const ng_plan_request *req;
    ng_plan *plan;
    ngi_unit *units;       /* domain-major order */
    unsigned n_units;
    ngi_domain *doms;
    unsigned n_doms;
    unsigned n_grps;      /* CPU groups on the line (ngi_unit.grp < n_grps) */
    unsigned *dist;       /* n_doms x n_doms, 10 = same domain, never 0 */
    unsigned max_smt;
    unsigned *size;       /* per task: target cores (base + its +1) */
    unsigned base;        /* every task's size before the +1s */
    unsigned extra;       /* +1s still to hand out (cores left over) */
    unsigned cap;         /* -c in cores, 0 = none */
    int fixed;            /* 1: every task gets exactly cap (-c as a size) */
    hwloc_bitmap_t *home; /* per task: unit indices; NULL for CPU-only */
    hwloc_bitmap_t *slice;/* per task: unit indices owned */
    hwloc_bitmap_t used;  /* units owned by some task */
    ngi_pkg_groups *groups; /* GPU tasks kept on their packages; NULL: not (-c, wide) */
} ngi_planner;

/* common.c */
void ngi_plan_warn(ng_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const int *ngi_plan_req_gpus(const ng_plan_request *req, unsigned t, unsigned *n);
/** GPU tasks (p->home[t] set) whose @p sets overlap, transitively, are one
 *  group: @p id[t] its number (in order of each group's first task), -1
 *  for CPU-only tasks. Returns the number of groups, -1 without memory.
 *  bound.c groups by package, seat.c by home. */
int ngi_plan_group_tasks(const ngi_planner *p, const hwloc_bitmap_t *sets, int *id);
/** The same; with @p remote_apart, remote GPU tasks (no allowed core
 *  local to their GPUs) never join a group of local ones (seat.c). */
int ngi_plan_group_tasks_apart(const ngi_planner *p, const hwloc_bitmap_t *sets, int *id,
                               int remote_apart);

/* domains.c: units in domain-major order, domains, distances. */
int ngi_plan_build_domains(ngi_planner *p, char *err, size_t errlen);
void ngi_plan_free_domains(ngi_planner *p);
/** Distance between two NUMA nodes (topology indices) with a fallback when
 *  the topology has none: 10 same, 20 same package, 30 otherwise. */
unsigned ngi_plan_node_dist(const ngi_planner *p, int a, int b, int same_pkg);

/* bound.c: GPU tasks kept on their GPU's package (no -c, no wide). */
/** Package groups and every task's size by water-filling; p->base and
 *  p->extra for the rest. 0, or -1 without memory. */
int ngi_plan_bound_sizes(ngi_planner *p);
void ngi_plan_free_groups(ngi_pkg_groups *g, unsigned nt);
/** 1 if GPU task @p t's package group was released (rule 2: its packages
 *  hold less than half its even share). */
int ngi_plan_released(const ngi_planner *p, unsigned t);
/** 1 if task @p t may take one more unit as a +1 (always, when not bound). */
int ngi_plan_has_room(const ngi_planner *p, unsigned t);
void ngi_plan_take_room(ngi_planner *p, unsigned t);
/** 1 if task @p t's group is capped and still has one of its +1s to give. */
int ngi_plan_group_plus(const ngi_planner *p, unsigned t);
/** 1 if GPU task @p t may spill into domain @p dom (its packages, when bound). */
int ngi_plan_may_spill(const ngi_planner *p, unsigned t, unsigned dom);
/** The note of GPU tasks when allocated cores stay idle (bound only). */
void ngi_plan_note_idle(ngi_planner *p);

/* home.c: GPU tasks' homes. */
int ngi_plan_homes(ngi_planner *p, char *err, size_t errlen);
/** After the cut (docs/planner.md rule 4): a remote task moves to the domain as near its
 *  GPU that keeps the most cores no other task holds. */
void ngi_plan_settle_remote(ngi_planner *p);
/** 1 if tasks @p a and @p b ask for the same GPU list. */
int ngi_plan_same_gpus(const ngi_planner *p, unsigned a, unsigned b);
/* Task @t's home: domain @d's units (allocated when it has none). */
void ngi_plan_home_at(ngi_planner *p, unsigned t, unsigned d);
/** Each remote GPU task's warning (its GPU's node, its home's node). */
void ngi_plan_warn_remote(ngi_planner *p);
/** 1 if @p set (unit indices) holds a unit of domain @p d. */
int ngi_plan_touches(const ngi_planner *p, hwloc_const_bitmap_t set, unsigned d);

/* pack.c: once settled, the remote tasks of one GPU re-laid whole per
 * node, then each node's GPU tasks on whole L3s, where their sizes allow. */
void ngi_plan_pack_remote(ngi_planner *p);

/* seat.c: GPU tasks' slices. */
int ngi_plan_seat_gpus(ngi_planner *p, char *err, size_t errlen);
/** How far a domain is from a home: NUMA distance, then package, L3 and
 *  place on the line missed (seat.c; smaller is nearer). */
typedef struct ngi_rank {
    unsigned dist, pkg_miss, l3_miss, gap;
} ngi_rank;
ngi_rank ngi_plan_rank_of(const ngi_planner *p, hwloc_const_bitmap_t home, unsigned x);
/** <0, 0, >0 as @p a is nearer than, as near as, farther than @p b. */
int ngi_plan_rank_cmp(ngi_rank a, ngi_rank b);
/** GPU tasks most constrained first: smallest home, where it starts, task id. */
void ngi_plan_sort_members(const ngi_planner *p, unsigned *tasks, unsigned n);

/* share.c: with fewer cores than tasks: one core each, tasks share; -1
 * without memory. */
int ngi_plan_share_cores(ngi_planner *p, char *err, size_t errlen);
/** Keep a cut's record in the plan: tasks @p tasks over the units @p set
 *  (cut.c; without memory it is left out). */
void ngi_plan_record_cut(ngi_planner *p, const unsigned *tasks, unsigned nt,
                         hwloc_const_bitmap_t set, int what, const ngi_cut_trace *trace);
/** A pass after the cut re-laid tasks @p tasks (their slices now): @p what
 *  NGI_CUT_WHAT_MOVED, _NODES, _SWAP or _L3S; @p before, @p after: tasks over two
 *  nodes (L3s) as they were and now. Recorded in the order of their first
 *  unit. */
void ngi_plan_record_relaid(ngi_planner *p, const unsigned *tasks, unsigned nt, int what,
                            unsigned before, unsigned after);
/** Once the slices are final (docs/planner.md, "Explaining a plan"): each
 *  task belongs to the last record that laid out its slice, each unit to
 *  the last record whose set holds it; a record keeps the rest, one left
 *  with no task is dropped. */
void ngi_plan_final_cuts(ngi_planner *p);
void ngi_plan_free_cuts(ng_plan *plan);
/** Cut @p n units (indices, increasing) among tasks @p tasks[0..nt) with
 *  sizes base (+1 for @p e of them): the cutter's choice, slices assigned in
 *  order; @p exact 1: no slice larger than base+1 (else the aligned cut may
 *  hand out all @p n); 2: no unit idle beyond what the sizes leave; 3:
 *  both, and no slice below base (widened tasks). Marks
 *  them used. Returns the family chosen or -1. */
int ngi_plan_cut_units(ngi_planner *p, const unsigned *units, unsigned n,
                      const unsigned *tasks, unsigned nt, unsigned base, unsigned e, int exact);

/* line.c, align.c, cut.c: cutting a line of units by the objective (types
 * above). line.c: the objective's terms and the cuts that keep the even sizes. */
double ngi_cut_eff(const ngi_cut_line *line, unsigned a, unsigned len);
int ngi_cut_straddles(const ngi_cut_line *line, unsigned a, unsigned len);
unsigned ngi_cut_spans(const ngi_cut_line *line, unsigned a, unsigned len);
/** Score of a given cut. */
void ngi_cut_score_of(const ngi_cut_line *line, unsigned nt, const unsigned *start,
                     const unsigned *len, ngi_cut_score *out);
/** 1 if @p a is strictly better than @p b by the objective, then the tie-breaks. */
int ngi_cut_better(const ngi_cut_score *a, const ngi_cut_score *b);
void ngi_cut_consecutive(unsigned nt, unsigned s, unsigned e, unsigned *start, unsigned *len);
/** Sizes s (+1 for e of them) with the +1s placed for the best smallest
 *  effective slice, then the fewest straddles, then spans; 0 or -1. */
int ngi_cut_moved(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                  unsigned *start, unsigned *len);
/* align.c: each task inside one run of @ids (or over whole runs), sizes in
 * [lo, hi]; 0 or -1. */
int ngi_cut_aligned(const ngi_cut_line *line, const unsigned *ids, unsigned nt, unsigned lo,
                    unsigned hi, unsigned *start, unsigned *len);

/**
 * cut.c: cut @p line into @p nt runs: start[t], len[t] (task t gets the
 * t-th run in line order). Every family (NGI_CUT_*) is scored, the best by
 * ngi_cut_better() wins; @p trace (NULL = none) records what was seen.
 * Returns the family chosen, -1 if none.
 */
int ngi_cut_choose_mode(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                        unsigned lo, unsigned hi, int mode, unsigned *start, unsigned *len,
                        ngi_cut_score *score, ngi_cut_trace *trace);
/** The same with NGI_CUT_ABSORB. */
int ngi_cut_choose(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                  unsigned lo, unsigned hi, unsigned *start, unsigned *len,
                  ngi_cut_score *score);
/** The same with NGI_CUT_ABSORB | NGI_CUT_FULL. */
int ngi_cut_choose_full(const ngi_cut_line *line, unsigned nt, unsigned s, unsigned e,
                       unsigned lo, unsigned hi, unsigned *start, unsigned *len,
                       ngi_cut_score *score);
/** One family, for tests and the explanation: fills start/len (before any
 *  idle unit is given away); 0, or -1 if the family has no cut. */
int ngi_cut_family(const ngi_cut_line *line, int family, unsigned nt, unsigned s,
                  unsigned e, unsigned lo, unsigned hi, unsigned *start, unsigned *len);
/** "consecutive", "moved", "numa-aligned", "package-aligned", "group-aligned". */
const char *ngi_cut_family_name(int family);

/* why.c (above plan.c: it plans alternatives again with ng_plan_compute):
 * the lines of each task for ng_plan_explain (explain.c). */
#define NGI_WHY_ALTS 12       /* plans kept (distinct -c / modifiers) */
#define NGI_WHY_TASK_ALTS 4   /* alternatives offered per task */
#define NGI_WHY_LINE 100      /* every line at most this long */
typedef struct ngi_why {
    const ng_topology *topo;
    const ng_plan_request *req;
    const ng_plan *plan;           /* the plan explained (CPU sets of every task) */
    const ngi_planner *p;          /* the request's units, domains and groups */
    const ng_task_terms *terms;    /* per task */
    const ng_plan_cut *cuts;
    unsigned straddle_size;        /* no_straddle_size(), once */
    int straddle_size_known;
    unsigned n_alts;
    struct {
        unsigned cpus_per_task, mods;
        ng_plan *plan;             /* NULL: could not be planned */
    } alts[NGI_WHY_ALTS];
} ngi_why;

/** One task's alternatives as why.c finds them (explain.c keeps them). */
typedef struct ngi_why_alt {
    char opt[24], val[96];        /* the plan argument pair */
    char says[NGI_WHY_LINE + 1];
    char *cpus;                   /* malloc'd list */
    hwloc_bitmap_t mems;
} ngi_why_alt;

/** Task @p t's lines into @p buf ('\n'-separated), its alternatives into
 *  @p alts (at most NGI_WHY_TASK_ALTS; returns how many). */
unsigned ngi_why_task(ngi_why *w, unsigned t, char *buf, size_t len, ngi_why_alt *alts);
/** The units (indices into w->p->units) of task @p t of @p plan. */
void ngi_why_units(const ngi_planner *p, const ng_plan *plan, unsigned t, hwloc_bitmap_t out);
void ngi_why_free(ngi_why *w);
/** Plain words for a cut family ("one NUMA node per task"). */
const char *ngi_why_family_words(const char *family);

/* mem.c */
ng_mem_mode ngi_plan_memory(ngi_planner *p, unsigned t, hwloc_bitmap_t mems);

#endif
