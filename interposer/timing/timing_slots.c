/*
 * timing_slots.c: one slot per profiled append, in fixed-size chunks per command list.
 *
 * Slots are handed out by bumping through the list's newest chunk and are linked, in append
 * order, into the list's doubly-linked live list: the in-order predecessor of a slot is one
 * pointer away, and removing any slot (a failed append, a lost read) is O(1).
 *
 * Memory follows what is in flight: a chunk counts its live slots; a chunk that empties is freed
 * at once when a newer chunk has superseded it, and the newest chunk, when it empties, is rewound
 * and reused. A long-lived list reused for many rounds therefore settles at one chunk.
 *
 * All functions run under list->mutex.
 */
#include <stdlib.h>
#include <string.h>

#include "timing_internal.h"

struct timing_slot *timing_slot_add(struct timing_list *list)
{
    struct timing_chunk *chunk = list->newest_chunk;

    if (chunk && chunk->live == 0)
        chunk->used = 0; /* nothing alive in it: rewind instead of allocating */
    if (!chunk || chunk->used == TIMING_CHUNK_SLOTS) {
        struct timing_chunk *fresh = malloc(sizeof *fresh);
        if (!fresh)
            return NULL;
        fresh->used = 0;
        fresh->live = 0;
        /* The superseded chunk is now owned by its live slots (it is not empty: see above). */
        list->newest_chunk = fresh;
        chunk = fresh;
    }

    struct timing_slot *slot = &chunk->slots[chunk->used++];
    chunk->live++;
    memset(slot, 0, sizeof *slot);
    slot->chunk = chunk;
    slot->prev = list->tail;
    if (list->tail)
        list->tail->next = slot;
    else
        list->head = slot;
    list->tail = slot;
    return slot;
}

void timing_slot_remove(struct timing_list *list, struct timing_slot *slot)
{
    struct timing_chunk *chunk = slot->chunk;

    if (slot->prev)
        slot->prev->next = slot->next;
    else
        list->head = slot->next;
    if (slot->next)
        slot->next->prev = slot->prev;
    else
        list->tail = slot->prev;
    slot->prev = slot->next = NULL;

    if (--chunk->live == 0 && chunk != list->newest_chunk)
        free(chunk);
}

void timing_slots_release(struct timing_list *list)
{
    while (list->head)
        timing_slot_remove(list, list->head);
    free(list->newest_chunk);
    list->newest_chunk = NULL;
}
