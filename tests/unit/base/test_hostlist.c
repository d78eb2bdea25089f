/* Tests for lib/base/hostlist.c: Slurm hostlist expressions as gres.conf uses
 * them (NodeName= membership, File= expansion order). Expected names are
 * what Slurm 22.05's `scontrol show hostnames EXPR` prints (checked here). */
#include "private/hostlist.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct collect {
    char text[1024];
    unsigned n, stop_after;
} collect;

static int add(const char *name, void *ctx)
{
    collect *c = ctx;
    if (c->stop_after && c->n == c->stop_after)
        return 1;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof c->text - used, "%s%s", c->n ? " " : "", name);
    c->n++;
    return 0;
}

static void expands(const char *expr, const char *want)
{
    collect c = {"", 0, 0};
    char err[256] = "";
    int rc = ngi_hostlist_foreach(expr, 0, add, &c, err, sizeof err);
    if (!ok(rc == 0 && !strcmp(c.text, want), "'%s' expands to '%s'", expr, want))
        tap_diag("rc %d got '%s' err '%s'", rc, c.text, err);
}

static void refused(const char *expr, unsigned long max_range, const char *msg)
{
    collect c = {"", 0, 0};
    char err[256] = "";
    int rc = ngi_hostlist_foreach(expr, max_range, add, &c, err, sizeof err);
    char err2[256] = "";
    int rc2 = ngi_hostlist_contains(expr, "x1", err2, sizeof err2);
    if (!ok(rc == -1 && c.n == 0 && strstr(err, msg) && (max_range || (rc2 == -1 && err2[0])),
            "'%s' is refused (%s), by expansion and by membership", expr, msg))
        tap_diag("rc %d/%d err '%s' / '%s' names '%s'", rc, rc2, err, err2, c.text);
}

static void member(const char *expr, const char *name, int want)
{
    char err[256] = "";
    int rc = ngi_hostlist_contains(expr, name, err, sizeof err);
    if (!ok(rc == want, "'%s' %s '%s'", expr, want ? "names" : "does not name", name))
        tap_diag("rc %d err '%s'", rc, err);
}

static void test_expand(void)
{
    expands("ng1", "ng1");
    expands("ng[1-2]", "ng1 ng2");
    expands("other[01-04]", "other01 other02 other03 other04");
    expands("n[08-11]", "n08 n09 n10 n11");
    expands("n[8-11]", "n8 n9 n10 n11");
    expands("n[098-101]", "n098 n099 n100 n101");
    expands("/dev/nvidia[7,6,5,4,3,2,1,0]",
            "/dev/nvidia7 /dev/nvidia6 /dev/nvidia5 /dev/nvidia4 /dev/nvidia3 /dev/nvidia2 "
            "/dev/nvidia1 /dev/nvidia0");
    expands("a[3,1-2],b,c[0]", "a3 a1 a2 b c0");
    expands("n[2,1,2],n[1-3]", "n2 n1 n2 n1 n2 n3");
    expands("r[0-1]n[1-2]", "r0n1 r0n2 r1n1 r1n2");
    expands("/dev/nvidia[0-1]", "/dev/nvidia0 /dev/nvidia1");
    collect c = {"", 0, 2};
    char err[64];
    ok(ngi_hostlist_foreach("n[1-100000000]", 0, add, &c, err, sizeof err) == 0 &&
           !strcmp(c.text, "n1 n2"),
       "the callback stops a huge expansion early (Count= truncation)");
}

static void test_refused(void)
{
    refused("", 0, "empty");
    refused("n[3-1]", 0, "reversed");
    refused("n[1-", 0, "missing ']'");
    refused("n1]", 0, "unbalanced ']'");
    refused("n[]", 0, "empty []");
    refused("a,,b", 0, "empty name");
    refused("a,", 0, "empty name");
    refused("n[a-b]", 0, "expected a number");
    refused("n[1-x]", 0, "after '-'");
    refused("n[1;2]", 0, "unexpected ';'");
    refused("n[1,]", 0, "empty range");
    refused("n[[1]]", 0, "'[' inside []");
    refused("n[1234567890123456789]", 0, "at most 18 digits");
    refused("a[1]b[1]c[1]d[1]e[1]", 0, "more than 4");
    refused("/dev/nvidia[0-999]", 64, "range larger than 64");
    refused("n[1-2]-ib", 0, "text after the last ']'");
    refused("/dev/x[08-10]y", 0, "text after the last ']'");
    refused("a[1-2]b[1-2]c", 0, "text after the last ']'");
}

