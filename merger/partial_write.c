/* partial_write: the partial file of --reduce, written from the model's spans (partial_write.h). */
#include "partial_write.h"

#include "grow.h"
#include "map.h"
#include "partial_format.h"
#include "stats.h"
#include "supervise.h"
#include "telemetry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Spans are encoded into `spans` and written out whenever it holds this much. */
#define SPAN_FLUSH_SIZE (256 * 1024)

/* Device work of one name on one device with one traffic direction and one launch shape: the
 * finest split of the device rows, of the memory traffic and of the kernel detail (-k). */
struct device_row {
    const char *name; /* Weak: interned by the model, as recorded */
    uint32_t label, direction;
    struct zm_kernel_shape key;   /* the shape as given: rows differ by every one of its fields */
    struct zm_kernel_shape shape; /* as written: all zero when not known */
    uint64_t calls, bytes;
    int64_t total_ns, min_ns, max_ns;
};

/* The rows in order of their first work, found by open addressing on a hash of the whole key
 * (a device span per event: formatting the key as text to intern it was 5% of a --reduce). */
struct device_table {
    struct device_row *rows; /* Owned by this */
    size_t count, capacity;
    uint32_t *slots;      /* Owned by this: index + 1 into rows, 0 when free */
    size_t slot_capacity; /* power of two, or 0 */
};

/* What the model held when the current host began: the host's share is what was added since. */
struct host_start {
    uint64_t zeprof_events;
    size_t processes, threads, devices, labels;
    struct zm_anomalies anomalies;
};

struct zm_partial_writer {
    const struct zm_model *model; /* Weak */
    char *path, *temp_path;       /* Owned by this */
    FILE *file;                   /* Owned by this */
    uint32_t host_count;
    bool spans;      /* spans are kept (not --no-spans) */
    bool supervised; /* the supervisor was told of temp_path */
    bool failed;     /* a write failed: the file is abandoned at the end */

    /* The current host */
    struct host_start start;
    struct zm_stats stats;         /* extended: the finest split, whatever the merge will print */
    struct zm_telemetry telemetry; /* per device of the host */
    struct device_table devices;   /* the host's device work (the API rows are in `stats`) */
    long spans_head;               /* offset of the spans section's size and hash */
    uint64_t spans_size, spans_hash;
    struct zm_partial_buffer span_bytes;
    struct zm_map strings; /* interned name -> its number in the spans section */
    uint64_t string_count;
    /* the last names seen, by pointer bits: most spans repeat a few names */
    struct {
        const char *name;
        uint64_t number;
    } recent[64];
    int64_t previous_ns; /* spans' times are deltas from the previous span's start */
};

static void fail(char *reason, int reason_size, const char *path, const char *why)
{
    char shown[1024];
    zm_supervise_escape_line(shown, sizeof(shown), path);
    snprintf(reason, (size_t)reason_size, "Failed to write partial: path=%s, reason=%s", shown,
             why);
}

struct zm_partial_writer *zm_partial_writer_open(const char *path, bool spans, bool supervised,
                                                 char *reason, int reason_size)
{
    struct stat status;
    if (stat(path, &status) == 0 && S_ISDIR(status.st_mode)) {
        fail(reason, reason_size, path, "is a directory");
        return NULL;
    }
    struct zm_partial_writer *writer = calloc(1, sizeof(*writer));
    size_t length = strlen(path);
    if (!writer || !(writer->path = strdup(path)) || !(writer->temp_path = malloc(length + 12))) {
        fail(reason, reason_size, path, "out of memory");
        if (writer)
            free(writer->path);
        free(writer);
        return NULL;
    }
    writer->spans = spans;
    writer->supervised = supervised;
    zm_stats_init(&writer->stats, true);
    zm_telemetry_init(&writer->telemetry);
    zm_map_init(&writer->strings);
    snprintf(writer->temp_path, length + 12, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(writer->temp_path);
    if (fd < 0 || !(writer->file = fdopen(fd, "w+b"))) {
        fail(reason, reason_size, path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(writer->temp_path);
        }
        free(writer->temp_path);
        writer->temp_path = NULL;
        zm_partial_writer_abort(writer);
        return NULL;
    }
    if (supervised)
        zm_supervise_temp_file(writer->temp_path);
    /* mkstemp makes it private; a partial is as readable as any file the user creates */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0)
        writer->failed = true;
    /* The header is written last, when the host count and the size are known. */
    static const unsigned char blank[ZM_PARTIAL_HEADER_SIZE];
    if (fwrite(blank, sizeof(blank), 1, writer->file) != 1)
        writer->failed = true;
    return writer;
}

