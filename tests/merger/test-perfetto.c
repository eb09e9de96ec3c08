/* Unit test of the Perfetto format (merger/perfetto.c) alone: lanes, slices, a flow, a counter
 * track and the metadata written through zm_perfetto_format, then read back with protobuf-c's
 * decoder, packet by packet and as one whole Trace message. The end-to-end comparison with the
 * JSON timeline on real traces is tests/merger/check-perfetto.py. */
#include "check.h"
#include "perfetto.h"
#include "perfetto_trace.pb-c.h"
#include "timeline.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef Perfetto__Protos__TracePacket Packet;

/* The file's packets, decoded one by one from its `packet` fields; NULL-terminated. Each must
 * be the bytes protobuf-c itself makes of it (the frequent packets are encoded by hand). */
static Packet **read_packets(const uint8_t *data, size_t size, size_t *count)
{
    Packet **packets = calloc(size + 1, sizeof(*packets));
    size_t n = 0, at = 0;
    while (packets && at < size) {
        CHECK_EQ(data[at], 0x0a); /* field 1, length-delimited */
        at++;
        uint64_t length = 0;
        for (int shift = 0; at < size; shift += 7) {
            uint8_t byte = data[at++];
            length |= (uint64_t)(byte & 0x7f) << shift;
            if (!(byte & 0x80))
                break;
        }
        CHECK(at + length <= size);
        if (at + length > size)
            break;
        packets[n] = perfetto__protos__trace_packet__unpack(NULL, length, data + at);
        CHECK(packets[n] != NULL);
        if (!packets[n])
            break;
        uint8_t *repacked = malloc(length + 1);
        CHECK_EQ(perfetto__protos__trace_packet__get_packed_size(packets[n]), length);
        if (perfetto__protos__trace_packet__get_packed_size(packets[n]) == length) {
            perfetto__protos__trace_packet__pack(packets[n], repacked);
            CHECK(memcmp(repacked, data + at, length) == 0);
        }
        free(repacked);
        n++;
        at += length;
    }
    *count = n;
    return packets;
}

static const Perfetto__Protos__TrackEvent *event_of(Packet **packets, size_t count, size_t *from,
                                                    Perfetto__Protos__TrackEvent__Type type)
{
    for (; *from < count; (*from)++) {
        const Perfetto__Protos__TrackEvent *event = packets[*from]->track_event;
        if (event && event->type == type)
            return event;
    }
    return NULL;
}

