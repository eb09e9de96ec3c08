/*
 * test_copy_engine: queue group 1 is copy-only.
 * Its lists refuse every kernel launch and zeCommandListAppendQueryKernelTimestamps with
 * ZE_RESULT_ERROR_INVALID_ARGUMENT (nothing is appended), yet copies and fills run and still write
 * kernel timestamps into the timestamp events they signal. A list only executes on a queue of its
 * own group (ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE otherwise).
 */
#include <string.h>

#include "check.h"

static void check_refusals(struct l0 *l0, ze_command_list_handle_t list, ze_event_handle_t ts_event)
{
    ze_kernel_handle_t kernel = l0_kernel(l0, "zesim_spin");
    l0_set_spin(kernel, 1000);
    ze_group_count_t one = {1, 1, 1};
    uint32_t count = 1;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
             zeCommandListAppendLaunchKernel(list, kernel, &one, NULL, 0, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
             zeCommandListAppendLaunchCooperativeKernel(list, kernel, &one, NULL, 0, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
             zeCommandListAppendLaunchKernelIndirect(list, kernel, &one, NULL, 0, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendLaunchMultipleKernelsIndirect(
                                                   list, 1, &kernel, &count, &one, NULL, 0, NULL));
    ze_kernel_timestamp_result_t result;
    CHECK_ZE(
        ZE_RESULT_ERROR_INVALID_ARGUMENT,
        zeCommandListAppendQueryKernelTimestamps(list, 1, &ts_event, &result, NULL, NULL, 0, NULL));
    CHECK_OK(zeKernelDestroy(kernel));
}

int main(void)
{
    struct l0 l0;
    l0_open(&l0);
    ze_event_pool_handle_t pool =
        l0_pool(&l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 3);
    ze_event_handle_t copied = l0_event(pool, 0), filled = l0_event(pool, 1),
                      immediate_copied = l0_event(pool, 2);
    uint8_t *src = l0_shared(&l0, 1 << 16), *dst = l0_shared(&l0, 1 << 16);
    for (int i = 0; i < 1 << 16; i++)
        src[i] = (uint8_t)(i ^ 0x5a);
    memset(dst, 0, 1 << 16);

    /* Regular copy list, executed on a copy queue. */
    ze_command_list_handle_t list = l0_list(&l0, l0.device, 1, 0);
    check_refusals(&l0, list, copied);
    CHECK_OK(zeCommandListAppendMemoryCopy(list, dst, src, 1 << 15, copied, 0, NULL));
    uint16_t pattern = 0xBEEF;
    CHECK_OK(zeCommandListAppendMemoryFill(list, dst + (1 << 15), &pattern, sizeof(pattern),
                                           1 << 15, filled, 1, &copied));
    CHECK_OK(zeCommandListClose(list));
    ze_command_queue_handle_t compute_queue = l0_queue(&l0, l0.device, 0, 0);
    ze_command_queue_handle_t copy_queue = l0_queue(&l0, l0.device, 1, 1);
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE,
             zeCommandQueueExecuteCommandLists(compute_queue, 1, &list, NULL));
    CHECK_OK(zeCommandQueueExecuteCommandLists(copy_queue, 1, &list, NULL));
    CHECK_OK(zeCommandQueueSynchronize(copy_queue, UINT64_MAX));
    for (int i = 0; i < 1 << 15; i++)
        CHECK(dst[i] == src[i]);
    for (int i = 1 << 15; i < 1 << 16; i += 2)
        CHECK(dst[i] == 0xEF && dst[i + 1] == 0xBE);
    ze_kernel_timestamp_result_t copy_ts, fill_ts;
    CHECK_OK(zeEventQueryKernelTimestamp(copied, &copy_ts));
    CHECK_OK(zeEventQueryKernelTimestamp(filled, &fill_ts));
    CHECK(copy_ts.global.kernelEnd != 0 || copy_ts.global.kernelStart != 0);
    CHECK(copy_ts.global.kernelEnd - copy_ts.global.kernelStart <
          (1ull << 31)); /* end after start */
    CHECK(fill_ts.global.kernelStart - copy_ts.global.kernelEnd < (1ull << 31));

    /* A compute list does not go to a copy queue either. */
    ze_command_list_handle_t compute_list = l0_list(&l0, l0.device, 0, 0);
    CHECK_OK(zeCommandListClose(compute_list));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE,
             zeCommandQueueExecuteCommandLists(copy_queue, 1, &compute_list, NULL));

    /* Immediate copy list. */
    ze_command_list_handle_t immediate = l0_immediate(&l0, l0.device, 1, 0);
    check_refusals(&l0, immediate, copied);
    memset(dst, 0, 1 << 16);
    CHECK_OK(
        zeCommandListAppendMemoryCopy(immediate, dst, src, 1 << 16, immediate_copied, 0, NULL));
    CHECK_OK(zeEventHostSynchronize(immediate_copied, UINT64_MAX));
    CHECK(memcmp(dst, src, 1 << 16) == 0);
    ze_kernel_timestamp_result_t ts;
    CHECK_OK(zeEventQueryKernelTimestamp(immediate_copied, &ts));

    /* Queue descriptors outside the groups. */
    ze_command_queue_desc_t bad = {
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 2, 0, 0, ZE_COMMAND_QUEUE_MODE_DEFAULT,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = NULL;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
             zeCommandQueueCreate(l0.context, l0.device, &bad, &queue));
    bad.ordinal = 1;
    bad.index = 99;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
             zeCommandQueueCreate(l0.context, l0.device, &bad, &queue));
    /* Immediate lists too: the copy group's last queue is taken, the one past it refused. */
    uint32_t groups = 2;
    ze_command_queue_group_properties_t group_props[2] = {
        {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES, NULL, 0, 0, 0},
        {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES, NULL, 0, 0, 0}};
    CHECK_OK(zeDeviceGetCommandQueueGroupProperties(l0.device, &groups, group_props));
    ze_command_list_handle_t last = NULL;
    bad.index = group_props[1].numQueues;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
             zeCommandListCreateImmediate(l0.context, l0.device, &bad, &last));
    bad.index = group_props[1].numQueues - 1;
    CHECK_OK(zeCommandListCreateImmediate(l0.context, l0.device, &bad, &last));
    CHECK_OK(zeCommandListDestroy(last));

    CHECK_OK(zeCommandListDestroy(immediate));
    CHECK_OK(zeCommandListDestroy(compute_list));
    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeCommandQueueDestroy(compute_queue));
    CHECK_OK(zeCommandQueueDestroy(copy_queue));
    CHECK_OK(zeMemFree(l0.context, src));
    CHECK_OK(zeMemFree(l0.context, dst));
    CHECK_OK(zeEventDestroy(copied));
    CHECK_OK(zeEventDestroy(filled));
    CHECK_OK(zeEventDestroy(immediate_copied));
    CHECK_OK(zeEventPoolDestroy(pool));
    l0_close(&l0);
    return check_pass("test_copy_engine");
}
