/*
 * modern_sycl: drives the device the way a SYCL runtime on Level Zero 1.10+ does, for
 * tests/modern/check_modern.py (which runs tests/timing/check_timing.py's checks, then its own).
 *
 * Usage: modern_sycl sycl REPORT
 *
 * zeInitDrivers instead of zeInit. zeCommandListHostSynchronize is reached as runtimes reach
 * entry points newer than the loader they were built for: through
 * zeDriverGetExtensionFunctionAddress, which also gives the driver's own
 * zexSimulatorGetDeviceCount (a function no header declares). One in-order immediate list; every
 * round launches two kernels that signal counter-based kernel-timestamp events, reused round after
 * round without a reset (they cannot be reset: one attempt is refused), and copies a buffer
 * signalling a counter-based event without timestamps; it waits (the list's host
 * synchronization, or that event's every other round), checks the copy and reads its kernels'
 * timestamps from its events. Then an external semaphore is signalled and waited for on the list,
 * and a regular list (a kernel and a copy) is replayed REPLAYS times with
 * zeCommandListImmediateAppendCommandListsExp, each replay waited for.
 *
 * REPORT gets what check_timing.py expects: `timings N` (one per executed command: the checker
 * matches every timing with one command the device executed, and every executed kernel, copy and
 * fill with one timing) and `app_ts GS GE CS CE` per timestamp read; and for check_modern.py:
 * `list HANDLE`, `list_synchronize N` (calls made through the looked-up pointer) and
 * `extension NAME PATH` (the object that holds the code each lookup returned: untraced, the
 * loader's or the driver's; under zeprof, the shim's for a function the headers declare, and still
 * the driver's for one they do not). The program knows nothing of the tracer: untraced it behaves the same,
 * and its stdout is the same. Built only against headers of spec 1.12 or later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <level_zero/ze_api.h>

#include "modern_common.h"

#define ROUNDS 4u
#define BYTES 65536u
#define REPLAYS 3u
#define KERNEL_EVENTS 2u

static FILE *report;
static ze_result_t (*list_synchronize)(ze_command_list_handle_t, uint64_t);
static unsigned list_synchronizations;

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

static void synchronize(ze_command_list_handle_t list)
{
    CHECK_OK(list_synchronize(list, UINT64_MAX));
    list_synchronizations++;
}

/* The two lookups: a function the headers declare, and one of the driver's own. */
static void look_up_extensions(struct l0 *l0)
{
    void *function = modern_extension(l0->driver, "zeCommandListHostSynchronize");
    CHECK(function != NULL);
    memcpy(&list_synchronize, &function, sizeof(function));
    fprintf(report, "extension zeCommandListHostSynchronize %s\n", modern_object_of(function));

    ze_result_t (*device_count)(ze_driver_handle_t, uint32_t *) = NULL;
    function = modern_extension(l0->driver, "zexSimulatorGetDeviceCount");
    CHECK(function != NULL);
    memcpy(&device_count, &function, sizeof(function));
    fprintf(report, "extension zexSimulatorGetDeviceCount %s\n", modern_object_of(function));
    uint32_t count = 0;
    CHECK_OK(device_count(l0->driver, &count));
    CHECK(count == l0->device_count);
    CHECK(modern_extension(l0->driver, "zexNoSuchFunction") == NULL);
}

/* Rounds of two kernels on reused counter-based timestamp events and a copy. */
static void run_rounds(struct l0 *l0, ze_command_list_handle_t list, ze_kernel_handle_t spin,
                       unsigned char *source, unsigned char *target)
{
    ze_event_pool_handle_t timestamp_pool =
        modern_counter_based_pool(l0, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, KERNEL_EVENTS);
    ze_event_pool_handle_t plain_pool = modern_counter_based_pool(l0, 0, 1);
    ze_event_handle_t kernel_events[KERNEL_EVENTS];
    for (uint32_t i = 0; i < KERNEL_EVENTS; i++)
        kernel_events[i] = l0_event(timestamp_pool, i);
    ze_event_handle_t copied = l0_event(plain_pool, 0);

    ze_group_count_t one = {1, 1, 1};
    for (uint32_t round = 0; round < ROUNDS; round++) {
        memset(source, (int)(round + 1), BYTES);
        for (uint32_t i = 0; i < KERNEL_EVENTS; i++)
            CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, kernel_events[i], 0, NULL));
        CHECK_OK(zeCommandListAppendMemoryCopy(list, target, source, BYTES, copied, 0, NULL));
        /* Counter-based events are never reset: the driver refuses, nothing changes. */
        if (round == 0)
            CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventHostReset(kernel_events[1]));
        if (round % 2 == 0)
            synchronize(list);
        else
            CHECK_OK(zeEventHostSynchronize(copied, UINT64_MAX));
        CHECK(target[0] == round + 1 && target[BYTES - 1] == round + 1);
        for (uint32_t i = 0; i < KERNEL_EVENTS; i++)
            read_timestamps(kernel_events[i]);
    }
    for (uint32_t i = 0; i < KERNEL_EVENTS; i++)
        CHECK_OK(zeEventDestroy(kernel_events[i]));
    CHECK_OK(zeEventDestroy(copied));
    CHECK_OK(zeEventPoolDestroy(timestamp_pool));
    CHECK_OK(zeEventPoolDestroy(plain_pool));
}

