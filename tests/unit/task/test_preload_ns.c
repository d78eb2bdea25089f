/* The governor's trust check across a user namespace, the way pyxis runs
 * a task (lib/task/preload.c, docs/admin-guide.md "Containers: pyxis and
 * enroot"): pyxis joins the container's user and mount namespaces in its
 * task_init, where root's files show as nobody (65534) and the library's
 * directory is a bind mount inside a tree the user owns.
 *
 * For real, as root: a governor stand-in in a directory of root's alone
 * (under /run); a child in a new user namespace (its root mapped to host
 * uid 100000, so host root is unmapped) and a new mount namespace, where
 * a tmpfs (the "rootfs" its user owns) gets the directory bound in.
 *  - numaguard listed before pyxis: checked in the host, trusted; the
 *    same file is the one inside (same device and inode through the bind).
 *  - numaguard listed after pyxis: the plain check refuses it inside
 *    (owner nobody, directories not root's) — what 0.x did; with the
 *    identity recorded in the host (user_init) it is accepted; a file the
 *    user planted at the same path, or bound over it, is refused.
 * Skipped, with the reason, when not root or user namespaces are off.
 * ("none" as the type of bind and propagation mounts: the kernel ignores
 * it, valgrind wants a string.) */
#include "numaguard.h"
#include "private/task.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], lib[128];

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Map the child's root to host uid/gid 100000 (one id): host root unmapped. */
static int map_child(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
    write_file(path, "deny");
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    if (write_file(path, "0 100000 1\n") < 0)
        return -1;
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    return write_file(path, "0 100000 1\n");
}

/* In the child: results as one character each on the pipe. */
static void child(int rd, int wr, const ng_file_id *id)
{
    char go, why[400], res[8] = "xxxxxx";
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        (void)!write(wr, "U", 1);
        _exit(1);
    }
    (void)!write(wr, "R", 1);                /* ready: map me */
    /* Become the mapped root (host uid 100000), as a runtime's init does. */
    if (read(rd, &go, 1) != 1 || setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0)
        _exit(1);
    struct stat st;
    /* 0: the owner shows as nobody */
    res[0] = stat(lib, &st) == 0 && st.st_uid == 65534 ? '1' : '0';
    /* The user's "rootfs": a tmpfs it owns, the library's directory bound in. */
    char root[160], in[256];
    snprintf(root, sizeof root, "%s.root", dir);
    if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", root, "tmpfs", 0, "mode=0777") != 0)
        _exit(2);
    snprintf(in, sizeof in, "%s%s", root, dir);
    char mk[300];
    snprintf(mk, sizeof mk, "%s/run", root);
    if (mkdir(mk, 0777) != 0)
        _exit(80 + (errno & 0x3f));
    if (mkdir(in, 0755) != 0)
        _exit(10 + (errno & 0x3f));
    if (mount(dir, in, "none", MS_BIND, NULL) != 0)
        _exit(4 + (errno & 0x3f));
    snprintf(in, sizeof in, "%s%s/libgov.so", root, dir);
    /* 1: the plain check refuses it there; 2: the recorded identity accepts */
    res[1] = ngi_omp_preload_trusted(in, why, sizeof why) < 0 ? '1' : '0';
    res[2] = ng_omp_preload_trusted_as(in, id, why, sizeof why) == 0 ? '1' : '0';
    /* 3: no identity recorded: refused as before */
    res[3] = ng_omp_preload_trusted_as(in, NULL, why, sizeof why) < 0 ? '1' : '0';
    /* 4: a file the user puts over it (a bind of its own copy): refused */
    char own[300];
    snprintf(own, sizeof own, "%s/mine.so", root);
    res[4] = '0';
    if (write_file(own, "not the governor\n") == 0 && mount(own, in, "none", MS_BIND, NULL) == 0)
        res[4] = ng_omp_preload_trusted_as(in, id, why, sizeof why) < 0 &&
                 strstr(why, "not the file checked") ? '1' : '0';
    (void)!write(wr, res, 5);
    _exit(0);
}

int main(void)
{
    if (geteuid() != 0) {
        printf("1..0 # SKIP needs root (a directory of root's alone, uid maps)\n");
        return 0;
    }
    snprintf(dir, sizeof dir, "/run/ng-preload-ns.XXXXXX");
    if (!mkdtemp(dir) || chmod(dir, 0755) != 0) {
        printf("1..0 # SKIP cannot make a directory under /run: %s\n", strerror(errno));
        return 0;
    }
    snprintf(lib, sizeof lib, "%s/libgov.so", dir);
    write_file(lib, "governor stand-in\n");
    char why[400];
    ng_file_id id;
    ok(ng_omp_preload_identify(lib, &id, why, sizeof why) == 0 && id.valid,
       "numaguard before pyxis: trusted in the host's namespaces, identity recorded");
    char root[160];
    snprintf(root, sizeof root, "%s.root", dir);
    mkdir(root, 0755);   /* the child's tmpfs goes over it (host root made it) */
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        child(down[0], up[1], &id);
    }
    close(up[1]);
    close(down[0]);
    char c = 0, res[6] = "";
    if (read(up[0], &c, 1) != 1 || c != 'R') {
        printf("# SKIP no user namespace here (unshare: %s)\n", c == 'U' ? "refused" : "?");
        waitpid(pid, NULL, 0);
        unlink(lib);
        rmdir(dir);
        return tap_done();
    }
    int mapped = map_child(pid) == 0;
    (void)!write(down[1], "g", 1);
    ssize_t n = read(up[0], res, 5);
    int st = 0;
    waitpid(pid, &st, 0);
    ok(mapped && n == 5, "a child in a new user namespace (root = host uid 100000) and mount namespace "
       "(exit %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    ok(res[0] == '1', "inside: the governor's owner shows as nobody (65534)");
    ok(res[1] == '1', "numaguard after pyxis, plain check: refused inside (the bug)");
    ok(res[2] == '1', "numaguard after pyxis, identity from user_init: the same file through "
       "the bind mount is accepted");
    ok(res[3] == '1', "... no identity recorded: refused");
    ok(res[4] == '1', "... a file of the user's bound over the path: refused (not the file checked)");
    rmdir(root);
    unlink(lib);
    rmdir(dir);
    return tap_done();
}
