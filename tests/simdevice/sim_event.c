/*
 * sim_event.c: event pools, events, fences, and the timestamp-query cost model.
 *
 * Event and fence states live under sim_lock; an event's change is broadcast on sim_cond, a
 * fence's (set by the engine when its submission ends) on sim_progress_cond (sim.h says why two). Timeouts follow the spec:
 * 0 polls once, UINT64_MAX waits forever, anything else is nanoseconds; a wait that runs out
 * answers ZE_RESULT_NOT_READY. An event keeps the untruncated device ticks of the last command
 * that signalled it; truncation to kernelTimestampValidBits happens when they are read.
 * A pool owns its slot table; the application owns the events and must destroy them before the
 * pool (a pool with live events refuses, ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE).
 *
 * Counter-based events (spec 1.8, `ze_event_pool_counter_based_exp_desc_t` in the pool's pNext;
 * built only against headers that declare it): usable on in-order lists only, never reset and
 * never signalled from the host, reusable without a reset. Each use (an append, or an execution
 * of a regular list that appends it) claims the event when its submission is queued: the event
 * is then unsignalled until that use completes, and an earlier use that completes later does not
 * signal it. With KERNEL_TIMESTAMP its timestamps are those of the latest use. The spec forbids
 * the refused calls without naming a result; like Intel's driver, they get
 * ZE_RESULT_ERROR_INVALID_ARGUMENT.
 */
#include <stdlib.h>

#include "sim.h"

/* Timestamp-query bookkeeping (under sim_lock): queries appended and not yet observed complete
 * by a host synchronization, and how many of those have completed. */
static uint64_t qkt_pending;
static uint64_t qkt_completed;

ze_result_t sim_event_pool_create(ze_context_handle_t context, const ze_event_pool_desc_t *desc,
                                  uint32_t device_count, ze_device_handle_t *devices,
                                  ze_event_pool_handle_t *out)
{
    ze_result_t status = sim_handle_check(context, SIM_KIND_CONTEXT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out || (device_count > 0 && !devices))
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->flags > 0x7)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    bool counter_based = false;
#if SIM_HEADERS_AT_LEAST(1, 8)
    for (const ze_base_desc_t *next = desc->pNext; next; next = next->pNext) {
        if (next->stype == ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC)
            counter_based = true;
    }
