/*
 * stats: per-name aggregation of durations (count, total, min, max, errors).
 *
 * Rows are found through a hash table keyed by (interned name pointer, where), where "where" is 0
 * unless rows are split (-e): then (host, pid, tid) for API rows, (host, device) for device rows.
 * Names are borrowed from the caller's intern pool and compared by pointer. Owns its rows.
 */
#ifndef ZM_STATS_H
#define ZM_STATS_H

#include "map.h"
#include "must_check.h"
#include "span.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zm_stat_row {
    const char *name; /* Weak: interned */
    uint32_t host;    /* -e only */
    int64_t pid, tid; /* -e only, API rows */
    uint32_t device;  /* -e only, device rows: the model's device label index */
    uint64_t calls;
    int64_t total_ns, min_ns, max_ns;
    uint64_t errors; /* API rows: results that are Level Zero errors */
};

struct zm_stat_table {
    struct zm_stat_row *rows; /* Owned by this */
    size_t count, capacity;
    struct zm_map index; /* (name, where) -> row index */
};

struct zm_stats {
    bool extended;
    struct zm_stat_table api, device;
};

void zm_stats_init(struct zm_stats *stats, bool extended);
void zm_stats_release(struct zm_stats *stats);
/* A Level Zero result counts as an error when it is one of the ZE_RESULT_ERROR_* codes (not
 * ZE_RESULT_NOT_READY, which polling returns all the time). */
bool zm_stats_result_is_error(uint32_t result);
/* Counts one span (span.h) in its row; -1 when out of memory. Every device span counts, placed
 * in time or not (its duration is known either way). */
ZM_MUST_CHECK int zm_stats_add_api(struct zm_stats *stats, const struct zm_api_span *span);
ZM_MUST_CHECK int zm_stats_add_device(struct zm_stats *stats, const struct zm_device_span *span);
/* Adds sums made elsewhere (a partial's) to the row their spans would have reached; -1 when out
 * of memory. */
ZM_MUST_CHECK int zm_stats_add_api_totals(struct zm_stats *stats,
                                          const struct zm_api_totals *totals);
ZM_MUST_CHECK int zm_stats_add_device_totals(struct zm_stats *stats,
                                             const struct zm_device_totals *totals);
/* Sorts a table's rows by total time, descending (ties: by name, then where). Invalidates the
 * index, so call it once, when all rows are in. */
void zm_stats_sort(struct zm_stat_table *table);
int64_t zm_stats_total(const struct zm_stat_table *table);

#endif
