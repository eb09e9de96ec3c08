/* reader: one trace directory through a babeltrace2 graph into the model (reader.h). */
#include "reader.h"

#include "dump.h"
#include "grow.h"
#include "map.h"
#include "stream_merge.h"
#include "supervise.h"
#include "validate.h"

#include <babeltrace2/babeltrace.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Payload members the model reads, in this order; a class lacks most of them. */
enum member {
    M_RESULT,
    M_DEVICE,
    M_ANCHOR,
    M_SAMPLE,
    M_DEVICE_TICKS,
    M_CALL_ID,
    M_EXECUTION,
    M_QUEUE,
    M_LIST,
    M_TIMER_HZ,
    M_GLOBAL_START,
    M_GLOBAL_END,
    M_BYTES,
    M_GROUPS,
    M_STATUS,
    M_KERNEL_BITS,
    M_NAME,
    M_UUID,
    M_KIND,
    M_COMMAND_LIST,
    M_SESSION,
    M_WORKER,
    M_SEQUENCE,
    M_CALL_START,
    M_DST,
    M_SRC,
    M_SIZE,
    M_PPTR_VAL,
    M_PTR,
    M_GROUP_COUNT_X,
    M_GROUP_COUNT_Y,
    M_GROUP_COUNT_Z,
    M_GROUP_SIZE_X,
    M_GROUP_SIZE_Y,
    M_GROUP_SIZE_Z,
    M_SIMD,
    M_VALID,
    M_ENGINE_ACTIVE,
    M_ENGINE_TIMESTAMP,
    M_FREQUENCY,
    M_ENERGY,
    M_ENERGY_TIMESTAMP,
    M_MEMORY_USED,
    M_DESC_ORDINAL,
    M_DESC_INDEX,
    M_ALTDESC_ORDINAL,
    M_ALTDESC_INDEX,
    M_QUEUE_VAL,
    M_LIST_VAL,
    M_COMPUTE_GROUPS,
    M_COPY_GROUPS,
    M_COUNT
};

static const char *const member_names[M_COUNT] = {
    "result",       "device",   "anchor",       "sample",
    "device_ticks", "call_id",  "execution",    "queue",
    "list",         "timer_hz", "global_start", "global_end",
    "bytes",        "groups",   "status",       "kernel_timestamp_valid_bits",
    "name",         "uuid",     "kind",         "hCommandList",
    "session",      "worker",   "sequence",     "call_start",
    "dst",          "src",      "size",         "pptr_val",
    "ptr",          "group_count_x", "group_count_y", "group_count_z",
    "group_size_x", "group_size_y",  "group_size_z",  "simd",
    "valid",        "engine_active_us", "engine_timestamp_us", "frequency_mhz",
    "energy_uj",    "energy_timestamp_us", "memory_used",
    "desc_ordinal", "desc_index", "altdesc_ordinal", "altdesc_index",
    "phCommandQueue_val", "phCommandList_val", "compute_groups", "copy_groups",
};

/* What the reader learned about one event class, once. */
struct class_info {
    enum zm_event_kind kind;
    const char *function; /* Weak: interned in the model */
    int member[M_COUNT];  /* payload member index, or -1 */
    /* The member's type, known once for the class so that no event asks again. */
    bool member_signed[M_COUNT], member_unsigned[M_COUNT];
    int vpid, vtid; /* common context member index, or -1 */
    bool vpid_signed, vtid_signed;
    const char *invalid; /* why events of this class cannot be read, or NULL (static text) */
    enum zm_remote_mark frame_mark; /* ZM_EVENT_FRAME: which of the four marks */
    bool process_name; /* zeprof_device:process: the process name, shown by -t only */
};

struct reader {
    struct zm_model *model;
    FILE *dump;
    const char *path;
    bool host_started;
    uint32_t host;              /* the model's number of this host, once started */
    const char *hostname;       /* Weak: the trace's environment */
    struct zm_map class_index;  /* event class pointer -> index into classes */
    /* The classes of recent events by pointer bits, each with its index into classes: a
     * program's few hot classes alternate, and the map's lookup per event cost 0.3% */
    struct {
        const bt_event_class *event_class;
        size_t index;
    } recent[16];
    struct class_info *classes; /* Owned by this */
    size_t class_count, class_capacity;
    bool failed; /* the model failed (out of memory, I/O), or `why` says what was wrong */
    char why[200]; /* a reason of the reader's own (bad field types, timestamps), or "" */
};

void zm_reader_setup(void)
{
    bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);
}

/* The index of member `name` of `structure`, or -1; `is_signed` and (if asked) `is_integer` tell
 * its type. */
