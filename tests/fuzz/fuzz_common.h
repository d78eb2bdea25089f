/* Shared helpers of the libFuzzer targets in tests/fuzz/ (header-only: each
 * target is one translation unit linked with the library objects).
 *
 * Conventions:
 *  - An invariant that does not hold calls FZ_ASSERT, which prints what was
 *    wrong and abort()s: libFuzzer then saves the input as a crash artifact.
 *  - Files a target writes live in one private temp dir per process, under
 *    $NG_FUZZ_TMP (or $TMPDIR, or /tmp), removed at exit.
 *  - Paths to repository files (topologies, tests/fakefs/mkfake.sh) are
 *    relative to $NG_FUZZ_REPO (default: the current directory). */
#ifndef NG_FUZZ_COMMON_H
#define NG_FUZZ_COMMON_H

/* numaguard.h plus the private headers the fuzzers reach into */
#include "private/gpu.h"
#include "private/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FZ_ASSERT(cond, ...)                                                   \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "INVARIANT FAILED at %s:%d: %s\n  ", __FILE__,     \
                    __LINE__, #cond);                                          \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* The fuzz input as a NUL-terminated heap string (embedded NULs simply end
 * the C string early, as they would for any C caller). */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* An error message must be one non-empty printable line that fits in its
 * buffer: it goes to slurmd's log or the user's terminal as one record.
 * @p buf_len is the buffer size the callee was given. */
static inline void fz_check_message(const char *what, const char *msg, size_t buf_len)
{
    size_t n = strnlen(msg, buf_len);
    FZ_ASSERT(n < buf_len, "%s: message not NUL-terminated within %zu bytes", what, buf_len);
    FZ_ASSERT(n > 0, "%s: failure with an empty message", what);
    for (size_t i = 0; i < n; i++)
        FZ_ASSERT(msg[i] != '\n' && msg[i] != '\r', "%s: message is not one line: '%s'", what,
                  msg);
}

/* Like fz_check_message, and also no control bytes or DEL at all (parsers
 * that promise to escape what they echo: policy, omp-guard, thread vars). */
static inline void fz_check_printable(const char *what, const char *msg, size_t buf_len)
{
    fz_check_message(what, msg, buf_len);
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        FZ_ASSERT(*p >= 0x20 && *p != 0x7f, "%s: control byte 0x%02x in message '%s'", what, *p,
                  msg);
}

/* 1 if s[0..n) contains a line break (an input the caller may echo back). */
static inline int fz_has_newline(const char *s)
{
    return s && strpbrk(s, "\r\n") != NULL;
}

static inline int fz_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* Remove a tree (no symlink is followed: FTW_PHYS). */
static inline void fz_rm_tree(const char *path)
{
    nftw(path, fz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char fz_tmp_path[512];

static inline void fz_tmp_cleanup(void)
{
    if (fz_tmp_path[0])
        fz_rm_tree(fz_tmp_path);
}

/* This process's private temp dir (created on first use). */
static inline const char *fz_tmpdir(void)
{
    if (fz_tmp_path[0])
        return fz_tmp_path;
    const char *base = getenv("NG_FUZZ_TMP");
    if (!base || !*base)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    mkdir(base, 0700);
    snprintf(fz_tmp_path, sizeof fz_tmp_path, "%s/ngfuzz.XXXXXX", base);
    if (!mkdtemp(fz_tmp_path)) {
        fprintf(stderr, "fuzz: mkdtemp under %s: %s\n", base, strerror(errno));
        abort();
    }
    atexit(fz_tmp_cleanup);
    return fz_tmp_path;
}

/* Write n bytes to path (truncating); aborts on I/O errors (not a finding). */
static inline void fz_write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "fuzz: open %s: %s\n", path, strerror(errno));
        abort();
    }
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) {
            fprintf(stderr, "fuzz: write %s: %s\n", path, strerror(errno));
            abort();
        }
        p += w;
        n -= (size_t)w;
    }
    close(fd);
}

/* A repository file path: $NG_FUZZ_REPO/rel. */
static inline const char *fz_repo_path(const char *rel, char *buf, size_t len)
{
    const char *top = getenv("NG_FUZZ_REPO");
    snprintf(buf, len, "%s/%s", top && *top ? top : ".", rel);
    return buf;
}

/* Split the input at byte @p sep into at most @p max fields (pointers into
 * @p s, which is modified). Returns the number of fields. */
static inline unsigned fz_split(char *s, char sep, char **fields, unsigned max)
{
    unsigned n = 0;
    while (n < max) {
        fields[n++] = s;
        char *e = strchr(s, sep);
        if (!e)
            break;
        *e = '\0';
        s = e + 1;
    }
    return n;
}

/* Load a topology from a repository XML (aborts if the seed XML is bad). */
static inline ng_topology *fz_load_repo_topology(const char *rel)
{
    char path[1024], err[256];
    ng_topology_options o;
    ng_topology *t = NULL;
    memset(&o, 0, sizeof o);
    o.xml_path = fz_repo_path(rel, path, sizeof path);
    if (ng_topology_load(&t, &o, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz: cannot load %s: %s (run from the repository root or set "
                        "NG_FUZZ_REPO)\n", path, err);
        abort();
    }
    return t;
}

/* A fake /dev,/proc,/sys tree of tests/fakefs/mkfake.sh PROFILE in a new
 * dir under fz_tmpdir() (real driver layouts; device nodes need root).
 * Returns the root; if the tree could not be built completely (no root
 * for mknod) a note goes to stderr and the partial tree is fuzzed. */
static inline const char *fz_fake_root(const char *profile, char *buf, size_t len)
{
    char script[1024], cmd[3072];
    snprintf(buf, len, "%s/%s", fz_tmpdir(), profile);
    mkdir(buf, 0755);
    fz_repo_path("tests/fakefs/mkfake.sh", script, sizeof script);
    snprintf(cmd, sizeof cmd, "sh '%s' '%s' '%s' >/dev/null 2>&1", script, buf, profile);
    if (system(cmd) != 0) {
        fprintf(stderr, "fuzz: %s failed for %s (not root?): fuzzing a partial tree\n",
                script, profile);
    }
    return buf;
}

#endif
