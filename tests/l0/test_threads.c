/*
 * test_threads: the driver is used from several application threads at once.
 * Each thread has its own immediate list, kernel and buffer and its own event in a shared pool,
 * and also submits its own regular list to one shared queue with its own fence; every result is
 * checked.
 */
#include <pthread.h>

#include "check.h"

#define THREADS 4
#define ROUNDS 25
#define ELEMENTS 256

struct worker {
    struct l0 *l0;
    ze_event_pool_handle_t pool;
    ze_command_queue_handle_t shared_queue;
    uint32_t index;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    struct l0 *l0 = w->l0;
    ze_event_handle_t event = l0_event(w->pool, w->index);
    ze_kernel_handle_t fill = l0_kernel(l0, "zesim_fill_u32");
    uint32_t *data = l0_shared(l0, ELEMENTS * sizeof(uint32_t));
    CHECK_OK(zeKernelSetGroupSize(fill, 64, 1, 1));
    CHECK_OK(zeKernelSetArgumentValue(fill, 0, sizeof(data), &data));
    ze_command_list_handle_t immediate =
        l0_immediate(l0, l0->device, 0, (w->index % 2) ? TEST_COMMAND_QUEUE_FLAG_IN_ORDER : 0);
    ze_group_count_t groups = {ELEMENTS / 64, 1, 1};
    for (uint32_t round = 0; round < ROUNDS; round++) {
        uint32_t value = w->index * 1000 + round;
        CHECK_OK(zeKernelSetArgumentValue(fill, 1, sizeof(value), &value));
        CHECK_OK(zeCommandListAppendLaunchKernel(immediate, fill, &groups, event, 0, NULL));
        CHECK_OK(zeEventHostSynchronize(event, UINT64_MAX));
        CHECK_OK(zeEventHostReset(event));
        for (uint32_t i = 0; i < ELEMENTS; i++)
            CHECK(data[i] == value);
    }
    CHECK_OK(zeCommandListDestroy(immediate));

    ze_command_list_handle_t list = l0_list(l0, l0->device, 0, 0);
    uint32_t value = 0xF00 + w->index;
    CHECK_OK(zeKernelSetArgumentValue(fill, 1, sizeof(value), &value));
    CHECK_OK(zeCommandListAppendLaunchKernel(list, fill, &groups, NULL, 0, NULL));
    CHECK_OK(zeCommandListClose(list));
    ze_fence_desc_t fence_desc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
    ze_fence_handle_t fence = NULL;
    CHECK_OK(zeFenceCreate(w->shared_queue, &fence_desc, &fence));
    for (uint32_t round = 0; round < ROUNDS; round++) {
        CHECK_OK(zeCommandQueueExecuteCommandLists(w->shared_queue, 1, &list, fence));
        CHECK_OK(zeFenceHostSynchronize(fence, UINT64_MAX));
        CHECK_OK(zeFenceReset(fence));
        CHECK(data[0] == value && data[ELEMENTS - 1] == value);
    }
    CHECK_OK(zeFenceDestroy(fence));
    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeKernelDestroy(fill));
    CHECK_OK(zeMemFree(l0->context, data));
    CHECK_OK(zeEventDestroy(event));
    return NULL;
}

int main(void)
{
    struct l0 l0;
    l0_open(&l0);
    ze_event_pool_handle_t pool = l0_pool(&l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, THREADS);
    ze_command_queue_handle_t queue = l0_queue(&l0, l0.device, 0, 0);
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    for (uint32_t t = 0; t < THREADS; t++) {
        workers[t] = (struct worker){&l0, pool, queue, t};
        CHECK(pthread_create(&threads[t], NULL, work, &workers[t]) == 0);
    }
    for (uint32_t t = 0; t < THREADS; t++)
        CHECK(pthread_join(threads[t], NULL) == 0);
    CHECK_OK(zeCommandQueueDestroy(queue));
    CHECK_OK(zeEventPoolDestroy(pool));
    l0_close(&l0);
    return check_pass("test_threads");
}
