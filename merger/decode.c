/* decode: babeltrace2 events into zm_event, by a plan learned once per event class (decode.h). */
#include "decode.h"

#include "grow.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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

/* How one planned member is read, and what it is stored as. */
enum step_type {
    STEP_SIGNED_TO_U64,   /* a signed integer into a uint64_t field */
    STEP_UNSIGNED_TO_U64, /* an unsigned integer into a uint64_t field */
    STEP_SIGNED_TO_U32,   /* ... into a uint32_t field, truncated */
    STEP_UNSIGNED_TO_U32,
    STEP_STRING,          /* into a const char * field */
    STEP_DOUBLE,          /* a real into a double field */
    STEP_SINGLE,
};

struct step {
    uint32_t index;  /* payload member index */
    uint16_t offset; /* of the field in struct zm_event */
    uint8_t type;    /* enum step_type */
};

/* What a field of zm_event holds: the member types it accepts. */
enum target { T_U64, T_U32, T_STRING, T_REAL };

struct zm_decode_class {
    struct zm_decode_info info;
    /* What every event of the class starts as: kind, function and what the class alone says
     * (frame mark, whether the queue slot, queue groups, launch shape are known). */
    struct zm_event template;
    int vpid, vtid; /* common context member index, or -1 */
    bool vpid_signed, vtid_signed;
    int call_start; /* ZM_EVENT_API_CALL: the call_start member's index, or -1 */
    bool call_start_signed;
    uint32_t step_count;
    struct step steps[M_COUNT];
};

void zm_decode_init(struct zm_decoder *decoder, struct zm_model *model)
{
    *decoder = (struct zm_decoder){.model = model};
    zm_map_init(&decoder->class_index);
}

void zm_decode_release(struct zm_decoder *decoder)
{
    free(decoder->classes);
    zm_map_release(&decoder->class_index);
    zm_decode_init(decoder, decoder->model);
}

const struct zm_decode_info *zm_decode_info(const struct zm_decode_class *class)
{
    return &class->info;
}

/* The index of member `name` of `structure`, or -1, and its field class (NULL when absent). */
static int find_member(const bt_field_class *structure, const char *name,
                       const bt_field_class **type)
{
    *type = NULL;
    if (!structure)
        return -1;
    uint64_t count = bt_field_class_structure_get_member_count(structure);
    for (uint64_t i = 0; i < count; i++) {
        const bt_field_class_structure_member *member =
            bt_field_class_structure_borrow_member_by_index_const(structure, i);
        if (strcmp(bt_field_class_structure_member_get_name(member), name) == 0) {
            *type = bt_field_class_structure_member_borrow_field_class_const(member);
            return (int)i;
        }
    }
    return -1;
}

static bool is_type(const bt_field_class *type, bt_field_class_type kind)
{
    return type && bt_field_class_type_is(bt_field_class_get_type(type), kind);
}

static bool has_suffix(const char *text, size_t length, const char *suffix, size_t *stem)
{
    size_t suffix_length = strlen(suffix);
    if (length <= suffix_length || strcmp(text + length - suffix_length, suffix) != 0)
        return false;
    *stem = length - suffix_length;
    return true;
}

/* Maps "provider:event" to a kind (docs/tracepoints.md); for API events `*function` is the
 * interned function name, NULL when out of memory. */
