/* The options module (lib/options/): what the parsers share and the
 * tables behind the options. Private to the library (ngi_* names). */
#ifndef NGI_OPTIONS_H
#define NGI_OPTIONS_H

#include "base.h"

/** Canonical text of a parsed value (the parser's inverse): the length, or
 *  -1 when it does not fit or is not a value the parser could produce. */
int ngi_policy_format(const ng_policy *pol, char *buf, size_t len);
int ngi_omp_guard_format(const ng_omp_guard *g, char *buf, size_t len);
int ngi_net_affinity_format(const ng_net_affinity *a, char *buf, size_t len);

/** Default variables capped by --omp-guard, NULL-terminated. */
extern const char *const ngi_default_thread_vars[];
/** 1 if s[0..n) is a valid variable name [A-Z_][A-Z0-9_]* of 1..63 bytes. */
int ngi_thread_var_name_ok(const char *s, size_t n);

#endif