static void test_perfetto_round_trip(void)
{
    FILE *file = tmpfile();
    CHECK(file != NULL);
    if (!file)
        return;
    void *writer = zm_perfetto_format.new(file);
    CHECK(writer != NULL);
    struct zm_timeline_lane lanes[] = {
        {.kind = ZM_LANE_PROCESS, .number = 1, .process = 1, .parent = 1,
         .name = "host pid 7", .pid = 7},
        {.kind = ZM_LANE_THREAD, .number = 2, .process = 1, .parent = 1, .name = "tid 8",
         .pid = 7, .tid = 8},
        {.kind = ZM_LANE_DEVICE, .number = 3, .process = 3, .parent = 3,
         .name = "host GPU \xff"},
        /* a queue of engine lane 5, described after it: a track may name its parent first */
        {.kind = ZM_LANE_QUEUE, .number = 4, .process = 3, .parent = 5, .sort_index = 2,
         .name = "compute engine 0.1: queue 0x10 pid 7", .pid = 7},
        {.kind = ZM_LANE_ENGINE, .number = 5, .process = 3, .parent = 3,
         .name = "compute engine 0.1"},
    };
    for (size_t i = 0; i < sizeof(lanes) / sizeof(lanes[0]); i++)
        CHECK_EQ(zm_perfetto_format.lane(writer, &lanes[i], 0), 0);
    static const char inner[] = "zeInner", outer[] = "zeOuter", kernel[] = "kernel";
    /* The inner call completes first and so arrives first; both start at 100. */
    struct zm_timeline_slice api = {.name = inner,
                                    .hostname = "host",
                                    .ts_ns = 100,
                                    .duration_ns = 10,
                                    .process = 1,
                                    .lane = 2,
                                    .pid = 7,
                                    .tid = 8,
                                    .result = 0x78000001u,
                                    .synthetic = true};
    CHECK_EQ(zm_perfetto_format.slice(writer, &api), 0);
    api.name = outer;
    api.duration_ns = 50;
    api.result = 0;
    api.synthetic = false;
    api.placement_bound_ns = 33;
    CHECK_EQ(zm_perfetto_format.slice(writer, &api), 0);
    CHECK_EQ(zm_perfetto_format.flow_start(writer, 100, 5, 1, 2), 0);
    CHECK_EQ(zm_perfetto_counter_track(writer, 1000, 3, "frequency", "MHz"), 0);
    CHECK_EQ(zm_perfetto_counter(writer, 1000, 150, 1200.5), 0);
    struct zm_timeline_slice device = {.device = true,
                                       .name = kernel,
                                       .hostname = "host",
                                       .ts_ns = 200,
                                       .duration_ns = 40,
                                       .process = 3,
                                       .lane = 4,
                                       .pid = 7,
                                       .device_name = "GPU",
                                       .uncertainty_ns = 9,
                                       .queue = 0x10,
                                       .call_id = 12,
                                       .execution = 2,
                                       .flow = 5};
    CHECK_EQ(zm_perfetto_format.slice(writer, &device), 0);
    device.ts_ns = 300;
    device.flow = 0;
    CHECK_EQ(zm_perfetto_format.slice(writer, &device), 0);
    CHECK_EQ(zm_perfetto_counter(writer, 1000, 350, 1300), 0);
    json_t *metadata = json_pack("{s:[{s:s, s:s, s:I}], s:I}", "hosts", "hostname", "host", "role",
                                 "axis", "offset_ns", (json_int_t)-4, "origin_ns", (json_int_t)5);
    CHECK_EQ(zm_perfetto_format.end(writer, metadata), 0);
    json_decref(metadata);
    zm_perfetto_format.free(writer);

    long size = ftell(file);
    CHECK(size > 0);
    uint8_t *data = malloc((size_t)size);
    rewind(file);
    CHECK_EQ(fread(data, 1, (size_t)size, file), size);
    fclose(file);
    /* The whole file is one Trace message. */
    Perfetto__Protos__Trace *trace = perfetto__protos__trace__unpack(NULL, (size_t)size, data);
    CHECK(trace != NULL);
    size_t count;
    Packet **packets = read_packets(data, (size_t)size, &count);
    CHECK_EQ(trace ? trace->n_packet : 0, count);
    perfetto__protos__trace__free_unpacked(trace, NULL);
    /* First packet: clears the state; 4 lanes; then the slices. */
    CHECK(count > 5 && packets[0]->sequence_flags == 1 && packets[0]->first_packet_on_sequence);
    for (size_t i = 0; i < count; i++)
        CHECK_EQ(packets[i]->trusted_packet_sequence_id, 1);
    CHECK_EQ(packets[2]->track_descriptor->thread->tid, 2);
    CHECK_EQ(packets[2]->track_descriptor->thread->pid, 1);
    CHECK(strcmp(packets[3]->track_descriptor->name, "host GPU \xef\xbf\xbd") == 0);
    /* device 3 → engine 5 → queue 4 */
    CHECK_EQ(packets[4]->track_descriptor->parent_uuid, 5);
    CHECK_EQ(packets[5]->track_descriptor->parent_uuid, 3);
    CHECK(strcmp(packets[5]->track_descriptor->name, "compute engine 0.1") == 0);
    /* Outer before inner at the same instant, each end right after its begin. */
    size_t at = 0;
    const Perfetto__Protos__TrackEvent *begin =
        event_of(packets, count, &at, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN);
    CHECK(begin && begin->track_uuid == 2 && packets[at]->timestamp == 100);
    CHECK(begin && packets[at]->interned_data &&
          strcmp(packets[at]->interned_data->event_names[0]->name, outer) == 0);
    /* result 0 is left out; the placement bound stays */
    CHECK(begin && begin->n_debug_annotations == 1 && begin->debug_annotations[0]->int_value == 33);
    CHECK(at + 1 < count && packets[at + 1]->timestamp == 150 &&
          packets[at + 1]->track_event->type ==
              PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END);
    at++;
    begin = event_of(packets, count, &at, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN);
    CHECK(begin && packets[at]->interned_data &&
          strcmp(packets[at]->interned_data->event_names[0]->name, inner) == 0);
    CHECK(begin && begin->n_debug_annotations == 2 &&
          begin->debug_annotations[0]->uint_value == 0x78000001u &&
          begin->debug_annotations[1]->bool_value);
    CHECK(at + 1 < count && packets[at + 1]->timestamp == 110);
    /* The append instant carries the flow the first device slice ends. */
    const Perfetto__Protos__TrackEvent *append =
        event_of(packets, count, &at, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT);
    CHECK(append && append->n_flow_ids == 1 && append->flow_ids[0] == 5 &&
          append->track_uuid == 2 && append->name_iid == 1);
    /* The counter track and its two values. */
    size_t counter_at = 0;
    const Perfetto__Protos__TrackEvent *value =
        event_of(packets, count, &counter_at, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER);
    CHECK(value && value->track_uuid == 1000 && value->double_counter_value == 1200.5 &&
          packets[counter_at]->timestamp == 150);
    CHECK(counter_at > 0 && packets[counter_at - 1]->track_descriptor &&
          packets[counter_at - 1]->track_descriptor->counter &&
          strcmp(packets[counter_at - 1]->track_descriptor->counter->unit_name, "MHz") == 0 &&
          packets[counter_at - 1]->track_descriptor->parent_uuid == 3);
    counter_at++;
    value =
        event_of(packets, count, &counter_at, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER);
    CHECK(value && value->double_counter_value == 1300 && packets[counter_at]->timestamp == 350);
    begin = event_of(packets, count, &at, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN);
    CHECK(begin && begin->track_uuid == 4 && begin->n_terminating_flow_ids == 1 &&
          begin->terminating_flow_ids[0] == 5 && begin->n_debug_annotations == 3 &&
          begin->debug_annotations[1]->uint_value == 12);
    at++;
    begin = event_of(packets, count, &at, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN);
    CHECK(begin && begin->n_terminating_flow_ids == 0 && begin->name_iid == 4 &&
          !packets[at]->interned_data); /* the name was interned once */
    /* The metadata: an instant on the zeprof track, the JSON as nested annotations. */
    const Packet *last = packets[count - 1];
    const Perfetto__Protos__TrackEvent *meta = last->track_event;
    CHECK(meta && meta->track_uuid == ZM_PERFETTO_METADATA_TRACK &&
          strcmp(meta->name, "metadata") == 0 && meta->n_debug_annotations == 2);
    if (meta && meta->n_debug_annotations == 2) {
        const Perfetto__Protos__DebugAnnotation *hosts = meta->debug_annotations[0];
        CHECK(strcmp(hosts->name, "hosts") == 0 && hosts->n_array_values == 1);
        const Perfetto__Protos__DebugAnnotation *host = hosts->array_values[0];
        CHECK_EQ(host->n_dict_entries, 3);
        CHECK(strcmp(host->dict_entries[1]->string_value, "axis") == 0);
        CHECK_EQ(host->dict_entries[2]->int_value, -4);
        CHECK_EQ(meta->debug_annotations[1]->int_value, 5);
    }
    for (size_t i = 0; i < count; i++)
        perfetto__protos__trace_packet__free_unpacked(packets[i], NULL);
    free(packets);
    free(data);
}

