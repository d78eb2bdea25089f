/**
 * @file numaguard/options.h
 * @brief The user's options as plain data: --numa-policy, --omp-guard and
 *        --net-affinity values, the admin's thread variables and NIC
 *        filter. Parsing only; nothing here touches the machine.
 *        Implemented in lib/options/ (grammar: docs/grammar.md).
 *
 * Every parser is pure and thread-safe, accepts at most NG_MAX_ARG bytes,
 * and on a bad value returns -1 with ONE line in @p err naming the option,
 * the (escaped, shortened) value and the valid forms.
 */
#ifndef NUMAGUARD_OPTIONS_H
#define NUMAGUARD_OPTIONS_H

#include "numaguard/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/** @name --numa-policy                                                  */
/* ------------------------------------------------------------------ */
/** @{ */

typedef enum ng_policy_kind {
    NG_POLICY_LOCAL = 0,   /**< bind CPUs near the GPU(s), MPOL_BIND memory there */
    NG_POLICY_PREFER,      /**< bind CPUs, MPOL_PREFERRED_MANY memory (no OOM) */
    NG_POLICY_INTERLEAVE,  /**< bind CPUs, MPOL_INTERLEAVE memory */
    NG_POLICY_WEIGHTED,    /**< bind CPUs, MPOL_WEIGHTED_INTERLEAVE (>= 6.9) */
    NG_POLICY_NONE,        /**< touch nothing (threads only, if guarded) */
    NG_POLICY_KIND_COUNT   /**< number of kinds (not a kind): loop bound */
} ng_policy_kind;

/** The kind's option name: "local","prefer","interleave","weighted","none"
 *  ("?" for anything else; static storage). */
const char *ng_policy_kind_name(ng_policy_kind kind);

/** The kind named by @p name[0..len) (exactly, lower case), or -1. */
int ng_policy_kind_from_name(const char *name, size_t len);

/** Modifier flags of --numa-policy. */
enum {
    NG_MOD_VERBOSE = 1u << 0, /**< one line per task on stderr */
    NG_MOD_QUIET   = 1u << 1, /**< no warnings */
    NG_MOD_STRICT  = 1u << 2, /**< failures fail the task */
    NG_MOD_HELP    = 1u << 3, /**< print the grammar */
    NG_MOD_SMT     = 1u << 4, /**< one thread per PU instead of per core */
    NG_MOD_CPULESS = 1u << 5, /**< memory policy may use CPU-less nodes */
    NG_MOD_WIDE    = 1u << 6  /**< GPU tasks may leave their GPU's package */
};

#define NG_NODEMASK_WORDS ((NG_MAX_NUMA_OS_INDEX + 1) / 64)

/** A parsed --numa-policy value (plain data, copyable). */
typedef struct ng_policy {
    ng_policy_kind kind;
    unsigned mods;                 /**< NG_MOD_* */
    int has_nodes;                 /**< 1 if the user named memory nodes */
    uint64_t nodes[NG_NODEMASK_WORDS]; /**< named nodes (OS indices) */
} ng_policy;

/** Parse a --numa-policy value, e.g. "local", "verbose,prefer",
 *  "interleave:0-3,8", "weighted:all,cpuless". NULL/"" -> local. */
int ng_policy_parse(const char *text, ng_policy *out, char *err, size_t errlen);

/** 0 if every node the policy names (interleave:7) exists in @p topo;
 *  -1 with one line naming the missing nodes and the nodes that exist.
 *  Policies that name no node always pass. */
int ng_policy_check_nodes(const ng_policy *pol, const ng_topology *topo, char *err,
                          size_t errlen);

/** The policies and modifiers in one line for an option's short help:
 *  "local (default), prefer, interleave[:NODES], weighted[:NODES], none;
 *  modifiers verbose, quiet, strict, smt, cpuless, wide" (help, the modifier that
 *  prints the grammar, left out). Returns the length, or -1 when it does
 *  not fit in @p len. */
int ng_policy_usage(char *buf, size_t len);

/** The grammar of --numa-policy and --omp-guard, for --numa-policy=help
 *  (multi-line text, static storage, built from the option tables). */
const char *ng_policy_help(void);

/** Memory policy mode a task gets (the kernel's mode for a policy kind).
 *  A new mode goes before NG_MEM_MODE_COUNT; every table indexed by the
 *  mode (its name here, its kernel mode in lib/task, its picture in
 *  lib/draw) then fails to compile until it has its row. */
