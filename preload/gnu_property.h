/* The GNU property note of the entry stubs (kmp_stub_<arch>.S): an
 * assembly file says which control-flow protections its code keeps (x86
 * IBT/SHSTK, aarch64 BTI/PAC), as the compiler does for the C objects of
 * the same build, or the linker drops the feature for the whole library.
 *   ngo_gnu_property TYPE, BITS   one NT_GNU_PROPERTY_TYPE_0 note with the
 *                                 AND-property TYPE holding BITS */
        .macro ngo_gnu_property type, bits
        .pushsection .note.gnu.property, "a"
        .p2align 3
        .long   4                       /* name size */
        .long   16                      /* descriptor size */
        .long   5                       /* NT_GNU_PROPERTY_TYPE_0 */
        .asciz  "GNU"
        .long   \type
        .long   4
        .long   \bits
        .long   0
        .popsection
        .endm
