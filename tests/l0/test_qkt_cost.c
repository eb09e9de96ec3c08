/*
 * test_qkt_cost: the driver cost that makes device-side timestamp queries O(N²).
 * Run with ZESIM_QKT_COST_NS: each zeCommandListAppendQueryKernelTimestamps costs more the more
 * such queries were appended and not yet observed complete by a host synchronization; after a
 * synchronization the cost falls back. Asserts that the cost grows and falls, not how fast.
 */
#include <stdlib.h>

#include "check.h"

#define BATCH 10

static uint64_t append_batch(ze_command_list_handle_t list, ze_event_handle_t *event, void *dst)
{
    uint64_t start = now_mono_ns();
    for (int i = 0; i < BATCH; i++)
        CHECK_OK(
            zeCommandListAppendQueryKernelTimestamps(list, 1, event, dst, NULL, NULL, 0, NULL));
    return now_mono_ns() - start;
}

int main(void)
{
    /* The driver reads its configuration at zeInit: a cost unless the caller chose one. */
    CHECK(setenv("ZESIM_QKT_COST_NS", "50000", 0) == 0);
    struct l0 l0;
    l0_open(&l0);
    ze_event_pool_handle_t pool =
        l0_pool(&l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 1);
    ze_event_handle_t event = l0_event(pool, 0);
    CHECK_OK(zeEventHostSignal(event));
    ze_kernel_timestamp_result_t *dst = l0_shared(&l0, sizeof(*dst));
    ze_command_queue_handle_t queue = l0_queue(&l0, l0.device, 0, 0);

    ze_command_list_handle_t list = l0_list(&l0, l0.device, 0, 0);
    uint64_t first = append_batch(list, &event, dst);
    for (int i = 0; i < 2; i++)
        append_batch(list, &event, dst);
    uint64_t fourth = append_batch(list, &event, dst);
    CHECK(fourth > first); /* 30..39 outstanding queries against 0..9 */

    CHECK_OK(zeCommandListClose(list));
    CHECK_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    CHECK_OK(zeCommandQueueSynchronize(queue, UINT64_MAX)); /* observed: the debt is paid */
    ze_command_list_handle_t list2 = l0_list(&l0, l0.device, 0, 0);
    uint64_t after_sync = append_batch(list2, &event, dst);
    CHECK(after_sync < fourth);

    /* Queries of a list destroyed unexecuted stop costing too. */
    CHECK_OK(zeCommandListDestroy(list2));
    ze_command_list_handle_t list3 = l0_list(&l0, l0.device, 0, 0);
    uint64_t after_destroy = append_batch(list3, &event, dst);
    CHECK(after_destroy < fourth);

    CHECK_OK(zeCommandListDestroy(list3));
    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeCommandQueueDestroy(queue));
    CHECK_OK(zeMemFree(l0.context, dst));
    CHECK_OK(zeEventDestroy(event));
    CHECK_OK(zeEventPoolDestroy(pool));
    l0_close(&l0);
    return check_pass("test_qkt_cost");
}
