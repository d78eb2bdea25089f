/* The machine as nested boxes, from hwloc's tree: the machine, packages,
 * objects that carry NUMA nodes (a band on top per CPU node), L3 groups
 * that are not their parent's whole set, cores with their PUs. GPUs and
 * NICs go to the smallest box holding their local CPUs; CPU-less NUMA
 * nodes next to the GPU they belong to, else in the box hwloc attaches
 * them to; offline or disallowed CPUs in a strip of their own. Sizes and
 * places: draw_place.c. */
#include "private/draw.h"
#include "private/topo.h"

#include <stdlib.h>
#include <string.h>

/* The list head of @p parent that a new child of @p kind joins. */
static int *list_of(ngi_layout *l, int parent, ngi_box_kind kind)
{
    ngi_box *p = &l->box[parent];
    if (kind == NGI_BOX_BAR)
        return &p->bars;
    if (kind == NGI_BOX_MEM || kind == NGI_BOX_GPU || kind == NGI_BOX_NIC ||
        kind == NGI_BOX_GPUSET || kind == NGI_BOX_ABSENT || kind == NGI_BOX_NICSUM)
        return p->kind == NGI_BOX_GPUSET ? &p->grid : &p->strip;
    return &p->grid;
}

/* A new box at the end of its parent's list (the array may move: list
 * heads are found after growing it). */
static int add(ngi_layout *l, ngi_box_kind kind, int parent, hwloc_obj_t obj, unsigned index)
{
    if (l->n == l->cap) {
        unsigned cap = l->cap ? 2 * l->cap : 256;
        ngi_box *b = realloc(l->box, cap * sizeof *b);
        if (!b)
            return -1;
        l->box = b;
        l->cap = cap;
    }
    int i = (int)l->n++;
    ngi_box *b = &l->box[i];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->parent = parent;
    b->bars = b->grid = b->strip = b->next = -1;
    b->obj = obj;
    b->index = index;
    if (parent >= 0) {
        int *at = list_of(l, parent, kind);
        while (*at >= 0)
            at = &l->box[*at].next;
        *at = i;
    }
    return i;
}

/* The GPU a CPU-less node belongs to (its memory), or -1. */
static int owner_gpu(const ng_topology *topo, unsigned os)
{
    for (unsigned g = 0; g < ng_topology_gpu_count(topo); g++)
        if (hwloc_bitmap_isset(ng_topology_gpu(topo, g)->memory_nodes, os))
            return (int)g;
    return -1;
}

typedef struct build {
    ngi_layout *l;
    const ngi_draw_model *m;
    unsigned char *drawn;   /* per NUMA index */
} build;

/* NUMA nodes hwloc attaches to @p o (through memory-side caches): CPU
 * nodes become bands of its box, CPU-less ones boxes in its strip, except
 * those of a GPU (drawn with it). */
static int attach_numa(build *b, hwloc_obj_t o, int box)
{
    for (hwloc_obj_t c = o->memory_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_NUMANODE) {
            if (attach_numa(b, c, box) < 0)
                return -1;
            continue;
        }
        int i = ngi_numa_index(b->m->topo, c->os_index);
        if (i < 0 || b->drawn[i] || owner_gpu(b->m->topo, c->os_index) >= 0)
            continue;
        int cpus = ng_topology_numa(b->m->topo, (unsigned)i)->has_cpus;
        if (add(b->l, cpus ? NGI_BOX_BAR : NGI_BOX_MEM, box, NULL, (unsigned)i) < 0)
            return -1;
        b->drawn[i] = 1;
    }
    return 0;
}

static void cache_label(hwloc_obj_t o, char *buf, size_t len)
{
    char size[32];
    ngi_draw_bytes(o->attr ? o->attr->cache.size : 0, size, sizeof size);
    snprintf(buf, len, "L3 %s", size);
}

static void container_label(ngi_box *b, hwloc_obj_t o)
{
    if (b->kind == NGI_BOX_MACHINE)
        snprintf(b->label, sizeof b->label, "Machine");
    else if (b->kind == NGI_BOX_PACKAGE && o->os_index != HWLOC_UNKNOWN_INDEX)
        snprintf(b->label, sizeof b->label, "Package P#%u", o->os_index);
    else if (b->kind == NGI_BOX_PACKAGE)
        snprintf(b->label, sizeof b->label, "Package L#%u", o->logical_index);
    else if (b->kind == NGI_BOX_L3 || o->type == HWLOC_OBJ_L3CACHE)
        cache_label(o, b->label, sizeof b->label);
}

/* An L3 with the same CPUs as the box around it is named in that box's
 * label instead of drawn ("Package P#0, L3 105 MiB"). */
static void merge_l3(ngi_layout *l, int box, hwloc_obj_t o)
{
    char c[48];
    ngi_box *b = &l->box[box];
    if (strstr(b->label, "L3 "))
        return;
    cache_label(o, c, sizeof c);
    size_t u = strlen(b->label);
    snprintf(b->label + u, sizeof b->label - u, "%s%s", u ? ", " : "", c);
}

