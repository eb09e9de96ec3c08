/* tally: the text and JSON tally (tally.h). */
#include "tally.h"

#include "utf8.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct anomaly_field {
    const char *key;
    size_t offset;
};

/* The order in which anomalies are listed (JSON and footer alike). */
static const struct anomaly_field anomaly_fields[] = {
    {"orphan_exits", offsetof(struct zm_anomalies, orphan_exits)},
    {"synthetic_closes", offsetof(struct zm_anomalies, synthetic_closes)},
    {"discarded_events", offsetof(struct zm_anomalies, discarded_events)},
    {"discarded_packets", offsetof(struct zm_anomalies, discarded_packets)},
    {"inverted_intervals", offsetof(struct zm_anomalies, inverted_intervals)},
    {"unknown_events", offsetof(struct zm_anomalies, unknown_events)},
    {"lost_timings", offsetof(struct zm_anomalies, lost_timings)},
    {"unmatched_timings", offsetof(struct zm_anomalies, unmatched_timings)},
    {"unanchored_timings", offsetof(struct zm_anomalies, unanchored_timings)},
    {"dropped_windows", offsetof(struct zm_anomalies, dropped_windows)},
    {"incomplete_frames", offsetof(struct zm_anomalies, incomplete_frames)},
};

static uint64_t anomaly_value(const struct zm_anomalies *anomalies, size_t i)
{
    uint64_t value;
    memcpy(&value, (const char *)anomalies + anomaly_fields[i].offset, sizeof(value));
    return value;
}

json_t *zm_tally_anomalies_json(const struct zm_anomalies *anomalies)
{
    json_t *object = json_object();
    for (size_t i = 0; object && i < sizeof(anomaly_fields) / sizeof(*anomaly_fields); i++)
        json_object_set_new(object, anomaly_fields[i].key,
                            json_integer((json_int_t)anomaly_value(anomalies, i)));
    return object;
}

/* A duration for people: 3 significant digits and a unit. */
static void format_duration(char *text, size_t size, int64_t ns)
{
    double value = (double)ns;
    if (ns < 1000)
        snprintf(text, size, "%" PRId64 "ns", ns);
    else if (ns < 1000000)
        snprintf(text, size, "%.2fus", value / 1e3);
    else if (ns < 1000000000)
        snprintf(text, size, "%.2fms", value / 1e6);
    else
        snprintf(text, size, "%.3fs", value / 1e9);
}

