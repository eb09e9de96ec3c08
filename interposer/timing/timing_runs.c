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
 * Nothing here waits, except list reset and destroy, which give the tracer's own lists of an
 * execution that the application knows complete a bounded time to finish.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing_internal.h"
#include "zeprof_api.h"

enum run_state {
    RUN_FREE = 0,  /* reusable */
    RUN_CLAIMED,   /* claimed by an execute pre hook, not yet submitted */
    RUN_SUBMITTED, /* in flight until done is seen signalled */
};

struct timing_run {
    struct timing_run *next;
    enum run_state state;
    uint64_t execution;
    ze_command_queue_handle_t queue; /* Weak */
    pthread_t claimer;
    bool harvest;   /* results will hold this execution's timestamps */
    bool lost;      /* its timings are reported lost when it is finished */
    bool tracked;   /* a done marker follows it */
    bool abandoned; /* a final drain gave up on it: it may still run; never reused or freed */
    struct timing_inj *done;                  /* Owned: signalled by the tracer list's end */
    ze_command_list_handle_t harvest_list;    /* Owned */
    uint64_t harvest_layout;                  /* list->layout harvest_list was built for */
    ze_command_list_handle_t done_list;       /* Owned: one barrier signalling done */
    ze_kernel_timestamp_result_t *results;    /* Owned: host memory the device writes */
    uint32_t capacity;
};

struct timing_claim {
    ze_command_list_handle_t list; /* Weak */
    struct timing_run *run;        /* Weak: owned by the list's record */
};

struct timing_execute {
    ze_command_list_handle_t *app_lists; /* Weak: the application's array */
    uint32_t app_count;
    ze_command_list_handle_t *lists; /* what the driver gets (points into this block) */
    uint32_t count;
    uint32_t claimed;
    struct timing_claim *claims; /* points into this block */
};

static bool slot_has_inj(const struct timing_slot *slot)
{
    return slot->armed && slot->inj != NULL;
}

static void emit_run_lost(const struct timing_list *list, const struct timing_run *run)
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

/* Moves the run at *link (in flight) to the free stack. */
static void retire_run_locked(struct timing_list *list, struct timing_run **link,
                              struct timing_run *previous)
{
    struct timing_run *run = *link;
    *link = run->next;
    if (list->runs_tail == run)
        list->runs_tail = previous;
    run->state = RUN_FREE;
    run->next = list->free_runs;
    list->free_runs = run;
}

static uint64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
}

/* Reads runs whose done marker is signalled, oldest first; max: how many to look at, stopping at
 * the first still in flight (a claim's O(1) look), or all of them (drain anchors). */
static void poll_runs_locked(struct timing_list *list, unsigned max, bool stop_at_busy)
{
    struct timing_run **link = &list->runs;
    struct timing_run *previous = NULL;
    for (unsigned looked = 0; *link && looked < max; looked++) {
        struct timing_run *run = *link;
        if (run->state == RUN_SUBMITTED && run->tracked && !run->abandoned &&
            zeprof_real.zeEventQueryStatus(run->done->event) == ZE_RESULT_SUCCESS) {
            finish_run_locked(list, run);
            retire_run_locked(list, link, previous);
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
    poll_runs_locked(list, UINT32_MAX, false);
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
                retire_run_locked(list, link, previous);
                continue;
            }
        }
        if (!run->abandoned) {
            /* Still in flight (or another thread's claim, an application error at reset or
             * destroy): report it lost and leave its tracer list alone for good. */
            emit_run_lost(list, run);
            run->abandoned = true;
        }
        previous = run;
        link = &run->next;
    }
    for (struct timing_slot *slot = list->head; slot; slot = slot->next)
        timing_runs_resolve_app_slot_locked(list, slot);
}

bool timing_runs_quiet_locked(const struct timing_list *list)
{
    return !list->untracked && list->runs == NULL;
}

static void run_free(struct timing_list *list, struct timing_run *run)
{
    if (run->harvest_list)
        zeprof_real.zeCommandListDestroy(run->harvest_list);
    if (run->done_list)
        zeprof_real.zeCommandListDestroy(run->done_list);
    if (run->results)
        zeprof_real.zeMemFree(list->context_handle, run->results);
    if (run->done && list->context &&
        zeprof_real.zeEventHostReset(run->done->event) == ZE_RESULT_SUCCESS)
        timing_pool_give_back(list->context, run->done);
    free(run);
}

