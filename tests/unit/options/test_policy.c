/* --numa-policy and --omp-guard grammar: valid forms, rejections and their
 * messages, canonical round trips, the length bound and a small fuzz loop. */
#include "private/options.h"
#include "tap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define M_V NG_MOD_VERBOSE
#define M_Q NG_MOD_QUIET
#define M_S NG_MOD_STRICT
#define M_H NG_MOD_HELP
#define M_T NG_MOD_SMT
#define M_C NG_MOD_CPULESS

/* A valid --numa-policy value, its struct (nodes as a nodelist, "" = none
 * named) and its canonical text. */
static const struct {
    const char *in;
    ng_policy_kind kind;
    unsigned mods;
    const char *nodes;
    const char *canon;
} valid[] = {
    {NULL, NG_POLICY_LOCAL, 0, "", "local"},
    {"", NG_POLICY_LOCAL, 0, "", "local"},
    {"local", NG_POLICY_LOCAL, 0, "", "local"},
    {"prefer", NG_POLICY_PREFER, 0, "", "prefer"},
    {"interleave", NG_POLICY_INTERLEAVE, 0, "", "interleave"},
    {"weighted", NG_POLICY_WEIGHTED, 0, "", "weighted"},
    {"none", NG_POLICY_NONE, 0, "", "none"},
    {"help", NG_POLICY_LOCAL, M_H, "", "local,help"},
    {"help,verbose", NG_POLICY_LOCAL, M_H | M_V, "", "local,verbose,help"},
    {"verbose,prefer", NG_POLICY_PREFER, M_V, "", "prefer,verbose"},
    {"prefer,verbose,verbose", NG_POLICY_PREFER, M_V, "", "prefer,verbose"},
    {"quiet,none", NG_POLICY_NONE, M_Q, "", "none,quiet"},
    {"cpuless,smt,help,strict,verbose,local", NG_POLICY_LOCAL, M_C | M_T | M_H | M_S | M_V, "",
     "local,verbose,strict,help,smt,cpuless"},
    {"wide,local,cpuless", NG_POLICY_LOCAL, M_C | NG_MOD_WIDE, "", "local,cpuless,wide"},
    {"interleave:all", NG_POLICY_INTERLEAVE, 0, "", "interleave"},
    {"weighted:all,cpuless", NG_POLICY_WEIGHTED, M_C, "", "weighted,cpuless"},
    {"interleave:0-3", NG_POLICY_INTERLEAVE, 0, "0-3", "interleave:0-3"},
    {"interleave:0-3,8", NG_POLICY_INTERLEAVE, 0, "0-3,8", "interleave:0-3,8"},
    {"interleave:0,2-3,verbose", NG_POLICY_INTERLEAVE, M_V, "0,2-3", "interleave:0,2-3,verbose"},
    {"verbose,interleave:0,2-3", NG_POLICY_INTERLEAVE, M_V, "0,2-3", "interleave:0,2-3,verbose"},
    {"interleave:3,2,1,0", NG_POLICY_INTERLEAVE, 0, "0-3", "interleave:0-3"},
    {"interleave:1-1,1", NG_POLICY_INTERLEAVE, 0, "1", "interleave:1"},
    {"weighted:0,4095,strict", NG_POLICY_WEIGHTED, M_S, "0,4095", "weighted:0,4095,strict"},
    {"weighted:63-64,127-128", NG_POLICY_WEIGHTED, 0, "63-64,127-128",
     "weighted:63-64,127-128"},
    {"weighted:0-4095", NG_POLICY_WEIGHTED, 0, "0-4095", "weighted:0-4095"},
    {"interleave:007", NG_POLICY_INTERLEAVE, 0, "7", "interleave:7"},
    {"smt,interleave:2,quiet", NG_POLICY_INTERLEAVE, M_Q | M_T, "2", "interleave:2,quiet,smt"},
};

/* An invalid value and substrings its message must contain (besides the
 * option name, the quoted value and the forms, which are checked for all). */
