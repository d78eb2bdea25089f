/* What the option parsers share: the one rejection line. Every bad value
 * of every option reads "<option>: invalid value '<value>': <why>; <forms>",
 * the value escaped and shortened (NGI_SHOW_MAX) so a 1024-byte value is
 * still one readable line that ends with the valid forms. */
#include "private/options.h"

#include <stdio.h>

int ngi_option_reject(char *err, size_t errlen, const char *opt, const char *forms,
                      const char *value, size_t vlen, const char *why,
                      const char *item, size_t ilen)
{
    char v[NGI_SHOW_MAX * 4 + 8], it[NGI_SHOW_MAX * 4 + 8] = "";
    ngi_show_bytes(value, vlen, v, sizeof v);
    if (item)
        ngi_show_bytes(item, ilen, it, sizeof it);
    char reason[sizeof it + 64];
    snprintf(reason, sizeof reason, why, it);
    return ngi_fail(err, errlen, "%s: invalid value '%s': %s; %s", opt, v, reason, forms);
}
