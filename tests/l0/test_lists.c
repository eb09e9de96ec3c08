/*
 * test_lists: regular and immediate command lists as applications and tracers use them.
 * A regular list executed three times back to back (each execute while the previous one is still
 * in flight), the same list on two queues at once, reset and reuse; immediate lists return before
 * the work ran and their destroy waits for it; the in-order flags (1.7) are accepted and honoured;
 * synchronous queues; closed and unclosed lists refused where they must be. Checked against the
 * truth file (ZESIM_TRUTH).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MS (1000ull * 1000)

static size_t count_lines(const struct truth_line *lines, size_t n, const char *kind)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += strcmp(lines[i].kind, kind) == 0;
    return count;
}

/*
 * The checks below are about kernels and copies. The device's truth also records the commands a
 * tracer adds of its own (zeprof's timing engine appends barriers and timestamp queries), so only
 * kernels and copies are kept: the program passes traced as untraced (tests/traced).
 */
static size_t keep_kernels_and_copies(struct truth_line *lines, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(lines[i].kind, "kernel") == 0 || strcmp(lines[i].kind, "copy") == 0)
            lines[kept++] = lines[i];
    return kept;
}

int main(void)
{
    char truth_path[64];
    truth_setup(truth_path, sizeof(truth_path));
    struct l0 l0;
    l0_open(&l0);
    ze_event_pool_handle_t pool =
        l0_pool(&l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 4);
    ze_event_handle_t ev0 = l0_event(pool, 0), ev1 = l0_event(pool, 1), ev2 = l0_event(pool, 2),
                      ev3 = l0_event(pool, 3);
    ze_kernel_handle_t spin = l0_kernel(&l0, "zesim_spin");
    ze_group_count_t one = {1, 1, 1};
    uint32_t *a = l0_shared(&l0, 4096), *b = l0_shared(&l0, 4096);
    memset(a, 0x11, 4096);
    memset(b, 0, 4096);

    /* 1. Three executions back to back, each submitted while the previous is in flight. */
    ze_command_queue_handle_t q0 = l0_queue(&l0, l0.device, 0, 0),
                              q1 = l0_queue(&l0, l0.device, 0, 1);
    ze_command_list_handle_t list = l0_list(&l0, l0.device, 0, 0);
    l0_set_spin(spin, 30 * MS);
    CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, ev0, 0, NULL));
    CHECK_OK(zeCommandListAppendMemoryCopy(list, b, a, 4096, NULL, 1, &ev0));
    CHECK_OK(zeCommandListClose(list));
    /* A closed list takes no more commands; an open one cannot be executed. */
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendBarrier(list, NULL, 0, NULL));
    ze_command_list_handle_t open_list = l0_list(&l0, l0.device, 0, 0);
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
             zeCommandQueueExecuteCommandLists(q0, 1, &open_list, NULL));
    for (int i = 0; i < 3; i++) {
        CHECK_OK(zeCommandQueueExecuteCommandLists(q0, 1, &list, NULL));
        CHECK_ZE(ZE_RESULT_NOT_READY, zeCommandQueueSynchronize(q0, 0));
    }
    CHECK_OK(zeCommandQueueSynchronize(q0, UINT64_MAX));
    CHECK(b[0] == 0x11111111u && b[1023] == 0x11111111u);

    /* 2. The same list on two queues at once: the executions overlap in time. */
    l0_set_spin(spin, 200 * MS); /* not seen by the closed list: it captured 30 ms */
    ze_command_list_handle_t long_list = l0_list(&l0, l0.device, 0, 0);
    CHECK_OK(zeCommandListAppendLaunchKernel(long_list, spin, &one, NULL, 0, NULL));
    CHECK_OK(zeCommandListClose(long_list));
    CHECK_OK(zeCommandQueueExecuteCommandLists(q0, 1, &long_list, NULL));
    CHECK_OK(zeCommandQueueExecuteCommandLists(q1, 1, &long_list, NULL));
    /* Reset waits for both executions in flight before it drops the commands. */
    CHECK_OK(zeCommandListReset(long_list));
    CHECK_OK(zeCommandQueueSynchronize(q0, 0));
    CHECK_OK(zeCommandQueueSynchronize(q1, 0));
    /* Reused after reset. */
    CHECK_OK(zeCommandListAppendBarrier(long_list, NULL, 0, NULL));
    CHECK_OK(zeCommandListClose(long_list));
    CHECK_OK(zeCommandQueueExecuteCommandLists(q1, 1, &long_list, NULL));
    CHECK_OK(zeCommandQueueSynchronize(q1, UINT64_MAX));

    /* 3. Immediate lists: asynchronous appends; destroy waits for the work. */
    ze_command_list_handle_t immediate = l0_immediate(&l0, l0.device, 0, 0);
    l0_set_spin(spin, 200 * MS);
    CHECK_OK(zeCommandListAppendLaunchKernel(immediate, spin, &one, ev1, 0, NULL));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev1)); /* the append did not run the kernel */
    CHECK_OK(zeCommandListDestroy(immediate));
    CHECK_OK(zeEventQueryStatus(ev1));

    /* 4. In-order flags: an in-order immediate list re-exposing a kernel's completion with a
     * signal-event command, as a tracer does; an in-order regular list. */
    ze_command_list_handle_t in_order =
        l0_immediate(&l0, l0.device, 0, TEST_COMMAND_QUEUE_FLAG_IN_ORDER);
    l0_set_spin(spin, 1 * MS);
    CHECK_OK(zeEventHostReset(ev1));
    CHECK_OK(zeCommandListAppendLaunchKernel(in_order, spin, &one, ev1, 0, NULL));
    CHECK_OK(zeCommandListAppendSignalEvent(in_order, ev2));
    CHECK_OK(zeEventHostSynchronize(ev2, UINT64_MAX));
    CHECK_OK(zeEventQueryStatus(ev1));
    CHECK_OK(zeCommandListDestroy(in_order));
    ze_command_list_handle_t in_order_regular =
        l0_list(&l0, l0.device, 0, TEST_COMMAND_LIST_FLAG_IN_ORDER);
    for (int i = 0; i < 3; i++)
        CHECK_OK(zeCommandListAppendLaunchKernel(in_order_regular, spin, &one, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendSignalEvent(in_order_regular, ev3));
    CHECK_OK(zeCommandListClose(in_order_regular));
    CHECK_OK(zeCommandQueueExecuteCommandLists(q0, 1, &in_order_regular, NULL));
    CHECK_OK(zeEventHostSynchronize(ev3, UINT64_MAX));

    /* 5. Synchronous mode: the call returns when the work is done. */
    ze_command_queue_desc_t sync_desc = {
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 2, 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t sync_queue = NULL;
    CHECK_OK(zeCommandQueueCreate(l0.context, l0.device, &sync_desc, &sync_queue));
    CHECK_OK(zeEventHostReset(ev0));
    CHECK_OK(zeCommandQueueExecuteCommandLists(sync_queue, 1, &list, NULL));
    CHECK_OK(zeEventQueryStatus(ev0));
    ze_command_list_handle_t sync_immediate = NULL;
    CHECK_OK(zeCommandListCreateImmediate(l0.context, l0.device, &sync_desc, &sync_immediate));
    CHECK_OK(zeEventHostReset(ev2));
    CHECK_OK(zeCommandListAppendLaunchKernel(sync_immediate, spin, &one, ev2, 0, NULL));
    CHECK_OK(zeEventQueryStatus(ev2));
    CHECK_OK(zeCommandListDestroy(sync_immediate));
    CHECK_OK(zeCommandQueueDestroy(sync_queue));

    /* The truth: 3 + 1 executions of `list` (spin + copy each), the two overlapping long spins. */
    struct truth_line *lines = NULL;
    size_t n = truth_read(truth_path, &lines);
    n = keep_kernels_and_copies(lines, n);
    CHECK(count_lines(lines, n, "copy") == 4);
    size_t first_long = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(lines[i].kind, "kernel") == 0 &&
            lines[i].end_ns - lines[i].start_ns >= 200 * MS) {
            first_long = i;
            break;
        }
    }
    CHECK(first_long + 1 < n);
    const struct truth_line *x = &lines[first_long], *y = &lines[first_long + 1];
    CHECK(strcmp(y->kind, "kernel") == 0);
    CHECK(y->start_ns < x->end_ns && x->start_ns < y->end_ns); /* concurrent on two queues */
    /* The three back-to-back executions on q0 did not overlap and each copy followed its kernel. */
    for (size_t i = 1; i < 6; i++)
        CHECK(lines[i].start_ns >= lines[i - 1].end_ns);
    for (size_t i = 0; i < 6; i += 2)
        CHECK(strcmp(lines[i].kind, "kernel") == 0 && strcmp(lines[i + 1].kind, "copy") == 0);
    free(lines);
    unlink(truth_path);

    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeCommandListDestroy(open_list));
    CHECK_OK(zeCommandListDestroy(long_list));
    CHECK_OK(zeCommandListDestroy(in_order_regular));
    CHECK_OK(zeCommandQueueDestroy(q0));
    CHECK_OK(zeCommandQueueDestroy(q1));
    CHECK_OK(zeKernelDestroy(spin));
    CHECK_OK(zeMemFree(l0.context, a));
    CHECK_OK(zeMemFree(l0.context, b));
    ze_event_handle_t all[] = {ev0, ev1, ev2, ev3};
    for (int i = 0; i < 4; i++)
        CHECK_OK(zeEventDestroy(all[i]));
    CHECK_OK(zeEventPoolDestroy(pool));
    l0_close(&l0);
    return check_pass("test_lists");
}