static const struct {
    const char *in;
    const char *want1, *want2;
} invalid[] = {
    {"locl", "unknown item 'locl' (did you mean 'local'?); expected", NULL},
    {"LOCAL", "unknown item 'LOCAL' (did you mean 'local'?)", NULL},
    {"local,verbos", "unknown item 'verbos' (did you mean 'verbose'?)", NULL},
    {"interleaved:0-3", "unknown item 'interleaved:0-3' (did you mean 'interleave:0-3'?)", NULL},
    {"weigthed", "(did you mean 'weighted'?)", NULL},
    {"prefered,smt", "(did you mean 'prefer'?)", NULL},
    {"inter", "(did you mean 'interleave'?)", NULL},
    {"local,cpules", "(did you mean 'cpuless'?)", NULL},
    {"bogus", "unknown item 'bogus'; expected", NULL},
    {"lo", "unknown item 'lo'; expected", NULL},
    {"local,prefer", "second policy 'prefer'", NULL},
    {"interleave:0,none", "second policy 'none'", NULL},
    {"verbose", "no policy", NULL},
    {"verbose,quiet,local", "verbose and quiet", NULL},
    {"local:0", "'local:0'", "only interleave and weighted"},
    {"prefer:all", "'prefer:all'", "only interleave and weighted"},
    {"none:1", "'none:1'", "only interleave and weighted"},
    {"interleave:", "not a node list", NULL},
    {"interleave:,1", "not a node list", NULL},
    {"interleave:x", "'x' is not a node list", NULL},
    {"interleave:4096", "out of range (0-4095)", "'4096'"},
    {"interleave:99999999999999999999", "out of range", NULL},
    {"interleave:3-1", "reversed node range '3-1'", NULL},
    {"interleave:1-", "bad node list in '1-'", NULL},
    {"interleave:1-x", "bad node list in '1-x'", NULL},
    {"interleave:0-3:2", "bad node list in '0-3:2'", NULL},
    {"interleave:all,2", "unknown item '2'", NULL},
    {"interleave:allx", "'allx' is not a node list", NULL},
    {"interleave:0,,verbose", "empty item", NULL},
    {"local,", "empty item", NULL},
    {",local", "empty item", NULL},
    {",", "empty item", NULL},
    {"local, verbose", "unknown item ' verbose'", NULL},
    {" local", "unknown item ' local'", NULL},
    {"local ", "unknown item 'local '", NULL},
    {"verbose:1,local", "unknown item 'verbose:1'", NULL},
    {"interleave:-1", "not a node list", NULL},
    {"interleave:+1", "not a node list", NULL},
    {"local\n", "'local\\x0a'", NULL},
    {"lo\x1b[31mcal", "'lo\\x1b[31mcal'", NULL},
    {"it's", "'it\\x27s'", NULL},
};

/* Printable form of a test input for TAP descriptions (one line). */
static const char *esc(const char *s)
{
    static char bufs[2][1200];
    static int k;
    char *b = bufs[k++ & 1];
    size_t o = 0;
    if (!s)
        return "(NULL)";
    for (; *s && o + 5 < sizeof bufs[0]; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f)
            b[o++] = (char)c;
        else
            o += (size_t)snprintf(b + o, sizeof bufs[0] - o, "\\x%02x", c);
    }
    b[o] = '\0';
    return b;
}

static int nodes_equal(const ng_policy *p, const char *list)
{
    hwloc_bitmap_t want = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc();
    if (*list && ng_list_parse(list, want, NG_MAX_NUMA_OS_INDEX, NULL, 0) < 0)
        abort();
    for (unsigned n = 0; n <= NG_MAX_NUMA_OS_INDEX; n++)
        if (p->nodes[n / 64] >> (n % 64) & 1)
            hwloc_bitmap_set(got, n);
    int eq = hwloc_bitmap_isequal(want, got);
    hwloc_bitmap_free(want);
    hwloc_bitmap_free(got);
    return eq;
}