void zm_partial_writer_attach(struct zm_partial_writer *writer, const struct zm_model *model)
{
    writer->model = model;
}

static void write_out(struct zm_partial_writer *writer, const void *bytes, size_t size)
{
    if (size && fwrite(bytes, size, 1, writer->file) != 1)
        writer->failed = true;
}

static void write_fixed64(struct zm_partial_writer *writer, uint64_t value)
{
    unsigned char encoded[8];
    for (int i = 0; i < 8; i++)
        encoded[i] = (unsigned char)(value >> (8 * i));
    write_out(writer, encoded, sizeof(encoded));
}

static void flush_spans(struct zm_partial_writer *writer)
{
    if (writer->span_bytes.failed)
        writer->failed = true;
    writer->spans_hash =
        zm_partial_hash(writer->spans_hash, writer->span_bytes.bytes, writer->span_bytes.size);
    writer->spans_size += writer->span_bytes.size;
    write_out(writer, writer->span_bytes.bytes, writer->span_bytes.size);
    writer->span_bytes.size = 0;
}

static int begin_host(void *context, uint32_t host, const char *hostname)
{
    (void)host;
    (void)hostname;
    struct zm_partial_writer *writer = context;
    const struct zm_model *model = writer->model;
    writer->start = (struct host_start){
        .zeprof_events = zm_model_zeprof_events(model),
        .processes = zm_model_process_count(model),
        .threads = zm_model_thread_count(model),
        .devices = zm_model_device_count(model),
        .labels = zm_model_device_label_count(model),
        .anomalies = *zm_model_anomalies(model),
    };
    zm_map_release(&writer->strings);
    writer->string_count = 0;
    memset(writer->recent, 0, sizeof(writer->recent));
    writer->previous_ns = 0;
    writer->spans_size = 0;
    writer->spans_hash = ZM_PARTIAL_FNV_OFFSET;
    writer->spans_head = ftell(writer->file);
    write_fixed64(writer, 0); /* size and hash, known at the host's end */
    write_fixed64(writer, 0);
    return writer->failed || writer->spans_head < 0 ? -1 : 0;
}

