/* The bottom layer (lib/base/): errors, bounded strings and files, escaping,
 * lists. Private to the library: not installed, not API (ngi_* names). */
#ifndef NGI_BASE_H
#define NGI_BASE_H

#include "numaguard.h"
#include <dirent.h>
#include <stdarg.h>

#define NGI_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- strings.c: errors, bounded copies, bus ids, escaping ---- */

/** printf into err (bounded, always NUL-terminated when errlen > 0); returns -1. */
int ngi_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Bounded string copy; returns 0, or -1 if truncated. */
int ngi_strlcpy(char *dst, const char *src, size_t len);

/** Normalise a PCI bus id ("4E:00.0", "0000:4e:00.0", "00000000:4E:00.0")
 *  to "dddd:bb:dd.f" lower case; -1 if malformed. */
int ngi_busid_normalize(const char *in, char out[NG_BUSID_LEN]);

/** Bytes of a bad value shown in a message: one readable line even for a
 *  1024-byte value, still ending with the valid forms. */
#define NGI_SHOW_MAX 64

/** Printable copy of s[0..n) for one-line messages: bytes outside
 *  0x20..0x7e, the quote and the backslash become \xNN (no terminal
 *  escapes, no newlines); at most 64 bytes, then "...". */
void ngi_show_bytes(const char *s, size_t n, char *out, size_t len);

/** Room for what ngi_show_bytes writes (NGI_SHOW_MAX bytes of 4
 *  characters at most, "...", the NUL). */
#define NGI_SHOW_LEN (NGI_SHOW_MAX * 4 + 8)

/** A buffer for ngi_show: one per value a message shows. */
typedef struct ngi_shown {
    char text[NGI_SHOW_LEN];
} ngi_shown;

/** NUL-terminated @p s as ngi_show_bytes shows it, into @p b; returns
 *  b->text (for a message's arguments: ngi_show(v, &a), ngi_show(w, &b)). */
const char *ngi_show(const char *s, ngi_shown *b);

/** Flags of ngi_escape_bytes: also escape the backslash / the quote. */
enum { NGI_ESC_BACKSLASH = 1u << 0, NGI_ESC_QUOTE = 1u << 1 };

/** s[0..n) as printable text (strings.c holds the one rule): bytes outside
 *  0x20..0x7e, and per @p flags the backslash and the quote, become \xNN;
 *  stops before an escape that would not fit. Returns the length. */
size_t ngi_escape_bytes(const char *s, size_t n, char *out, size_t len, unsigned flags);

/* ---- files.c: paths under fsroot, bounded reads ---- */

/** Join fsroot and an absolute path into buf; -1 if too long. */
int ngi_path(char *buf, size_t len, const char *fsroot, const char *abs_path);

/** opendir(fsroot + abs_path), the path left in buf (for ngi_join on its
 *  entries); NULL when it does not fit or cannot be opened. */
DIR *ngi_opendir_path(char *buf, size_t len, const char *fsroot, const char *abs_path);

/** dir + "/" + name + suffix into buf; -1 if it does not fit. */
int ngi_join(char *buf, size_t len, const char *dir, const char *name, const char *suffix);

/** Read up to @p want bytes from @p fd (retrying EINTR, stopping at EOF or
 *  an error); the count read. Adds no NUL; does not close @p fd. */
size_t ngi_read_full(int fd, char *buf, size_t want);

/** Read a small text file (at most len-1 bytes) into buf; -1 on error.
 *  Follows symlinks (sysfs is made of them): for root's files only. */
int ngi_read_small_file(const char *path, char *buf, size_t len);

/** Read the sysfs list file fsroot + @p abs ("0-3,8\n") into @p set; an
 *  empty file is an empty set. -1 if absent or malformed. */
int ngi_read_list_file(const char *fsroot, const char *abs, hwloc_bitmap_t set);

/** Flags of the regular-file reader: follow a final symbolic link (only
 *  for the admin's own configuration files, which sites often link to a
 *  shared directory; everything else refuses it). */
enum { NGI_FILE_FOLLOW = 1u << 0 };
struct stat;
/** Open @p path (relative to @p dfd, or AT_FDCWD) read-only with
 *  O_NONBLOCK|O_CLOEXEC|O_NOCTTY and O_NOFOLLOW unless @p flags has
 *  NGI_FILE_FOLLOW; regular files only (EINVAL otherwise): a FIFO planted
 *  under the name never blocks. Its fstat into @p st when given. fd or -1. */
int ngi_open_regular_at(int dfd, const char *path, unsigned flags, struct stat *st);
/** ngi_open_regular_at(AT_FDCWD, path, 0, NULL): for files other users may control. */
int ngi_open_regular(const char *path);
/** The one whole-file reader: @p path opened by ngi_open_regular_at, at
 *  most @p max bytes, read completely into *out (malloc'd, NUL-terminated;
 *  its length in *len, its fstat in *st when given). 0, or -1 with the
 *  reason in @p why ("a symbolic link (refused)", "not a regular file",
 *  "larger than N bytes", strerror). */
