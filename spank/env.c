/* The step's environment as SPANK gives it: the one way the plugin's files
 * read a job variable (the step env, not slurmd's), on the node side
 * (slurm_spank_user_init) and in the task (task.c). */
#include "ng_spank.h"

/* Copy of a job env variable (the step env, not slurmd's) or NULL. */
const char *ng_spank_job_env(spank_t sp, const char *name, char *buf, int len)
{
    if (spank_getenv(sp, name, buf, len) != ESPANK_SUCCESS)
        return NULL;
    return buf;
}
