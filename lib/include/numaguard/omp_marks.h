/**
 * @file numaguard/omp_marks.h
 * @brief What the OpenMP governor (libnumaguard-omp.so) tells
 *        `numaguard check` about the runtimes it cannot govern.
 *
 * The governor says once per process, on stderr, when it meets an OpenMP
 * runtime or a BLAS pool it cannot govern. So that `numaguard check` can
 * say it too, for a running process and without trusting a file the
 * process's user could write, the governor also maps one page of an
 * empty memfd named NG_OMP_MARK_PREFIX + the kind ("numaguard-omp:
 * ungoverned:static"). The kernel shows that name in /proc/PID/maps and
 * numa_maps (file=/memfd:NAME (deleted)), which check reads already; a
 * forked child inherits the mapping, an exec drops it (the new program's
 * governor looks again). It is the process's own claim, like its rank:
 * check matches the fixed names below and prints only its own text.
 *
 * Plain C macros (no hwloc, no libnumaguard): preload/ includes it too.
 * docs/omp-adaptive.md ("What it cannot see"), docs/check.md.
 */
#ifndef NUMAGUARD_OMP_MARKS_H
#define NUMAGUARD_OMP_MARKS_H

/** The memfd name's prefix; the kind follows. */
#define NG_OMP_MARK_PREFIX "numaguard-omp:ungoverned:"

/** The kinds: the name after the prefix, and its bit in
 *  ng_proc_view.omp_ungoverned. */
#define NG_OMP_MARK_STATIC "static"            /**< the program has an OpenMP runtime linked in */
#define NG_OMP_UNGOVERNED_STATIC 1u
#define NG_OMP_MARK_STATIC_LIB "static-lib"    /**< a loaded library carries its own runtime */
#define NG_OMP_UNGOVERNED_STATIC_LIB 2u
#define NG_OMP_MARK_BLIS "blis"                /**< BLIS sized by ways (BLIS_JC_NT & co) */
#define NG_OMP_UNGOVERNED_BLIS 4u
#define NG_OMP_MARK_LIBOMP_ARCH "libomp-arch"  /**< libomp on an architecture without the entry stub */
#define NG_OMP_UNGOVERNED_LIBOMP_ARCH 8u

/** One kind: its name and its bit. */
typedef struct ng_omp_mark {
    const char *kind;
    unsigned bit;
} ng_omp_mark;

/** Every kind, in this order, as an initializer of an ng_omp_mark array
 *  (check's reader and its JSON use the same table). */
#define NG_OMP_MARK_TABLE                                   \
    {                                                       \
        {NG_OMP_MARK_STATIC, NG_OMP_UNGOVERNED_STATIC},           \
        {NG_OMP_MARK_STATIC_LIB, NG_OMP_UNGOVERNED_STATIC_LIB},   \
        {NG_OMP_MARK_BLIS, NG_OMP_UNGOVERNED_BLIS},               \
        {NG_OMP_MARK_LIBOMP_ARCH, NG_OMP_UNGOVERNED_LIBOMP_ARCH}, \
    }

#endif /* NUMAGUARD_OMP_MARKS_H */
