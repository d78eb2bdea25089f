/* Which OpenMP runtime a call site would have called: the preload defines
 * GOMP_parallel & co. in the global scope, so every caller binds to it,
 * also the libraries Python loads RTLD_LOCAL with their own runtime
 * (OpenBLAS's libgomp, a wheel's bundled libgomp-<hash>.so). The real
 * entry point is the one the CALLER's own dependencies define: looked up
 * from the caller's object (dladdr of the return address, its handle,
 * dlsym, which searches that object and its dependencies), else the next
 * definition after the preload in the global scope (RTLD_NEXT). The
 * answer is cached per call site: a site calls one function of one
 * object for the life of that object. */
#include "gov.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const sym_names[NGO_SYM_COUNT] = {
    [NGO_GOMP_PARALLEL] = "GOMP_parallel",
    [NGO_GOMP_PARALLEL_START] = "GOMP_parallel_start",
    [NGO_GOMP_PARALLEL_END] = "GOMP_parallel_end",
    [NGO_GOMP_PARALLEL_REDUCTIONS] = "GOMP_parallel_reductions",
    [NGO_GOMP_PARALLEL_SECTIONS] = "GOMP_parallel_sections",
    [NGO_GOMP_PARALLEL_SECTIONS_START] = "GOMP_parallel_sections_start",
    [NGO_GOMP_PARALLEL_LOOP_STATIC] = "GOMP_parallel_loop_static",
    [NGO_GOMP_PARALLEL_LOOP_DYNAMIC] = "GOMP_parallel_loop_dynamic",
    [NGO_GOMP_PARALLEL_LOOP_GUIDED] = "GOMP_parallel_loop_guided",
    [NGO_GOMP_PARALLEL_LOOP_RUNTIME] = "GOMP_parallel_loop_runtime",
    [NGO_GOMP_PARALLEL_LOOP_NONMONOTONIC_DYNAMIC] = "GOMP_parallel_loop_nonmonotonic_dynamic",
    [NGO_GOMP_PARALLEL_LOOP_NONMONOTONIC_GUIDED] = "GOMP_parallel_loop_nonmonotonic_guided",
    [NGO_GOMP_PARALLEL_LOOP_NONMONOTONIC_RUNTIME] = "GOMP_parallel_loop_nonmonotonic_runtime",
    [NGO_GOMP_PARALLEL_LOOP_MAYBE_NONMONOTONIC_RUNTIME] =
        "GOMP_parallel_loop_maybe_nonmonotonic_runtime",
    [NGO_GOMP_PARALLEL_LOOP_STATIC_START] = "GOMP_parallel_loop_static_start",
    [NGO_GOMP_PARALLEL_LOOP_DYNAMIC_START] = "GOMP_parallel_loop_dynamic_start",
    [NGO_GOMP_PARALLEL_LOOP_GUIDED_START] = "GOMP_parallel_loop_guided_start",
    [NGO_GOMP_PARALLEL_LOOP_RUNTIME_START] = "GOMP_parallel_loop_runtime_start",
    [NGO_KMPC_FORK_CALL] = "__kmpc_fork_call",
    [NGO_KMPC_FORK_CALL_IF] = "__kmpc_fork_call_if",
    [NGO_KMPC_PUSH_NUM_THREADS] = "__kmpc_push_num_threads",
    [NGO_KMPC_GLOBAL_THREAD_NUM] = "__kmpc_global_thread_num",
    [NGO_OMP_GET_MAX_THREADS] = "omp_get_max_threads",
    [NGO_OMP_SET_NUM_THREADS] = "omp_set_num_threads",
    [NGO_OMP_GET_LEVEL] = "omp_get_level",
    [NGO_OMP_GET_ACTIVE_LEVEL] = "omp_get_active_level",
    [NGO_OMP_GET_MAX_ACTIVE_LEVELS] = "omp_get_max_active_levels",
    [NGO_OMP_GET_TEAM_SIZE] = "omp_get_team_size",
    [NGO_CBLAS_SGEMM] = "cblas_sgemm",
    [NGO_CBLAS_DGEMM] = "cblas_dgemm",
    [NGO_CBLAS_CGEMM] = "cblas_cgemm",
    [NGO_CBLAS_ZGEMM] = "cblas_zgemm",
    [NGO_CBLAS_SSYRK] = "cblas_ssyrk",
    [NGO_CBLAS_DSYRK] = "cblas_dsyrk",
    [NGO_CBLAS_CSYRK] = "cblas_csyrk",
    [NGO_CBLAS_ZSYRK] = "cblas_zsyrk",
    [NGO_SGEMM] = "sgemm_",
    [NGO_DGEMM] = "dgemm_",
    [NGO_SGESV] = "sgesv_",
    [NGO_DGESV] = "dgesv_",
    [NGO_CGESV] = "cgesv_",
    [NGO_ZGESV] = "zgesv_",
    [NGO_OPENBLAS_SET_NUM_THREADS] = "openblas_set_num_threads",
};

