/**
 * @file numaguard/common.h
 * @brief Limits, the runtime version, CPU/node lists and text escaping:
 *        what every other numaguard header builds on.
 *
 * Include <numaguard.h> rather than this file; it is split out only to
 * keep each topic short. Conventions (errors, ownership, threads) are in
 * numaguard.h.
 */
#ifndef NUMAGUARD_COMMON_H
#define NUMAGUARD_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <hwloc.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest option value or plugstack argument accepted, in bytes. */
#define NG_MAX_ARG 1024
/** Longest PCI bus id string "dddd:bb:dd.f" plus NUL. */
#define NG_BUSID_LEN 16
/** Largest NUMA node OS index a policy may name. */
#define NG_MAX_NUMA_OS_INDEX 4095
/** Largest PU OS index a topology may have (Linux NR_CPUS is at most 8192). */
#define NG_MAX_PU_OS_INDEX ((1 << 20) - 1)
/** Largest explicit thread count for --omp-guard=N. */
#define NG_MAX_THREADS 65536
/** Most GPUs a node may have (MI300A CPX has 24; leave room). */
#define NG_MAX_GPUS 256

/** @name Version of the library linked in (at run time)                */
/** @{ */

/** The library's release as NUMAGUARD_VERSION_NUM(major, minor, patch):
 *  compare with NUMAGUARD_VERSION_NUMBER (the header's) to detect a header
 *  and library from different releases. Thread-safe, never fails. */
unsigned ng_version(void);

/** The library's release as text ("0.1.0"); static storage. Thread-safe. */
const char *ng_version_string(void);

/** @} */

/** @name CPU and NUMA node lists                                         */
/** @{ */

/** Write @p set as a Linux cpulist ("0-23,96-119"; "" when empty or NULL).
 *  Returns the length, or -1 when it does not fit in @p len (buf is then
 *  not a usable list). Thread-safe. */
int ng_list_format(hwloc_const_bitmap_t set, char *buf, size_t len);

/** Parse a Linux cpulist/nodelist ("0-3,8"; at most NG_MAX_ARG bytes, no
 *  spaces) into @p set, refusing indices above @p max_index. Returns 0, or
 *  -1 with one line in @p err naming the bad piece (@p set is then
 *  undefined). Thread-safe; the caller owns @p set. */
int ng_list_parse(const char *text, hwloc_bitmap_t set, unsigned max_index,
                  char *err, size_t errlen);

/** The calling thread's CPU affinity (any number of CPUs) into @p set
 *  (owned by the caller). Returns 0, or -1 with errno set. */
int ng_current_cpus(hwloc_bitmap_t set);

/** @} */

/** @name Numbers a person or a launcher wrote                             */
/** @{ */

/** A decimal in [0, @p max] as the CLI's options and the launchers'
 *  variables are read: digits only (no sign, space or junk), at most 10;
 *  the value, or -1 when @p s is not one. Thread-safe. */
long ng_parse_uint(const char *s, unsigned long max);

/** @} */

/** @name Text for a person                                               */
/** @{ */

/** Copy @p s into @p out for a terminal: bytes outside 0x20..0x7e and the
 *  backslash become \\xNN (no escape sequences, no newlines); truncated to
 *  fit (never inside an escape). Returns the length written. Use it on
 *  every string that came from /proc, the environment or a file before
 *  printing it. Thread-safe. */
size_t ng_text_escape(const char *s, char *out, size_t len);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_COMMON_H */