/* a - b, wrapping (the reader adds it back wrapping): any two times encode */
static int64_t difference(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* A launch shape: known or not, then its seven numbers when known. */
static void put_shape(struct zm_partial_buffer *out, const struct zm_kernel_shape *shape)
{
    zm_partial_put_u64(out, shape->known);
    if (!shape->known)
        return;
    for (int i = 0; i < 3; i++)
        zm_partial_put_u64(out, shape->count[i]);
    for (int i = 0; i < 3; i++)
        zm_partial_put_u64(out, shape->size[i]);
    zm_partial_put_u64(out, shape->simd);
}

/* A name in the spans section: its number, followed by its text the first time. */
static void put_name(struct zm_partial_writer *writer, const char *name)
{
    size_t slot = ((uintptr_t)name >> 4) % (sizeof(writer->recent) / sizeof(*writer->recent));
    if (writer->recent[slot].name == name) {
        zm_partial_put_u64(&writer->span_bytes, writer->recent[slot].number);
        return;
    }
    uint64_t *number = zm_map_find(&writer->strings, (uint64_t)(uintptr_t)name, 0);
    if (number) {
        zm_partial_put_u64(&writer->span_bytes, *number);
        writer->recent[slot].name = name;
        writer->recent[slot].number = *number;
        return;
    }
    zm_partial_put_u64(&writer->span_bytes, writer->string_count);
    zm_partial_put_string(&writer->span_bytes, name);
    if (zm_map_put(&writer->strings, (uint64_t)(uintptr_t)name, 0, writer->string_count) != 0)
        writer->span_bytes.failed = true;
    writer->recent[slot].name = name;
    writer->recent[slot].number = writer->string_count++;
}

static int span_written(struct zm_partial_writer *writer)
{
    if (writer->span_bytes.size >= SPAN_FLUSH_SIZE)
        flush_spans(writer);
    return writer->failed || writer->span_bytes.failed ? -1 : 0;
}

static void devices_release(struct device_table *devices)
{
    free(devices->rows);
    free(devices->slots);
    *devices = (struct device_table){0};
}

static bool same_shape(const struct zm_kernel_shape *a, const struct zm_kernel_shape *b)
{
    return a->known == b->known && a->simd == b->simd && a->count[0] == b->count[0] &&
           a->count[1] == b->count[1] && a->count[2] == b->count[2] && a->size[0] == b->size[0] &&
           a->size[1] == b->size[1] && a->size[2] == b->size[2];
}

static size_t device_key_hash(const struct zm_device_totals *work)
{
    const struct zm_kernel_shape *shape = &work->shape;
    uint64_t words[] = {(uint64_t)(uintptr_t)work->name,
                        (uint64_t)work->device_label << 32 | work->direction,
                        (uint64_t)shape->count[0] << 32 | shape->count[1],
                        (uint64_t)shape->count[2] << 32 | shape->size[0],
                        (uint64_t)shape->size[1] << 32 | shape->size[2],
                        (uint64_t)shape->simd << 1 | shape->known};
    uint64_t h = 0;
    for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++) {
        h = (h ^ words[i]) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    return (size_t)h;
}

/* The slot holding the row of `work`'s key, or the free slot where it belongs. */
static uint32_t *device_slot(const struct device_table *devices,
                             const struct zm_device_totals *work)
{
    size_t mask = devices->slot_capacity - 1;
    for (size_t i = device_key_hash(work) & mask;; i = (i + 1) & mask) {
        uint32_t *slot = &devices->slots[i];
        if (*slot == 0)
            return slot;
        const struct device_row *row = &devices->rows[*slot - 1];
        if (row->name == work->name && row->label == work->device_label &&
            row->direction == work->direction && same_shape(&row->key, &work->shape))
            return slot;
    }
}

/* Doubles the slots (load kept under 1/2); -1 when out of memory. */
static int grow_slots(struct device_table *devices)
{
    size_t capacity = devices->slot_capacity ? devices->slot_capacity * 2 : 64;
    uint32_t *slots = calloc(capacity, sizeof(*slots));
    if (!slots)
        return -1;
    free(devices->slots);
    devices->slots = slots;
    devices->slot_capacity = capacity;
    for (size_t r = 0; r < devices->count; r++) {
        const struct device_row *row = &devices->rows[r];
        struct zm_device_totals key = {.name = row->name,
                                       .device_label = row->label,
                                       .direction = row->direction,
                                       .shape = row->key};
        *device_slot(devices, &key) = (uint32_t)(r + 1);
    }
    return 0;
}

/* Adds executions to the row of their name, device, direction and shape; -1 when out of memory. */
static int add_device_work(struct device_table *devices, const struct zm_device_totals *work)
{
    if ((devices->count + 1) * 2 > devices->slot_capacity &&
        (devices->count >= UINT32_MAX - 1 || grow_slots(devices) != 0))
        return -1;
    uint32_t *slot = device_slot(devices, work);
    struct device_row *row;
    if (*slot) {
        row = &devices->rows[*slot - 1];
    } else {
        if (ZM_GROW(devices->rows, devices->capacity, devices->count + 1, 16) != 0)
            return -1;
        *slot = (uint32_t)(devices->count + 1);
        row = &devices->rows[devices->count++];
        *row = (struct device_row){.name = work->name,
                                   .label = work->device_label,
                                   .direction = work->direction,
                                   .key = work->shape,
                                   .shape = work->shape,
                                   .min_ns = INT64_MAX,
                                   .max_ns = INT64_MIN};
        if (!work->shape.known) /* an unknown shape's numbers mean nothing: written as zero */
            row->shape = (struct zm_kernel_shape){0};
    }
    row->calls += work->calls;
    row->bytes += work->bytes;
    row->total_ns = (int64_t)((uint64_t)row->total_ns + (uint64_t)work->total_ns);
    if (work->min_ns < row->min_ns)
        row->min_ns = work->min_ns;
    if (work->max_ns > row->max_ns)
        row->max_ns = work->max_ns;
    return 0;
}

static int api_span(void *context, const struct zm_api_span *span)
{
    struct zm_partial_writer *writer = context;
    if (!span->totalled && zm_stats_add_api(&writer->stats, span) != 0)
        return -1;
    if (!writer->spans)
        return 0;
    struct zm_partial_buffer *out = &writer->span_bytes;
    zm_partial_put_u64(out, 0u | (span->synthetic ? 2u : 0u));
    zm_partial_put_i64(out, span->pid);
    zm_partial_put_i64(out, span->tid);
    put_name(writer, span->function);
    zm_partial_put_i64(out, difference(span->start_ns, writer->previous_ns));
    zm_partial_put_i64(out, difference(span->end_ns, span->start_ns));
    zm_partial_put_u64(out, span->result);
    writer->previous_ns = span->start_ns;
    return span_written(writer);
}

static int device_span(void *context, const struct zm_device_span *span)
{
    struct zm_partial_writer *writer = context;
    if (!span->totalled) {
        struct zm_device_totals work = {.device_label = span->device_label,
                                        .name = span->name,
                                        .direction = span->direction,
                                        .shape = span->shape,
                                        .calls = 1,
                                        .bytes = span->bytes,
                                        .total_ns = span->duration_ns,
                                        .min_ns = span->duration_ns,
                                        .max_ns = span->duration_ns};
        zm_supervise_progress();
        if (add_device_work(&writer->devices, &work) != 0)
            return -1;
    }
    if (!writer->spans)
        return 0;
    struct zm_partial_buffer *out = &writer->span_bytes;
    zm_partial_put_u64(out, 1u | (span->anchored ? 2u : 0u) | (span->linked ? 4u : 0u) |
                                (span->engine.known ? 16u : 0u));
    zm_partial_put_i64(out, span->pid);
    zm_partial_put_u64(out, span->device_label - writer->start.labels);
    put_name(writer, span->device_name);
    zm_partial_put_u64(out, span->queue);
    put_name(writer, span->name);
    zm_partial_put_i64(out, difference(span->start_ns, writer->previous_ns));
    zm_partial_put_i64(out, difference(span->end_ns, span->start_ns));
    zm_partial_put_i64(out, span->uncertainty_ns);
    zm_partial_put_i64(out, span->duration_ns);
    zm_partial_put_u64(out, span->call_id);
    zm_partial_put_u64(out, span->execution);
    zm_partial_put_u64(out, span->bytes);
    zm_partial_put_u64(out, span->direction);
    put_shape(out, &span->shape);
    if (span->linked) {
        zm_partial_put_i64(out, span->api_tid);
        zm_partial_put_i64(out, difference(span->append_ns, span->start_ns));
    }
    if (span->engine.known) { /* the queue's engine, for the timeline's engine lanes */
        zm_partial_put_u64(out, span->engine.ordinal);
        zm_partial_put_u64(out, span->engine.index);
        zm_partial_put_u64(out, span->engine.kind);
    }
    writer->previous_ns = span->start_ns;
    return span_written(writer);
}

static int counter(void *context, const struct zm_counter_sample *sample)
{
    struct zm_partial_writer *writer = context;
    if (!sample->totalled && zm_telemetry_add(&writer->telemetry, sample) != 0)
        return -1;
    if (!writer->spans)
        return 0;
    struct zm_partial_buffer *out = &writer->span_bytes;
    double value = sample->value;
    uint64_t bits;
    memcpy(&bits, &value, sizeof(bits));
    zm_partial_put_u64(out, 8);
    zm_partial_put_i64(out, sample->pid);
    zm_partial_put_u64(out, sample->device_label - writer->start.labels);
    put_name(writer, sample->device_name);
    zm_partial_put_u64(out, (uint64_t)sample->kind);
    zm_partial_put_i64(out, difference(sample->time_ns, writer->previous_ns));
    zm_partial_put_i64(out, sample->interval_ns);
    zm_partial_put_fixed64(out, bits);
    writer->previous_ns = sample->time_ns;
    return span_written(writer);
}

static int telemetry_totals(void *context, const struct zm_telemetry_row *row)
{
    struct zm_partial_writer *writer = context;
    return zm_telemetry_add_row(&writer->telemetry, row);
}

static int api_totals(void *context, const struct zm_api_totals *totals)
{
    struct zm_partial_writer *writer = context;
    return zm_stats_add_api_totals(&writer->stats, totals);
}

static int device_totals(void *context, const struct zm_device_totals *totals)
{
    struct zm_partial_writer *writer = context;
    return add_device_work(&writer->devices, totals);
}

/* The current host's frame marks, in the order the model's index holds its frames (so that a
 * reader rebuilds the same index), each side's begin before its end. */
static void put_frames(struct zm_partial_buffer *out, const struct zm_remote_index *frames,
                       uint32_t host)
{
    struct zm_partial_buffer marks = {0};
    uint64_t count = 0;
    for (size_t i = 0; i < zm_remote_index_count(frames); i++) {
        const struct zm_remote_frame *frame = zm_remote_index_frame(frames, i);
        const struct zm_remote_side *sides[2] = {&frame->caller, &frame->peer};
        for (int s = 0; s < 2; s++) {
            const struct zm_remote_side *side = sides[s];
            if (side->host != (int)host || !(side->have_begin || side->have_end))
                continue;
            for (int end = 0; end < 2; end++) {
                if (!(end ? side->have_end : side->have_begin))
                    continue;
                enum zm_remote_mark mark =
                    s == 0 ? (end ? ZM_REMOTE_DISPATCH_END : ZM_REMOTE_DISPATCH_BEGIN)
                           : (end ? ZM_REMOTE_SERVE_END : ZM_REMOTE_SERVE_BEGIN);
                zm_partial_put_u64(&marks, (uint64_t)mark);
                zm_partial_put_u64(&marks, frame->key.session);
                zm_partial_put_u64(&marks, frame->key.worker);
                zm_partial_put_u64(&marks, frame->key.sequence);
                zm_partial_put_i64(&marks, side->pid);
                zm_partial_put_i64(&marks, end ? side->end_ns : side->begin_ns);
                count++;
            }
        }
    }
    zm_partial_put_u64(out, count);
    zm_partial_put_bytes(out, marks.bytes, marks.size);
    if (marks.failed)
        out->failed = true;
    zm_partial_buffer_release(&marks);
}

static void put_double(struct zm_partial_buffer *out, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof(bits));
    zm_partial_put_fixed64(out, bits); /* bit for bit: sums of doubles are not regrouped */
}

