/* The planner's phases and the state they share (lib/plan*.c). Not installed.
 *
 *   plan.c          request checks, orchestration, sizes, the public calls
 *   plan_domains.c  units (cores) and domains (memory node + its CPUs)
 *   plan_seat.c     GPU tasks: homes, components, spilling, sharing cores
 *   plan_cut.c      cutting a line of cores into slices (the objective)
 *   plan_mem.c      memory nodes of a task
 *
 * Vocabulary (docs/planner.md):
 *  - unit:   one core (its allowed PUs together) or a lone PU.
 *  - domain: a CPU-bearing NUMA node with its allowed units, plus the
 *            memoryless units attached to it (nearest by distance).
 *  - line:   units in domain-major order; slices are runs of a line.
 *  - home:   the units local to a task's GPUs (or one nearest domain).
 */
#ifndef NG_PLAN_INTERNAL_H
#define NG_PLAN_INTERNAL_H

#include "internal.h"

#define NG_MAX_TASKS 65536
#define NG_MAX_WARNINGS 16

typedef struct ng_unit {
    hwloc_bitmap_t pus;
    int node;      /* topology NUMA index of its CPU-bearing node, -1 if none */
    int dom;       /* domain index */
    int pkg;       /* package logical index, -1 if none */
    int l3;        /* L3 cache logical index, -1 if none */
    unsigned pos;  /* hwloc logical order of its first PU */
} ng_unit;

typedef struct ng_domain {
    int mem;        /* topology NUMA index of its memory node */
    unsigned first; /* its units are [first, first + count) */
    unsigned count;
    int pkg, l3;    /* of its first unit */
} ng_domain;

struct ng_plan {
    unsigned ntasks;
    ng_task_plan *tasks;
    int *gpu_store;
    hwloc_bitmap_t *cpus;
    hwloc_bitmap_t *mems;
    ng_env_var *env_store;
    ng_net_plan *net;       /* --net-affinity: NICs and variables per task */
    unsigned n_warnings;
    char warnings[NG_MAX_WARNINGS][256];
};

typedef struct ng_planner {
    const ng_topology *topo;
    const ng_plan_request *req;
    ng_plan *plan;
    ng_unit *units;       /* domain-major order */
    unsigned n_units;
    ng_domain *doms;
    unsigned n_doms;
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
} ng_planner;

/* plan.c */
void ng_plan_warn(ng_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const int *ng_plan_req_gpus(const ng_plan_request *req, unsigned t, unsigned *n);

/* plan_domains.c: units in domain-major order, domains, distances. */
int ng_plan_build_domains(ng_planner *p, char *err, size_t errlen);
void ng_plan_free_domains(ng_planner *p);
/** Distance between two NUMA nodes (topology indices) with a fallback when
 *  the topology has none: 10 same, 20 same package, 30 otherwise. */
unsigned ng_plan_node_dist(const ng_planner *p, int a, int b, int same_pkg);

/* plan_seat.c: GPU tasks' homes and slices; sharing when cores are scarce. */
int ng_plan_homes(ng_planner *p, char *err, size_t errlen);
int ng_plan_seat_gpus(ng_planner *p, char *err, size_t errlen);
void ng_plan_share_cores(ng_planner *p);
/** Cut @p n units (indices, increasing) among tasks @p tasks[0..nt) with
 *  sizes base (+1 for @p e of them): the cutter's choice, slices assigned in
 *  order; @p exact 1: no slice larger than base+1 (else the aligned cut may
 *  hand out all @p n); 2: no unit idle beyond what the sizes leave. Marks
 *  them used. Returns the family chosen or -1. */
int ng_plan_cut_units(ng_planner *p, const unsigned *units, unsigned n,
                      const unsigned *tasks, unsigned nt, unsigned base, unsigned e, int exact);

/* plan_cut.c: the cutting objective over a line of units. */
typedef struct ng_cut_line {
    unsigned n;            /* units on the line */
    const unsigned *dom;   /* per unit: domain id, in runs (non-decreasing ids not required) */
    unsigned ndom;         /* domain ids are < ndom */
    const unsigned *dist;  /* ndom x ndom, 10 = local */
    const unsigned *pkg;   /* per unit: package id, in runs; NULL = no package family */
} ng_cut_line;

typedef struct ng_cut_score {
    double min_eff;        /* smallest effective cores (off-node discounted) */
    unsigned min_raw;      /* smallest slice */
    unsigned straddles;    /* slices over more than one domain */
    unsigned idle;         /* units of the line no slice owns */
} ng_cut_score;

enum { NG_CUT_CONSECUTIVE = 0, NG_CUT_MOVED, NG_CUT_ALIGNED, NG_CUT_PACKAGE };

/**
 * Cut @p line into @p nt runs: start[t], len[t] (task t gets the t-th run in
 * line order). Sizes are s + (1 for e of them) for the consecutive cut (the
 * +1s first) and the moved cut (+1s where the fewest runs straddle); the
 * aligned cut keeps each task inside one domain (or whole domains) with sizes
 * in [lo, hi], the package cut the same on packages. The best by
 * ng_cut_better() wins. Returns the family chosen.
 */
int ng_cut_choose(const ng_cut_line *line, unsigned nt, unsigned s, unsigned e,
                  unsigned lo, unsigned hi, unsigned *start, unsigned *len,
                  ng_cut_score *score);
/** The same, among the cuts that leave no more units idle than the sizes do. */
int ng_cut_choose_full(const ng_cut_line *line, unsigned nt, unsigned s, unsigned e,
                       unsigned lo, unsigned hi, unsigned *start, unsigned *len,
                       ng_cut_score *score);
/** Score of a given cut. */
void ng_cut_score_of(const ng_cut_line *line, unsigned nt, const unsigned *start,
                     const unsigned *len, ng_cut_score *out);
/** 1 if @p a is strictly better than @p b by the objective. */
int ng_cut_better(const ng_cut_score *a, const ng_cut_score *b);
/** Effective cores of one run [a, a+len). */
double ng_cut_eff(const ng_cut_line *line, unsigned a, unsigned len);
/** The three families, for tests: fills start/len; returns 0 or -1 if the
 *  family has no cut for these sizes. */
int ng_cut_family(const ng_cut_line *line, int family, unsigned nt, unsigned s,
                  unsigned e, unsigned lo, unsigned hi, unsigned *start, unsigned *len);

/* plan_mem.c */
ng_mem_mode ng_plan_memory(ng_planner *p, unsigned t, hwloc_bitmap_t mems);

#endif