int ngi_read_regular_at(int dfd, const char *path, unsigned flags, size_t max, char **out,
                        size_t *len, struct stat *st, char *why, size_t whylen);
/** Bounded read of a /proc or cgroup file through ngi_open_regular (at most
 *  len-1 bytes, NUL added): the count, or -1 with errno. */
long ngi_read_bounded(const char *path, char *buf, size_t len);
/** The same for fsroot/proc/PID/WHAT (pid <= 0: /proc/self; WHAT "" = the
 *  directory itself). */
long ngi_read_pid_file(const char *fsroot, int pid, const char *what, char *buf, size_t len);

/* ---- cpulist.c ---- */

/** Convert a uint64 node mask (policy) into an hwloc nodeset. */
void ngi_nodemask_to_bitmap(const uint64_t *mask, unsigned words, hwloc_bitmap_t set);

/* ---- run.c: external commands, never trusted to return ---- */

/** What a bounded command did. */
typedef struct ngi_cmd {
    char *out;           /**< stdout and stderr, NUL-terminated (malloc'd), may be NULL */
    size_t len;
    int exit_status;     /**< its exit status; -1 if killed or not run */
    int not_found;       /**< the program is not on PATH */
    int timed_out;       /**< killed (with its process group) after the time limit */
    int too_big;         /**< killed: printed more than the output bound */
    unsigned ms;         /**< how long it ran */
    unsigned limit_ms;   /**< the time limit it ran under */
} ngi_cmd;

/** The program @p name on $PATH (or the default system path when PATH is
 *  unset, as under slurmd's HealthCheckProgram) into @p out; 0 or -1. */
int ngi_find_program(const char *name, char *out, size_t len);
/** Run argv[0] (looked up with ngi_find_program) with LC_ALL=C, stdin
 *  /dev/null, stdout and stderr into one pipe; kill its process group after
 *  @p timeout_ms or when it prints more than @p max_out bytes. Returns 0
 *  when it ran (see @p res for how it ended), -1 when it could not be
 *  started (res->not_found says why). Free res->out with ngi_cmd_free. */
int ngi_run_bounded(char *const argv[], unsigned timeout_ms, size_t max_out, ngi_cmd *res);
/** The same for fn(fd, arg) run in a child process (its exit status is
 *  fn's return value; it writes its result to @p fd): for library calls
 *  that may block in a driver (NVML). */
int ngi_run_child(int (*fn)(int fd, void *arg), void *arg, unsigned timeout_ms,
                  size_t max_out, ngi_cmd *res);
void ngi_cmd_free(ngi_cmd *res);
/** One line for a finding: "did not answer within 10 s (killed)", "exit 3". */
void ngi_cmd_describe(const ngi_cmd *res, char *buf, size_t len);

/** Milliseconds of CLOCK_MONOTONIC (run.c's and run_many.c's deadlines). */
unsigned long long ngi_run_now_ms(void);
/** A copy of the caller's environment with LC_ALL=C, built before a fork
 *  (calloc'ed array of the caller's strings; free the array only). */
char **ngi_run_env(void);

/* ---- run_many.c: several commands at once ---- */

/** One of several commands run at once (ngi_run_many). */
typedef struct ngi_many {
    char *const *argv;   /**< in: argv[0] looked up with ngi_find_program */
    int as_user;         /**< in: 1: run it as uid/gid/groups below (the caller is root) */
    unsigned uid, gid;
    unsigned ngroups;
    const unsigned *groups;
    ngi_cmd res;         /**< out: stdout in res.out, how it ended */
    char *err;           /**< out: its stderr (NUL-terminated, malloc'd) */
    size_t err_len;
} ngi_many;
/** Run @p n commands, at most @p parallel at a time, each in its own
 *  process group with stdin /dev/null, stdout and stderr read through
 *  pipes (at most @p max_out / @p max_err bytes kept; past @p max_out it
 *  is ended), each bounded by @p timeout_ms from its own start: past it
 *  the group gets SIGTERM (srun cancels its step), 1 s later SIGKILL, and
 *  is reaped; nothing is waited for longer. With as_user, the child sets
 *  its groups, gid and uid before exec (and is not run if that fails). Environment: the caller's
 *  without SLURM_* (but SLURM_CONF) and SRUN_* variables, LC_ALL=C.
 *  0 when every command was handled (see each res: not_found, timed_out,
 *  too_big, exit_status), -1 on no memory or a poll failure (nothing is
 *  left running). Free with ngi_many_free. Not thread-safe (forks). */
int ngi_run_many(ngi_many *cmds, unsigned n, unsigned parallel, unsigned timeout_ms,
                 size_t max_out, size_t max_err);
void ngi_many_free(ngi_many *cmds, unsigned n);

#endif
