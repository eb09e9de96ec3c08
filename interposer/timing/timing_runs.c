/*
 * timing_runs.c: executions of regular lists ("runs"), timed without ever waiting.
 *
 * A regular list is closed once and executed many times, with the tracer's injected events baked
 * in: every execution re-signals the same events. Reading them on the host would need each
 * execution to be over before the next is submitted, which changes the program's schedule (the
 * device idles between back-to-back executions) and can deadlock. Instead, every profiled
 * execution is submitted, in the application's own execute call, with a tracer list right after
 * the application's list:
 *
 *   harvest list: barrier; zeCommandListAppendQueryKernelTimestamps(injs -> results);
 *                 barrier(signal done)
 *
 * The first barrier waits for everything before it on the queue (this execution), the query
 * copies the events' timestamps into the run's own host buffer, and the barrier that signals
 * `done` holds back what follows on the queue (the next execution) until the copy is made. The
 * host reads `results` once `done` is signalled, at any drain anchor. Nothing waits on the
 * injected events (a signal overwrites their timestamps), so they are never reset between
 * executions, and the harvest list is three commands whatever the list holds. The query is
 * appended once per run record, built when the list is closed, and reused.
 *
 * When the device cannot copy (a copy-only queue group refuses the query), the tracer list is a
 * barrier signalling `done`, and the host reads the events themselves after `done`, unless a
 * later execution was claimed meanwhile. Whatever cannot be told apart is reported lost
 * (device_timing status 1), never attributed to the wrong execution:
 * - executions of one list in flight on two queues at once (or claimed by two threads at once):
 *   they overwrite each other's events: all of those are lost;
 * - a host-read execution (copy-only) followed by another before it was read: the first is lost;
 * - an execution that could not get a done marker (no memory, driver refusal) is lost and leaves
 *   the list "untracked" (lost) until its next reset or destroy.
 *
 * This file builds the tracer lists and reads finished runs. The run records themselves (claim,
 * submit, retire: the claim state machine) are timing_instance.c's.
 *
 * Nothing here waits, except list reset and destroy, which give the tracer's own lists of an
 * execution that the application knows complete a bounded time to finish.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing_internal.h"
#include "zeprof_api.h"

static bool slot_has_inj(const struct timing_slot *slot)
{
    return slot->armed && slot->inj != NULL;
}

void timing_run_emit_lost(const struct timing_list *list, const struct timing_run *run)
{
    for (const struct timing_slot *slot = list->head; slot; slot = slot->next) {
        if (slot_has_inj(slot))
            timing_emit(list, slot, run->execution, run->queue, TIMING_READ_LOST, NULL);
    }
}

void timing_runs_resolve_app_slot_locked(struct timing_list *list, struct timing_slot *slot)
{
    ze_kernel_timestamp_result_t result;

    if (!slot->armed || !slot->app_event || slot->app_execution == 0 ||
        slot->read_execution == slot->app_execution)
        return;
    enum timing_read_outcome outcome = timing_slot_read(slot, &result);
    if (outcome == TIMING_READ_NOT_READY)
        outcome = TIMING_READ_LOST;
    timing_emit(list, slot, slot->app_execution, slot->app_queue, outcome, &result);
    slot->read_execution = slot->app_execution;
    timing_clear_app_pending(slot);
}

/* done was seen signalled: the run's tracer list has run to its end. */
static void finish_run_locked(struct timing_list *list, struct timing_run *run)
{
    ze_kernel_timestamp_result_t result;
    uint32_t index = 0;

    for (struct timing_slot *slot = list->head; slot; slot = slot->next) {
        if (!slot_has_inj(slot))
            continue;
        enum timing_read_outcome outcome = TIMING_READ_LOST;
        if (run->lost) {
            outcome = TIMING_READ_LOST;
        } else if (run->harvest) {
            if (index < run->capacity) {
                result = run->results[index];
                outcome = TIMING_READ_OK;
            }
        } else {
            /* Host read: no later execution was claimed, so this is still this run's signal. */
            outcome = timing_slot_read(slot, &result);
            if (outcome == TIMING_READ_NOT_READY)
                outcome = TIMING_READ_LOST;
        }
        index++;
        timing_emit(list, slot, run->execution, run->queue, outcome, &result);
    }
    for (struct timing_slot *slot = list->head; slot; slot = slot->next) {
        if (slot->app_event && slot->app_execution == run->execution)
            timing_runs_resolve_app_slot_locked(list, slot);
    }
    zeprof_real.zeEventHostReset(run->done->event);
}

static uint64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
}

/* Reads runs whose done marker is signalled, oldest first; max: how many to look at, stopping at
 * the first still in flight (a claim's O(1) look), or all of them (drain anchors). */
void timing_runs_poll_locked(struct timing_list *list, unsigned max, bool stop_at_busy)
{
    struct timing_run **link = &list->runs;
    struct timing_run *previous = NULL;
    for (unsigned looked = 0; *link && looked < max; looked++) {
        struct timing_run *run = *link;
        if (run->state == RUN_SUBMITTED && run->tracked && !run->abandoned &&
            zeprof_real.zeEventQueryStatus(run->done->event) == ZE_RESULT_SUCCESS) {
            finish_run_locked(list, run);
            timing_run_retire_locked(list, link, previous);
            continue;
        }
        if (stop_at_busy)
            return;
        previous = run;
        link = &run->next;
    }
}

