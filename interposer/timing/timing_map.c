/*
 * timing_map.c: uint64 -> pointer hash maps for the registry.
 *
 * Open addressing with linear probing and backward-shift deletion, so the table never fills
 * with tombstones: its size follows the number of live handles, not the history. Keys are
 * Level Zero handles, never 0 (0 marks an empty cell). Not thread-safe: the registry's rwlock
 * guards every map.
 */
#include <stdlib.h>

#include "timing_internal.h"

static size_t map_hash(uint64_t key, size_t mask)
{
    /* Handles are aligned pointers: mix the bits so that low zero bits do not cluster. */
    key ^= key >> 33;
    key *= UINT64_C(0xff51afd7ed558ccd);
    key ^= key >> 33;
    return (size_t)key & mask;
}

void timing_map_init(struct timing_map *map)
{
    map->keys = NULL;
    map->values = NULL;
    map->capacity = 0;
    map->count = 0;
}

void timing_map_release(struct timing_map *map)
{
    free(map->keys);
    free(map->values);
    timing_map_init(map);
}

static size_t map_find(const struct timing_map *map, uint64_t key)
{
    size_t mask = map->capacity - 1;
    size_t i = map_hash(key, mask);

    while (map->keys[i] != 0 && map->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

void *timing_map_get(const struct timing_map *map, uint64_t key)
{
    if (map->capacity == 0 || key == 0)
        return NULL;
    size_t i = map_find(map, key);
    return map->keys[i] == key ? map->values[i] : NULL;
}

static int map_grow(struct timing_map *map)
{
    size_t capacity = map->capacity ? map->capacity * 2 : 16;
    uint64_t *keys = calloc(capacity, sizeof *keys);
    void **values = calloc(capacity, sizeof *values);

    if (!keys || !values) {
        free(keys);
        free(values);
        return -1;
    }
    struct timing_map bigger = {keys, values, capacity, 0};
    for (size_t i = 0; i < map->capacity; i++) {
        if (map->keys[i] != 0) {
            size_t j = map_find(&bigger, map->keys[i]);
            bigger.keys[j] = map->keys[i];
            bigger.values[j] = map->values[i];
            bigger.count++;
        }
    }
    free(map->keys);
    free(map->values);
    *map = bigger;
    return 0;
}

int timing_map_put(struct timing_map *map, uint64_t key, void *value)
{
    if (key == 0)
        return -1;
    /* Keep the load under 1/2 so probes stay short. */
    if ((map->count + 1) * 2 > map->capacity && map_grow(map) != 0)
        return -1;
    size_t i = map_find(map, key);
    if (map->keys[i] == 0) {
        map->keys[i] = key;
        map->count++;
    }
    map->values[i] = value;
    return 0;
}

void *timing_map_remove(struct timing_map *map, uint64_t key)
{
    if (map->capacity == 0 || key == 0)
        return NULL;
    size_t mask = map->capacity - 1;
    size_t i = map_find(map, key);
    if (map->keys[i] != key)
        return NULL;
    void *value = map->values[i];

    /* Backward-shift: move later members of the probe run into the hole. */
    size_t hole = i;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (map->keys[j] == 0)
            break;
        size_t home = map_hash(map->keys[j], mask);
        /* Move j into the hole unless its home lies cyclically in (hole, j]. */
        bool home_after_hole = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_after_hole) {
            map->keys[hole] = map->keys[j];
            map->values[hole] = map->values[j];
            hole = j;
        }
    }
    map->keys[hole] = 0;
    map->values[hole] = NULL;
    map->count--;
    return value;
}

void timing_map_for_each(const struct timing_map *map,
                         void (*fn)(uint64_t key, void *value, void *user), void *user)
{
    for (size_t i = 0; i < map->capacity; i++) {
        if (map->keys[i] != 0)
            fn(map->keys[i], map->values[i], user);
    }
}
