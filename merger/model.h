/*
 * model: tolerant reconstruction of what happened, from events in time order per host
 * (docs/design.md "Tolerant reconstruction").
 *
 * - API calls come in two shapes (docs/tracepoints.md). Calls that can block have an entry and
 *   an exit, paired per (host, pid, tid) with a stack. An exit whose entry is not on the stack is
 *   an orphan (counted, dropped). An exit that matches a deeper entry closes the entries above it
 *   as synthetic (their exits were lost). Entries still open at the end of a host are closed at
 *   their thread's last event, flagged synthetic and counted. An exit before its entry (inverted)
 *   is clamped to zero duration and counted. Other calls are one event at their exit carrying
 *   their start: complete by themselves, never orphans nor synthetic (a start after the event's
 *   own time is clamped and counted as inverted); the stack is not touched.
 * - An append's device timing needs a time before the command could start (to choose among
 *   kernel-timestamp wraps): the enclosing call's entry or, for an append made by a one-event
 *   call (whose event comes after the append event), the thread's previous event.
 * - Device timings are linked to their append through (host, pid, call_id), spooled raw to a
 *   temporary file and converted at the end of the host, when every anchor of the device is known
 *   (interpolation needs the anchor after the interval too). Memory therefore grows with what is
 *   open (calls in flight, appends awaiting their timing, anchors), not with the trace.
 * - A regular list's appends are kept for its executions until zeCommandListDestroy or
 *   zeCommandListReset of that list returns (the shim drains the list inside those calls).
 * - Allocations (zeMemAlloc*, zeMemFree) are followed per process so that each copy or fill is
 *   given its direction when its append is read (memory.h, traffic.h, from the `transfer` event
 *   just before the append on its thread); its spans carry it.
 * - A kernel launch's shape (`kernel_shape`, recorded only when it changed) is carried forward
 *   per thread and kernel name (shapes.h); its spans carry it.
 * - Unknown events are counted; discarded events/packets reported by babeltrace2 are summed.
 * - Frame marks (zeprof_frame) are collected for placement (remote_index.h); a frame dispatched
 *   or served twice is a refusal: zm_model_event fails and zm_model_error says why.
 * - Device telemetry readings (zeprof_sample) become counter samples (span.h): utilization and
 *   power from two consecutive readings of one device by one process.
 * Completed spans (span.h) go to the sink the caller gives: the model knows no consumer.
 * The model owns its threads, devices, appends, spool, name pool and frame index; it borrows the
 * sink's context.
 */
#ifndef ZM_MODEL_H
#define ZM_MODEL_H

#include "clock.h"
#include "must_check.h"
#include "remote_index.h"
#include "span.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum zm_event_kind {
    ZM_EVENT_API_ENTRY,
    ZM_EVENT_API_EXIT,
    ZM_EVENT_API_CALL, /* a whole call in one event, at its exit: start_ns to ns */
    ZM_EVENT_API_DESC,
    ZM_EVENT_DEVICE_PROPERTIES,
    ZM_EVENT_CLOCK_SAMPLE_BEGIN,
    ZM_EVENT_CLOCK_SAMPLE_END,
    ZM_EVENT_APPEND,
    ZM_EVENT_DEVICE_TIMING,
    ZM_EVENT_TRANSFER,     /* a copy's or fill's pointers, before its append */
    ZM_EVENT_KERNEL_SHAPE, /* a launch's shape, before its append when it changed */
    ZM_EVENT_FRAME,
    ZM_EVENT_DEVICE_SAMPLE, /* zeprof_sample:device_sample: one Sysman reading of one device */
    ZM_EVENT_UNKNOWN,
};

/* One decoded event, as the reader (or a unit test) hands it to the model. Strings are borrowed
 * for the duration of the call; `function` must come from zm_model_intern. */
