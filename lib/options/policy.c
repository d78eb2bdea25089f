/* Policy grammar: --numa-policy and --omp-guard values (parse, format, help).
 * The grammar is documented in docs/grammar.md; ng_policy_help() prints it. */
#include "private/options.h"

#include <stdio.h>
#include <string.h>

#define POLICY_OPT "--numa-policy"
#define POLICY_FORMS "expected local|prefer|interleave[:NODES]|weighted[:NODES]|none" \
    " with optional modifiers verbose,quiet,strict,help,smt,cpuless" \
    " (NODES = all or a nodelist like 0-3,8)"
#define OMP_OPT "--omp-guard"
#define OMP_FORMS "expected auto, off, or a thread count 1-65536, optionally followed by ,force and/or ,bind"


/* One rejection line: "<opt>: invalid value '<value>': <why>; <forms>".
 * When @p item is not NULL, @p why names it: "unknown item '%s'". */
static int reject(char *err, size_t errlen, const char *opt, const char *forms,
                  const char *value, size_t vlen, const char *why,
                  const char *item, size_t ilen)
{
    char v[NGI_SHOW_MAX * 4 + 8], it[NGI_SHOW_MAX * 4 + 8] = "";
    ngi_show_bytes(value, vlen, v, sizeof v);
    if (item)
        ngi_show_bytes(item, ilen, it, sizeof it);
    char reason[sizeof it + 64];
    snprintf(reason, sizeof reason, why, it);
    return ngi_fail(err, errlen, "%s: invalid value '%s': %s; %s", opt, v, reason, forms);
}

/* ---------------- --numa-policy ---------------- */

static const struct { const char *name; unsigned flag; } mod_names[] = {
    {"verbose", NG_MOD_VERBOSE}, {"quiet", NG_MOD_QUIET}, {"strict", NG_MOD_STRICT},
    {"help", NG_MOD_HELP},       {"smt", NG_MOD_SMT},     {"cpuless", NG_MOD_CPULESS},
};
#define ALL_MODS (NG_MOD_VERBOSE | NG_MOD_QUIET | NG_MOD_STRICT | NG_MOD_HELP | \
                  NG_MOD_SMT | NG_MOD_CPULESS)

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
    return reject(st->err, st->errlen, POLICY_OPT, POLICY_FORMS, st->text, st->len,
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
    if (kind != NG_POLICY_INTERLEAVE && kind != NG_POLICY_WEIGHTED)
        return bad(st, "item '%s': only interleave and weighted take a node list", item, ilen);
    st->p++;
    return parse_nodes(st, out);
}

