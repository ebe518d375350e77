/*
 * GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A STAND-IN for libnvidia-ml.so (NVML), for tests on machines without a GPU.
 * It is not NVIDIA's library and talks to no driver: it answers the NVML
 * calls that `nvidia-ctk cdi generate` v1.17.8 makes in nvml mode (through
 * go-nvml v0.12.4-1 and go-nvlib v0.7.2) as one H100 with driver 580.159.04
 * would, so the real nvidia-ctk runs its real nvml code path: device nodes
 * looked up under --dev-root, libraries, hooks, spec validation. Any other
 * NVML call is an undefined symbol and ends nvidia-ctk with "symbol lookup
 * error", which a test would show at once.
 *
 * Built by tests/standins/fake_driver.py with `cc -shared -fPIC -nostdlib`:
 * no libc calls, so the library loads in any Linux root (a chroot's too)
 * whatever glibc built it.
 */

typedef int nvmlReturn_t;
enum { NVML_SUCCESS = 0, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3 };

struct standin_gpu { unsigned minor; };
typedef struct standin_gpu *nvmlDevice_t;
static struct standin_gpu gpu0 = { 0 };

typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

static void put(char *dst, unsigned size, const char *text)
{
    unsigned i = 0;
    if (size == 0)
        return;
    for (; i + 1 < size && text[i]; i++)
        dst[i] = text[i];
    dst[i] = 0;
}

static void clear(void *p, unsigned size)
{
    volatile char *c = p;
    while (size--)
        *c++ = 0;
}

nvmlReturn_t nvmlInit_v2(void) { return NVML_SUCCESS; }
nvmlReturn_t nvmlInit(void) { return NVML_SUCCESS; }
nvmlReturn_t nvmlInitWithFlags(unsigned flags) { (void)flags; return NVML_SUCCESS; }
nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t r)
{
    return r == NVML_SUCCESS ? "Success" : r == NVML_ERROR_NOT_SUPPORTED ? "Not Supported" : "Invalid Argument";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned size)
{
    put(version, size, "580.159.04");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *version) { *version = 13000; return NVML_SUCCESS; }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version) { *version = 13000; return NVML_SUCCESS; }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count) { *count = 1; return NVML_SUCCESS; }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *device)
{
    if (index != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &gpu0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned *minor)
{
    *minor = device->minor;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned size)
{
    (void)device;
    put(uuid, size, "GPU-4f6f1c2e-0000-4000-8000-000000000000");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned size)
{
    (void)device;
    put(name, size, "NVIDIA H100 80GB HBM3");
    return NVML_SUCCESS;
}

/* Not MIG capable: go-nvlib then skips the MIG devices. */
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned *current, unsigned *pending)
{
    (void)device; (void)current; (void)pending;
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    (void)device;
    clear(pci, sizeof(*pci));
    put(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:1B:00.0");
    put(pci->busId, sizeof(pci->busId), "00000000:1B:00.0");
    pci->bus = 0x1b;
    pci->pciDeviceId = 0x233010de;
    return NVML_SUCCESS;
}
