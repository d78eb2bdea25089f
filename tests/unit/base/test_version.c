/* The run-time version (lib/base/version.c) against the header's. */
#include "numaguard.h"
#include "tap.h"

#include <string.h>

int main(void)
{
    ok(ng_version() == NUMAGUARD_VERSION_NUMBER, "ng_version() = NUMAGUARD_VERSION_NUMBER (0x%06x)",
       ng_version());
    ok(strcmp(ng_version_string(), NUMAGUARD_VERSION) == 0, "ng_version_string() = \"%s\"",
       ng_version_string());
    unsigned v = ng_version();
    char text[32];
    snprintf(text, sizeof text, "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
    ok(strcmp(text, ng_version_string()) == 0, "number and text agree (%s)", text);
    return tap_done();
}
