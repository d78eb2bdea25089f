/* The Slurm release a SPANK plugin was built for, read from the file
 * without loading it (loading runs its constructors, as root): SPANK_PLUGIN()
 * defines `const unsigned int plugin_version = SLURM_VERSION_NUMBER`, an
 * initialised dynamic symbol. Its value lies in the section the symbol
 * names: file offset = sh_offset + (st_value - sh_addr). ELF64 and ELF32,
 * either byte order; every offset and size is checked against the file. */
#include "numaguard.h"
#include "private/doctor.h"

#include <stdlib.h>
#include <string.h>

#define ELF_MAX (256u << 20)   /* the largest plugin we read */

typedef struct elf {
    const unsigned char *b;
    size_t len;
    int is64, big;
} elf;

/* An unsigned field of @p size bytes at @p off; 0 (and *ok = 0) when out of bounds. */
static unsigned long long rd(const elf *e, size_t off, unsigned size, int *ok)
{
    if (off > e->len || size > e->len - off) {
        *ok = 0;
        return 0;
    }
    unsigned long long v = 0;
    for (unsigned i = 0; i < size; i++) {
        unsigned k = e->big ? i : size - 1 - i;
        v = (v << 8) | e->b[off + k];
    }
    return v;
}

/* Section header @p i: type, addr, offset, size, link, entsize. */
typedef struct shdr {
    unsigned long long type, addr, off, size, link, entsize;
} shdr;

static int section(const elf *e, unsigned long long shoff, unsigned shentsize, unsigned i,
                   shdr *s)
{
    int ok = 1;
    size_t h = (size_t)shoff + (size_t)i * shentsize;
    if (shoff > e->len)
        return -1;
    unsigned w = e->is64 ? 8 : 4;
    s->type = rd(e, h + 4, 4, &ok);
    s->addr = rd(e, h + (e->is64 ? 16 : 12), w, &ok);
    s->off = rd(e, h + (e->is64 ? 24 : 16), w, &ok);
    s->size = rd(e, h + (e->is64 ? 32 : 20), w, &ok);
    s->link = rd(e, h + (e->is64 ? 40 : 24), 4, &ok);
    s->entsize = rd(e, h + (e->is64 ? 56 : 36), w, &ok);
    return ok ? 0 : -1;
}

/* The symbol's section index and value in .dynsym (type SHT_DYNSYM = 11). */
static int find_symbol(const elf *e, const shdr *sym, const shdr *str, const char *name,
                       unsigned *shndx, unsigned long long *value)
{
    unsigned esz = e->is64 ? 24 : 16;
    if (sym->entsize && sym->entsize != esz)
        return -1;
    size_t nlen = strlen(name);
    for (unsigned long long k = 0; k < sym->size / esz; k++) {
        int ok = 1;
        size_t s = (size_t)(sym->off + k * esz);
        unsigned long long nm = rd(e, s, 4, &ok);
        if (!ok || nm >= str->size || str->off + nm + nlen + 1 > e->len)
            return -1;
        const char *p = (const char *)e->b + str->off + nm;
        if (memcmp(p, name, nlen + 1) != 0)
            continue;
        *value = rd(e, s + (e->is64 ? 8 : 4), e->is64 ? 8 : 4, &ok);
        *shndx = (unsigned)rd(e, s + (e->is64 ? 6 : 14), 2, &ok);
        return ok ? 0 : -1;
    }
    return -1;
}

/* The ELF header: class, byte order, section table. */
static int header(elf *e, unsigned long long *shoff, unsigned *shentsize, unsigned *shnum,
                  char *why, size_t whylen)
{
    int ok = 1;
    if (e->len < 52 || memcmp(e->b, "\177ELF", 4) != 0)
        return ngi_fail(why, whylen, "not an ELF file");
    e->is64 = e->b[4] == 2;
    e->big = e->b[5] == 2;
    if ((e->b[4] != 1 && e->b[4] != 2) || (e->b[5] != 1 && e->b[5] != 2))
        return ngi_fail(why, whylen, "unknown ELF class or byte order");
    *shoff = rd(e, e->is64 ? 40 : 32, e->is64 ? 8 : 4, &ok);
    *shentsize = (unsigned)rd(e, e->is64 ? 58 : 46, 2, &ok);
    *shnum = (unsigned)rd(e, e->is64 ? 60 : 48, 2, &ok);
    if (!ok || *shentsize < (e->is64 ? 64u : 40u) || *shnum == 0 || *shnum > 65000)
        return ngi_fail(why, whylen, "damaged ELF header");
    return 0;
}

int ngi_elf_u32_symbol_mem(const unsigned char *buf, size_t len, const char *name,
                           uint32_t *value, char *why, size_t whylen)
{
    elf e = {.b = buf, .len = len};
    unsigned long long shoff = 0, v = 0;
    unsigned shentsize = 0, shnum = 0, shndx = 0;
    if (header(&e, &shoff, &shentsize, &shnum, why, whylen) < 0)
        return -1;
    for (unsigned i = 0; i < shnum; i++) {
        shdr sym, str, data;
        if (section(&e, shoff, shentsize, i, &sym) < 0)
            return ngi_fail(why, whylen, "damaged section table");
        if (sym.type != 11 || sym.link >= shnum || section(&e, shoff, shentsize,
                                                            (unsigned)sym.link, &str) < 0)
            continue;
        if (sym.off > len || sym.size > len - sym.off || str.off > len || str.size > len - str.off)
            return ngi_fail(why, whylen, "damaged dynamic symbol table");
        if (find_symbol(&e, &sym, &str, name, &shndx, &v) < 0)
            return ngi_fail(why, whylen, "no dynamic symbol %s (not a Slurm plugin?)", name);
        if (shndx == 0 || shndx >= shnum || section(&e, shoff, shentsize, shndx, &data) < 0 ||
            data.type == 8 /* NOBITS */ || v < data.addr || v - data.addr + 4 > data.size)
            return ngi_fail(why, whylen, "%s has no initialised value in the file", name);
        int ok = 1;
        *value = (uint32_t)rd(&e, (size_t)(data.off + (v - data.addr)), 4, &ok);
        return ok ? 0 : ngi_fail(why, whylen, "%s lies outside the file", name);
    }
    return ngi_fail(why, whylen, "no dynamic symbol table");
}

int ngi_elf_u32_symbol(const char *path, const char *name, uint32_t *value, char *why,
                       size_t whylen)
{
    char *buf;
    size_t len;
    if (NGI_DOCTOR_READ(path, ELF_MAX, &buf, &len, why, whylen) < 0)
        return -1;
    int rc = ngi_elf_u32_symbol_mem((const unsigned char *)buf, len, name, value, why, whylen);
    free(buf);
    return rc;
}