/* Every rejection names the option, the value and the forms, on one line. */
static int well_formed(const char *err, const char *opt, const char *forms)
{
    return strncmp(err, opt, strlen(opt)) == 0 && strstr(err, "invalid value '") &&
           strstr(err, forms) && !strchr(err, '\n');
}

static void test_valid(void)
{
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        ng_policy p;
        char err[512] = "", buf[256];
        memset(&p, 0x5a, sizeof p);
        const char *in = valid[i].in ? valid[i].in : "(NULL)";
        int rc = ng_policy_parse(valid[i].in, &p, err, sizeof err);
        ok(rc == 0, "policy '%s' parses (%s)", in, err);
        ok(p.kind == valid[i].kind && p.mods == valid[i].mods &&
               p.has_nodes == (valid[i].nodes[0] != '\0') && nodes_equal(&p, valid[i].nodes),
           "policy '%s' -> kind %s mods 0x%x nodes '%s'", in, ng_policy_kind_name(p.kind),
           p.mods, valid[i].nodes);
        int n = ngi_policy_format(&p, buf, sizeof buf);
        ok(n == (int)strlen(valid[i].canon) && strcmp(buf, valid[i].canon) == 0,
           "policy '%s' formats as '%s' (got '%s')", in, valid[i].canon, buf);
        ng_policy q;
        memset(&q, 0x33, sizeof q);
        ok(ng_policy_parse(buf, &q, err, sizeof err) == 0 && memcmp(&p, &q, sizeof p) == 0,
           "policy '%s' round-trips through '%s'", in, buf);
    }
}

static void test_invalid(void)
{
    const char *forms = "local|prefer|interleave[:NODES]|weighted[:NODES]|none";
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        ng_policy p = {NG_POLICY_NONE, 0x77, 0, {0}};
        ng_policy before = p;
        char err[512] = "";
        int rc = ng_policy_parse(invalid[i].in, &p, err, sizeof err);
        ok(rc == -1 && memcmp(&p, &before, sizeof p) == 0, "policy rejects '%s'", esc(invalid[i].in));
        ok(well_formed(err, "--numa-policy: invalid value '", forms) &&
               strstr(err, "verbose,quiet,strict,help,smt,cpuless") &&
               strstr(err, invalid[i].want1) &&
               (!invalid[i].want2 || strstr(err, invalid[i].want2)),
           "message for '%s' names option, value, item, forms: %s", esc(invalid[i].in), err);
    }
    /* The whole value is quoted for plain values. */
    char err[512];
    ng_policy p;
    ng_policy_parse("local,verbos", &p, err, sizeof err);
    ok(strstr(err, "'local,verbos'") != NULL, "message quotes the whole value: %s", err);
    /* A small err buffer is filled, terminated, never overrun. */
    char small[16];
    memset(small, 'x', sizeof small);
    ng_policy_parse("locl", &p, small, 10);
    ok(strlen(small) == 9 && small[10] == 'x', "err is bounded by errlen ('%s')", small);
    ok(ng_policy_parse("locl", &p, NULL, 0) == -1, "NULL err is allowed");
}

static void test_format_rejects(void)
{
    char buf[64];
    ng_policy p = {NG_POLICY_LOCAL, 0, 1, {0}};
    p.nodes[0] = 1;
    ok(ngi_policy_format(&p, buf, sizeof buf) == -1, "format rejects nodes on local");
    p.kind = NG_POLICY_INTERLEAVE;
    p.nodes[0] = 0;
    ok(ngi_policy_format(&p, buf, sizeof buf) == -1, "format rejects has_nodes with no node");
    p.has_nodes = 0;
    p.mods = M_V | M_Q;
    ok(ngi_policy_format(&p, buf, sizeof buf) == -1, "format rejects verbose+quiet");
    p.mods = 1u << 20;
    ok(ngi_policy_format(&p, buf, sizeof buf) == -1, "format rejects unknown modifier bits");
    p.mods = M_V;
    ok(ngi_policy_format(&p, buf, 10) == -1 && buf[0] == '\0',
       "format reports truncation ('interleave,verbose' in 10 bytes)");
    ok(ngi_policy_format(&p, buf, 19) == 18 && strcmp(buf, "interleave,verbose") == 0,
       "format fits exactly in 19 bytes");
    /* Every node set: the longest canonical nodelist form. */
    for (unsigned n = 0; n <= NG_MAX_NUMA_OS_INDEX; n += 2)
        p.nodes[n / 64] |= 1ull << (n % 64);
    p.has_nodes = 1;
    static char big[32768];
    int len = ngi_policy_format(&p, big, sizeof big);
    ng_policy q;
    char err[512];
    ok(len > NG_MAX_ARG && ng_policy_parse(big, &q, err, sizeof err) == -1 &&
           strstr(err, "longer than 1024 bytes"),
       "even-node policy formats to %d bytes, over the input bound", len);
}

