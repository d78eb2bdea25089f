/* hwloc 2.x and 3.0: the few places where hwloc's API differs, chosen at
 * compile time by HWLOC_API_VERSION. The rest of numaguard has one code
 * path and never tests HWLOC_API_VERSION itself; `make check-hwloc-next`
 * builds it against hwloc 3.0 and compares the two builds over the corpus
 * (docs/design.md, "hwloc 2.x and 3.0").
 *
 * What changed in 3.0 that numaguard meets:
 *  - an OS device's type is a set of bits (attr->osdev.types): a verbs
 *    device is OPENFABRICS|NETWORK, a BXI interface only NETWORK (2.x: one
 *    value, OPENFABRICS for both);
 *  - obj->infos_count/infos[] became obj->infos.count/.array[];
 *  - the root's "hwlocVersion" (and the other discovery facts) moved to the
 *    topology's own infos (hwloc_topology_get_infos). */
#ifndef NGI_HWLOC_COMPAT_H
#define NGI_HWLOC_COMPAT_H

#include <hwloc.h>
#include <string.h>

#if HWLOC_API_VERSION >= 0x00030000
#define NGI_OSDEV_HAS(o, bit) (((o)->attr->osdev.types & (bit)) != 0)
#define NGI_OBJ_INFOS_COUNT(o) ((o)->infos.count)
#define NGI_OBJ_INFO_AT(o, i) (&(o)->infos.array[(i)])
#define NGI_TOPOLOGY_INFO(hw, name) hwloc_get_info_by_name(hwloc_topology_get_infos(hw), (name))
#else
#define NGI_OSDEV_HAS(o, bit) ((o)->attr->osdev.type == (bit))
#define NGI_OBJ_INFOS_COUNT(o) ((o)->infos_count)
#define NGI_OBJ_INFO_AT(o, i) (&(o)->infos[(i)])
#define NGI_TOPOLOGY_INFO(hw, name) hwloc_obj_get_info_by_name(hwloc_get_root_obj(hw), (name))
#endif

/** An RDMA device of a NIC: a verbs (OpenFabrics) device, or a BXI one
 *  (OpenFabrics in 2.x, a plain network device in 3.0: the same NIC either way). */
static inline int ngi_osdev_is_rdma(hwloc_obj_t o)
{
    if (o->type != HWLOC_OBJ_OS_DEVICE || !o->name)
        return 0;
    return NGI_OSDEV_HAS(o, HWLOC_OBJ_OSDEV_OPENFABRICS) ||
           (NGI_OSDEV_HAS(o, HWLOC_OBJ_OSDEV_NETWORK) && o->subtype && !strcmp(o->subtype, "BXI"));
}

/** A kernel network interface (eth0, ib0) that is not an RDMA device
 *  (3.0 marks verbs devices NETWORK too). */
static inline int ngi_osdev_is_netif(hwloc_obj_t o)
{
    return o->type == HWLOC_OBJ_OS_DEVICE && o->name &&
           NGI_OSDEV_HAS(o, HWLOC_OBJ_OSDEV_NETWORK) && !ngi_osdev_is_rdma(o);
}

#endif
