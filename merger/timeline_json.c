/*
 * timeline_json: the timeline as Chrome Trace Event JSON (docs/interface.md "The timeline"), one
 * of the two formats behind timeline_format.h. Lanes are Chrome pid/tid numbers named by "M"
 * events, slices "X" events, flows an "s" at the append and an "f" (binding to the enclosing
 * slice's end, "bp":"e") at the device slice; the metadata closes the file.
 */
#include "timeline_format.h"

#include "jsonout.h"

#include <stdlib.h>
#include <string.h>

struct json_writer {
    struct zm_jsonout text; /* buffers the output (its stream borrowed) */
    FILE *out;              /* Weak */
    bool first_event;
};

static void *json_new(FILE *out)
{
    struct json_writer *writer = calloc(1, sizeof(*writer));
    if (!writer)
        return NULL;
    writer->out = out;
    writer->first_event = true;
    zm_jsonout_init(&writer->text, out);
    zm_jsonout_literal(&writer->text, "{\"traceEvents\":[\n");
    return writer;
}

static void json_free(void *context)
{
    struct json_writer *writer = context;
    if (!writer)
        return;
    zm_jsonout_release(&writer->text);
    free(writer);
}

static void separator(struct json_writer *writer)
{
    if (!writer->first_event)
        zm_jsonout_literal(&writer->text, ",\n");
    writer->first_event = false;
}

/* The start of a "M" event naming or ordering lane (pid, tid), up to its `args` key `key`. */
static void metadata_event(struct json_writer *writer, int64_t ts_ns, const char *name,
                           uint32_t pid, uint32_t tid, const char *key)
{
    struct zm_jsonout *text = &writer->text;
    separator(writer);
    zm_jsonout_literal(text, "{\"ph\":\"M\",\"ts\":");
    zm_jsonout_micros(text, ts_ns);
    zm_jsonout_literal(text, ",\"name\":\"");
    zm_jsonout_raw(text, name, strlen(name));
    zm_jsonout_literal(text, "\",\"pid\":");
    zm_jsonout_u64(text, pid);
    zm_jsonout_literal(text, ",\"tid\":");
    zm_jsonout_u64(text, tid);
    zm_jsonout_literal(text, ",\"args\":{\"");
    zm_jsonout_raw(text, key, strlen(key));
    zm_jsonout_literal(text, "\":");
}

static int json_lane(void *context, const struct zm_timeline_lane *lane, int64_t ts_ns)
{
    struct json_writer *writer = context;
    struct zm_jsonout *text = &writer->text;
    bool process = lane->kind == ZM_LANE_PROCESS || lane->kind == ZM_LANE_DEVICE;
    if (lane->kind == ZM_LANE_ENGINE)
        return 0; /* Chrome has no lanes within lanes: a queue lane's name and order tell */
    metadata_event(writer, ts_ns, process ? "process_name" : "thread_name", lane->process,
                   process ? 0 : lane->number, "name");
    zm_jsonout_string(text, lane->name);
    zm_jsonout_literal(text, "}}");
    if (lane->sort_index > 0) { /* the queue lanes of one engine together */
        metadata_event(writer, ts_ns, "thread_sort_index", lane->process, lane->number,
                       "sort_index");
        zm_jsonout_u64(text, lane->sort_index);
        zm_jsonout_literal(text, "}}");
    }
    zm_jsonout_maybe_flush(text);
    return text->failed ? -1 : 0;
}

static void flow_event(struct zm_jsonout *text, const char *phase, int64_t ts, uint64_t flow,
                       uint32_t pid, uint32_t tid)
{
    zm_jsonout_raw(text, phase, strlen(phase));
    zm_jsonout_literal(text, ",\"cat\":\"append\",\"name\":\"append\",\"ts\":");
    zm_jsonout_micros(text, ts);
    zm_jsonout_literal(text, ",\"id\":");
    zm_jsonout_u64(text, flow);
    zm_jsonout_literal(text, ",\"pid\":");
    zm_jsonout_u64(text, pid);
    zm_jsonout_literal(text, ",\"tid\":");
    zm_jsonout_u64(text, tid);
    zm_jsonout_literal(text, "}");
}

