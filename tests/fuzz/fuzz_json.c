/* libFuzzer target: the JSON reader of the job-wide check (tools/json_read.c),
 * which reads what each node of a job answered: text a job's owner can
 * write (docs/check.md). The reader and the writer it re-writes strings
 * with (tools/json.c) are compiled in here; they are the CLI's, not the
 * library's. Invariants:
 *  - json_valid says 0 or -1, and its span lies inside the input;
 *  - every lookup (members, elements, strings, numbers) on a valid value
 *    stays inside it, a decoded string has no more bytes than twice its
 *    token;
 *  - json_copy_clean of a valid value is valid JSON again, valid UTF-8
 *    with no raw C0, DEL or C1 control character, and copying it again is
 *    a fixed point from the second copy on (the first turns bytes that
 *    are not UTF-8 into "\ufffd", the second writes U+FFFD as UTF-8). */
#include "fuzz_common.h"

#include "../../tools/json.c"
#include "../../tools/json_read.c"

/* Strict UTF-8 (no overlong forms, surrogates or code points above
 * U+10FFFF) without C0 (but none at all: the copy is one line), DEL or C1. */
static void check_clean_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        FZ_ASSERT(c >= 0x20 && c != 0x7f, "raw control 0x%02x at %zu", c, i);
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        FZ_ASSERT(c >= 0xc2 && c <= 0xf4 && i + len <= n, "bad UTF-8 lead 0x%02x at %zu", c, i);
        unsigned cp = c & (0x3fu >> (len - 1));
        for (size_t k = 1; k < len; k++) {
            FZ_ASSERT((s[i + k] & 0xc0) == 0x80, "bad UTF-8 continuation at %zu", i + k);
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        FZ_ASSERT(!(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
                      !(cp >= 0xd800 && cp <= 0xdfff), "bad code point U+%X at %zu", cp, i);
        FZ_ASSERT(cp >= 0xa0, "raw C1 control U+%04X at %zu", cp, i);
        i += len;
    }
}

static char *copy_of(json_span v, size_t *len)
{
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    FZ_ASSERT(m, "open_memstream");
    json_copy_clean(m, v);
    FZ_ASSERT(fclose(m) == 0, "memstream");
    return buf;
}

static int inside(json_span in, json_span v)
{
    return v.p >= in.p && v.len <= in.len && v.p + v.len <= in.p + in.len;
}

/* Lookups the job-wide check makes, on any valid value. */
static void lookups(json_span doc)
{
    static const char *const keys[] = {"processes", "summary", "cpus", "pid", "comm",
                                       "global_rank", "topology_xml", "", NULL};
    json_span v, e;
    for (const char *const *k = keys; *k; k++)
        if (json_member(doc, *k, &v) == 0) {
            FZ_ASSERT(inside(doc, v), "member %s outside its object", *k);
            char *s = json_string_dup(v);
            FZ_ASSERT(!s || strlen(s) <= 2 * v.len, "decoded string longer than 2x its token");
            free(s);
            long long n;
            (void)json_number(v, &n);
            for (unsigned i = 0; i < 4 && json_element(v, i, &e) == 0; i++)
                FZ_ASSERT(inside(v, e), "element %u outside its array", i);
        }
    for (unsigned i = 0; i < 4 && json_element(doc, i, &e) == 0; i++)
        FZ_ASSERT(inside(doc, e), "element %u outside its array", i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_span doc, again;
    if (json_valid((const char *)data, size, &doc) < 0)
        return 0;
    json_span in = {(const char *)data, size};
    FZ_ASSERT(inside(in, doc) && doc.len > 0, "document span outside the input");
    lookups(doc);
    size_t n1, n2;
    char *c1 = copy_of(doc, &n1);
    check_clean_utf8((const unsigned char *)c1, n1);
    FZ_ASSERT(json_valid(c1, n1, &again) == 0, "the clean copy is not valid JSON: %.200s", c1);
    char *c2 = copy_of(again, &n2);
    check_clean_utf8((const unsigned char *)c2, n2);
    FZ_ASSERT(json_valid(c2, n2, &again) == 0, "the second copy is not valid JSON: %.200s", c2);
    size_t n3;
    char *c3 = copy_of(again, &n3);
    FZ_ASSERT(n2 == n3 && memcmp(c2, c3, n2) == 0, "copying the copy changed it: %.200s", c2);
    free(c1);
    free(c2);
    free(c3);
    return 0;
}