static int64_t same_axis(void *context, uint32_t host, int64_t host_ns, int64_t *bound_ns)
{
    (void)context, (void)host;
    if (bound_ns)
        *bound_ns = 0;
    return host_ns;
}

static int64_t no_bound(void *context, uint32_t host, int64_t axis_ns)
{
    (void)context, (void)host, (void)axis_ns;
    return 0;
}

static bool placed(void *context, uint32_t host)
{
    (void)context, (void)host;
    return true;
}

/* A whole timeline with device telemetry (span.h's counter samples) in `kind`'s format; returns
 * the file's bytes (the caller frees), or NULL. */
static uint8_t *timeline_with_counters(enum zm_timeline_kind kind, const char *path, long *size)
{
    char reason[256];
    struct zm_timeline *timeline = zm_timeline_open(path, kind, reason, sizeof(reason));
    CHECK(timeline != NULL);
    if (!timeline)
        return NULL;
    CHECK_EQ(zm_timeline_begin_host(timeline, 0, "host"), 0);
    const struct zm_counter_sample samples[] = {
        {.device_name = "GPU",
         .pid = 7,
         .kind = ZM_COUNTER_FREQUENCY,
         .time_ns = 1000,
         .value = 1600},
        {.device_name = "GPU",
         .pid = 7,
         .kind = ZM_COUNTER_FREQUENCY,
         .time_ns = 2000,
         .value = 300},
        {.device_name = "GPU",
         .pid = 7,
         .kind = ZM_COUNTER_POWER,
         .time_ns = 2000,
         .interval_ns = 1000,
         .value = 12.5},
    };
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
        CHECK_EQ(zm_timeline_counter(timeline, &samples[i]), 0);
    CHECK_EQ(zm_timeline_end_host(timeline), 0);
    struct zm_timeline_placement placement = {same_axis, no_bound, placed, NULL};
    json_t *metadata = json_object();
    CHECK_EQ(zm_timeline_finish(timeline, &placement, metadata, reason, sizeof(reason)), 0);
    json_decref(metadata);
    FILE *file = fopen(path, "rb");
    CHECK(file != NULL);
    if (!file)
        return NULL;
    fseek(file, 0, SEEK_END);
    *size = ftell(file);
    rewind(file);
    uint8_t *data = malloc((size_t)*size + 1);
    CHECK_EQ(fread(data, 1, (size_t)*size, file), *size);
    data[*size] = 0;
    fclose(file);
    return data;
}