/* The host's device telemetry rows, in the order their devices were first sampled. */
static void put_telemetry(struct zm_partial_buffer *out, const struct zm_telemetry *telemetry,
                          size_t label_base)
{
    zm_partial_put_u64(out, telemetry->count);
    for (size_t i = 0; i < telemetry->count; i++) {
        const struct zm_telemetry_row *row = &telemetry->rows[i];
        zm_partial_put_u64(out, row->device_label - label_base);
        zm_partial_put_string(out, row->device_name);
        zm_partial_put_u64(out, row->samples);
        zm_partial_put_i64(out, row->first_ns);
        zm_partial_put_i64(out, row->last_ns);
        zm_partial_put_i64(out, row->busy_interval_ns);
        put_double(out, row->busy_ns);
        put_double(out, row->utilization_max);
        put_double(out, row->frequency_sum);
        zm_partial_put_u64(out, row->frequency_count);
        zm_partial_put_i64(out, row->power_interval_ns);
        put_double(out, row->energy_j);
        put_double(out, row->memory_peak_mib);
        zm_partial_put_u64(out, row->has_memory);
    }
}

static void put_summary(struct zm_partial_writer *writer, struct zm_partial_buffer *out)
{
    const struct zm_model *model = writer->model;
    uint32_t host = zm_model_host_count(model) - 1;
    const struct zm_host *record = zm_model_host(model, host);
    const struct host_start *start = &writer->start;
    zm_partial_put_string(out, record->hostname);
    /* flags: 1, the spans section holds the host's spans */
    zm_partial_put_u64(out, writer->spans && !record->spans_omitted ? 1 : 0);
    zm_partial_put_i64(out, record->first_ns);
    zm_partial_put_i64(out, record->last_ns);
    zm_partial_put_u64(out, record->seen_event);
    zm_partial_put_u64(out, zm_model_zeprof_events(model) - start->zeprof_events);
    zm_partial_put_u64(out, zm_model_process_count(model) - start->processes);
    zm_partial_put_u64(out, zm_model_thread_count(model) - start->threads);
    /* Every counter but placement's two (found later, job-wide), by position in the struct. */
    const uint64_t *now = (const uint64_t *)zm_model_anomalies(model);
    const uint64_t *before = (const uint64_t *)&start->anomalies;
    size_t counters = offsetof(struct zm_anomalies, dropped_windows) / sizeof(uint64_t);
    zm_partial_put_u64(out, counters);
    for (size_t i = 0; i < counters; i++)
        zm_partial_put_u64(out, now[i] - before[i]);

    size_t labels = zm_model_device_label_count(model);
    zm_partial_put_u64(out, labels - start->labels);
    for (size_t i = start->labels; i < labels; i++) {
        const struct zm_device_label *label = zm_model_device_label(model, (uint32_t)i);
        zm_partial_put_string(out, label->uuid);
        zm_partial_put_string(out, label->name);
    }
    size_t devices = zm_model_device_count(model);
    zm_partial_put_u64(out, devices - start->devices);
    for (size_t i = start->devices; i < devices; i++) {
        const struct zm_device *device = zm_model_device(model, i);
        zm_partial_put_i64(out, device->pid);
        zm_partial_put_u64(out, device->handle);
        zm_partial_put_u64(out, device->label - start->labels);
        zm_partial_put_string(out, device->name);
        zm_partial_put_u64(out, device->clock.timer_hz);
        zm_partial_put_u64(out, device->clock.kernel_bits);
        zm_partial_put_u64(out, device->clock.count);
        for (size_t a = 0; a < device->clock.count; a++) {
            const struct zm_anchor *anchor = &device->clock.anchors[a];
            zm_partial_put_u64(out, anchor->id);
            zm_partial_put_i64(out, anchor->ns);
            zm_partial_put_u64(out, anchor->ticks);
            zm_partial_put_i64(out, anchor->uncertainty_ns);
        }
    }
    put_frames(out, zm_model_frames(model), host);

    const struct zm_stat_table *api = &writer->stats.api;
    zm_partial_put_u64(out, api->count);
    for (size_t i = 0; i < api->count; i++) {
        const struct zm_stat_row *row = &api->rows[i];
        zm_partial_put_string(out, row->name);
        zm_partial_put_i64(out, row->pid);
        zm_partial_put_i64(out, row->tid);
        zm_partial_put_u64(out, row->calls);
        zm_partial_put_u64(out, row->errors);
        zm_partial_put_i64(out, row->total_ns);
        zm_partial_put_i64(out, row->min_ns);
        zm_partial_put_i64(out, row->max_ns);
    }
    const struct device_table *work = &writer->devices;
    zm_partial_put_u64(out, work->count);
    for (size_t i = 0; i < work->count; i++) {
        const struct device_row *row = &work->rows[i];
        zm_partial_put_string(out, row->name);
        zm_partial_put_u64(out, row->label - start->labels);
        zm_partial_put_u64(out, row->direction);
        put_shape(out, &row->shape);
        zm_partial_put_u64(out, row->calls);
        zm_partial_put_u64(out, row->bytes);
        zm_partial_put_i64(out, row->total_ns);
        zm_partial_put_i64(out, row->min_ns);
        zm_partial_put_i64(out, row->max_ns);
    }
    put_telemetry(out, &writer->telemetry, start->labels);
}

