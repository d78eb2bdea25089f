/* The options module (lib/options/): what the parsers share and the
 * tables behind the options. Private to the library (ngi_* names). */
#ifndef NGI_OPTIONS_H
#define NGI_OPTIONS_H

#include "base.h"

/* ---- grammar.c ---- */

/** One rejection line, "<opt>: invalid value '<value>': <why>; <forms>";
 *  @p why may name @p item with "%s" (escaped). Returns -1. */
int ngi_option_reject(char *err, size_t errlen, const char *opt, const char *forms,
                      const char *value, size_t vlen, const char *why,
                      const char *item, size_t ilen);
/** How near a mistyped @p word (@p len bytes) is to @p name: its edit
 *  distance (insertions, deletions, substitutions, swaps of neighbours),
 *  0 for a prefix of 3 or more letters; UINT_MAX when too far to suggest
 *  (more than 1 edit for words of up to 4 letters, more than 2 above). */
unsigned ngi_option_nearness(const char *word, size_t len, const char *name);

/* ---- policy.c: the policy kinds ---- */

/** How a kind chooses its tasks' memory nodes (lib/plan/mem.c acts on it). */
typedef enum ngi_mem_nodes {
    NGI_NODES_NONE = 0,         /**< no memory policy */
    NGI_NODES_TASK,             /**< the nodes of the task's own domains */
    NGI_NODES_TASK_GPU_FIRST,   /**< the same plus its GPU's node, listed first */
    NGI_NODES_NAMED_OR_ALL      /**< the nodes named, else every CPU-bearing node */
} ngi_mem_nodes;

/** Everything the library knows about a policy kind (one table row). */
typedef struct ngi_policy_info {
    const char *name;           /**< the option's word */
    int takes_nodes;            /**< accepts ":NODES" */
    ng_mem_mode mem_mode;       /**< the memory policy its tasks get */
    ngi_mem_nodes nodes;        /**< which nodes that policy names */
    int binds_cpus;             /**< 0: leaves the task's CPUs alone */
    const char *help;           /**< its line in --numa-policy=help */
} ngi_policy_info;

/** A modifier of --numa-policy (one table row): its word, flag, help line. */
typedef struct ngi_policy_mod {
    const char *name;
    unsigned flag;              /**< NG_MOD_* */
    const char *help;           /**< its line in --numa-policy=help */
} ngi_policy_mod;

/** The @p i-th modifier row, NULL past the end. */
const ngi_policy_mod *ngi_policy_mod_at(size_t i);

/** The row of @p kind, NULL if it is not a kind. */
const ngi_policy_info *ngi_policy_info_of(ng_policy_kind kind);
/** "expected local|prefer|interleave[:NODES]|..." for messages; its length. */
int ngi_policy_forms(char *buf, size_t len);

/** Canonical text of a parsed value (the parser's inverse): the length, or
 *  -1 when it does not fit or is not a value the parser could produce. */
int ngi_policy_format(const ng_policy *pol, char *buf, size_t len);
int ngi_omp_guard_format(const ng_omp_guard *g, char *buf, size_t len);
int ngi_net_affinity_format(const ng_net_affinity *a, char *buf, size_t len);

/** Default variables capped by --omp-guard, NULL-terminated. */
extern const char *const ngi_default_thread_vars[];
/** Entries of ngi_default_thread_vars (without the NULL). */
unsigned ngi_thread_var_count(void);
/** 1 if s[0..n) is a valid variable name [A-Z_][A-Z0-9_]* of 1..63 bytes. */
int ngi_thread_var_name_ok(const char *s, size_t n);

#endif
