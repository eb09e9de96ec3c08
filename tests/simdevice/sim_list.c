/*
 * sim_list.c: command lists, regular and immediate, and every append.
 *
 * An append validates its arguments, pays the modelled host cost (ZESIM_APPEND_NS, and the
 * timestamp-query cost), and turns the call into a sim_cmd. A regular list owns its commands
 * until reset or destroy and may be executed many times, also concurrently, since commands are
 * immutable once appended and appends to a closed list are refused. An immediate list owns a
 * private queue (sim_queue.c) and submits each command to it at once: the append returns before
 * the work ran, unless the queue is synchronous. Destroying an immediate list waits for its work;
 * resetting or destroying a regular list waits for its executions in flight.
 * Copy-only lists (queue group 1) refuse kernel launches and timestamp queries with
 * ZE_RESULT_ERROR_INVALID_ARGUMENT, as do appends to a closed list and timestamp queries of
 * events from a pool without ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* ---- creation and lifetime ---- */

static ze_result_t check_context_device(ze_context_handle_t context, ze_device_handle_t device)
{
    ze_result_t status = sim_handle_check(context, SIM_KIND_CONTEXT);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(device, SIM_KIND_DEVICE);
    return status;
}

static struct sim_list *new_list(ze_context_handle_t context, ze_device_handle_t device)
{
    struct sim_list *list = calloc(1, sizeof(*list));
    if (!list)
        return NULL;
    list->context = (struct sim_context *)context;
    list->device = (struct sim_device *)device;
    pthread_mutex_init(&list->mutex, NULL);
    return list;
}

ze_result_t sim_list_create(ze_context_handle_t context, ze_device_handle_t device,
                            const ze_command_list_desc_t *desc, ze_command_list_handle_t *out)
{
    ze_result_t status = check_context_device(context, device);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->commandQueueGroupOrdinal >= SIM_GROUP_COUNT)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (desc->flags & ~(ze_command_list_flags_t)0xf)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    struct sim_list *list = new_list(context, device);
    if (!list)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    list->ordinal = desc->commandQueueGroupOrdinal;
    list->in_order = (desc->flags & SIM_COMMAND_LIST_FLAG_IN_ORDER) != 0;
    sim_handle_add(list, SIM_KIND_LIST);
    *out = (ze_command_list_handle_t)list;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_list_create_immediate(ze_context_handle_t context, ze_device_handle_t device,
                                      const ze_command_queue_desc_t *desc,
                                      ze_command_list_handle_t *out)
{
    ze_result_t status = check_context_device(context, device);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct sim_list *list = new_list(context, device);
    if (!list)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    status = sim_queue_open(list->context, list->device, desc, list, &list->queue);
    if (status != ZE_RESULT_SUCCESS) {
        pthread_mutex_destroy(&list->mutex);
        free(list);
        return status;
    }
    list->immediate = true;
    list->ordinal = desc->ordinal;
    list->in_order = (desc->flags & SIM_COMMAND_QUEUE_FLAG_IN_ORDER) != 0;
    sim_handle_add(list, SIM_KIND_LIST);
    *out = (ze_command_list_handle_t)list;
    return ZE_RESULT_SUCCESS;
}

void sim_cmd_free(struct sim_cmd *cmd)
{
    if (!cmd)
        return;
    if (cmd->kind == SIM_CMD_QUERY_TIMESTAMPS) {
        pthread_mutex_lock(&sim_lock);
        sim_qkt_forget_locked(cmd);
        pthread_mutex_unlock(&sim_lock);
        free(cmd->u.query.events);
        free(cmd->u.query.offsets);
    }
    if (cmd->kind == SIM_CMD_KERNELS_MULTI_INDIRECT)
        free(cmd->u.multi.kernels);
    if (cmd->kind == SIM_CMD_SEMAPHORE_SIGNAL || cmd->kind == SIM_CMD_SEMAPHORE_WAIT) {
        free(cmd->u.semaphore.semaphores);
        free(cmd->u.semaphore.values);
    }
    free(cmd->waits);
    free(cmd);
}

