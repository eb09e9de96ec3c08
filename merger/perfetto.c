/* perfetto: the timeline as a Perfetto protobuf trace, packet by packet (perfetto.h). */
#include "perfetto.h"

#include "grow.h"
#include "map.h"
#include "perfetto_wire.h"
#include "utf8.h"

#include "perfetto_trace.pb-c.h"

#include <stdlib.h>
#include <string.h>

#define FLUSH_AT (1u << 20) /* bytes of packets kept before they go to the stream */
#define SEQUENCE_ID 1       /* every packet is on one sequence: the interned names are shared */

/* Interned ids of the fixed strings, given in the sequence's first packet. */
enum { CATEGORY_API = 1, CATEGORY_DEVICE, CATEGORY_APPEND };
enum { EVENT_NAME_APPEND = 1, FIRST_EVENT_NAME };
enum {
    ARG_RESULT = 1,
    ARG_SYNTHETIC,
    ARG_PLACEMENT_BOUND,
    ARG_UNCERTAINTY,
    ARG_CALL_ID,
    ARG_EXECUTION,
};
static const char *const argument_names[] = {
    [ARG_RESULT] = "result",
    [ARG_SYNTHETIC] = "synthetic",
    [ARG_PLACEMENT_BOUND] = "placement_bound_ns",
    [ARG_UNCERTAINTY] = "uncertainty_ns",
    [ARG_CALL_ID] = "call_id",
    [ARG_EXECUTION] = "execution",
};
static const char *const category_names[] = {
    [CATEGORY_API] = "api",
    [CATEGORY_DEVICE] = "device",
    [CATEGORY_APPEND] = "append",
};
#define ARGUMENT_COUNT (sizeof(argument_names) / sizeof(argument_names[0]) - 1)
#define CATEGORY_COUNT (sizeof(category_names) / sizeof(category_names[0]) - 1)

struct perfetto_writer {
    FILE *out;     /* Weak */
    uint8_t *data; /* Owned by this: encoded packets not yet written */
    size_t length, capacity;
    bool failed;                  /* sticky: an allocation or a write failed */
    struct zm_map names;          /* interned name pointer → event name iid */
    struct zm_map counter_tracks; /* (device lane, kind) → 1 once its track is described */
    uint64_t next_name_iid;
    char *clean; /* Owned by this: the last name made valid UTF-8 */
    size_t clean_capacity;
    /* Slices that start at the same instant, held until a later instant (below); Owned */
    struct zm_timeline_slice *group;
    size_t group_count, group_capacity;
};

static bool reserve(struct perfetto_writer *writer, size_t more)
{
    if (ZM_GROW(writer->data, writer->capacity, writer->length + more, FLUSH_AT + 4096) != 0) {
        writer->failed = true;
        return false;
    }
    return true;
}

static int flush(struct perfetto_writer *writer)
{
    if (writer->length > 0 && !writer->failed &&
        fwrite(writer->data, 1, writer->length, writer->out) != writer->length)
        writer->failed = true;
    writer->length = 0;
    return writer->failed ? -1 : 0;
}

/* Appends `packet` as one `packet` field (1, length-delimited) of Trace. */
static int write_packet(struct perfetto_writer *writer, const Perfetto__Protos__TracePacket *packet)
{
    size_t size = perfetto__protos__trace_packet__get_packed_size(packet);
    if (!reserve(writer, size + 11))
        return -1;
    uint8_t *at = writer->data + writer->length;
    *at++ = (1 << 3) | 2; /* field 1, wire type 2 (length-delimited) */
    for (uint64_t rest = size;; rest >>= 7) {
        if (rest < 0x80) {
            *at++ = (uint8_t)rest;
            break;
        }
        *at++ = (uint8_t)(rest | 0x80);
    }
    at += perfetto__protos__trace_packet__pack(packet, at);
    writer->length = (size_t)(at - writer->data);
    if (writer->length >= FLUSH_AT)
        return flush(writer);
    return writer->failed ? -1 : 0;
}

