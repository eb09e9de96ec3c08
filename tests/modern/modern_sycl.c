/*
 * modern_sycl: drives the device the way a SYCL runtime on Level Zero 1.10+ does, for
 * tests/timing/check_timing.py.
 *
 * Usage: modern_sycl sycl REPORT
 *
 * zeInitDrivers instead of zeInit; one in-order immediate list; every round launches two kernels
 * that signal the application's own kernel-timestamp events and copies a buffer (no event), waits
 * with zeCommandListHostSynchronize, reads its kernels' timestamps from its events, checks the
 * copy, and resets the events for the next round. Then a regular list (a kernel and a copy) is
 * replayed REPLAYS times with zeCommandListImmediateAppendCommandListsExp, each replay waited for
 * with zeCommandListHostSynchronize. REPORT gets what check_timing.py expects:
 * `timings N` (one per executed command: the checker also matches every timing with one
 * command the device executed, and every executed command with one timing; its `executions`
 * line would apply to the immediate list's appends as well, so it is not written) and `app_ts GS GE CS CE` per timestamp read. The program
 * knows nothing of the tracer: untraced it behaves the same. Built only against headers of spec
 * 1.10 or later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <level_zero/ze_api.h>

#include "check.h"

#define ROUNDS 4u
#define BYTES 65536u
#define REPLAYS 3u

static FILE *report;

static void read_timestamps(ze_event_handle_t event)
{
    ze_kernel_timestamp_result_t result;
    CHECK_OK(zeEventQueryKernelTimestamp(event, &result));
    CHECK(result.global.kernelEnd != result.global.kernelStart);
    fprintf(report, "app_ts %llu %llu %llu %llu\n", (unsigned long long)result.global.kernelStart,
            (unsigned long long)result.global.kernelEnd,
            (unsigned long long)result.context.kernelStart,
            (unsigned long long)result.context.kernelEnd);
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "sycl") != 0) {
        fprintf(stderr, "usage: modern_sycl sycl REPORT\n");
        return 2;
    }
    report = fopen(argv[2], "w");
    CHECK(report != NULL);

    ze_init_driver_type_desc_t init = {ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC, NULL,
                                       ZE_INIT_DRIVER_TYPE_FLAG_GPU};
    uint32_t count = 0;
    CHECK_OK(zeInitDrivers(&count, NULL, &init));
    CHECK(count == 1);
    ze_driver_handle_t driver = NULL;
    CHECK_OK(zeInitDrivers(&count, &driver, &init));
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
    ze_kernel_handle_t spin = NULL;
    CHECK_OK(zeKernelCreate(module, &spin_desc, &spin));
    uint64_t spin_ns = 200000;
    CHECK_OK(zeKernelSetArgumentValue(spin, 0, sizeof(spin_ns), &spin_ns));

    ze_event_pool_desc_t pool_desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                                      ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
                                          ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                                      2};
    ze_event_pool_handle_t pool = NULL;
    CHECK_OK(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool));
    ze_event_handle_t events[2];
    for (uint32_t i = 0; i < 2; i++) {
        ze_event_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, i, ZE_EVENT_SCOPE_FLAG_HOST,
                                ZE_EVENT_SCOPE_FLAG_HOST};
        CHECK_OK(zeEventCreate(pool, &desc, &events[i]));
    }

    ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    unsigned char *source = NULL, *target = NULL;
    CHECK_OK(zeMemAllocShared(context, &device_desc, &host_desc, BYTES, 64, device,
                              (void **)&source));
    CHECK_OK(zeMemAllocShared(context, &device_desc, &host_desc, BYTES, 64, device,
                              (void **)&target));

    ze_command_queue_desc_t queue_desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0,
                                          ZE_COMMAND_QUEUE_FLAG_IN_ORDER,
                                          ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                          ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list = NULL;
    CHECK_OK(zeCommandListCreateImmediate(context, device, &queue_desc, &list));

    ze_group_count_t one = {1, 1, 1};
    for (uint32_t round = 0; round < ROUNDS; round++) {
        memset(source, (int)(round + 1), BYTES);
        CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, events[0], 0, NULL));
        CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, events[1], 0, NULL));
        CHECK_OK(zeCommandListAppendMemoryCopy(list, target, source, BYTES, NULL, 0, NULL));
        CHECK_OK(zeCommandListHostSynchronize(list, UINT64_MAX));
        CHECK(target[0] == round + 1 && target[BYTES - 1] == round + 1);
        for (uint32_t i = 0; i < 2; i++) {
            read_timestamps(events[i]);
            CHECK_OK(zeEventHostReset(events[i]));
        }
    }

    /* A graph: a regular list recorded once and replayed on the immediate list. */
    ze_command_list_desc_t regular_desc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
    ze_command_list_handle_t regular = NULL;
    CHECK_OK(zeCommandListCreate(context, device, &regular_desc, &regular));
    CHECK_OK(zeCommandListAppendLaunchKernel(regular, spin, &one, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendMemoryCopy(regular, target, source, BYTES, NULL, 0, NULL));
    CHECK_OK(zeCommandListClose(regular));
    for (uint32_t replay = 0; replay < REPLAYS; replay++) {
        memset(source, (int)(0x80 + replay), BYTES);
        CHECK_OK(zeCommandListImmediateAppendCommandListsExp(list, 1, &regular, NULL, 0, NULL));
        CHECK_OK(zeCommandListHostSynchronize(list, UINT64_MAX));
        CHECK(target[0] == 0x80 + replay && target[BYTES - 1] == 0x80 + replay);
    }
    CHECK_OK(zeCommandListDestroy(regular));
    fprintf(report, "timings %u\n", ROUNDS * 3 + REPLAYS * 2);

    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeMemFree(context, source));
    CHECK_OK(zeMemFree(context, target));
    for (uint32_t i = 0; i < 2; i++)
        CHECK_OK(zeEventDestroy(events[i]));
    CHECK_OK(zeEventPoolDestroy(pool));
    CHECK_OK(zeKernelDestroy(spin));
    CHECK_OK(zeModuleDestroy(module));
    CHECK_OK(zeContextDestroy(context));
    fclose(report);
    return check_pass("modern_sycl");
}