static int json_slice(void *context, const struct zm_timeline_slice *slice)
{
    struct json_writer *writer = context;
    struct zm_jsonout *text = &writer->text;
    separator(writer);
    if (slice->device)
        zm_jsonout_literal(text, "{\"ph\":\"X\",\"cat\":\"device\",\"name\":");
    else
        zm_jsonout_literal(text, "{\"ph\":\"X\",\"cat\":\"api\",\"name\":");
    zm_jsonout_string(text, slice->name);
    zm_jsonout_literal(text, ",\"ts\":");
    zm_jsonout_micros(text, slice->ts_ns);
    zm_jsonout_literal(text, ",\"dur\":");
    zm_jsonout_micros(text, slice->duration_ns);
    zm_jsonout_literal(text, ",\"pid\":");
    zm_jsonout_u64(text, slice->process);
    zm_jsonout_literal(text, ",\"tid\":");
    zm_jsonout_u64(text, slice->lane);
    zm_jsonout_literal(text, ",\"args\":{\"host\":");
    zm_jsonout_string(text, slice->hostname);
    if (slice->placement_bound_ns > 0) {
        /* A peer host placed from frames: how far this span may be from where it is drawn. */
        zm_jsonout_literal(text, ",\"placement_bound_ns\":");
        zm_jsonout_i64(text, slice->placement_bound_ns);
    }
    if (!slice->device) {
        zm_jsonout_literal(text, ",\"pid\":");
        zm_jsonout_i64(text, slice->pid);
        zm_jsonout_literal(text, ",\"tid\":");
        zm_jsonout_i64(text, slice->tid);
        zm_jsonout_literal(text, ",\"result\":");
        zm_jsonout_u64(text, slice->result);
        if (slice->synthetic)
            zm_jsonout_literal(text, ",\"synthetic\":true");
        zm_jsonout_literal(text, "}}");
    } else {
        zm_jsonout_literal(text, ",\"device\":");
        zm_jsonout_string(text, slice->device_name);
        zm_jsonout_literal(text, ",\"uncertainty_ns\":");
        zm_jsonout_i64(text, slice->uncertainty_ns);
        zm_jsonout_literal(text, ",\"pid\":");
        zm_jsonout_i64(text, slice->pid);
        zm_jsonout_literal(text, ",\"queue\":\"");
        zm_jsonout_hex(text, slice->queue);
        zm_jsonout_literal(text, "\",\"call_id\":");
        zm_jsonout_u64(text, slice->call_id);
        zm_jsonout_literal(text, ",\"execution\":");
        zm_jsonout_u64(text, slice->execution);
        zm_jsonout_literal(text, "}}");
        if (slice->flow) {
            separator(writer);
            flow_event(text, "{\"ph\":\"f\",\"bp\":\"e\"", slice->ts_ns, slice->flow,
                       slice->process, slice->lane);
        }
    }
    zm_jsonout_maybe_flush(text);
    return text->failed ? -1 : 0;
}

static int json_flow_start(void *context, int64_t ts_ns, uint64_t flow, uint32_t process,
                           uint32_t lane)
{
    struct json_writer *writer = context;
    separator(writer);
    flow_event(&writer->text, "{\"ph\":\"s\"", ts_ns, flow, process, lane);
    zm_jsonout_maybe_flush(&writer->text);
    return writer->text.failed ? -1 : 0;
}

static int json_counter(void *context, const struct zm_timeline_counter *counter)
{
    struct json_writer *writer = context;
    struct zm_jsonout *text = &writer->text;
    char value[64];
    int length = snprintf(value, sizeof(value), "%.3f", counter->value);
    separator(writer);
    zm_jsonout_literal(text, "{\"ph\":\"C\",\"cat\":\"telemetry\",\"name\":\"");
    zm_jsonout_raw(text, counter->name, strlen(counter->name));
    zm_jsonout_literal(text, "\",\"ts\":");
    zm_jsonout_micros(text, counter->ts_ns);
    zm_jsonout_literal(text, ",\"pid\":");
    zm_jsonout_u64(text, counter->process);
    zm_jsonout_literal(text, ",\"args\":{\"value\":");
    zm_jsonout_raw(text, value, length > 0 ? (size_t)length : 0);
    zm_jsonout_literal(text, "}}");
    zm_jsonout_maybe_flush(text);
    return text->failed ? -1 : 0;
}

static int json_end(void *context, json_t *metadata)
{
    struct json_writer *writer = context;
    zm_jsonout_literal(&writer->text, "\n],\"displayTimeUnit\":\"ns\",\"metadata\":");
    if (zm_jsonout_flush(&writer->text) != 0)
        return -1;
    if (json_dumpf(metadata, writer->out, JSON_COMPACT) != 0)
        return -1;
    fputs("}\n", writer->out);
    return ferror(writer->out) ? -1 : 0;
}

const struct zm_timeline_format zm_timeline_json_format = {
    .new = json_new,
    .lane = json_lane,
    .slice = json_slice,
    .flow_start = json_flow_start,
    .counter = json_counter,
    .end = json_end,
    .free = json_free,
};