/* Regular lists: wait until no execution of the list is queued or running, then drop its
 * commands. */
static void drop_commands(struct sim_list *list)
{
    pthread_mutex_lock(&sim_lock);
    while (list->inflight > 0)
        pthread_cond_wait(&sim_progress_cond, &sim_lock);
    pthread_mutex_unlock(&sim_lock);
    for (uint32_t i = 0; i < list->cmd_count; i++)
        sim_cmd_free(list->cmds[i]);
    list->cmd_count = 0;
}

ze_result_t sim_list_destroy(ze_command_list_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_LIST);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_list *list = (struct sim_list *)handle;
    sim_handle_remove(list);
    if (list->immediate)
        sim_queue_close(list->queue);
    else
        drop_commands(list);
    free(list->cmds);
    pthread_mutex_destroy(&list->mutex);
    free(list);
    return ZE_RESULT_SUCCESS;
}

/* zeCommandListHostSynchronize (spec 1.6): wait for what an immediate list was given so far.
 * Compiled whatever the headers: it is also what zeDriverGetExtensionFunctionAddress returns for
 * that name (sim_driver.c), which a loader of any version passes through. */
ze_result_t sim_list_host_synchronize(ze_command_list_handle_t handle, uint64_t timeout)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_LIST);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_list *list = (struct sim_list *)handle;
    if (!list->immediate)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    uint64_t deadline = sim_clock_deadline(timeout);
    pthread_mutex_lock(&sim_lock);
    bool done = sim_queue_wait_locked(list->queue, list->queue->submitted, deadline);
    if (done)
        sim_qkt_observe_locked();
    pthread_mutex_unlock(&sim_lock);
    return done ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t sim_list_close(ze_command_list_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_LIST);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_list *list = (struct sim_list *)handle;
    pthread_mutex_lock(&list->mutex);
    if (!list->immediate)
        list->closed = true;
    pthread_mutex_unlock(&list->mutex);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_list_reset(ze_command_list_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_LIST);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_list *list = (struct sim_list *)handle;
    if (list->immediate) {
        pthread_mutex_lock(&sim_lock);
        sim_queue_wait_locked(list->queue, list->queue->submitted, UINT64_MAX);
        pthread_mutex_unlock(&sim_lock);
        return ZE_RESULT_SUCCESS;
    }
    pthread_mutex_lock(&list->mutex);
    drop_commands(list);
    list->closed = false;
    pthread_mutex_unlock(&list->mutex);
    return ZE_RESULT_SUCCESS;
}

/* ---- appends ---- */

/* Validates what every append shares: the list, its signal event and its wait list. */
ze_result_t sim_list_check_append(ze_command_list_handle_t handle, ze_event_handle_t signal,
                                  uint32_t wait_count, ze_event_handle_t *waits)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_LIST);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (signal && !sim_handle_is(signal, SIM_KIND_EVENT))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    status = sim_event_check_signal((const struct sim_event *)signal,
                                    (const struct sim_list *)handle);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (wait_count > 0 && !waits)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < wait_count; i++) {
        status = sim_handle_check(waits[i], SIM_KIND_EVENT);
        if (status != ZE_RESULT_SUCCESS)
            return status;
    }
    return ZE_RESULT_SUCCESS;
}

struct sim_cmd *sim_list_new_cmd(enum sim_cmd_kind kind, const char *function,
                                 ze_event_handle_t signal, uint32_t wait_count,
                                 ze_event_handle_t *waits)
{
    struct sim_cmd *cmd = calloc(1, sizeof(*cmd));
    if (!cmd)
        return NULL;
    cmd->kind = kind;
    cmd->function = function;
    cmd->signal = (struct sim_event *)signal;
    if (wait_count > 0) {
        cmd->waits = malloc(wait_count * sizeof(*cmd->waits));
        if (!cmd->waits) {
            free(cmd);
            return NULL;
        }
        memcpy(cmd->waits, waits, wait_count * sizeof(*cmd->waits));
        cmd->wait_count = wait_count;
    }
    return cmd;
}

