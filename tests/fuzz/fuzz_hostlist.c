/* libFuzzer target: Slurm hostlist matching and expansion (lib/base/
 * hostlist.c), what gres.conf NodeName= and File= go through in
 * slurmstepd for every step.
 *
 * Input: the node name, a newline, the expression ("gpu0042\ngpu[0000-0099]").
 * Invariants:
 *  - ngi_hostlist_contains answers 1, 0 or -1; -1 (and a refused
 *    expansion) with one printable line: the expression is a file's bytes;
 *  - membership agrees with expansion: every name the expression expands
 *    to (the first 64 and the last of up to 512) is a member, and when the whole expansion was
 *    seen the node name is a member exactly when it is one of them;
 *  - bounded work: run with a per-input time limit (tests/fuzz/
 *    timeouts.tsv: 1 s here, run-fuzzers.sh passes it as -timeout) that
 *    the old recursive matcher broke on a 4 KiB line (45 s for node0000 on
 *    node[0,0,...x674][...][...][9]; corpus seed00 is that line).
 * Node names in the corpus have several digits (node0000, gpu0042,
 * rack07n064), as on production clusters. */
#include "fuzz_common.h"
#include "private/hostlist.h"

#define FZ_HL_MAX_NAMES 512

typedef struct names {
    char *list[FZ_HL_MAX_NAMES];
    unsigned n;
    int truncated;
} names;

static int collect(const char *name, void *ctx)
{
    names *c = ctx;
    if (c->n == FZ_HL_MAX_NAMES) {
        c->truncated = 1;
        return 1;   /* stop: the expansion is not complete */
    }
    c->list[c->n] = strdup(name);
    FZ_ASSERT(c->list[c->n] != NULL, "out of memory");
    c->n++;
    return 0;
}

static void names_free(names *c)
{
    for (unsigned i = 0; i < c->n; i++)
        free(c->list[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fz_cstr(data, size);
    char *nl = strchr(in, '\n');
    const char *node = in, *expr = nl ? nl + 1 : "";
    if (nl)
        *nl = '\0';
    else
        node = "node0000";
    char err[512] = "", err2[512] = "";
    int m = ngi_hostlist_contains(expr, node, err, sizeof err);
    FZ_ASSERT(m == 1 || m == 0 || m == -1, "contains: %d", m);
    names c = {{NULL}, 0, 0};
    int e = ngi_hostlist_foreach(expr, 0, collect, &c, err2, sizeof err2);
    FZ_ASSERT(e == 0 || e == -1, "foreach: %d", e);
    FZ_ASSERT((m == -1) == (e == -1), "contains %d but foreach %d ('%s' / '%s')", m, e, err,
              err2);
    if (m == -1) {
        fz_check_printable("ngi_hostlist_contains", err, sizeof err);
        fz_check_printable("ngi_hostlist_foreach", err2, sizeof err2);
        FZ_ASSERT(c.n == 0, "a refused expression expanded to %u names", c.n);
    } else {
        int listed = 0;
        for (unsigned i = 0; i < c.n; i++) {
            char why[256] = "";
            /* The first 64 names and the last one: enough to catch a
             * disagreement, few enough to keep the executions fast. */
            if (i < 64 || i + 1 == c.n)
                FZ_ASSERT(ngi_hostlist_contains(expr, c.list[i], why, sizeof why) == 1,
                          "'%s' expands to '%s' but does not name it", expr, c.list[i]);
            listed |= strcmp(c.list[i], node) == 0;
        }
        if (!c.truncated)
            FZ_ASSERT(m == listed, "'%s' names '%s': %d, its expansion %s it", expr, node, m,
                      listed ? "has" : "lacks");
        else if (listed)
            FZ_ASSERT(m == 1, "'%s' expands to '%s' but does not name it", expr, node);
    }
    names_free(&c);
    free(in);
    return 0;
}
