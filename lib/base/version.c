/* The library's release at run time (numaguard.h has the header's). */
#include "private/base.h"

unsigned ng_version(void)
{
    return NUMAGUARD_VERSION_NUMBER;
}

const char *ng_version_string(void)
{
    return NUMAGUARD_VERSION;
}
