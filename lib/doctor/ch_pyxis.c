/* Where pyxis (NVIDIA's container plugin, spank_pyxis.so) sits relative to
 * numaguard in plugstack.conf, and what that order means
 * (docs/admin-guide.md, "Containers: pyxis and enroot"). Slurm calls the
 * plugins' task_init in plugstack order; pyxis's task_init imports the
 * image's environment into the task (overwriting) and then joins the
 * container's user and mount namespaces.
 *  - pyxis first (recommended): numaguard's task_init runs inside the
 *    container; the image's ENV is already there and is kept like a user's
 *    preset (replaced with --omp-guard=...,force); the governor is
 *    accepted by the device and inode recorded in user_init, before any
 *    namespace was joined (lib/task/preload.c), and loads when the
 *    library's directory is mounted into the container at the same path.
 *  - numaguard first: the governor is checked in the host, but the
 *    image's ENV overwrites numaguard's variables afterwards, even with
 *    ,force: a warning. */
#include "numaguard.h"
#include "private/doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PLUGSTACK_TEXT_MAX (256u << 10)

/* The first line (1-based, after includes) whose plugin file name starts
 * with @p prefix and ends in ".so"; 0 when none. */
static unsigned first_plugin(const char *text, const char *prefix)
{
    unsigned lineno = 0;
    for (const char *p = text; *p;) {
        char kind[16], path[PATH_MAX];
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[PATH_MAX + 64];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        lineno++;
        p += len + (nl != NULL);
        if (sscanf(line, " %15s %4095s", kind, path) != 2 || kind[0] == '#' ||
            (strcasecmp(kind, "required") && strcasecmp(kind, "optional")))
            continue;
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t n = strlen(base);
        if (!strncmp(base, prefix, strlen(prefix)) && n > 3 && !strcmp(base + n - 3, ".so"))
            return lineno;
    }
    return 0;
}

void ngi_check_pyxis(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "plugin", "plugin.pyxis");
    char why[256], limit[PATH_MAX + 96];
    char *text = NULL;
    if (!c)
        return;
    if (!x->ps_read || NGI_DOCTOR_READ(x->plugstack, PLUGSTACK_TEXT_MAX, &text, NULL, why,
                                       sizeof why) < 0 ||
        ngi_conf_includes(&text, x->plugstack, PLUGSTACK_TEXT_MAX, limit, sizeof limit) < 0) {
        free(text);
        ngi_doctor_end(x->r, c, "plugstack.conf not read: no container plugin to order");
        return;
    }
    unsigned pyxis = first_plugin(text, "spank_pyxis"), ng = first_plugin(text, "numaguard");
    free(text);
    if (pyxis)
        ngi_doctor_fact(c, "order", "pyxis at line %u, numaguard at line %u (of plugstack.conf "
                        "with its includes in place; 0: absent)", pyxis, ng);
    if (pyxis && ng && ng < pyxis)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "pyxis's task_init runs after numaguard's and loads the image's ENV "
                           "last: OMP_NUM_THREADS & co that the image sets replace numaguard's, "
                           "even with --omp-guard=...,force",
                           "list numaguard after spank_pyxis.so in plugstack.conf "
                           "(docs/admin-guide.md, \"Containers: pyxis and enroot\")",
                           "numaguard is listed before pyxis in plugstack.conf");
    if (!pyxis)
        ngi_doctor_end(x->r, c, "no pyxis in plugstack.conf: nothing to order");
    else if (!ng)
        ngi_doctor_end(x->r, c, "pyxis is listed, numaguard is not");
    else
        ngi_doctor_end(x->r, c, "numaguard after pyxis: its task_init runs inside the container, "
                       "the image's ENV counts as preset (kept unless ,force), the governor is "
                       "accepted by the identity checked before pyxis joined");
}
