/* The gres order's storage, and gres.conf File= values expanded into it
 * (Slurm hostlist syntax, lib/base/hostlist.c). */
#include "private/gpu.h"
#include "private/hostlist.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_NG 4096     /* a device file path */

void ng_gres_order_free(ng_gres_order *order)
{
    if (!order)
        return;
    for (unsigned i = 0; i < order->count; i++)
        free(order->device_files[i]);
    free(order->device_files);
    order->device_files = NULL;
    order->count = 0;
}

int ngi_gres_order_add(ng_gres_order *o, const char *path, char *err, size_t errlen)
{
    if (o->count >= NG_MAX_GPUS)
        return ngi_fail(err, errlen, "more than %d GPU device files", NG_MAX_GPUS);
    if (strnlen(path, PATH_MAX_NG) >= PATH_MAX_NG)
        return ngi_fail(err, errlen, "device file name too long: '%.64s...'", path);
    if (!o->device_files) {
        o->device_files = calloc(NG_MAX_GPUS, sizeof(char *));
        if (!o->device_files)
            return ngi_fail(err, errlen, "out of memory");
    }
    char *dup = strdup(path);
    if (!dup)
        return ngi_fail(err, errlen, "out of memory");
    o->device_files[o->count++] = dup;
    return 0;
}

typedef struct expand_ctx {
    ng_gres_order *o;
    unsigned limit;
    char *err;
    size_t errlen;
} expand_ctx;

static int add_expanded(const char *name, void *ctx)
{
    expand_ctx *x = ctx;
    if (x->limit == 0)
        return 1;
    x->limit--;
    return ngi_gres_order_add(x->o, name, x->err, x->errlen);
}

/* Expand a File= value in the order written (Slurm's hostlist_shift() does
 * not sort). At most @p limit names are added (Slurm truncates a File=
 * list to Count=; unlimited = NG_MAX_GPUS + 1 so overflow is reported). */
int ngi_gres_order_expand(const char *spec, ng_gres_order *o, unsigned limit,
                       char *err, size_t errlen)
{
    size_t len = strnlen(spec, NG_MAX_ARG * 4 + 1);
    if (len > NG_MAX_ARG * 4)
        return ngi_fail(err, errlen, "File= value longer than %d bytes", NG_MAX_ARG * 4);
    if (!len)
        return ngi_fail(err, errlen, "empty File= value");
    expand_ctx x = {o, limit, err, errlen};
    return ngi_hostlist_foreach(spec, NG_MAX_GPUS, add_expanded, &x, err, errlen);
}

int ngi_gres_order_from_files(ng_gres_order *out, const char *const *file_specs,
                             unsigned n_specs, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!file_specs && n_specs)
        return ngi_fail(err, errlen, "no File= values given");
    for (unsigned i = 0; i < n_specs; i++) {
        if (!file_specs[i] || ngi_gres_order_expand(file_specs[i], out, NG_MAX_GPUS + 1, err, errlen)) {
            if (!file_specs[i])
                ngi_fail(err, errlen, "File= value %u is NULL", i);
            ng_gres_order_free(out);
            return -1;
        }
    }
    return 0;
}

int ngi_natcmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0')
                a++;
            while (*b == '0')
                b++;
            size_t la = 0, lb = 0;
            while (isdigit((unsigned char)a[la]))
                la++;
            while (isdigit((unsigned char)b[lb]))
                lb++;
            if (la != lb)
                return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c)
                return c;
            a += la;
            b += lb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a ? 1 : (*b ? -1 : 0);
}