/* A packet on the sequence, at `ts_ns` (negative: none). */
static void packet_init(Perfetto__Protos__TracePacket *packet, int64_t ts_ns)
{
    perfetto__protos__trace_packet__init(packet);
    packet->has_trusted_packet_sequence_id = true;
    packet->trusted_packet_sequence_id = SEQUENCE_ID;
    if (ts_ns >= 0) {
        packet->has_timestamp = true;
        packet->timestamp = (uint64_t)ts_ns;
    }
}

/* `text` as valid UTF-8 (invalid sequences become U+FFFD): `text` itself when it is, else a copy
 * valid until the next call; NULL when out of memory. */
static const char *clean_text(struct perfetto_writer *writer, const char *text)
{
    const unsigned char *bytes = (const unsigned char *)text;
    size_t length = strlen(text), valid = 0;
    while (valid < length && bytes[valid] < 0x80)
        valid++;
    size_t n;
    while (valid < length && (n = zm_utf8_sequence(bytes + valid)) > 0)
        valid += n;
    if (valid == length)
        return text;
    if (ZM_GROW(writer->clean, writer->clean_capacity, length * 3 + 1, 256) != 0)
        return NULL;
    char *to = writer->clean;
    for (size_t i = 0; i < length;) {
        n = zm_utf8_sequence(bytes + i);
        if (n == 0) {
            memcpy(to, "\xef\xbf\xbd", 3);
            to += 3;
            i++;
        } else {
            memcpy(to, text + i, n);
            to += n;
            i += n;
        }
    }
    *to = '\0';
    return writer->clean;
}

/* The sequence's first packet: it clears the incremental state and interns the fixed strings. */
static int write_first_packet(struct perfetto_writer *writer)
{
    Perfetto__Protos__EventCategory categories[CATEGORY_COUNT];
    Perfetto__Protos__EventCategory *category_list[CATEGORY_COUNT];
    for (size_t i = 0; i < CATEGORY_COUNT; i++) {
        perfetto__protos__event_category__init(&categories[i]);
        categories[i].has_iid = true;
        categories[i].iid = i + 1;
        categories[i].name = (char *)category_names[i + 1];
        category_list[i] = &categories[i];
    }
    Perfetto__Protos__DebugAnnotationName arguments[ARGUMENT_COUNT];
    Perfetto__Protos__DebugAnnotationName *argument_list[ARGUMENT_COUNT];
    for (size_t i = 0; i < ARGUMENT_COUNT; i++) {
        perfetto__protos__debug_annotation_name__init(&arguments[i]);
        arguments[i].has_iid = true;
        arguments[i].iid = i + 1;
        arguments[i].name = (char *)argument_names[i + 1];
        argument_list[i] = &arguments[i];
    }
    Perfetto__Protos__EventName append = PERFETTO__PROTOS__EVENT_NAME__INIT;
    Perfetto__Protos__EventName *name_list[] = {&append};
    append.has_iid = true;
    append.iid = EVENT_NAME_APPEND;
    append.name = "append";
    Perfetto__Protos__InternedData interned = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    interned.n_event_categories = CATEGORY_COUNT;
    interned.event_categories = category_list;
    interned.n_debug_annotation_names = ARGUMENT_COUNT;
    interned.debug_annotation_names = argument_list;
    interned.n_event_names = 1;
    interned.event_names = name_list;
    Perfetto__Protos__TracePacket packet;
    packet_init(&packet, 0);
    packet.has_first_packet_on_sequence = true;
    packet.first_packet_on_sequence = true;
    packet.has_sequence_flags = true;
    packet.sequence_flags =
        PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
    packet.interned_data = &interned;
    return write_packet(writer, &packet);
}

static void *perfetto_new(FILE *out)
{
    struct perfetto_writer *writer = calloc(1, sizeof(*writer));
    if (!writer)
        return NULL;
    writer->out = out;
    writer->next_name_iid = FIRST_EVENT_NAME;
    zm_map_init(&writer->names);
    zm_map_init(&writer->counter_tracks);
    /* An error here is sticky and reported by the first write or by end. */
    (void)write_first_packet(writer);
    return writer;
}

