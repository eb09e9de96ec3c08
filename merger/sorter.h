/*
 * sorter: an external merge sort of timeline records, so that the timeline comes out in time
 * order while memory stays bounded whatever the trace length.
 *
 * Records (a key, a host, an opaque payload) accumulate in an in-memory arena; when the arena
 * would pass its budget, or at the end of a host, they are sorted and written as one run to an
 * unlinked temporary file. A run never mixes hosts, so that at the merge the key of each run can be
 * moved onto the common time axis by a per-host function that preserves order (the placement).
 * The sorter owns its arena and run files; the payload is copied in.
 */
#ifndef ZM_SORTER_H
#define ZM_SORTER_H

#include "must_check.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct zm_sorter_run;

struct zm_sorter {
    char *arena; /* Owned by this: header + payload, back to back */
    size_t used, budget;
    size_t *offsets; /* Owned by this: one per record in the arena */
    size_t count, capacity;
    uint64_t next_seq;
    struct zm_sorter_run *runs; /* Owned by this */
    size_t run_count, run_capacity;
};

/* Moves a host-local key onto the common axis (must be monotonic per host). */
typedef int64_t (*zm_sorter_axis_fn)(void *context, uint32_t host, int64_t key);
/* Receives records in axis order; a non-zero return stops the merge and is returned. */
typedef int (*zm_sorter_emit_fn)(void *context, int64_t axis_key, uint32_t host,
                                 const void *payload, uint32_t length);

ZM_MUST_CHECK int zm_sorter_init(struct zm_sorter *sorter, size_t budget_bytes);
void zm_sorter_release(struct zm_sorter *sorter);
ZM_MUST_CHECK int zm_sorter_add(struct zm_sorter *sorter, int64_t key, uint32_t host,
                                const void *payload, uint32_t length);
/* Ends the current run (call when the host changes). -1 on I/O error. */
ZM_MUST_CHECK int zm_sorter_flush(struct zm_sorter *sorter);
/* Merges every run (flushing the arena first if other runs exist) into `emit`, in axis order. */
ZM_MUST_CHECK int zm_sorter_merge(struct zm_sorter *sorter, zm_sorter_axis_fn axis,
                                  zm_sorter_emit_fn emit, void *context);

#endif