static void test_long_input(void)
{
    static char in[NG_MAX_ARG + 64];
    char err[512];
    ng_policy p;
    /* Exactly NG_MAX_ARG bytes: "none" then 255 x ",smt". */
    memset(in, 0, sizeof in);
    memcpy(in, "none", 4);
    size_t pos = 4;
    while (pos + 4 <= NG_MAX_ARG) {
        memcpy(in + pos, ",smt", 4);
        pos += 4;
    }
    ok(pos == NG_MAX_ARG && ng_policy_parse(in, &p, err, sizeof err) == 0 &&
           p.kind == NG_POLICY_NONE && p.mods == M_T,
       "a %zu-byte value (the bound) parses", pos);
    in[pos] = 'x';
    in[pos + 1] = '\0';
    ok(ng_policy_parse(in, &p, err, sizeof err) == -1 &&
           strstr(err, "--numa-policy: invalid value 'none,smt") &&
           strstr(err, "...'") && strstr(err, "longer than 1024 bytes") &&
           strlen(err) < 400 && !strchr(err, '\n'),
       "a %zu-byte value is rejected with a short message: %s", pos + 1, err);
    ng_omp_guard g;
    memset(in, '1', NG_MAX_ARG + 1);
    in[NG_MAX_ARG + 1] = '\0';
    ok(ng_omp_guard_parse(in, &g, err, sizeof err) == -1 && strstr(err, "longer than") &&
           strstr(err, "--omp-guard: invalid value '1111") && strlen(err) < 400,
       "--omp-guard: over-long value rejected: %s", err);
}

static const struct {
    const char *in;
    ng_omp_mode mode;
    unsigned n;
    int force;
    const char *canon;
    int bind;
} omp_valid[] = {
    {NULL, NG_OMP_AUTO, 0, 0, "auto", 0},
    {"", NG_OMP_AUTO, 0, 0, "auto", 0},
    {"auto", NG_OMP_AUTO, 0, 0, "auto", 0},
    {"off", NG_OMP_OFF, 0, 0, "off", 0},
    {"force", NG_OMP_AUTO, 0, 1, "auto,force", 0},
    {"auto,force", NG_OMP_AUTO, 0, 1, "auto,force", 0},
    {"1", NG_OMP_FIXED, 1, 0, "1", 0},
    {"8", NG_OMP_FIXED, 8, 0, "8", 0},
    {"16,force", NG_OMP_FIXED, 16, 1, "16,force", 0},
    {"65536", NG_OMP_FIXED, 65536, 0, "65536", 0},
    {"bind", NG_OMP_AUTO, 0, 0, "auto,bind", 1},
    {"auto,bind", NG_OMP_AUTO, 0, 0, "auto,bind", 1},
    {"4,bind", NG_OMP_FIXED, 4, 0, "4,bind", 1},
    {"4,bind,force", NG_OMP_FIXED, 4, 1, "4,force,bind", 1},
    {"4,force,bind", NG_OMP_FIXED, 4, 1, "4,force,bind", 1},
    {"bind,force", NG_OMP_AUTO, 0, 1, "auto,force,bind", 1},
    {"force,bind", NG_OMP_AUTO, 0, 1, "auto,force,bind", 1},
    {"adaptive", NG_OMP_ADAPTIVE, 0, 0, "adaptive", 0},
    {"adaptive,force", NG_OMP_ADAPTIVE, 0, 1, "adaptive,force", 0},
    {"adaptive,bind,force", NG_OMP_ADAPTIVE, 0, 1, "adaptive,force,bind", 1},
};

