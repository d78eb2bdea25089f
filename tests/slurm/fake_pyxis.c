/* A stand-in for NVIDIA's pyxis (not packaged for Debian, so it cannot run
 * here), for tests/slurm/t-slurm-containers.sh only: the order of
 * operations pyxis has in slurmstepd, with a directory as the image.
 *
 *   required fake_pyxis.so root=DIR mount=SRC:DST ... env=NAME=VALUE ...
 *
 * user_init (slurmstepd, root, the host's namespaces): start the
 * "container": a child in a new user namespace (its root is host uid
 * 100000, so host root's files show as nobody inside, as under enroot)
 * and a new mount namespace whose root becomes DIR (pivot_root), with
 * each SRC bound at DST inside (enroot's mounts.d) and /proc, /sys and
 * /dev bound in.
 * task_init (each task, in plugstack order): copy the image's environment
 * into the task's, overwriting (env=), then join the child's user and mount
 * namespaces (setns), as pyxis does. A plugin listed after this one runs
 * its task_init inside; one listed before runs it in the host.
 * exit: the child is killed. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(fake_pyxis, 1)

static pid_t g_child = -1;

static const char *arg(int ac, char **av, const char *key, int nth)
{
    size_t n = strlen(key);
    for (int i = 0; i < ac; i++)
        if (!strncmp(av[i], key, n) && av[i][n] == '=' && nth-- == 0)
            return av[i] + n + 1;
    return NULL;
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, text, strlen(text));
    close(fd);
    return w == (ssize_t)strlen(text) ? 0 : -1;
}

static int bind_in(const char *root, const char *src, const char *dst, unsigned long flags)
{
    char in[4096];
    snprintf(in, sizeof in, "%s%s", root, dst);
    return mount(src, in, "none", MS_BIND | flags, NULL);
}

/* The container's init: mounts, then wait to be killed. */
static void container(int ac, char **av, int rd, int wr)
{
    const char *root = arg(ac, av, "root", 0);
    char go;
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 || write(wr, "R", 1) != 1 ||
        read(rd, &go, 1) != 1 || setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0)
        _exit(1);
    if (!root || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount(root, root, "none", MS_BIND | MS_REC, NULL) != 0)
        _exit(2);
    for (int i = 0; arg(ac, av, "mount", i); i++) {
        char src[2048];
        snprintf(src, sizeof src, "%s", arg(ac, av, "mount", i));
        char *colon = strchr(src, ':');
        if (!colon)
            _exit(3);
        *colon = '\0';
        if (bind_in(root, src, colon + 1, 0) != 0)
            _exit(4);
    }
    if (bind_in(root, "/proc", "/proc", MS_REC) != 0 || bind_in(root, "/sys", "/sys", MS_REC) != 0 ||
        bind_in(root, "/dev", "/dev", MS_REC) != 0)
        _exit(5);
    /* pivot_root(".", "."): the old root stacks under the new one, then
     * goes; the namespace's root is the image, which is what setns gives
     * a task that joins it. */
    if (chdir(root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
        umount2(".", MNT_DETACH) != 0 || chdir("/") != 0)
        _exit(6);
    if (write(wr, "M", 1) != 1)
        _exit(7);
    for (;;)
        pause();
}

static int start(int ac, char **av)
{
    int up[2], down[2];
    char c = 0, map[64], path[64];
    if (pipe(up) != 0 || pipe(down) != 0)
        return -1;
    g_child = fork();
    if (g_child == 0) {
        close(up[0]);
        close(down[1]);
        container(ac, av, down[0], up[1]);
    }
    close(up[1]);
    close(down[0]);
    if (g_child < 0 || read(up[0], &c, 1) != 1 || c != 'R')
        return -1;
    snprintf(map, sizeof map, "0 100000 65536\n");
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)g_child);
    if (write_file(path, map) != 0)
        return -1;
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)g_child);
    if (write_file(path, map) != 0 || write(down[1], "g", 1) != 1)
        return -1;
    int rc = read(up[0], &c, 1) == 1 && c == 'M' ? 0 : -1;
    close(up[0]);
    close(down[1]);
    return rc;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    if (!spank_remote(sp))
        return 0;
    if (start(ac, av) != 0) {
        slurm_error("fake_pyxis: the container did not start");
        return -1;
    }
    return 0;
}

static int ns_fd(pid_t pid, const char *ns)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, ns);
    return open(path, O_RDONLY | O_CLOEXEC);
}

/* Both namespaces opened first (once in the user namespace, the
 * container's init is another user's process), then joined. */
static int join(pid_t pid)
{
    int u = ns_fd(pid, "user"), m = ns_fd(pid, "mnt"), rc = -1;
    if (u >= 0 && m >= 0 && setns(u, CLONE_NEWUSER) == 0)
        rc = setns(m, CLONE_NEWNS);
    int e = errno;
    if (u >= 0)
        close(u);
    if (m >= 0)
        close(m);
    errno = e;
    return rc;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    if (!spank_remote(sp) || g_child <= 0)
        return 0;
    /* The image's environment first, overwriting (pyxis imports it). */
    for (int i = 0; arg(ac, av, "env", i); i++) {
        char kv[512];
        snprintf(kv, sizeof kv, "%s", arg(ac, av, "env", i));
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            spank_setenv(sp, kv, eq + 1, 1);
        }
    }
    if (join(g_child) != 0) {
        slurm_error("fake_pyxis: joining the container: %s", strerror(errno));
        return -1;
    }
    return chdir("/") == 0 ? 0 : -1;
}

/* The container's init goes when the first task ends (every task joined
 * before its exec) or with the step: the namespaces live on while a task
 * is in them, and slurmstepd waits for every process of the step. */
static void stop(void)
{
    if (g_child > 0) {
        kill(g_child, SIGKILL);
        waitpid(g_child, NULL, 0);
        g_child = -1;
    }
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_remote(sp))
        stop();
    return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_remote(sp))
        stop();
    return 0;
}
