/*
 * test_events: events and fences as the spec defines them.
 * Host signal/query/reset; host synchronize timeouts (0 polls, a finite timeout gives NOT_READY no
 * sooner than asked, UINT64_MAX waits) while a zesim_spin kernel runs; kernel timestamps only for
 * timestamp pools; the last signal wins; signal-event commands and barriers carry their own
 * timestamps; wait lists, wait-on-events and event-reset commands; fences and queue sync.
 */
#include <string.h>

#include "check.h"

#define SPIN_NS (300ull * 1000 * 1000)

static uint64_t mask(struct l0 *l0)
{
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    CHECK_OK(zeDeviceGetProperties(l0->device, &props));
    return props.kernelTimestampValidBits >= 64 ? UINT64_MAX
                                                : (1ull << props.kernelTimestampValidBits) - 1;
}

/* a <= b on a wrapping counter of the given mask (for intervals far shorter than the wrap). */
static bool wrapped_le(uint64_t a, uint64_t b, uint64_t m)
{
    return ((b - a) & m) <= m / 2;
}

static void test_host_side(struct l0 *l0)
{
    ze_event_pool_handle_t pool = l0_pool(l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 2);
    ze_event_handle_t event = l0_event(pool, 0);
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(event));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventHostSynchronize(event, 0));
    CHECK_OK(zeEventHostSignal(event));
    CHECK_OK(zeEventQueryStatus(event));
    CHECK_OK(zeEventHostSynchronize(event, 0));
    CHECK_OK(zeEventHostSynchronize(event, UINT64_MAX));
    ze_kernel_timestamp_result_t ts;
    /* Not a timestamp pool: no kernel timestamps. */
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventQueryKernelTimestamp(event, &ts));
    CHECK_OK(zeEventHostReset(event));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(event));
    /* One live event per index; a pool with live events cannot be destroyed. */
    ze_event_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, 0, 0};
    ze_event_handle_t twin = NULL;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventCreate(pool, &desc, &twin));
    desc.index = 2;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventCreate(pool, &desc, &twin));
    CHECK_ZE(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zeEventPoolDestroy(pool));
    CHECK_OK(zeEventDestroy(event));
    CHECK_OK(zeEventPoolDestroy(pool));
}

static void test_timeouts(struct l0 *l0)
{
    ze_event_pool_handle_t pool =
        l0_pool(l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 1);
    ze_event_handle_t done = l0_event(pool, 0);
    ze_kernel_handle_t spin = l0_kernel(l0, "zesim_spin");
    l0_set_spin(spin, SPIN_NS);
    ze_command_list_handle_t list = l0_immediate(l0, l0->device, 0, 0);
    ze_group_count_t one = {1, 1, 1};
    uint64_t t0 = now_mono_ns();
    CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, done, 0, NULL));
    /* Polls while the kernel runs. */
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventHostSynchronize(done, 0));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(done));
    ze_kernel_timestamp_result_t ts;
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryKernelTimestamp(done, &ts));
    /* A finite timeout gives up, and not before the time asked. */
    uint64_t before = now_mono_ns();
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventHostSynchronize(done, 20 * 1000 * 1000));
    CHECK(now_mono_ns() - before >= 20 * 1000 * 1000);
    CHECK_OK(zeEventHostSynchronize(done, UINT64_MAX));
    CHECK(now_mono_ns() - t0 >= SPIN_NS);
    CHECK_OK(zeEventQueryKernelTimestamp(done, &ts));
    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeKernelDestroy(spin));
    CHECK_OK(zeEventDestroy(done));
    CHECK_OK(zeEventPoolDestroy(pool));
}

static void test_timestamp_sources(struct l0 *l0)
{
    uint64_t m = mask(l0);
    ze_event_pool_handle_t pool =
        l0_pool(l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 3);
    ze_event_handle_t kernel_event = l0_event(pool, 0), signal_event = l0_event(pool, 1),
                      barrier_event = l0_event(pool, 2);
    ze_kernel_handle_t spin = l0_kernel(l0, "zesim_spin");
    l0_set_spin(spin, 2 * 1000 * 1000);
    ze_command_list_handle_t list = l0_immediate(l0, l0->device, 0, 0);
    ze_group_count_t one = {1, 1, 1};
    CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, kernel_event, 0, NULL));
    CHECK_OK(zeCommandListAppendSignalEvent(list, signal_event));
    CHECK_OK(zeCommandListAppendBarrier(list, barrier_event, 1, &kernel_event));
    CHECK_OK(zeEventHostSynchronize(barrier_event, UINT64_MAX));
    ze_kernel_timestamp_result_t k1, s, b;
    CHECK_OK(zeEventQueryKernelTimestamp(kernel_event, &k1));
    CHECK_OK(zeEventQueryKernelTimestamp(signal_event, &s));
    CHECK_OK(zeEventQueryKernelTimestamp(barrier_event, &b));
    /* The kernel lasted about 2 ms; the signal and the barrier have their own, later times. */
    uint64_t kernel_ticks = (k1.global.kernelEnd - k1.global.kernelStart) & m;
    CHECK(kernel_ticks > 0);
    CHECK(wrapped_le(k1.global.kernelEnd, s.global.kernelStart, m));
    CHECK(wrapped_le(s.global.kernelEnd, b.global.kernelStart, m));
    CHECK(((s.global.kernelEnd - s.global.kernelStart) & m) < kernel_ticks);
    CHECK(((k1.context.kernelEnd - k1.context.kernelStart) & m) == kernel_ticks);

    /* Signalled again without a reset: the event keeps the last result. */
    CHECK_OK(zeEventHostReset(signal_event));
    CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, kernel_event, 0, NULL));
    CHECK_OK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendSignalEvent(list, signal_event));
    CHECK_OK(zeEventHostSynchronize(signal_event, UINT64_MAX));
    ze_kernel_timestamp_result_t k2;
    CHECK_OK(zeEventQueryKernelTimestamp(kernel_event, &k2));
    CHECK(k2.global.kernelStart != k1.global.kernelStart);
    CHECK(wrapped_le(b.global.kernelEnd, k2.global.kernelStart, m));

    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeKernelDestroy(spin));
    CHECK_OK(zeEventDestroy(kernel_event));
    CHECK_OK(zeEventDestroy(signal_event));
    CHECK_OK(zeEventDestroy(barrier_event));
    CHECK_OK(zeEventPoolDestroy(pool));
}

