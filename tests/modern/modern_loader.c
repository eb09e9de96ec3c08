/*
 * modern_loader: the simulated device as today's loaders and runtimes drive it.
 *
 * Usage: modern_loader MAJOR.MINOR
 *
 * Initializes with zeInitDrivers when the loader has it (spec 1.10; zeInit and zeDriverGet
 * otherwise), checks that the loader in use has version MAJOR.MINOR (zelLoaderGetVersions), runs work on
 * an in-order immediate list and waits with zeCommandListHostSynchronize (spec 1.6), and, with a
 * loader of spec 1.10 or later, sees an entry point the driver does not implement answered with
 * ZE_RESULT_ERROR_UNSUPPORTED_FEATURE. Then the semantics of counter-based events (spec 1.8),
 * checked against the device's truth (counter_based_semantics). Newer entry points are looked up
 * with dlsym (or, for the driver's zeCommandListHostSynchronize, by extension lookup), so that the
 * one program, built against the 1.12 headers, also runs on the 1.8 loader (the same driver
 * binary serving both loaders). Built only against headers of spec 1.10 or later.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <level_zero/loader/ze_loader.h>
#include <level_zero/ze_api.h>

#include "modern_common.h"

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
    if (modern) {
        modern_init_drivers_fn init_drivers = NULL;
        void *symbol = entry("zeInitDrivers");
        memcpy(&init_drivers, &symbol, sizeof(symbol));
        driver = modern_init_drivers(init_drivers);
        /* The driver has no NPU: asking for NPUs only finds none. */
        ze_init_driver_type_desc_t npu = {ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC, NULL,
                                          ZE_INIT_DRIVER_TYPE_FLAG_NPU};
        uint32_t npus = 0;
        ze_result_t npu_result = init_drivers(&npus, NULL, &npu);
        CHECK(npu_result != ZE_RESULT_SUCCESS || npus == 0);
    } else {
        CHECK_OK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
        uint32_t count = 1;
        CHECK_OK(zeDriverGet(&count, &driver));
        CHECK(count == 1 && driver != NULL);
    }
    return driver;
}

/* The device's truth line of the kernel whose (truncated) ticks an event gave. */
static bool is_kernel_of_truth(const char *truth, const ze_kernel_timestamp_result_t *result,
                               uint32_t bits)
{
    struct truth_line *lines = NULL;
    size_t count = truth_read(truth, &lines);
    uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    bool found = false;
    for (size_t i = 0; i < count && !found; i++)
        found = strcmp(lines[i].kind, "kernel") == 0 &&
                (lines[i].start_ticks & mask) == result->global.kernelStart &&
                (lines[i].end_ticks & mask) == result->global.kernelEnd;
    free(lines);
    return found;
}

/*
 * Counter-based events (spec 1.8 experimental), with and without kernel timestamps: refused on
 * lists that are not in order, never reset or host-signalled, reusable without a reset, and
 * always the state of their latest use: a reused event is not signalled until that use completes,
 * and an earlier use that completes later (on another list) leaves it as it is.
 */