typedef enum ng_mem_mode {
    NG_MEM_MODE_NONE = 0,       /**< leave as is */
    NG_MEM_MODE_BIND,           /**< MPOL_BIND */
    NG_MEM_MODE_PREFERRED_MANY, /**< MPOL_PREFERRED_MANY */
    NG_MEM_MODE_INTERLEAVE,     /**< MPOL_INTERLEAVE */
    NG_MEM_MODE_WEIGHTED,       /**< MPOL_WEIGHTED_INTERLEAVE */
    NG_MEM_MODE_COUNT           /**< number of modes (not a mode): table size, loop bound */
} ng_mem_mode;

/** "none","bind","preferred_many","interleave","weighted_interleave"
 *  ("?" for anything else; static storage). */
const char *ng_mem_mode_name(ng_mem_mode mode);

/** @} */

/* ------------------------------------------------------------------ */
/** @name --omp-guard and the thread variables                          */
/* ------------------------------------------------------------------ */
/** @{ */

typedef enum ng_omp_mode {
    NG_OMP_OFF = 0,
    NG_OMP_AUTO,    /**< threads = cores owned (PUs with smt) */
    NG_OMP_FIXED,   /**< threads = nthreads */
    /** The variables as auto sets them, plus the governor of OpenMP teams
     *  (libnumaguard-omp.so, appended to LD_PRELOAD): outermost teams share
     *  the task's cores among the threads that start them
     *  (docs/omp-adaptive.md). */
    NG_OMP_ADAPTIVE
} ng_omp_mode;

/** A parsed --omp-guard value. */
typedef struct ng_omp_guard {
    ng_omp_mode mode;
    unsigned nthreads;   /**< for NG_OMP_FIXED */
    int force;           /**< overwrite values the user already set */
    /** ",bind": also export OMP_PROC_BIND and OMP_PLACES (explicit places of
     *  the task's own CPUs), only where numaguard really bound the task.
     *  Off by default: libgomp then pins the initial thread to the first
     *  place, and every thread or process the program creates outside
     *  OpenMP inherits that one place. */
    int bind;
} ng_omp_guard;

/** Parse --omp-guard: NULL or "" -> auto; "auto", "adaptive", "N", "off", followed by
 *  the modifiers ",force" and ",bind" (each at most once, any order; alone
 *  they mean auto,<modifier>). */
int ng_omp_guard_parse(const char *text, ng_omp_guard *out, char *err, size_t errlen);

/** ng_env_var.flags */
enum {
    /** Binds threads (OMP_PROC_BIND): ng_apply_task exports it, with
     *  OMP_PLACES listing the task's own CPUs, only when it bound the task
     *  itself (never for policy none, plan only or a user's --cpu-bind). */
    NG_ENV_BINDING = 1u << 0,
    /** A thread count derived from the CPUs owned (--omp-guard=auto):
     *  ng_apply_task lowers it to a cgroup v2 cpu.max quota when smaller. */
    NG_ENV_COUNT_AUTO = 1u << 1,
    /** The governor's budget (NUMAGUARD_OMP_CORES, --omp-guard=adaptive):
     *  ng_apply_task exports it (lowered like an auto count) and appends
     *  the governor library to the task's LD_PRELOAD. */
    NG_ENV_GOVERNOR = 1u << 2
};

/** One variable to set in a task (a plan's thread variables). */
typedef struct ng_env_var {
    char name[64];
    char value[64];
    int overwrite;   /**< 1: set even if the user set it (force) */
    unsigned flags;  /**< NG_ENV_* */
} ng_env_var;

/** Most variables a task plan sets, and most names an admin list holds. */
#define NG_MAX_ENV 32

/** Parse an admin's comma list of variable names ("OMP_NUM_THREADS,MKL_NUM_THREADS",
 *  plugstack.conf omp_vars=) into @p names (each validated as [A-Z_][A-Z0-9_]*,
 *  at most @p max) with @p ptrs[] pointing at them, NULL-terminated (room
 *  for max + 1 pointers). Returns the count, or -1 (err names the entry).
 *  The library's default list (OMP_NUM_THREADS, MKL_NUM_THREADS, ...) is
 *  what a NULL list means in ng_plan_request.thread_vars. */
int ng_thread_vars_parse(const char *text, char names[][64], const char **ptrs,
                         unsigned max, char *err, size_t errlen);

/** @} */

/* ------------------------------------------------------------------ */
/** @name --net-affinity and the admin's NIC filter (docs/network.md)     */
/* ------------------------------------------------------------------ */
/** @{ */

/** Longest value of one exported network variable, NUL included. */
#define NG_NET_VALUE_LEN 512

