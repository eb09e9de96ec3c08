/*
 * modern_loader: the simulated device as today's loaders and runtimes drive it.
 *
 * Usage: modern_loader MAJOR.MINOR
 *
 * Initializes with zeInitDrivers when the loader has it (spec 1.10; zeInit and zeDriverGet
 * otherwise), checks that the loader in use has version MAJOR.MINOR (zelLoaderGetVersions), runs work on
 * an in-order immediate list and waits with zeCommandListHostSynchronize (spec 1.6), and, with a
 * loader of spec 1.10 or later, sees an entry point the driver does not implement answered with
 * ZE_RESULT_ERROR_UNSUPPORTED_FEATURE. Newer entry points are looked up with dlsym, so that the
 * one program, built against the 1.12 headers, also runs on the 1.8 loader (the same driver
 * binary serving both loaders). Built only against headers of spec 1.10 or later.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <level_zero/loader/ze_loader.h>
#include <level_zero/ze_api.h>

#include "check.h"

#define ELEMENTS 4096u

static void *entry(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

/* The loader's own version, as it reports it. */
static void loader_version(int *major, int *minor)
{
    size_t count = 0;
    CHECK_OK(zelLoaderGetVersions(&count, NULL));
    CHECK(count >= 1 && count < 16);
    zel_component_version_t versions[16];
    CHECK_OK(zelLoaderGetVersions(&count, versions));
    for (size_t i = 0; i < count; i++) {
        if (strcmp(versions[i].component_name, "loader") == 0) {
            *major = versions[i].component_lib_version.major;
            *minor = versions[i].component_lib_version.minor;
            return;
        }
    }
    CHECK(!"the loader reports no 'loader' component");
}

static ze_driver_handle_t open_driver(bool modern)
{
    ze_driver_handle_t driver = NULL;
    uint32_t count = 0;
    if (modern) {
        ze_result_t (*init_drivers)(uint32_t *, ze_driver_handle_t *,
                                    ze_init_driver_type_desc_t *) = NULL;
        void *symbol = entry("zeInitDrivers");
        memcpy(&init_drivers, &symbol, sizeof(symbol));
        CHECK(init_drivers != NULL);
        ze_init_driver_type_desc_t desc = {ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC, NULL,
                                           ZE_INIT_DRIVER_TYPE_FLAG_GPU};
        CHECK_OK(init_drivers(&count, NULL, &desc));
        CHECK(count == 1);
        CHECK_OK(init_drivers(&count, &driver, &desc));
        /* The driver has no NPU: asking for NPUs only finds none. */
        ze_init_driver_type_desc_t npu = {ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC, NULL,
                                          ZE_INIT_DRIVER_TYPE_FLAG_NPU};
        uint32_t npus = 0;
        ze_result_t npu_result = init_drivers(&npus, NULL, &npu);
        CHECK(npu_result != ZE_RESULT_SUCCESS || npus == 0);
    } else {
        CHECK_OK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
        count = 1;
        CHECK_OK(zeDriverGet(&count, &driver));
    }
    CHECK(count == 1 && driver != NULL);
    return driver;
}