/* Hands the command to the list: recorded (regular) or submitted at once (immediate). Takes
 * ownership of cmd in every case. */
ze_result_t sim_list_commit(ze_command_list_handle_t handle, struct sim_cmd *cmd)
{
    struct sim_list *list = (struct sim_list *)handle;
    if (!cmd)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    sim_clock_busy_wait_ns(sim_config.append_ns);
    if (cmd->kind == SIM_CMD_QUERY_TIMESTAMPS)
        sim_qkt_charge_append(cmd);

    if (list->immediate) {
        struct sim_submission *submission = calloc(1, sizeof(*submission));
        if (!submission) {
            sim_cmd_free(cmd);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        submission->cmd = cmd;
        uint64_t sequence = sim_queue_submit(list->queue, submission);
        if (list->queue->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) {
            pthread_mutex_lock(&sim_lock);
            sim_queue_wait_locked(list->queue, sequence, UINT64_MAX);
            pthread_mutex_unlock(&sim_lock);
        }
        return ZE_RESULT_SUCCESS;
    }

    ze_result_t status = ZE_RESULT_SUCCESS;
    pthread_mutex_lock(&list->mutex);
    if (list->closed) {
        status = ZE_RESULT_ERROR_INVALID_ARGUMENT; /* a closed list takes no more commands */
    } else if (list->cmd_count == list->cmd_capacity) {
        uint32_t capacity = list->cmd_capacity ? 2 * list->cmd_capacity : 16;
        struct sim_cmd **grown = realloc(list->cmds, capacity * sizeof(*grown));
        if (grown) {
            list->cmds = grown;
            list->cmd_capacity = capacity;
        } else {
            status = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
    }
    if (status == ZE_RESULT_SUCCESS)
        list->cmds[list->cmd_count++] = cmd;
    pthread_mutex_unlock(&list->mutex);
    if (status != ZE_RESULT_SUCCESS)
        sim_cmd_free(cmd);
    return status;
}

static bool is_copy_only(ze_command_list_handle_t handle)
{
    return ((const struct sim_list *)handle)->ordinal == 1;
}

static ze_result_t append_launch(ze_command_list_handle_t handle, ze_kernel_handle_t kernel,
                                 const ze_group_count_t *groups, bool indirect,
                                 const char *function, ze_event_handle_t signal,
                                 uint32_t wait_count, ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(kernel, SIM_KIND_KERNEL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!groups)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (is_copy_only(handle))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct sim_cmd *cmd = sim_list_new_cmd(indirect ? SIM_CMD_KERNEL_INDIRECT : SIM_CMD_KERNEL, function,
                                  signal, wait_count, waits);
    if (cmd) {
        sim_kernel_snapshot((struct sim_kernel *)kernel, &cmd->u.launch.kernel);
        if (indirect)
            cmd->u.launch.indirect = groups;
        else
            cmd->u.launch.groups = *groups;
    }
    return sim_list_commit(handle, cmd);
}

ze_result_t sim_list_append_launch_kernel(ze_command_list_handle_t list, ze_kernel_handle_t kernel,
                                          const ze_group_count_t *groups, ze_event_handle_t signal,
                                          uint32_t wait_count, ze_event_handle_t *waits)
{
    return append_launch(list, kernel, groups, false, "zeCommandListAppendLaunchKernel", signal,
                         wait_count, waits);
}

ze_result_t sim_list_append_launch_cooperative_kernel(ze_command_list_handle_t list,
                                                      ze_kernel_handle_t kernel,
                                                      const ze_group_count_t *groups,
                                                      ze_event_handle_t signal, uint32_t wait_count,
                                                      ze_event_handle_t *waits)
{
    return append_launch(list, kernel, groups, false, "zeCommandListAppendLaunchCooperativeKernel",
                         signal, wait_count, waits);
}

ze_result_t sim_list_append_launch_kernel_indirect(ze_command_list_handle_t list,
                                                   ze_kernel_handle_t kernel,
                                                   const ze_group_count_t *groups,
                                                   ze_event_handle_t signal, uint32_t wait_count,
                                                   ze_event_handle_t *waits)
{
    return append_launch(list, kernel, groups, true, "zeCommandListAppendLaunchKernelIndirect",
                         signal, wait_count, waits);
}

ze_result_t sim_list_append_launch_multiple_kernels_indirect(
    ze_command_list_handle_t handle, uint32_t kernel_count, ze_kernel_handle_t *kernels,
    const uint32_t *count_buffer, const ze_group_count_t *arguments, ze_event_handle_t signal,
    uint32_t wait_count, ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!kernels || !count_buffer || !arguments)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (kernel_count == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < kernel_count; i++) {
        status = sim_handle_check(kernels[i], SIM_KIND_KERNEL);
        if (status != ZE_RESULT_SUCCESS)
            return status;
    }
    if (is_copy_only(handle))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct sim_cmd *cmd =
        sim_list_new_cmd(SIM_CMD_KERNELS_MULTI_INDIRECT, "zeCommandListAppendLaunchMultipleKernelsIndirect",
                signal, wait_count, waits);
    if (cmd) {
        cmd->u.multi.kernels = calloc(kernel_count, sizeof(*cmd->u.multi.kernels));
        if (!cmd->u.multi.kernels) {
            sim_cmd_free(cmd);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        for (uint32_t i = 0; i < kernel_count; i++)
            sim_kernel_snapshot((struct sim_kernel *)kernels[i], &cmd->u.multi.kernels[i]);
        cmd->u.multi.count = kernel_count;
        cmd->u.multi.count_buffer = count_buffer;
        cmd->u.multi.arguments = arguments;
    }
    return sim_list_commit(handle, cmd);
}

static ze_result_t append_copy(ze_command_list_handle_t handle, void *dst, const void *src,
                               size_t size, const char *function, ze_event_handle_t signal,
                               uint32_t wait_count, ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!dst || !src)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct sim_cmd *cmd = sim_list_new_cmd(SIM_CMD_COPY, function, signal, wait_count, waits);
    if (cmd) {
        cmd->u.copy.dst = dst;
        cmd->u.copy.src = src;
        cmd->u.copy.size = size;
    }
    return sim_list_commit(handle, cmd);
}

ze_result_t sim_list_append_memory_copy(ze_command_list_handle_t list, void *dst, const void *src,
                                        size_t size, ze_event_handle_t signal, uint32_t wait_count,
                                        ze_event_handle_t *waits)
{
    return append_copy(list, dst, src, size, "zeCommandListAppendMemoryCopy", signal, wait_count,
                       waits);
}

ze_result_t sim_list_append_memory_copy_from_context(ze_command_list_handle_t list, void *dst,
                                                     ze_context_handle_t src_context,
                                                     const void *src, size_t size,
                                                     ze_event_handle_t signal, uint32_t wait_count,
                                                     ze_event_handle_t *waits)
{
    ze_result_t status = sim_handle_check(src_context, SIM_KIND_CONTEXT);
    if (status != ZE_RESULT_SUCCESS)
        return list ? status : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return append_copy(list, dst, src, size, "zeCommandListAppendMemoryCopyFromContext", signal,
                       wait_count, waits);
}

ze_result_t sim_list_append_memory_copy_region(ze_command_list_handle_t handle, void *dst,
                                               const ze_copy_region_t *dst_region,
                                               uint32_t dst_pitch, uint32_t dst_slice_pitch,
                                               const void *src, const ze_copy_region_t *src_region,
                                               uint32_t src_pitch, uint32_t src_slice_pitch,
                                               ze_event_handle_t signal, uint32_t wait_count,
                                               ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!dst || !src || !dst_region || !src_region)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (dst_region->width != src_region->width || dst_region->height != src_region->height ||
        dst_region->depth != src_region->depth)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    struct sim_cmd *cmd = sim_list_new_cmd(SIM_CMD_COPY_REGION, "zeCommandListAppendMemoryCopyRegion",
                                  signal, wait_count, waits);
    if (cmd) {
        cmd->u.region.dst = dst;
        cmd->u.region.src = src;
        cmd->u.region.dst_region = *dst_region;
        cmd->u.region.src_region = *src_region;
        cmd->u.region.dst_pitch = dst_pitch;
        cmd->u.region.dst_slice_pitch = dst_slice_pitch;
        cmd->u.region.src_pitch = src_pitch;
        cmd->u.region.src_slice_pitch = src_slice_pitch;
    }
    return sim_list_commit(handle, cmd);
}