static ngi_box_kind container_kind(const build *b, hwloc_obj_t o, int parent)
{
    if (parent < 0)
        return NGI_BOX_MACHINE;
    if (o->type == HWLOC_OBJ_PACKAGE)
        return NGI_BOX_PACKAGE;
    if (o->memory_arity)
        return NGI_BOX_GROUP;
    if (o->type == HWLOC_OBJ_L3CACHE &&
        !hwloc_bitmap_isequal(o->cpuset, b->l->box[parent].obj->cpuset))
        return NGI_BOX_L3;
    return NGI_BOX_CORE; /* meaning: not drawn */
}

static int walk(build *b, hwloc_obj_t o, int parent)
{
    if (o->type == HWLOC_OBJ_CORE || (o->type == HWLOC_OBJ_PU && ngi_draw_core_of(o) == o))
        return add(b->l, NGI_BOX_CORE, parent, o, 0) < 0 ? -1 : 0;
    if (o->type == HWLOC_OBJ_PU)
        return 0;
    int here = parent;
    ngi_box_kind k = container_kind(b, o, parent);
    if (k != NGI_BOX_CORE) {
        if ((here = add(b->l, k, parent, o, 0)) < 0)
            return -1;
        container_label(&b->l->box[here], o);
        if (attach_numa(b, o, here) < 0)
            return -1;
    } else if (o->type == HWLOC_OBJ_L3CACHE) {
        merge_l3(b->l, parent, o);
    }
    for (hwloc_obj_t c = o->first_child; c; c = c->next_sibling)
        if (walk(b, c, here) < 0)
            return -1;
    return 0;
}

/* The smallest drawn package, group or machine box whose CPUs hold
 * @p cpus (later boxes are deeper: they win ties); the machine when the
 * device has no local CPU. */
static int host_box(const ngi_layout *l, hwloc_const_cpuset_t cpus)
{
    int best = 0, bw = -1;
    if (!cpus || hwloc_bitmap_iszero(cpus))
        return 0;
    for (unsigned i = 0; i < l->n; i++) {
        const ngi_box *x = &l->box[i];
        if (x->kind != NGI_BOX_MACHINE && x->kind != NGI_BOX_PACKAGE && x->kind != NGI_BOX_GROUP)
            continue;
        int w = hwloc_bitmap_weight(x->obj->cpuset);
        if (hwloc_bitmap_isincluded(cpus, x->obj->cpuset) && (bw < 0 || w <= bw))
            best = (int)i, bw = w;
    }
    return best;
}

static int add_gpu(build *b, unsigned g)
{
    const ng_gpu_info *gi = ng_topology_gpu(b->m->topo, g);
    int host = host_box(b->l, gi->cpus);
    if (hwloc_bitmap_iszero(gi->memory_nodes))
        return add(b->l, NGI_BOX_GPU, host, NULL, g) < 0 ? -1 : 0;
    int set = add(b->l, NGI_BOX_GPUSET, host, NULL, g);
    if (set < 0 || add(b->l, NGI_BOX_GPU, set, NULL, g) < 0)
        return -1;
    int os;
    hwloc_bitmap_foreach_begin(os, gi->memory_nodes) {
        int i = ngi_numa_index(b->m->topo, (unsigned)os);
        if (i >= 0 && !b->drawn[i]) {
            if (add(b->l, NGI_BOX_MEM, set, NULL, (unsigned)i) < 0)
                return -1;
            b->drawn[i] = 1;
        }
    }
    hwloc_bitmap_foreach_end();
    return 0;
}

/* GPUs, NICs, nodes hwloc did not place, the absent CPUs. */
static int devices(build *b)
{
    const ng_topology *topo = b->m->topo;
    for (unsigned g = 0; g < ng_topology_gpu_count(topo); g++)
        if (add_gpu(b, g) < 0)
            return -1;
    for (unsigned n = 0; n < ng_topology_nic_count(topo); n++)
        if (b->m->nic_shown[n] != NGI_NIC_HIDDEN &&
            add(b->l, NGI_BOX_NIC, host_box(b->l, ng_topology_nic(topo, n)->cpus), NULL, n) < 0)
            return -1;
    if (b->m->nic_hidden && add(b->l, NGI_BOX_NICSUM, 0, NULL, 0) < 0)
        return -1;
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++)
        if (!b->drawn[i] && add(b->l, NGI_BOX_MEM, 0, NULL, i) < 0)
            return -1;
    if (!hwloc_bitmap_iszero(b->m->absent) && add(b->l, NGI_BOX_ABSENT, 0, NULL, 0) < 0)
        return -1;
    return 0;
}

int ngi_draw_layout(ngi_layout *l, const ngi_draw_model *m, char *err, size_t errlen)
{
    build b = {.l = l, .m = m};
    memset(l, 0, sizeof *l);
    b.drawn = calloc(ng_topology_numa_count(m->topo) + 1, 1);
    int rc = b.drawn ? walk(&b, hwloc_get_root_obj(m->hw), -1) : -1;
    if (rc == 0)
        rc = devices(&b);
    free(b.drawn);
    if (rc < 0) {
        ngi_draw_layout_free(l);
        return ngi_fail(err, errlen, "draw: out of memory");
    }
    ngi_draw_place(l, m);
    return 0;
}

void ngi_draw_layout_free(ngi_layout *l)
{
    free(l->box);
    memset(l, 0, sizeof *l);
}