static const struct {
    const char *in;
    const char *want;
} omp_invalid[] = {
    {"0", "out of range"},
    {"65537", "out of range"},
    {"100000", "out of range"},
    {"99999999999999999999", "out of range"},
    {"08", "'08'"},
    {"+8", "unknown item '+8'"},
    {"-1", "unknown item '-1'"},
    {" 8", "unknown item ' 8'"},
    {"8 ", "unknown item '8 '"},
    {"0x10", "unknown item '0x10'"},
    {"Auto", "unknown item 'Auto'"},
    {"on", "unknown item 'on'"},
    {"Adaptive", "unknown item 'Adaptive'"},
    {"adaptiv", "unknown item 'adaptiv'"},
    {"adaptive,adaptive", "unknown item 'adaptive' (only force and bind may follow)"},
    {"4,adaptive", "unknown item 'adaptive' (only force and bind may follow)"},
    {"off,force", "a modifier makes no sense"},
    {"off,bind", "a modifier makes no sense"},
    {"force,force", "'force' given twice"},
    {"bind,bind", "'bind' given twice"},
    {"force,8", "unknown item '8' (only force and bind may follow)"},
    {"8,forc", "unknown item 'forc'"},
    {"8,force,force", "'force' given twice"},
    {"8,force,", "empty item"},
    {"8,bind,", "empty item"},
    {"8,bind,,force", "empty item"},
    {"8,binds", "unknown item 'binds'"},
    {"8,", "empty item"},
    {",force", "empty item"},
    {",", "empty item"},
    {"auto,\x7f", "'auto,\\x7f'"},
};

static void test_omp(void)
{
    const char *forms = "auto, adaptive, off, or a thread count 1-65536, optionally followed by ,force "
                        "and/or ,bind";
    for (size_t i = 0; i < sizeof omp_valid / sizeof omp_valid[0]; i++) {
        ng_omp_guard g = {NG_OMP_OFF, 99, 7, 7}, h = {NG_OMP_OFF, 1, 1, 1};
        char err[512] = "", buf[32];
        const char *in = omp_valid[i].in ? omp_valid[i].in : "(NULL)";
        int rc = ng_omp_guard_parse(omp_valid[i].in, &g, err, sizeof err);
        ok(rc == 0 && g.mode == omp_valid[i].mode && g.force == omp_valid[i].force &&
               g.bind == omp_valid[i].bind &&
               (g.mode != NG_OMP_FIXED || g.nthreads == omp_valid[i].n),
           "--omp-guard '%s' -> mode %d n %u force %d (%s)", in, g.mode, g.nthreads, g.force, err);
        int n = ngi_omp_guard_format(&g, buf, sizeof buf);
        ok(n == (int)strlen(omp_valid[i].canon) && strcmp(buf, omp_valid[i].canon) == 0,
           "--omp-guard '%s' formats as '%s' (got '%s')", in, omp_valid[i].canon, buf);
        ok(ng_omp_guard_parse(buf, &h, err, sizeof err) == 0 && h.mode == g.mode &&
               h.force == g.force && h.bind == g.bind &&
               (g.mode != NG_OMP_FIXED || h.nthreads == g.nthreads),
           "--omp-guard '%s' round-trips", in);
    }
    for (size_t i = 0; i < sizeof omp_invalid / sizeof omp_invalid[0]; i++) {
        ng_omp_guard g = {NG_OMP_FIXED, 3, 0, 0};
        char err[512] = "";
        int rc = ng_omp_guard_parse(omp_invalid[i].in, &g, err, sizeof err);
        ok(rc == -1 && g.mode == NG_OMP_FIXED && g.nthreads == 3,
           "--omp-guard rejects '%s'", esc(omp_invalid[i].in));
        ok(well_formed(err, "--omp-guard: invalid value '", forms) &&
               strstr(err, omp_invalid[i].want),
           "--omp-guard message for '%s': %s", esc(omp_invalid[i].in), err);
    }
    char err[512];
    ng_omp_guard g;
    ng_omp_guard_parse("0", &g, err, sizeof err);
    ok(strstr(err, "--omp-guard: invalid value '0':") != NULL, "message quotes '0': %s", err);
    char buf[32];
    ng_omp_guard bad1 = {NG_OMP_OFF, 0, 1, 0}, bad2 = {NG_OMP_FIXED, 0, 0, 0},
                 bad3 = {NG_OMP_FIXED, NG_MAX_THREADS + 1, 0, 0}, fit = {NG_OMP_FIXED, 65536, 1, 0},
                 bad4 = {NG_OMP_OFF, 0, 0, 1};
    ok(ngi_omp_guard_format(&bad4, buf, sizeof buf) == -1, "format rejects off,bind");
    ok(ngi_omp_guard_format(&bad1, buf, sizeof buf) == -1, "format rejects off,force");
    ok(ngi_omp_guard_format(&bad2, buf, sizeof buf) == -1, "format rejects 0 threads");
    ok(ngi_omp_guard_format(&bad3, buf, sizeof buf) == -1, "format rejects 65537 threads");
    ok(ngi_omp_guard_format(&fit, buf, 11) == -1 && ngi_omp_guard_format(&fit, buf, 12) == 11,
       "format 65536,force needs 12 bytes");
}

