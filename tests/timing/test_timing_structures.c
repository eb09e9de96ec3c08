/*
 * test_timing_structures: the device-timing engine's data structures, without a device.
 *
 * - timing_map: random puts, gets and removes agree with a plain reference array, including
 *   removals inside probe runs (backward-shift deletion) and growth.
 * - timing_slots: slots come out in append order with O(1) predecessors; removing slots in any
 *   order keeps the live list consistent; a list reused for many rounds settles at one chunk,
 *   and a superseded chunk is freed when its last slot goes (a chunk kept would be a leak that
 *   the sanitizer build reports; here every live slot's chunk holds exactly the live slots).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing_internal.h"

static int failures;

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static void test_map_matches_reference(void)
{
    enum { KEYS = 512, STEPS = 200000 };
    struct timing_map map;
    void *reference[KEYS] = {0};
    uint64_t state = 88172645463325252u;

    timing_map_init(&map);
    for (int step = 0; step < STEPS; step++) {
        uint64_t r = next_random(&state);
        size_t k = (size_t)(r % KEYS);
        /* Keys like aligned pointers, which cluster in their low bits. */
        uint64_t key = 0x7f0000001000u + (uint64_t)k * 64;
        if ((r >> 20) % 3 == 0) {
            void *removed = timing_map_remove(&map, key);
            EXPECT(removed == reference[k]);
            reference[k] = NULL;
        } else {
            void *value = (void *)(uintptr_t)(r | 1);
            EXPECT(timing_map_put(&map, key, value) == 0);
            reference[k] = value;
        }
        if (step % 1000 == 0) {
            size_t live = 0;
            for (size_t i = 0; i < KEYS; i++) {
                EXPECT(timing_map_get(&map, 0x7f0000001000u + (uint64_t)i * 64) == reference[i]);
                live += reference[i] != NULL;
            }
            EXPECT(map.count == live);
        }
    }
    /* Emptied, the table does not keep growing: capacity follows the live count. */
    size_t capacity = map.capacity;
    for (size_t i = 0; i < KEYS; i++)
        timing_map_remove(&map, 0x7f0000001000u + (uint64_t)i * 64);
    EXPECT(map.count == 0);
    for (int round = 0; round < 1000; round++) {
        EXPECT(timing_map_put(&map, 0x1000u + (uint64_t)round * 8, &map) == 0);
        timing_map_remove(&map, 0x1000u + (uint64_t)round * 8);
    }
    EXPECT(map.capacity == capacity);
    EXPECT(timing_map_get(&map, 0) == NULL);
    EXPECT(timing_map_put(&map, 0, &map) == -1);
    timing_map_release(&map);
}

static void check_links(const struct timing_list *list, size_t expected)
{
    size_t count = 0;
    const struct timing_slot *prev = NULL;
    for (const struct timing_slot *slot = list->head; slot; slot = slot->next) {
        EXPECT(slot->prev == prev);
        prev = slot;
        count++;
    }
    EXPECT(list->tail == prev);
    EXPECT(count == expected);
}

static void test_slots_order_and_removal(void)
{
    struct timing_list list;
    memset(&list, 0, sizeof list);
    struct timing_slot *slots[200];

    for (uint64_t i = 0; i < 200; i++) {
        slots[i] = timing_slot_add(&list);
        EXPECT(slots[i] != NULL);
        slots[i]->call_id = i;
        if (i > 0)
            EXPECT(slots[i]->prev == slots[i - 1]);
    }
    check_links(&list, 200);
    /* Remove every third, then the head, then the tail. */
    size_t live = 200;
    for (size_t i = 0; i < 200; i += 3) {
        timing_slot_remove(&list, slots[i]);
        slots[i] = NULL;
        live--;
    }
    check_links(&list, live);
    uint64_t previous = 0;
    bool first = true;
    for (struct timing_slot *slot = list.head; slot; slot = slot->next) {
        EXPECT(first || slot->call_id > previous);
        EXPECT(slot->call_id % 3 != 0);
        previous = slot->call_id;
        first = false;
    }
    timing_slots_release(&list);
    EXPECT(list.head == NULL && list.tail == NULL && list.newest_chunk == NULL);
}

static void test_slots_reused_list_stays_small(void)
{
    struct timing_list list;
    memset(&list, 0, sizeof list);

    /* Rounds of 100 appends drained oldest first, one slot held over (as a read slot whose
     * barrier awaits proof would be): chunks are superseded and freed, never accumulated. */
    struct timing_slot *held = NULL;
    struct timing_chunk *chunks_seen[4] = {0};
    size_t distinct_live_chunks = 0;
    for (int round = 0; round < 10000; round++) {
        for (int i = 0; i < 100; i++)
            EXPECT(timing_slot_add(&list) != NULL);
        while (list.head && list.head != list.tail) {
            struct timing_slot *slot = list.head;
            if (slot == held)
                held = NULL;
            timing_slot_remove(&list, slot);
        }
        held = list.tail;
        /* Live slots: just the held one; at most two chunks can hold anything. */
        size_t chunks = 0;
        memset(chunks_seen, 0, sizeof chunks_seen);
        for (struct timing_slot *slot = list.head; slot; slot = slot->next) {
            bool seen = false;
            for (size_t c = 0; c < chunks; c++)
                seen = seen || chunks_seen[c] == slot->chunk;
            if (!seen && chunks < 4)
                chunks_seen[chunks++] = slot->chunk;
        }
        if (chunks > distinct_live_chunks)
            distinct_live_chunks = chunks;
        EXPECT(list.head == list.tail);
        EXPECT(list.head->chunk->live == 1);
    }
    EXPECT(distinct_live_chunks <= 1);
    timing_slots_release(&list);
}

int main(void)
{
    test_map_matches_reference();
    test_slots_order_and_removal();
    test_slots_reused_list_stays_small();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("PASS test_timing_structures\n");
    return 0;
}