/* The runtimes met so far (a process rarely has more than two). */
#define MAX_RT 16
static ngo_rt rts[MAX_RT];
static _Atomic unsigned n_rts;
static atomic_flag rt_lock = ATOMIC_FLAG_INIT;

/* Call site -> runtime, open addressing; a full table only costs speed. */
#define SITES 4096
typedef struct site_entry {
    _Atomic uintptr_t site;
    const ngo_rt *_Atomic rt;   /* _Atomic(const ngo_rt *), spelt so pmccabe reads it */
} site_entry;
static site_entry sites[SITES];

static uintptr_t self_base(void)
{
    static uintptr_t base;
    Dl_info di;
    if (!base && dladdr((void *)&self_base, &di) && di.dli_fbase)
        base = (uintptr_t)di.dli_fbase;
    return base;
}

static uintptr_t object_of(const void *p, const char **name)
{
    Dl_info di;
    if (!p || !dladdr(p, &di) || !di.dli_fbase)
        return 0;
    if (name)
        *name = di.dli_fname;
    return (uintptr_t)di.dli_fbase;
}

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path ? path : "?";
}

static const char *kind_of(const char *file)
{
    if (strncmp(file, "libgomp", 7) == 0)
        return "libgomp";
    if (strncmp(file, "libomp", 6) == 0 || strncmp(file, "libiomp", 7) == 0)
        return "libomp";
    return NULL;
}

/* The runtime at @p base (found or added; NULL when the table is full). */
static const ngo_rt *rt_at(uintptr_t base, const char *path)
{
    unsigned n = atomic_load_explicit(&n_rts, memory_order_acquire);
    for (unsigned i = 0; i < n; i++)
        if (rts[i].base == base)
            return &rts[i];
    while (atomic_flag_test_and_set_explicit(&rt_lock, memory_order_acquire))
        ;
    const ngo_rt *found = NULL;
    n = atomic_load_explicit(&n_rts, memory_order_relaxed);
    for (unsigned i = 0; i < n && !found; i++)
        if (rts[i].base == base)
            found = &rts[i];
    if (!found && n < MAX_RT) {
        ngo_rt *r = &rts[n];
        memset(r, 0, sizeof *r);
        r->base = base;
        /* RTLD_NOLOAD: only ever a handle of what is already loaded; kept
         * open, so the runtime cannot go away while sites point at it. */
        r->handle = dlopen(path && *path ? path : NULL, RTLD_LAZY | RTLD_NOLOAD);
        const char *file = base_name(path);
        size_t len = strnlen(file, sizeof r->name - 1);
        memcpy(r->name, file, len);
        r->name[len] = '\0';
        r->kind = kind_of(r->name) ? kind_of(r->name) : r->name;
        for (int s = 0; s < NGO_SYM_COUNT && r->handle; s++) {
            void *p = dlsym(r->handle, sym_names[s]);
            /* Only this object's own definitions (not a dependency's). */
            r->fn[s] = object_of(p, NULL) == base ? p : NULL;
        }
        atomic_store_explicit(&n_rts, n + 1, memory_order_release);
        found = r;
    }
    atomic_flag_clear_explicit(&rt_lock, memory_order_release);
    return found;
}

