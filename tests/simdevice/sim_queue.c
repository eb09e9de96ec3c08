/*
 * sim_queue.c: command queues and their FIFO of submissions.
 *
 * A queue owns one worker thread (sim_engine.c) that runs its submissions in order; the host side
 * only appends to the FIFO and waits on progress counters (submitted/completed, under sim_lock).
 * Executing regular lists counts each list in flight, so that list reset and destroy can wait for
 * them; the same list may be in flight several times and on several queues at once.
 * ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS queues return from execute only when the work completed.
 */
#include <stdlib.h>

#include "sim.h"

ze_result_t sim_queue_open(struct sim_context *context, struct sim_device *device,
                           const ze_command_queue_desc_t *desc, void *truth_handle,
                           struct sim_queue **out)
{
    if (desc->ordinal >= SIM_GROUP_COUNT)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (desc->index >= (desc->ordinal == 0 ? SIM_COMPUTE_QUEUES : SIM_COPY_QUEUES))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS ||
        desc->priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->flags & ~(ze_command_queue_flags_t)0x3)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    struct sim_queue *queue = calloc(1, sizeof(*queue));
    if (!queue)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    queue->context = context;
    queue->device = device;
    queue->ordinal = desc->ordinal;
    queue->index = desc->index;
    queue->mode = desc->mode;
    queue->flags = desc->flags;
    queue->handle = truth_handle ? truth_handle : queue;
    if (pthread_create(&queue->worker, NULL, sim_engine_run, queue) != 0) {
        free(queue);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *out = queue;
    return ZE_RESULT_SUCCESS;
}

void sim_queue_close(struct sim_queue *queue)
{
    pthread_mutex_lock(&sim_lock);
    queue->shutdown = true;
    pthread_cond_broadcast(&sim_cond); /* its worker may wait on an event or a semaphore */
    pthread_cond_broadcast(&sim_progress_cond);
    pthread_mutex_unlock(&sim_lock);
    pthread_join(queue->worker, NULL);
    free(queue);
}

uint64_t sim_queue_submit(struct sim_queue *queue, struct sim_submission *submission)
{
    pthread_mutex_lock(&sim_lock);
    /* Keep the number: once the lock is released the worker may run and free the submission. */
    uint64_t sequence = ++queue->submitted;
    submission->sequence = sequence;
    submission->next = NULL;
    sim_event_claim_locked(queue, submission);
    if (queue->tail)
        queue->tail->next = submission;
    else
        queue->head = submission;
    queue->tail = submission;
    pthread_cond_broadcast(&sim_progress_cond);
    pthread_mutex_unlock(&sim_lock);
    return sequence;
}

bool sim_queue_wait_locked(struct sim_queue *queue, uint64_t sequence, uint64_t deadline)
{
    while (queue->completed < sequence) {
        if (!sim_clock_cond_wait(&sim_progress_cond, deadline))
            return queue->completed >= sequence;
    }
    return true;
}

ze_result_t sim_queue_create(ze_context_handle_t context, ze_device_handle_t device,
                             const ze_command_queue_desc_t *desc, ze_command_queue_handle_t *out)
{
    ze_result_t status = sim_handle_check(context, SIM_KIND_CONTEXT);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(device, SIM_KIND_DEVICE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct sim_queue *queue = NULL;
    /* NULL: the truth log names the queue by its own handle. */
    status = sim_queue_open((struct sim_context *)context, (struct sim_device *)device, desc, NULL,
                            &queue);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    sim_handle_add(queue, SIM_KIND_QUEUE);
    *out = (ze_command_queue_handle_t)queue;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_queue_destroy(ze_command_queue_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_QUEUE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    sim_handle_remove(handle);
    sim_queue_close((struct sim_queue *)handle);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_queue_execute_command_lists(ze_command_queue_handle_t handle, uint32_t count,
                                            ze_command_list_handle_t *lists,
                                            ze_fence_handle_t fence)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_QUEUE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (fence && !sim_handle_is(fence, SIM_KIND_FENCE))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct sim_queue *queue = (struct sim_queue *)handle;
    if (fence && ((struct sim_fence *)fence)->queue != queue)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return sim_queue_execute(queue, count, lists, (struct sim_fence *)fence);
}

ze_result_t sim_queue_execute(struct sim_queue *queue, uint32_t count,
                              ze_command_list_handle_t *lists, struct sim_fence *fence)
{
    ze_result_t status = ZE_RESULT_SUCCESS;
    if (!lists)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (count == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < count; i++) {
        status = sim_handle_check(lists[i], SIM_KIND_LIST);
        if (status != ZE_RESULT_SUCCESS)
            return status;
        struct sim_list *list = (struct sim_list *)lists[i];
        pthread_mutex_lock(&list->mutex);
        bool closed = list->closed;
        pthread_mutex_unlock(&list->mutex);
        if (list->immediate || !closed)
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (list->ordinal != queue->ordinal || list->device != queue->device)
            return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
    }
    struct sim_submission *submission = calloc(1, sizeof(*submission));
    struct sim_list **copies = malloc(count * sizeof(*copies));
    if (!submission || !copies) {
        free(submission);
        free(copies);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (uint32_t i = 0; i < count; i++)
        copies[i] = (struct sim_list *)lists[i];
    submission->lists = copies;
    submission->list_count = count;
    submission->fence = fence;

    pthread_mutex_lock(&sim_lock);
    for (uint32_t i = 0; i < count; i++)
        copies[i]->inflight++;
    pthread_mutex_unlock(&sim_lock);
    uint64_t sequence = sim_queue_submit(queue, submission);
    if (queue->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) {
        pthread_mutex_lock(&sim_lock);
        sim_queue_wait_locked(queue, sequence, UINT64_MAX);
        pthread_mutex_unlock(&sim_lock);
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_queue_synchronize(ze_command_queue_handle_t handle, uint64_t timeout)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_QUEUE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_queue *queue = (struct sim_queue *)handle;
    uint64_t deadline = sim_clock_deadline(timeout);
    pthread_mutex_lock(&sim_lock);
    bool done = sim_queue_wait_locked(queue, queue->submitted, deadline);
    if (done)
        sim_qkt_observe_locked();
    pthread_mutex_unlock(&sim_lock);
    return done ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}