static void perfetto_free(void *context)
{
    struct perfetto_writer *writer = context;
    if (!writer)
        return;
    zm_map_release(&writer->names);
    zm_map_release(&writer->counter_tracks);
    free(writer->group);
    free(writer->data);
    free(writer->clean);
    free(writer);
}

static int perfetto_lane(void *context, const struct zm_timeline_lane *lane, int64_t ts_ns)
{
    struct perfetto_writer *writer = context;
    const char *name = clean_text(writer, lane->name);
    if (!name)
        return -1;
    Perfetto__Protos__TrackDescriptor track = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    Perfetto__Protos__ProcessDescriptor process = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
    Perfetto__Protos__ThreadDescriptor thread = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
    track.has_uuid = true;
    track.uuid = lane->number;
    switch (lane->kind) {
    case ZM_LANE_PROCESS:
        process.has_pid = true;
        process.pid = (int32_t)lane->number;
        process.process_name = (char *)name;
        track.process = &process;
        break;
    case ZM_LANE_THREAD:
        thread.has_pid = true;
        thread.pid = (int32_t)lane->process;
        thread.has_tid = true;
        thread.tid = lane->number;
        thread.thread_name = (char *)name;
        track.thread = &thread;
        break;
    case ZM_LANE_ENGINE: /* device → engine → queue */
    case ZM_LANE_QUEUE:
        track.has_parent_uuid = true;
        track.parent_uuid = lane->parent;
        /* fall through */
    case ZM_LANE_DEVICE:
        track.name = (char *)name;
        /* Two devices (or queues) may have the same name: never shown as one. */
        track.has_sibling_merge_behavior = true;
        track.sibling_merge_behavior =
            PERFETTO__PROTOS__TRACK_DESCRIPTOR__SIBLING_MERGE_BEHAVIOR__SIBLING_MERGE_BEHAVIOR_NONE;
        break;
    }
    Perfetto__Protos__TracePacket packet;
    packet_init(&packet, ts_ns);
    packet.track_descriptor = &track;
    return write_packet(writer, &packet);
}

/* Appends a frequent packet, encoded by hand (perfetto_wire.h). */
static int write_wire(struct perfetto_writer *writer, const struct zm_perfetto_wire_event *event)
{
    if (!reserve(writer, ZM_PERFETTO_WIRE_MAX))
        return -1;
    writer->length += zm_perfetto_wire_event(writer->data + writer->length, event);
    if (writer->length >= FLUSH_AT)
        return flush(writer);
    return writer->failed ? -1 : 0;
}

/* The begin of a slice whose name is new: the same event, with the name interned in the same
 * packet, packed by protobuf-c. */
static int write_interning_begin(struct perfetto_writer *writer,
                                 const struct zm_perfetto_wire_event *begin, const char *name)
{
    Perfetto__Protos__EventName new_name = PERFETTO__PROTOS__EVENT_NAME__INIT;
    Perfetto__Protos__EventName *new_names[] = {&new_name};
    new_name.has_iid = true;
    new_name.iid = begin->name_iid;
    new_name.name = (char *)name;
    Perfetto__Protos__InternedData interned = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    interned.n_event_names = 1;
    interned.event_names = new_names;
    Perfetto__Protos__DebugAnnotation arguments[ZM_PERFETTO_WIRE_ANNOTATIONS];
    Perfetto__Protos__DebugAnnotation *argument_list[ZM_PERFETTO_WIRE_ANNOTATIONS];
    for (size_t i = 0; i < begin->annotation_count; i++) {
        Perfetto__Protos__DebugAnnotation *argument = &arguments[i];
        perfetto__protos__debug_annotation__init(argument);
        argument->has_name_iid = true;
        argument->name_iid = begin->annotations[i].name_iid;
        uint64_t value = begin->annotations[i].value;
        switch (begin->annotations[i].kind) {
        case ZM_WIRE_UINT:
            argument->has_uint_value = true;
            argument->uint_value = value;
            break;
        case ZM_WIRE_INT:
            argument->has_int_value = true;
            argument->int_value = (int64_t)value;
            break;
        case ZM_WIRE_BOOL:
            argument->has_bool_value = true;
            argument->bool_value = value != 0;
            break;
        }
        argument_list[i] = argument;
    }
    uint64_t category = begin->category_iid, flow = begin->terminating_flow_id;
    Perfetto__Protos__TrackEvent event = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    event.has_type = true;
    event.type = (Perfetto__Protos__TrackEvent__Type)begin->type;
    event.has_track_uuid = true;
    event.track_uuid = begin->track_uuid;
    event.n_category_iids = 1;
    event.category_iids = &category;
    event.has_name_iid = true;
    event.name_iid = begin->name_iid;
    event.n_debug_annotations = begin->annotation_count;
    event.debug_annotations = argument_list;
    if (flow) {
        event.n_terminating_flow_ids = 1;
        event.terminating_flow_ids = &flow;
    }
    Perfetto__Protos__TracePacket packet;
    packet_init(&packet, (int64_t)begin->timestamp);
    packet.has_sequence_flags = true;
    packet.sequence_flags = begin->sequence_flags;
    packet.track_event = &event;
    packet.interned_data = &interned;
    return write_packet(writer, &packet);
}

