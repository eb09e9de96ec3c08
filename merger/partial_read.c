/* partial_read: a partial file replayed into the model and its sink (partial_read.h). */
#include "partial_read.h"

#include "grow.h"
#include "partial_format.h"
#include "supervise.h"
#include "telemetry.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int64_t wrapping_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* Times and durations past 2^62 ns (146 years) no trace gives; refused, the difference or sum of
 * any two of those left fits in 64 bits, which the timeline and the placement rely on (a partial
 * fuzzed with INT64_MIN as a span's start made them overflow). */
#define TIME_LIMIT_NS ((int64_t)1 << 62)

/* `value` if it is a time within the limit; else the cursor fails. */
static int64_t checked_time(struct zm_partial_cursor *cursor, int64_t value)
{
    if (value > TIME_LIMIT_NS || value < -TIME_LIMIT_NS)
        cursor->failed = true;
    return value;
}

/* A row's count of calls past 2^48 no host records; refused, the sums of rows stay far from
 * wrapping (a wrapped count of 0 would divide by zero in the tally). */
#define CALLS_LIMIT ((uint64_t)1 << 48)

/* A time or duration of the section. */
static int64_t get_time(struct zm_partial_cursor *cursor)
{
    return checked_time(cursor, zm_partial_get_i64(cursor));
}

bool zm_partial_is_file(const char *path)
{
    struct stat status;
    return stat(path, &status) == 0 && !S_ISDIR(status.st_mode);
}

struct replay {
    struct zm_model *model; /* Weak */
    const struct zm_span_sink *sink;
    uint32_t host, label_base;
    char why[256];
};

/* A string of a section, interned by the model; NULL (and `why` said) when corrupt. */
static const char *get_name(struct replay *replay, struct zm_partial_cursor *cursor)
{
    size_t length;
    const char *text = zm_partial_get_string(cursor, &length);
    if (!text)
        return NULL;
    if (memchr(text, '\0', length)) {
        cursor->failed = true;
        return NULL;
    }
    const char *name = zm_model_intern(replay->model, text, length);
    if (!name)
        snprintf(replay->why, sizeof(replay->why), "out of memory");
    return name;
}

static int check_label(struct replay *replay, struct zm_partial_cursor *cursor, uint64_t local,
                       uint32_t *label)
{
    if (local >= zm_model_device_label_count(replay->model) - replay->label_base) {
        cursor->failed = true;
        return -1;
    }
    *label = replay->label_base + (uint32_t)local;
    return 0;
}

static int replay_devices(struct replay *replay, struct zm_partial_cursor *in)
{
    uint64_t labels = zm_partial_get_u64(in);
    for (uint64_t i = 0; i < labels && !in->failed; i++) {
        const char *uuid = get_name(replay, in), *name = uuid ? get_name(replay, in) : NULL;
        uint32_t label;
        if (!name || zm_model_replay_label(replay->model, uuid, name, &label) != 0)
            return -1;
    }
    uint64_t devices = zm_partial_get_u64(in);
    for (uint64_t i = 0; i < devices && !in->failed; i++) {
        int64_t pid = zm_partial_get_i64(in);
        uint64_t handle = zm_partial_get_u64(in);
        uint32_t label;
        if (check_label(replay, in, zm_partial_get_u64(in), &label) != 0)
            return -1;
        const char *name = get_name(replay, in);
        if (!name)
            return -1;
        struct zm_clock clock = {0};
        clock.timer_hz = zm_partial_get_u64(in);
        clock.kernel_bits = (unsigned)zm_partial_get_u64(in);
        uint64_t anchors = zm_partial_get_u64(in);
        if (anchors > (uint64_t)(in->end - in->at)) { /* each takes 4 bytes at least */
            in->failed = true;
            return -1;
        }
        int status = 0;
        for (uint64_t a = 0; a < anchors && status == 0 && !in->failed; a++) {
            struct zm_anchor anchor;
            anchor.id = zm_partial_get_u64(in);
            anchor.ns = get_time(in);
            anchor.ticks = zm_partial_get_u64(in);
            anchor.uncertainty_ns = get_time(in);
            status = zm_clock_add_anchor(&clock, &anchor);
        }
        if (status == 0 && !in->failed)
            status = zm_model_replay_device(replay->model, pid, handle, label, name, &clock);
        zm_clock_release(&clock);
        if (status != 0) {
            snprintf(replay->why, sizeof(replay->why), "out of memory");
            return -1;
        }
    }
    return in->failed ? -1 : 0;
}

static int replay_frames(struct replay *replay, struct zm_partial_cursor *in)
{
    uint64_t marks = zm_partial_get_u64(in);
    for (uint64_t i = 0; i < marks && !in->failed; i++) {
        uint64_t mark = zm_partial_get_u64(in);
        struct zm_remote_key key;
        key.session = zm_partial_get_u64(in);
        key.worker = (uint32_t)zm_partial_get_u64(in);
        key.sequence = zm_partial_get_u64(in);
        int64_t pid = zm_partial_get_i64(in);
        int64_t ns = get_time(in);
        if (in->failed || mark > ZM_REMOTE_SERVE_END) {
            in->failed = true;
            return -1;
        }
        if (zm_model_replay_frame(replay->model, (enum zm_remote_mark)mark, &key, pid, ns) != 0) {
            snprintf(replay->why, sizeof(replay->why), "%s",
                     zm_model_error(replay->model)[0] ? zm_model_error(replay->model)
                                                      : "out of memory");
            return -1;
        }
    }
    return in->failed ? -1 : 0;
}

/* A launch shape as put_shape wrote it. */
static void get_shape(struct zm_partial_cursor *in, struct zm_kernel_shape *shape)
{
    *shape = (struct zm_kernel_shape){0};
    uint64_t known = zm_partial_get_u64(in);
    if (known > 1) {
        in->failed = true;
        return;
    }
    shape->known = known;
    if (!known)
        return;
    for (int i = 0; i < 3; i++)
        shape->count[i] = (uint32_t)zm_partial_get_u64(in);
    for (int i = 0; i < 3; i++)
        shape->size[i] = (uint32_t)zm_partial_get_u64(in);
    shape->simd = (uint32_t)zm_partial_get_u64(in);
}

static int replay_totals(struct replay *replay, struct zm_partial_cursor *in)
{
    const struct zm_span_sink *sink = replay->sink;
    uint64_t rows = zm_partial_get_u64(in);
    for (uint64_t i = 0; i < rows && !in->failed; i++) {
        struct zm_api_totals totals = {.host = replay->host};
        if (!(totals.function = get_name(replay, in)))
            return -1;
        totals.pid = zm_partial_get_i64(in);
        totals.tid = zm_partial_get_i64(in);
        totals.calls = zm_partial_get_u64(in);
        totals.errors = zm_partial_get_u64(in);
        totals.total_ns = get_time(in);
        totals.min_ns = get_time(in);
        totals.max_ns = get_time(in);
        /* never written: a row holds at least one span, and errors are some of its calls */
        if (totals.calls == 0 || totals.calls > CALLS_LIMIT || totals.errors > totals.calls)
            in->failed = true;
        if (!in->failed && sink->api_totals && sink->api_totals(sink->context, &totals) != 0) {
            snprintf(replay->why, sizeof(replay->why), "out of memory");
            return -1;
        }
    }
    rows = zm_partial_get_u64(in);
    for (uint64_t i = 0; i < rows && !in->failed; i++) {
        struct zm_device_totals totals = {.host = replay->host};
        if (!(totals.name = get_name(replay, in)) ||
            check_label(replay, in, zm_partial_get_u64(in), &totals.device_label) != 0)
            return -1;
        totals.direction = (uint32_t)zm_partial_get_u64(in);
        get_shape(in, &totals.shape);
        totals.calls = zm_partial_get_u64(in);
        totals.bytes = zm_partial_get_u64(in);
        totals.total_ns = get_time(in);
        totals.min_ns = get_time(in);
        totals.max_ns = get_time(in);
        if (totals.calls == 0 || totals.calls > CALLS_LIMIT)
            in->failed = true;
        if (!in->failed && sink->device_totals &&
            sink->device_totals(sink->context, &totals) != 0) {
            snprintf(replay->why, sizeof(replay->why), "out of memory");
            return -1;
        }
    }
    return in->failed ? -1 : 0;
}

/* A double of the section: finite, as every value and sum the writer is given (a NaN would be
 * written into the timeline's JSON as no number at all). */
static double get_double(struct zm_partial_cursor *in)
{
    uint64_t bits = zm_partial_get_fixed64(in);
    double value;
    memcpy(&value, &bits, sizeof(value));
    if (!isfinite(value))
        in->failed = true;
    return value;
}

static int replay_telemetry(struct replay *replay, struct zm_partial_cursor *in)
{
    const struct zm_span_sink *sink = replay->sink;
    uint64_t rows = zm_partial_get_u64(in);
    for (uint64_t i = 0; i < rows && !in->failed; i++) {
        struct zm_telemetry_row row = {.host = replay->host};
        if (check_label(replay, in, zm_partial_get_u64(in), &row.device_label) != 0 ||
            !(row.device_name = get_name(replay, in)))
            return -1;
        row.samples = zm_partial_get_u64(in);
        row.first_ns = get_time(in);
        row.last_ns = get_time(in);
        row.busy_interval_ns = get_time(in);
        row.busy_ns = get_double(in);
        row.utilization_max = get_double(in);
        row.frequency_sum = get_double(in);
        row.frequency_count = zm_partial_get_u64(in);
        row.power_interval_ns = get_time(in);
        row.energy_j = get_double(in);
        row.memory_peak_mib = get_double(in);
        row.has_memory = zm_partial_get_u64(in) != 0;
        if (!in->failed && sink->telemetry_totals &&
            sink->telemetry_totals(sink->context, &row) != 0) {
            snprintf(replay->why, sizeof(replay->why), "out of memory");
            return -1;
        }
    }
    return in->failed ? -1 : 0;
}

/* The summary section of one host, begun in the model. */
static int replay_summary(struct replay *replay, struct zm_partial_cursor *in, bool spans_omitted)
{
    struct zm_replayed_host host = {.spans_omitted = spans_omitted};
    host.first_ns = get_time(in);
    host.last_ns = get_time(in);
    host.seen_event = zm_partial_get_u64(in) != 0;
    host.zeprof_events = zm_partial_get_u64(in);
    host.processes = zm_partial_get_u64(in);
    host.threads = zm_partial_get_u64(in);
    uint64_t counters = zm_partial_get_u64(in);
    uint64_t *anomalies = (uint64_t *)&host.anomalies;
    if (counters != offsetof(struct zm_anomalies, dropped_windows) / sizeof(uint64_t)) {
        in->failed = true;
        return -1;
    }
    for (uint64_t i = 0; i < counters; i++)
        anomalies[i] = zm_partial_get_u64(in);
    if (in->failed || zm_model_replay_host(replay->model, &host) != 0)
        return -1;
    if (replay_devices(replay, in) != 0 || replay_frames(replay, in) != 0 ||
        replay_totals(replay, in) != 0 || replay_telemetry(replay, in) != 0)
        return -1;
    return in->at == in->end ? 0 : -1; /* nothing may follow */
}

/* The names of a spans section, numbered in their order of first use. */
struct name_table {
    const char **names; /* Owned by this; the names are the model's */
    size_t count, capacity;
};

/* A name of the spans section: its number, followed by its text when new. NULL when corrupt or
 * out of memory. */
static const char *name_ref(struct replay *replay, struct zm_partial_cursor *in,
                            struct name_table *table)
{
    uint64_t number = zm_partial_get_u64(in);
    if (in->failed || number > table->count) {
        in->failed = true;
        return NULL;
    }
    if (number < table->count)
        return table->names[number];
    const char *name = get_name(replay, in);
    if (!name)
        return NULL;
    if (ZM_GROW(table->names, table->capacity, table->count + 1, 64) != 0) {
        snprintf(replay->why, sizeof(replay->why), "out of memory");
        return NULL;
    }
    table->names[table->count++] = name;
    return name;
}

/* The spans section of one host, after its summary (its labels are known). */
static int replay_spans(struct replay *replay, struct zm_partial_cursor *in)
{
    const struct zm_span_sink *sink = replay->sink;
    struct name_table table = {0};
    int64_t previous_ns = 0;
    int status = -1;
    while (in->at < in->end && !in->failed) {
        uint64_t tag = zm_partial_get_u64(in);
        int64_t pid = zm_partial_get_i64(in);
        if (tag == 8) { /* a counter sample of device telemetry */
            struct zm_counter_sample sample = {.host = replay->host, .pid = pid, .totalled = true};
            if (check_label(replay, in, zm_partial_get_u64(in), &sample.device_label) != 0)
                goto end;
            if (!(sample.device_name = name_ref(replay, in, &table)))
                goto end;
            uint64_t kind = zm_partial_get_u64(in);
            if (kind >= ZM_COUNTER_KINDS) {
                in->failed = true;
                goto end;
            }
            sample.kind = (enum zm_counter_kind)kind;
            sample.time_ns = checked_time(in, wrapping_add(previous_ns, zm_partial_get_i64(in)));
            previous_ns = sample.time_ns;
            sample.interval_ns = get_time(in);
            sample.value = get_double(in);
            if (in->failed)
                goto end;
            if (sink->counter && sink->counter(sink->context, &sample) != 0)
                goto end;
            continue;
        }
        struct zm_device_span device = {.host = replay->host, .pid = pid, .totalled = true};
        struct zm_api_span api = {.host = replay->host, .pid = pid, .totalled = true};
        bool is_device = tag & 1;
        if (is_device && check_label(replay, in, zm_partial_get_u64(in), &device.device_label) != 0)
            goto end;
        if (!is_device)
            api.tid = zm_partial_get_i64(in);
        /* one name for an API span, two (device, work) for a device span */
        const char **targets[2] = {is_device ? &device.device_name : &api.function, &device.name};
        for (int n = 0; n < (is_device ? 2 : 1); n++) {
            if (is_device && n == 1)
                device.queue = zm_partial_get_u64(in);
            if (!(*targets[n] = name_ref(replay, in, &table)))
                goto end;
        }
        /* wrapping sums: a corrupt delta must not be undefined behaviour */
        int64_t start_ns = checked_time(in, wrapping_add(previous_ns, zm_partial_get_i64(in)));
        int64_t length_ns = get_time(in);
        previous_ns = start_ns;
        if (!is_device) {
            api.start_ns = start_ns;
            api.end_ns = checked_time(in, wrapping_add(start_ns, length_ns));
            api.result = (uint32_t)zm_partial_get_u64(in);
            api.synthetic = tag & 2;
            if (in->failed)
                goto end;
            if (sink->api_span && sink->api_span(sink->context, &api) != 0)
                goto end;
            continue;
        }
        device.anchored = tag & 2;
        device.linked = tag & 4;
        device.start_ns = start_ns;
        device.end_ns = checked_time(in, wrapping_add(start_ns, length_ns));
        device.uncertainty_ns = get_time(in);
        device.duration_ns = get_time(in);
        device.call_id = zm_partial_get_u64(in);
        device.execution = zm_partial_get_u64(in);
        device.bytes = zm_partial_get_u64(in);
        device.direction = (uint32_t)zm_partial_get_u64(in);
        get_shape(in, &device.shape);
        if (device.linked) {
            device.api_tid = zm_partial_get_i64(in);
            device.append_ns = checked_time(in, wrapping_add(start_ns, zm_partial_get_i64(in)));
        }
        if (tag & 16) {
            device.engine.known = true;
            device.engine.ordinal = (uint32_t)zm_partial_get_u64(in);
            device.engine.index = (uint32_t)zm_partial_get_u64(in);
            uint64_t kind = zm_partial_get_u64(in);
            if (kind > ZM_ENGINE_COPY) {
                in->failed = true;
                goto end;
            }
            device.engine.kind = (enum zm_engine_kind)kind;
        }
        if (in->failed)
            goto end;
        if (sink->device_span && sink->device_span(sink->context, &device) != 0)
            goto end;
    }
    status = in->failed ? -1 : 0;
end:
    if (status != 0 && !replay->why[0] && !in->failed)
        snprintf(replay->why, sizeof(replay->why), "out of memory or temporary file error");
    free(table.names);
    return status;
}

/* One section: its size and hash, then its bytes, checked. */
static int section(struct zm_partial_cursor *file, bool check, struct zm_partial_cursor *out)
{
    uint64_t size = zm_partial_get_fixed64(file);
    uint64_t hash = zm_partial_get_fixed64(file);
    if (file->failed || size > (uint64_t)(file->end - file->at))
        return -1;
    *out = (struct zm_partial_cursor){file->at, file->at + size, false};
    file->at += size;
    if (check && zm_partial_hash(ZM_PARTIAL_FNV_OFFSET, out->at, (size_t)size) != hash)
        return -1;
    return 0;
}

static int read_hosts(struct replay *replay, const unsigned char *bytes, size_t size,
                      const char *path, enum zm_partial_spans spans)
{
    struct zm_partial_cursor file = {bytes, bytes + size, false};
    if (size < ZM_PARTIAL_HEADER_SIZE || memcmp(bytes, ZM_PARTIAL_MAGIC, ZM_PARTIAL_MAGIC_SIZE)) {
        snprintf(replay->why, sizeof(replay->why),
                 "not a trace directory nor a zeprof partial file");
        return -1;
    }
    uint32_t version = (uint32_t)bytes[8] | (uint32_t)bytes[9] << 8 | (uint32_t)bytes[10] << 16 |
                       (uint32_t)bytes[11] << 24;
    uint32_t hosts = (uint32_t)bytes[12] | (uint32_t)bytes[13] << 8 | (uint32_t)bytes[14] << 16 |
                     (uint32_t)bytes[15] << 24;
    file.at += 16;
    uint64_t recorded_size = zm_partial_get_fixed64(&file);
    uint64_t header_hash = zm_partial_get_fixed64(&file);
    /* The magic and the version come first in every version: checked before the rest. */
    if (version != ZM_PARTIAL_VERSION) {
        snprintf(replay->why, sizeof(replay->why),
                 "partial of format version %u; this zeprof-merge reads version %u", version,
                 ZM_PARTIAL_VERSION);
        return -1;
    }
    if (header_hash != zm_partial_hash(ZM_PARTIAL_FNV_OFFSET, bytes, 24)) {
        snprintf(replay->why, sizeof(replay->why), "corrupt partial (header)");
        return -1;
    }
    if (recorded_size != size) {
        snprintf(replay->why, sizeof(replay->why), "truncated partial (%zu of %llu bytes)", size,
                 (unsigned long long)recorded_size);
        return -1;
    }
    if (hosts == 0) {
        snprintf(replay->why, sizeof(replay->why), "corrupt partial (no host)");
        return -1;
    }
    for (uint32_t h = 0; h < hosts; h++) {
        struct zm_partial_cursor span_bytes, summary;
        zm_supervise_progress();
        if (section(&file, spans != ZM_PARTIAL_SPANS_SKIPPED, &span_bytes) != 0 ||
            section(&file, true, &summary) != 0) {
            snprintf(replay->why, sizeof(replay->why), "corrupt partial (host %u of %u)", h + 1,
                     hosts);
            return -1;
        }
        size_t length;
        const char *hostname = zm_partial_get_string(&summary, &length);
        bool has_spans = zm_partial_get_u64(&summary) & 1;
        if (!hostname || summary.failed) {
            snprintf(replay->why, sizeof(replay->why), "corrupt partial (host %u of %u)", h + 1,
                     hosts);
            return -1;
        }
        if (!has_spans && spans == ZM_PARTIAL_SPANS_REQUIRED) {
            snprintf(replay->why, sizeof(replay->why),
                     "the partial holds no spans (reduced with --no-spans): no timeline of it");
            return -1;
        }
        char *copy = strndup(hostname, length);
        int host = copy ? zm_model_begin_host(replay->model, copy, path) : -1;
        free(copy);
        if (host < 0) {
            snprintf(replay->why, sizeof(replay->why), "out of memory");
            return -1;
        }
        replay->host = (uint32_t)host;
        replay->label_base = (uint32_t)zm_model_device_label_count(replay->model);
        if (replay_summary(replay, &summary, !has_spans) != 0 ||
            (spans != ZM_PARTIAL_SPANS_SKIPPED && has_spans &&
             replay_spans(replay, &span_bytes) != 0)) {
            if (!replay->why[0])
                snprintf(replay->why, sizeof(replay->why), "corrupt partial (host %u of %u)", h + 1,
                         hosts);
            return -1;
        }
        if (zm_model_end_host(replay->model) != 0) {
            snprintf(replay->why, sizeof(replay->why), "out of memory or temporary file error");
            return -1;
        }
    }
    if (file.at != file.end) {
        snprintf(replay->why, sizeof(replay->why), "corrupt partial (bytes after the last host)");
        return -1;
    }
    return 0;
}

int zm_partial_read(const char *path, const char *named, struct zm_model *model,
                    enum zm_partial_spans spans, char *reason, int reason_size)
{
    if (!named)
        named = path;
    struct replay replay = {.model = model, .sink = zm_model_sink(model)};
    int status = -1;
    void *bytes = MAP_FAILED;
    struct stat file_status;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block */
    if (fd < 0 || fstat(fd, &file_status) != 0) {
        snprintf(replay.why, sizeof(replay.why), "%s", strerror(errno));
    } else if (!S_ISREG(file_status.st_mode)) {
        snprintf(replay.why, sizeof(replay.why), "not a trace directory nor a zeprof partial file");
    } else if (file_status.st_size == 0) {
        snprintf(replay.why, sizeof(replay.why), "empty file (not a zeprof partial)");
    } else if ((bytes = mmap(NULL, (size_t)file_status.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) ==
               MAP_FAILED) {
        snprintf(replay.why, sizeof(replay.why), "%s", strerror(errno));
    } else {
        status = read_hosts(&replay, bytes, (size_t)file_status.st_size, named, spans);
    }
    if (bytes != MAP_FAILED)
        munmap(bytes, (size_t)file_status.st_size);
    if (fd >= 0)
        close(fd);
    if (status != 0) {
        char shown[1024];
        zm_supervise_escape_line(shown, sizeof(shown), named);
        snprintf(reason, (size_t)reason_size, "Failed to read trace: path=%s, reason=%s", shown,
                 replay.why[0] ? replay.why : "corrupt partial");
    }
    return status;
}