/* An external semaphore signalled, then waited for, on the list (spec 1.12). */
static void signal_and_wait_semaphore(struct l0 *l0, ze_command_list_handle_t list)
{
    ze_external_semaphore_fd_ext_desc_t fd_desc = {ZE_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_FD_EXT_DESC,
                                                   NULL, -1};
    ze_external_semaphore_ext_desc_t desc = {ZE_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_EXT_DESC,
                                             &fd_desc, ZE_EXTERNAL_SEMAPHORE_EXT_FLAG_OPAQUE_FD};
    ze_external_semaphore_ext_handle_t semaphore = NULL;
    CHECK_OK(zeDeviceImportExternalSemaphoreExt(l0->device, &desc, &semaphore));
    ze_external_semaphore_signal_params_ext_t signal = {
        ZE_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_EXT, NULL, 1};
    ze_external_semaphore_wait_params_ext_t wait = {
        ZE_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_WAIT_PARAMS_EXT, NULL, 1};
    CHECK_OK(zeCommandListAppendSignalExternalSemaphoreExt(list, 1, &semaphore, &signal, NULL, 0,
                                                           NULL));
    CHECK_OK(zeCommandListAppendWaitExternalSemaphoreExt(list, 1, &semaphore, &wait, NULL, 0,
                                                         NULL));
    synchronize(list);
    CHECK_OK(zeDeviceReleaseExternalSemaphoreExt(semaphore));
}

/* A graph: a regular list recorded once and replayed on the immediate list. */
static void replay_graph(struct l0 *l0, ze_command_list_handle_t list, ze_kernel_handle_t spin,
                         unsigned char *source, unsigned char *target)
{
    ze_command_list_handle_t regular = l0_list(l0, l0->device, 0, 0);
    ze_group_count_t one = {1, 1, 1};
    CHECK_OK(zeCommandListAppendLaunchKernel(regular, spin, &one, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendMemoryCopy(regular, target, source, BYTES, NULL, 0, NULL));
    CHECK_OK(zeCommandListClose(regular));
    for (uint32_t replay = 0; replay < REPLAYS; replay++) {
        memset(source, (int)(0x80 + replay), BYTES);
        CHECK_OK(zeCommandListImmediateAppendCommandListsExp(list, 1, &regular, NULL, 0, NULL));
        synchronize(list);
        CHECK(target[0] == 0x80 + replay && target[BYTES - 1] == 0x80 + replay);
    }
    CHECK_OK(zeCommandListDestroy(regular));
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "sycl") != 0) {
        fprintf(stderr, "usage: modern_sycl sycl REPORT\n");
        return 2;
    }
    report = fopen(argv[2], "w");
    CHECK(report != NULL);

    struct l0 l0;
    modern_open(&l0, modern_init_drivers(zeInitDrivers));
    look_up_extensions(&l0);
    ze_kernel_handle_t spin = l0_kernel(&l0, "zesim_spin");
    l0_set_spin(spin, 200000);
    unsigned char *source = l0_shared(&l0, BYTES);
    unsigned char *target = l0_shared(&l0, BYTES);
    ze_command_list_handle_t list = modern_in_order_list(&l0);
    fprintf(report, "list %llu\n", (unsigned long long)(uintptr_t)list);

    run_rounds(&l0, list, spin, source, target);
    signal_and_wait_semaphore(&l0, list);
    replay_graph(&l0, list, spin, source, target);
    fprintf(report, "timings %u\n", ROUNDS * (KERNEL_EVENTS + 1) + 2 + REPLAYS * 2);
    fprintf(report, "list_synchronize %u\n", list_synchronizations);

    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeMemFree(l0.context, source));
    CHECK_OK(zeMemFree(l0.context, target));
    CHECK_OK(zeKernelDestroy(spin));
    l0_close(&l0);
    fclose(report);
    return check_pass("modern_sycl");
}
