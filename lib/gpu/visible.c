/* A task's environment -> its GPUs as topology indices: SLURM_STEP_GPUS
 * through the gres order (never SLURM_JOB_GPUS: the job's list, which every
 * step of a GPU job keeps, task_gpus.c), CUDA_VISIBLE_DEVICES /
 * ROCR_VISIBLE_DEVICES / ZE_AFFINITY_MASK as UUIDs (driver.c) or as
 * positions in bus order. The evidence rule and its Slurm sources are in
 * docs/gpu-order.md; the plugin's order of evidence is task_gpus.c's.
 * Environment values are data: parsed as indices or UUIDs, never a path,
 * and shown escaped in messages (ngi_show(): at most NGI_SHOW_MAX bytes, no
 * control byte reaches a terminal or slurmd's log). */
#include "private/gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct result {
    int idx[NG_MAX_GPUS];
    unsigned n;
} result;

static void result_add(result *r, int idx)
{
    for (unsigned i = 0; i < r->n; i++)
        if (r->idx[i] == idx)
            return;
    if (r->n < NG_MAX_GPUS)
        r->idx[r->n++] = idx;
}

static int add_bus(const ng_topology *topo, result *r, const char *var, const char *val,
                   const char *what, const char *bus, char *err, size_t errlen)
{
    int i = ng_topology_gpu_by_busid(topo, bus);
    ngi_shown a, b;
    if (i < 0)
        return ngi_fail(err, errlen, "%s=%s: %s is GPU %s, which the topology does not have",
                       var, ngi_show(val, &a), ngi_show(what, &b), bus);
    result_add(r, i);
    return 0;
}

/* Split a list value into tokens; validates length and emptiness. */
static int split(const char *var, const char *val, char tok[][NGI_UUID_MAX], unsigned *n,
                 char *err, size_t errlen)
{
    *n = 0;
    size_t len = strnlen(val, NG_MAX_ARG + 1);
    if (len > NG_MAX_ARG)
        return ngi_fail(err, errlen, "%s is longer than %d bytes", var, NG_MAX_ARG);
    const char *p = val;
    ngi_shown a;
    for (;;) {
        size_t k = strcspn(p, ",");
        if (k == 0 || k >= NGI_UUID_MAX)
            return ngi_fail(err, errlen, "%s=%s: %s", var, ngi_show(val, &a),
                           k ? "an entry is too long" : "empty entry");
        if (*n >= NG_MAX_GPUS)
            return ngi_fail(err, errlen, "%s=%s: more than %d entries", var, ngi_show(val, &a),
                           NG_MAX_GPUS);
        memcpy(tok[*n], p, k);
        tok[(*n)++][k] = '\0';
        if (!p[k])
            return 0;
        p += k + 1;
    }
}

/* A decimal index < NG_MAX_GPUS; ZE_AFFINITY_MASK may add ".subdevice". */
static int parse_index(const char *tok, int allow_sub, unsigned *out)
{
    const char *p = tok;
    unsigned long v = 0;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        v = v * 10 + (unsigned)(*p - '0');
        if (v >= NG_MAX_GPUS)
            return -1;
    }
    if (*p == '.' && allow_sub) {
        p++;
        if (!isdigit((unsigned char)*p) || strspn(p, "0123456789") != strlen(p) ||
            strlen(p) > 3)
            return -1;
        p += strlen(p);
    }
    if (*p)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int is_uuid_token(const char *t)
{
    return !strncasecmp(t, "GPU-", 4) || !strncasecmp(t, "MIG-", 4);
}

/* A variable that Slurm or a runtime may set to "nothing here". */
static int value_absent(const char *v)
{
    return !v || !strcmp(v, "NoDevFiles");
}

/* The k-th GPU of @p vendor (any vendor if NG_VENDOR_UNKNOWN) in bus order. */
static int nth_gpu(const ng_topology *topo, ng_gpu_vendor vendor, unsigned k)
{
    unsigned n = ng_topology_gpu_count(topo), seen = 0;
    for (unsigned i = 0; i < n; i++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, i);
        if (vendor != NG_VENDOR_UNKNOWN && g->vendor != vendor)
            continue;
        if (seen++ == k)
            return (int)i;
    }
    return -1;
}

static unsigned vendor_count(const ng_topology *topo, ng_gpu_vendor vendor)
{
    unsigned n = ng_topology_gpu_count(topo), c = 0;
    for (unsigned i = 0; i < n; i++)
        if (vendor == NG_VENDOR_UNKNOWN || ng_topology_gpu(topo, i)->vendor == vendor)
            c++;
    return c;
}