ze_result_t sim_list_append_memory_fill(ze_command_list_handle_t handle, void *ptr,
                                        const void *pattern, size_t pattern_size, size_t size,
                                        ze_event_handle_t signal, uint32_t wait_count,
                                        ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!ptr || !pattern)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (pattern_size == 0 || pattern_size > SIM_MAX_FILL_PATTERN ||
        (pattern_size & (pattern_size - 1)))
        return ZE_RESULT_ERROR_INVALID_SIZE;
    struct sim_cmd *cmd =
        sim_list_new_cmd(SIM_CMD_FILL, "zeCommandListAppendMemoryFill", signal, wait_count, waits);
    if (cmd) {
        cmd->u.fill.dst = ptr;
        cmd->u.fill.size = size;
        cmd->u.fill.pattern_size = pattern_size;
        memcpy(cmd->u.fill.pattern, pattern, pattern_size);
    }
    return sim_list_commit(handle, cmd);
}

ze_result_t sim_list_append_memory_prefetch(ze_command_list_handle_t handle, const void *ptr,
                                            size_t size)
{
    (void)size;
    ze_result_t status = sim_handle_check(handle, SIM_KIND_LIST);
    if (status == ZE_RESULT_SUCCESS && !ptr)
        status = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (status == ZE_RESULT_SUCCESS) /* memory is always where it is needed */
        sim_clock_busy_wait_ns(sim_config.append_ns);
    return status;
}

