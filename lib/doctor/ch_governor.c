/* The OpenMP governor (--omp-guard=adaptive, libnumaguard-omp.so): when
 * plugstack.conf's default_omp_guard= is adaptive, or the library is
 * installed, it is judged as the plugin will judge it before adding it to
 * a task's LD_PRELOAD (ngi_omp_preload_trusted: an absolute path, a root-
 * owned regular file nobody else may write, in root-owned directories),
 * then loaded into a short-lived child with libgomp, which runs one
 * parallel region through it (bounded like every tool).
 *
 * Missing or refused is a WARN, not a FAIL: the plugin then warns in each
 * such task and runs it without the governor (its OpenMP teams are not
 * shared among the task's cores), placement itself is unchanged, so a
 * health check does not drain the node for it. A library that loads but
 * crashes or hangs the OpenMP process is a FAIL: every task given it
 * would. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* default_omp_guard= of the plugin's arguments is adaptive. */
static int configured(const ngi_doctor_ctx *x)
{
    ng_omp_guard g;
    return x->pconf_ok && x->pconf.have_default_omp &&
           ng_omp_guard_parse(x->pconf.default_omp, &g, NULL, 0) == 0 &&
           g.mode == NG_OMP_ADAPTIVE;
}

/* Why the governor is not used: absent, refused by the plugin's rule, or
 * not in effect once preloaded. What the plugin will do, as a WARN. */
enum { GOV_ABSENT, GOV_REFUSED, GOV_INERT };

static void refused(ngi_doctor_ctx *x, ng_doctor_check *c, const char *path, const char *why,
                    int kind, int conf)
{
    static const char *const said[] = {"is not installed", "is refused by the plugin's rule",
                                       "is not in effect when preloaded"};
    char fix[PATH_MAX + 200];
    if (kind == GOV_REFUSED)
        snprintf(fix, sizeof fix, "install it as root's: chown root:root %s; chmod 644 %s (and "
                 "no directory above it writable by others), or make install", path, path);
    else if (kind == GOV_INERT)
        snprintf(fix, sizeof fix, "reinstall the libnumaguard-omp.so built with this numaguard "
                 "at %s (make install)", path);
    else
        snprintf(fix, sizeof fix, "install it (make install puts it at %s)%s", path,
                 conf ? ", or drop default_omp_guard=adaptive from plugstack.conf" : "");
    ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                       conf ? "every task of the default --omp-guard=adaptive warns and runs "
                              "without the governor: its OpenMP teams are not shared among the "
                              "task's cores"
                            : "a job asking --omp-guard=adaptive warns and runs without it",
                       fix, "the governor %s %s: %s%s", path, said[kind], why,
                       conf ? " (plugstack.conf: default_omp_guard=adaptive)" : "");
}

void ngi_check_governor(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "plugin", "plugin.governor");
    const char *path = x->omp_preload;
    char why[256], what[200];
    struct stat st;
    int conf = configured(x), present = lstat(path, &st) == 0;
    ngi_doctor_fact(c, "default_omp_guard", "%s",
                    x->pconf_ok && x->pconf.have_default_omp ? x->pconf.default_omp : "(none)");
    ngi_doctor_fact(c, "library", "%s", path);
    if (!conf && !present) {
        ngi_doctor_end(x->r, c, "default_omp_guard is not adaptive and no governor is installed "
                       "at %s: nothing to check", path);
        return;
    }
    if (ngi_omp_preload_trusted(path, why, sizeof why) < 0) {
        refused(x, c, path, why, present ? GOV_REFUSED : GOV_ABSENT, conf);
        ngi_doctor_end(x->r, c, "-");
        return;
    }
    const ngi_cmd *res = ngi_doctor_tool(x, NGI_TOOL_GOVERNOR);
    const char *out = res && res->out ? res->out : "";
    /* The loader's own complaint, if any, is the first line; else the
     * probe's. */
    snprintf(what, sizeof what, "%.*s", (int)strcspn(out, "\n"), out);
    if (res && !res->timed_out && res->exit_status == 3)
        refused(x, c, path, what, GOV_INERT, conf);
    else if (res && !res->timed_out && res->exit_status == 4)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "OpenMP programs that bring their own runtime still work with it; "
                           "it was not tried here",
                           "install libgomp (libgomp1) to have the governor tried",
                           "the governor %s loads, but %s", path, what);
    else if (!ngi_doctor_tool_ok(x, NGI_TOOL_GOVERNOR)) {
        char how[200];
        ngi_doctor_tool_describe(x, NGI_TOOL_GOVERNOR, how, sizeof how);
        ngi_doctor_problem(x->r, c, res ? NG_CHECK_FAIL : NG_CHECK_WARN,
                           "every task given the governor (--omp-guard=adaptive) would fail "
                           "the same way in its first OpenMP region",
                           "reinstall the libnumaguard-omp.so built with this numaguard for "
                           "this system (make install), or drop default_omp_guard=adaptive",
                           "the governor %s, loaded with libgomp into a test process: %s%s%s",
                           path, how, what[0] ? ": " : "", what);
    }
    ngi_doctor_end(x->r, c, "the governor %s is root's; preloaded with libgomp it %s", path, what);
}
