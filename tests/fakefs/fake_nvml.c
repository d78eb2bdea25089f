/* A fake libnvidia-ml.so.1 for tests (never installed). It imitates the
 * NVML ABI numaguard uses: return codes (NVML_SUCCESS = 0,
 * NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
 * NVML_ERROR_NOT_FOUND = 6), opaque device handles, nvmlPciInfo_t (v3
 * layout) whose busId reads "00000000:CB:00.0" as the real library's does.
 *
 * The GPUs are those of tests/fakefs/mkfake.sh nvidia-xe8640 (same bus
 * ids, minors and UUIDs), with MIG devices on cb and db.
 *
 * Build (the unit test does this itself, in its temp dir):
 *   cc -shared -fPIC -o DIR/libnvidia-ml.so.1 tests/fakefs/fake_nvml.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <strings.h>

typedef struct fake_dev {
    const char *bus;          /* "00000000:4E:00.0" */
    unsigned domain, busnum, minor;
    const char *uuid;
    int parent;               /* index of the parent GPU for MIG, -1 for a GPU */
} fake_dev;

typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef fake_dev *nvmlDevice_t;

static fake_dev devs[] = {
    /* GPUs in NVML index order (PCI bus order) */
    {"00000000:4E:00.0", 0, 0x4e, 1, "GPU-4e4e4e4e-0000-1111-2222-333344445555", -1},
    {"00000000:5F:00.0", 0, 0x5f, 3, "GPU-5f5f5f5f-0000-1111-2222-333344445555", -1},
    {"00000000:CB:00.0", 0, 0xcb, 0, "GPU-cbcbcbcb-0000-1111-2222-333344445555", -1},
    {"00000000:DB:00.0", 0, 0xdb, 2, "GPU-dbdbdbdb-0000-1111-2222-333344445555", -1},
    /* MIG devices (driver >= 470 UUID form) */
    {NULL, 0, 0, 0, "MIG-0c0c0c0c-aaaa-5bbb-8ccc-cbcb00000001", 2},
    {NULL, 0, 0, 0, "MIG-0c0c0c0c-aaaa-5bbb-8ccc-cbcb00000002", 2},
    {NULL, 0, 0, 0, "MIG-0d0d0d0d-aaaa-5bbb-8ccc-dbdb00000001", 3},
};
#define N_GPUS 4u
#define N_DEVS (sizeof(devs) / sizeof(devs[0]))

/* Counters the test reads with dlsym() to check init/shutdown balance. */
int fake_nvml_inits, fake_nvml_shutdowns;
static int live;

int nvmlInit_v2(void)
{
    /* NG_FAKE_NVML_HANG=1: a driver that never answers (doctor's limits). */
    const char *hang = getenv("NG_FAKE_NVML_HANG");
    while (hang && hang[0] == '1')
        sleep(3600);
    fake_nvml_inits++;
    live++;
    return 0;
}

int nvmlShutdown(void)
{
    if (!live)
        return 1;
    fake_nvml_shutdowns++;
    live--;
    return 0;
}

const char *nvmlErrorString(int rc)
{
    return rc ? "fake NVML error" : "Success";
}

int nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!live)
        return 1;
    if (!count)
        return 2;
    *count = N_GPUS;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev)
{
    if (!live)
        return 1;
    if (!dev || index >= N_GPUS)
        return 2;
    *dev = &devs[index];
    return 0;
}

int nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *dev)
{
    if (!live)
        return 1;
    if (!uuid || !dev)
        return 2;
    for (unsigned i = 0; i < N_DEVS; i++)
        if (!strcasecmp(devs[i].uuid, uuid)) {
            *dev = &devs[i];
            return 0;
        }
    return 6;
}

int nvmlDeviceIsMigDeviceHandle(nvmlDevice_t dev, unsigned int *is_mig)
{
    if (!live)
        return 1;
    if (!dev || !is_mig)
        return 2;
    *is_mig = dev->parent >= 0;
    return 0;
}

int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t *dev)
{
    if (!live)
        return 1;
    if (!mig || !dev || mig->parent < 0)
        return 2;
    *dev = &devs[mig->parent];
    return 0;
}

int nvmlDeviceGetMinorNumber(nvmlDevice_t dev, unsigned int *minor)
{
    if (!live)
        return 1;
    if (!dev || !minor || dev->parent >= 0)
        return 2;
    *minor = dev->minor;
    return 0;
}

int nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
    if (!live)
        return 1;
    if (!dev || !pci || dev->parent >= 0)   /* MIG handles have no PCI info */
        return 2;
    memset(pci, 0, sizeof(*pci));
    snprintf(pci->busId, sizeof(pci->busId), "%s", dev->bus);
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%s", dev->bus + 4);
    pci->domain = dev->domain;
    pci->bus = dev->busnum;
    pci->pciDeviceId = 0x233010de;
    return 0;
}
