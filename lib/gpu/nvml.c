/* NVML through dlopen (never a build dependency): a GPU UUID or a device
 * minor to a PCI bus id, for the GPUs /proc/driver/nvidia does not list
 * (MIG UUIDs, drivers that hide them). Loaded per lookup and closed again. */
#include "private/gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void *nvml_dev;   /* nvmlDevice_t is an opaque pointer */

/* nvmlPciInfo_t as of nvmlDeviceGetPciInfo_v3 (nvml.h). */
typedef struct nvml_pci {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvml_pci;

typedef struct nvml_api {
    void *h;
    int (*init)(void);
    int (*shutdown)(void);
    int (*by_uuid)(const char *, nvml_dev *);
    int (*is_mig)(nvml_dev, unsigned *);
    int (*parent)(nvml_dev, nvml_dev *);
    int (*pci)(nvml_dev, nvml_pci *);
    int (*count)(unsigned *);
    int (*by_index)(unsigned, nvml_dev *);
    int (*get_minor)(nvml_dev, unsigned *);
} nvml_api;

static void *sym(void *h, const char *name)
{
    return dlsym(h, name);
}

/* Open libnvidia-ml.so.1 by its soname (the loader's normal search, no
 * path from any user) and nvmlInit_v2(). 0 when usable. */
static int nvml_open(nvml_api *a)
{
    memset(a, 0, sizeof(*a));
    a->h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a->h)
        return -1;
    *(void **)&a->init = sym(a->h, "nvmlInit_v2");
    *(void **)&a->shutdown = sym(a->h, "nvmlShutdown");
    *(void **)&a->by_uuid = sym(a->h, "nvmlDeviceGetHandleByUUID");
    *(void **)&a->is_mig = sym(a->h, "nvmlDeviceIsMigDeviceHandle");
    *(void **)&a->parent = sym(a->h, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
    *(void **)&a->pci = sym(a->h, "nvmlDeviceGetPciInfo_v3");
    *(void **)&a->count = sym(a->h, "nvmlDeviceGetCount_v2");
    *(void **)&a->by_index = sym(a->h, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&a->get_minor = sym(a->h, "nvmlDeviceGetMinorNumber");
    if (!a->init || !a->shutdown || !a->pci || a->init() != 0) {
        dlclose(a->h);
        a->h = NULL;
        return -1;
    }
    return 0;
}

static void nvml_close(nvml_api *a)
{
    if (!a->h)
        return;
    a->shutdown();
    dlclose(a->h);
    a->h = NULL;
}

static int nvml_dev_bus(nvml_api *a, nvml_dev d, char bus[NG_BUSID_LEN])
{
    nvml_pci p;
    memset(&p, 0, sizeof(p));
    if (a->pci(d, &p) != 0)
        return -1;
    p.busId[sizeof(p.busId) - 1] = '\0';
    return ngi_busid_normalize(p.busId, bus);
}

/* Bus id of the (parent) GPU of a GPU- or MIG- UUID via NVML. */
int ngi_nvml_uuid_bus(const char *uuid, char bus[NG_BUSID_LEN], int *no_nvml)
{
    nvml_api a;
    *no_nvml = 0;
    if (nvml_open(&a)) {
        *no_nvml = 1;
        return -1;
    }
    int rc = -1;
    nvml_dev d = NULL, parent = NULL;
    unsigned mig = 0;
    if (a.by_uuid && a.by_uuid(uuid, &d) == 0) {
        if (a.is_mig && a.parent && a.is_mig(d, &mig) == 0 && mig) {
            if (a.parent(d, &parent) == 0)
                rc = nvml_dev_bus(&a, parent, bus);
        } else {
            rc = nvml_dev_bus(&a, d, bus);
        }
    }
    nvml_close(&a);
    return rc;
}

/* Bus id of the GPU with this minor number via NVML (live system only). */
int ngi_nvml_minor_bus(unsigned minor, char bus[NG_BUSID_LEN])
{
    nvml_api a;
    if (nvml_open(&a))
        return -1;
    int rc = -1;
    unsigned n = 0, m;
    if (a.count && a.by_index && a.get_minor && a.count(&n) == 0)
        for (unsigned i = 0; i < n && i < NG_MAX_GPUS && rc; i++) {
            nvml_dev d;
            if (a.by_index(i, &d) == 0 && a.get_minor(d, &m) == 0 && m == minor)
                rc = nvml_dev_bus(&a, d, bus);
        }
    nvml_close(&a);
    return rc;
}

/* Every device NVML enumerates, in its index order (PCI bus order). */
int ngi_nvml_devices(char (*bus)[NG_BUSID_LEN], int *minor, unsigned max, unsigned *n)
{
    nvml_api a;
    unsigned count = 0, m;
    *n = 0;
    if (nvml_open(&a))
        return -1;
    int rc = (a.count && a.by_index && a.count(&count) == 0) ? 0 : -1;
    for (unsigned i = 0; rc == 0 && i < count && *n < max; i++) {
        nvml_dev d;
        if (a.by_index(i, &d) != 0 || nvml_dev_bus(&a, d, bus[*n]) != 0)
            continue;
        minor[*n] = (a.get_minor && a.get_minor(d, &m) == 0) ? (int)m : -1;
        (*n)++;
    }
    nvml_close(&a);
    return rc;
}

/* Whether the loader finds @p soname here (dlopen, closed again): 0, or
 * -1 with the loader's message in @p why. */
int ngi_nvml_load_check(const char *soname, char *why, size_t whylen)
{
    (void)dlerror();
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, whylen, "%s", e ? e : "not found");
        return -1;
    }
    dlclose(h);
    return 0;
}
