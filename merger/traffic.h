/*
 * traffic: explicit memory traffic (docs/interface.md "Memory traffic"): the bytes that copies and
 * fills moved, per direction, and their device time, so GB/s = bytes / device time.
 * The direction of an append is decided when it is read (zm_traffic_direction, from the kinds of
 * memory its pointers are in: memory.h), carried by its device spans (span.h), and each execution
 * adds its bytes and duration here. Owns nothing but its counters.
 */
#ifndef ZM_TRAFFIC_H
#define ZM_TRAFFIC_H

#include "memory.h"
#include "must_check.h"
#include "span.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

enum zm_traffic_direction {
    ZM_TRAFFIC_NONE, /* not a copy or fill, or its pointers were not recorded */
    ZM_TRAFFIC_HOST_TO_DEVICE,
    ZM_TRAFFIC_DEVICE_TO_HOST,
    ZM_TRAFFIC_DEVICE_TO_DEVICE,
    ZM_TRAFFIC_HOST_TO_HOST,
    ZM_TRAFFIC_SHARED, /* a copy with shared memory on either side */
    ZM_TRAFFIC_FILL_HOST,
    ZM_TRAFFIC_FILL_DEVICE,
    ZM_TRAFFIC_FILL_SHARED,
    ZM_TRAFFIC_DIRECTIONS,
};

struct zm_traffic_row {
    uint64_t bytes, executions;
    int64_t device_ns;
};

struct zm_traffic {
    struct zm_traffic_row rows[ZM_TRAFFIC_DIRECTIONS];
};

/* The direction of an append of `append_kind` ("copy", "copy_region", "fill") whose pointers are
 * in memory of kinds `dst` and `src` (a fill's source is its pattern: not read). */
enum zm_traffic_direction zm_traffic_direction(const char *append_kind, enum zm_memory_kind dst,
                                               enum zm_memory_kind src);
/* "host to device", ... */
const char *zm_traffic_direction_name(enum zm_traffic_direction direction);

void zm_traffic_init(struct zm_traffic *traffic);
/* Counts one execution of device work (nothing when it is not traffic). */
void zm_traffic_add(struct zm_traffic *traffic, const struct zm_device_span *span);
/* The "Memory traffic" section of the text tally (nothing when there was none). */
void zm_traffic_print_text(FILE *out, const struct zm_traffic *traffic);
/* The tally's "memory_traffic" array: one object per direction seen. New reference or NULL. */
ZM_MUST_CHECK json_t *zm_traffic_json(const struct zm_traffic *traffic);

#endif
