/* --numa-policy: the table of policy kinds and modifiers, and the grammar
 * over it (parse, format, the nodes a policy names against a machine).
 * The grammar is documented in docs/grammar.md; help.c prints it. */
#include "private/options.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define POLICY_OPT "--numa-policy"

/* ---------------- the table ---------------- */

/* One row per kind, indexed by the kind (designated, so the enum's order
 * does not matter): everything the library knows about a kind. A new kind
 * is one row here; a new way of choosing memory nodes is also a case in
 * lib/plan/mem.c, a new kernel mode a row in lib/task/mempolicy.c. */
static const ngi_policy_info kinds[NG_POLICY_KIND_COUNT] = {
    [NG_POLICY_LOCAL] = {"local", 0, NG_MEM_MODE_BIND, NGI_NODES_TASK, 1,
                         "bind CPUs near the task's GPU(s); memory bound there"},
    [NG_POLICY_PREFER] = {"prefer", 0, NG_MEM_MODE_PREFERRED_MANY, NGI_NODES_TASK_GPU_FIRST, 1,
                          "bind CPUs; memory preferred there (spills, no OOM)"},
    [NG_POLICY_INTERLEAVE] = {"interleave", 1, NG_MEM_MODE_INTERLEAVE, NGI_NODES_NAMED_OR_ALL,
                              1, "bind CPUs; memory interleaved over NODES"},
    [NG_POLICY_WEIGHTED] = {"weighted", 1, NG_MEM_MODE_WEIGHTED, NGI_NODES_NAMED_OR_ALL, 1,
                            "bind CPUs; weighted interleave (Linux >= 6.9)"},
    [NG_POLICY_NONE] = {"none", 0, NG_MEM_MODE_NONE, NGI_NODES_NONE, 0,
                        "touch neither CPUs nor memory"},
};

/* The kernel-facing names of the memory modes (NUMAGUARD_MEM_MODE, JSON). */
static const char *const mem_mode_names[] = {
    [NG_MEM_MODE_NONE] = "none",
    [NG_MEM_MODE_BIND] = "bind",
    [NG_MEM_MODE_PREFERRED_MANY] = "preferred_many",
    [NG_MEM_MODE_INTERLEAVE] = "interleave",
    [NG_MEM_MODE_WEIGHTED] = "weighted_interleave",
};
_Static_assert(NGI_ARRAY_LEN(mem_mode_names) == NG_MEM_MODE_COUNT,
               "mem_mode_names: one name per ng_mem_mode");

/* One row per modifier, in canonical order: the parser, the formatter, the
 * messages' valid forms, ng_policy_usage and --numa-policy=help read it. */
static const ngi_policy_mod mod_names[] = {
    {"verbose", NG_MOD_VERBOSE, "one line per task on stderr"},
    {"quiet", NG_MOD_QUIET, "no warnings (excludes verbose)"},
    {"strict", NG_MOD_STRICT, "a failure fails the task"},
    {"help", NG_MOD_HELP, "print this text"},
    {"smt", NG_MOD_SMT, "one thread per hardware thread instead of per core"},
    {"cpuless", NG_MOD_CPULESS, "memory may also use CPU-less nodes (GPU memory, HBM,\n"
                                "             CXL, PMEM)"},
    {"wide", NG_MOD_WIDE, "GPU tasks may use allocated cores on other packages\n"
                          "             than their GPU's (else they stay on its package)"},
};

const ngi_policy_mod *ngi_policy_mod_at(size_t i)
{
    return i < NGI_ARRAY_LEN(mod_names) ? &mod_names[i] : NULL;
}

static unsigned all_mods(void)
{
    unsigned all = 0;
    for (size_t m = 0; m < NGI_ARRAY_LEN(mod_names); m++)
        all |= mod_names[m].flag;
    return all;
}

const ngi_policy_info *ngi_policy_info_of(ng_policy_kind kind)
{
    return (unsigned)kind < NG_POLICY_KIND_COUNT ? &kinds[kind] : NULL;
}

