/* traffic: bytes and device time of copies and fills, per direction (traffic.h). */
#include "traffic.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

static const char *const direction_names[ZM_TRAFFIC_DIRECTIONS] = {
    "",       "host to device", "device to host", "device to device", "host to host",
    "shared", "fill host",      "fill device",    "fill shared",
};

enum zm_traffic_direction zm_traffic_direction(const char *append_kind, enum zm_memory_kind dst,
                                               enum zm_memory_kind src)
{
    if (!append_kind)
        return ZM_TRAFFIC_NONE;
    if (strcmp(append_kind, "fill") == 0)
        return dst == ZM_MEMORY_DEVICE   ? ZM_TRAFFIC_FILL_DEVICE
               : dst == ZM_MEMORY_SHARED ? ZM_TRAFFIC_FILL_SHARED
                                         : ZM_TRAFFIC_FILL_HOST;
    if (strcmp(append_kind, "copy") != 0 && strcmp(append_kind, "copy_region") != 0)
        return ZM_TRAFFIC_NONE;
    if (dst == ZM_MEMORY_SHARED || src == ZM_MEMORY_SHARED)
        return ZM_TRAFFIC_SHARED; /* where the pages are at copy time is the driver's secret */
    if (src == ZM_MEMORY_HOST)
        return dst == ZM_MEMORY_HOST ? ZM_TRAFFIC_HOST_TO_HOST : ZM_TRAFFIC_HOST_TO_DEVICE;
    return dst == ZM_MEMORY_HOST ? ZM_TRAFFIC_DEVICE_TO_HOST : ZM_TRAFFIC_DEVICE_TO_DEVICE;
}

const char *zm_traffic_direction_name(enum zm_traffic_direction direction)
{
    return direction < ZM_TRAFFIC_DIRECTIONS ? direction_names[direction] : "";
}

void zm_traffic_init(struct zm_traffic *traffic)
{
    *traffic = (struct zm_traffic){0};
}

void zm_traffic_add(struct zm_traffic *traffic, const struct zm_device_span *span)
{
    if (span->direction == ZM_TRAFFIC_NONE || span->direction >= ZM_TRAFFIC_DIRECTIONS)
        return;
    struct zm_traffic_row *row = &traffic->rows[span->direction];
    row->bytes += span->bytes;
    row->executions++;
    row->device_ns += span->duration_ns;
}

/* GB/s (10^9 bytes per second) is bytes per nanosecond. */
static double gigabytes_per_second(const struct zm_traffic_row *row)
{
    return row->device_ns > 0 ? (double)row->bytes / (double)row->device_ns : 0.0;
}

void zm_traffic_print_text(FILE *out, const struct zm_traffic *traffic)
{
    bool header = false;
    for (int i = 1; i < ZM_TRAFFIC_DIRECTIONS; i++) {
        const struct zm_traffic_row *row = &traffic->rows[i];
        if (!row->executions)
            continue;
        if (!header)
            fprintf(out, "\nMemory traffic\n%-16s | %14s | %10s | %14s | %10s\n", "Direction",
                    "Bytes", "Calls", "Device time", "GB/s");
        header = true;
        fprintf(out, "%-16s | %14" PRIu64 " | %10" PRIu64 " | %12" PRId64 "ns | %10.3f\n",
                direction_names[i], row->bytes, row->executions, row->device_ns,
                gigabytes_per_second(row));
    }
}

json_t *zm_traffic_json(const struct zm_traffic *traffic)
{
    json_t *rows = json_array();
    for (int i = 1; rows && i < ZM_TRAFFIC_DIRECTIONS; i++) {
        const struct zm_traffic_row *row = &traffic->rows[i];
        if (!row->executions)
            continue;
        if (json_array_append_new(
                rows,
                json_pack("{s:s, s:I, s:I, s:I, s:f}", "direction", direction_names[i], "bytes",
                          (json_int_t)row->bytes, "calls", (json_int_t)row->executions, "device_ns",
                          (json_int_t)row->device_ns, "gb_per_s", gigabytes_per_second(row))) !=
            0) {
            json_decref(rows);
            return NULL;
        }
    }
    return rows;
}