int main(int argc, char **argv)
{
    int want_major = 0, want_minor = 0, major = -1, minor = -1;
    if (argc != 2 || sscanf(argv[1], "%d.%d", &want_major, &want_minor) != 2) {
        fprintf(stderr, "usage: modern_loader MAJOR.MINOR\n");
        return 2;
    }
    /* The loader lists its components once initialized. */
    bool modern = entry("zeInitDrivers") != NULL;
    ze_driver_handle_t driver = open_driver(modern);
    loader_version(&major, &minor);
    if (major != want_major || minor != want_minor) {
        fprintf(stderr, "FAIL: loader %d.%d, expected %d.%d\n", major, minor, want_major,
                want_minor);
        return 1;
    }
    /* Loaders from 1.18 on implement spec 1.10's zeInitDrivers. */
    CHECK(modern == (major > 1 || minor >= 18));
    uint32_t devices = 1;
    ze_device_handle_t device = NULL;
    CHECK_OK(zeDeviceGet(driver, &devices, &device));
    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t context = NULL;
    CHECK_OK(zeContextCreate(driver, &context_desc, &context));
    static const uint8_t binary[] = {0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0};
    ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV,
                                    sizeof(binary), binary, NULL, NULL};
    ze_module_handle_t module = NULL;
    CHECK_OK(zeModuleCreate(context, device, &module_desc, &module, NULL));
    ze_kernel_desc_t spin_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "zesim_spin"};
    ze_kernel_desc_t fill_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "zesim_fill_u32"};
    ze_kernel_handle_t spin = NULL, fill = NULL;
    CHECK_OK(zeKernelCreate(module, &spin_desc, &spin));
    CHECK_OK(zeKernelCreate(module, &fill_desc, &fill));

    ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    uint32_t *data = NULL;
    CHECK_OK(zeMemAllocShared(context, &device_desc, &host_desc, ELEMENTS * sizeof(uint32_t), 64,
                              device, (void **)&data));
    memset(data, 0, ELEMENTS * sizeof(uint32_t));

    /* An in-order immediate list, as SYCL's in-order queues use. */
    ze_command_queue_desc_t queue_desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0,
                                          ZE_COMMAND_QUEUE_FLAG_IN_ORDER,
                                          ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                          ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list = NULL;
    CHECK_OK(zeCommandListCreateImmediate(context, device, &queue_desc, &list));

    /* A spin first, so that the fill has not run when the append returns: only a real wait
     * makes the data right. */
    uint64_t spin_ns = 30000000;
    ze_group_count_t one = {1, 1, 1};
    CHECK_OK(zeKernelSetArgumentValue(spin, 0, sizeof(spin_ns), &spin_ns));
    CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, NULL, 0, NULL));
    uint32_t value = 0x5eed;
    CHECK_OK(zeKernelSetArgumentValue(fill, 0, sizeof(data), &data));
    CHECK_OK(zeKernelSetArgumentValue(fill, 1, sizeof(value), &value));
    CHECK_OK(zeKernelSetGroupSize(fill, 64, 1, 1));
    ze_group_count_t groups = {ELEMENTS / 64, 1, 1};
    CHECK_OK(zeCommandListAppendLaunchKernel(list, fill, &groups, NULL, 0, NULL));

    ze_result_t (*host_synchronize)(ze_command_list_handle_t, uint64_t) = NULL;
    void *symbol = entry("zeCommandListHostSynchronize");
    memcpy(&host_synchronize, &symbol, sizeof(symbol));
    if (modern)
        CHECK(host_synchronize != NULL);
    if (host_synchronize != NULL && modern) {
        CHECK_OK(host_synchronize(list, UINT64_MAX));
    } else {
        CHECK_OK(zeCommandListDestroy(list)); /* waits for the list's work */
        list = NULL;
    }
    for (uint32_t i = 0; i < ELEMENTS; i++)
        CHECK(data[i] == value);

    if (modern) {
        /* Spec 1.9's zeCommandListGetDeviceHandle: the driver leaves it out; the loader answers. */
        ze_result_t (*get_device)(ze_command_list_handle_t, ze_device_handle_t *) = NULL;
        symbol = entry("zeCommandListGetDeviceHandle");
        memcpy(&get_device, &symbol, sizeof(symbol));
        CHECK(get_device != NULL);
        ze_device_handle_t got = NULL;
        CHECK_ZE(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, get_device(list, &got));
    }

    if (list)
        CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeMemFree(context, data));
    CHECK_OK(zeKernelDestroy(fill));
    CHECK_OK(zeKernelDestroy(spin));
    CHECK_OK(zeModuleDestroy(module));
    CHECK_OK(zeContextDestroy(context));
    printf("loader %d.%d: %s\n", major, minor, modern ? "zeInitDrivers" : "zeInit");
    return check_pass("modern_loader");
}
