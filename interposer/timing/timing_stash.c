/*
 * timing_stash.c: a command list's injected events: where a new slot's comes from, and where the
 * released slots' go.
 *
 * A new slot takes a regular list's stash first (injected events of earlier slots, kept across
 * list resets, possibly still signalled: nothing waits on a regular list's injected events, so
 * they need no reset), else a reset event from the context's pool (timing_pool.c). When a list's
 * slots are released (reset, destroy, after the final drain), an injected event is kept only if
 * no execution can still signal it: a regular list stashes it as it is, an immediate list resets
 * it for the pool; anything else stays with its pool, unused, until the context is destroyed.
 *
 * All functions run under list->mutex.
 */
#include "timing_internal.h"
#include "zeprof_api.h"

void timing_release_slots_locked(struct timing_list *list)
{
    /* Regular lists: injected events are kept only when no execution can still signal them
     * (nothing in flight or abandoned, nothing untracked), in the list's stash, as they are
     * (nothing waits on them, so the list's next appends take them without a reset: a reset
     * costs a driver call per event). Immediate lists reset them for the pool. */
    bool recycle = list->context != NULL && (list->immediate || timing_runs_quiet_locked(list));
    struct timing_inj **stash_tail = &list->stash;
    while (*stash_tail)
        stash_tail = &(*stash_tail)->next_free;
    for (struct timing_slot *slot = list->head; slot; slot = slot->next) {
        timing_clear_app_pending(slot);
        if (!slot->inj)
            continue;
        if (recycle && !list->immediate) {
            slot->inj->next_free = NULL;
            *stash_tail = slot->inj;
            stash_tail = &slot->inj->next_free;
        } else if (recycle &&
                   zeprof_real.zeEventHostReset(slot->inj->event) == ZE_RESULT_SUCCESS) {
            timing_pool_give_back(list->context, slot->inj);
        }
        slot->inj = NULL; /* else it stays with its pool until the context goes */
    }
    timing_slots_release(list);
}

struct timing_inj *timing_take_inj_locked(struct timing_list *list)
{
    struct timing_inj *inj = list->stash;
    if (inj && !list->immediate) {
        list->stash = inj->next_free;
        inj->next_free = NULL;
        return inj;
    }
    return timing_pool_take(list->context);
}

void timing_give_back_inj_locked(struct timing_list *list, struct timing_inj *inj)
{
    if (list->immediate) {
        timing_pool_give_back(list->context, inj); /* never submitted: still unsignalled */
        return;
    }
    inj->next_free = list->stash; /* it may hold an earlier signal */
    list->stash = inj;
}

void timing_release_stash_locked(struct timing_list *list)
{
    while (list->stash) {
        struct timing_inj *inj = list->stash;
        list->stash = inj->next_free;
        inj->next_free = NULL;
        if (list->context && zeprof_real.zeEventHostReset(inj->event) == ZE_RESULT_SUCCESS)
            timing_pool_give_back(list->context, inj);
    }
}