static void annotate(struct zm_perfetto_wire_event *event, uint64_t name_iid,
                     enum zm_perfetto_wire_value kind, uint64_t value)
{
    event->annotations[event->annotation_count].name_iid = name_iid;
    event->annotations[event->annotation_count].kind = kind;
    event->annotations[event->annotation_count++].value = value;
}

/* A slice: its begin (the name interned in it the first time) and, right after, its end. The
 * arguments that are 0 nearly always (an API call's result, an execution number) are left out
 * when 0, a third of an API slice's size. */
static int write_slice(struct perfetto_writer *writer, const struct zm_timeline_slice *slice)
{
    struct zm_perfetto_wire_event begin = {
        .timestamp = (uint64_t)slice->ts_ns,
        .sequence_id = SEQUENCE_ID,
        .sequence_flags =
            PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE,
        .type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN,
        .track_uuid = slice->lane,
        .category_iid = slice->device ? CATEGORY_DEVICE : CATEGORY_API,
        .terminating_flow_id = slice->flow,
    };
    if (slice->device) {
        annotate(&begin, ARG_UNCERTAINTY, ZM_WIRE_INT, (uint64_t)slice->uncertainty_ns);
        annotate(&begin, ARG_CALL_ID, ZM_WIRE_UINT, slice->call_id);
        if (slice->execution)
            annotate(&begin, ARG_EXECUTION, ZM_WIRE_UINT, slice->execution);
    } else {
        if (slice->result)
            annotate(&begin, ARG_RESULT, ZM_WIRE_UINT, slice->result);
        if (slice->synthetic)
            annotate(&begin, ARG_SYNTHETIC, ZM_WIRE_BOOL, 1);
    }
    if (slice->placement_bound_ns > 0)
        annotate(&begin, ARG_PLACEMENT_BOUND, ZM_WIRE_INT, (uint64_t)slice->placement_bound_ns);
    uint64_t *found = zm_map_find(&writer->names, (uint64_t)(uintptr_t)slice->name, 0);
    int status;
    if (found) {
        begin.name_iid = *found;
        status = write_wire(writer, &begin);
    } else {
        begin.name_iid = writer->next_name_iid++;
        const char *name = clean_text(writer, slice->name);
        if (!name ||
            zm_map_put(&writer->names, (uint64_t)(uintptr_t)slice->name, 0, begin.name_iid) != 0)
            return -1;
        status = write_interning_begin(writer, &begin, name);
    }
    if (status != 0)
        return -1;
    /* The end, right after: the reader orders packets by time (write_group says why this
     * nests). */
    struct zm_perfetto_wire_event end = {
        .timestamp = (uint64_t)(slice->ts_ns + slice->duration_ns),
        .sequence_id = SEQUENCE_ID,
        .type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END,
        .track_uuid = slice->lane,
    };
    return write_wire(writer, &end);
}

/* Writes the held slices, longest first. A slice's end packet follows its begin at once, and the
 * reader orders packets by time, keeping the file's order between equal times: a call and a call
 * nested in it that start at the same instant (the inner one completes, and so arrives, first)
 * must begin outermost first, or the inner end would close the outer slice. */
