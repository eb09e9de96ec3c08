/* map: the (u64, u64) -> u64 open-addressing hash table (map.h). */
#include "map.h"

#include <stdlib.h>

void zm_map_init(struct zm_map *map)
{
    map->slots = NULL;
    map->capacity = 0;
    map->count = 0;
}

void zm_map_release(struct zm_map *map)
{
    free(map->slots);
    zm_map_init(map);
}

static size_t slot_of(uint64_t a, uint64_t b, size_t capacity)
{
    /* A 64-bit mix (splitmix-style finaliser) so that keys differing only in high bits spread. */
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return (size_t)h & (capacity - 1);
}

uint64_t *zm_map_find(const struct zm_map *map, uint64_t a, uint64_t b)
{
    if (map->capacity == 0)
        return NULL;
    for (size_t i = slot_of(a, b, map->capacity);; i = (i + 1) & (map->capacity - 1)) {
        struct zm_map_slot *slot = &map->slots[i];
        if (!slot->used)
            return NULL;
        if (slot->a == a && slot->b == b)
            return &slot->value;
    }
}

static void place(struct zm_map_slot *slots, size_t capacity, uint64_t a, uint64_t b,
                  uint64_t value)
{
    size_t i = slot_of(a, b, capacity);
    while (slots[i].used)
        i = (i + 1) & (capacity - 1);
    slots[i] = (struct zm_map_slot){a, b, value, true};
}

static int grow(struct zm_map *map)
{
    size_t capacity = map->capacity ? map->capacity * 2 : 64;
    struct zm_map_slot *slots = calloc(capacity, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < map->capacity; i++) {
        if (map->slots[i].used)
            place(slots, capacity, map->slots[i].a, map->slots[i].b, map->slots[i].value);
    }
    free(map->slots);
    map->slots = slots;
    map->capacity = capacity;
    return 0;
}

int zm_map_put(struct zm_map *map, uint64_t a, uint64_t b, uint64_t value)
{
    uint64_t *existing = zm_map_find(map, a, b);
    if (existing) {
        *existing = value;
        return 0;
    }
    /* Keep the load under 1/2 so probe runs stay short. */
    if ((map->count + 1) * 2 > map->capacity && grow(map) != 0)
        return -1;
    place(map->slots, map->capacity, a, b, value);
    map->count++;
    return 0;
}

bool zm_map_remove(struct zm_map *map, uint64_t a, uint64_t b)
{
    if (map->capacity == 0)
        return false;
    size_t mask = map->capacity - 1;
    size_t i = slot_of(a, b, map->capacity);
    while (map->slots[i].used && !(map->slots[i].a == a && map->slots[i].b == b))
        i = (i + 1) & mask;
    if (!map->slots[i].used)
        return false;
    /* Backward-shift: pull later members of the probe run into the hole when allowed. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; map->slots[j].used; j = (j + 1) & mask) {
        size_t home = slot_of(map->slots[j].a, map->slots[j].b, map->capacity);
        /* j may move to hole only if its home is not cyclically within (hole, j]. */
        bool home_in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_in_range) {
            map->slots[hole] = map->slots[j];
            hole = j;
        }
    }
    map->slots[hole].used = false;
    map->count--;
    return true;
}
