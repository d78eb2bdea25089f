/* Every memory mode has its row in every table indexed by ng_mem_mode:
 * its name (lib/options/policy.c), its kernel mode (lib/task/mempolicy.c,
 * through ngi_mem_apply with a set_mempolicy that records what it is
 * given), its letter and word in the pictures (lib/draw/draw_model.c).
 * The tables' lengths are compile-time assertions (NG_MEM_MODE_COUNT);
 * this catches a row left out in the middle, which they cannot. */
#include "private/draw.h"
#include "private/task.h"
#include "tap.h"

#include <errno.h>
#include <string.h>

static int recorded = -1;

static long record_mempolicy(int mode, const unsigned long *mask, unsigned long maxnode)
{
    (void)mask;
    (void)maxnode;
    recorded = mode;
    return 0;
}

int main(void)
{
    static const ngi_sys_ops rec = {.set_mempolicy = record_mempolicy};
    const char *names[NG_MEM_MODE_COUNT] = {0}, *words[NG_MEM_MODE_COUNT] = {0};
    char letters[NG_MEM_MODE_COUNT] = {0};
    int kmodes[NG_MEM_MODE_COUNT] = {0};
    hwloc_bitmap_t node0 = hwloc_bitmap_alloc();
    hwloc_bitmap_only(node0, 0);
    for (unsigned m = 0; m < NG_MEM_MODE_COUNT; m++) {
        names[m] = ng_mem_mode_name((ng_mem_mode)m);
        ok(names[m] && strcmp(names[m], "?") != 0, "mode %u has a name: %s", m, names[m]);
        letters[m] = ngi_draw_mode_letter((ng_mem_mode)m);
        words[m] = ngi_draw_mode_word((ng_mem_mode)m);
        ok(letters[m] && letters[m] != '?' && words[m] && strcmp(words[m], "?") != 0,
           "mode %u (%s) has a letter and a word in the pictures: %c %s", m, names[m],
           letters[m] ? letters[m] : ' ', words[m] ? words[m] : "(null)");
        ng_apply_result res;
        memset(&res, 0, sizeof res);
        char err[256] = "";
        recorded = -1;
        int rc = ngi_mem_apply(&rec, (ng_mem_mode)m, node0, 0, 0, &res, err, sizeof err);
        kmodes[m] = recorded;
        if (m == NG_MEM_MODE_NONE)
            ok(rc < 0 && recorded == -1, "mode none is never given to the kernel (%s)", err);
        else
            ok(rc == 0 && recorded > 0 && res.mem_mode == (ng_mem_mode)m &&
               strcmp(res.mem_mode_text, names[m]) == 0,
               "mode %u (%s) has a kernel mode: %d, applied as '%s'", m, names[m], recorded,
               res.mem_mode_text);
    }
    int distinct = 1;
    for (unsigned a = 0; a < NG_MEM_MODE_COUNT; a++)
        for (unsigned b = a + 1; b < NG_MEM_MODE_COUNT; b++)
            distinct &= strcmp(names[a], names[b]) != 0 && letters[a] != letters[b] &&
                        strcmp(words[a], words[b]) != 0 &&
                        (a == NG_MEM_MODE_NONE || kmodes[a] != kmodes[b]);
    ok(distinct, "the %d modes' names, letters, words and kernel modes are all different",
       NG_MEM_MODE_COUNT);
    ok(strcmp(ng_mem_mode_name(NG_MEM_MODE_COUNT), "?") == 0 &&
       ngi_draw_mode_letter(NG_MEM_MODE_COUNT) == '?',
       "NG_MEM_MODE_COUNT is no mode: '?' in every table");
    hwloc_bitmap_free(node0);
    return tap_done();
}