void timing_runs_drain_locked(struct timing_list *list, bool final, uint64_t wait_ns)
{
    timing_runs_poll_locked(list, UINT32_MAX, false);
    if (!final)
        return;
    uint64_t deadline = wait_ns ? monotonic_ns() + wait_ns : 0;
    struct timing_run **link = &list->runs;
    struct timing_run *previous = NULL;
    while (*link) {
        struct timing_run *run = *link;
        if (run->state == RUN_SUBMITTED && run->tracked && !run->abandoned && deadline) {
            uint64_t now = monotonic_ns();
            if (now < deadline &&
                zeprof_real.zeEventHostSynchronize(run->done->event, deadline - now) ==
                    ZE_RESULT_SUCCESS) {
                finish_run_locked(list, run);
                timing_run_retire_locked(list, link, previous);
                continue;
            }
        }
        if (!run->abandoned) {
            /* Still in flight (or another thread's claim, an application error at reset or
             * destroy): report it lost and leave its tracer list alone for good. */
            timing_run_emit_lost(list, run);
            run->abandoned = true;
        }
        previous = run;
        link = &run->next;
    }
    for (struct timing_slot *slot = list->head; slot; slot = slot->next)
        timing_runs_resolve_app_slot_locked(list, slot);
}

/* ---------------------------------------------------------------- building tracer lists --- */

static ze_command_list_handle_t new_tracer_list(struct timing_list *list)
{
    ze_command_list_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
        .pNext = NULL,
        .commandQueueGroupOrdinal = list->ordinal,
        .flags = 0,
    };
    ze_command_list_handle_t handle = NULL;
    if (zeprof_real.zeCommandListCreate(list->context_handle, list->device->handle, &desc,
                                        &handle) != ZE_RESULT_SUCCESS)
        return NULL;
    return handle;
}

static bool done_ready(struct timing_list *list, struct timing_run *run)
{
    if (!run->done)
        run->done = timing_pool_take(list->context);
    return run->done != NULL;
}

bool timing_run_done_list_ready_locked(struct timing_list *list, struct timing_run *run)
{
    if (run->done_list)
        return true;
    if (!done_ready(list, run))
        return false;
    ze_command_list_handle_t handle = new_tracer_list(list);
    if (!handle)
        return false;
    if (zeprof_real.zeCommandListAppendBarrier(handle, run->done->event, 0, NULL) !=
            ZE_RESULT_SUCCESS ||
        zeprof_real.zeCommandListClose(handle) != ZE_RESULT_SUCCESS) {
        zeprof_real.zeCommandListDestroy(handle);
        return false;
    }
    run->done_list = handle;
    return true;
}

static bool results_ready(struct timing_list *list, struct timing_run *run, uint32_t count)
{
    if (run->capacity >= count)
        return true;
    if (run->results)
        zeprof_real.zeMemFree(list->context_handle, run->results);
    run->results = NULL;
    run->capacity = 0;
    ze_host_mem_alloc_desc_t desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *memory = NULL;
    if (zeprof_real.zeMemAllocHost(list->context_handle, &desc,
                                   (size_t)count * sizeof(ze_kernel_timestamp_result_t), 64,
                                   &memory) != ZE_RESULT_SUCCESS)
        return false;
    run->results = memory;
    run->capacity = count;
    return true;
}

/* The harvest list for the list's current slots (rebuilt when they changed). */
bool timing_run_harvest_ready_locked(struct timing_list *list, struct timing_run *run)
{
    if (run->harvest_list && run->harvest_layout == list->layout)
        return true;
    uint32_t count = 0;
    for (struct timing_slot *slot = list->head; slot; slot = slot->next)
        count += slot_has_inj(slot);
    if (count == 0 || !done_ready(list, run) || !results_ready(list, run, count))
        return false;
    ze_event_handle_t *events = malloc(count * sizeof *events);
    if (!events)
        return false;
    uint32_t index = 0;
    for (struct timing_slot *slot = list->head; slot; slot = slot->next) {
        if (slot_has_inj(slot))
            events[index++] = slot->inj->event;
    }

    ze_command_list_handle_t handle = run->harvest_list;
    run->harvest_list = NULL;
    if (handle && zeprof_real.zeCommandListReset(handle) != ZE_RESULT_SUCCESS) {
        zeprof_real.zeCommandListDestroy(handle);
        handle = NULL;
    }
    if (!handle)
        handle = new_tracer_list(list);
    bool ok = false;
    if (!handle)
        goto end;
    /* A barrier waits for everything before it on the queue (this execution); the query reads
     * the events; the barrier that signals done holds back everything after it (the next
     * execution) until the query has read them. Nothing waits on the events themselves, so a
     * signal left in them from an earlier execution can neither release nor block anything. */
    ok = zeprof_real.zeCommandListAppendBarrier(handle, NULL, 0, NULL) == ZE_RESULT_SUCCESS;
    if (ok) {
        ze_result_t query = zeprof_real.zeCommandListAppendQueryKernelTimestamps(
            handle, count, events, run->results, NULL, NULL, 0, NULL);
        if (query != ZE_RESULT_SUCCESS) {
            /* A copy-only queue group: the host reads this list's events itself from now on. */
            list->no_harvest = true;
            ok = false;
        }
    }
    ok = ok &&
         zeprof_real.zeCommandListAppendBarrier(handle, run->done->event, 0, NULL) ==
             ZE_RESULT_SUCCESS &&
         zeprof_real.zeCommandListClose(handle) == ZE_RESULT_SUCCESS;
end:
    free(events);
    if (ok) {
        run->harvest_list = handle;
        run->harvest_layout = list->layout;
    } else if (handle) {
        zeprof_real.zeCommandListDestroy(handle);
    }
    return ok;
}
