/*
 * timing_instance.c: the life of one execution ("run") of a regular list, the claim state machine.
 *
 * Each profiled execution of a regular list gets a run record, which moves
 *
 *   free --claim (execute pre hook)--> claimed --submitted (post hook)--> in flight
 *     ^                                   |                                   |
 *     +------ never ran / no marker ------+------ done seen (timing_runs.c) --+
 *
 * In flight runs form a FIFO per list, oldest claim first; retired runs go to a free stack and are
 * reused with their tracer lists, buffer and done event. A claim never waits: it decides, from
 * what else is claimed or in flight for the list, whether this execution's timings can be told
 * apart (else they are reported lost), picks the tracer list to submit after the application's
 * (the harvest list, or a bare done marker) and arms the application's timestamp events for this
 * execution. timing_execute_begin/end do that for every list of one execute call and rebuild the
 * array the driver gets. Building the tracer lists and reading finished runs is timing_runs.c's.
 *
 * Nothing here waits; reset and destroy release the records (timing_runs_release_locked) after
 * the final drain.
 */
#include <stdlib.h>

#include "timing_internal.h"
#include "zeprof_api.h"

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

/* Moves the run at *link (in flight) to the free stack. */
void timing_run_retire_locked(struct timing_list *list, struct timing_run **link,
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
        /* A failure is retried (or given up) at execute. */
        timing_run_harvest_ready_locked(list, run);
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
    timing_runs_poll_locked(list, 2, true);

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
    if (clean && !list->no_harvest && timing_run_harvest_ready_locked(list, run)) {
        run->harvest = true;
        *tracer = run->harvest_list;
    } else if (timing_run_done_list_ready_locked(list, run)) {
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
                timing_run_emit_lost(list, run); /* ran without a done marker */
                timing_run_retire_locked(list, link, previous);
            } else {
                /* Never ran: forget the execution (its number, its app-event arming). */
                timing_run_retire_locked(list, link, previous);
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
