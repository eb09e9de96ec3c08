/*
 * timeline: the timeline of docs/interface.md "The timeline", written as it goes, in Chrome Trace
 * Event JSON (timeline_json.c) or Perfetto's protobuf format (perfetto.c): timeline_format.h is
 * the seam between what is decided here and how a format encodes it.
 *
 * Spans arrive in completion order, host after host; they are encoded into small records and
 * passed through the external sorter (sorter.h), so memory stays bounded and the file comes out
 * sorted by ts. The file is written as an unnamed file (O_TMPFILE) beside the target (symlinks
 * followed) and linked and renamed into place only when complete, so a failed, crashed or killed
 * run leaves nothing; a FIFO or device target gets the finished file copied into it instead.
 *
 * Lanes (numbers unique across hosts: Chrome pid/tid, Perfetto track uuids): one process lane
 * per (host, pid) with one thread lane per thread; one device lane per (host, device) with one
 * engine lane per queue group slot that spans name (ordinal, index) and one queue lane per
 * (pid, queue), under its engine's lane when it has one; work that overlaps on a queue lane goes
 * to sibling lanes ("queue 0x… #2"), chosen greedily in start order, so no lane has overlapping
 * slices. A flow links each append to each of its executions.
 * The timeline owns its lanes, sorter and output file; it borrows interned names.
 */
#ifndef ZM_TIMELINE_H
#define ZM_TIMELINE_H

#include "must_check.h"
#include "span.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct zm_timeline;

/* Host-local trace time to the common axis (monotonic per host), the error bound of an instant
 * given by its axis time, and whether the host was placed. */
struct zm_timeline_placement {
    int64_t (*axis_ns)(void *context, uint32_t host, int64_t host_ns, int64_t *bound_ns);
    int64_t (*bound_ns)(void *context, uint32_t host, int64_t axis_ns);
    bool (*placed)(void *context, uint32_t host);
    void *context;
};

enum zm_timeline_kind {
    ZM_TIMELINE_BY_NAME,  /* Perfetto when the path ends in ".pftrace", else JSON */
    ZM_TIMELINE_JSON,     /* Chrome Trace Event JSON */
    ZM_TIMELINE_PERFETTO, /* Perfetto's protobuf trace */
};

/* Creates the temporary file for `path` now, so an unwritable path fails before any work.
 * On failure returns NULL and writes "Failed to …" into `reason`. */
ZM_MUST_CHECK struct zm_timeline *zm_timeline_open(const char *path, enum zm_timeline_kind kind,
                                                   char *reason, int reason_size);
/* The model's spans (span.h), host after host; the names they carry must stay valid until
 * zm_timeline_finish. Device work that is not anchored cannot be placed in time: it is left out
 * (the statistics count it). Each returns -1 on out of memory or I/O error. */
ZM_MUST_CHECK int zm_timeline_begin_host(struct zm_timeline *timeline, uint32_t host,
                                         const char *hostname);
ZM_MUST_CHECK int zm_timeline_api_span(struct zm_timeline *timeline,
                                       const struct zm_api_span *span);
ZM_MUST_CHECK int zm_timeline_device_span(struct zm_timeline *timeline,
                                          const struct zm_device_span *span);
/* A device counter sample: a "C" event on the device's lane (docs/interface.md). */
ZM_MUST_CHECK int zm_timeline_counter(struct zm_timeline *timeline,
                                      const struct zm_counter_sample *sample);
ZM_MUST_CHECK int zm_timeline_end_host(struct zm_timeline *timeline);
/* Writes everything, adds origin_ns to `metadata` (borrowed), renames into place and frees. */
ZM_MUST_CHECK int zm_timeline_finish(struct zm_timeline *timeline,
                                     const struct zm_timeline_placement *placement,
                                     json_t *metadata, char *reason, int reason_size);
/* Removes the temporary file and frees. */
void zm_timeline_abort(struct zm_timeline *timeline);

#endif
