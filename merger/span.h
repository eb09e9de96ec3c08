/*
 * span: what the model completes (model.h) and the sink it hands each completed span to.
 *
 * The model reconstructs API calls and device work; it does not know who consumes them. Its
 * caller gives it a struct zm_span_sink (callbacks and their context): main.c wires one that feeds
 * the statistics (stats.h) and, when a timeline is written, the timeline (timeline.h); the unit
 * tests wire the statistics alone; with --reduce, main.c wires the partial writer (partial_write.h)
 * instead. A host read from a partial (partial_read.h) gives its totals, then its spans marked
 * `totalled`. Spans are borrowed for the duration of a callback; the names
 * in them are interned by the model and stay valid until the model is freed.
 * Device telemetry (zeprof --sample) reaches the sink as counter samples: one value of one kind
 * of one device at one host time, each kind in its own unit.
 */
#ifndef ZM_SPAN_H
#define ZM_SPAN_H

#include <stdbool.h>
#include <stdint.h>

/* One API call, from its start to its end on its host's trace clock (end >= start). */
struct zm_api_span {
    uint32_t host;
    int64_t pid, tid;
    const char *function; /* Weak: interned */
    int64_t start_ns, end_ns;
    uint32_t result;
    bool synthetic; /* its exit was lost: closed by the model (docs/merger.md) */
    bool totalled;  /* replayed from a partial: already in the totals given with it */
};

/* A kernel launch's shape (-k, kernels.h), as the shim's `kernel_shape` recorded it: the group
 * count, the kernel's group size, its SIMD width. A count or size of 0,0,0 is not known (an
 * indirect launch; a group size the program never set); simd 0: not reported. */
struct zm_kernel_shape {
    uint32_t count[3], size[3], simd;
    bool known; /* false: no shape recorded (not a kernel, or a trace without the events) */
};

/* What kind of engine a queue group drives, from the group's properties (the shim's
 * device_properties): compute (it can run kernels), copy (copies only), or not known. */
enum zm_engine_kind { ZM_ENGINE_UNKNOWN, ZM_ENGINE_COMPUTE, ZM_ENGINE_COPY };

/* The engine a queue submits to: the queue group ordinal and the index in the group it was created
 * with (zeCommandQueueCreate, zeCommandListCreateImmediate). known false: its creation was not
 * seen (a trace in mode minimal, or a queue created before tracing began). */
struct zm_engine {
    bool known;
    uint32_t ordinal, index;
    enum zm_engine_kind kind;
};

/* One execution of an appended command on a device. */
struct zm_device_span {
    uint32_t host;
    int64_t pid;
    uint32_t device_label;   /* the model's index of the distinct (host, uuid) device */
    const char *device_name; /* Weak: interned */
    uint64_t queue;
    struct zm_engine engine; /* the queue's engine */
    const char *name;        /* Weak: interned */
    bool anchored;           /* the device's clock has anchors: start_ns and end_ns are known */
    int64_t start_ns, end_ns, uncertainty_ns; /* host trace time, when anchored */
    int64_t duration_ns; /* always: end - start, or the ticks at the nominal rate unanchored */
    uint64_t call_id, execution;
    bool linked; /* the append was seen: api_tid and append_ns say where */
    int64_t api_tid, append_ns;
    uint64_t bytes;     /* a copy's or fill's size (0 otherwise) */
    uint32_t direction; /* enum zm_traffic_direction (traffic.h): NONE unless a copy or fill */
    struct zm_kernel_shape shape; /* kernels: the launch's shape */
    bool totalled;                /* replayed from a partial: already in the totals given with it */
};

/* Spans already summed (a partial, partial.h): one row of the tally at its finest split, the
 * host's API calls of one function on one thread, or its device work of one name on one device
 * with one traffic direction and one launch shape. Merging these is exact: counts, totals, bytes
 * and errors add, min and max take the extremes. */
struct zm_api_totals {
    uint32_t host;
    int64_t pid, tid;
    const char *function; /* Weak: interned */
    uint64_t calls, errors;
    int64_t total_ns, min_ns, max_ns;
};

struct zm_device_totals {
    uint32_t host;
    uint32_t device_label;
    const char *name;             /* Weak: interned, as recorded (not demangled) */
    uint32_t direction;           /* as the spans' */
    struct zm_kernel_shape shape; /* as the spans' */
    uint64_t calls, bytes;
    int64_t total_ns, min_ns, max_ns;
};

/* What a counter sample measures, and its unit. */
enum zm_counter_kind {
    ZM_COUNTER_UTILIZATION, /* percent (0..100) of the interval since the previous sample that
                               the device's engines were busy */
    ZM_COUNTER_FREQUENCY,   /* MHz, the actual frequency when sampled */
    ZM_COUNTER_POWER,       /* W, mean over the interval since the previous sample */
    ZM_COUNTER_MEMORY,      /* MiB of device memory in use when sampled */
};
#define ZM_COUNTER_KINDS 4

/* One value of a device counter. A value that covers an interval (utilization, power) is given
 * at the end of that interval; the first sample of a device gives only the instant kinds. */
struct zm_counter_sample {
    uint32_t host;
    int64_t pid;             /* the sampling process */
    uint32_t device_label;   /* the model's index of the distinct (host, uuid) device, as spans */
    const char *device_name; /* Weak: interned */
    enum zm_counter_kind kind;
    int64_t time_ns;     /* host trace time */
    int64_t interval_ns; /* utilization, power: the interval ending at time_ns; else 0 */
    double value;        /* in the kind's unit */
    bool totalled;       /* replayed from a partial: already in the telemetry rows given with it */
};

/* One device's telemetry summary (telemetry.h) of one host, from a partial. */
struct zm_telemetry_row;

/* Where the model's spans go. Each callback returns 0, or -1 to fail the model's call that gave
 * the span; any may be NULL (nothing to do). */
struct zm_span_sink {
    /* A host begins (hosts are numbered from 0 in reading order); before any of its spans. */
    int (*begin_host)(void *context, uint32_t host, const char *hostname);
    int (*api_span)(void *context, const struct zm_api_span *span);
    int (*device_span)(void *context, const struct zm_device_span *span);
    /* The current host's last span has been given. */
    int (*end_host)(void *context);
    /* A device counter sample, in time order per (host, device, kind). */
    int (*counter)(void *context, const struct zm_counter_sample *sample);
    void *context; /* Weak: passed to every callback */
    /* Totals of a host read from a partial (the model itself never gives these): its spans, if
     * replayed at all, then come with `totalled` set and must not be counted again. */
    int (*api_totals)(void *context, const struct zm_api_totals *totals);
    int (*device_totals)(void *context, const struct zm_device_totals *totals);
    int (*telemetry_totals)(void *context, const struct zm_telemetry_row *row);
};

#endif
