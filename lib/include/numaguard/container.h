/**
 * @file numaguard/container.h
 * @brief A task that starts a container: which runtime its command is,
 *        whether its arguments bind the governor's directory at the same
 *        path and keep numaguard's variables, and the one line that says
 *        what to add. Implemented in lib/task/container.c; the rules per
 *        runtime are in docs/containers.md.
 */
#ifndef NUMAGUARD_CONTAINER_H
#define NUMAGUARD_CONTAINER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a task's argv says about the container it starts. */
typedef struct ng_container_view {
    const char *runtime;   /**< "ch-run", "apptainer", "singularity", "podman",
                                "bwrap", "enroot"; NULL: argv[0] is none of them */
    int binds_governor;    /**< the governor's directory (or one above it) is
                                bound at the same path inside */
    int clears_env;        /**< the runtime starts the program without the
                                task's environment (bwrap --clearenv, ch-run
                                --unset-env='*', apptainer --cleanenv, podman
                                without --env-host) */
    int env_channel;       /**< ... but its arguments carry numaguard's
                                variables in (podman --env-host or -e NAME,
                                ch-run --set-env, bwrap --setenv), or the
                                runtime takes them from APPTAINERENV_* */
} ng_container_view;

/** Read @p argv (@p argc entries) of the task's command. @p governor is the
 *  governor library's path (its directory is what must be bound); NULL
 *  when --omp-guard is not adaptive. Returns 1 when argv[0] is a
 *  container runtime (@p v filled), else 0. */
int ng_container_inspect(int argc, char *const argv[], const char *governor,
                         ng_container_view *v);

/** The line a task that starts a container gets (once per node), without
 *  "numaguard: " nor a newline: the exact bind and env flags that runtime
 *  needs. @p governor as above. "" when nothing is missing. */
void ng_container_hint(const ng_container_view *v, const char *governor, char *buf,
                       size_t len);

/** The variable a runtime passes into the container as @p name even
 *  when it cleans the environment (Apptainer's APPTAINERENV_NAME,
 *  Singularity's SINGULARITYENV_NAME), for the variables numaguard sets
 *  (NUMAGUARD_*, the thread variables, LD_PRELOAD). 0 with @p out set, or
 *  -1 when the runtime has no such channel or @p name is not numaguard's. */
int ng_container_channel_name(const ng_container_view *v, const char *name, char *out,
                              size_t len);

#ifdef __cplusplus
}
#endif

#endif
