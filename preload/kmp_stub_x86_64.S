/* __kmpc_fork_call(loc, argc, microtask, ...) for x86-64 (System V AMD64):
 * the entry stub of preload/kmp.c. __kmpc_fork_call is variadic (argc
 * shared variables, any number), so it cannot be re-called from C with
 * its arguments; these few instructions ask ngo_kmp_fork_prepare for the
 * real entry point, call it with the caller's registers and a copy of its
 * stack arguments, then call ngo_region_end.
 *
 * loc, argc, microtask in %rdi, %esi, %rdx; the first three
 * shared-variable pointers in %rcx, %r8, %r9; the other argc - 3 on the
 * caller's stack above the return address (16(%rbp) on); %al: vector
 * registers used (kept, though the varargs are pointers and libomp reads
 * them as such: the vector registers themselves are not saved around
 * ngo_kmp_fork_prepare).
 *
 * A real frame, not a tail jump, so that the way out is seen without
 * touching the return address (CET shadow stacks, unwinders): push %rbp,
 * the registers saved below it, ngo_kmp_fork_prepare(loc, argc, return
 * address) -> the real entry point; then the stack arguments copied below
 * (rounded up to an even count: %rsp 16-byte aligned at each call), the
 * registers restored, the call, ngo_region_end(), leave, ret. The CFI
 * describes an %rbp-based frame: debuggers, perf and backtrace() unwind
 * through it to the caller.
 *
 *   8(%rbp) return address      -8 %rax   -16 %rdi   -24 %rsi   -32 %rdx
 *   0(%rbp) caller's %rbp      -40 %rcx   -48 %r8    -56 %r9    -64 real entry */
#include "gnu_property.h"

#ifdef __CET__
#define NGO_ENDBR endbr64
#else
#define NGO_ENDBR
#endif

        .text
        .globl  __kmpc_fork_call
        .type   __kmpc_fork_call, @function
        .p2align 4
__kmpc_fork_call:
        .cfi_startproc
        NGO_ENDBR
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        subq    $64, %rsp
        movq    %rax, -8(%rbp)
        movq    %rdi, -16(%rbp)
        movq    %rsi, -24(%rbp)
        movq    %rdx, -32(%rbp)
        movq    %rcx, -40(%rbp)
        movq    %r8, -48(%rbp)
        movq    %r9, -56(%rbp)
        movq    8(%rbp), %rdx
        call    ngo_kmp_fork_prepare
        movq    %rax, -64(%rbp)
        /* argc - 3 stack arguments, when argc > 3 (argc: an int) */
        movslq  -24(%rbp), %rcx
        subq    $3, %rcx
        jle     2f
        leaq    1(%rcx), %rax
        andq    $-2, %rax
        shlq    $3, %rax
        subq    %rax, %rsp
1:
        movq    8(%rbp,%rcx,8), %rax
        movq    %rax, -8(%rsp,%rcx,8)
        decq    %rcx
        jnz     1b
2:
        movq    -16(%rbp), %rdi
        movq    -24(%rbp), %rsi
        movq    -32(%rbp), %rdx
        movq    -40(%rbp), %rcx
        movq    -48(%rbp), %r8
        movq    -56(%rbp), %r9
        movq    -64(%rbp), %r11
        movq    -8(%rbp), %rax
        call    *%r11
        call    ngo_region_end
        leave
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size   __kmpc_fork_call, .-__kmpc_fork_call

/* Built with -fcf-protection (IBT, shadow stack): say so, as the C
 * objects' notes do (GNU_PROPERTY_X86_FEATURE_1_AND; __CET__: bit 0 IBT,
 * bit 1 SHSTK, what -fcf-protection set). */
#ifdef __CET__
        ngo_gnu_property 0xc0000002, __CET__
#endif
        /* No executable stack. */
        .section .note.GNU-stack, "", @progbits