/* Deterministic fuzz: random strings from the grammar's alphabet and random
 * bytes. Each call must either succeed (and round-trip) or leave a one-line
 * message naming the option. */
static uint32_t rng = 12345;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static void test_fuzz(void)
{
    static const char *const tokens[] = {
        "local", "prefer", "interleave", "weighted", "none", "verbose", "quiet", "strict",
        "help", "smt", "cpuless", "all", ":", ",", "-", "0", "3", "4095", "4096", "force",
        "auto", "off", "8", "65536", "x", " ", "\n", "\xff", "",
    };
    unsigned bad_policy = 0, bad_omp = 0, okp = 0, oko = 0, roundtrip_fail = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char in[256] = "";
        size_t pos = 0;
        int ntok = (int)(next() % 8);
        for (int t = 0; t < ntok; t++) {
            if (next() % 4 == 0) {
                if (pos + 1 < sizeof in)
                    in[pos++] = (char)(1 + next() % 255);
            } else {
                const char *tok = tokens[next() % (sizeof tokens / sizeof tokens[0])];
                size_t l = strlen(tok);
                if (pos + l < sizeof in) {
                    memcpy(in + pos, tok, l);
                    pos += l;
                }
            }
            in[pos] = '\0';
        }
        char err[512], buf[512];
        ng_policy p, q;
        err[0] = '\0';
        if (ng_policy_parse(in, &p, err, sizeof err) == 0) {
            okp++;
            if (ngi_policy_format(&p, buf, sizeof buf) < 0 ||
                ng_policy_parse(buf, &q, NULL, 0) != 0 || memcmp(&p, &q, sizeof p) != 0)
                roundtrip_fail++;
        } else if (strncmp(err, "--numa-policy: invalid value '", 30) != 0 ||
                   strchr(err, '\n') || !strstr(err, "expected")) {
            if (bad_policy++ < 3)
                tap_diag("bad policy message for input of %zu bytes: %s", pos, err);
        }
        ng_omp_guard g, h;
        err[0] = '\0';
        if (ng_omp_guard_parse(in, &g, err, sizeof err) == 0) {
            oko++;
            if (ngi_omp_guard_format(&g, buf, sizeof buf) < 0 ||
                ng_omp_guard_parse(buf, &h, NULL, 0) != 0 || h.mode != g.mode ||
                h.force != g.force)
                roundtrip_fail++;
        } else if (strncmp(err, "--omp-guard: invalid value '", 28) != 0 ||
                   strchr(err, '\n') || !strstr(err, "expected")) {
            bad_omp++;
        }
    }
    tap_diag("fuzz: %u policies and %u guards accepted of 20000", okp, oko);
    ok(bad_policy == 0 && bad_omp == 0, "fuzz: every rejection is one well-formed line");
    ok(roundtrip_fail == 0, "fuzz: every accepted value round-trips");
    ok(okp > 50, "fuzz reached valid policies (%u)", okp);
}

