/* memory: allocation ranges per process and the kind of memory a pointer is in (memory.h). */
#include "memory.h"

#include "grow.h"

#include <stdlib.h>
#include <string.h>

void zm_memory_init(struct zm_memory *memory)
{
    *memory = (struct zm_memory){0};
}

void zm_memory_release(struct zm_memory *memory)
{
    free(memory->ranges);
    free(memory->pending);
    zm_memory_init(memory);
}

bool zm_memory_allocator(const char *function, enum zm_memory_kind *kind)
{
    if (strcmp(function, "zeMemAllocHost") == 0)
        *kind = ZM_MEMORY_HOST;
    else if (strcmp(function, "zeMemAllocDevice") == 0)
        *kind = ZM_MEMORY_DEVICE;
    else if (strcmp(function, "zeMemAllocShared") == 0)
        *kind = ZM_MEMORY_SHARED;
    else
        return false;
    return true;
}

int zm_memory_alloc_entry(struct zm_memory *memory, uint64_t process, int64_t tid,
                          enum zm_memory_kind kind, uint64_t size)
{
    if (ZM_GROW(memory->pending, memory->pending_capacity, memory->pending_count + 1, 8) != 0)
        return -1;
    memory->pending[memory->pending_count++] = (struct zm_memory_pending){process, tid, size, kind};
    return 0;
}

/* The first range not before (process, address). */
static size_t lower_bound(const struct zm_memory *memory, uint64_t process, uint64_t address)
{
    size_t low = 0, high = memory->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        const struct zm_memory_range *range = &memory->ranges[middle];
        if (range->process < process || (range->process == process && range->base < address))
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

int zm_memory_alloc_exit(struct zm_memory *memory, uint64_t process, int64_t tid, bool ok,
                         uint64_t address)
{
    /* The latest entry of the thread: allocations do not nest, but a lost exit must not pair an
     * older entry with a newer exit. */
    size_t i = memory->pending_count;
    while (i > 0 &&
           !(memory->pending[i - 1].process == process && memory->pending[i - 1].tid == tid))
        i--;
    if (i == 0)
        return 0;
    struct zm_memory_pending pending = memory->pending[i - 1];
    memory->pending[i - 1] = memory->pending[--memory->pending_count];
    if (!ok || address == 0 || pending.size == 0)
        return 0;
    size_t at = lower_bound(memory, process, address);
    if (at < memory->count && memory->ranges[at].process == process &&
        memory->ranges[at].base == address) {
        /* Freed without a traced zeMemFree (or a lost event): the new allocation wins. */
        memory->ranges[at].size = pending.size;
        memory->ranges[at].kind = pending.kind;
        return 0;
    }
    if (ZM_GROW(memory->ranges, memory->capacity, memory->count + 1, 16) != 0)
        return -1;
    memmove(&memory->ranges[at + 1], &memory->ranges[at],
            (memory->count - at) * sizeof(*memory->ranges));
    memory->ranges[at] = (struct zm_memory_range){process, address, pending.size, pending.kind};
    memory->count++;
    return 0;
}

void zm_memory_free(struct zm_memory *memory, uint64_t process, uint64_t address)
{
    size_t at = lower_bound(memory, process, address);
    if (at >= memory->count || memory->ranges[at].process != process ||
        memory->ranges[at].base != address)
        return;
    memmove(&memory->ranges[at], &memory->ranges[at + 1],
            (memory->count - at - 1) * sizeof(*memory->ranges));
    memory->count--;
}

enum zm_memory_kind zm_memory_kind_of(const struct zm_memory *memory, uint64_t process,
                                      uint64_t address)
{
    /* The range that begins at or before address is the only one that may hold it (ranges of
     * one process do not overlap). */
    size_t at = lower_bound(memory, process, address);
    if (at < memory->count && memory->ranges[at].process == process &&
        memory->ranges[at].base == address)
        return memory->ranges[at].kind;
    if (at == 0)
        return ZM_MEMORY_HOST;
    const struct zm_memory_range *range = &memory->ranges[at - 1];
    if (range->process == process && address - range->base < range->size)
        return range->kind;
    return ZM_MEMORY_HOST;
}
