/* __kmpc_fork_call(loc, argc, microtask, ...) for aarch64 (AAPCS64, as
 * Linux uses it: variadic arguments passed like named ones): the entry
 * stub of preload/kmp.c, the same steps as kmp_stub_x86_64.S. It asks
 * ngo_kmp_fork_prepare(loc, argc, call site) for the real entry point,
 * calls it with the caller's registers and a copy of its stack arguments,
 * then calls ngo_region_end.
 *
 * loc, argc, microtask in x0, w1, x2; the first five shared-variable
 * pointers in x3-x7; the other argc - 5 on the caller's stack, 8 bytes
 * each from its sp at the call (our CFA). Passed through unchanged: x0-x7,
 * x8 (indirect result) and q0-q7 (libomp reads pointers, but a compiler
 * may use them for a variadic call); the callee-saved x19-x28 and d8-d15
 * are the C code's to keep, and ours (x19) is saved; x18 (the platform
 * register) is never touched; the copied stack arguments are rounded up
 * to an even count, so sp stays 16-byte aligned at each call.
 *
 * A frame record (x29, x30) and CFI with x29 as the CFA register: gdb,
 * perf, backtrace() and libgcc's unwinder (pthread_exit's forced unwind)
 * go through it to the caller. With -mbranch-protection: BTI c as the
 * landing pad, PACIASP/AUTIASP (or the B key) around the saved x30, and the
 * matching GNU property note, so the library keeps BTI/PAC.
 *
 *   frame (x29 = sp after the push; the caller's stack arguments at x29 + 240):
 *     0 x29, x30      16 x19, x20     32 x0, x1     48 x2, x3     64 x4, x5
 *    80 x6, x7        96 x8          112 q0-q7 (128 bytes)            240 */
#include "gnu_property.h"

#define FRAME 240

#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define NGO_BTI_C hint #34
#define NGO_PROP_BTI 1
#else
#define NGO_BTI_C
#define NGO_PROP_BTI 0
#endif
#if defined(__ARM_FEATURE_PAC_DEFAULT) && (__ARM_FEATURE_PAC_DEFAULT & 2)
/* B key: pacibsp / autibsp, and the unwinder told which key signed x30. */
#define NGO_PAC_KEY .cfi_b_key_frame
#define NGO_PAC_SIGN hint #27
#define NGO_PAC_AUTH hint #31
#define NGO_PAC_CFI .cfi_negate_ra_state
#define NGO_PROP_PAC 2
#elif defined(__ARM_FEATURE_PAC_DEFAULT) && (__ARM_FEATURE_PAC_DEFAULT & 1)
#define NGO_PAC_KEY
#define NGO_PAC_SIGN hint #25
#define NGO_PAC_AUTH hint #29
#define NGO_PAC_CFI .cfi_negate_ra_state
#define NGO_PROP_PAC 2
#else
#define NGO_PAC_KEY
#define NGO_PAC_SIGN
#define NGO_PAC_AUTH
#define NGO_PAC_CFI
#define NGO_PROP_PAC 0
#endif

        .text
        .globl  __kmpc_fork_call
        .type   __kmpc_fork_call, %function
        .p2align 3
__kmpc_fork_call:
        .cfi_startproc
        NGO_PAC_KEY
        NGO_BTI_C
        mov     x9, x30                 /* the call site, before PAC signs x30 */
        NGO_PAC_SIGN
        NGO_PAC_CFI
        stp     x29, x30, [sp, #-FRAME]!
        .cfi_def_cfa_offset FRAME
        .cfi_offset x29, -FRAME
        .cfi_offset x30, -FRAME + 8
        mov     x29, sp
        .cfi_def_cfa_register x29
        stp     x19, x20, [x29, #16]
        .cfi_offset x19, -FRAME + 16
        .cfi_offset x20, -FRAME + 24
        stp     x0, x1, [x29, #32]
        stp     x2, x3, [x29, #48]
        stp     x4, x5, [x29, #64]
        stp     x6, x7, [x29, #80]
        str     x8, [x29, #96]
        stp     q0, q1, [x29, #112]
        stp     q2, q3, [x29, #144]
        stp     q4, q5, [x29, #176]
        stp     q6, q7, [x29, #208]
        mov     x2, x9                  /* ngo_kmp_fork_prepare(loc, argc, site) */
        bl      ngo_kmp_fork_prepare
        mov     x19, x0                 /* the runtime's __kmpc_fork_call */
        /* argc - 5 stack arguments, when argc > 5 (argc: an int, the low
         * half of the saved x1) */
        ldrsw   x9, [x29, #40]
        subs    x9, x9, #5
        b.le    2f
        add     x10, x9, #1
        and     x10, x10, #-2
        sub     sp, sp, x10, lsl #3
        add     x11, x29, #FRAME
        mov     x12, #0
1:
        ldr     x13, [x11, x12, lsl #3]
        str     x13, [sp, x12, lsl #3]
        add     x12, x12, #1
        cmp     x12, x9
        b.lt    1b
2:
        ldp     q0, q1, [x29, #112]
        ldp     q2, q3, [x29, #144]
        ldp     q4, q5, [x29, #176]
        ldp     q6, q7, [x29, #208]
        ldr     x8, [x29, #96]
        ldp     x6, x7, [x29, #80]
        ldp     x4, x5, [x29, #64]
        ldp     x2, x3, [x29, #48]
        ldp     x0, x1, [x29, #32]
        blr     x19
        bl      ngo_region_end
        mov     sp, x29
        ldp     x19, x20, [x29, #16]
        ldp     x29, x30, [sp], #FRAME
        .cfi_def_cfa sp, 0
        .cfi_restore x19
        .cfi_restore x20
        .cfi_restore x29
        .cfi_restore x30
        NGO_PAC_AUTH
        NGO_PAC_CFI
        ret
        .cfi_endproc
        .size   __kmpc_fork_call, .-__kmpc_fork_call

/* GNU_PROPERTY_AARCH64_FEATURE_1_AND: BTI (1), PAC (2), what the C
 * objects of the same build say; absent when neither is on. */
#if NGO_PROP_BTI || NGO_PROP_PAC
        ngo_gnu_property 0xc0000000, NGO_PROP_BTI | NGO_PROP_PAC
#endif
        /* No executable stack. */
        .section .note.GNU-stack, "", %progbits
