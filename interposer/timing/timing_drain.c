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
 * Regular lists are closed once and executed many times with the same injected events baked in,
 * so each execution is an "instance" (execution 1, 2, ...). The execute prologue
 * (timing_claim_execution) finishes the previous instance - waiting for the tracer's own events
 * if it is still in flight and reading them, then resetting them once the tail event proves the
 * execution over - and claims the next, in one critical section under the list's mutex. Reading
 * after the next submission would race its re-signal.
 *
 * Application events from timestamp pools are read in place and only read: never synchronized,
 * reset or destroyed here. If the application re-signals or resets one before any drain read it,
 * the earlier timing is reported lost (status 1), never attributed to the wrong command.
 */
#include <stdlib.h>
#include <time.h>

#include "timing_internal.h"
#include "zeprof_api.h"
#include "zeprof_device.h"

enum read_outcome {
    READ_OK,
    READ_NOT_READY,
    READ_LOST,
};

static uint64_t handle_bits(const void *handle)
{
    return (uint64_t)(uintptr_t)handle;
}

static ze_event_handle_t slot_event(const struct timing_slot *slot)
{
    return slot->inj ? slot->inj->event : slot->app_event;
}

static enum read_outcome slot_read(const struct timing_slot *slot,
                                   ze_kernel_timestamp_result_t *result)
{
    if (slot->lost)
        return READ_LOST;
    ze_event_handle_t event = slot_event(slot);
    if (zeprof_real.zeEventQueryStatus(event) != ZE_RESULT_SUCCESS)
        return READ_NOT_READY;
    if (zeprof_real.zeEventQueryKernelTimestamp(event, result) != ZE_RESULT_SUCCESS)
        return READ_LOST;
    return READ_OK;
}

/* queue: the queue of a regular list's execution; for immediate lists, the list itself. */
static void emit_timing(const struct timing_list *list, const struct timing_slot *slot,
                        uint64_t execution, const void *queue, enum read_outcome outcome,
                        const ze_kernel_timestamp_result_t *result)
{
    bool read = outcome == READ_OK;
    lttng_ust_tracepoint(
        zeprof_device, device_timing, slot->call_id, execution,
        handle_bits(list->device ? list->device->handle : NULL), handle_bits(queue),
        handle_bits(list->handle), read ? result->global.kernelStart : 0,
        read ? result->global.kernelEnd : 0, read ? result->context.kernelStart : 0,
        read ? result->context.kernelEnd : 0, read ? TIMING_STATUS_READ : TIMING_STATUS_LOST);
}

/* The app-event record no longer waits on this slot. */
static void clear_app_pending(struct timing_slot *slot)
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
    clear_app_pending(slot);
    timing_slot_remove(list, slot);
}

/* Immediate lists, after a slot's timing was emitted. A slot whose inj a re-exposing barrier
 * waits on is held (read, not released) until a later command is seen complete: that proves the
 * barrier ran (barriers order what follows them), so resetting inj cannot strand it. The proof
 * for the held predecessor is this slot's own completion: one pointer away. idle: the list has
 * no work left (reset, destroy), everything may go. */
static void after_read_immediate(struct timing_list *list, struct timing_slot *slot,
                                 enum read_outcome outcome, bool idle)
{
    slot->read = true;
    if (outcome == READ_OK && slot->prev && slot->prev->read)
        release_immediate_slot(list, slot->prev, true);
    if (outcome != READ_OK)
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
        enum read_outcome outcome = slot_read(slot, &result);
        if (outcome == READ_NOT_READY) {
            if (!final)
                break;
            outcome = READ_LOST;
        }
        emit_timing(list, slot, 0, list->handle, outcome, &result);
        after_read_immediate(list, slot, outcome, final);
        done++;
        slot = next;
    }
}

static void instance_done_locked(struct timing_list *list)
{
    list->instance = 0;
    list->instance_state = TIMING_INSTANCE_IDLE;
    list->cursor = NULL;
    pthread_cond_broadcast(&list->instance_changed);
}

/* Regular lists: read one slot of the pending instance. */
static void read_instance_slot(struct timing_list *list, struct timing_slot *slot,
                               enum read_outcome outcome,
                               const ze_kernel_timestamp_result_t *result)
{
    emit_timing(list, slot, list->instance, list->instance_queue, outcome, result);
    slot->read_execution = list->instance;
    /* inj is reset only by the next claim, once the whole execution is known to be over: a
     * re-exposing barrier of this execution may still wait on it. A lost read may mean the event
     * is still to be signalled: never recycle it then. */
    if (slot->inj && outcome != READ_OK)
        slot->quarantined = true;
    clear_app_pending(slot);
}

