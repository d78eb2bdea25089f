/* --omp-guard=adaptive in the task: the governor library
 * (libnumaguard-omp.so, preload/) appended to the task's LD_PRELOAD. The
 * plugin runs as root before the task starts, and whatever LD_PRELOAD
 * names runs inside the user's program: only a root-owned file, in
 * root-owned directories nobody else may write, at a path fixed at build
 * time (or one the caller gives, with the same checks) is ever added, and
 * the user's own list is kept in front of it.
 *
 * Containers (docs/containers.md): pyxis joins the container's user and
 * mount namespaces in its task_init, so a plugin listed after it checks
 * the file where root's files show as nobody (65534) and its directory
 * may be a bind mount inside a rootfs the user owns. ng_omp_preload_identify
 * runs in slurmstepd's own namespaces (user_init, before any task enters
 * a container) and records the trusted file's device and inode; inside,
 * the same device and inode is the same file, whoever the namespace says
 * owns it. Why that is enough: a namespace the job's user made can be
 * changed only by that user (or root), and that user could set
 * LD_PRELOAD anyway; what the check keeps out is a file another user
 * planted, and that one has another inode. */
#include "private/task.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NG_OMP_PRELOAD_PATH
#define NG_OMP_PRELOAD_PATH "/usr/local/lib/numaguard/libnumaguard-omp.so"
#endif

/* Longest LD_PRELOAD the task may already have for us to append to. */
#define PRELOAD_MAX 4096

const char *ng_omp_preload_path(void)
{
    return NG_OMP_PRELOAD_PATH;
}

static int untrusted(const struct stat *st, int dir)
{
    if (st->st_uid != 0)
        return 1;
    /* A sticky directory (/tmp) lets others create names in it. */
    if (dir && (st->st_mode & S_ISVTX))
        return 1;
    return (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

/* Every directory above @p path: owned by root, writable by root alone. */
static int dirs_trusted(const char *path, char *why, size_t whylen)
{
    char dir[NG_MAX_ARG];
    size_t n = strlen(path);
    memcpy(dir, path, n + 1);
    for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
        *slash = '\0';
        const char *d = dir[0] ? dir : "/";
        struct stat st;
        if (stat(d, &st) != 0)
            return ngi_fail(why, whylen, "%s: %s", d, strerror(errno));
        if (!S_ISDIR(st.st_mode) || untrusted(&st, 1))
            return ngi_fail(why, whylen, "directory %s is not root's alone", d);
        if (!dir[0])
            break;
    }
    return 0;
}

/* Open @p path for a check: not a link, not a FIFO; its stat in @p st.
 * -1 with @p why set. */
static int stat_plain(const char *path, struct stat *st, char *why, size_t whylen)
{
    if (!path || path[0] != '/' || strlen(path) >= NG_MAX_ARG)
        return ngi_fail(why, whylen, "not an absolute path");
    if (strpbrk(path, ": \t\n") || strstr(path, "/../") || strstr(path, "/./"))
        return ngi_fail(why, whylen, "a path with ':', blanks or dot components");
    /* O_NOFOLLOW: a link in the last component is refused; O_NONBLOCK: a
     * FIFO is never waited on (fstat below refuses it). */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return ngi_fail(why, whylen, "%s", errno == ELOOP ? "a symbolic link" : strerror(errno));
    int rc = fstat(fd, st);
    close(fd);
    if (rc != 0 || !S_ISREG(st->st_mode))
        return ngi_fail(why, whylen, "not a regular file");
    return 0;
}

int ng_omp_preload_identify(const char *path, ng_file_id *id, char *why, size_t whylen)
{
    struct stat st;
    id->valid = 0;
    if (ngi_omp_preload_trusted(path, why, whylen) < 0 || stat_plain(path, &st, why, whylen) < 0)
        return -1;
    id->dev = (unsigned long long)st.st_dev;
    id->ino = (unsigned long long)st.st_ino;
    id->valid = 1;
    return 0;
}

int ng_omp_preload_trusted_as(const char *path, const ng_file_id *id, char *why,
                              size_t whylen)
{
    char first[200];
    if (ngi_omp_preload_trusted(path, first, sizeof first) == 0)
        return 0;
    struct stat st;
    if (!id || !id->valid || stat_plain(path, &st, why, whylen) < 0)
        return ngi_fail(why, whylen, "%s", first);
    if ((unsigned long long)st.st_dev != id->dev || (unsigned long long)st.st_ino != id->ino)
        return ngi_fail(why, whylen, "%s; not the file checked before the task entered its "
                        "namespaces (device %llu inode %llu)", first, id->dev, id->ino);
    /* Same inode: same owner and mode as when it was trusted, unless root
     * changed them since; a mode others may write is still refused. */
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return ngi_fail(why, whylen, "writable by others");
    return 0;
}

int ngi_omp_preload_trusted(const char *path, char *why, size_t whylen)
{
    struct stat st;
    if (stat_plain(path, &st, why, whylen) < 0)
        return -1;
    if (untrusted(&st, 0))
        return ngi_fail(why, whylen, "not owned by root, or writable by others");
    return dirs_trusted(path, why, whylen);
}

/* Is @p path one of the entries of the list @p list (':' or blank separated)? */
static int listed(const char *list, const char *path)
{
    size_t n = strlen(path);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ": \t");
        if (len == n && strncmp(p, path, n) == 0)
            return 1;
        p += len;
        p += strspn(p, ": \t");
    }
    return 0;
}

int ngi_preload_append(const ng_apply_args *a, ng_apply_result *res, char *err,
                       size_t errlen)
{
    char why[400], msg[600];
    const ng_env_ops *env = a->env;
    const char *path = a->omp_preload ? a->omp_preload : ng_omp_preload_path();
    if (a->omp_preload_skip)
        return 0;   /* the caller says why, once per node (ng_container_hint) */
    if (ng_omp_preload_trusted_as(path, a->omp_preload_id, why, sizeof why) < 0) {
        snprintf(msg, sizeof msg, "--omp-guard=adaptive: governor %.200s not used (%.200s): "
                 "thread variables as auto", path, why);
        ngi_result_warn(res, msg);
        return 0;
    }
    char cur[PRELOAD_MAX + 1] = "";
    int preset = env->is_set && env->is_set(env->ctx, "LD_PRELOAD");
    if (preset && (!env->get || env->get(env->ctx, "LD_PRELOAD", cur, sizeof cur) != 0 ||
                   strlen(cur) >= PRELOAD_MAX)) {
        ngi_result_warn(res, "--omp-guard=adaptive: the task's LD_PRELOAD could not be read "
                        "(or is over 4096 bytes): governor not added");
        return 0;
    }
    if (!listed(cur, path)) {
        char val[PRELOAD_MAX + NG_MAX_ARG + 2];
        snprintf(val, sizeof val, "%s%s%s", cur, cur[0] ? ":" : "", path);
        if (env->set(env->ctx, "LD_PRELOAD", val) != 0)
            return ngi_fail(err, errlen, "cannot set LD_PRELOAD in the task environment");
    }
    /* The promise: `check` (and the program) compare it with what the
     * process has mapped; inside a container without the bind it differs. */
    if (env->set(env->ctx, "NUMAGUARD_OMP_GOVERNOR", path) != 0)
        return ngi_fail(err, errlen, "cannot set NUMAGUARD_OMP_GOVERNOR in the task environment");
    res->governor = 1;
    return 0;
}
