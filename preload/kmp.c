/* LLVM/Intel libomp's entry points (clang -fopenmp, icx, the Intel and
 * LLVM runtimes). A region is __kmpc_push_num_threads (only with a
 * num_threads clause) then __kmpc_fork_call(loc, argc, microtask, ...):
 * the governor's answer is pushed just before the fork, the way the
 * compiler pushes a clause, and the governor is told when the fork
 * returned (the region is over). __kmpc_fork_call is variadic (argc shared
 * variables, any number): it cannot be re-called from C with its
 * arguments, so a few instructions with a frame of their own ask
 * ngo_kmp_fork_prepare for the real entry point, call it with the
 * caller's registers and a copy of its stack arguments, then call
 * ngo_region_end. x86-64 only; elsewhere libomp's regions are not
 * governed (libgomp's are). */
#include "gov.h"

typedef struct ident ident_t;

NGO_EXPORT void __kmpc_push_num_threads(ident_t *loc, int gtid, int n)
{
    const ngo_rt *rt = ngo_rt_for_site((uintptr_t)__builtin_return_address(0),
                                       NGO_KMPC_PUSH_NUM_THREADS);
    ngo_note_clause(n);
    ((void (*)(ident_t *, int, int))rt->fn[NGO_KMPC_PUSH_NUM_THREADS])(loc, gtid, n);
}

/* Decide the team of the fork about to happen; push it when it differs
 * from what the program asked. */
static void prepare(const ngo_rt *rt, ident_t *loc, const char *entry)
{
    unsigned clause = ngo_take_clause();
    ngo_ask a = {rt, entry, clause};
    unsigned give = ngo_decide(&a);
    void *push = rt->fn[NGO_KMPC_PUSH_NUM_THREADS], *gtid = rt->fn[NGO_KMPC_GLOBAL_THREAD_NUM];
    if (give && give != clause && push && gtid)
        ((void (*)(ident_t *, int, int))push)(loc, ((int (*)(ident_t *))gtid)(loc), (int)give);
}

/* Called by the stub below with the caller's first two arguments and its
 * return address; returns the runtime's __kmpc_fork_call. The stub calls
 * ngo_region_end when that returned. */
NGO_HIDDEN void *ngo_kmp_fork_prepare(ident_t *loc, int argc, uintptr_t site);
void *ngo_kmp_fork_prepare(ident_t *loc, int argc, uintptr_t site)
{
    (void)argc;
    const ngo_rt *rt = ngo_rt_for_site(site, NGO_KMPC_FORK_CALL);
    prepare(rt, loc, "__kmpc_fork_call");
    return rt->fn[NGO_KMPC_FORK_CALL];
}

/* LLVM 17+: the if clause's form, not variadic. */
NGO_EXPORT void __kmpc_fork_call_if(ident_t *loc, int argc, void *microtask, int cond, void *args)
{
    const ngo_rt *rt = ngo_rt_for_site((uintptr_t)__builtin_return_address(0),
                                       NGO_KMPC_FORK_CALL_IF);
    if (cond)
        prepare(rt, loc, "__kmpc_fork_call_if");
    else
        ngo_take_clause();
    ((void (*)(ident_t *, int, void *, int, void *))rt->fn[NGO_KMPC_FORK_CALL_IF])(
        loc, argc, microtask, cond, args);
    if (cond)
        ngo_region_end();   /* paired with prepare's ngo_decide */
}

#if defined(__x86_64__)
/* __kmpc_fork_call(loc, argc, microtask, ...), System V AMD64: loc, argc,
 * microtask in %rdi, %esi, %rdx; the first three shared-variable pointers
 * in %rcx, %r8, %r9; the other argc - 3 on the caller's stack above the
 * return address (16(%rbp) on); %al: vector registers used (kept, though
 * the varargs are pointers and libomp reads them as such: the vector
 * registers themselves are not saved around ngo_kmp_fork_prepare).
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
#ifdef __CET__
#define NGO_ENDBR "endbr64\n"
#else
#define NGO_ENDBR ""
#endif
__asm__(".text\n"
        ".globl __kmpc_fork_call\n"
        ".type __kmpc_fork_call,@function\n"
        ".p2align 4\n"
        "__kmpc_fork_call:\n"
        ".cfi_startproc\n"
        NGO_ENDBR
        "pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "movq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "subq $64, %rsp\n"
        "movq %rax, -8(%rbp)\n"
        "movq %rdi, -16(%rbp)\n"
        "movq %rsi, -24(%rbp)\n"
        "movq %rdx, -32(%rbp)\n"
        "movq %rcx, -40(%rbp)\n"
        "movq %r8, -48(%rbp)\n"
        "movq %r9, -56(%rbp)\n"
        "movq 8(%rbp), %rdx\n"
        "call ngo_kmp_fork_prepare\n"
        "movq %rax, -64(%rbp)\n"
        /* argc - 3 stack arguments, when argc > 3 (argc: an int) */
        "movslq -24(%rbp), %rcx\n"
        "subq $3, %rcx\n"
        "jle 2f\n"
        "leaq 1(%rcx), %rax\n"
        "andq $-2, %rax\n"
        "shlq $3, %rax\n"
        "subq %rax, %rsp\n"
        "1:\n"
        "movq 8(%rbp,%rcx,8), %rax\n"
        "movq %rax, -8(%rsp,%rcx,8)\n"
        "decq %rcx\n"
        "jnz 1b\n"
        "2:\n"
        "movq -16(%rbp), %rdi\n"
        "movq -24(%rbp), %rsi\n"
        "movq -32(%rbp), %rdx\n"
        "movq -40(%rbp), %rcx\n"
        "movq -48(%rbp), %r8\n"
        "movq -56(%rbp), %r9\n"
        "movq -64(%rbp), %r11\n"
        "movq -8(%rbp), %rax\n"
        "call *%r11\n"
        "call ngo_region_end\n"
        "leave\n"
        ".cfi_def_cfa %rsp, 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size __kmpc_fork_call, .-__kmpc_fork_call\n");
#endif
