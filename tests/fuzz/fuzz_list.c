/* libFuzzer target: cpulist/nodelist strings (ng_list_parse, ng_list_format)
 * and PCI bus ids (ngi_busid_normalize). The first byte picks the largest
 * index the caller allows (callers use 1 << 20), the rest is the text.
 * Invariants: accepted sets are non-empty and within max_index; format ->
 * parse round-trips to the same set; a rejection is one line unless the
 * input itself has a line break (ng_list_parse echoes its input); a
 * normalised bus id is "dddd:bb:dd.f" and normalising it again is a no-op. */
#include "fuzz_common.h"

#include <ctype.h>

static void check_busid(const char *in)
{
    char out[NG_BUSID_LEN], again[NG_BUSID_LEN];
    memset(out, 'X', sizeof out);
    if (ngi_busid_normalize(in, out) < 0)
        return;
    FZ_ASSERT(strnlen(out, sizeof out) == 12, "'%s' -> '%.16s' (length)", in, out);
    for (int i = 0; i < 12; i++) {
        int sep = i == 4 || i == 7 ? ':' : i == 10 ? '.' : 0;
        FZ_ASSERT(sep ? out[i] == sep : (isxdigit((unsigned char)out[i]) && !isupper(
                  (unsigned char)out[i])), "'%s' -> '%s' (char %d)", in, out, i);
    }
    FZ_ASSERT(out[11] <= '7' && out[8] <= '1', "'%s' -> '%s' (dev/fn range)", in, out);
    FZ_ASSERT(ngi_busid_normalize(out, again) == 0 && strcmp(out, again) == 0,
              "'%s' -> '%s' not a fixed point", in, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned maxes[] = {0, 1, 63, 4095, 1u << 20};
    if (size < 1)
        return 0;
    unsigned max_index = maxes[data[0] % 5];
    char *in = fz_cstr(data + 1, size - 1);
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), back = hwloc_bitmap_alloc();
    char err[512] = "";
    int rc = ng_list_parse(in, set, max_index, err, sizeof err);
    FZ_ASSERT(rc == 0 || rc == -1, "rc %d", rc);
    if (rc == 0) {
        FZ_ASSERT(!hwloc_bitmap_iszero(set), "'%s': empty set accepted", in);
        FZ_ASSERT(hwloc_bitmap_last(set) >= 0 && (unsigned)hwloc_bitmap_last(set) <= max_index,
                  "'%s': index %d beyond %u", in, hwloc_bitmap_last(set), max_index);
        size_t len = 2 * strlen(in) + 16;
        char *text = malloc(len);
        FZ_ASSERT(text, "oom");
        int n = ng_list_format(set, text, len);
        FZ_ASSERT(n > 0, "'%s': format failed", in);
        FZ_ASSERT(ng_list_parse(text, back, max_index, err, sizeof err) == 0,
                  "'%s': formatted '%s' rejected: %s", in, text, err);
        FZ_ASSERT(hwloc_bitmap_isequal(set, back), "'%s': '%s' is another set", in, text);
        /* Too small a buffer: -1, never an overflow. */
        FZ_ASSERT(ng_list_format(set, text, (size_t)n) == -1, "'%s': short buffer accepted", in);
        free(text);
    } else if (!fz_has_newline(in)) {
        fz_check_message("ng_list_parse", err, sizeof err);
    }
    FZ_ASSERT(ng_list_parse(in, set, max_index, NULL, 0) == rc, "verdict depends on err");
    check_busid(in);
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(back);
    free(in);
    return 0;
}
