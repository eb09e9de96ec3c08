/*
 * perfetto: the timeline as Perfetto's protobuf trace (-l FILE.pftrace), the second format behind
 * timeline_format.h (zm_perfetto_format). The file is a stream of TracePacket messages, each a
 * length-delimited field 1 of `Trace`, encoded with protobuf-c from the schema subset
 * perfetto_trace.proto and written out as they are made, so memory does not grow with the trace.
 *
 * Tracks: a process track per (host, pid) and a thread track per thread (ProcessDescriptor and
 * ThreadDescriptor whose pid and tid are the lane numbers, unique across hosts; the names carry
 * the host and the real pid and tid), a custom track per device with a child track per queue (and
 * per sibling). Slices are TYPE_SLICE_BEGIN/TYPE_SLICE_END pairs; names, categories and argument
 * names are interned on one packet sequence. Each flow starts at an "append" instant on the API
 * thread and ends at the device slice (flow_ids, terminating_flow_ids). The metadata (placement of
 * every host, remote windows, devices, anomalies, origin_ns) is one "metadata" instant on a
 * "zeprof" track, its JSON turned into nested debug annotations (docs/merger.md).
 *
 * Device telemetry: a counter track (CounterDescriptor with its unit) per device and kind, under
 * the device's track, with a TYPE_COUNTER event per sample; the two functions below write any
 * counter track on a writer made by zm_perfetto_format.new.
 */
#ifndef ZM_PERFETTO_H
#define ZM_PERFETTO_H

#include "must_check.h"
#include "timeline_format.h"

#include <stdint.h>

/* The uuid of the "zeprof" track that holds the metadata: above every lane number. */
#define ZM_PERFETTO_METADATA_TRACK (UINT64_C(1) << 40)
/* Device counter tracks (telemetry): this + device lane number * 8 + kind. */
#define ZM_PERFETTO_COUNTER_TRACKS (UINT64_C(1) << 41)

/* Describes a counter track `uuid` (not a lane number), under the track `parent` (0: none),
 * named `name` (Weak), its values in `unit` (Weak, e.g. "MHz"; NULL: none). */
ZM_MUST_CHECK int zm_perfetto_counter_track(void *writer, uint64_t uuid, uint64_t parent,
                                            const char *name, const char *unit);
/* One value of counter track `uuid` at `ts_ns` (from the origin). */
ZM_MUST_CHECK int zm_perfetto_counter(void *writer, uint64_t uuid, int64_t ts_ns, double value);

#endif