#endif
    if (desc->count == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < device_count; i++) {
        status = sim_handle_check(devices[i], SIM_KIND_DEVICE);
        if (status != ZE_RESULT_SUCCESS)
            return status;
    }
    struct sim_event_pool *pool = calloc(1, sizeof(*pool));
    struct sim_event **slots = calloc(desc->count, sizeof(*slots));
    if (!pool || !slots) {
        free(pool);
        free(slots);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    pool->context = (struct sim_context *)context;
    pool->flags = desc->flags;
    pool->counter_based = counter_based;
    pool->count = desc->count;
    pool->slots = slots;
    sim_handle_add(pool, SIM_KIND_EVENT_POOL);
    *out = (ze_event_pool_handle_t)pool;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_event_pool_destroy(ze_event_pool_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_EVENT_POOL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_event_pool *pool = (struct sim_event_pool *)handle;
    pthread_mutex_lock(&sim_lock);
    uint32_t live = pool->live_events;
    pthread_mutex_unlock(&sim_lock);
    if (live > 0)
        return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    sim_handle_remove(pool);
    free(pool->slots);
    free(pool);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_event_create(ze_event_pool_handle_t pool_handle, const ze_event_desc_t *desc,
                             ze_event_handle_t *out)
{
    ze_result_t status = sim_handle_check(pool_handle, SIM_KIND_EVENT_POOL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct sim_event_pool *pool = (struct sim_event_pool *)pool_handle;
    if (desc->index >= pool->count)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct sim_event *event = calloc(1, sizeof(*event));
    if (!event)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    event->pool = pool;
    event->index = desc->index;
    pthread_mutex_lock(&sim_lock);
    if (pool->slots[desc->index]) { /* one live event per index */
        pthread_mutex_unlock(&sim_lock);
        free(event);
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    pool->slots[desc->index] = event;
    pool->live_events++;
    pthread_mutex_unlock(&sim_lock);
    sim_handle_add(event, SIM_KIND_EVENT);
    *out = (ze_event_handle_t)event;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_event_destroy(ze_event_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_EVENT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_event *event = (struct sim_event *)handle;
    sim_handle_remove(event);
    pthread_mutex_lock(&sim_lock);
    event->pool->slots[event->index] = NULL;
    event->pool->live_events--;
    pthread_mutex_unlock(&sim_lock);
    free(event);
    return ZE_RESULT_SUCCESS;
}

void sim_event_signal_locked(struct sim_event *event, uint32_t device, uint64_t start_ticks,
                             uint64_t end_ticks)
{
    event->signaled = true;
    if (event->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) {
        event->has_timestamps = true;
        event->device_index = device;
        event->start_ticks = start_ticks;
        event->end_ticks = end_ticks;
    }
    pthread_cond_broadcast(&sim_cond);
}

static void claim_locked(const struct sim_queue *queue, uint64_t sequence,
                         const struct sim_cmd *cmd)
{
    struct sim_event *event = cmd->signal;
    if (!event || !event->pool->counter_based)
        return;
    event->latest_queue = queue;
    event->latest_sequence = sequence;
    event->latest_cmd = cmd;
    event->signaled = false;
}

void sim_event_claim_locked(const struct sim_queue *queue, const struct sim_submission *submission)
{
    if (submission->cmd)
        claim_locked(queue, submission->sequence, submission->cmd);
    for (uint32_t l = 0; l < submission->list_count; l++) {
        const struct sim_list *list = submission->lists[l];
        for (uint32_t i = 0; i < list->cmd_count; i++)
            claim_locked(queue, submission->sequence, list->cmds[i]);
    }
}

void sim_event_complete_locked(const struct sim_queue *queue, uint64_t sequence,
                               const struct sim_cmd *cmd, uint64_t start_ticks,
                               uint64_t end_ticks)
{
    struct sim_event *event = cmd->signal;
    if (!event)
        return;
    if (event->pool->counter_based &&
        (event->latest_queue != queue || event->latest_sequence != sequence ||
         event->latest_cmd != cmd))
        return; /* a later use claimed it: the event reflects that one */
    sim_event_signal_locked(event, queue->device->index, start_ticks, end_ticks);
}

ze_result_t sim_event_check_signal(const struct sim_event *event, const struct sim_list *list)
{
    if (event && event->pool->counter_based && !list->in_order)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return ZE_RESULT_SUCCESS;
}

void sim_event_reset_locked(struct sim_event *event)
{
    event->signaled = false;
    event->has_timestamps = false;
    event->start_ticks = event->end_ticks = 0;
    pthread_cond_broadcast(&sim_cond);
}

void sim_event_timestamp_result_locked(const struct sim_event *event,
                                       ze_kernel_timestamp_result_t *result)
{
    uint64_t mask = sim_clock_kernel_mask();
    if (!event->has_timestamps) {
        result->global.kernelStart = result->global.kernelEnd = 0;
        result->context.kernelStart = result->context.kernelEnd = 0;
        return;
    }
    uint64_t context_epoch = sim_driver.devices[event->device_index].context_epoch;
    result->global.kernelStart = event->start_ticks & mask;
    result->global.kernelEnd = event->end_ticks & mask;
    result->context.kernelStart = (event->start_ticks - context_epoch) & mask;
    result->context.kernelEnd = (event->end_ticks - context_epoch) & mask;
}

ze_result_t sim_event_host_signal(ze_event_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_EVENT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (((const struct sim_event *)handle)->pool->counter_based)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* never signalled from the host */
    /* A host signal has no device work to time: the timestamps are the moment of the signal. */
    uint64_t ticks = sim_clock_ticks_at(&sim_driver.devices[0], sim_clock_host_ns());
    pthread_mutex_lock(&sim_lock);
    sim_event_signal_locked((struct sim_event *)handle, 0, ticks, ticks);
    pthread_mutex_unlock(&sim_lock);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_event_host_synchronize(ze_event_handle_t handle, uint64_t timeout)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_EVENT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    const struct sim_event *event = (const struct sim_event *)handle;
    uint64_t deadline = sim_clock_deadline(timeout);
    pthread_mutex_lock(&sim_lock);
    while (!event->signaled && sim_clock_cond_wait(&sim_cond, deadline)) {
    }
    status = event->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
    if (status == ZE_RESULT_SUCCESS)
        sim_qkt_observe_locked();
    pthread_mutex_unlock(&sim_lock);
    return status;
}

ze_result_t sim_event_query_status(ze_event_handle_t handle)
{
    return sim_event_host_synchronize(handle, 0);
}

ze_result_t sim_event_host_reset(ze_event_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_EVENT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (((const struct sim_event *)handle)->pool->counter_based)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* never reset */
    pthread_mutex_lock(&sim_lock);
    sim_event_reset_locked((struct sim_event *)handle);
    pthread_mutex_unlock(&sim_lock);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_event_query_kernel_timestamp(ze_event_handle_t handle,
                                             ze_kernel_timestamp_result_t *result)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_EVENT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!result)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const struct sim_event *event = (const struct sim_event *)handle;
    /* Only events of a timestamp pool carry timestamps; like Intel's driver, others are refused. */
    if (!(event->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&sim_lock);
    if (event->signaled)
        sim_event_timestamp_result_locked(event, result);
    else
        status = ZE_RESULT_NOT_READY;
    pthread_mutex_unlock(&sim_lock);
    return status;
}

ze_result_t sim_fence_create(ze_command_queue_handle_t queue, const ze_fence_desc_t *desc,
                             ze_fence_handle_t *out)
{
    ze_result_t status = sim_handle_check(queue, SIM_KIND_QUEUE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->flags & ~(ze_fence_flags_t)ZE_FENCE_FLAG_SIGNALED)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    struct sim_fence *fence = calloc(1, sizeof(*fence));
    if (!fence)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    fence->queue = (struct sim_queue *)queue;
    fence->signaled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0;
    sim_handle_add(fence, SIM_KIND_FENCE);
    *out = (ze_fence_handle_t)fence;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_fence_destroy(ze_fence_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_FENCE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    sim_handle_remove(handle);
    free(handle);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_fence_host_synchronize(ze_fence_handle_t handle, uint64_t timeout)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_FENCE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    const struct sim_fence *fence = (const struct sim_fence *)handle;
    uint64_t deadline = sim_clock_deadline(timeout);
    pthread_mutex_lock(&sim_lock);
    while (!fence->signaled && sim_clock_cond_wait(&sim_progress_cond, deadline)) {
    }
    status = fence->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
    if (status == ZE_RESULT_SUCCESS)
        sim_qkt_observe_locked();
    pthread_mutex_unlock(&sim_lock);
    return status;
}

ze_result_t sim_fence_query_status(ze_fence_handle_t handle)
{
    return sim_fence_host_synchronize(handle, 0);
}

ze_result_t sim_fence_reset(ze_fence_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_FENCE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    pthread_mutex_lock(&sim_lock);
    ((struct sim_fence *)handle)->signaled = false;
    pthread_mutex_unlock(&sim_lock);
    return ZE_RESULT_SUCCESS;
}

void sim_qkt_charge_append(struct sim_cmd *cmd)
{
    pthread_mutex_lock(&sim_lock);
    uint64_t outstanding = qkt_pending;
    qkt_pending++;
    cmd->qkt_state = SIM_QKT_PENDING;
    pthread_mutex_unlock(&sim_lock);
    sim_clock_busy_wait_ns(sim_config.qkt_cost_ns * outstanding);
}

void sim_qkt_completed_locked(struct sim_cmd *cmd)
{
    if (cmd->qkt_state == SIM_QKT_PENDING) {
        cmd->qkt_state = SIM_QKT_COMPLETED;
        qkt_completed++;
    }
}

void sim_qkt_forget_locked(struct sim_cmd *cmd)
{
    /* A query that will never run (its list is reset or destroyed) stops costing; a completed
     * one is already counted in qkt_completed and leaves at the next observation. */
    if (cmd->qkt_state == SIM_QKT_PENDING)
        qkt_pending--;
    cmd->qkt_state = SIM_QKT_NONE;
}

void sim_qkt_observe_locked(void)
{
    qkt_pending -= qkt_completed <= qkt_pending ? qkt_completed : qkt_pending;
    qkt_completed = 0;
}