static void test_help(void)
{
    const char *h = ng_policy_help();
    static const char *const words[] = {
        "--numa-policy", "local", "prefer", "interleave[:NODES]", "weighted[:NODES]", "none",
        "verbose", "quiet", "strict", "help", "smt", "cpuless", "--omp-guard", "force",
        "off", "65536", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "0-3,8",
    };
    int all = h != NULL;
    for (size_t i = 0; all && i < sizeof words / sizeof words[0]; i++)
        if (!strstr(h, words[i])) {
            tap_diag("help lacks '%s'", words[i]);
            all = 0;
        }
    ok(all, "help text names every policy, modifier, omp-guard form and variable");
    ok(h && h[strlen(h) - 1] == '\n', "help text ends with a newline");
}

/* The tables behind the options: every kind named once and found by its
 * name; the short usage, the help and the messages' valid forms drawn from
 * the kind table; every thread variable once in the help. */
static void test_tables(void)
{
    for (int k = 0; k < NG_POLICY_KIND_COUNT; k++) {
        const char *name = ng_policy_kind_name((ng_policy_kind)k);
        ok(ng_policy_kind_from_name(name, strlen(name)) == k, "kind %d '%s' found by its name", k,
           name);
        for (int j = 0; j < k; j++)
            ok(strcmp(name, ng_policy_kind_name((ng_policy_kind)j)) != 0,
               "kinds %d and %d have different names", j, k);
        ok(strstr(ng_policy_help(), name) != NULL, "help names '%s'", name);
    }
    ok(ng_policy_kind_from_name("loc", 3) == -1 && ng_policy_kind_from_name("locally", 7) == -1,
       "a prefix or a longer word is no kind");
    ok(strcmp(ng_policy_kind_name(NG_POLICY_KIND_COUNT), "?") == 0, "the count is no kind");
    char usage[512];
    ok(ng_policy_usage(usage, sizeof usage) > 0 &&
       strcmp(usage, "local (default), prefer, interleave[:NODES], weighted[:NODES], none; "
                     "modifiers verbose, quiet, strict, smt, cpuless, wide") == 0,
       "usage from the table: %s", usage);
    ok(ng_policy_usage(usage, 16) == -1, "usage that does not fit: -1");
    char err[512];
    ng_policy parsed;
    ok(ng_policy_parse("bogus", &parsed, err, sizeof err) < 0 &&
       strstr(err, "expected local|prefer|interleave[:NODES]|weighted[:NODES]|none with "
                   "optional modifiers verbose,quiet,strict,help,smt,cpuless") != NULL,
       "valid forms from the tables: %s", err);
    ok(ng_policy_parse("local:0", &parsed, err, sizeof err) < 0 &&
       strstr(err, "only interleave and weighted take a node list") != NULL,
       "kinds taking NODES from the table: %s", err);
    const char *help = ng_policy_help();
    static const char *const vars[] = {"OMP_NUM_THREADS", "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *at = strstr(help, vars[i]);
        ok(at && !strstr(at + 1, vars[i]), "help names %s once", vars[i]);
    }
    int longest = 0;
    for (const char *l = help; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        int n = (int)strcspn(l, "\n");
        longest = n > longest ? n : longest;
    }
    ok(longest <= 80, "every help line fits a terminal (%d columns)", longest);
    ok(ng_policy_help() == help, "the help is built once");
}

int main(void)
{
    test_tables();
    test_valid();
    test_invalid();
    test_format_rejects();
    test_long_input();
    test_omp();
    test_fuzz();
    test_help();
    return tap_done();
}