static int find_member_typed(const bt_field_class *structure, const char *name, bool *is_signed,
                             bool *is_integer)
{
    if (!structure)
        return -1;
    uint64_t count = bt_field_class_structure_get_member_count(structure);
    for (uint64_t i = 0; i < count; i++) {
        const bt_field_class_structure_member *member =
            bt_field_class_structure_borrow_member_by_index_const(structure, i);
        if (strcmp(bt_field_class_structure_member_get_name(member), name) == 0) {
            const bt_field_class *type =
                bt_field_class_structure_member_borrow_field_class_const(member);
            *is_signed = bt_field_class_type_is(bt_field_class_get_type(type),
                                                BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
            if (is_integer)
                *is_integer = bt_field_class_type_is(bt_field_class_get_type(type),
                                                     BT_FIELD_CLASS_TYPE_INTEGER);
            return (int)i;
        }
    }
    return -1;
}

static bool has_suffix(const char *text, size_t length, const char *suffix, size_t *stem)
{
    size_t suffix_length = strlen(suffix);
    if (length <= suffix_length || strcmp(text + length - suffix_length, suffix) != 0)
        return false;
    *stem = length - suffix_length;
    return true;
}

/* Maps "provider:event" to a kind (docs/tracepoints.md). */
static enum zm_event_kind classify(struct reader *reader, const char *full, const char **function)
{
    const char *colon = strchr(full, ':');
    if (!colon)
        return ZM_EVENT_UNKNOWN;
    size_t provider = (size_t)(colon - full);
    const char *event = colon + 1;
    size_t length = strlen(event), stem;
    if (provider == 9 && strncmp(full, "zeprof_ze", 9) == 0)
        goto api;
    if (provider == 10 &&
        (strncmp(full, "zeprof_zet", 10) == 0 || strncmp(full, "zeprof_zes", 10) == 0 ||
         strncmp(full, "zeprof_zel", 10) == 0))
        goto api;
    if (provider == 13 && strncmp(full, "zeprof_device", 13) == 0) {
        static const struct {
            const char *name;
            enum zm_event_kind kind;
        } device_events[] = {
            {"device_properties", ZM_EVENT_DEVICE_PROPERTIES},
            {"clock_sample_begin", ZM_EVENT_CLOCK_SAMPLE_BEGIN},
            {"clock_sample_end", ZM_EVENT_CLOCK_SAMPLE_END},
            {"append", ZM_EVENT_APPEND},
            {"device_timing", ZM_EVENT_DEVICE_TIMING},
            {"transfer", ZM_EVENT_TRANSFER},
            {"kernel_shape", ZM_EVENT_KERNEL_SHAPE},
        };
        for (size_t i = 0; i < sizeof(device_events) / sizeof(*device_events); i++) {
            if (strcmp(event, device_events[i].name) == 0)
                return device_events[i].kind;
        }
        return ZM_EVENT_UNKNOWN;
    }
    if (provider == 13 && strncmp(full, "zeprof_sample", 13) == 0)
        return strcmp(event, "device_sample") == 0 ? ZM_EVENT_DEVICE_SAMPLE : ZM_EVENT_UNKNOWN;
    if (provider == 12 && strncmp(full, "zeprof_frame", 12) == 0) {
        if (!strcmp(event, "dispatch_begin") || !strcmp(event, "dispatch_end") ||
            !strcmp(event, "serve_begin") || !strcmp(event, "serve_end"))
            return ZM_EVENT_FRAME;
    }
    return ZM_EVENT_UNKNOWN;
api:
    if (has_suffix(event, length, "_entry", &stem) || has_suffix(event, length, "_exit", &stem)) {
        *function = zm_model_intern(reader->model, event, stem);
        if (!*function) {
            reader->failed = true;
            return ZM_EVENT_UNKNOWN;
        }
        return event[stem + 1] == 'e' && event[stem + 2] == 'n' ? ZM_EVENT_API_ENTRY
                                                                : ZM_EVENT_API_EXIT;
    }
    /* One-event calls (docs/tracepoints.md): `_call`, or `_call_full` in full mode. */
    if (has_suffix(event, length, "_call", &stem) || has_suffix(event, length, "_call_full", &stem)) {
        *function = zm_model_intern(reader->model, event, stem);
        if (!*function) {
            reader->failed = true;
            return ZM_EVENT_UNKNOWN;
        }
        return ZM_EVENT_API_CALL;
    }
    if (has_suffix(event, length, "_desc", &stem)) {
        /* Named: the model reads the queue group of zeCommandQueueCreate's and
         * zeCommandListCreateImmediate's descriptor (the engine a queue submits to). */
        *function = zm_model_intern(reader->model, event, stem);
        if (!*function) {
            reader->failed = true;
            return ZM_EVENT_UNKNOWN;
        }
        return ZM_EVENT_API_DESC;
    }
    return ZM_EVENT_UNKNOWN;
}

/* "zeprof_frame:serve_end" -> ZM_REMOTE_SERVE_END (classify() accepted the name already). */
static enum zm_remote_mark frame_mark_of(const char *full)
{
    const char *event = strchr(full, ':') + 1;
    bool serve = strncmp(event, "serve", 5) == 0;
    bool end = strcmp(event + (serve ? 5 : 8), "_end") == 0;
    if (serve)
        return end ? ZM_REMOTE_SERVE_END : ZM_REMOTE_SERVE_BEGIN;
    return end ? ZM_REMOTE_DISPATCH_END : ZM_REMOTE_DISPATCH_BEGIN;
}

static const struct class_info *class_info_for(struct reader *reader, const bt_event *event)
{
    const bt_event_class *event_class = bt_event_borrow_class_const(event);
    size_t slot = ((uintptr_t)event_class >> 4) % (sizeof(reader->recent) / sizeof(*reader->recent));
    if (reader->recent[slot].event_class == event_class)
        return &reader->classes[reader->recent[slot].index];
    uint64_t *found = zm_map_find(&reader->class_index, (uint64_t)(uintptr_t)event_class, 0);
    if (found) {
        reader->recent[slot].event_class = event_class;
        reader->recent[slot].index = *found;
        return &reader->classes[*found];
    }
    if (ZM_GROW(reader->classes, reader->class_capacity, reader->class_count + 1, 16) != 0)
        return NULL;
    struct class_info *info = &reader->classes[reader->class_count];
    memset(info, 0, sizeof(*info));
    const char *name = bt_event_class_get_name(event_class);
    info->kind = classify(reader, name ? name : "", &info->function);
    info->process_name = name && strcmp(name, "zeprof_device:process") == 0;
    if (info->kind == ZM_EVENT_FRAME)
        info->frame_mark = frame_mark_of(name);
    const bt_field_class *payload = bt_event_class_borrow_payload_field_class_const(event_class);
    for (int i = 0; i < M_COUNT; i++) {
        bool integer = false;
        info->member[i] =
            find_member_typed(payload, member_names[i], &info->member_signed[i], &integer);
        info->member_unsigned[i] = integer && !info->member_signed[i];
    }
    const bt_stream_class *stream_class = bt_event_class_borrow_stream_class_const(event_class);
    const bt_field_class *context =
        bt_stream_class_borrow_event_common_context_field_class_const(stream_class);
    bool vpid_integer = true, vtid_integer = true;
    info->vpid = find_member_typed(context, "vpid", &info->vpid_signed, &vpid_integer);
    info->vtid = find_member_typed(context, "vtid", &info->vtid_signed, &vtid_integer);
    if (!bt_stream_class_borrow_default_clock_class_const(stream_class))
        info->invalid = "events without a timestamp (the stream class has no clock)";
    else if (!vpid_integer || !vtid_integer)
        info->invalid = "the stream's vpid or vtid is not an integer";
    if (zm_map_put(&reader->class_index, (uint64_t)(uintptr_t)event_class, 0,
                   reader->class_count) != 0)
        return NULL;
    reader->recent[slot].event_class = event_class;
    reader->recent[slot].index = reader->class_count++;
    return info;
}

static uint64_t integer_member(const bt_field *payload, const struct class_info *info,
                               enum member member)
{
    if (info->member[member] < 0)
        return 0;
    const bt_field *field = bt_field_structure_borrow_member_field_by_index_const(
        payload, (uint64_t)info->member[member]);
    if (info->member_signed[member])
        return (uint64_t)bt_field_integer_signed_get_value(field);
    if (!info->member_unsigned[member])
        return 0;
    return bt_field_integer_unsigned_get_value(field);
}

static double real_member(const bt_field *payload, const struct class_info *info,
                          enum member member)
{
    if (info->member[member] < 0)
        return 0.0;
    const bt_field *field = bt_field_structure_borrow_member_field_by_index_const(
        payload, (uint64_t)info->member[member]);
    bt_field_class_type type = bt_field_get_class_type(field);
    if (type == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL)
        return bt_field_real_double_precision_get_value(field);
    if (type == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL)
        return bt_field_real_single_precision_get_value(field);
    return 0.0;
}

static const char *string_member(const bt_field *payload, const struct class_info *info,
                                 enum member member)
{
    if (info->member[member] < 0)
        return NULL;
    const bt_field *field = bt_field_structure_borrow_member_field_by_index_const(
        payload, (uint64_t)info->member[member]);
    if (bt_field_get_class_type(field) != BT_FIELD_CLASS_TYPE_STRING)
        return NULL;
    return bt_field_string_get_value(field);
}

/* Member `index` of the common context, an integer (class_info_for checked), signed or not. */
static int64_t context_member(const bt_field *context, int index, bool is_signed)
{
    if (!context || index < 0)
        return 0;
    const bt_field *field =
        bt_field_structure_borrow_member_field_by_index_const(context, (uint64_t)index);
    if (is_signed)
        return bt_field_integer_signed_get_value(field);
    return (int64_t)bt_field_integer_unsigned_get_value(field);
}

/* A one-event call's start: `start` is a raw value of the trace clock (the shim reads LTTng's own
 * clock), the event's own snapshot another: their difference, in nanoseconds, before `ns`. */
static int64_t call_start_ns(const bt_clock_snapshot *snapshot, int64_t ns, uint64_t start)
{
    uint64_t cycles = bt_clock_snapshot_get_value(snapshot);
    uint64_t frequency =
        bt_clock_class_get_frequency(bt_clock_snapshot_borrow_clock_class_const(snapshot));
    if (start > cycles) /* inverted: the model clamps it and counts it */
        return ns == INT64_MAX ? ns : ns + 1;
    uint64_t delta = cycles - start;
    if (frequency != 1000000000u) {
        double scaled = (double)delta * 1e9 / (double)(frequency ? frequency : 1);
        if (scaled >= 9.2e18) /* a corrupt call_start: converting it would be undefined */
            return INT64_MIN;
        delta = (uint64_t)scaled;
    }
    if (delta > (uint64_t)INT64_MAX || ns < INT64_MIN + (int64_t)delta)
        return INT64_MIN;
    return ns - (int64_t)delta;
}

static int start_host(struct reader *reader)
{
    if (reader->host_started)
        return 0;
    reader->host_started = true;
    int host = zm_model_begin_host(reader->model, reader->hostname, reader->path);
    if (host < 0)
        return -1;
    reader->host = (uint32_t)host;
    return 0;
}

/* `known_ns`: the event's time as the stream merge computed it, or NULL. */
static int handle_event(struct reader *reader, const bt_message *message, const int64_t *known_ns)
{
    const bt_event *event = bt_message_event_borrow_event_const(message);
    const struct class_info *info = class_info_for(reader, event);
    if (!info || reader->failed || start_host(reader) != 0)
        return -1;
    if (info->invalid) {
        snprintf(reader->why, sizeof(reader->why), "%s", info->invalid);
        return -1;
    }
    int64_t ns = known_ns ? *known_ns : 0;
    const bt_clock_snapshot *snapshot =
        bt_message_event_borrow_default_clock_snapshot_const(message);
    if (!known_ns && bt_clock_snapshot_get_ns_from_origin(snapshot, &ns) !=
                         BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
        snprintf(reader->why, sizeof(reader->why),
                 "a timestamp out of range (clock offset or value overflows 64 bits)");
        return -1;
    }
    struct zm_event decoded = {.kind = info->kind, .ns = ns, .function = info->function};
    if (info->kind == ZM_EVENT_API_CALL) {
        const bt_field *payload = bt_event_borrow_payload_field_const(event);
        decoded.result = (uint32_t)integer_member(payload, info, M_RESULT);
        decoded.start_ns = call_start_ns(snapshot, ns, integer_member(payload, info, M_CALL_START));
    }
    if (reader->dump)
        zm_dump_event(reader->dump, zm_model_host(reader->model, reader->host)->hostname, ns, event,
                      info->kind == ZM_EVENT_API_CALL ? &decoded.start_ns : NULL);
    if (info->process_name)
        return 0; /* the name, once per process, in place of a procname context on every event */
    if (info->kind == ZM_EVENT_UNKNOWN)
        return zm_model_event(reader->model, &decoded);
    const bt_field *context = bt_event_borrow_common_context_field_const(event);
    decoded.pid = context_member(context, info->vpid, info->vpid_signed);
    decoded.tid = context_member(context, info->vtid, info->vtid_signed);
    if (info->kind == ZM_EVENT_API_ENTRY) {
        const bt_field *payload = bt_event_borrow_payload_field_const(event);
        /* The list a zeCommandListDestroy/Reset is about: its appends can be forgotten. */
        decoded.list = integer_member(payload, info, M_COMMAND_LIST);
        /* zeMemAlloc*'s size, zeMemFree's pointer: the model follows allocations. */
        decoded.size = integer_member(payload, info, M_SIZE);
        decoded.address = integer_member(payload, info, M_PTR);
    } else if (info->kind == ZM_EVENT_API_DESC) {
        /* A queue's group ordinal and index: `desc` of zeCommandQueueCreate, `altdesc` of
         * zeCommandListCreateImmediate; other descriptors have neither. */
        const bt_field *payload = bt_event_borrow_payload_field_const(event);
        enum member ordinal =
            info->member[M_DESC_ORDINAL] >= 0 ? M_DESC_ORDINAL : M_ALTDESC_ORDINAL;
        decoded.queue_slot = info->member[ordinal] >= 0;
        decoded.queue_ordinal = (uint32_t)integer_member(payload, info, ordinal);
        decoded.queue_index = (uint32_t)integer_member(payload, info, ordinal + 1);
    } else if (info->kind != ZM_EVENT_API_ENTRY && info->kind != ZM_EVENT_API_DESC &&
               info->kind != ZM_EVENT_API_CALL) {
        const bt_field *payload = bt_event_borrow_payload_field_const(event);
        decoded.result = (uint32_t)integer_member(payload, info, M_RESULT);
        decoded.address = integer_member(payload, info, M_PPTR_VAL); /* zeMemAlloc*'s pointer */
        if (info->kind == ZM_EVENT_API_EXIT) /* the queue or immediate list created */
            decoded.created = integer_member(
                payload, info, info->member[M_QUEUE_VAL] >= 0 ? M_QUEUE_VAL : M_LIST_VAL);
        if (info->kind == ZM_EVENT_FRAME) {
            decoded.frame_mark = info->frame_mark;
            decoded.session = integer_member(payload, info, M_SESSION);
            decoded.worker = (uint32_t)integer_member(payload, info, M_WORKER);
            decoded.sequence = integer_member(payload, info, M_SEQUENCE);
        } else if (info->kind != ZM_EVENT_API_EXIT) {
            decoded.device = integer_member(payload, info, M_DEVICE);
            decoded.anchor = integer_member(payload, info, M_ANCHOR);
            decoded.sample = (uint32_t)integer_member(payload, info, M_SAMPLE);
            decoded.device_ticks = integer_member(payload, info, M_DEVICE_TICKS);
            decoded.call_id = integer_member(payload, info, M_CALL_ID);
            decoded.execution = integer_member(payload, info, M_EXECUTION);
            decoded.queue = integer_member(payload, info, M_QUEUE);
            decoded.list = integer_member(payload, info, M_LIST);
            decoded.timer_hz = integer_member(payload, info, M_TIMER_HZ);
            decoded.global_start = integer_member(payload, info, M_GLOBAL_START);
            decoded.global_end = integer_member(payload, info, M_GLOBAL_END);
            decoded.bytes = integer_member(payload, info, M_BYTES);
            decoded.groups = integer_member(payload, info, M_GROUPS);
            decoded.dst = integer_member(payload, info, M_DST);
            decoded.src = integer_member(payload, info, M_SRC);
            decoded.status = (uint32_t)integer_member(payload, info, M_STATUS);
            decoded.kernel_timestamp_valid_bits =
                (uint32_t)integer_member(payload, info, M_KERNEL_BITS);
            decoded.name = string_member(payload, info, M_NAME);
            decoded.uuid = string_member(payload, info, M_UUID);
            decoded.append_kind = string_member(payload, info, M_KIND);
            if (info->kind == ZM_EVENT_DEVICE_PROPERTIES) {
                decoded.groups_known = info->member[M_COMPUTE_GROUPS] >= 0;
                decoded.compute_groups = (uint32_t)integer_member(payload, info, M_COMPUTE_GROUPS);
                decoded.copy_groups = (uint32_t)integer_member(payload, info, M_COPY_GROUPS);
            }
            if (info->kind == ZM_EVENT_KERNEL_SHAPE) {
                for (int i = 0; i < 3; i++) {
                    decoded.shape.count[i] =
                        (uint32_t)integer_member(payload, info, M_GROUP_COUNT_X + i);
                    decoded.shape.size[i] =
                        (uint32_t)integer_member(payload, info, M_GROUP_SIZE_X + i);
                }
                decoded.shape.simd = (uint32_t)integer_member(payload, info, M_SIMD);
                decoded.shape.known = true;
            }
            if (info->kind == ZM_EVENT_DEVICE_SAMPLE) {
                decoded.valid = (uint32_t)integer_member(payload, info, M_VALID);
                decoded.engine_active_us = integer_member(payload, info, M_ENGINE_ACTIVE);
                decoded.engine_timestamp_us = integer_member(payload, info, M_ENGINE_TIMESTAMP);
                decoded.frequency_mhz = real_member(payload, info, M_FREQUENCY);
                decoded.energy_uj = integer_member(payload, info, M_ENERGY);
                decoded.energy_timestamp_us = integer_member(payload, info, M_ENERGY_TIMESTAMP);
                decoded.memory_used = integer_member(payload, info, M_MEMORY_USED);
            }
        }
    }
    return zm_model_event(reader->model, &decoded);
}

static void stream_beginning(struct reader *reader, const bt_message *message)
{
    if (reader->hostname)
        return;
    const bt_stream *stream = bt_message_stream_beginning_borrow_stream_const(message);
    const bt_trace *trace = bt_stream_borrow_trace_const(stream);
    const bt_value *value =
        bt_trace_borrow_environment_entry_value_by_name_const(trace, "hostname");
    if (value && bt_value_is_string(value))
        reader->hostname = bt_value_string_get(value);
}

/* One message in time order, from the muxer or the stream merge. 0, or -1 (reader->failed). */
static int handle_message(struct reader *reader, const bt_message *message, const int64_t *ns)
{
    uint64_t lost;
    int status = 0;
    switch (bt_message_get_type(message)) {
    case BT_MESSAGE_TYPE_EVENT:
        status = handle_event(reader, message, ns);
        break;
    case BT_MESSAGE_TYPE_STREAM_BEGINNING:
        stream_beginning(reader, message);
        break;
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
        /* The count is unknown when a stream's first packet already lost events: then at least
         * one was lost. */
        if (bt_message_discarded_events_get_count(message, &lost) !=
            BT_PROPERTY_AVAILABILITY_AVAILABLE)
            lost = 1;
        status = start_host(reader);
        zm_model_discarded(reader->model, lost, false);
        break;
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
        if (bt_message_discarded_packets_get_count(message, &lost) !=
            BT_PROPERTY_AVAILABILITY_AVAILABLE)
            lost = 1;
        status = start_host(reader);
        zm_model_discarded(reader->model, lost, true);
        break;
    default:
        break;
    }
    if (status != 0)
        reader->failed = true;
    return status;
}

static int deliver_merged(void *user, const bt_message *message, int64_t ns)
{
    return handle_message(user, message, &ns);
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *iterator,
                                                                  void *user_data)
{
    struct reader *reader = user_data;
    bt_message_array_const messages;
    uint64_t count;
    zm_supervise_progress();
    switch (bt_message_iterator_next(iterator, &messages, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        zm_merge_release_unfinished_events(iterator);
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default: {
        /* Another stream's reader may be stopped in the middle of an event too; the error,
         * which the reason quotes, is set aside meanwhile. */
        const bt_error *error = bt_current_thread_take_error();
        zm_merge_release_unfinished_events(iterator);
        if (error)
            bt_current_thread_move_error(error);
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    }
    int status = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (status == 0)
            status = handle_message(reader, messages[i], NULL);
        bt_message_put_ref(messages[i]);
    }
    /* handle_message marked the reader failed */
    return status != 0 ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
                       : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* ---- The graph ------------------------------------------------------------------------- */

/* nftw has no context argument: the directories found by the current walk. */
static char **trace_dirs;
static size_t trace_dir_count, trace_dir_capacity;
static bool walk_failed;
static char *walk_unreadable; /* the first directory or file the walk could not read */
static int walk_errno;

/* Collects every directory holding a CTF `metadata` file: one logical trace each (per-UID
 * buffers give one per host and ABI, per-PID buffers one per process). */
static int look_for_metadata(const char *path, const struct stat *info, int type, struct FTW *where)
{
    (void)info;
    if (type == FTW_DNR || type == FTW_NS) {
        /* Part of the trace may be in there: never read a trace partly without saying so. */
        walk_errno = errno ? errno : EACCES;
        if (!walk_unreadable)
            walk_unreadable = strdup(path);
        return 0;
    }
    if (type != FTW_F || strcmp(path + where->base, "metadata") != 0)
        return 0;
    char *dir = strndup(path, where->base > 0 ? (size_t)where->base - 1 : 0);
    if (!dir || ZM_GROW(trace_dirs, trace_dir_capacity, trace_dir_count + 1, 16) != 0) {
        free(dir);
        walk_failed = true;
        return 1;
    }
    trace_dirs[trace_dir_count++] = dir;
    return 0;
}

static void forget_trace_dirs(void)
{
    for (size_t i = 0; i < trace_dir_count; i++)
        free(trace_dirs[i]);
    free(trace_dirs);
    trace_dirs = NULL;
    trace_dir_count = trace_dir_capacity = 0;
    walk_failed = false;
    free(walk_unreadable);
    walk_unreadable = NULL;
}

static int compare_paths(const void *left, const void *right)
{
    return strcmp(*(char *const *)left, *(char *const *)right);
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* babeltrace2's message without its internals: pointer values ("addr=0x55d0…", "0x7f…") and
 * the "key=" naming them go, whitespace runs become one space. */
static void clean_cause(char *out, size_t size, const char *message)
{
    size_t n = 0;
    for (const char *c = message; *c && n + 1 < size;) {
        if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X')) {
            size_t digits = 0;
            while (is_hex(c[2 + digits]))
                digits++;
            if (digits >= 6) { /* an address, not a small constant */
                while (n > 0 && out[n - 1] != ' ' && out[n - 1] != '(' && out[n - 1] != '[')
                    n--; /* its "name=" */
                c += 2 + digits;
                while (*c == ',' || *c == ' ')
                    c++;
                continue;
            }
        }
        char ch = (unsigned char)*c < 0x20 ? ' ' : *c;
        if (!(ch == ' ' && (n == 0 || out[n - 1] == ' ')))
            out[n++] = ch;
        c++;
    }
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == ','))
        n--;
    out[n] = '\0';
}

/* The most recent (innermost) cause babeltrace2 gave, cleaned and on one line, for the reason. */
static void babeltrace_reason(char *text, size_t size, const char *fallback)
{
    snprintf(text, size, "%s", fallback);
    const bt_error *error = bt_current_thread_take_error();
    if (!error)
        return;
    uint64_t causes = bt_error_get_cause_count(error);
    if (causes > 0) {
        const bt_error_cause *cause = bt_error_borrow_cause_by_index(error, 0);
        char cleaned[300];
        clean_cause(cleaned, sizeof(cleaned), bt_error_cause_get_message(cause));
        if (cleaned[0])
            snprintf(text, size, "%s (%s)", fallback, cleaned);
    }
    bt_error_release(error);
}

/* Builds the graph: one src.ctf.fs per logical trace, its ports into the stream merge (or, with
 * `muxer`, into flt.utils.muxer and a simple sink), and runs it. Returns the run's status; on a
 * failure to build, -1 with `why` filled. */
static int run_graph(struct reader *reader, const bt_plugin *ctf, const bt_plugin *utils,
                     struct zm_merge *merge, bool verbose, char *why, size_t why_size,
                     bt_graph_run_status *run)
{
    int status = -1;
    bt_value *params = NULL;
    bt_graph *graph = bt_graph_create(0);
    if (!graph) {
        snprintf(why, why_size, "out of memory");
        goto end;
    }
    const bt_component_filter *muxer = NULL;
    if (!merge &&
        bt_graph_add_filter_component(
            graph, bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer"), "muxer",
            NULL, BT_LOGGING_LEVEL_NONE, &muxer) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        babeltrace_reason(why, why_size, "cannot create the muxer");
        goto end;
    }
    const bt_component_source **sources = calloc(trace_dir_count, sizeof(*sources));
    if (!sources) {
        snprintf(why, why_size, "out of memory");
        goto end;
    }
    uint64_t ports = 0;
    for (size_t t = 0; t < trace_dir_count; t++) {
        /* One source per logical trace: src.ctf.fs reads one trace (one UUID) per component. */
        char source_name[32];
        snprintf(source_name, sizeof(source_name), "source-%zu", t);
        bt_value *inputs = NULL;
        bt_value_put_ref(params);
        params = bt_value_map_create();
        if (!params ||
            bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) !=
                BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
            bt_value_array_append_string_element(inputs, trace_dirs[t]) !=
                BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
            snprintf(why, why_size, "out of memory");
            goto end_sources;
        }
        if (bt_graph_add_source_component(
                graph, bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs"),
                source_name, params, BT_LOGGING_LEVEL_NONE,
                &sources[t]) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
            babeltrace_reason(why, why_size, "cannot open the CTF trace");
            goto end_sources;
        }
        ports += bt_component_source_get_output_port_count(sources[t]);
    }
    const bt_component_sink *sink = NULL;
    if (merge ? zm_merge_add(merge, graph, ports, &sink) != 0
              : bt_graph_add_simple_sink_component(graph, "zeprof", NULL, consume, NULL, reader,
                                                   &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        babeltrace_reason(why, why_size, "cannot create the sink");
        goto end_sources;
    }
    uint64_t port = 0;
    for (size_t t = 0; t < trace_dir_count; t++) {
        uint64_t count = bt_component_source_get_output_port_count(sources[t]);
        for (uint64_t i = 0; i < count; i++, port++) {
            /* The muxer adds a fresh input port each time one is connected; the merge has one
             * per source port already. */
            const bt_port_input *input =
                merge ? bt_component_sink_borrow_input_port_by_index_const(sink, port)
                      : bt_component_filter_borrow_input_port_by_index_const(muxer, port);
            if (bt_graph_connect_ports(
                    graph, bt_component_source_borrow_output_port_by_index_const(sources[t], i),
                    input, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
                babeltrace_reason(why, why_size, "cannot connect the graph");
                goto end_sources;
            }
        }
    }
    if (!merge && bt_graph_connect_ports(
                      graph, bt_component_filter_borrow_output_port_by_index_const(muxer, 0),
                      bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                      NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        babeltrace_reason(why, why_size, "cannot connect the graph");
        goto end_sources;
    }
    if (verbose)
        fprintf(zm_supervise_log(), "zeprof-merge: reading %s (%llu streams%s)\n", reader->path,
                (unsigned long long)ports, merge ? "" : ", through the muxer");
    while ((*run = bt_graph_run(graph)) == BT_GRAPH_RUN_STATUS_AGAIN) {
        /* A component waits for something: let it, without burning a core. Progress is the
         * consume callback's to report, so a source that says AGAIN forever is a stall. */
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    status = 0;
end_sources:
    free(sources);
end:
    bt_value_put_ref(params);
    bt_graph_put_ref(graph);
    return status;
}

int zm_reader_read(const char *path, struct zm_model *model, FILE *dump, bool verbose, char *reason,
                   int reason_size)
{
    char why[400] = "";
    int status = -1;
    struct reader reader = {.model = model, .dump = dump, .path = path};
    zm_map_init(&reader.class_index);
    struct zm_merge *merge = NULL;
    const bt_plugin *ctf = NULL, *utils = NULL;
    char *resolved = NULL;
    uint64_t events_before = zm_model_zeprof_events(model);
    uint64_t unknown_before = zm_model_anomalies(model)->unknown_events;

    struct stat info;
    if (stat(path, &info) != 0) {
        snprintf(why, sizeof(why), "%s", strerror(errno));
        goto end;
    }
    if (!S_ISDIR(info.st_mode)) {
        snprintf(why, sizeof(why), "not a directory");
        goto end;
    }
    /* The walk does not follow links inside the trace, but the directory itself may be one. */
    resolved = realpath(path, NULL);
    if (!resolved) {
        snprintf(why, sizeof(why), "%s", strerror(errno));
        goto end;
    }
    errno = 0;
    if (nftw(resolved, look_for_metadata, 16, FTW_PHYS) != 0 && !walk_failed) {
        snprintf(why, sizeof(why), "cannot walk the directory (%s)", strerror(errno));
        goto end;
    }
    if (walk_failed) {
        snprintf(why, sizeof(why), "out of memory");
        goto end;
    }
    if (walk_unreadable) {
        char shown[200];
        zm_supervise_escape_line(shown, sizeof(shown), walk_unreadable);
        snprintf(why, sizeof(why), "cannot read %s (%s)", shown, strerror(walk_errno));
        goto end;
    }
    if (trace_dir_count == 0) {
        snprintf(why, sizeof(why), "no CTF trace in the directory");
        goto end;
    }
    qsort(trace_dirs, trace_dir_count, sizeof(*trace_dirs), compare_paths);
    /* What libbabeltrace2 would abort or loop on, refused first (the supervisor contains the
     * rest). */
    /* ZEPROF_MERGE_SKIP_VALIDATION=1 leaves all to the supervisor (to test it alone). */
    const char *skip = getenv("ZEPROF_MERGE_SKIP_VALIDATION");
    for (size_t t = 0; t < trace_dir_count && !(skip && strcmp(skip, "1") == 0); t++) {
        zm_supervise_progress();
        if (zm_validate_trace(trace_dirs[t], why, sizeof(why)) != 0)
            goto end;
    }
    if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) !=
            BT_PLUGIN_FIND_STATUS_OK ||
        bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &utils) !=
            BT_PLUGIN_FIND_STATUS_OK) {
        snprintf(why, sizeof(why), "babeltrace2 plugins ctf and utils not found");
        goto end;
    }
    /* Our own merge of the streams unless they are unusual (stream_merge.h), or asked not to
     * (ZEPROF_MERGE_MUXER=1: the muxer, as before, to compare). */
    const char *use_muxer = getenv("ZEPROF_MERGE_MUXER");
    bt_graph_run_status run = BT_GRAPH_RUN_STATUS_OK;
    if (!(use_muxer && strcmp(use_muxer, "1") == 0)) {
        merge = zm_merge_new(deliver_merged, &reader);
        if (!merge) {
            snprintf(why, sizeof(why), "out of memory");
            goto end;
        }
        if (run_graph(&reader, ctf, utils, merge, verbose, why, sizeof(why), &run) != 0)
            goto end;
        if (run != BT_GRAPH_RUN_STATUS_OK && zm_merge_unusual(merge)) {
            bt_current_thread_clear_error(); /* nothing was read: the muxer reads it all */
            zm_merge_free(merge);
            merge = NULL;
        }
    }
    if (!merge && run_graph(&reader, ctf, utils, NULL, verbose, why, sizeof(why), &run) != 0)
        goto end;
    if (reader.failed) {
        bt_current_thread_clear_error();
        snprintf(why, sizeof(why), "%s",
                 reader.why[0]              ? reader.why
                 : zm_model_error(model)[0] ? zm_model_error(model)
                                            : "out of memory or temporary file error");
        goto end;
    }
    if (run != BT_GRAPH_RUN_STATUS_OK && merge && zm_merge_error(merge)[0]) {
        bt_current_thread_clear_error();
        snprintf(why, sizeof(why), "cannot decode the trace (truncated or corrupt?) (%s)",
                 zm_merge_error(merge));
        goto end;
    }
    if (run != BT_GRAPH_RUN_STATUS_OK) {
        babeltrace_reason(why, sizeof(why), "cannot decode the trace (truncated or corrupt?)");
        goto end;
    }
    if (zm_model_zeprof_events(model) == events_before) {
        if (zm_model_anomalies(model)->unknown_events > unknown_before)
            snprintf(why, sizeof(why), "no zeprof events (a trace from another tracer?)");
        else
            snprintf(why, sizeof(why), "no zeprof events (empty trace)");
        goto end;
    }
    if (zm_model_end_host(model) != 0) {
        snprintf(why, sizeof(why), "out of memory or temporary file error");
        goto end;
    }
    status = 0;
end:
    if (status != 0) {
        char shown[1024];
        zm_supervise_escape_line(shown, sizeof(shown), path);
        snprintf(reason, (size_t)reason_size, "Failed to read trace: path=%s, reason=%s", shown,
                 why);
    }
    free(resolved);
    zm_merge_free(merge);
    bt_plugin_put_ref(ctf);
    bt_plugin_put_ref(utils);
    /* Tearing a failed graph down may report more causes: never leave an error behind. */
    bt_current_thread_clear_error();
    free(reader.classes);
    forget_trace_dirs();
    zm_map_release(&reader.class_index);
    return status;
}
