/*
 * decode: babeltrace2 events into the model's zm_event (model.h).
 *
 * What an event class means is learned once, the first time one of its events comes: its kind
 * (from the "provider:event" name, docs/tracepoints.md), the API function it belongs to, and a
 * plan of the payload members the model reads for that kind: member index, type, and where in
 * zm_event the value goes. Each event then costs one step per member its class has, whatever
 * the kind; members a class lacks, or whose type is not the one the model reads, stay zero
 * (NULL for strings). vpid/vtid come from the stream's common event context.
 *
 * Owns its class table; borrows the model (function names are interned there) and the event
 * classes (the graph's, alive while its events are read).
 */
#ifndef ZM_DECODE_H
#define ZM_DECODE_H

#include "map.h"
#include "model.h"
#include "must_check.h"

#include <babeltrace2/babeltrace.h>
#include <stdbool.h>
#include <stdint.h>

struct zm_decode_class;

struct zm_decoder {
    struct zm_model *model;    /* Weak */
    struct zm_map class_index; /* event class pointer -> index into classes */
    /* The classes of recent events by pointer bits, each with its index into classes: a
     * program's few hot classes alternate, and the map's lookup per event cost 0.3%. */
    struct {
        const bt_event_class *event_class;
        size_t index;
    } recent[16];
    struct zm_decode_class *classes; /* Owned by this */
    size_t class_count, class_capacity;
};

/* What an event's class says before its fields are read. */
struct zm_decode_info {
    enum zm_event_kind kind;
    const char *invalid; /* why events of this class cannot be read, or NULL (static text) */
    bool process_name;   /* zeprof_device:process: the process name, shown by -t only */
};

/* No allocation. */
void zm_decode_init(struct zm_decoder *decoder, struct zm_model *model);
/* Frees the class table; the decoder is then empty and reusable. */
void zm_decode_release(struct zm_decoder *decoder);

/* The class of `event`, learned on first sight; NULL when out of memory. Valid until the next
 * call. */
ZM_MUST_CHECK const struct zm_decode_class *zm_decode_class_of(struct zm_decoder *decoder,
                                                               const bt_event *event);
const struct zm_decode_info *zm_decode_info(const struct zm_decode_class *class);
/* Fills `out` from `event` of `class` (whose info says it is readable), stamped `ns` (ns from
 * origin of `snapshot`, the event's default clock snapshot): kind, function, the payload
 * members of its plan, pid and tid, and for a one-event call its start. */
void zm_decode_event(const struct zm_decode_class *class, const bt_event *event,
                     const bt_clock_snapshot *snapshot, int64_t ns, struct zm_event *out);

#endif