static int end_host(void *context)
{
    struct zm_partial_writer *writer = context;
    flush_spans(writer);
    long end = ftell(writer->file);
    if (end < 0 || fseek(writer->file, writer->spans_head, SEEK_SET) != 0)
        writer->failed = true;
    write_fixed64(writer, writer->spans_size);
    write_fixed64(writer, writer->spans_hash);
    if (fseek(writer->file, end, SEEK_SET) != 0)
        writer->failed = true;
    struct zm_partial_buffer summary = {0};
    put_summary(writer, &summary);
    if (summary.failed)
        writer->failed = true;
    write_fixed64(writer, summary.size);
    write_fixed64(writer, zm_partial_hash(ZM_PARTIAL_FNV_OFFSET, summary.bytes, summary.size));
    write_out(writer, summary.bytes, summary.size);
    zm_partial_buffer_release(&summary);
    zm_stats_release(&writer->stats);
    zm_stats_init(&writer->stats, true);
    zm_telemetry_release(&writer->telemetry);
    devices_release(&writer->devices);
    writer->host_count++;
    return writer->failed ? -1 : 0;
}

struct zm_span_sink zm_partial_writer_sink(struct zm_partial_writer *writer)
{
    return (struct zm_span_sink){
        .begin_host = begin_host,
        .api_span = api_span,
        .device_span = device_span,
        .end_host = end_host,
        .context = writer,
        .counter = counter,
        .api_totals = api_totals,
        .device_totals = device_totals,
        .telemetry_totals = telemetry_totals,
    };
}

