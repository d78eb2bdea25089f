/* make plan-quality: the line of an allocation and the oracles that say
 * whether a better cut than a plan's exists (bench/quality_oracle.c).
 * Public API and hwloc only: built against this tree's library and the
 * previous release's alike. */
#ifndef NG_QUALITY_H
#define NG_QUALITY_H

#include "numaguard.h"

/* An allocation's cores as the planner lays them out (docs/planner.md,
 * rule 2: domain by domain, a memoryless group attached to the nearest
 * node with memory, ties to the one with the fewest cores, then the
 * lowest; re-implemented here from that rule, not the planner's code),
 * each with its domain's memory node, its CPU group (domain, node or
 * memoryless root, L3) numbered in runs, and its shared L3 (NULL: none). */
typedef struct qline {
    unsigned n;
    hwloc_bitmap_t *pus;     /* per core: its allocated PUs */
    int *node;               /* per core: its domain's memory node (topology index) */
    unsigned *grp, ngrp;     /* per core: its CPU group */
    unsigned *src;           /* per core: its index in hwloc order */
    const void **l3obj;      /* per core: its L3 when shared by several cores */
    unsigned nn;             /* NUMA nodes of the topology */
    unsigned *dist;          /* nn x nn, 10 local; 20 when unknown */
} qline;

int qline_build(const ng_topology *topo, hwloc_const_bitmap_t allowed, qline *l);
void qline_free(qline *l);

/* The objective of a cut, as the planner ranks it (docs/planner.md). */
typedef struct qscore {
    double min_eff;          /* smallest effective slice */
    unsigned min_raw;        /* smallest slice */
    unsigned idle;           /* allocated cores no task owns */
    unsigned straddles;      /* tasks over two domains or more */
} qscore;

/* Effective cores of a task with @count_per_node cores per domain (+ @memless local ones). */
double qline_eff(const qline *l, const unsigned *count_per_node, unsigned memless);

/* The best (idle cores, tasks over two domains), as idle << 24 | straddles,
 * of a cut of @nt tasks each inside one group or over whole consecutive
 * groups (@grp: l->grp), every task at least @raw cores and @eff
 * effective; ~0 when none. */
unsigned long long oracle_aligned(const qline *l, const unsigned *grp, unsigned ngrp, unsigned nt,
                                  unsigned raw, double eff);
/* The same with exactly @a tasks of @s cores and @b of @s+1 (the plan's sizes). */
unsigned long long oracle_aligned_sizes(const qline *l, const unsigned *grp, unsigned ngrp,
                                        unsigned s, unsigned a, unsigned b, double eff);
/* The least idle of any cut of the line into @nt runs of >= @raw cores and
 * >= @eff effective; ~0u when none. */
unsigned oracle_runs(const qline *l, unsigned nt, unsigned raw, double eff);

#endif
