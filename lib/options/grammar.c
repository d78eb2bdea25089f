/* What the option parsers share: the one rejection line. Every bad value
 * of every option reads "<option>: invalid value '<value>': <why>; <forms>",
 * the value escaped and shortened (NGI_SHOW_MAX) so a 1024-byte value is
 * still one readable line that ends with the valid forms. */
#include "private/options.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

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

/* Optimal string alignment distance (Damerau-Levenshtein without repeated
 * edits of one substring) over at most 31 bytes: option words are short. */
static unsigned osa(const char *a, size_t n, const char *b, size_t m)
{
    unsigned d[32][32];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            unsigned cost = a[i - 1] != b[j - 1];
            unsigned v = d[i - 1][j] + 1;
            v = d[i][j - 1] + 1 < v ? d[i][j - 1] + 1 : v;
            v = d[i - 1][j - 1] + cost < v ? d[i - 1][j - 1] + cost : v;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

unsigned ngi_option_nearness(const char *word, size_t len, const char *name)
{
    size_t m = strlen(name);
    char low[32];
    if (!word || len == 0 || len > 31 || m > 31)
        return UINT_MAX;
    for (size_t i = 0; i < len; i++) /* "LOCAL" is near local */
        low[i] = word[i] >= 'A' && word[i] <= 'Z' ? (char)(word[i] - 'A' + 'a') : word[i];
    if (len >= 3 && len < m && strncmp(low, name, len) == 0)
        return 0;
    unsigned d = osa(low, len, name, m);
    return d <= (len <= 4 ? 1u : 2u) ? d : UINT_MAX;
}
