/* numaguard exec, shared between the front end (cmd_exec.c) and the
 * --dry-run report (exec_explain.c). */
#ifndef NG_EXEC_H
#define NG_EXEC_H

#include "cli.h"

typedef struct exec_opts {
    common_opts common;
    const char *policy, *omp, *gpus, *net, *net_allow, *net_deny;
    int omp_given, net_given, verbose, dry_run, explain;
    int have_rank, have_size;
    unsigned rank, size;
    char **cmd;               /* NULL with --dry-run and no command */
} exec_opts;

/* Everything exec decided, in the order it decided it. */
typedef struct exec_state {
    exec_opts o;
    ng_policy policy;
    ng_omp_guard omp;
    ng_net_affinity net;       /* --net-affinity */
    ng_nic_filter nic_filter;  /* --net-allow / --net-deny */
    int strict, quiet, verbose;
    ng_local_rank lr;          /* from the launcher, or the command line */
    unsigned plan_rank;        /* this rank's entry in the plan */
    int prebound;              /* the launcher bound this rank: its mask is kept */
    ng_topology *topo;
    ng_plan *plan;
    ng_plan_explanation *why;  /* --explain: the planner's reasons (NULL without) */
    hwloc_bitmap_t current;    /* this process's affinity (live topology only) */
    hwloc_bitmap_t allowed;    /* CPUs it may use (the cgroup's cpuset) */
    ng_rank_gpus rg;
    ng_apply_result res;
    char prebound_msg[1024];   /* the warning, when prebound */
} exec_state;

/* --dry-run: this rank's placement and why, as text or JSON, on stdout. */
void exec_explain(const exec_state *s, const char *const *env_names,
                  const char *const *env_values, unsigned n_env, const char *failure);

#endif
