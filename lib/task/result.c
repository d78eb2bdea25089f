/* What a task's apply reports: warnings joined into ng_apply_result. */
#include "private/task.h"

#include <stdio.h>
#include <string.h>

/* Append "; text" (or text) to the result's warning, bounded. */
void ngi_result_warn(ng_apply_result *res, const char *text)
{
    size_t used = strnlen(res->warning, sizeof res->warning);
    if (used == 0) {
        ngi_strlcpy(res->warning, text, sizeof res->warning);
        return;
    }
    if (used + 3 < sizeof res->warning)
        snprintf(res->warning + used, sizeof res->warning - used, "; %s", text);
}
