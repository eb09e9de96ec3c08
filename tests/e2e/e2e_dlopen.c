/*
 * e2e_dlopen: reaches Level Zero the way runtimes do (SYCL, MKL, libfabric): not linked to the
 * loader, it dlopen()s "libze_loader.so.1" and calls through dlsym() pointers. Under zeprof the
 * preloaded shim has that SONAME, so these calls must be traced.
 *
 *   e2e_dlopen LOG
 *
 * LOG: one line per call, "main <tid> <function> 0x<result>", as e2e_app writes it.
 * Exit status: 0 when every call succeeded, 1 otherwise, 2 bad usage.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include <level_zero/ze_api.h>

typedef ze_result_t (*init_fn)(ze_init_flags_t);
typedef ze_result_t (*driver_get_fn)(uint32_t *, ze_driver_handle_t *);
typedef ze_result_t (*device_get_fn)(ze_driver_handle_t, uint32_t *, ze_device_handle_t *);
typedef ze_result_t (*device_properties_fn)(ze_device_handle_t, ze_device_properties_t *);

static FILE *call_log;

static int logged(const char *function, ze_result_t result)
{
    fprintf(call_log, "main %d %s 0x%x\n", (int)gettid(), function, (unsigned)result);
    return result == ZE_RESULT_SUCCESS ? 0 : 1;
}

/* dlsym into a function pointer of the right type, through a union: ISO C has no cast for it. */
static void *symbol(void *library, const char *name)
{
    void *address = dlsym(library, name);
    if (!address)
        fprintf(stderr, "e2e_dlopen: no %s: %s\n", name, dlerror());
    return address;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: e2e_dlopen LOG\n");
        return 2;
    }
    call_log = fopen(argv[1], "w");
    if (!call_log)
        return 2;
    void *library = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        fprintf(stderr, "e2e_dlopen: %s\n", dlerror());
        return 1;
    }
    union { void *address; init_fn call; } init = {symbol(library, "zeInit")};
    union { void *address; driver_get_fn call; } driver_get = {symbol(library, "zeDriverGet")};
    union { void *address; device_get_fn call; } device_get = {symbol(library, "zeDeviceGet")};
    union { void *address; device_properties_fn call; } properties = {
        symbol(library, "zeDeviceGetProperties")};
    if (!init.address || !driver_get.address || !device_get.address || !properties.address)
        return 1;

    int failures = logged("zeInit", init.call(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    ze_driver_handle_t driver = NULL;
    failures += logged("zeDriverGet", driver_get.call(&count, &driver));
    ze_device_handle_t device = NULL;
    count = 1;
    failures += logged("zeDeviceGet", device_get.call(driver, &count, &device));
    ze_device_properties_t device_properties = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    failures += logged("zeDeviceGetProperties", properties.call(device, &device_properties));
    fclose(call_log);
    /* The library stays open: the loader does not expect to be unloaded under its drivers. */
    return failures ? 1 : 0;
}
