/*
 * timeline_format: the seam between the timeline (timeline.c: lanes, sorting, placement, the
 * output file and its atomic publication) and the file formats that write it: Chrome Trace Event
 * JSON (timeline_json.c) and Perfetto's protobuf trace (perfetto.c).
 *
 * The timeline resolves everything format-neutral first (which lane a span goes to, sibling lanes
 * for overlapping device work, the axis time, the placement bound, lane names) and hands a format
 * lanes, slices and flow starts in time order; the format only encodes them. A format writes into
 * the stream it is given (borrowed) and owns its own state.
 */
#ifndef ZM_TIMELINE_FORMAT_H
#define ZM_TIMELINE_FORMAT_H

#include "must_check.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum zm_timeline_lane_kind {
    ZM_LANE_PROCESS, /* a traced process of a host: holds thread lanes */
    ZM_LANE_THREAD,  /* one thread's API calls */
    ZM_LANE_DEVICE,  /* a device of a host: holds engine lanes and queue lanes */
    ZM_LANE_ENGINE,  /* an engine of a device (queue group ordinal and index): holds queue lanes */
    ZM_LANE_QUEUE,   /* one (pid, queue) of a device, or a sibling of one ("#2"…) */
};

/* A lane. Numbers are unique across the file (all hosts, all kinds), from 1. */
struct zm_timeline_lane {
    enum zm_timeline_lane_kind kind;
    uint32_t number;
    uint32_t process; /* the number of the process or device lane holding it (itself for those) */
    uint32_t parent;  /* the lane directly above it: a queue's engine lane when it has one, else
                         `process` */
    uint32_t sort_index; /* queue lanes: 1 + their engine's rank on the device (lanes of one engine
                            share it), 0 without an engine; 0 for other lanes */
    const char *name;    /* Weak: what the lane is called ("[unplaced] " prefix included) */
    int64_t pid, tid;    /* the traced process (all but device lanes) and thread (thread lanes) */
};

/* One API call or one execution on a device, its lanes given by number. */
struct zm_timeline_slice {
    bool device;
    const char *name;     /* Weak: interned (equal names, same pointer) */
    const char *hostname; /* Weak */
    int64_t ts_ns;        /* from the origin (the earliest instant on the axis) */
    int64_t duration_ns;
    uint32_t process, lane;
    int64_t placement_bound_ns; /* > 0 for a host placed from frames: its error bound */
    int64_t pid;                /* the traced process */
    /* API calls */
    int64_t tid;
    uint32_t result;
    bool synthetic;
    /* Device work */
    const char *device_name; /* Weak */
    int64_t uncertainty_ns;
    uint64_t queue, call_id, execution;
    uint64_t flow; /* the flow that ends here (its start was given before), or 0 */
};

/* One value of a device counter (telemetry), on a counter track per (device lane, kind). */
struct zm_timeline_counter {
    int64_t ts_ns;
    uint32_t process; /* the device lane's number */
    unsigned kind;    /* enum zm_counter_kind (span.h), < ZM_COUNTER_KINDS */
    const char *name; /* Static: the track's name, unit included ("frequency MHz") */
    const char *unit; /* Static: "MHz" */
    double value;
};

struct zm_timeline_format {
    /* A writer into `out`, or NULL when out of memory. */
    void *(*new)(FILE *out);
    /* Names a lane; `ts_ns` is when it is first needed (0 for lanes known up front). */
    ZM_MUST_CHECK int (*lane)(void *writer, const struct zm_timeline_lane *lane, int64_t ts_ns);
    ZM_MUST_CHECK int (*slice)(void *writer, const struct zm_timeline_slice *slice);
    /* A flow (unique id) begins at an append, on the thread lane `lane` of process `process`. */
    ZM_MUST_CHECK int (*flow_start)(void *writer, int64_t ts_ns, uint64_t flow, uint32_t process,
                                    uint32_t lane);
    ZM_MUST_CHECK int (*counter)(void *writer, const struct zm_timeline_counter *counter);
    /* After the last record: writes the metadata (borrowed) and flushes everything into `out`.
     * -1 on an I/O error, here or at any earlier call. */
    ZM_MUST_CHECK int (*end)(void *writer, json_t *metadata);
    void (*free)(void *writer);
};

extern const struct zm_timeline_format zm_timeline_json_format; /* timeline_json.c */
extern const struct zm_timeline_format zm_perfetto_format;      /* perfetto.c */

#endif