static int dyn_defines(const struct dl_phdr_info *info, const char *name);

/* The first loaded object (not this library) that defines @p name. */
struct find_def {
    const char *name;
    void *p;
};

static int find_def_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find_def *f = data;
    if (!info->dlpi_name || !*info->dlpi_name || info->dlpi_addr == self_base() ||
        strncmp(base_name(info->dlpi_name), "linux-vdso", 10) == 0 || !dyn_defines(info, f->name))
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
        f->p = dlsym(h, f->name);
        dlclose(h);
    }
    return f->p != NULL;
}

/* The definition of @p sym the caller at @p site would have bound to. */
static void *real_for_site(uintptr_t site, enum ngo_sym sym)
{
    const char *caller = NULL;
    void *p = NULL;
    if (object_of((void *)site, &caller) && caller) {
        /* The main program's handle is the global scope, where the
         * preload comes first: that answer is ours, and RTLD_NEXT below
         * gives the real one. */
        void *h = dlopen(caller, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = dlsym(h, sym_names[sym]);
            dlclose(h);
        }
    }
    if (!p || object_of(p, NULL) == self_base())
        p = dlsym(RTLD_NEXT, sym_names[sym]);
    if (!p) {
        /* Called through a pointer another object resolved (scikit-learn
         * calls dgemm_ through scipy's cython_blas table, which bound to
         * this library): neither the caller's scope nor the global one
         * has it; the loaded object that defines it does. */
        struct find_def f = {sym_names[sym], NULL};
        dl_iterate_phdr(find_def_one, &f);
        p = f.p;
    }
    return p;
}

static void no_runtime(enum ngo_sym sym)
{
    ngo_say("no loaded object defines %s for its caller; exiting as the dynamic linker "
            "would have", sym_names[sym]);
    _exit(127);
}

static const ngo_rt *resolve(uintptr_t site, enum ngo_sym sym)
{
    const char *path = NULL;
    void *p = real_for_site(site, sym);
    uintptr_t base = object_of(p, &path);
    const ngo_rt *rt = base ? rt_at(base, path) : NULL;
    if (!rt || !rt->fn[sym])
        no_runtime(sym);
    return rt;
}

static const ngo_rt *site_lookup(uintptr_t site, enum ngo_sym sym)
{
    size_t h = (size_t)((site >> 2) * 0x9E3779B97F4A7C15ull >> 52) % SITES;
    for (unsigned probe = 0; probe < 16; probe++) {
        site_entry *e = &sites[(h + probe) % SITES];
        uintptr_t s = atomic_load_explicit(&e->site, memory_order_acquire);
        if (s == site) {
            const ngo_rt *rt = atomic_load_explicit(&e->rt, memory_order_acquire);
            if (rt && rt->fn[sym])
                return rt;
            return resolve(site, sym);   /* being filled in by another thread */
        }
        if (s == 0) {
            const ngo_rt *rt = resolve(site, sym);
            uintptr_t zero = 0;
            if (atomic_compare_exchange_strong(&e->site, &zero, site))
                atomic_store_explicit(&e->rt, rt, memory_order_release);
            return rt;
        }
    }
    return resolve(site, sym);
}

/* The last site this thread asked for, and its runtime: a pool's caller
 * opens its regions from one site, and the hash above cost about 1% of
 * a 256-double region (perf, bench/omp_region_cost.c). */
static _Thread_local __attribute__((tls_model("initial-exec"))) uintptr_t t_site;
static _Thread_local __attribute__((tls_model("initial-exec"))) const ngo_rt *t_site_rt;

const ngo_rt *ngo_rt_for_site(uintptr_t site, enum ngo_sym sym)
{
    if (site == t_site && t_site_rt->fn[sym])
        return t_site_rt;
    const ngo_rt *rt = site_lookup(site, sym);
    t_site = site;
    t_site_rt = rt;
    return rt;
}