static void drain_regular_locked(struct timing_list *list, bool final)
{
    ze_kernel_timestamp_result_t result;

    if (list->instance == 0 || list->instance_state != TIMING_INSTANCE_SUBMITTED)
        return;
    struct timing_slot *slot = list->cursor;
    while (slot) {
        if (slot->read_execution != list->instance && slot->armed) {
            enum read_outcome outcome = slot_read(slot, &result);
            if (outcome == READ_NOT_READY) {
                if (!final)
                    break;
                outcome = READ_LOST;
            }
            read_instance_slot(list, slot, outcome, &result);
        }
        slot = slot->next;
    }
    list->cursor = slot;
    if (!slot)
        instance_done_locked(list);
}

void timing_drain_list_locked(struct timing_list *list, bool final)
{
    if (list->immediate)
        drain_immediate_locked(list, final, UINT32_MAX);
    else
        drain_regular_locked(list, final);
}

void timing_drain_some_locked(struct timing_list *list, unsigned max)
{
    if (list->immediate)
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
        timing_drain_list_locked(list, false);
        pthread_mutex_unlock(&list->mutex);
    }
    pthread_rwlock_unlock(&timing_registry_lock);
    timing_anchor_refresh(false);
}

/* Under list->mutex: arm the slots of a new instance. An application timestamp event that is
 * still signalled from before cannot tell this execution's completion apart: lost. */
static void arm_instance_locked(struct timing_list *list)
{
    for (struct timing_slot *slot = list->head; slot; slot = slot->next) {
        slot->lost = false;
        if (!slot->app_event)
            continue;
        if (zeprof_real.zeEventQueryStatus(slot->app_event) == ZE_RESULT_SUCCESS)
            slot->lost = true;
        pthread_mutex_lock(&timing_app_event_mutex);
        struct timing_app_event *record = timing_registry_app_event(slot->app_event);
        if (record) {
            record->pending = slot;
            record->pending_list = list;
        } else {
            slot->lost = true;
        }
        pthread_mutex_unlock(&timing_app_event_mutex);
    }
}

/* Under list->mutex, the previous execution over (its injs and tail signalled): reset the
 * injected events for the next execution. */
static void reset_for_next_execution_locked(struct timing_list *list)
{
    if (list->tail_inj)
        zeprof_real.zeEventHostReset(list->tail_inj->event);
    for (struct timing_slot *slot = list->head; slot; slot = slot->next) {
        if (slot->inj)
            zeprof_real.zeEventHostReset(slot->inj->event);
    }
}

void timing_close_list(struct timing_list *list)
{
    pthread_mutex_lock(&list->mutex);
    bool needs_tail = false;
    for (struct timing_slot *slot = list->head; slot && !needs_tail; slot = slot->next)
        needs_tail = slot->waited_on;
    if (!list->immediate && needs_tail && !list->tail_inj && !list->unprofilable) {
        list->tail_inj = timing_pool_take(list->context);
        if (list->tail_inj &&
            zeprof_real.zeCommandListAppendBarrier(list->handle, list->tail_inj->event, 0, NULL) !=
                ZE_RESULT_SUCCESS) {
            timing_pool_give_back(list->context, list->tail_inj);
            list->tail_inj = NULL;
        }
        /* Without the tail, resetting injs between executions could strand a barrier. */
        list->unprofilable = list->tail_inj == NULL;
    }
    pthread_mutex_unlock(&list->mutex);
}

/* Under list->mutex, without the registry lock (so that a thread creating or destroying objects
 * is never blocked behind this wait): wait until the previous execution of the list is over -
 * another thread's claim submitted, then the tracer's own events of it signalled (never the
 * application's), and the tail. Returns false when this execution must stay unprofiled. */
static bool wait_previous_execution_locked(struct timing_list *list, pthread_t self)
{
    while (list->instance_state == TIMING_INSTANCE_CLAIMED) {
        if (pthread_equal(list->instance_claimer, self))
            return false; /* the same list twice in one call: leave the second unprofiled */
        pthread_cond_wait(&list->instance_changed, &list->mutex);
    }
    if (list->instance_state == TIMING_INSTANCE_SUBMITTED) {
        for (struct timing_slot *slot = list->cursor; slot; slot = slot->next) {
            if (slot->inj && slot->armed && slot->read_execution != list->instance)
                zeprof_real.zeEventHostSynchronize(slot->inj->event, UINT64_MAX);
        }
    }
    if (list->executions > 0 && list->tail_inj)
        zeprof_real.zeEventHostSynchronize(list->tail_inj->event, UINT64_MAX);
    return true;
}