ze_result_t sim_list_append_mem_advise(ze_command_list_handle_t handle, ze_device_handle_t device,
                                       const void *ptr, size_t size, ze_memory_advice_t advice)
{
    (void)size;
    (void)advice;
    ze_result_t status = sim_handle_check(handle, SIM_KIND_LIST);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(device, SIM_KIND_DEVICE);
    if (status == ZE_RESULT_SUCCESS && !ptr)
        status = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (status == ZE_RESULT_SUCCESS)
        sim_clock_busy_wait_ns(sim_config.append_ns);
    return status;
}

ze_result_t sim_list_append_barrier(ze_command_list_handle_t handle, ze_event_handle_t signal,
                                    uint32_t wait_count, ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    return sim_list_commit(
        handle, sim_list_new_cmd(SIM_CMD_BARRIER, "zeCommandListAppendBarrier", signal, wait_count, waits));
}

ze_result_t sim_list_append_memory_ranges_barrier(ze_command_list_handle_t handle,
                                                  uint32_t range_count, const size_t *range_sizes,
                                                  const void **ranges, ze_event_handle_t signal,
                                                  uint32_t wait_count, ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (range_count > 0 && (!range_sizes || !ranges))
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return sim_list_commit(handle, sim_list_new_cmd(SIM_CMD_BARRIER, "zeCommandListAppendMemoryRangesBarrier", signal,
                                  wait_count, waits));
}

ze_result_t sim_list_append_signal_event(ze_command_list_handle_t handle, ze_event_handle_t event)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_LIST);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(event, SIM_KIND_EVENT);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_event_check_signal((const struct sim_event *)event,
                                        (const struct sim_list *)handle);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    return sim_list_commit(handle,
                  sim_list_new_cmd(SIM_CMD_SIGNAL, "zeCommandListAppendSignalEvent", event, 0, NULL));
}

