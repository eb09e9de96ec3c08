/*
 * memory: which kind of memory a pointer is in, per process, from the allocations the trace
 * records (zeMemAllocHost/Device/Shared: size at the entry, the pointer at a successful exit;
 * zeMemFree: the pointer at the entry). A pointer in no live allocation is host (system) memory:
 * malloc'd or stack memory that Level Zero copies from or to.
 * Allocations are ranges [base, base + size) kept sorted per (host, pid) key (map.h's process
 * key); memory grows with the live allocations and the allocations in flight. Owns its arrays.
 */
#ifndef ZM_MEMORY_H
#define ZM_MEMORY_H

#include "must_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum zm_memory_kind {
    ZM_MEMORY_HOST, /* zeMemAllocHost, or not allocated through Level Zero */
    ZM_MEMORY_DEVICE,
    ZM_MEMORY_SHARED,
};

struct zm_memory_range {
    uint64_t process, base, size;
    enum zm_memory_kind kind;
};

/* An allocation call entered and not yet returned, on one thread. */
struct zm_memory_pending {
    uint64_t process;
    int64_t tid;
    uint64_t size;
    enum zm_memory_kind kind;
};

struct zm_memory {
    struct zm_memory_range *ranges; /* Owned: sorted by (process, base) */
    size_t count, capacity;
    struct zm_memory_pending *pending; /* Owned */
    size_t pending_count, pending_capacity;
};

/* No allocation. */
void zm_memory_init(struct zm_memory *memory);
void zm_memory_release(struct zm_memory *memory);

/* The allocation kind of an API function's name ("zeMemAllocDevice": DEVICE), false when it is
 * not one of the three allocating functions. */
bool zm_memory_allocator(const char *function, enum zm_memory_kind *kind);
/* An allocation call began on (process, tid); -1 when out of memory. */
ZM_MUST_CHECK int zm_memory_alloc_entry(struct zm_memory *memory, uint64_t process, int64_t tid,
                                        enum zm_memory_kind kind, uint64_t size);
/* The allocation call of (process, tid) returned `address` (0 or !ok: nothing allocated); -1 when
 * out of memory. An exit without its entry is ignored. */
ZM_MUST_CHECK int zm_memory_alloc_exit(struct zm_memory *memory, uint64_t process, int64_t tid,
                                       bool ok, uint64_t address);
/* zeMemFree(address): the allocation that begins there is gone. */
void zm_memory_free(struct zm_memory *memory, uint64_t process, uint64_t address);
/* The kind of memory `address` is in. */
enum zm_memory_kind zm_memory_kind_of(const struct zm_memory *memory, uint64_t process,
                                      uint64_t address);

#endif