struct zm_event {
    enum zm_event_kind kind;
    int64_t ns; /* trace time: ns from the clock's origin */
    int64_t pid, tid;
    const char *function; /* API events: "zeInit" (interned) */
    uint32_t result;      /* API exit and call, clock_sample_end */
    int64_t start_ns;     /* API call: when the call began, on the same clock as ns */
    /* zeprof_device fields (docs/tracepoints.md), by the same names */
    uint64_t device, anchor, device_ticks, call_id, execution, queue, timer_hz;
    uint64_t list; /* append, device_timing; API entries with an hCommandList parameter */
    uint64_t global_start, global_end, bytes, groups;
    uint64_t dst, src; /* transfer: a copy's or fill's pointers */
    struct zm_kernel_shape shape; /* kernel_shape */
    /* zeMemAlloc* entry: its size; their exit: the pointer returned; zeMemFree entry: its ptr */
    uint64_t size, address;
    uint32_t sample, status, kernel_timestamp_valid_bits;
    const char *name, *uuid, *append_kind;
    /* zeprof_frame: the key and which mark */
    uint64_t session, sequence;
    uint32_t worker;
    enum zm_remote_mark frame_mark;
    /* zeprof_sample:device_sample (with device, name and uuid above) */
    uint32_t valid;
    uint64_t engine_active_us, engine_timestamp_us, energy_uj, energy_timestamp_us, memory_used;
    double frequency_mhz;
    /* zeCommandQueueCreate_desc, zeCommandListCreateImmediate_desc: the queue group ordinal and
     * index (queue_slot: the descriptor had them); their exit: the handle created */
    bool queue_slot;
    uint32_t queue_ordinal, queue_index;
    uint64_t created;
    /* device_properties: bit o set when queue group o can run kernels (compute_groups), when it
     * can copy (copy_groups); groups_known: the event had these fields */
    bool groups_known;
    uint32_t compute_groups, copy_groups;
};

struct zm_anomalies {
    uint64_t orphan_exits;
    uint64_t synthetic_closes;
    uint64_t inverted_intervals; /* API pairs and device intervals whose end preceded the start */
    uint64_t discarded_events;
    uint64_t discarded_packets;
    uint64_t unknown_events;
    uint64_t lost_timings;       /* device_timing with status 1 */
    uint64_t unmatched_timings;  /* device_timing whose append was not seen */
    uint64_t unanchored_timings; /* device without properties or anchors: not placed in time */
    uint64_t dropped_windows;    /* remote windows whose peer outlasted its caller */
    uint64_t incomplete_frames;  /* frames with the caller's or the peer's side missing */
};

struct zm_device {
    uint32_t host;
    int64_t pid;
    uint64_t handle;
    uint32_t label;   /* index of the distinct (host, uuid) device: for counts and -e */
    const char *name; /* Weak: interned */
    struct zm_clock clock;
    /* Its queue groups' kinds (device_properties): bit o of compute_groups set when group o runs
     * kernels, of copy_groups when it copies; groups_known false for a trace without them. */
    bool groups_known;
    uint32_t compute_groups, copy_groups;
};

struct zm_device_label {
    uint32_t host;
    const char *uuid; /* Weak: interned */
    const char *name; /* Weak: interned */
};

struct zm_host {
    const char *hostname; /* Weak: interned */
    const char *path;     /* Weak: argv */
    int64_t first_ns, last_ns;
    bool seen_event;
    bool spans_omitted; /* read from a partial reduced with --no-spans: no timeline of it */
};

/* Opaque: read and changed through the functions below only. */
struct zm_model;

/* A model with no host yet; `sink` is copied, its context borrowed until zm_model_free. NULL when
 * out of memory or without a temporary file for the spool. */
ZM_MUST_CHECK struct zm_model *zm_model_new(const struct zm_span_sink *sink, uint64_t rate_ppm);
/* Frees the model and everything it owns (NULL: nothing). */
void zm_model_free(struct zm_model *model);

