/*
 * sorter: an external merge sort of timeline records, so that the timeline comes out in time
 * order while memory stays bounded whatever the trace length.
 *
 * Records (a key, a host, an opaque payload) accumulate in an in-memory arena. At the end of a
 * host its records are sorted and sealed as one segment, which stays in the arena; only when the
 * arena would pass its budget are its segments (and the records of the host still being read,
 * sorted) written as runs to unlinked temporary files. A trace whose records fit the budget is
 * therefore never spilled, and a longer one keeps its last arena in memory. A segment or run never
 * mixes hosts (a record of another host than the last one's ends the segment), so that at the
 * merge the key of each can be moved onto the common time axis by a per-host function that
 * preserves order (the placement). The budget counts the arena and the sort's index (two entries
 * per record), so it is the sorter's whole memory but for the small read buffer each spilled run
 * gets at the merge. The sorter owns its arena and run files; the payload is copied in.
 */
#ifndef ZM_SORTER_H
#define ZM_SORTER_H

#include "must_check.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct zm_sorter_run;

/* One record of the arena in the sort's index: its key, made unsigned with the same order, beside
 * its offset, so that sorting touches only the index. */
struct zm_sorter_entry {
    uint64_t key;
    uint64_t offset;
};

/* Entries [end of the previous segment, end) of the index: one host's records, sorted. */
struct zm_sorter_segment {
    size_t end;
    uint32_t host;
};

struct zm_sorter {
    char *arena; /* Owned by this: records (length + payload), back to back */
    size_t used, budget;
    struct zm_sorter_entry *entries; /* Owned by this: one per record in the arena */
    size_t count, capacity;
    struct zm_sorter_entry *scratch; /* Owned by this: the radix sort's other half */
    size_t scratch_capacity;
    struct zm_sorter_segment *segments; /* Owned by this: the sorted hosts still in the arena */
    size_t segment_count, segment_capacity;
    uint32_t host;              /* of the records not yet in a segment */
    char *write_buffer;         /* Owned by this: spilled runs are written through it */
    struct zm_sorter_run *runs; /* Owned by this: the spilled runs */
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
/* Ends the current host's records (call when the host changes): they are sorted and kept as one
 * segment. -1 when out of memory. */
ZM_MUST_CHECK int zm_sorter_flush(struct zm_sorter *sorter);
/* Merges every spilled run and every segment still in memory into `emit`, in axis order; equal
 * axis keys come out in the order they were added (each segment and run holds records added one
 * after another, and they are numbered in that order: ties between them go to the lower number).
 * Once only. */
ZM_MUST_CHECK int zm_sorter_merge(struct zm_sorter *sorter, zm_sorter_axis_fn axis,
                                  zm_sorter_emit_fn emit, void *context);

#endif
