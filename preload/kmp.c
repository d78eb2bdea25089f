/* LLVM/Intel libomp's entry points (clang -fopenmp, icx, the Intel and
 * LLVM runtimes). A region is __kmpc_push_num_threads (only with a
 * num_threads clause) then __kmpc_fork_call(loc, argc, microtask, ...):
 * the governor's answer is pushed just before the fork, the way the
 * compiler pushes a clause. __kmpc_fork_call is variadic (argc shared
 * variables, any number): it cannot be re-called from C with its
 * arguments, so a few instructions keep the caller's registers and stack
 * as they are, ask ngo_kmp_fork_prepare for the real entry point and
 * jump there. x86-64 only; elsewhere libomp's regions are not governed
 * (libgomp's are). */
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
 * return address; returns the runtime's __kmpc_fork_call. */
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
}

#if defined(__x86_64__)
/* __kmpc_fork_call: save the argument registers (and %rax: %al counts the
 * vector registers of a variadic call), call the C part with the return
 * address as the site, restore, tail-jump. Seven pushes keep the stack
 * 16-byte aligned at the call; stack arguments are never touched. */
#ifdef __CET__
#define NGO_ENDBR "endbr64\n"
#else
#define NGO_ENDBR ""
#endif
__asm__(".text\n"
        ".globl __kmpc_fork_call\n"
        ".type __kmpc_fork_call,@function\n"
        "__kmpc_fork_call:\n"
        ".cfi_startproc\n"
        NGO_ENDBR
        "pushq %rax\n .cfi_adjust_cfa_offset 8\n"
        "pushq %rdi\n .cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n .cfi_adjust_cfa_offset 8\n"
        "pushq %rdx\n .cfi_adjust_cfa_offset 8\n"
        "pushq %rcx\n .cfi_adjust_cfa_offset 8\n"
        "pushq %r8\n .cfi_adjust_cfa_offset 8\n"
        "pushq %r9\n .cfi_adjust_cfa_offset 8\n"
        "movq 56(%rsp), %rdx\n"
        "call ngo_kmp_fork_prepare\n"
        "movq %rax, %r11\n"
        "popq %r9\n .cfi_adjust_cfa_offset -8\n"
        "popq %r8\n .cfi_adjust_cfa_offset -8\n"
        "popq %rcx\n .cfi_adjust_cfa_offset -8\n"
        "popq %rdx\n .cfi_adjust_cfa_offset -8\n"
        "popq %rsi\n .cfi_adjust_cfa_offset -8\n"
        "popq %rdi\n .cfi_adjust_cfa_offset -8\n"
        "popq %rax\n .cfi_adjust_cfa_offset -8\n"
        "jmp *%r11\n"
        ".cfi_endproc\n"
        ".size __kmpc_fork_call, .-__kmpc_fork_call\n");
#endif