static void counter_based_semantics(struct l0 *l0, ze_kernel_handle_t spin, const char *truth)
{
    /* The driver's own zeCommandListHostSynchronize: a 1.8 loader may not export one. */
    ze_result_t (*list_synchronize)(ze_command_list_handle_t, uint64_t) = NULL;
    void *function = modern_extension(l0->driver, "zeCommandListHostSynchronize");
    memcpy(&list_synchronize, &function, sizeof(function));
    CHECK(list_synchronize != NULL);
    ze_device_properties_t properties;
    memset(&properties, 0, sizeof(properties));
    properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    CHECK_OK(zeDeviceGetProperties(l0->device, &properties));
    ze_group_count_t one = {1, 1, 1};
    ze_command_list_handle_t first = modern_in_order_list(l0);
    ze_command_list_handle_t second = modern_in_order_list(l0);
    ze_command_list_handle_t unordered = l0_immediate(l0, l0->device, 0, 0);
    ze_command_list_handle_t regular = l0_list(l0, l0->device, 0, 0);
    for (int timestamps = 0; timestamps < 2; timestamps++) {
        ze_event_pool_handle_t pool = modern_counter_based_pool(
            l0, timestamps ? ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP : 0, 1);
        ze_event_handle_t event = l0_event(pool, 0);
        /* Refused: lists that are not in order, resets, host signals. */
        l0_set_spin(spin, 1000);
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                 zeCommandListAppendLaunchKernel(unordered, spin, &one, event, 0, NULL));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                 zeCommandListAppendLaunchKernel(regular, spin, &one, event, 0, NULL));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventHostReset(event));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventHostSignal(event));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendEventReset(first, event));

        /* Reused without a reset: unsignalled until its latest use completes. */
        l0_set_spin(spin, 5000000);
        CHECK_OK(zeCommandListAppendLaunchKernel(first, spin, &one, event, 0, NULL));
        CHECK_OK(zeEventHostSynchronize(event, UINT64_MAX));
        ze_kernel_timestamp_result_t earlier = {{0, 0}, {0, 0}}, latest = {{0, 0}, {0, 0}};
        if (timestamps)
            CHECK_OK(zeEventQueryKernelTimestamp(event, &earlier));
        CHECK_OK(zeCommandListAppendLaunchKernel(first, spin, &one, event, 0, NULL));
        CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(event));
        CHECK_OK(zeEventHostSynchronize(event, UINT64_MAX));
        if (timestamps) {
            CHECK_OK(zeEventQueryKernelTimestamp(event, &latest));
            CHECK(latest.global.kernelStart != earlier.global.kernelStart);
            CHECK(is_kernel_of_truth(truth, &earlier, properties.kernelTimestampValidBits));
            CHECK(is_kernel_of_truth(truth, &latest, properties.kernelTimestampValidBits));
        }

        /* The latest use wins even when an earlier one, on another list, ends later. */
        l0_set_spin(spin, 60000000);
        CHECK_OK(zeCommandListAppendLaunchKernel(first, spin, &one, event, 0, NULL));
        l0_set_spin(spin, 1000000);
        CHECK_OK(zeCommandListAppendLaunchKernel(second, spin, &one, event, 0, NULL));
        CHECK_OK(zeEventHostSynchronize(event, UINT64_MAX));
        CHECK_ZE(ZE_RESULT_NOT_READY, list_synchronize(first, 0));
        if (timestamps)
            CHECK_OK(zeEventQueryKernelTimestamp(event, &latest));
        CHECK_OK(list_synchronize(first, UINT64_MAX));
        CHECK_OK(zeEventQueryStatus(event));
        if (timestamps) {
            ze_kernel_timestamp_result_t after = {{0, 0}, {0, 0}};
            CHECK_OK(zeEventQueryKernelTimestamp(event, &after));
            CHECK(after.global.kernelStart == latest.global.kernelStart &&
                  after.global.kernelEnd == latest.global.kernelEnd);
            CHECK(is_kernel_of_truth(truth, &after, properties.kernelTimestampValidBits));
            /* The short one's: under 30 ms (timerResolution: ns per tick). */
            CHECK((after.global.kernelEnd - after.global.kernelStart) * properties.timerResolution <
                  30000000u);
        }
        CHECK_OK(zeEventDestroy(event));
        CHECK_OK(zeEventPoolDestroy(pool));
    }
    CHECK_OK(zeCommandListDestroy(regular));
    CHECK_OK(zeCommandListDestroy(unordered));
    CHECK_OK(zeCommandListDestroy(second));
    CHECK_OK(zeCommandListDestroy(first));
}

int main(int argc, char **argv)
{
    int want_major = 0, want_minor = 0, major = -1, minor = -1;
    if (argc != 2 || sscanf(argv[1], "%d.%d", &want_major, &want_minor) != 2) {
        fprintf(stderr, "usage: modern_loader MAJOR.MINOR\n");
        return 2;
    }
    char truth[64];
    truth_setup(truth, sizeof(truth));
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
    struct l0 l0;
    modern_open(&l0, driver);
    ze_kernel_handle_t spin = l0_kernel(&l0, "zesim_spin");
    ze_kernel_handle_t fill = l0_kernel(&l0, "zesim_fill_u32");
    uint32_t *data = l0_shared(&l0, ELEMENTS * sizeof(uint32_t));
    memset(data, 0, ELEMENTS * sizeof(uint32_t));
    /* An in-order immediate list, as SYCL's in-order queues use. */
    ze_command_list_handle_t list = modern_in_order_list(&l0);

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
    counter_based_semantics(&l0, spin, truth);
    CHECK_OK(zeMemFree(l0.context, data));
    CHECK_OK(zeKernelDestroy(fill));
    CHECK_OK(zeKernelDestroy(spin));
    l0_close(&l0);
    unlink(truth);
    printf("loader %d.%d: %s\n", major, minor, modern ? "zeInitDrivers" : "zeInit");
    return check_pass("modern_loader");
}