/* Vendor variables Slurm may set, with the vendor whose runtime reads them. */
typedef struct vendor_var {
    const char *name;
    const char *val;
    ng_gpu_vendor vendor;
    int allow_sub;
} vendor_var;

/* Evidence 1: UUIDs in CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES. */
static int from_uuids(const ng_topology *topo, const char *fsroot, const vendor_var *v,
                      char tok[][NGI_UUID_MAX], unsigned n, result *r, char *err, size_t errlen)
{
    for (unsigned i = 0; i < n; i++) {
        char bus[NG_BUSID_LEN];
        ngi_shown a, b;
        if (!is_uuid_token(tok[i]))
            return ngi_fail(err, errlen, "%s=%s: '%s' mixes an index with UUIDs", v->name,
                           ngi_show(v->val, &a), ngi_show(tok[i], &b));
        int rc = v->vendor == NG_VENDOR_AMD
                     ? ngi_amd_uuid_bus(fsroot, v->name, tok[i], bus, err, errlen)
                     : ngi_nv_uuid_bus(fsroot, v->name, tok[i], bus, err, errlen);
        if (rc || add_bus(topo, r, v->name, v->val, tok[i], bus, err, errlen))
            return -1;
    }
    return 0;
}

/* Evidence 2: global gres indices through the node's gres order, or,
 * without one, as positions in bus order (the AutoDetect order). */
static int from_gres(const ng_topology *topo, const ng_gres_order *order, const char *fsroot,
                     const char *var, const char *val, ng_gpu_vendor vendor,
                     char tok[][NGI_UUID_MAX], unsigned n, result *r, char *err, size_t errlen)
{
    ngi_shown a, b;
    for (unsigned i = 0; i < n; i++) {
        unsigned gi;
        if (parse_index(tok[i], 0, &gi))
            return ngi_fail(err, errlen, "%s=%s: '%s' is not a GPU index (0-%d)", var,
                           ngi_show(val, &a), ngi_show(tok[i], &b), NG_MAX_GPUS - 1);
        if (order && order->count) {
            char bus[NG_BUSID_LEN], e2[256];
            if (gi >= order->count)
                return ngi_fail(err, errlen,
                               "%s=%s: unknown GPU index %u (the node's gres list has %u)", var,
                               ngi_show(val, &a), gi, order->count);
            if (ngi_device_file_busid(fsroot, order->device_files[gi], bus, e2, sizeof(e2)))
                return ngi_fail(err, errlen, "%s=%s: GPU index %u: %s", var, ngi_show(val, &a), gi,
                               e2);
            if (add_bus(topo, r, var, val, order->device_files[gi], bus, err, errlen))
                return -1;
        } else {
            int t = nth_gpu(topo, vendor, gi);
            if (t < 0)
                return ngi_fail(err, errlen, "%s=%s: unknown GPU index %u (the topology has %u %s GPU%s)",
                               var, ngi_show(val, &a), gi, vendor_count(topo, vendor),
                               vendor == NG_VENDOR_UNKNOWN ? "" : ng_gpu_vendor_name(vendor),
                               vendor_count(topo, vendor) == 1 ? "" : "s");
            result_add(r, t);
        }
    }
    return 0;
}