/* Is this thread inside a parallel region of a libgomp met so far? (A
 * BLAS call from a team's thread is the team's work, not a caller.)
 * libomp is not asked: its omp_get_level registers a thread it has not
 * seen as a new root. */
int ngo_in_gomp_region(void)
{
    unsigned n = atomic_load_explicit(&n_rts, memory_order_acquire);
    for (unsigned i = 0; i < n; i++)
        if (rts[i].fn[NGO_OMP_GET_LEVEL] && strcmp(rts[i].kind, "libgomp") == 0 &&
            ((int (*)(void))rts[i].fn[NGO_OMP_GET_LEVEL])() > 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Runtimes linked in statically: said once, never guessed             */
/* ------------------------------------------------------------------ */

/* An object's dynamic symbol table, from its DT_* entries (in memory: the
 * loader mapped it). nsyms comes from DT_HASH, else from DT_GNU_HASH. */
typedef struct dyn_table {
    const ElfW(Sym) *symtab;
    const char *strtab;
    size_t syment, strsz, nsyms;
    const uint32_t *gnuhash;
} dyn_table;

/* DT_GNU_HASH gives no count: the highest symbol index in the buckets,
 * then the end of its chain (the last entry has its low bit set). */
static size_t gnu_hash_nsyms(const uint32_t *gnuhash)
{
    uint32_t nbuckets = gnuhash[0], symoffset = gnuhash[1], bloom = gnuhash[2];
    const uint32_t *buckets = gnuhash + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (buckets[b] > last)
            last = buckets[b];
    if (last >= symoffset)
        while (!(chain[last - symoffset] & 1))
            last++;
    return last ? last + 1 : 0;
}

/* The table's parts from the PT_DYNAMIC segment; 0 when it has none. */
static int dyn_table_of(const struct dl_phdr_info *info, dyn_table *t)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    *t = (dyn_table){.syment = sizeof(ElfW(Sym))};
    if (!dyn)
        return 0;
    /* The loader relocates these addresses, except in objects it did not
     * load itself (the vDSO): there they are offsets from the base. */
#define DPTR(d) ((d)->d_un.d_ptr < info->dlpi_addr ? (d)->d_un.d_ptr + info->dlpi_addr : (d)->d_un.d_ptr)
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: t->symtab = (const ElfW(Sym) *)DPTR(dyn); break;
        case DT_STRTAB: t->strtab = (const char *)DPTR(dyn); break;
        case DT_STRSZ: t->strsz = dyn->d_un.d_val; break;
        case DT_SYMENT: t->syment = dyn->d_un.d_val; break;
        case DT_HASH: t->nsyms = ((const uint32_t *)DPTR(dyn))[1]; break;
        case DT_GNU_HASH: t->gnuhash = (const uint32_t *)DPTR(dyn); break;
        default: break;
        }
    }
#undef DPTR
    return 1;
}

/* Does the object's dynamic symbol table DEFINE @p name? */
static int dyn_defines(const struct dl_phdr_info *info, const char *name)
{
    dyn_table t;
    if (!dyn_table_of(info, &t) || !t.symtab || !t.strtab || t.syment != sizeof(ElfW(Sym)))
        return 0;
    if (!t.nsyms && t.gnuhash)
        t.nsyms = gnu_hash_nsyms(t.gnuhash);
    for (size_t i = 1; i < t.nsyms; i++) {
        const ElfW(Sym) *s = &t.symtab[i];
        if (s->st_shndx != SHN_UNDEF && s->st_name < t.strsz &&
            strcmp(t.strtab + s->st_name, name) == 0)
            return 1;
    }
    return 0;
}

/* The section headers of the ELF file on fd (malloc'd, *n of them), or
 * NULL when it is not ELF of our class or has none or over 4096. */