const char *ng_policy_kind_name(ng_policy_kind kind)
{
    const ngi_policy_info *pi = ngi_policy_info_of(kind);
    return pi ? pi->name : "?";
}

int ng_policy_kind_from_name(const char *name, size_t len)
{
    for (int k = 0; name && k < NG_POLICY_KIND_COUNT; k++)
        if (len == strlen(kinds[k].name) && strncmp(name, kinds[k].name, len) == 0)
            return k;
    return -1;
}

const char *ng_mem_mode_name(ng_mem_mode mode)
{
    return (unsigned)mode < NGI_ARRAY_LEN(mem_mode_names) && mem_mode_names[mode]
               ? mem_mode_names[mode] : "?";
}

/* Append "a|b" or "a and b" style joins of s to buf at *o (bounded). */
static void append(char *buf, size_t len, size_t *o, const char *s)
{
    int n = snprintf(buf + *o, len - *o, "%s", s);
    if (n > 0)
        *o = *o + (size_t)n < len ? *o + (size_t)n : len - 1;
}

/* The kinds that take :NODES, "interleave and weighted". */
static void nodes_kinds(char *buf, size_t len)
{
    size_t o = 0, n = 0, total = 0;
    buf[0] = '\0';
    for (int k = 0; k < NG_POLICY_KIND_COUNT; k++)
        total += kinds[k].takes_nodes;
    for (int k = 0; k < NG_POLICY_KIND_COUNT; k++) {
        if (!kinds[k].takes_nodes)
            continue;
        append(buf, len, &o, n == 0 ? "" : n + 1 == total ? " and " : ", ");
        append(buf, len, &o, kinds[k].name);
        n++;
    }
}

int ngi_policy_forms(char *buf, size_t len)
{
    size_t o = 0;
    append(buf, len, &o, "expected ");
    for (int k = 0; k < NG_POLICY_KIND_COUNT; k++) {
        append(buf, len, &o, k ? "|" : "");
        append(buf, len, &o, kinds[k].name);
        append(buf, len, &o, kinds[k].takes_nodes ? "[:NODES]" : "");
    }
    append(buf, len, &o, " with optional modifiers ");
    for (size_t m = 0; m < NGI_ARRAY_LEN(mod_names); m++) {
        append(buf, len, &o, m ? "," : "");
        append(buf, len, &o, mod_names[m].name);
    }
    append(buf, len, &o, " (NODES = all or a nodelist like 0-3,8)");
    return (int)o;
}

int ng_policy_usage(char *buf, size_t len)
{
    size_t o = 0;
    if (!buf || !len)
        return -1;
    buf[0] = '\0';
    for (int k = 0; k < NG_POLICY_KIND_COUNT; k++) {
        append(buf, len, &o, k ? ", " : "");
        append(buf, len, &o, kinds[k].name);
        append(buf, len, &o, kinds[k].takes_nodes ? "[:NODES]" : "");
        /* What ng_policy_parse gives for an empty value. */
        append(buf, len, &o, k == NG_POLICY_LOCAL ? " (default)" : "");
    }
    append(buf, len, &o, "; modifiers");
    for (size_t m = 0, n = 0; m < NGI_ARRAY_LEN(mod_names); m++) {
        if (mod_names[m].flag == NG_MOD_HELP)
            continue;
        append(buf, len, &o, n++ ? ", " : " ");
        append(buf, len, &o, mod_names[m].name);
    }
    return o + 1 < len ? (int)o : -1;
}

/* ---------------- the grammar ---------------- */

/* Parser state: the whole value and a cursor into it. */
typedef struct pstate {
    const char *text;
    size_t len;
    const char *p;
    char *err;
    size_t errlen;
} pstate;

