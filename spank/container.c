/* In the task: a command that starts a container (ch-run, apptainer,
 * podman, bwrap, enroot; the rules are the library's, lib/task/container.c).
 * Before the apply: whether the governor may go into LD_PRELOAD (only
 * with its directory bound at the same path: without it glibc prints an
 * ld.so error for every process inside and the promise of "adaptive"
 * would be false). After it: the variables copied to the runtime's own
 * channel (APPTAINERENV_*), and local task 0's one line per node saying
 * what to add. The governor's identity is recorded in user_init, in the
 * host's namespaces, for a task that pyxis moves into a container's
 * before numaguard's task_init (lib/task/preload.c). */
#include "ng_spank.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static ng_file_id g_gov_id;

void ng_spank_governor_identify(const ng_spank_conf *conf)
{
    const char *path = ng_spank_omp_preload(conf);
    char why[200];
    /* A governor refused here is refused again in the task, with the reason. */
    ng_omp_preload_identify(path ? path : ng_omp_preload_path(), &g_gov_id, why, sizeof why);
}

const ng_file_id *ng_spank_governor_id(void)
{
    return &g_gov_id;
}

void ng_spank_container_view(spank_t sp, const ng_spank_conf *conf, const ng_step *step,
                             ng_spank_container *c)
{
    int argc = 0;
    char **argv = NULL;
    const char *path = ng_spank_omp_preload(conf);
    memset(c, 0, sizeof *c);
    c->governor = step->omp.mode == NG_OMP_ADAPTIVE ? (path ? path : ng_omp_preload_path()) : NULL;
    if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || !argv)
        return;
    if (!ng_container_inspect(argc, argv, c->governor, &c->view))
        return;
    if (c->governor && !c->view.binds_governor)
        snprintf(c->skip, sizeof c->skip, "the task starts a container (%s) without the "
                 "governor's directory bound at the same path", c->view.runtime);
}

/* Copy each variable numaguard set to the runtime's channel name. The
 * names are taken first: spank_setenv may move the array being read. */
static void copy_to_channel(spank_t sp, const ng_spank_container *c)
{
    char **env = NULL, names[64][128];
    unsigned n = 0;
    if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env)
        return;
    for (char **e = env; *e && n < 64; e++) {
        size_t len = strcspn(*e, "=");
        char chan[160];
        if (!(*e)[len] || len >= sizeof names[0])
            continue;
        memcpy(names[n], *e, len);
        names[n][len] = '\0';
        n += ng_container_channel_name(&c->view, names[n], chan, sizeof chan) == 0;
    }
    for (unsigned i = 0; i < n; i++) {
        char chan[160], val[4096];
        if (ng_container_channel_name(&c->view, names[i], chan, sizeof chan) == 0 &&
            spank_getenv(sp, names[i], val, sizeof val) == ESPANK_SUCCESS)
            spank_setenv(sp, chan, val, 1);
    }
}

void ng_spank_container_after(spank_t sp, const ng_spank_container *c, uint32_t local,
                              int quiet)
{
    char hint[1024], shown[4 * sizeof hint];
    if (!c->view.runtime)
        return;
    copy_to_channel(sp, c);
    if (local != 0 || quiet)
        return;
    ng_container_hint(&c->view, c->governor, hint, sizeof hint);
    if (!hint[0])
        return;
    ng_text_escape(hint, shown, sizeof shown);
    dprintf(2, "numaguard: %s\n", shown);
}
