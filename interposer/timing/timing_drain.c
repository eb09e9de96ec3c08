/*
 * timing_drain.c: reading completed slots and emitting their device timings.
 *
 * Drain = for each completed slot: read its event's kernel timestamp on the host
 * (zeEventQueryKernelTimestamp: O(1), no device work), emit one device_timing, then reset the
 * tracer's own event and recycle it once nothing can still wait on it. Drains are idempotent: a
 * slot is read once per execution.
 *
 * Immediate lists: the live list's head is the oldest unread slot; a drain stops at the first
 * slot that has not completed (or whose append has not returned yet: "armed"). A slot whose event
 * a re-exposing barrier waits on is held after its read until a later command completes (see
 * after_read_immediate).
 *
 * Regular lists are closed once and executed many times with the same injected events baked in;
 * their executions ("runs") are read by timing_runs.c, which this file calls for them.
 *
 * Application events from timestamp pools are read in place and only read: never synchronized,
 * reset or destroyed here. If the application re-signals or resets one before any drain read it,
 * the earlier timing is reported lost (status 1), never attributed to the wrong command.
 *
 * The exit drain (timed locks) is timing_core.c's; handing injected events back when slots are
 * released is timing_stash.c's.
 */
#include <stdlib.h>

#include "timing_internal.h"
#include "zeprof_api.h"
#include "zeprof_device.h"

static ze_event_handle_t slot_event(const struct timing_slot *slot)
{
    return slot->inj ? slot->inj->event : slot->app_event;
}

enum timing_read_outcome timing_slot_read(const struct timing_slot *slot,
                                          ze_kernel_timestamp_result_t *result)
{
    if (slot->lost)
        return TIMING_READ_LOST;
    /* One driver call: the query answers ZE_RESULT_NOT_READY, leaving `result` alone, while the
     * event is not signalled (spec); an error means the timing cannot be had. */
    ze_result_t read = zeprof_real.zeEventQueryKernelTimestamp(slot_event(slot), result);
    if (read == ZE_RESULT_NOT_READY)
        return TIMING_READ_NOT_READY;
    return read == ZE_RESULT_SUCCESS ? TIMING_READ_OK : TIMING_READ_LOST;
}

/* queue: the queue of a regular list's execution; for immediate lists, the list itself. */
void timing_emit(const struct timing_list *list, const struct timing_slot *slot,
                 uint64_t execution, const void *queue, enum timing_read_outcome outcome,
                 const ze_kernel_timestamp_result_t *result)
{
    bool read = outcome == TIMING_READ_OK;
    lttng_ust_tracepoint(
        zeprof_device, device_timing, slot->call_id, execution,
        timing_handle_bits(list->device ? list->device->handle : NULL), timing_handle_bits(queue),
        timing_handle_bits(list->handle), read ? result->global.kernelStart : 0,
        read ? result->global.kernelEnd : 0, read ? result->context.kernelStart : 0,
        read ? result->context.kernelEnd : 0, read ? TIMING_STATUS_READ : TIMING_STATUS_LOST);
}

void timing_clear_app_pending(struct timing_slot *slot)
{
    if (!slot->app_event)
        return;
    pthread_mutex_lock(&timing_app_event_mutex);
    struct timing_app_event *record = timing_registry_app_event(slot->app_event);
    if (record && record->pending == slot) {
        record->pending = NULL;
        record->pending_list = NULL;
    }
    pthread_mutex_unlock(&timing_app_event_mutex);
}

/* Immediate lists: the slot is done with; its inj goes back to the pool when it is known quiet
 * (read, so signalled, and reset here). A lost inj may still be signalled later: it stays with
 * its pool, unused, until the context is destroyed. */
static void release_immediate_slot(struct timing_list *list, struct timing_slot *slot, bool recycle)
{
    if (slot->inj) {
        if (recycle && list->context &&
            zeprof_real.zeEventHostReset(slot->inj->event) == ZE_RESULT_SUCCESS)
            timing_pool_give_back(list->context, slot->inj);
        slot->inj = NULL;
    }
    timing_clear_app_pending(slot);
    timing_slot_remove(list, slot);
}

/* Immediate lists, after a slot's timing was emitted. A slot whose inj a re-exposing barrier
 * waits on is held (read, not released) until a later command is seen complete: that proves the
 * barrier ran (barriers order what follows them), so resetting inj cannot strand it. The proof
 * for the held predecessor is this slot's own completion: one pointer away. idle: the list has
 * no work left (reset, destroy), everything may go. */