void timing_runs_release_locked(struct timing_list *list, bool destroy)
{
    /* What is still in flight after the final drain may still run on the device: its lists,
     * buffer and event are left alone for good (a leak bounded by the application's errors). */
    list->runs = NULL;
    list->runs_tail = NULL;
    if (destroy) {
        while (list->free_runs) {
            struct timing_run *run = list->free_runs;
            list->free_runs = run->next;
            run_free(list, run);
        }
    }
    /* The application reset or destroyed the list: none of its executions is in flight. */
    list->untracked = false;
    list->layout++;
    list->executions = 0;
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

static bool done_list_ready(struct timing_list *list, struct timing_run *run)
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
static bool harvest_ready(struct timing_list *list, struct timing_run *run)
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

/* ---------------------------------------------------------------- claiming --------------- */

/* A free run (the free stack's top, or a new one), still on the free stack. */
static struct timing_run *free_run_locked(struct timing_list *list)
{
    if (list->free_runs)
        return list->free_runs;
    struct timing_run *run = calloc(1, sizeof *run);
    if (run) {
        run->next = NULL;
        list->free_runs = run;
    }
    return run;
}

/* The free stack's top becomes the newest run in flight. */
static struct timing_run *enqueue_run_locked(struct timing_list *list)
{
    struct timing_run *run = list->free_runs;
    list->free_runs = run->next;
    run->next = NULL;
    if (list->runs_tail)
        list->runs_tail->next = run;
    else
        list->runs = run;
    list->runs_tail = run;
    return run;
}

/* Arm the application's timestamp events for this execution: an earlier execution's unread
 * value is read now (or lost), and an event still signalled from before cannot tell this
 * execution's completion apart (lost). */
static void arm_app_slots_locked(struct timing_list *list, struct timing_run *run, bool clean)
{
    for (struct timing_slot *slot = list->head; slot; slot = slot->next) {
        if (!slot->app_event || !slot->armed)
            continue;
        timing_runs_resolve_app_slot_locked(list, slot);
        slot->app_execution = run->execution;
        slot->app_queue = run->queue;
        slot->lost =
            !clean || zeprof_real.zeEventQueryStatus(slot->app_event) == ZE_RESULT_SUCCESS;
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

static bool has_armed_slot(const struct timing_list *list)
{
    for (const struct timing_slot *slot = list->head; slot; slot = slot->next) {
        if (slot->armed)
            return true;
    }
    return false;
}

/* The application's lists go through unprofiled but still run: nothing can be known of the
 * events any more until the list is reset. */
static void untrack_locked(struct timing_list *list)
{
    if (!has_armed_slot(list))
        return;
    for (struct timing_run *run = list->runs; run; run = run->next)
        run->lost = true;
    list->untracked = true;
}

void timing_runs_prepare_locked(struct timing_list *list)
{
    if (list->immediate || list->no_harvest || !has_armed_slot(list))
        return;
    /* The next claim takes the free stack's top: get that one ready. */
    struct timing_run *run = free_run_locked(list);
    if (run)
        harvest_ready(list, run); /* a failure is retried (or given up) at execute */
}

/* Under the registry lock (read) and list->mutex. Never waits. Returns the run (NULL: the list
 * has nothing profiled, or no memory: then the list is untracked) and the tracer list to submit
 * after the application's (NULL when none could be had: the run is lost and untracked). */
static struct timing_run *claim_locked(struct timing_list *list, ze_command_queue_handle_t queue,
                                       pthread_t self, ze_command_list_handle_t *tracer)
{
    *tracer = NULL;
    if (!has_armed_slot(list))
        return NULL;
    poll_runs_locked(list, 2, true);

    bool concurrent = false;
    for (struct timing_run *run = list->runs; run; run = run->next) {
        /* Earlier on the same queue (submitted, or earlier in this very call): it ends before
         * this execution starts. */
        bool before = run->queue == queue && !run->abandoned &&
                      (run->state == RUN_SUBMITTED || pthread_equal(run->claimer, self));
        if (!before)
            concurrent = true;
        else if (!run->harvest)
            run->lost = true; /* this execution re-signals its events before the host reads */
    }
    if (concurrent) {
        for (struct timing_run *run = list->runs; run; run = run->next)
            run->lost = true;
    }
    bool clean = !concurrent && !list->untracked;

    if (!free_run_locked(list)) {
        untrack_locked(list);
        return NULL;
    }
    struct timing_run *run = enqueue_run_locked(list);
    run->execution = ++list->executions;
    run->queue = queue;
    run->claimer = self;
    run->state = RUN_CLAIMED;
    run->harvest = false;
    run->lost = !clean;
    run->tracked = true;
    if (clean && !list->no_harvest && harvest_ready(list, run)) {
        run->harvest = true;
        *tracer = run->harvest_list;
    } else if (done_list_ready(list, run)) {
        *tracer = run->done_list; /* host read (copy-only), or lost */
    } else {
        run->lost = true;
        run->tracked = false;
        untrack_locked(list);
    }
    arm_app_slots_locked(list, run, clean && !list->untracked);
    return run;
}

static struct timing_execute *execute_new(uint32_t count)
{
    size_t size = sizeof(struct timing_execute) + 2 * (size_t)count * sizeof(ze_command_list_handle_t) +
                  (size_t)count * sizeof(struct timing_claim);
    struct timing_execute *execute = malloc(size);
    if (!execute)
        return NULL;
    execute->lists = (ze_command_list_handle_t *)(execute + 1);
    execute->claims = (struct timing_claim *)(execute->lists + 2 * (size_t)count);
    execute->count = 0;
    execute->claimed = 0;
    return execute;
}

struct timing_execute *timing_execute_begin(ze_command_queue_handle_t queue, uint32_t *count_inout,
                                            ze_command_list_handle_t **lists_inout)
{
    struct timing_execute *execute = NULL;
    uint32_t count = *count_inout;
    ze_command_list_handle_t *lists = *lists_inout;
    pthread_t self = pthread_self();
    uint32_t copied = 0;
    bool out_of_memory = false;

    if (count == 0 || count > UINT32_MAX / 2)
        return NULL;
    pthread_rwlock_rdlock(&timing_registry_lock);
    for (uint32_t i = 0; i < count; i++) {
        struct timing_list *list = timing_registry_list(lists[i]);
        if (!list || list->immediate)
            continue;
        if (!execute && !out_of_memory) {
            execute = execute_new(count);
            out_of_memory = execute == NULL;
        }
        pthread_mutex_lock(&list->mutex);
        if (out_of_memory) {
            untrack_locked(list);
            pthread_mutex_unlock(&list->mutex);
            continue;
        }
        ze_command_list_handle_t tracer = NULL;
        struct timing_run *run = claim_locked(list, queue, self, &tracer);
        pthread_mutex_unlock(&list->mutex);
        while (copied <= i)
            execute->lists[execute->count++] = lists[copied++];
        if (run)
            execute->claims[execute->claimed++] = (struct timing_claim){lists[i], run};
        if (tracer)
            execute->lists[execute->count++] = tracer;
    }
    pthread_rwlock_unlock(&timing_registry_lock);
    if (execute) {
        while (copied < count)
            execute->lists[execute->count++] = lists[copied++];
        execute->app_lists = lists;
        execute->app_count = count;
        *lists_inout = execute->lists;
        *count_inout = execute->count;
    }
    return execute;
}

/* The link to wanted in the in-flight FIFO (and its predecessor), or NULL. */
static struct timing_run **link_of(struct timing_list *list, const struct timing_run *wanted,
                                   struct timing_run **previous)
{
    *previous = NULL;
    for (struct timing_run **link = &list->runs; *link; link = &(*link)->next) {
        if (*link == wanted)
            return link;
        *previous = *link;
    }
    return NULL;
}

void timing_execute_end(struct timing_execute *execute, bool submitted, uint32_t *count,
                        ze_command_list_handle_t **lists)
{
    pthread_t self = pthread_self();

    *lists = execute->app_lists;
    *count = execute->app_count;
    pthread_rwlock_rdlock(&timing_registry_lock);
    for (uint32_t i = 0; i < execute->claimed; i++) {
        struct timing_list *list = timing_registry_list(execute->claims[i].list);
        if (!list)
            continue;
        struct timing_run *run = execute->claims[i].run;
        pthread_mutex_lock(&list->mutex);
        struct timing_run *previous = NULL;
        struct timing_run **link = link_of(list, run, &previous);
        if (link && run->state == RUN_CLAIMED && pthread_equal(run->claimer, self)) {
            if (submitted && run->tracked) {
                run->state = RUN_SUBMITTED;
            } else if (submitted) {
                emit_run_lost(list, run); /* ran without a done marker */
                retire_run_locked(list, link, previous);
            } else {
                /* Never ran: forget the execution (its number, its app-event arming). */
                retire_run_locked(list, link, previous);
                if (run->execution == list->executions)
                    list->executions--;
                for (struct timing_slot *slot = list->head; slot; slot = slot->next) {
                    if (slot->app_event && slot->app_execution == run->execution) {
                        slot->read_execution = slot->app_execution;
                        timing_clear_app_pending(slot);
                    }
                }
            }
        }
        pthread_mutex_unlock(&list->mutex);
    }
    pthread_rwlock_unlock(&timing_registry_lock);
    free(execute);
}