static void test_member(void)
{
    member("ng1", "ng1", 1);
    member("ng1", "ng10", 0);
    member("ng1", "NG1", 0);
    member("ng[1-2]", "ng2", 1);
    member("ng[1-2]", "ng3", 0);
    member("ng[1-2]", "ng", 0);
    member("other[01-04],ng2", "ng2", 1);
    member("other[01-04],ng2", "ng1", 0);
    member("other[01-04]", "other1", 0);
    member("other[01-04]", "other04", 1);
    member("other[01-04]", "other004", 0);
    member("n[8-11]", "n08", 0);
    member("n[8-11]", "n10", 1);
    member("n[098-101]", "n100", 1);
    member("n[098-101]", "n99", 0);
    member("n[1-2]", "n12", 0);
    member("n[1-12]", "n12", 1);
    member("r[0-1]n[1-2]", "r1n2", 1);
    member("r[0-1]n[1-2]", "r2n1", 0);
    member("gpu[000001-999999]", "gpu123456", 1);
    member("gpu[000001-999999]", "gpu0123456", 0);
    member("a,b,c", "c", 1);
    /* Digits between brackets and names with several digits. */
    member("n[1-2]0[3-4]", "n203", 1);
    member("n[1-2]0[3-4]", "n213", 0);
    member("n[1-12][0-9]", "n119", 1);
    member("n[1-12][0-9]", "n1", 0);
    member("gpu[0000,0002-0099]", "gpu0001", 0);
    member("gpu[0000,0002-0099]", "gpu0042", 1);
    member("gpu00[01]", "gpu0001", 1);
    member("node[0,0,0][0,0][9]", "node009", 1);
    member("node[0,0,0][0,0][9]", "node0000", 0);
    member("rack[01-12]n[001-128]", "rack07n064", 1);
    member("rack[01-12]n[001-128]", "rack7n064", 0);
}

/* The bound of issue 19's timing checks: tap_linear_ms() (tap.h). */
#define LINEAR_MS tap_linear_ms()

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Issue 19: one 4,090-byte gres.conf line, NodeName=node[0,0,...x674]
 * x 3 then [9], cost 45 s for node "node0000" (every range and digit
 * prefix of a bracket tried once per way through the brackets before it).
 * Matching is linear in the expression now: well under 10 ms. */
static void test_linear(void)
{
    size_t cap = 8192, used = 0;
    char *line = malloc(cap);
    if (!ok(line != NULL, "memory for the 4,090-byte line"))
        return;
    used += (size_t)snprintf(line + used, cap - used, "NodeName=node");
    for (int b = 0; b < 3; b++) {
        line[used++] = '[';
        for (int i = 0; i < 674; i++)
            used += (size_t)snprintf(line + used, cap - used, "%s0", i ? "," : "");
        line[used++] = ']';
    }
    used += (size_t)snprintf(line + used, cap - used, "[9] Name=gpu File=/dev/nvidia0");
    ok(used == 4090, "the gres.conf line is 4,090 bytes (%zu)", used);
    /* The NodeName= value, as gres_conf.c hands it over. */
    char *expr = line + strlen("NodeName=");
    expr[strcspn(expr, " ")] = '\0';
    char err[256] = "";
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = ngi_hostlist_contains(expr, "node0000", err, sizeof err);
    int rc2 = ngi_hostlist_contains(expr, "node0009", err, sizeof err);
    double ms = ms_since(&t0);
    ok(rc == 0 && rc2 == 1, "the line names node0009, not node0000");
    ok(ngi_hostlist_contains(expr, "node009", err, sizeof err) == 0 &&
           ngi_hostlist_contains(expr, "node00009", err, sizeof err) == 0,
       "nor node009 nor node00009");
    if (!ok(ms < LINEAR_MS, "two lookups in the 4,090-byte line take %.3f ms (< %.0f ms)", ms, LINEAR_MS))
        tap_diag("matching must be linear in the expression's size");
    else
        tap_diag("issue 19 line: 2 lookups in %.3f ms", ms);
    free(line);
}

int main(void)
{
    test_expand();
    test_refused();
    test_member();
    test_linear();
    return tap_done();
}