/* Telemetry through the timeline: a counter track per (device, kind) under the device's track,
 * described once, each sample a value on it; the same samples as the JSON's "C" events. */
static void test_timeline_counters(void)
{
    char directory[] = "/tmp/zeprof-test-perfetto-XXXXXX";
    CHECK(mkdtemp(directory) != NULL);
    char path[64];
    snprintf(path, sizeof(path), "%s/t.pftrace", directory);
    long size = 0;
    uint8_t *data = timeline_with_counters(ZM_TIMELINE_BY_NAME, path, &size);
    size_t count = 0;
    Packet **packets = data ? read_packets(data, (size_t)size, &count) : NULL;
    uint64_t device_track = 0;
    int tracks = 0, values = 0;
    for (size_t i = 0; i < count; i++) {
        const Perfetto__Protos__TrackDescriptor *track = packets[i]->track_descriptor;
        if (track && track->name && strcmp(track->name, "host GPU") == 0)
            device_track = track->uuid;
        if (track && track->counter) {
            tracks++;
            CHECK(track->parent_uuid == device_track && device_track != 0);
            CHECK(strcmp(track->name, tracks == 1 ? "frequency MHz" : "power W") == 0);
            CHECK(strcmp(track->counter->unit_name, tracks == 1 ? "MHz" : "W") == 0);
        }
        const Perfetto__Protos__TrackEvent *event = packets[i]->track_event;
        if (event && event->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER) {
            static const double expected[] = {1600, 300, 12.5};
            static const uint64_t at[] = {0, 1000, 1000};
            CHECK(values < 3 && event->double_counter_value == expected[values] &&
                  packets[i]->timestamp == at[values]);
            CHECK_EQ(event->track_uuid, ZM_PERFETTO_COUNTER_TRACKS + device_track * 8 +
                                            (values < 2 ? ZM_COUNTER_FREQUENCY : ZM_COUNTER_POWER));
            values++;
        }
    }
    CHECK_EQ(tracks, 2);
    CHECK_EQ(values, 3);
    for (size_t i = 0; i < count; i++)
        perfetto__protos__trace_packet__free_unpacked(packets[i], NULL);
    free(packets);
    free(data);
    unlink(path);
    /* The same samples in JSON: three "C" events on the device's lane. */
    snprintf(path, sizeof(path), "%s/t.json", directory);
    data = timeline_with_counters(ZM_TIMELINE_BY_NAME, path, &size);
    json_t *json = data ? json_loads((const char *)data, 0, NULL) : NULL;
    CHECK(json != NULL);
    json_t *events = json_object_get(json, "traceEvents");
    int counters = 0;
    for (size_t i = 0; i < json_array_size(events); i++) {
        const char *phase = json_string_value(json_object_get(json_array_get(events, i), "ph"));
        counters += phase && strcmp(phase, "C") == 0;
    }
    CHECK_EQ(counters, 3);
    json_decref(json);
    free(data);
    unlink(path);
    rmdir(directory);
}

int main(void)
{
    RUN(test_perfetto_round_trip);
    RUN(test_timeline_counters);
    return check_status();
}