ze_result_t sim_list_append_wait_on_events(ze_command_list_handle_t handle, uint32_t count,
                                           ze_event_handle_t *events)
{
    ze_result_t status = sim_list_check_append(handle, NULL, count, events);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    return sim_list_commit(handle,
                  sim_list_new_cmd(SIM_CMD_WAIT, "zeCommandListAppendWaitOnEvents", NULL, count, events));
}

ze_result_t sim_list_append_event_reset(ze_command_list_handle_t handle, ze_event_handle_t event)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_LIST);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(event, SIM_KIND_EVENT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (((const struct sim_event *)event)->pool->counter_based)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* counter-based events are never reset */
    struct sim_cmd *cmd =
        sim_list_new_cmd(SIM_CMD_EVENT_RESET, "zeCommandListAppendEventReset", NULL, 0, NULL);
    if (cmd)
        cmd->u.reset.event = (struct sim_event *)event;
    return sim_list_commit(handle, cmd);
}

ze_result_t sim_list_append_query_kernel_timestamps(ze_command_list_handle_t handle, uint32_t count,
                                                    ze_event_handle_t *events, void *dst,
                                                    const size_t *offsets, ze_event_handle_t signal,
                                                    uint32_t wait_count, ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!events || !dst)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (uint32_t i = 0; i < count; i++) {
        status = sim_handle_check(events[i], SIM_KIND_EVENT);
        if (status != ZE_RESULT_SUCCESS)
            return status;
        if (!(((struct sim_event *)events[i])->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP))
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    if (is_copy_only(handle))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* the copy engine cannot run the query kernel */
    struct sim_cmd *cmd =
        sim_list_new_cmd(SIM_CMD_QUERY_TIMESTAMPS, "zeCommandListAppendQueryKernelTimestamps", signal,
                wait_count, waits);
    if (!cmd)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    cmd->u.query.count = count;
    cmd->u.query.dst = dst;
    cmd->u.query.events = malloc((count ? count : 1) * sizeof(*cmd->u.query.events));
    if (offsets)
        cmd->u.query.offsets = malloc((count ? count : 1) * sizeof(*cmd->u.query.offsets));
    if (!cmd->u.query.events || (offsets && !cmd->u.query.offsets)) {
        sim_cmd_free(cmd);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    memcpy(cmd->u.query.events, events, count * sizeof(*events));
    if (offsets)
        memcpy(cmd->u.query.offsets, offsets, count * sizeof(*offsets));
    return sim_list_commit(handle, cmd);
}

ze_result_t sim_list_append_write_global_timestamp(ze_command_list_handle_t handle, uint64_t *dst,
                                                   ze_event_handle_t signal, uint32_t wait_count,
                                                   ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!dst)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct sim_cmd *cmd =
        sim_list_new_cmd(SIM_CMD_GLOBAL_TIMESTAMP, "zeCommandListAppendWriteGlobalTimestamp", signal,
                wait_count, waits);
    if (cmd)
        cmd->u.timestamp.dst = dst;
    return sim_list_commit(handle, cmd);
}

#if SIM_HEADERS_AT_LEAST(1, 9)
/* zeCommandListImmediateAppendCommandListsExp (spec 1.9): executes closed regular lists on an
 * immediate list, in its order: the waits first, then the lists' commands, then the signal. */
ze_result_t sim_list_immediate_append_command_lists(ze_command_list_handle_t handle, uint32_t count,
                                                    ze_command_list_handle_t *lists,
                                                    ze_event_handle_t signal, uint32_t wait_count,
                                                    ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(handle, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_list *list = (struct sim_list *)handle;
    if (!list->immediate)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (wait_count > 0) {
        status = sim_list_append_wait_on_events(handle, wait_count, waits);
        if (status != ZE_RESULT_SUCCESS)
            return status;
    }
    status = sim_queue_execute(list->queue, count, lists, NULL);
    if (status == ZE_RESULT_SUCCESS && signal)
        status = sim_list_append_signal_event(handle, signal);
    return status;
}
#endif