static ElfW(Shdr) *read_shdrs(int fd, unsigned *n)
{
    ElfW(Ehdr) eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shnum == 0 || eh.e_shnum > 4096)
        return NULL;
    size_t shsz = (size_t)eh.e_shnum * sizeof(ElfW(Shdr));
    ElfW(Shdr) *sh = malloc(shsz);
    if (!sh || pread(fd, sh, shsz, (off_t)eh.e_shoff) != (ssize_t)shsz) {
        free(sh);
        return NULL;
    }
    *n = eh.e_shnum;
    return sh;
}

/* Does one of @p names have a defined symbol in [syms, syms + n)? */
static int syms_define(const ElfW(Sym) *syms, size_t n, const char *str, size_t strsz,
                       const char *const *names, unsigned nnames)
{
    for (size_t k = 1; k < n; k++)
        for (unsigned j = 0; j < nnames; j++)
            if (syms[k].st_shndx != SHN_UNDEF && syms[k].st_name < strsz &&
                strcmp(str + syms[k].st_name, names[j]) == 0)
                return 1;
    return 0;
}

/* One SHT_SYMTAB section and its string table, read from fd: does it
 * define one of @p names? Either over 32 MiB is not read (0). */
static int symtab_defines(int fd, const ElfW(Shdr) *symsh, const ElfW(Shdr) *st,
                          const char *const *names, unsigned nnames)
{
    if (symsh->sh_size > (32u << 20) || st->sh_size > (32u << 20))
        return 0;
    int found = 0;
    ElfW(Sym) *syms = malloc(symsh->sh_size);
    char *str = malloc(st->sh_size + 1);
    if (syms && str &&
        pread(fd, syms, symsh->sh_size, (off_t)symsh->sh_offset) == (ssize_t)symsh->sh_size &&
        pread(fd, str, st->sh_size, (off_t)st->sh_offset) == (ssize_t)st->sh_size) {
        str[st->sh_size] = '\0';
        found = syms_define(syms, symsh->sh_size / sizeof(ElfW(Sym)), str, st->sh_size, names,
                            nnames);
    }
    free(syms);
    free(str);
    return found;
}

/* The main program's own symbol table (.symtab, read from the file: a
 * runtime linked in from libgomp.a/libomp.a exports nothing). Bounded:
 * a symbol table over 32 MiB is not read (the program is not told). */
static int exe_symtab_defines(const char *const *names, unsigned nnames)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), found = 0;
    unsigned n = 0;
    if (fd < 0)
        return 0;
    ElfW(Shdr) *sh = read_shdrs(fd, &n);
    for (unsigned i = 0; sh && i < n && !found; i++)
        if (sh[i].sh_type == SHT_SYMTAB && sh[i].sh_link < n)
            found = symtab_defines(fd, &sh[i], &sh[sh[i].sh_link], names, nnames);
    free(sh);
    close(fd);
    return found;
}

static const char *const static_marks[] = {"GOMP_parallel", "__kmpc_fork_call"};

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *path = info->dlpi_name;
    if (!path || !*path || info->dlpi_addr == self_base())
        return 0;   /* the main program (below) or this library */
    const char *file = base_name(path);
    if (kind_of(file) || strncmp(file, "linux-vdso", 10) == 0)
        return 0;   /* a shared runtime: its callers come through us */
    for (unsigned i = 0; i < 2; i++)
        if (dyn_defines(info, static_marks[i])) {
            ngo_say("%s carries its own OpenMP runtime (linked in statically): its own "
                    "regions are not governed; calls into it from other objects are", path);
            int *published = data;
            if (!*published)   /* one mark for check, however many libraries */
                ngo_publish(NG_OMP_MARK_STATIC_LIB);
            *published = 1;
            return 0;
        }
    return 0;
}

void ngo_rt_scan_static(void)
{
    int published = 0;
    dl_iterate_phdr(scan_one, &published);
    if (exe_symtab_defines(static_marks, 2)) {
        char exe[256];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        ngo_say("%s has an OpenMP runtime linked in statically: its regions are not "
                "governed (link it with -fopenmp against the shared runtime)", exe[0] ? exe : "the program");
        ngo_publish(NG_OMP_MARK_STATIC);
    }
}