static int bad(pstate *st, const char *why, const char *item, size_t ilen)
{
    char forms[256];
    ngi_policy_forms(forms, sizeof forms);
    return ngi_option_reject(st->err, st->errlen, POLICY_OPT, forms, st->text, st->len,
                             why, item, ilen);
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Length of the item at p: up to the next ',' or the end. */
static size_t item_len(const char *p)
{
    return strcspn(p, ",");
}

/* A decimal node index at st->p; leading zeros are accepted as the kernel's
 * nodelist parser does. Digits are capped so the value cannot overflow. */
static int node_number(pstate *st, const char *item, size_t ilen, unsigned *out)
{
    unsigned v = 0;
    if (!is_digit(*st->p))
        return bad(st, "bad node list in '%s'", item, ilen);
    while (is_digit(*st->p)) {
        if (v <= NG_MAX_NUMA_OS_INDEX)
            v = v * 10 + (unsigned)(*st->p - '0');
        st->p++;
    }
    if (v > NG_MAX_NUMA_OS_INDEX) {
        char why[96];
        snprintf(why, sizeof why, "node index out of range (0-%d) in '%%s'",
                 NG_MAX_NUMA_OS_INDEX);
        return bad(st, why, item, ilen);
    }
    *out = v;
    return 0;
}

/* NODES after "interleave:" / "weighted:". "all" leaves has_nodes 0. A
 * nodelist consumes every following comma item that starts with a digit, so
 * "interleave:0,2-3,verbose" is nodes {0,2,3} then the modifier verbose. */
static int parse_nodes(pstate *st, ng_policy *out)
{
    const char *item = st->p;   /* for messages: the "N-M" piece being read */
    if (strncmp(st->p, "all", 3) == 0 && (st->p[3] == ',' || st->p[3] == '\0')) {
        st->p += 3;
        return 0;
    }
    if (!is_digit(*st->p))
        return bad(st, "'%s' is not a node list (expected all or e.g. 0-3,8)",
                   item, item_len(item));
    for (;;) {
        unsigned a, b;
        item = st->p;
        size_t ilen = item_len(item);
        if (node_number(st, item, ilen, &a) < 0)
            return -1;
        b = a;
        if (*st->p == '-') {
            st->p++;
            if (node_number(st, item, ilen, &b) < 0)
                return -1;
            if (b < a)
                return bad(st, "reversed node range '%s'", item, ilen);
        }
        if (*st->p != ',' && *st->p != '\0')
            return bad(st, "bad node list in '%s'", item, ilen);
        for (unsigned n = a; n <= b; n++)
            out->nodes[n / 64] |= 1ull << (n % 64);
        out->has_nodes = 1;
        if (!(st->p[0] == ',' && is_digit(st->p[1])))
            return 0;
        st->p++;
    }
}

/* One policy item (name already matched as kind, at st->p after the name). */
static int parse_policy_item(pstate *st, ng_policy *out, int *have_policy,
                             ng_policy_kind kind, const char *item)
{
    size_t ilen = item_len(item);
    if (*have_policy)
        return bad(st, "second policy '%s' (exactly one policy is allowed)", item, ilen);
    *have_policy = 1;
    out->kind = kind;
    if (*st->p != ':')
        return 0;
    if (!kinds[kind].takes_nodes) {
        char why[128], which[64];
        nodes_kinds(which, sizeof which);
        snprintf(why, sizeof why, "item '%%s': only %s take a node list", which);
        return bad(st, why, item, ilen);
    }
    st->p++;
    return parse_nodes(st, out);
}

/* The policy or modifier name nearest a mistyped word ("locl": local), or
 * NULL when none is near; @p nodes_only: only kinds that take ':NODES'. */
static const char *nearest_name(const char *word, size_t len, int nodes_only)
{
    const char *best = NULL;
    unsigned bd = UINT_MAX;
    for (int k = 0; k < NG_POLICY_KIND_COUNT; k++) {
        unsigned d = ngi_option_nearness(word, len, kinds[k].name);
        if ((!nodes_only || kinds[k].takes_nodes) && d < bd)
            bd = d, best = kinds[k].name;
    }
    for (size_t m = 0; !nodes_only && m < NGI_ARRAY_LEN(mod_names); m++) {
        unsigned d = ngi_option_nearness(word, len, mod_names[m].name);
        if (d < bd)
            bd = d, best = mod_names[m].name;
    }
    return best;
}

/* "unknown item '%s'" and, when a name is near, "(did you mean 'x'?)". */
static int unknown(pstate *st, const char *item, size_t ilen, size_t wlen, const char *plain)
{
    const char *near = nearest_name(item, wlen, wlen < ilen);
    char why[200], tail[NGI_SHOW_MAX * 4 + 8];
    if (!near)
        return bad(st, plain, item, ilen);
    /* The item as it would be right: "interleav:0-3" -> "interleave:0-3" (escaped: the
     * text is printed; '%' doubled: it goes through bad()'s format). */
    ngi_show_bytes(item + wlen, ilen - wlen, tail, sizeof tail);
    size_t u = (size_t)snprintf(why, sizeof why, "unknown item '%%s' (did you mean '%s", near);
    for (const char *c = tail; *c && u + 3 < sizeof why; c++) {
        why[u++] = *c;
        if (*c == '%')
            why[u++] = '%';
    }
    snprintf(why + u, sizeof why - u, "'?)");
    return bad(st, why, item, ilen);
}

/* Match the item at st->p against the policy and modifier names. */
static int parse_item(pstate *st, ng_policy *out, int *have_policy)
{
    const char *item = st->p;
    size_t ilen = item_len(item);
    size_t wlen = strcspn(item, ",:");
    if (ilen == 0)
        return bad(st, "empty item%s", NULL, 0);
    int k = ng_policy_kind_from_name(item, wlen);
    if (k >= 0) {
        st->p += wlen;
        return parse_policy_item(st, out, have_policy, (ng_policy_kind)k, item);
    }
    for (size_t m = 0; m < NGI_ARRAY_LEN(mod_names); m++) {
        if (ilen == strlen(mod_names[m].name) && strncmp(item, mod_names[m].name, ilen) == 0) {
            out->mods |= mod_names[m].flag;
            st->p += ilen;
            return 0;
        }
    }
    if (wlen < ilen) { /* "verbose:1", "foo:2", "interleav:0-3" */
        char why[128], which[64];
        nodes_kinds(which, sizeof which);
        snprintf(why, sizeof why, "unknown item '%%s' (only %s take ':NODES')", which);
        return unknown(st, item, ilen, wlen, why);
    }
    return unknown(st, item, ilen, wlen, "unknown item '%s'");
}

int ng_policy_parse(const char *text, ng_policy *out, char *err, size_t errlen)
{
    ng_policy pol;
    memset(&pol, 0, sizeof pol);
    pol.kind = NG_POLICY_LOCAL;
    if (!out)
        return ngi_fail(err, errlen, POLICY_OPT ": no output");
    if (!text || !*text) {
        *out = pol;
        return 0;
    }
    size_t len = strnlen(text, NG_MAX_ARG + 1);
    pstate st = {text, len, text, err, errlen};
    if (len > NG_MAX_ARG) {
        char why[64];
        snprintf(why, sizeof why, "longer than %d bytes%%s", NG_MAX_ARG);
        return bad(&st, why, NULL, 0);
    }
    int have_policy = 0;
    for (;;) {
        if (parse_item(&st, &pol, &have_policy) < 0)
            return -1;
        if (*st.p == '\0')
            break;
        st.p++; /* the ',' (parse_item stops only at ',' or the end) */
        if (*st.p == '\0')
            return bad(&st, "empty item%s", NULL, 0); /* trailing comma */
    }
    /* "help" needs no policy: the user asked for the grammar, not a placement. */
    if (!have_policy && !(pol.mods & NG_MOD_HELP))
        return bad(&st, "no policy given%s", NULL, 0);
    if ((pol.mods & NG_MOD_VERBOSE) && (pol.mods & NG_MOD_QUIET))
        return bad(&st, "verbose and quiet exclude each other%s", NULL, 0);
    *out = pol;
    return 0;
}

/* Append s to buf at *o; -1 when it does not fit. */
static int put(char *buf, size_t len, size_t *o, const char *s)
{
    size_t n = strlen(s);
    if (*o + n >= len)
        return -1;
    memcpy(buf + *o, s, n + 1);
    *o += n;
    return 0;
}

static int node_set(const ng_policy *pol, unsigned n)
{
    return (pol->nodes[n / 64] >> (n % 64)) & 1;
}

/* The nodelist of pol in ranges, "0-3,8". */
static int put_nodes(const ng_policy *pol, char *buf, size_t len, size_t *o)
{
    int first = 1;
    for (unsigned n = 0; n <= NG_MAX_NUMA_OS_INDEX; n++) {
        if (!node_set(pol, n))
            continue;
        unsigned e = n;
        while (e < NG_MAX_NUMA_OS_INDEX && node_set(pol, e + 1))
            e++;
        char piece[32];
        if (e == n)
            snprintf(piece, sizeof piece, "%s%u", first ? "" : ",", n);
        else
            snprintf(piece, sizeof piece, "%s%u-%u", first ? "" : ",", n, e);
        if (put(buf, len, o, piece) < 0)
            return -1;
        first = 0;
        n = e;
    }
    return first ? -1 : 0; /* has_nodes with no node cannot be written back */
}

/* Canonical form: policy[:nodes] then modifiers in mod_names order. Returns
 * the length, or -1 if @p pol is not something the parser could produce or
 * @p buf is too small. */
int ngi_policy_format(const ng_policy *pol, char *buf, size_t len)
{
    size_t o = 0;
    if (!buf || !len)
        return -1;
    buf[0] = '\0';
    if (!pol || !ngi_policy_info_of(pol->kind) || (pol->mods & ~all_mods()) ||
        ((pol->mods & NG_MOD_VERBOSE) && (pol->mods & NG_MOD_QUIET)))
        return -1;
    if (pol->has_nodes && !kinds[pol->kind].takes_nodes)
        return -1;
    if (put(buf, len, &o, ng_policy_kind_name(pol->kind)) < 0)
        goto trunc;
    if (pol->has_nodes && (put(buf, len, &o, ":") < 0 || put_nodes(pol, buf, len, &o) < 0))
        goto trunc;
    for (size_t m = 0; m < NGI_ARRAY_LEN(mod_names); m++)
        if ((pol->mods & mod_names[m].flag) &&
            (put(buf, len, &o, ",") < 0 || put(buf, len, &o, mod_names[m].name) < 0))
            goto trunc;
    return (int)o;
trunc:
    buf[0] = '\0';
    return -1;
}


/* ---------------- policy against a machine ---------------- */

int ng_policy_check_nodes(const ng_policy *pol, const ng_topology *topo, char *err, size_t errlen)
{
    if (!pol || !topo || !pol->has_nodes)
        return 0;
    hwloc_bitmap_t named = hwloc_bitmap_alloc(), have = hwloc_bitmap_alloc(),
                   missing = hwloc_bitmap_alloc();
    int rc = 0;
    if (!named || !have || !missing) {
        rc = ngi_fail(err, errlen, "out of memory");
        goto out;
    }
    ngi_nodemask_to_bitmap(pol->nodes, NG_NODEMASK_WORDS, named);
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++)
        hwloc_bitmap_set(have, ng_topology_numa(topo, i)->os_index);
    hwloc_bitmap_andnot(missing, named, have);
    if (!hwloc_bitmap_iszero(missing)) {
        char m[128], h[128];
        if (ng_list_format(missing, m, sizeof m) < 0)
            ngi_strlcpy(m, "(long list)", sizeof m);
        if (ng_list_format(have, h, sizeof h) < 0)
            ngi_strlcpy(h, "(long list)", sizeof h);
        rc = ngi_fail(err, errlen, "--numa-policy=%s:%s: NUMA node%s %s %s not exist on this "
                     "machine (its nodes: %s)", ng_policy_kind_name(pol->kind), m,
                     hwloc_bitmap_weight(missing) > 1 ? "s" : "", m,
                     hwloc_bitmap_weight(missing) > 1 ? "do" : "does", h);
    }
out:
    hwloc_bitmap_free(named);
    hwloc_bitmap_free(have);
    hwloc_bitmap_free(missing);
    return rc;
}