int zm_partial_writer_finish(struct zm_partial_writer *writer, char *reason, int reason_size)
{
    long size = ftell(writer->file);
    struct zm_partial_buffer header = {0};
    zm_partial_put_bytes(&header, ZM_PARTIAL_MAGIC, ZM_PARTIAL_MAGIC_SIZE);
    unsigned char counts[8];
    for (int i = 0; i < 4; i++) {
        counts[i] = (unsigned char)(ZM_PARTIAL_VERSION >> (8 * i));
        counts[4 + i] = (unsigned char)(writer->host_count >> (8 * i));
    }
    zm_partial_put_bytes(&header, counts, sizeof(counts));
    zm_partial_put_fixed64(&header, (uint64_t)size);
    zm_partial_put_fixed64(&header, zm_partial_hash(ZM_PARTIAL_FNV_OFFSET, header.bytes, 24));
    if (size < 0 || header.failed || fseek(writer->file, 0, SEEK_SET) != 0)
        writer->failed = true;
    write_out(writer, header.bytes, header.size);
    zm_partial_buffer_release(&header);
    int closed = fclose(writer->file);
    writer->file = NULL;
    if (writer->failed || closed != 0) {
        fail(reason, reason_size, writer->path,
             errno ? strerror(errno) : "cannot write the temporary file");
        zm_partial_writer_abort(writer);
        return -1;
    }
    if (rename(writer->temp_path, writer->path) != 0) {
        fail(reason, reason_size, writer->path, strerror(errno));
        zm_partial_writer_abort(writer);
        return -1;
    }
    if (writer->supervised)
        zm_supervise_temp_file(NULL);
    free(writer->temp_path);
    writer->temp_path = NULL;
    zm_partial_writer_abort(writer);
    return 0;
}

void zm_partial_writer_abort(struct zm_partial_writer *writer)
{
    if (!writer)
        return;
    if (writer->file)
        fclose(writer->file);
    if (writer->temp_path) {
        unlink(writer->temp_path);
        if (writer->supervised)
            zm_supervise_temp_file(NULL);
    }
    zm_stats_release(&writer->stats);
    zm_telemetry_release(&writer->telemetry);
    devices_release(&writer->devices);
    zm_map_release(&writer->strings);
    zm_partial_buffer_release(&writer->span_bytes);
    free(writer->temp_path);
    free(writer->path);
    free(writer);
}
