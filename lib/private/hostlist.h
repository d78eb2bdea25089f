/* Slurm hostlist expressions (lib/base/): "node[01-04,7]", "a,b[0-1]",
 * "rack[0-1]n[0-3]". Used for gres.conf NodeName= (which
 * records name this node) and File= (device files in Slurm's order).
 * Internal to lib/ (not installed). */
#ifndef NGI_HOSTLIST_H
#define NGI_HOSTLIST_H

#include <stddef.h>

/** Longest name an expression may expand to (device paths, node names). */
#define NGI_HOSTLIST_NAME_MAX 4096

/** Called once per expanded name, in the order Slurm's hostlist_shift()
 *  returns them (as written: no sorting, no de-duplication). Return 0 to
 *  go on, 1 to stop early (not an error), -1 to fail (set the error). */
typedef int (*ng_hostlist_fn)(const char *name, void *ctx);

/** Expand @p expr: a comma list of items, each a name with zero or more
 *  [ranges] ("lo" or "lo-hi", comma separated; the width of "lo" pads
 *  with zeros as Slurm does: [08-10] -> 08 09 10). A range of more than
 *  @p max_range numbers is refused (0 = no limit). Returns 0, or -1 with
 *  a one-line message naming the expression (also when @p fn fails). */
int ngi_hostlist_foreach(const char *expr, unsigned long max_range, ng_hostlist_fn fn,
                        void *ctx, char *err, size_t errlen);

/** Does @p expr name @p name (exact, case-sensitive, as slurmd's
 *  hostlist_find)? 1 yes, 0 no, -1 malformed expression (err says why).
 *  Matches without expanding, so node[000001-999999] costs nothing. */
int ngi_hostlist_contains(const char *expr, const char *name, char *err, size_t errlen);

#endif