typedef enum ng_net_mode {
    NG_NET_OFF = 0, /**< export nothing */
    NG_NET_AUTO,    /**< every NIC equally near each GPU of the task (of its
                         CPUs), at most 4 per GPU (docs/network.md) */
    NG_NET_COUNT    /**< the @c count nearest NICs, nearest first */
} ng_net_mode;

/** A parsed --net-affinity value (plain data). */
typedef struct ng_net_affinity {
    ng_net_mode mode;
    unsigned count;      /**< NG_NET_COUNT: NICs per task (1..NG_MAX_NICS) */
    int force;           /**< overwrite variables the user already set */
    /** "nccl-per-rank": NCCL_IB_HCA is each task's own list instead of the
     *  node's list (NCCL's maintainers advise against it: ring building
     *  expects the same list on every rank). */
    int nccl_per_rank;
} ng_net_affinity;

/** Parse --net-affinity: NULL or "" -> off; "auto", "N" (1..64) or "off",
 *  then the modifiers ",force" and ",nccl-per-rank" (each at most once;
 *  alone they mean auto,<modifier>). */
int ng_net_affinity_parse(const char *text, ng_net_affinity *out, char *err, size_t errlen);

/** The admin's NIC filter (plugstack.conf net_allow= / net_deny=): comma
 *  lists of NIC names (verbs name or network interface); an entry ending in
 *  '*' matches names starting with the rest. Zero-initialised = default:
 *  every RDMA NIC, no plain Ethernet NIC. */
typedef struct ng_nic_filter {
    char allow[NG_MAX_ARG];   /**< "" = every RDMA NIC; else only these (Ethernet too) */
    char deny[NG_MAX_ARG];    /**< never these */
} ng_nic_filter;

/** Check and store the two lists (NULL = empty); -1 with one line naming
 *  the bad entry. */
int ng_nic_filter_parse(const char *allow, const char *deny, ng_nic_filter *out,
                        char *err, size_t errlen);
/** 1 if @p nic may be given to tasks under @p filter (NULL = default). */
int ng_nic_filter_admits(const ng_nic_filter *filter, const ng_nic_info *nic);

/** One network variable to set in a task (a plan's network variables). */
typedef struct ng_net_env {
    char name[40];
    char value[NG_NET_VALUE_LEN];
    int overwrite;   /**< 1: set even if the user set it (force) */
} ng_net_env;

/** @} */

/* ------------------------------------------------------------------ */
/** @name The SPANK plugin's plugstack.conf arguments (docs/admin-guide.md) */
/* ------------------------------------------------------------------ */
/** @{ */

/** Longest admin path a plugstack.conf argument may hold, NUL included. */
#define NG_PLUGIN_PATH_MAX 4096

/** The plugin's arguments, parsed (plain data, copyable). */
typedef struct ng_plugin_conf {
    int have_default_policy;
    char default_policy[NG_MAX_ARG + 1];   /**< default_policy= */
    int have_default_omp;
    char default_omp[NG_MAX_ARG + 1];      /**< default_omp_guard= */
    int have_default_net;
    char default_net[NG_MAX_ARG + 1];      /**< default_net_affinity= */
    ng_nic_filter nic_filter;              /**< net_allow= / net_deny= */
    unsigned allowed_kinds;                /**< bit (1u << ng_policy_kind); 0 = all */
    int verbose;                           /**< verbose */
    int strict;                            /**< strict */
    unsigned n_thread_vars;                /**< omp_vars= entries; 0 = the default list */
    char thread_vars[NG_MAX_ENV][64];
    char topology[NG_PLUGIN_PATH_MAX];     /**< topology=; "" = live discovery */
    char fsroot[NG_PLUGIN_PATH_MAX];       /**< fsroot=; "" = "/" */
    char gres_conf[NG_PLUGIN_PATH_MAX];    /**< gres_conf=; "" = the plugin's default */
    char cache_dir[NG_PLUGIN_PATH_MAX];    /**< topology_cache=; "" = off */
} ng_plugin_conf;

/**
 * Parse the plugin's plugstack.conf arguments (what Slurm passes as argv:
 * the words after the plugin's path) into @p out: THE rule of which
 * arguments exist and what each accepts. The first bad argument (unknown,
 * malformed, a default that does not parse, a default_policy outside
 * allowed_policies) gives -1 with one line in @p err naming it; the plugin
 * then disables itself. Pure and thread-safe.
 */
int ng_plugin_conf_parse(ng_plugin_conf *out, int argc, char *const *argv, char *err,
                         size_t errlen);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_OPTIONS_H */
