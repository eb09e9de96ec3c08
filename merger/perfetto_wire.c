/* perfetto_wire: hand encoding of the frequent Perfetto packets (perfetto_wire.h). */
#include "perfetto_wire.h"

#include <string.h>

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LENGTH = 2 };

static uint8_t *varint(uint8_t *at, uint64_t value)
{
    while (value >= 0x80) {
        *at++ = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    *at++ = (uint8_t)value;
    return at;
}

static uint8_t *tag(uint8_t *at, uint32_t field, uint32_t wire_type)
{
    return varint(at, (uint64_t)field << 3 | wire_type);
}

static uint8_t *varint_field(uint8_t *at, uint32_t field, uint64_t value)
{
    return varint(tag(at, field, WIRE_VARINT), value);
}

static uint8_t *fixed64_field(uint8_t *at, uint32_t field, uint64_t value)
{
    at = tag(at, field, WIRE_FIXED64);
    for (int i = 0; i < 8; i++)
        *at++ = (uint8_t)(value >> (8 * i));
    return at;
}

/* A length-delimited field holding the `length` bytes at `body`. */
static uint8_t *message_field(uint8_t *at, uint32_t field, const uint8_t *body, size_t length)
{
    at = varint(tag(at, field, WIRE_LENGTH), length);
    memmove(at, body, length);
    return at + length;
}

/* TrackEvent (track_event.proto), fields in number order. */
static size_t track_event(uint8_t *out, const struct zm_perfetto_wire_event *event)
{
    uint8_t *at = out;
    if (event->category_iid)
        at = varint_field(at, 3, event->category_iid);
    for (size_t i = 0; i < event->annotation_count; i++) {
        uint8_t body[32], *end = varint_field(body, 1, event->annotations[i].name_iid);
        static const uint32_t value_fields[] = {
            [ZM_WIRE_BOOL] = 2, [ZM_WIRE_UINT] = 3, [ZM_WIRE_INT] = 4};
        end = varint_field(end, value_fields[event->annotations[i].kind],
                           event->annotations[i].value);
        at = message_field(at, 4, body, (size_t)(end - body));
    }
    at = varint_field(at, 9, event->type);
    if (event->name_iid)
        at = varint_field(at, 10, event->name_iid);
    at = varint_field(at, 11, event->track_uuid);
    if (event->has_counter) {
        uint64_t bits;
        memcpy(&bits, &event->counter, sizeof(bits));
        at = fixed64_field(at, 44, bits);
    }
    if (event->flow_id)
        at = fixed64_field(at, 47, event->flow_id);
    if (event->terminating_flow_id)
        at = fixed64_field(at, 48, event->terminating_flow_id);
    return (size_t)(at - out);
}

size_t zm_perfetto_wire_event(uint8_t *out, const struct zm_perfetto_wire_event *event)
{
    uint8_t body[ZM_PERFETTO_WIRE_MAX - 8], packet[ZM_PERFETTO_WIRE_MAX - 4];
    size_t body_length = track_event(body, event);
    /* TracePacket (trace_packet.proto), fields in number order. */
    uint8_t *at = varint_field(packet, 8, event->timestamp);
    at = varint_field(at, 10, event->sequence_id);
    at = message_field(at, 11, body, body_length);
    if (event->sequence_flags)
        at = varint_field(at, 13, event->sequence_flags);
    /* Trace.packet (trace.proto). */
    return (size_t)(message_field(out, 1, packet, (size_t)(at - packet)) - out);
}
