/* Tests for lib/base/hostlist.c: Slurm hostlist expressions as gres.conf uses
 * them (NodeName= membership, File= expansion order). Expected names are
 * what Slurm 22.05's `scontrol show hostnames EXPR` prints (checked here). */
#include "private/hostlist.h"
#include "tap.h"

#include <string.h>

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
}

int main(void)
{
    test_expand();
    test_refused();
    test_member();
    return tap_done();
}
