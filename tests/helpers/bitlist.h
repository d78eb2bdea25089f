/* Shared by the test probes (ng_probe.c, probe.c): print set bits as a
 * Linux list ("0-3,8"). The probes deliberately do not link libnumaguard:
 * they report the kernel's view with code of their own. */
#ifndef NG_TEST_BITLIST_H
#define NG_TEST_BITLIST_H
#include <stdio.h>

static void print_bitlist(int (*isset)(const void *, int), const void *set, int max)
{
    int first = 1;
    for (int i = 0; i < max; i++) {
        if (!isset(set, i))
            continue;
        int j = i;
        while (j + 1 < max && isset(set, j + 1))
            j++;
        printf(first ? "%d" : ",%d", i);
        if (j > i)
            printf("-%d", j);
        first = 0;
        i = j;
    }
}
#endif