static void after_read_immediate(struct timing_list *list, struct timing_slot *slot,
                                 enum timing_read_outcome outcome, bool idle)
{
    slot->read = true;
    if (outcome == TIMING_READ_OK && slot->prev && slot->prev->read)
        release_immediate_slot(list, slot->prev, true);
    if (outcome != TIMING_READ_OK)
        release_immediate_slot(list, slot, false);
    else if (!slot->waited_on || idle)
        release_immediate_slot(list, slot, true);
}

static void drain_immediate_locked(struct timing_list *list, bool final, unsigned max)
{
    ze_kernel_timestamp_result_t result;
    unsigned done = 0;
    struct timing_slot *slot = list->head;

    while (slot && done < max) {
        struct timing_slot *next = slot->next;
        if (slot->read) {
            if (final)
                release_immediate_slot(list, slot, true);
            slot = next;
            continue;
        }
        if (!slot->armed)
            break; /* its append has not returned yet */
        enum timing_read_outcome outcome = timing_slot_read(slot, &result);
        if (outcome == TIMING_READ_NOT_READY) {
            if (!final)
                break;
            outcome = TIMING_READ_LOST;
        }
        timing_emit(list, slot, 0, list->handle, outcome, &result);
        after_read_immediate(list, slot, outcome, final);
        done++;
        slot = next;
    }
}

void timing_drain_list_locked(struct timing_list *list, bool final, uint64_t wait_ns)
{
    if (list->immediate)
        drain_immediate_locked(list, final, UINT32_MAX);
    else
        timing_runs_drain_locked(list, final, wait_ns);
}

/* The appends' own drain. Looking at the head costs a driver call even when it has not completed
 * (on the simulated device, a lock its engine thread holds while it runs), so it only starts once
 * the head has fallen a chunk behind the newest slot: memory stays bounded by two chunks plus
 * what the device has not done, and a program that synchronizes reads its slots at its drain
 * anchors instead, in one go. */
void timing_drain_some_locked(struct timing_list *list, unsigned max)
{
    if (list->immediate && list->head && list->head->chunk != list->newest_chunk)
        drain_immediate_locked(list, false, max);
}

void timing_drain_all(void)
{
    pthread_rwlock_rdlock(&timing_registry_lock);
    for (struct timing_list *list = timing_registry_first_list(); list;
         list = list->next_in_registry) {
        /* A list another thread holds is being appended to or drained: skip it, a later
         * anchor reads what is left (drains are idempotent). */
        if (pthread_mutex_trylock(&list->mutex) != 0)
            continue;
        timing_drain_list_locked(list, false, 0);
        pthread_mutex_unlock(&list->mutex);
    }
    pthread_rwlock_unlock(&timing_registry_lock);
    timing_anchor_refresh(false);
}

/* Under list->mutex: the application is about to re-signal, reset or destroy the event that
 * this slot reads. Read it now if it is signalled (this is still the earlier command's value),
 * else the timing is lost. */
static void resolve_slot_locked(struct timing_list *list, struct timing_slot *slot)
{
    ze_kernel_timestamp_result_t result;

    if (!slot->armed)
        return;
    if (list->immediate) {
        if (slot->read)
            return; /* already emitted, held for its barrier */
        enum timing_read_outcome outcome = timing_slot_read(slot, &result);
        if (outcome == TIMING_READ_NOT_READY)
            outcome = TIMING_READ_LOST;
        timing_emit(list, slot, 0, list->handle, outcome, &result);
        after_read_immediate(list, slot, outcome, false);
        return;
    }
    timing_runs_resolve_app_slot_locked(list, slot);
}

void timing_resolve_app_event(ze_event_handle_t event)
{
    /* Caller holds the registry lock (read), so records and lists stay alive. */
    struct timing_app_event *record = timing_registry_app_event(event);
    if (!record)
        return;
    pthread_mutex_lock(&timing_app_event_mutex);
    struct timing_list *list = record->pending_list;
    pthread_mutex_unlock(&timing_app_event_mutex);
    if (!list)
        return;

    pthread_mutex_lock(&list->mutex);
    pthread_mutex_lock(&timing_app_event_mutex);
    struct timing_slot *slot = record->pending_list == list ? record->pending : NULL;
    pthread_mutex_unlock(&timing_app_event_mutex);
    if (slot)
        resolve_slot_locked(list, slot);
    pthread_mutex_unlock(&list->mutex);
}
