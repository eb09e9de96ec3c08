/*
 * perfetto_wire: the protobuf encoding of the packets a Perfetto timeline holds millions of
 * (slice begins whose name is already interned, slice ends, flow instants, counter values), done
 * by hand in a fixed field layout because protobuf-c's descriptor-driven packing (a size pass and
 * a pack pass over every field of every nested message) cost twice the JSON writer's time.
 * Everything else in the file (track descriptors, interned data, the metadata) is packed by
 * protobuf-c (perfetto.c). The bytes are exactly protobuf-c's for the same message (fields in
 * number order, non-packed repeated fields): tests/merger/test-perfetto.c repacks every packet
 * of a file with protobuf-c and compares. Field numbers are perfetto_trace.proto's.
 */
#ifndef ZM_PERFETTO_WIRE_H
#define ZM_PERFETTO_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZM_PERFETTO_WIRE_MAX 256 /* bytes: the longest packet zm_perfetto_wire_event writes */
#define ZM_PERFETTO_WIRE_ANNOTATIONS 4

enum zm_perfetto_wire_value { ZM_WIRE_UINT, ZM_WIRE_INT, ZM_WIRE_BOOL };

/* One TracePacket holding one TrackEvent; a zero field (iids, flows, flags) is left out. */
struct zm_perfetto_wire_event {
    uint64_t timestamp;
    uint32_t sequence_id, sequence_flags;
    uint32_t type; /* TrackEvent.Type */
    uint64_t track_uuid, category_iid, name_iid;
    struct {
        uint64_t name_iid;
        enum zm_perfetto_wire_value kind;
        uint64_t value; /* an int64 as its two's complement, a bool as 0 or 1 */
    } annotations[ZM_PERFETTO_WIRE_ANNOTATIONS];
    size_t annotation_count;
    bool has_counter;
    double counter; /* double_counter_value, when has_counter */
    uint64_t flow_id, terminating_flow_id;
};

/* Writes the packet as one `packet` field (1) of Trace into `out` (ZM_PERFETTO_WIRE_MAX bytes
 * at least) and returns the number of bytes written. */
size_t zm_perfetto_wire_event(uint8_t *out, const struct zm_perfetto_wire_event *event);

#endif