/* Starts a host (one trace directory); returns its index or -1. */
ZM_MUST_CHECK int zm_model_begin_host(struct zm_model *model, const char *hostname,
                                      const char *path);
/* Feeds one event of the current host; -1 on out of memory or I/O error, or on a refusal
 * (zm_model_error says which). */
ZM_MUST_CHECK int zm_model_event(struct zm_model *model, const struct zm_event *event);
void zm_model_discarded(struct zm_model *model, uint64_t count, bool packets);
/* Closes what is left open and converts the host's device work; -1 on error. */
ZM_MUST_CHECK int zm_model_end_host(struct zm_model *model);

/* The model's copy of the first `length` bytes of `text` (an event's function name, for
 * zm_event.function), alive until zm_model_free; NULL when out of memory. */
ZM_MUST_CHECK const char *zm_model_intern(struct zm_model *model, const char *text, size_t length);
/* Why zm_model_event last failed when it was a refusal, or "" (memory or I/O). */
const char *zm_model_error(const struct zm_model *model);
/* Events from zeprof's providers so far: none means another tracer's trace. */
uint64_t zm_model_zeprof_events(const struct zm_model *model);
const struct zm_anomalies *zm_model_anomalies(const struct zm_model *model);
/* The anomalies that placement finds (placement.h), once every host is read. */
void zm_model_set_placement_anomalies(struct zm_model *model, uint64_t dropped_windows,
                                      uint64_t incomplete_frames);

/* Hosts, devices and labels, each numbered from 0 (spans and statistics rows carry the
 * numbers); the records are borrowed from the model and valid until its next change. */
uint32_t zm_model_host_count(const struct zm_model *model);
const struct zm_host *zm_model_host(const struct zm_model *model, uint32_t host);
size_t zm_model_device_count(const struct zm_model *model);
const struct zm_device *zm_model_device(const struct zm_model *model, size_t device);
size_t zm_model_device_label_count(const struct zm_model *model);
const struct zm_device_label *zm_model_device_label(const struct zm_model *model, uint32_t label);
/* Every frame mark read, for placement. */
const struct zm_remote_index *zm_model_frames(const struct zm_model *model);

/* The sink given to zm_model_new (a partial's reader gives its totals and spans to it). */
const struct zm_span_sink *zm_model_sink(const struct zm_model *model);

/* A host read from a partial (partial_read.h) instead of from events: what its events made of
 * the model, given back to the current host (between zm_model_begin_host and zm_model_end_host).
 * Each returns 0, or -1 when out of memory (zm_model_replay_frame: or a refusal, as
 * zm_model_event). */
struct zm_replayed_host {
    int64_t first_ns, last_ns;
    bool seen_event, spans_omitted;
    uint64_t zeprof_events, processes, threads;
    struct zm_anomalies anomalies; /* the host's own: added to the model's */
};
ZM_MUST_CHECK int zm_model_replay_host(struct zm_model *model, const struct zm_replayed_host *host);
/* A distinct device of the host (strings interned by the model); *label receives its number. */
ZM_MUST_CHECK int zm_model_replay_label(struct zm_model *model, const char *uuid, const char *name,
                                        uint32_t *label);
/* A device of one process, with its anchors (copied), on a label of the current host. */
ZM_MUST_CHECK int zm_model_replay_device(struct zm_model *model, int64_t pid, uint64_t handle,
                                         uint32_t label, const char *name,
                                         const struct zm_clock *clock);
ZM_MUST_CHECK int zm_model_replay_frame(struct zm_model *model, enum zm_remote_mark mark,
                                        const struct zm_remote_key *key, int64_t pid,
                                        int64_t time_ns);

/* Distinct processes and threads seen (for the tally's header). */
size_t zm_model_process_count(const struct zm_model *model);
size_t zm_model_thread_count(const struct zm_model *model);
/* Appends of the current host still awaiting a timing (what memory grows with). */
size_t zm_model_pending_appends(const struct zm_model *model);

#endif