void timing_claim_execution(struct timing_list *list, ze_command_queue_handle_t queue)
{
    pthread_t self = pthread_self();

    for (;;) {
        pthread_mutex_lock(&list->mutex);
        if (!list->head || list->unprofilable || !wait_previous_execution_locked(list, self)) {
            pthread_mutex_unlock(&list->mutex);
            return;
        }
        uint64_t waited_for = list->executions;
        pthread_mutex_unlock(&list->mutex);

        /* Read, reset and claim under the registry lock (app-event records) and the list's
         * mutex, in one critical section - unless another thread claimed in between: then wait
         * for that execution instead. */
        pthread_rwlock_rdlock(&timing_registry_lock);
        pthread_mutex_lock(&list->mutex);
        bool unchanged =
            list->instance_state != TIMING_INSTANCE_CLAIMED && list->executions == waited_for;
        if (unchanged) {
            drain_regular_locked(list, true);
            if (list->executions > 0)
                reset_for_next_execution_locked(list);
            list->executions++;
            list->instance = list->executions;
            list->instance_state = TIMING_INSTANCE_CLAIMED;
            list->instance_claimer = self;
            list->instance_queue = queue;
            list->cursor = list->head;
            arm_instance_locked(list);
        }
        pthread_mutex_unlock(&list->mutex);
        pthread_rwlock_unlock(&timing_registry_lock);
        if (unchanged)
            return;
    }
}

void timing_finish_claim(struct timing_list *list, bool submitted)
{
    pthread_mutex_lock(&list->mutex);
    if (list->instance_state == TIMING_INSTANCE_CLAIMED &&
        pthread_equal(list->instance_claimer, pthread_self())) {
        if (submitted) {
            list->instance_state = TIMING_INSTANCE_SUBMITTED;
            pthread_cond_broadcast(&list->instance_changed);
        } else {
            /* Never ran: forget the instance and its number. */
            for (struct timing_slot *slot = list->head; slot; slot = slot->next)
                clear_app_pending(slot);
            list->executions--;
            instance_done_locked(list);
        }
    }
    pthread_mutex_unlock(&list->mutex);
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
        enum read_outcome outcome = slot_read(slot, &result);
        if (outcome == READ_NOT_READY)
            outcome = READ_LOST;
        emit_timing(list, slot, 0, list->handle, outcome, &result);
        after_read_immediate(list, slot, outcome, false);
        return;
    }
    if (list->instance == 0 || list->instance_state != TIMING_INSTANCE_SUBMITTED ||
        slot->read_execution == list->instance)
        return;
    enum read_outcome outcome = slot_read(slot, &result);
    if (outcome == READ_NOT_READY)
        outcome = READ_LOST;
    read_instance_slot(list, slot, outcome, &result);
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

void timing_release_slots_locked(struct timing_list *list)
{
    for (struct timing_slot *slot = list->head; slot; slot = slot->next) {
        clear_app_pending(slot);
        if (!slot->inj)
            continue;
        /* Recycle only an event known to be quiet: reset now, and not possibly in flight. */
        if (!slot->quarantined && list->context &&
            zeprof_real.zeEventHostReset(slot->inj->event) == ZE_RESULT_SUCCESS)
            timing_pool_give_back(list->context, slot->inj);
        slot->inj = NULL;
    }
    timing_slots_release(list);
    if (list->tail_inj) {
        if (list->context &&
            zeprof_real.zeEventHostReset(list->tail_inj->event) == ZE_RESULT_SUCCESS)
            timing_pool_give_back(list->context, list->tail_inj);
        list->tail_inj = NULL;
    }
    list->unprofilable = false;
    list->instance = 0;
    list->instance_state = TIMING_INSTANCE_IDLE;
}

/* A second from now on CLOCK_REALTIME (what the timed locks take). */
static struct timespec one_second_from_now(void)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 1;
    return deadline;
}

void timing_drain_at_exit(void)
{
    /* Do not hang the exit on a thread that still holds the registry or a list (it may never
     * return): give up on what stays busy for a second. */
    struct timespec deadline = one_second_from_now();
    if (pthread_rwlock_timedrdlock(&timing_registry_lock, &deadline) != 0)
        return;
    for (struct timing_list *list = timing_registry_first_list(); list;
         list = list->next_in_registry) {
        deadline = one_second_from_now();
        if (pthread_mutex_timedlock(&list->mutex, &deadline) != 0)
            continue;
        timing_drain_list_locked(list, true);
        pthread_mutex_unlock(&list->mutex);
    }
    pthread_rwlock_unlock(&timing_registry_lock);
    timing_anchor_refresh(true);
}