/* Match the item at st->p against the policy and modifier names. */
static int parse_item(pstate *st, ng_policy *out, int *have_policy)
{
    const char *item = st->p;
    size_t ilen = item_len(item);
    size_t wlen = strcspn(item, ",:");
    if (ilen == 0)
        return bad(st, "empty item%s", NULL, 0);
    for (int k = NG_POLICY_LOCAL; k <= NG_POLICY_NONE; k++) {
        const char *name = ng_policy_kind_name((ng_policy_kind)k);
        if (wlen == strlen(name) && strncmp(item, name, wlen) == 0) {
            st->p += wlen;
            return parse_policy_item(st, out, have_policy, (ng_policy_kind)k, item);
        }
    }
    for (size_t m = 0; m < NGI_ARRAY_LEN(mod_names); m++) {
        if (ilen == strlen(mod_names[m].name) && strncmp(item, mod_names[m].name, ilen) == 0) {
            out->mods |= mod_names[m].flag;
            st->p += ilen;
            return 0;
        }
    }
    if (wlen < ilen) /* "verbose:1", "foo:2" */
        return bad(st, "unknown item '%s' (only interleave and weighted take ':NODES')",
                   item, ilen);
    return bad(st, "unknown item '%s'", item, ilen);
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
    if (!pol || (unsigned)pol->kind > NG_POLICY_NONE || (pol->mods & ~(unsigned)ALL_MODS) ||
        ((pol->mods & NG_MOD_VERBOSE) && (pol->mods & NG_MOD_QUIET)))
        return -1;
    int takes_nodes = pol->kind == NG_POLICY_INTERLEAVE || pol->kind == NG_POLICY_WEIGHTED;
    if (pol->has_nodes && !takes_nodes)
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

const char *ng_policy_help(void)
{
    return
"numaguard options (see docs/grammar.md)\n"
"\n"
"--numa-policy=ITEM[,ITEM...]   one policy plus any modifiers, in any order\n"
"  policies (exactly one; default local):\n"
"    local              bind CPUs near the task's GPU(s); memory bound there\n"
"    prefer             bind CPUs; memory preferred there (spills, no OOM)\n"
"    interleave[:NODES] bind CPUs; memory interleaved over NODES\n"
"    weighted[:NODES]   bind CPUs; weighted interleave (Linux >= 6.9)\n"
"    none               touch neither CPUs nor memory\n"
"  NODES: all, or a nodelist such as 0-3,8 (NUMA OS indices 0-4095); the\n"
"    items after ':' that start with a digit belong to the list:\n"
"    interleave:0,2-3,verbose = nodes 0,2,3 plus verbose. Without NODES the\n"
"    nodes near the task's GPU(s) are used; 'all' means every usable node.\n"
"  modifiers:\n"
"    verbose  one line per task on stderr      quiet  no warnings\n"
"    strict   a failure fails the task          help   print this text\n"
"    smt      one thread per hardware thread instead of per core\n"
"    cpuless  memory may also use CPU-less nodes (GPU memory, HBM, CXL, PMEM)\n"
"  verbose and quiet exclude each other; 'help' alone is valid.\n"
"  Lower case, no spaces. Examples: --numa-policy=prefer,verbose\n"
"    --numa-policy=interleave:0-3,strict  --numa-policy=weighted:all,cpuless\n"
"\n"
"--omp-guard[=auto|N|off][,force][,bind]   cap OpenMP/BLAS thread pools\n"
"  auto (default)  threads = cores owned (hardware threads with smt),\n"
"                  lowered to a cgroup cpu.max quota when that is smaller\n"
"  N               exactly N threads (1-65536)\n"
"  off             set no thread variables\n"
"  force           overwrite values already set (else they are kept);\n"
"                  'force' alone means auto,force\n"
"  bind            also set OMP_PROC_BIND and OMP_PLACES (the task's own\n"
"                  CPUs), only when numaguard bound the task; for pure\n"
"                  OpenMP programs: threads and processes a program starts\n"
"                  outside OpenMP then share the first place\n"
"  Sets OMP_NUM_THREADS, MKL_NUM_THREADS, OPENBLAS_NUM_THREADS,\n"
"  BLIS_NUM_THREADS, VECLIB_MAXIMUM_THREADS, NUMEXPR_NUM_THREADS and\n"
"  NUMBA_NUM_THREADS; the task stays bound to its whole slice.\n";
}

/* ---------------- --omp-guard ---------------- */

static int omp_bad(const char *text, size_t len, const char *why, const char *item,
                   size_t ilen, char *err, size_t errlen)
{
    return reject(err, errlen, OMP_OPT, OMP_FORMS, text, len, why, item, ilen);
}

/* The head item: auto | off | N (no sign, no leading zero, no spaces). */
static int omp_head(const char *text, size_t len, const char *h, size_t hlen,
                    ng_omp_guard *g, char *err, size_t errlen)
{
    if (hlen == 4 && strncmp(h, "auto", 4) == 0) {
        g->mode = NG_OMP_AUTO;
        return 0;
    }
    if (hlen == 3 && strncmp(h, "off", 3) == 0) {
        g->mode = NG_OMP_OFF;
        return 0;
    }
    if (hlen == 0)
        return omp_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    for (size_t i = 0; i < hlen; i++)
        if (!is_digit(h[i]))
            return omp_bad(text, len, "unknown item '%s'", h, hlen, err, errlen);
    if (h[0] == '0' || hlen > 5) /* "0", "08"; 6+ digits exceed 65536 */
        return omp_bad(text, len, "thread count '%s' out of range", h, hlen, err, errlen);
    unsigned v = 0;
    for (size_t i = 0; i < hlen; i++)
        v = v * 10 + (unsigned)(h[i] - '0');
    if (v > NG_MAX_THREADS)
        return omp_bad(text, len, "thread count '%s' out of range", h, hlen, err, errlen);
    g->mode = NG_OMP_FIXED;
    g->nthreads = v;
    return 0;
}

/* One modifier after the head: force or bind, each at most once. */
static int omp_modifier(const char *text, size_t len, const char *t, size_t tlen,
                        ng_omp_guard *g, char *err, size_t errlen)
{
    int *flag = NULL;
    if (tlen == 5 && strncmp(t, "force", 5) == 0)
        flag = &g->force;
    else if (tlen == 4 && strncmp(t, "bind", 4) == 0)
        flag = &g->bind;
    if (tlen == 0)
        return omp_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    if (!flag)
        return omp_bad(text, len, "unknown item '%s' (only force and bind may follow)", t,
                       tlen, err, errlen);
    if (*flag)
        return omp_bad(text, len, "'%s' given twice", t, tlen, err, errlen);
    *flag = 1;
    return 0;
}

int ng_omp_guard_parse(const char *text, ng_omp_guard *out, char *err, size_t errlen)
{
    ng_omp_guard g = {NG_OMP_AUTO, 0, 0, 0};
    if (!out)
        return ngi_fail(err, errlen, OMP_OPT ": no output");
    if (!text || !*text) {
        *out = g;
        return 0;
    }
    size_t len = strnlen(text, NG_MAX_ARG + 1);
    if (len > NG_MAX_ARG) {
        char why[64];
        snprintf(why, sizeof why, "longer than %d bytes%%s", NG_MAX_ARG);
        return omp_bad(text, len, why, NULL, 0, err, errlen);
    }
    size_t hlen = strcspn(text, ",");
    const char *t = text;
    /* A modifier alone ("force", "bind,force") means auto with it. */
    if (!((hlen == 5 && strncmp(text, "force", 5) == 0) ||
          (hlen == 4 && strncmp(text, "bind", 4) == 0))) {
        if (omp_head(text, len, text, hlen, &g, err, errlen) < 0)
            return -1;
        t = text[hlen] == ',' ? text + hlen + 1 : text + hlen;
        if (text[hlen] == ',' && *t == '\0')
            return omp_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    }
    while (*t) {
        size_t tlen = strcspn(t, ",");
        if (omp_modifier(text, len, t, tlen, &g, err, errlen) < 0)
            return -1;
        t += tlen;
        if (*t == ',' && *++t == '\0')
            return omp_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    }
    if (g.mode == NG_OMP_OFF && (g.force || g.bind))
        return omp_bad(text, len, "off sets nothing, so a modifier makes no sense%s",
                       NULL, 0, err, errlen);
    *out = g;
    return 0;
}

int ngi_omp_guard_format(const ng_omp_guard *g, char *buf, size_t len)
{
    if (!buf || !len)
        return -1;
    buf[0] = '\0';
    if (!g)
        return -1;
    char head[16];
    switch (g->mode) {
    case NG_OMP_OFF:
        if (g->force)
            return -1; /* "off,force" is not a valid value */
        snprintf(head, sizeof head, "off");
        break;
    case NG_OMP_AUTO:
        snprintf(head, sizeof head, "auto");
        break;
    case NG_OMP_FIXED:
        if (g->nthreads < 1 || g->nthreads > NG_MAX_THREADS)
            return -1;
        snprintf(head, sizeof head, "%u", g->nthreads);
        break;
    default:
        return -1;
    }
    if (g->mode == NG_OMP_OFF && g->bind)
        return -1;
    int n = snprintf(buf, len, "%s%s%s", head, g->force ? ",force" : "",
                     g->bind ? ",bind" : "");
    if (n < 0 || (size_t)n >= len) {
        buf[0] = '\0';
        return -1;
    }
    return n;
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
const char *ng_policy_kind_name(ng_policy_kind kind)
{
    static const char *const names[] = {"local", "prefer", "interleave", "weighted", "none"};
    return (unsigned)kind < NGI_ARRAY_LEN(names) ? names[kind] : "?";
}

const char *ng_mem_mode_name(ng_mem_mode mode)
{
    static const char *const names[] = {"none", "bind", "preferred_many", "interleave",
                                        "weighted_interleave"};
    return (unsigned)mode < NGI_ARRAY_LEN(names) ? names[mode] : "?";
}
