/* libFuzzer target: what numaguard doctor reads from tools and files it
 * does not own, as root: `nvidia-smi topo -m` and `-q`, `rocm-smi`,
 * `slurmd -G` and `-V` text, Slurm Key=Value files, and a plugin's ELF file
 * (plugin_version). Byte 0 picks the parser, the rest is its input.
 * Invariants: counts within the caller's bound; every string NUL-terminated
 * within its field; bus ids canonical; a slurmd -G order holds at most
 * NG_MAX_GPUS device files; the ELF reader reads only inside the buffer
 * (ASan) and a value it returns came from bytes of the input. */
#include "fuzz_common.h"
#include "private/doctor.h"

static void check_bus(const char *bus)
{
    char again[NG_BUSID_LEN];
    FZ_ASSERT(!bus[0] || (strlen(bus) == 12 && ngi_busid_normalize(bus, again) == 0 &&
                          !strcmp(bus, again)), "bus id '%.16s' not canonical", bus);
}

static void smi(const char *text)
{
    ngi_smi_topo_row rows[8];
    ngi_smi_gpu q[8];
    int n = ngi_smi_topo_parse(text, rows, 8);
    FZ_ASSERT(n >= -1 && n <= 8, "topo -m: %d rows", n);
    for (int i = 0; i < n; i++)
        FZ_ASSERT(memchr(rows[i].cpus, 0, sizeof rows[i].cpus) &&
                  memchr(rows[i].numa, 0, sizeof rows[i].numa), "row %d unterminated", i);
    n = ngi_smi_query_parse(text, q, 8);
    FZ_ASSERT(n >= 0 && n <= 8, "-q: %d GPUs", n);
    for (int i = 0; i < n; i++)
        check_bus(q[i].bus);
}

static void rocm(const char *text)
{
    ngi_rocm_gpu g[8];
    int n = ngi_rocm_parse(text, g, 8);
    FZ_ASSERT(n >= 0 && n <= 8, "rocm-smi: %d GPUs", n);
    for (int i = 0; i < n; i++)
        check_bus(g[i].bus);
}

static void slurmd(const char *text)
{
    ng_gres_order o;
    char why[256];
    if (ngi_slurmd_gres_parse(text, &o, why, sizeof why) == 0) {
        FZ_ASSERT(o.count <= NG_MAX_GPUS, "slurmd -G: %u devices", o.count);
        ng_gres_order_free(&o);
    } else {
        FZ_ASSERT(o.count == 0 && !o.device_files, "slurmd -G: order left after a failure");
        FZ_ASSERT(memchr(why, 0, sizeof why) && why[0], "slurmd -G: no reason");
    }
    uint32_t v = ngi_slurm_version_parse(text);
    FZ_ASSERT(v <= 0xffffff, "slurmd -V: 0x%x", v);
}

static void conf(const char *text)
{
    char v[64];
    if (ngi_conf_value(text, "TaskPlugin", v, sizeof v) == 0)
        FZ_ASSERT(strlen(v) < sizeof v, "TaskPlugin too long");
    int r = ngi_conf_node_value(text, "gpu07", "Gres", v, sizeof v);
    FZ_ASSERT(r >= -1 && r <= 1 && (r != 1 || strlen(v) < sizeof v), "NodeName lookup %d", r);
}

static void elf(const uint8_t *data, size_t size)
{
    uint32_t v = 0;
    char why[256];
    unsigned char *copy = malloc(size ? size : 1);   /* exact size: ASan sees overreads */
    if (!copy)
        abort();
    memcpy(copy, data, size);
    if (ngi_elf_u32_symbol_mem(copy, size, "plugin_version", &v, why, sizeof why) < 0)
        FZ_ASSERT(memchr(why, 0, sizeof why) && why[0], "ELF: no reason");
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = fz_cstr(data + 1, size - 1);
    switch (data[0] % 5) {
    case 0: smi(text); break;
    case 1: rocm(text); break;
    case 2: slurmd(text); break;
    case 3: conf(text); break;
    default: elf(data + 1, size - 1); break;
    }
    free(text);
    return 0;
}