static int write_group(struct perfetto_writer *writer)
{
    struct zm_timeline_slice *group = writer->group;
    for (size_t i = 1; i < writer->group_count; i++) {
        struct zm_timeline_slice moved = group[i];
        size_t j = i;
        for (; j > 0 && group[j - 1].duration_ns < moved.duration_ns; j--)
            group[j] = group[j - 1];
        group[j] = moved;
    }
    int status = 0;
    for (size_t i = 0; i < writer->group_count && status == 0; i++)
        status = write_slice(writer, &group[i]);
    writer->group_count = 0;
    return status;
}

static int perfetto_slice(void *context, const struct zm_timeline_slice *slice)
{
    struct perfetto_writer *writer = context;
    if (writer->group_count > 0 && writer->group[0].ts_ns != slice->ts_ns &&
        write_group(writer) != 0)
        return -1;
    if (ZM_GROW(writer->group, writer->group_capacity, writer->group_count + 1, 16) != 0)
        return -1;
    writer->group[writer->group_count++] = *slice;
    return 0;
}

static int perfetto_flow_start(void *context, int64_t ts_ns, uint64_t flow, uint32_t process,
                               uint32_t lane)
{
    struct perfetto_writer *writer = context;
    (void)process;
    /* After the slices that begin with it: the append lies inside its call. */
    if (write_group(writer) != 0)
        return -1;
    struct zm_perfetto_wire_event event = {
        .timestamp = (uint64_t)ts_ns,
        .sequence_id = SEQUENCE_ID,
        .sequence_flags =
            PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE,
        .type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT,
        .track_uuid = lane,
        .category_iid = CATEGORY_APPEND,
        .name_iid = EVENT_NAME_APPEND,
        .flow_id = flow,
    };
    return write_wire(writer, &event);
}

int zm_perfetto_counter_track(void *context, uint64_t uuid, uint64_t parent, const char *name,
                              const char *unit)
{
    struct perfetto_writer *writer = context;
    const char *shown = clean_text(writer, name);
    if (!shown)
        return -1;
    Perfetto__Protos__CounterDescriptor counter = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    counter.unit_name = (char *)unit;
    Perfetto__Protos__TrackDescriptor track = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    track.has_uuid = true;
    track.uuid = uuid;
    if (parent) {
        track.has_parent_uuid = true;
        track.parent_uuid = parent;
    }
    track.name = (char *)shown;
    track.counter = &counter;
    Perfetto__Protos__TracePacket packet;
    packet_init(&packet, -1);
    packet.track_descriptor = &track;
    return write_packet(writer, &packet);
}

int zm_perfetto_counter(void *context, uint64_t uuid, int64_t ts_ns, double value)
{
    struct perfetto_writer *writer = context;
    if (write_group(writer) != 0)
        return -1;
    struct zm_perfetto_wire_event event = {
        .timestamp = (uint64_t)ts_ns,
        .sequence_id = SEQUENCE_ID,
        .type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER,
        .track_uuid = uuid,
        .has_counter = true,
        .counter = value,
    };
    return write_wire(writer, &event);
}

/* A device counter: a counter track per (device lane, kind) under the device's track, described
 * when first used. */
static int perfetto_counter(void *context, const struct zm_timeline_counter *counter)
{
    struct perfetto_writer *writer = context;
    uint64_t uuid = ZM_PERFETTO_COUNTER_TRACKS + (uint64_t)counter->process * 8 + counter->kind;
    if (!zm_map_find(&writer->counter_tracks, counter->process, counter->kind)) {
        if (zm_map_put(&writer->counter_tracks, counter->process, counter->kind, 1) != 0 ||
            zm_perfetto_counter_track(writer, uuid, counter->process, counter->name,
                                      counter->unit) != 0)
            return -1;
    }
    return zm_perfetto_counter(writer, uuid, counter->ts_ns, counter->value);
}

/* ---- The metadata: JSON as nested debug annotations ------------------------------------- */