static void test_wait_lists(struct l0 *l0)
{
    ze_event_pool_handle_t pool = l0_pool(l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 4);
    ze_event_handle_t gate = l0_event(pool, 0), after_barrier = l0_event(pool, 1);
    ze_event_handle_t gate2 = l0_event(pool, 2), done = l0_event(pool, 3);
    uint32_t *data = l0_shared(l0, 64 * sizeof(uint32_t));
    memset(data, 0, 64 * sizeof(uint32_t));
    ze_kernel_handle_t fill = l0_kernel(l0, "zesim_fill_u32");
    uint32_t value = 5;
    CHECK_OK(zeKernelSetGroupSize(fill, 64, 1, 1));
    CHECK_OK(zeKernelSetArgumentValue(fill, 0, sizeof(data), &data));
    CHECK_OK(zeKernelSetArgumentValue(fill, 1, sizeof(value), &value));
    ze_command_list_handle_t list = l0_immediate(l0, l0->device, 0, 0);
    ze_group_count_t one = {1, 1, 1};
    /* A (memory-ranges) barrier that waits for a host event holds everything after it. */
    const void *ranges[1] = {data};
    size_t range_sizes[1] = {64 * sizeof(uint32_t)};
    CHECK_OK(zeCommandListAppendMemoryRangesBarrier(list, 1, range_sizes, ranges, after_barrier, 1,
                                                    &gate));
    CHECK_OK(zeCommandListAppendLaunchKernel(list, fill, &one, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendWaitOnEvents(list, 1, &gate2));
    CHECK_OK(zeCommandListAppendEventReset(list, gate));
    CHECK_OK(zeCommandListAppendSignalEvent(list, done));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventHostSynchronize(after_barrier, 10 * 1000 * 1000));
    CHECK(data[0] == 0 && data[63] == 0);
    CHECK_OK(zeEventHostSignal(gate));
    CHECK_OK(zeEventHostSynchronize(after_barrier, UINT64_MAX));
    /* The wait-on-events command holds the rest until gate2. */
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventHostSynchronize(done, 10 * 1000 * 1000));
    CHECK_OK(zeEventQueryStatus(gate));
    CHECK_OK(zeEventHostSignal(gate2));
    CHECK_OK(zeEventHostSynchronize(done, UINT64_MAX));
    CHECK(data[0] == 5 && data[63] == 5);
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(gate)); /* reset by the device */
    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeKernelDestroy(fill));
    CHECK_OK(zeMemFree(l0->context, data));
    ze_event_handle_t all[] = {gate, after_barrier, gate2, done};
    for (int i = 0; i < 4; i++)
        CHECK_OK(zeEventDestroy(all[i]));
    CHECK_OK(zeEventPoolDestroy(pool));
}

static void test_fences(struct l0 *l0)
{
    ze_command_queue_handle_t queue = l0_queue(l0, l0->device, 0, 0);
    ze_fence_desc_t desc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
    ze_fence_handle_t fence = NULL, signaled = NULL;
    CHECK_OK(zeFenceCreate(queue, &desc, &fence));
    desc.flags = ZE_FENCE_FLAG_SIGNALED;
    CHECK_OK(zeFenceCreate(queue, &desc, &signaled));
    CHECK_OK(zeFenceQueryStatus(signaled));
    CHECK_OK(zeFenceReset(signaled));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceQueryStatus(signaled));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));

    ze_kernel_handle_t spin = l0_kernel(l0, "zesim_spin");
    l0_set_spin(spin, SPIN_NS);
    ze_command_list_handle_t list = l0_list(l0, l0->device, 0, 0);
    ze_group_count_t one = {1, 1, 1};
    CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, NULL, 0, NULL));
    CHECK_OK(zeCommandListClose(list));
    CHECK_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(fence, 0));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeCommandQueueSynchronize(queue, 0));
    uint64_t before = now_mono_ns();
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(fence, 20 * 1000 * 1000));
    CHECK(now_mono_ns() - before >= 20 * 1000 * 1000);
    CHECK_OK(zeFenceHostSynchronize(fence, UINT64_MAX));
    CHECK_OK(zeFenceQueryStatus(fence));
    CHECK_OK(zeCommandQueueSynchronize(queue, 0));
    CHECK_OK(zeFenceReset(fence));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));
    /* Executed again with the same fence: signalled again when that execution completes. */
    l0_set_spin(spin, 1000);
    CHECK_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    CHECK_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    CHECK_OK(zeFenceQueryStatus(fence));
    CHECK_OK(zeFenceDestroy(fence));
    CHECK_OK(zeFenceDestroy(signaled));
    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeKernelDestroy(spin));
    CHECK_OK(zeCommandQueueDestroy(queue));
}

int main(void)
{
    struct l0 l0;
    l0_open(&l0);
    test_host_side(&l0);
    test_timeouts(&l0);
    test_timestamp_sources(&l0);
    test_wait_lists(&l0);
    test_fences(&l0);
    l0_close(&l0);
    return check_pass("test_events");
}
