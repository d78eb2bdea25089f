/* Internal helpers shared by lib/ files. Not installed. */
#ifndef NG_INTERNAL_H
#define NG_INTERNAL_H

#include "numaguard.h"
#include <stdarg.h>

#define NG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/** printf into err (bounded, always NUL-terminated when errlen > 0); returns -1. */
int ng_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Bounded string copy; returns 0, or -1 if truncated. */
int ng_strlcpy(char *dst, const char *src, size_t len);

/** Join fsroot and an absolute path into buf; -1 if too long. */
int ng_path(char *buf, size_t len, const char *fsroot, const char *abs_path);

/** Read a small text file (at most len-1 bytes) into buf; -1 on error. */
int ng_read_small_file(const char *path, char *buf, size_t len);

/** Normalise a PCI bus id ("4E:00.0", "0000:4e:00.0", "00000000:4E:00.0")
 *  to "dddd:bb:dd.f" lower case; -1 if malformed. */
int ng_busid_normalize(const char *in, char out[NG_BUSID_LEN]);

/** Bytes of a bad value shown in a message: one readable line even for a
 *  1024-byte value, still ending with the valid forms. */
#define NG_SHOW_MAX 64

/** Printable copy of s[0..n) for one-line messages: bytes outside
 *  0x20..0x7e, the quote and the backslash become \xNN (no terminal
 *  escapes, no newlines); at most 64 bytes, then "...". */
void ng_show_bytes(const char *s, size_t n, char *out, size_t len);

/** Flags of ng_escape_bytes: also escape the backslash / the quote. */
enum { NG_ESC_BACKSLASH = 1u << 0, NG_ESC_QUOTE = 1u << 1 };

/** s[0..n) as printable text (util.c holds the one rule): bytes outside
 *  0x20..0x7e, and per @p flags the backslash and the quote, become \xNN;
 *  stops before an escape that would not fit. Returns the length. */
size_t ng_escape_bytes(const char *s, size_t n, char *out, size_t len, unsigned flags);

/** Convert a uint64 node mask (policy) into an hwloc nodeset. */
void ng_nodemask_to_bitmap(const uint64_t *mask, unsigned words, hwloc_bitmap_t set);

/** I/O filters every numaguard topology uses: PCI bridges and devices hwloc
 *  finds important, and EVERY OS device: hwloc 2.9's "important" filter
 *  drops DRM nodes (card*, renderD*), the only trace of a GPU whose vendor
 *  has no runtime plugin. Returns 0 or -1. */
int ng_hwloc_set_io_filters(hwloc_topology_t hw);

/** Remove from hwloc-written XML (in place) every <info> line whose name
 *  says serial, UUID or asset tag (DMIProductUUID, DMIBoardSerial, disk
 *  and GPU serials): the topology cache is world-readable. Returns the new
 *  length, or (size_t)-1 if such an element is not on a line of its own
 *  (topocache.c). */
size_t ng_topocache_strip_identifiers(char *xml, size_t len);

/** The fsroot the topology was loaded with (NULL: "/"); topology.c. */
const char *ng_topology_fsroot(const ng_topology *topo);

/** Open @p path read-only with O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC; regular
 *  files only (EINVAL otherwise): for files other users may control. */
int ng_open_regular(const char *path);
/** Bounded read of a /proc or cgroup file through ng_open_regular (at most
 *  len-1 bytes, NUL added): the count, or -1 with errno. */
long ng_read_bounded(const char *path, char *buf, size_t len);
/** The same for fsroot/proc/PID/WHAT (pid <= 0: /proc/self; WHAT "" = the
 *  directory itself). */
long ng_read_pid_file(const char *fsroot, int pid, const char *what, char *buf, size_t len);

/* lib/cgroup.c: what a process's cgroups say (pid <= 0: the caller). */
/** Slurm job of a process: a "job_<digits>" component of a path in
 *  /proc/PID/cgroup. 0, or -1 when none. */
int ng_cgroup_job(const char *fsroot, int pid, char *id, size_t len);
/** The CPUs the process's cpuset cgroup allows (v1 cpuset hierarchy,
 *  else v2), under fsroot/sys/fs/cgroup. 0, or -1 when unknown. */
int ng_cgroup_cpus(const char *fsroot, int pid, hwloc_bitmap_t set);
/** The calling process's cgroup v2 CPU quota as whole CPUs: the smallest
 *  ceil(quota / period) of cpu.max in its v2 cgroup and its ancestors.
 *  Returns 1 and sets *cpus when a quota is set, 0 when none (cgroup v1,
 *  "max", unreadable). */
int ng_cgroup_cpu_quota(const char *fsroot, unsigned *cpus);

/** The GPUs AutoDetect=<kind> would find under fsroot, in that plugin's
 *  order, as device file paths under fsroot (gpumap.c; used by gresconf.c). */
int ng_gpumap_autodetect(const char *fsroot, const char *kind, ng_gres_order *out,
                         char *err, size_t errlen);

/** The NICs of a loaded topology (topo_nic.c), built once by
 *  ng_topology_load after its NUMA nodes and GPUs. */
typedef struct ng_nic_set ng_nic_set;
ng_nic_set *ng_nic_set_build(const ng_topology *topo);
void ng_nic_set_free(ng_nic_set *set);
/** The topology's NIC set (topology.c); NULL if none was built. */
const ng_nic_set *ng_topology_nic_set(const ng_topology *topo);

#endif