/* Evidence 3: runtime indices as positions among the vendor's GPUs. */
static int from_positions(const ng_topology *topo, const vendor_var *v, char tok[][NGI_UUID_MAX],
                          unsigned n, result *r, char *err, size_t errlen)
{
    ngi_shown a, b;
    for (unsigned i = 0; i < n; i++) {
        unsigned k;
        /* CUDA stops at the first invalid index: "-1" hides everything after. */
        if (tok[i][0] == '-' && v->vendor == NG_VENDOR_NVIDIA && parse_index(tok[i] + 1, 0, &k) == 0)
            return 0;
        if (parse_index(tok[i], v->allow_sub, &k))
            return ngi_fail(err, errlen, "%s=%s: '%s' is not a GPU index%s", v->name,
                           ngi_show(v->val, &a), ngi_show(tok[i], &b),
                           v->allow_sub ? " (N or N.M)" : "");
        int t = nth_gpu(topo, v->vendor, k);
        if (t < 0)
            return ngi_fail(err, errlen, "%s=%s: unknown GPU index %u (the topology has %u %s GPU%s)",
                           v->name, ngi_show(v->val, &a), k, vendor_count(topo, v->vendor),
                           ng_gpu_vendor_name(v->vendor), vendor_count(topo, v->vendor) == 1 ? "" : "s");
        result_add(r, t);
    }
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The vendor the node's GPUs have, when they all agree; else unknown. */
static ng_gpu_vendor node_vendor(const ng_topology *topo)
{
    unsigned n = ng_topology_gpu_count(topo);
    ng_gpu_vendor v = NG_VENDOR_UNKNOWN;
    for (unsigned i = 0; i < n; i++) {
        ng_gpu_vendor g = ng_topology_gpu(topo, i)->vendor;
        if (i && g != v)
            return NG_VENDOR_UNKNOWN;
        v = g;
    }
    return v;
}

static int resolve_with(const ng_topology *topo, const ng_gres_order *order,
                        const ng_gpu_env *env, const char *fsroot, char tok[][NGI_UUID_MAX],
                        result *r, char *err, size_t errlen);

static int resolve(const ng_topology *topo, const ng_gres_order *order, const ng_gpu_env *env,
                   const char *fsroot, result *r, char *err, size_t errlen)
{
    char (*tok)[NGI_UUID_MAX] = calloc(NG_MAX_GPUS, NGI_UUID_MAX);   /* 24 KiB: heap */
    if (!tok)
        return ngi_fail(err, errlen, "out of memory");
    int rc = resolve_with(topo, order, env, fsroot, tok, r, err, errlen);
    free(tok);
    return rc;
}

static int resolve_with(const ng_topology *topo, const ng_gres_order *order,
                        const ng_gpu_env *env, const char *fsroot, char tok[][NGI_UUID_MAX],
                        result *r, char *err, size_t errlen)
{
    unsigned n;
    vendor_var vars[] = {
        {"CUDA_VISIBLE_DEVICES", env->cuda_visible_devices, NG_VENDOR_NVIDIA, 0},
        {"ROCR_VISIBLE_DEVICES", env->rocr_visible_devices, NG_VENDOR_AMD, 0},
        {"ZE_AFFINITY_MASK", env->ze_affinity_mask, NG_VENDOR_INTEL, 1},
        {"GPU_DEVICE_ORDINAL", env->gpu_device_ordinal, NG_VENDOR_AMD, 0},
    };
    /* 1. UUIDs identify GPUs by themselves (MIG slices included, whose
     *    gres indices count slices, not GPUs). */
    for (unsigned i = 0; i < 2; i++) {
        const vendor_var *v = &vars[i];
        if (value_absent(v->val) || !*v->val)
            continue;
        if (split(v->name, v->val, tok, &n, err, errlen))
            return -1;
        for (unsigned k = 0; k < n; k++)
            if (is_uuid_token(tok[k]))
                return from_uuids(topo, fsroot, v, tok, n, r, err, errlen);
    }
    /* 2. Slurm's global gres indices (per task when bound: Slurm writes
     *    the task's own list into SLURM_STEP_GPUS). */
    const char *gname = "SLURM_STEP_GPUS", *gval = env->slurm_step_gpus;
    if (!value_absent(gval) && *gval) {
        ng_gpu_vendor vendor = node_vendor(topo);
        if (split(gname, gval, tok, &n, err, errlen))
            return -1;
        return from_gres(topo, order, fsroot, gname, gval, vendor, tok, n, r, err, errlen);
    }
    /* 3. Runtime indices: the first variable whose vendor the node has. */
    const vendor_var *first_set = NULL;
    for (unsigned i = 0; i < NGI_ARRAY_LEN(vars); i++) {
        const vendor_var *v = &vars[i];
        if (value_absent(v->val))
            continue;
        if (!first_set)
            first_set = v;
        if (!vendor_count(topo, v->vendor))
            continue;
        if (!*v->val)
            return 0;   /* explicitly no device visible */
        if (split(v->name, v->val, tok, &n, err, errlen))
            return -1;
        return from_positions(topo, v, tok, n, r, err, errlen);
    }
    ngi_shown a;
    if (first_set && *first_set->val)
        return ngi_fail(err, errlen, "%s=%s: the topology has no %s GPU", first_set->name,
                       ngi_show(first_set->val, &a), ng_gpu_vendor_name(first_set->vendor));
    return 0;
}

int ngi_gpus_from_env(const ng_topology *topo, const ng_gres_order *order,
                 const ng_gpu_env *env, const char *fsroot,
                 int *out_idx, unsigned max, unsigned *n_out,
                 char *err, size_t errlen)
{
    result r;
    *n_out = 0;
    if (!topo)
        return ngi_fail(err, errlen, "no topology");
    if (!env)
        return 0;
    memset(&r, 0, sizeof(r));
    if (resolve(topo, order, env, fsroot, &r, err, errlen))
        return -1;
    qsort(r.idx, r.n, sizeof(int), cmp_int);
    if (r.n > max)
        return ngi_fail(err, errlen, "task has %u GPUs, room for %u", r.n, max);
    memcpy(out_idx, r.idx, r.n * sizeof(int));
    *n_out = r.n;
    return 0;
}