static const char *plural(size_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* How the text tally shows a name at most `max_size` bytes wide (0: no limit): its first `kept`
 * bytes, then "..." when `cut`. A longer name keeps max_size - 3 bytes and the "..." (max_size
 * bytes in all; just the first max_size when that is 3 or less), never cut inside a UTF-8
 * character. */
struct shown_name {
    int kept;
    bool cut;
};

static struct shown_name shown_name(const char *name, uint64_t max_size)
{
    size_t length = strlen(name);
    if (max_size == 0 || length <= max_size)
        return (struct shown_name){(int)length, false};
    bool cut = max_size > 3;
    size_t kept = cut ? max_size - 3 : max_size;
    while (kept > 0 && ((unsigned char)name[kept] & 0xc0) == 0x80)
        kept--; /* name[kept] continues a character: keep that character out whole */
    return (struct shown_name){(int)kept, cut};
}

static int shown_width(struct shown_name shown)
{
    return shown.kept + (shown.cut ? 3 : 0);
}

static void print_table(FILE *out, const struct zm_model *model, struct zm_stat_table *table,
                        bool device, bool extended, uint64_t max_name_size)
{
    zm_stats_sort(table);
    int64_t total = zm_stats_total(table);
    int name_width = 4;
    for (size_t i = 0; i < table->count; i++) {
        int width = shown_width(shown_name(table->rows[i].name, max_name_size));
        if (width > name_width)
            name_width = width;
    }
    char where_header[64] = "";
    if (extended)
        snprintf(where_header, sizeof(where_header),
                 device ? " | %-16s | %-20s" : " | %-16s | %8s | %8s", "Host",
                 device ? "Device" : "PID", "TID");
    fprintf(out, "%-*s%s | %10s | %7s | %10s | %10s | %10s | %10s%s\n", name_width, "Name",
            where_header, "Time", "Time(%)", "Calls", "Average", "Min", "Max",
            device ? "" : " |     Errors");
    for (size_t i = 0; i < table->count; i++) {
        const struct zm_stat_row *row = &table->rows[i];
        char time[32], average[32], min[32], max[32], where[128] = "";
        format_duration(time, sizeof(time), row->total_ns);
        format_duration(average, sizeof(average), row->total_ns / (int64_t)row->calls);
        format_duration(min, sizeof(min), row->min_ns);
        format_duration(max, sizeof(max), row->max_ns);
        if (extended && device)
            snprintf(where, sizeof(where), " | %-16s | %-20s",
                     zm_model_host(model, row->host)->hostname,
                     zm_model_device_label(model, row->device)->name);
        else if (extended)
            snprintf(where, sizeof(where), " | %-16s | %8" PRId64 " | %8" PRId64,
                     zm_model_host(model, row->host)->hostname, row->pid, row->tid);
        struct shown_name shown = shown_name(row->name, max_name_size);
        fprintf(out, "%.*s%s%*s%s | %10s | %6.2f%% | %10" PRIu64 " | %10s | %10s | %10s",
                shown.kept, row->name, shown.cut ? "..." : "", name_width - shown_width(shown), "",
                where, time, total ? 100.0 * (double)row->total_ns / (double)total : 0.0,
                row->calls, average, min, max);
        if (!device)
            fprintf(out, " | %10" PRIu64, row->errors);
        fputc('\n', out);
    }
}

/* Hosts, their role on the time axis and how sure that is (only worth a table with several). */
static void print_hosts(FILE *out, const struct zm_placement *placement)
{
    if (placement->count < 2)
        return;
    fputs("Hosts\n", out);
    for (uint32_t i = 0; i < placement->count; i++) {
        const struct zm_host_placement *host = &placement->hosts[i];
        char bound[32];
        format_duration(bound, sizeof(bound), host->bound_ns);
        fprintf(out, "%-16s | %-8s | +-%10s | %s\n", host->hostname, host->role, bound,
                host->method);
    }
    fputc('\n', out);
}

int zm_tally_print_text(FILE *out, const struct zm_model *model, struct zm_stats *stats,
                        const struct zm_traffic *traffic, struct zm_kernels *kernels,
                        const struct zm_placement *placement, uint64_t max_name_size)
{
    uint32_t hosts = zm_model_host_count(model);
    size_t processes = zm_model_process_count(model), threads = zm_model_thread_count(model);
    size_t devices = zm_model_device_label_count(model);
    fprintf(out, "zeprof: %u %s, %zu %s, %zu %s, %zu %s\n\n", hosts, plural(hosts, "host", "hosts"),
            processes, plural(processes, "process", "processes"), threads,
            plural(threads, "thread", "threads"), devices, plural(devices, "device", "devices"));
    print_hosts(out, placement);
    fputs("API calls\n", out);
    print_table(out, model, &stats->api, false, stats->extended, max_name_size);
    fputs("\nDevice work\n", out);
    print_table(out, model, &stats->device, true, stats->extended, max_name_size);
    if (kernels) {
        fputs("\nKernel detail\n", out);
        print_table(out, model, &kernels->stats.device, true, false, max_name_size);
    }
    zm_traffic_print_text(out, traffic);
    return ferror(out) ? -1 : 0;
}

int zm_tally_print_anomalies_text(FILE *out, const struct zm_anomalies *anomalies)
{
    bool any = false;
    for (size_t i = 0; i < sizeof(anomaly_fields) / sizeof(*anomaly_fields); i++) {
        uint64_t value = anomaly_value(anomalies, i);
        if (!value)
            continue;
        fprintf(out, "%s%s=%" PRIu64, any ? ", " : "\nAnomalies: ", anomaly_fields[i].key, value);
        any = true;
    }
    if (any)
        fputc('\n', out);
    return ferror(out) ? -1 : 0;
}

static json_t *rows_json(const struct zm_model *model, struct zm_stat_table *table, bool device,
                         bool extended)
{
    zm_stats_sort(table);
    json_t *rows = json_array();
    for (size_t i = 0; rows && i < table->count; i++) {
        const struct zm_stat_row *row = &table->rows[i];
        json_t *object =
            json_pack("{s:o, s:I, s:I, s:I, s:I, s:I}", "name", zm_utf8_json_string(row->name),
                      "calls", (json_int_t)row->calls, "total_ns", (json_int_t)row->total_ns,
                      "avg_ns", (json_int_t)(row->total_ns / (int64_t)row->calls), "min_ns",
                      (json_int_t)row->min_ns, "max_ns", (json_int_t)row->max_ns);
        if (!object) {
            /* Never a row dropped silently: the tally fails instead. */
            json_decref(rows);
            return NULL;
        }
        if (!device)
            json_object_set_new(object, "errors", json_integer((json_int_t)row->errors));
        if (extended) {
            json_object_set_new(object, "hostname",
                                zm_utf8_json_string(zm_model_host(model, row->host)->hostname));
            if (device) {
                json_object_set_new(
                    object, "device",
                    zm_utf8_json_string(zm_model_device_label(model, row->device)->name));
            } else {
                json_object_set_new(object, "pid", json_integer(row->pid));
                json_object_set_new(object, "tid", json_integer(row->tid));
            }
        }
        json_array_append_new(rows, object);
    }
    return rows;
}

/* The kernel detail's rows, each with its name and shape as fields. New reference or NULL. */
static json_t *kernels_json(const struct zm_model *model, struct zm_kernels *kernels)
{
    json_t *rows = rows_json(model, &kernels->stats.device, true, false);
    for (size_t i = 0; rows && i < json_array_size(rows); i++) {
        json_t *row = json_array_get(rows, i);
        const struct zm_kernel_info *info =
            zm_kernels_info(kernels, kernels->stats.device.rows[i].name);
        if (!info || zm_kernels_shape_json(info, row) != 0) {
            json_decref(rows);
            return NULL;
        }
    }
    return rows;
}

int zm_tally_print_json(FILE *out, const struct zm_model *model, struct zm_stats *stats,
                        const struct zm_traffic *traffic, struct zm_kernels *kernels,
                        const struct zm_placement *placement, json_t *telemetry)
{
    json_t *tally =
        json_pack("{s:I, s:I, s:I, s:I}", "hosts", (json_int_t)zm_model_host_count(model),
                  "processes", (json_int_t)zm_model_process_count(model), "threads",
                  (json_int_t)zm_model_thread_count(model), "devices",
                  (json_int_t)zm_model_device_label_count(model));
    if (!tally)
        return -1;
    /* json_object_set_new fails on a NULL value: any part missing fails the tally. */
    if (json_object_set_new(tally, "api", rows_json(model, &stats->api, false, stats->extended)) ||
        json_object_set_new(tally, "device",
                            rows_json(model, &stats->device, true, stats->extended)) ||
        json_object_set_new(tally, "memory_traffic", zm_traffic_json(traffic)) ||
        (kernels && json_object_set_new(tally, "kernels", kernels_json(model, kernels))) ||
        json_object_set_new(tally, "anomalies",
                            zm_tally_anomalies_json(zm_model_anomalies(model))) ||
        json_object_set_new(tally, "host_placement", zm_placement_to_json(placement)) ||
        (json_array_size(telemetry) > 0 && json_object_set(tally, "telemetry", telemetry))) {
        json_decref(tally);
        return -1;
    }
    int status = json_dumpf(tally, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(tally);
    return status != 0 || ferror(out) ? -1 : 0;
}
