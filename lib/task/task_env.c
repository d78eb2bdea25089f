/* A task's variables through the caller's env hooks: the network
 * variables of --net-affinity (the user's values kept unless force). */
#include "private/task.h"

#include <stdio.h>
#include <string.h>

int ngi_net_apply_env(const ng_net_env *env, unsigned n, const struct ng_env_ops *ops,
                     char *kept, size_t keptlen, char *err, size_t errlen)
{
    if (kept && keptlen)
        kept[0] = '\0';
    if (!ops || !ops->set)
        return n ? ngi_fail(err, errlen, "network variables: no way to set them") : 0;
    for (unsigned i = 0; env && i < n; i++) {
        const ng_net_env *e = &env[i];
        if (!e->overwrite && ops->is_set && ops->is_set(ops->ctx, e->name)) {
            size_t used = kept ? strnlen(kept, keptlen) : 0;
            if (kept && used + strlen(e->name) + 2 < keptlen)
                snprintf(kept + used, keptlen - used, "%s%s", used ? " " : "", e->name);
            continue;
        }
        if (ops->set(ops->ctx, e->name, e->value) != 0)
            return ngi_fail(err, errlen, "cannot set %s in the task environment", e->name);
    }
    return 0;
}