static void free_annotation(Perfetto__Protos__DebugAnnotation *annotation)
{
    for (size_t i = 0; i < annotation->n_dict_entries; i++)
        free_annotation(annotation->dict_entries[i]);
    for (size_t i = 0; i < annotation->n_array_values; i++)
        free_annotation(annotation->array_values[i]);
    free(annotation->dict_entries);
    free(annotation->array_values);
    free(annotation);
}

/* A debug annotation named `name` (NULL: an array element) holding `value`; strings are
 * borrowed from `value`. NULL when out of memory. */
static Perfetto__Protos__DebugAnnotation *annotation_of(const char *name, json_t *value)
{
    Perfetto__Protos__DebugAnnotation *annotation = malloc(sizeof(*annotation));
    if (!annotation)
        return NULL;
    perfetto__protos__debug_annotation__init(annotation);
    annotation->name = (char *)name;
    switch (json_typeof(value)) {
    case JSON_OBJECT: {
        size_t count = json_object_size(value);
        annotation->dict_entries = calloc(count ? count : 1, sizeof(*annotation->dict_entries));
        if (!annotation->dict_entries)
            goto error;
        const char *key;
        json_t *member;
        json_object_foreach(value, key, member)
        {
            Perfetto__Protos__DebugAnnotation *entry = annotation_of(key, member);
            if (!entry)
                goto error;
            annotation->dict_entries[annotation->n_dict_entries++] = entry;
        }
        break;
    }
    case JSON_ARRAY: {
        size_t count = json_array_size(value);
        annotation->array_values = calloc(count ? count : 1, sizeof(*annotation->array_values));
        if (!annotation->array_values)
            goto error;
        for (size_t i = 0; i < count; i++) {
            Perfetto__Protos__DebugAnnotation *element =
                annotation_of(NULL, json_array_get(value, i));
            if (!element)
                goto error;
            annotation->array_values[annotation->n_array_values++] = element;
        }
        break;
    }
    case JSON_STRING:
        annotation->string_value = (char *)json_string_value(value);
        break;
    case JSON_INTEGER:
        annotation->has_int_value = true;
        annotation->int_value = json_integer_value(value);
        break;
    case JSON_REAL:
        annotation->has_double_value = true;
        annotation->double_value = json_real_value(value);
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        annotation->has_bool_value = true;
        annotation->bool_value = json_is_true(value);
        break;
    case JSON_NULL:
        annotation->string_value = "null";
        break;
    }
    return annotation;
error:
    free_annotation(annotation);
    return NULL;
}

/* The "zeprof" track and its "metadata" instant at ts 0, one argument per metadata member. */
static int write_metadata(struct perfetto_writer *writer, json_t *metadata)
{
    Perfetto__Protos__TrackDescriptor track = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    track.has_uuid = true;
    track.uuid = ZM_PERFETTO_METADATA_TRACK;
    track.name = "zeprof";
    Perfetto__Protos__TracePacket packet;
    packet_init(&packet, 0);
    packet.track_descriptor = &track;
    if (write_packet(writer, &packet) != 0)
        return -1;
    Perfetto__Protos__DebugAnnotation *root = annotation_of(NULL, metadata);
    if (!root)
        return -1;
    Perfetto__Protos__TrackEvent event = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    event.has_type = true;
    event.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
    event.has_track_uuid = true;
    event.track_uuid = ZM_PERFETTO_METADATA_TRACK;
    event.name = "metadata";
    event.n_debug_annotations = root->n_dict_entries;
    event.debug_annotations = root->dict_entries;
    packet_init(&packet, 0);
    packet.track_event = &event;
    int status = write_packet(writer, &packet);
    free_annotation(root);
    return status;
}

static int perfetto_end(void *context, json_t *metadata)
{
    struct perfetto_writer *writer = context;
    if (write_group(writer) != 0 || write_metadata(writer, metadata) != 0)
        writer->failed = true;
    return flush(writer);
}

const struct zm_timeline_format zm_perfetto_format = {
    .new = perfetto_new,
    .lane = perfetto_lane,
    .slice = perfetto_slice,
    .flow_start = perfetto_flow_start,
    .counter = perfetto_counter,
    .end = perfetto_end,
    .free = perfetto_free,
};
