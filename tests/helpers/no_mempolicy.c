/*
 * no_mempolicy: run a command where set_mempolicy(2) fails with ENOSYS,
 * as it does under qemu-user and in sandboxes whose seccomp filter does
 * not list it.
 *
 *   no_mempolicy COMMAND [ARG...]
 *
 * Installs a seccomp filter (no_new_privs first, so no privilege is
 * needed) that answers set_mempolicy with ENOSYS and lets every other
 * call through, then execs COMMAND; the filter is inherited by it and
 * everything it starts. Exit 126 when the filter cannot be installed or
 * this architecture is not one it knows, 127 when COMMAND cannot run.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NG_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NG_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NG_AUDIT_ARCH AUDIT_ARCH_PPC64LE
#endif

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: no_mempolicy COMMAND [ARG...]\n");
        return 2;
    }
#ifndef NG_AUDIT_ARCH
    fprintf(stderr, "no_mempolicy: no seccomp architecture for this build\n");
    return 126;
#else
    /* A call from another ABI (x32, compat) is let through unchanged:
     * only this architecture's number is the one we mean. */
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NG_AUDIT_ARCH, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_set_mempolicy, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog fprog = {(unsigned short)(sizeof prog / sizeof prog[0]), prog};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0) {
        fprintf(stderr, "no_mempolicy: cannot install the filter: %s\n", strerror(errno));
        return 126;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "no_mempolicy: %s: %s\n", argv[1], strerror(errno));
    return 127;
#endif
}