static enum zm_event_kind classify(struct zm_model *model, const char *full, const char **function)
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
        *function = zm_model_intern(model, event, stem);
        return event[stem + 1] == 'e' && event[stem + 2] == 'n' ? ZM_EVENT_API_ENTRY
                                                                : ZM_EVENT_API_EXIT;
    }
    /* One-event calls (docs/tracepoints.md): `_call`, or `_call_full` in full mode. */
    if (has_suffix(event, length, "_call", &stem) || has_suffix(event, length, "_call_full", &stem)) {
        *function = zm_model_intern(model, event, stem);
        return ZM_EVENT_API_CALL;
    }
    if (has_suffix(event, length, "_desc", &stem)) {
        /* Named: the model reads the queue group of zeCommandQueueCreate's and
         * zeCommandListCreateImmediate's descriptor (the engine a queue submits to). */
        *function = zm_model_intern(model, event, stem);
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

/* The plan being made for one class: the payload's members, found once each. */
struct planner {
    struct zm_decode_class *class;
    int index[M_COUNT];
    const bt_field_class *type[M_COUNT];
};

static bool present(const struct planner *planner, enum member member)
{
    return planner->index[member] >= 0;
}

/* Plans reading `member` into the field at `offset`, when the class has it with a type the
 * field takes; otherwise the field stays as the template has it. */
static void plan(struct planner *planner, enum member member, size_t offset, enum target target)
{
    const bt_field_class *type = planner->type[member];
    if (!present(planner, member))
        return;
    int step = -1;
    bool is_signed = is_type(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
    switch (target) {
    case T_U64:
    case T_U32:
        if (is_signed)
            step = target == T_U64 ? STEP_SIGNED_TO_U64 : STEP_SIGNED_TO_U32;
        else if (is_type(type, BT_FIELD_CLASS_TYPE_INTEGER))
            step = target == T_U64 ? STEP_UNSIGNED_TO_U64 : STEP_UNSIGNED_TO_U32;
        break;
    case T_STRING:
        if (is_type(type, BT_FIELD_CLASS_TYPE_STRING))
            step = STEP_STRING;
        break;
    case T_REAL:
        if (is_type(type, BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL))
            step = STEP_DOUBLE;
        else if (is_type(type, BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL))
            step = STEP_SINGLE;
        break;
    }
    if (step < 0)
        return;
    struct zm_decode_class *class = planner->class;
    class->steps[class->step_count++] = (struct step){
        .index = (uint32_t)planner->index[member], .offset = (uint16_t)offset, .type = (uint8_t)step};
}

#define PLAN(planner, member, field, target)                                                       \
    plan(planner, member, offsetof(struct zm_event, field), target)

/* The members each kind gives the model (docs/tracepoints.md). */
static void plan_payload(struct planner *planner)
{
    struct zm_decode_class *class = planner->class;
    struct zm_event *template = &class->template;
    switch (template->kind) {
    case ZM_EVENT_UNKNOWN:
        return;
    case ZM_EVENT_API_CALL:
        PLAN(planner, M_RESULT, result, T_U32);
        return;
    case ZM_EVENT_API_ENTRY:
        /* The list a zeCommandListDestroy/Reset is about: its appends can be forgotten. */
        PLAN(planner, M_COMMAND_LIST, list, T_U64);
        /* zeMemAlloc*'s size, zeMemFree's pointer: the model follows allocations. */
        PLAN(planner, M_SIZE, size, T_U64);
        PLAN(planner, M_PTR, address, T_U64);
        return;
    case ZM_EVENT_API_DESC: {
        /* A queue's group ordinal and index: `desc` of zeCommandQueueCreate, `altdesc` of
         * zeCommandListCreateImmediate; other descriptors have neither. */
        enum member ordinal = present(planner, M_DESC_ORDINAL) ? M_DESC_ORDINAL : M_ALTDESC_ORDINAL;
        template->queue_slot = present(planner, ordinal);
        PLAN(planner, ordinal, queue_ordinal, T_U32);
        PLAN(planner, ordinal + 1, queue_index, T_U32);
        return;
    }
    default:
        break;
    }
    PLAN(planner, M_RESULT, result, T_U32);
    PLAN(planner, M_PPTR_VAL, address, T_U64); /* zeMemAlloc*'s pointer */
    if (template->kind == ZM_EVENT_API_EXIT) { /* the queue or immediate list created */
        PLAN(planner, present(planner, M_QUEUE_VAL) ? M_QUEUE_VAL : M_LIST_VAL, created, T_U64);
        return;
    }
    if (template->kind == ZM_EVENT_FRAME) {
        PLAN(planner, M_SESSION, session, T_U64);
        PLAN(planner, M_WORKER, worker, T_U32);
        PLAN(planner, M_SEQUENCE, sequence, T_U64);
        return;
    }
    static const struct {
        enum member member;
        size_t offset;
        enum target target;
    } device_members[] = {
        {M_DEVICE, offsetof(struct zm_event, device), T_U64},
        {M_ANCHOR, offsetof(struct zm_event, anchor), T_U64},
        {M_SAMPLE, offsetof(struct zm_event, sample), T_U32},
        {M_DEVICE_TICKS, offsetof(struct zm_event, device_ticks), T_U64},
        {M_CALL_ID, offsetof(struct zm_event, call_id), T_U64},
        {M_EXECUTION, offsetof(struct zm_event, execution), T_U64},
        {M_QUEUE, offsetof(struct zm_event, queue), T_U64},
        {M_LIST, offsetof(struct zm_event, list), T_U64},
        {M_TIMER_HZ, offsetof(struct zm_event, timer_hz), T_U64},
        {M_GLOBAL_START, offsetof(struct zm_event, global_start), T_U64},
        {M_GLOBAL_END, offsetof(struct zm_event, global_end), T_U64},
        {M_BYTES, offsetof(struct zm_event, bytes), T_U64},
        {M_GROUPS, offsetof(struct zm_event, groups), T_U64},
        {M_DST, offsetof(struct zm_event, dst), T_U64},
        {M_SRC, offsetof(struct zm_event, src), T_U64},
        {M_STATUS, offsetof(struct zm_event, status), T_U32},
        {M_KERNEL_BITS, offsetof(struct zm_event, kernel_timestamp_valid_bits), T_U32},
        {M_NAME, offsetof(struct zm_event, name), T_STRING},
        {M_UUID, offsetof(struct zm_event, uuid), T_STRING},
        {M_KIND, offsetof(struct zm_event, append_kind), T_STRING},
    };
    for (size_t i = 0; i < sizeof(device_members) / sizeof(*device_members); i++)
        plan(planner, device_members[i].member, device_members[i].offset,
             device_members[i].target);
    if (template->kind == ZM_EVENT_DEVICE_PROPERTIES) {
        template->groups_known = present(planner, M_COMPUTE_GROUPS);
        PLAN(planner, M_COMPUTE_GROUPS, compute_groups, T_U32);
        PLAN(planner, M_COPY_GROUPS, copy_groups, T_U32);
    }
    if (template->kind == ZM_EVENT_KERNEL_SHAPE) {
        for (int i = 0; i < 3; i++) {
            size_t at = (size_t)i * sizeof(uint32_t);
            plan(planner, M_GROUP_COUNT_X + i, offsetof(struct zm_event, shape.count) + at, T_U32);
            plan(planner, M_GROUP_SIZE_X + i, offsetof(struct zm_event, shape.size) + at, T_U32);
        }
        PLAN(planner, M_SIMD, shape.simd, T_U32);
        template->shape.known = true;
    }
    if (template->kind == ZM_EVENT_DEVICE_SAMPLE) {
        PLAN(planner, M_VALID, valid, T_U32);
        PLAN(planner, M_ENGINE_ACTIVE, engine_active_us, T_U64);
        PLAN(planner, M_ENGINE_TIMESTAMP, engine_timestamp_us, T_U64);
        PLAN(planner, M_FREQUENCY, frequency_mhz, T_REAL);
        PLAN(planner, M_ENERGY, energy_uj, T_U64);
        PLAN(planner, M_ENERGY_TIMESTAMP, energy_timestamp_us, T_U64);
        PLAN(planner, M_MEMORY_USED, memory_used, T_U64);
    }
}

/* Learns `event_class` into `class`; -1 when out of memory. */
static int learn_class(struct zm_decoder *decoder, const bt_event_class *event_class,
                       struct zm_decode_class *class)
{
    memset(class, 0, sizeof(*class));
    const char *name = bt_event_class_get_name(event_class);
    const char *function = NULL;
    enum zm_event_kind kind = classify(decoder->model, name ? name : "", &function);
    bool api = kind == ZM_EVENT_API_ENTRY || kind == ZM_EVENT_API_EXIT ||
               kind == ZM_EVENT_API_CALL || kind == ZM_EVENT_API_DESC;
    if (api && !function)
        return -1; /* out of memory */
    class->template = (struct zm_event){.kind = kind, .function = function};
    class->info.kind = kind;
    class->info.process_name = name && strcmp(name, "zeprof_device:process") == 0;
    if (kind == ZM_EVENT_FRAME)
        class->template.frame_mark = frame_mark_of(name);

    struct planner planner = {.class = class};
    const bt_field_class *payload = bt_event_class_borrow_payload_field_class_const(event_class);
    for (int i = 0; i < M_COUNT; i++)
        planner.index[i] = find_member(payload, member_names[i], &planner.type[i]);
    plan_payload(&planner);
    class->call_start = kind == ZM_EVENT_API_CALL ? planner.index[M_CALL_START] : -1;
    class->call_start_signed = is_type(planner.type[M_CALL_START], BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
    if (class->call_start >= 0 &&
        !is_type(planner.type[M_CALL_START], BT_FIELD_CLASS_TYPE_INTEGER))
        class->call_start = -1; /* read as 0, as any member of the wrong type */

    const bt_stream_class *stream_class = bt_event_class_borrow_stream_class_const(event_class);
    const bt_field_class *context =
        bt_stream_class_borrow_event_common_context_field_class_const(stream_class);
    const bt_field_class *vpid_type, *vtid_type;
    class->vpid = find_member(context, "vpid", &vpid_type);
    class->vtid = find_member(context, "vtid", &vtid_type);
    class->vpid_signed = is_type(vpid_type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
    class->vtid_signed = is_type(vtid_type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
    if (!bt_stream_class_borrow_default_clock_class_const(stream_class))
        class->info.invalid = "events without a timestamp (the stream class has no clock)";
    else if ((vpid_type && !is_type(vpid_type, BT_FIELD_CLASS_TYPE_INTEGER)) ||
             (vtid_type && !is_type(vtid_type, BT_FIELD_CLASS_TYPE_INTEGER)))
        class->info.invalid = "the stream's vpid or vtid is not an integer";
    return 0;
}

const struct zm_decode_class *zm_decode_class_of(struct zm_decoder *decoder, const bt_event *event)
{
    const bt_event_class *event_class = bt_event_borrow_class_const(event);
    size_t slot =
        ((uintptr_t)event_class >> 4) % (sizeof(decoder->recent) / sizeof(*decoder->recent));
    if (decoder->recent[slot].event_class == event_class)
        return &decoder->classes[decoder->recent[slot].index];
    uint64_t *found = zm_map_find(&decoder->class_index, (uint64_t)(uintptr_t)event_class, 0);
    if (found) {
        decoder->recent[slot].event_class = event_class;
        decoder->recent[slot].index = *found;
        return &decoder->classes[*found];
    }
    if (ZM_GROW(decoder->classes, decoder->class_capacity, decoder->class_count + 1, 16) != 0)
        return NULL;
    struct zm_decode_class *class = &decoder->classes[decoder->class_count];
    if (learn_class(decoder, event_class, class) != 0 ||
        zm_map_put(&decoder->class_index, (uint64_t)(uintptr_t)event_class, 0,
                   decoder->class_count) != 0)
        return NULL;
    decoder->recent[slot].event_class = event_class;
    decoder->recent[slot].index = decoder->class_count++;
    return class;
}

static uint64_t integer_at(const bt_field *structure, uint32_t index, bool is_signed)
{
    const bt_field *field = bt_field_structure_borrow_member_field_by_index_const(structure, index);
    return is_signed ? (uint64_t)bt_field_integer_signed_get_value(field)
                     : bt_field_integer_unsigned_get_value(field);
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

void zm_decode_event(const struct zm_decode_class *class, const bt_event *event,
                     const bt_clock_snapshot *snapshot, int64_t ns, struct zm_event *out)
{
    *out = class->template;
    out->ns = ns;
    if (class->info.kind == ZM_EVENT_UNKNOWN)
        return;
    const bt_field *payload = bt_event_borrow_payload_field_const(event);
    char *base = (char *)out;
    for (uint32_t i = 0; i < class->step_count; i++) {
        const struct step *step = &class->steps[i];
        const bt_field *field =
            bt_field_structure_borrow_member_field_by_index_const(payload, step->index);
        uint64_t u64;
        uint32_t u32;
        const char *text;
        double real;
        switch ((enum step_type)step->type) {
        case STEP_SIGNED_TO_U64:
            u64 = (uint64_t)bt_field_integer_signed_get_value(field);
            memcpy(base + step->offset, &u64, sizeof(u64));
            break;
        case STEP_UNSIGNED_TO_U64:
            u64 = bt_field_integer_unsigned_get_value(field);
            memcpy(base + step->offset, &u64, sizeof(u64));
            break;
        case STEP_SIGNED_TO_U32:
            u32 = (uint32_t)bt_field_integer_signed_get_value(field);
            memcpy(base + step->offset, &u32, sizeof(u32));
            break;
        case STEP_UNSIGNED_TO_U32:
            u32 = (uint32_t)bt_field_integer_unsigned_get_value(field);
            memcpy(base + step->offset, &u32, sizeof(u32));
            break;
        case STEP_STRING:
            text = bt_field_string_get_value(field);
            memcpy(base + step->offset, &text, sizeof(text));
            break;
        case STEP_DOUBLE:
            real = bt_field_real_double_precision_get_value(field);
            memcpy(base + step->offset, &real, sizeof(real));
            break;
        case STEP_SINGLE:
            real = bt_field_real_single_precision_get_value(field);
            memcpy(base + step->offset, &real, sizeof(real));
            break;
        }
    }
    if (class->info.kind == ZM_EVENT_API_CALL)
        out->start_ns = call_start_ns(
            snapshot, ns,
            class->call_start < 0
                ? 0
                : integer_at(payload, (uint32_t)class->call_start, class->call_start_signed));
    const bt_field *context = bt_event_borrow_common_context_field_const(event);
    if (context && class->vpid >= 0)
        out->pid = (int64_t)integer_at(context, (uint32_t)class->vpid, class->vpid_signed);
    if (context && class->vtid >= 0)
        out->tid = (int64_t)integer_at(context, (uint32_t)class->vtid, class->vtid_signed);
}
