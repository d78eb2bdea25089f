/* Paths under an fsroot and bounded reads: sysfs files (root's, symlinks
 * followed) and files other users may control or plant (O_NOFOLLOW|
 * O_NONBLOCK, regular files only: a FIFO fails fstat's test instead of
 * blocking open() or read()). ngi_read_regular_at is the one reader of
 * whole files (the admin's configuration, the topology cache, the plugin's
 * ELF file). */
#include "private/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ngi_path(char *buf, size_t len, const char *fsroot, const char *abs_path)
{
    if (!fsroot || !*fsroot || strcmp(fsroot, "/") == 0)
        fsroot = "";
    int n = snprintf(buf, len, "%s%s", fsroot, abs_path);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

DIR *ngi_opendir_path(char *buf, size_t len, const char *fsroot, const char *abs_path)
{
    return ngi_path(buf, len, fsroot, abs_path) < 0 ? NULL : opendir(buf);
}

int ngi_join(char *buf, size_t len, const char *dir, const char *name, const char *suffix)
{
    int n = snprintf(buf, len, "%s/%s%s", dir, name, suffix);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

size_t ngi_read_full(int fd, char *buf, size_t want)
{
    size_t got = 0;
    while (got < want) {
        ssize_t n = read(fd, buf + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

/* Read from @p fd until EOF or len-1 bytes (NUL added). Returns the count,
 * or -1 when the first read fails (EACCES on another user's environ and
 * numa_maps comes at read time, not at open). Closes @p fd. */
static long read_fd(int fd, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len - 1) {
        ssize_t r = read(fd, buf + got, len - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && got == 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return (long)got;
}

int ngi_read_small_file(const char *path, char *buf, size_t len)
{
    if (!len)
        return -1;
    /* O_NOFOLLOW is not used: sysfs paths are symlinks by design. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (read_fd(fd, buf, len) < 0)
        buf[0] = '\0';   /* an unreadable file reads as empty, as before */
    return 0;
}

int ngi_read_list_file(const char *fsroot, const char *abs, hwloc_bitmap_t set)
{
    char path[512], buf[4096];
    if (ngi_path(path, sizeof path, fsroot, abs) < 0 ||
        ngi_read_small_file(path, buf, sizeof buf) < 0)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    if (!buf[0]) {
        hwloc_bitmap_zero(set);
        return 0;
    }
    return ng_list_parse(buf, set, 1u << 20, NULL, 0);
}

int ngi_open_regular_at(int dfd, const char *path, unsigned flags, struct stat *st)
{
    struct stat own;
    int of = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    if (!(flags & NGI_FILE_FOLLOW))
        of |= O_NOFOLLOW;
    int fd = openat(dfd, path, of);
    if (fd < 0)
        return -1;
    if (!st)
        st = &own;
    if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

int ngi_open_regular(const char *path)
{
    return ngi_open_regular_at(AT_FDCWD, path, 0, NULL);
}

/* Why opening failed, in the words every caller used. */
static int open_why(const char *path, unsigned flags, char *why, size_t whylen)
{
    if (errno == EINVAL)
        return ngi_fail(why, whylen, "not a regular file");
    if (errno == ELOOP && !(flags & NGI_FILE_FOLLOW))
        return ngi_fail(why, whylen, "a symbolic link (refused)");
    (void)path;
    return ngi_fail(why, whylen, "%s", strerror(errno));
}

int ngi_read_regular_at(int dfd, const char *path, unsigned flags, size_t max, char **out,
                        size_t *len, struct stat *st_out, char *why, size_t whylen)
{
    struct stat st;
    *out = NULL;
    int fd = ngi_open_regular_at(dfd, path, flags, &st);
    if (fd < 0)
        return open_why(path, flags, why, whylen);
    int rc = -1;
    char *buf = NULL;
    size_t want = (size_t)st.st_size;
    if ((unsigned long long)st.st_size > max)
        ngi_fail(why, whylen, "larger than %zu bytes", max);
    else if (!(buf = malloc(want + 1)))
        ngi_fail(why, whylen, "out of memory");
    else if (ngi_read_full(fd, buf, want) != want)
        ngi_fail(why, whylen, "short read (the file changed while read)");
    else {
        buf[want] = '\0';
        *out = buf;
        buf = NULL;
        if (len)
            *len = want;
        if (st_out)
            *st_out = st;
        rc = 0;
    }
    free(buf);
    close(fd);
    return rc;
}

long ngi_read_bounded(const char *path, char *buf, size_t len)
{
    if (!len)
        return -1;
    int fd = ngi_open_regular(path);
    return fd < 0 ? -1 : read_fd(fd, buf, len);
}

long ngi_read_pid_file(const char *fsroot, int pid, const char *what, char *buf, size_t len)
{
    char rel[96], path[4096];
    int n = pid > 0 ? snprintf(rel, sizeof rel, "/proc/%d%s%s", pid, *what ? "/" : "", what)
                    : snprintf(rel, sizeof rel, "/proc/self%s%s", *what ? "/" : "", what);
    if (n < 0 || (size_t)n >= sizeof rel || ngi_path(path, sizeof path, fsroot, rel) < 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return ngi_read_bounded(path, buf, len);
}
