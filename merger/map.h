/*
 * map: an open-addressing hash table from a pair of 64-bit keys to a 64-bit value.
 *
 * The merger's lookups (thread by (host, pid, tid), append by (host, pid, call_id), statistics row
 * by (name, where)) all reduce to two 64-bit words, so one small table serves them all. Linear
 * probing with backward-shift deletion: no tombstones, so a table that sees many inserts and
 * removes (appends of immediate lists) does not degrade. The table owns its slots only.
 */
#ifndef ZM_MAP_H
#define ZM_MAP_H

#include "must_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zm_map_slot {
    uint64_t a, b, value;
    bool used;
};

struct zm_map {
    struct zm_map_slot *slots; /* Owned by this */
    size_t capacity;           /* power of two, or 0 */
    size_t count;
};

/* No allocation. */
void zm_map_init(struct zm_map *map);
/* Frees the slots; the map is then empty and reusable. */
void zm_map_release(struct zm_map *map);
/* Returns a pointer to the value stored for (a, b), or NULL. Valid until the next insert/remove. */
uint64_t *zm_map_find(const struct zm_map *map, uint64_t a, uint64_t b);
/* Inserts or overwrites. Returns -1 on allocation failure (map unchanged). */
ZM_MUST_CHECK int zm_map_put(struct zm_map *map, uint64_t a, uint64_t b, uint64_t value);
/* Removes (a, b) if present; returns whether it was. */
bool zm_map_remove(struct zm_map *map, uint64_t a, uint64_t b);

/* The first key of every per-process lookup: the host in the high half, the pid in the low (pids
 * fit 32 bits), so that one process of one host is one key. */
static inline uint64_t zm_map_process_key(uint32_t host, int64_t pid)
{
    return (uint64_t)host << 32 | ((uint64_t)pid & 0xffffffffu);
}

#endif
