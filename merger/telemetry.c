/* telemetry: the per-device summary of counter samples (telemetry.h). */
#include "telemetry.h"

#include "grow.h"
#include "utf8.h"

#include <string.h>

void zm_telemetry_init(struct zm_telemetry *telemetry)
{
    memset(telemetry, 0, sizeof(*telemetry));
}

void zm_telemetry_release(struct zm_telemetry *telemetry)
{
    free(telemetry->rows);
    zm_telemetry_init(telemetry);
}

/* Devices are few: a linear search. */
static struct zm_telemetry_row *row_for(struct zm_telemetry *telemetry,
                                        const struct zm_counter_sample *sample)
{
    for (size_t i = 0; i < telemetry->count; i++) {
        if (telemetry->rows[i].host == sample->host &&
            telemetry->rows[i].device_label == sample->device_label)
            return &telemetry->rows[i];
    }
    if (ZM_GROW(telemetry->rows, telemetry->capacity, telemetry->count + 1, 4) != 0)
        return NULL;
    struct zm_telemetry_row *row = &telemetry->rows[telemetry->count++];
    *row = (struct zm_telemetry_row){.host = sample->host,
                                     .device_label = sample->device_label,
                                     .device_name = sample->device_name,
                                     .first_ns = sample->time_ns - sample->interval_ns,
                                     .last_ns = sample->time_ns};
    return row;
}

int zm_telemetry_add(struct zm_telemetry *telemetry, const struct zm_counter_sample *sample)
{
    struct zm_telemetry_row *row = row_for(telemetry, sample);
    if (!row)
        return -1;
    int64_t start = sample->time_ns - sample->interval_ns;
    if (start < row->first_ns)
        row->first_ns = start;
    if (sample->time_ns > row->last_ns)
        row->last_ns = sample->time_ns;
    switch (sample->kind) {
    case ZM_COUNTER_UTILIZATION:
        row->busy_interval_ns += sample->interval_ns;
        row->busy_ns += sample->value / 100.0 * (double)sample->interval_ns;
        if (sample->value > row->utilization_max)
            row->utilization_max = sample->value;
        break;
    case ZM_COUNTER_FREQUENCY:
        row->frequency_sum += sample->value;
        row->frequency_count++;
        break;
    case ZM_COUNTER_POWER:
        row->power_interval_ns += sample->interval_ns;
        row->energy_j += sample->value * (double)sample->interval_ns / 1e9;
        break;
    case ZM_COUNTER_MEMORY:
        row->has_memory = true;
        if (sample->value > row->memory_peak_mib)
            row->memory_peak_mib = sample->value;
        row->samples++;
        break;
    }
    return 0;
}

static double utilization_mean(const struct zm_telemetry_row *row)
{
    return row->busy_interval_ns ? 100.0 * row->busy_ns / (double)row->busy_interval_ns : 0.0;
}

static double frequency_mean(const struct zm_telemetry_row *row)
{
    return row->frequency_count ? row->frequency_sum / (double)row->frequency_count : 0.0;
}

static double power_mean(const struct zm_telemetry_row *row)
{
    return row->power_interval_ns ? row->energy_j * 1e9 / (double)row->power_interval_ns : 0.0;
}

/* The number of samples: memory readings, else frequency readings. */
static uint64_t samples_of(const struct zm_telemetry_row *row)
{
    return row->has_memory ? row->samples : row->frequency_count;
}

int zm_telemetry_print_text(FILE *out, const struct zm_telemetry *telemetry,
                            const char *const *hostnames, uint32_t host_count)
{
    if (telemetry->count == 0)
        return 0;
    fprintf(out, "\nDevice telemetry\n%-32s | %7s | %9s | %9s | %8s | %9s | %10s | %9s | %11s\n",
            "Device", "Samples", "Sampled", "Util mean", "Util max", "Freq mean", "Energy", "Power",
            "Memory peak");
    for (size_t i = 0; i < telemetry->count; i++) {
        const struct zm_telemetry_row *row = &telemetry->rows[i];
        char name[512];
        if (host_count > 1)
            snprintf(name, sizeof(name), "%s %s", hostnames[row->host], row->device_name);
        else
            snprintf(name, sizeof(name), "%s", row->device_name);
        fprintf(out,
                "%-32s | %7llu | %8.3fs | %8.1f%% | %7.1f%% | %5.0f MHz | %8.2f J | %7.2f W | "
                "%7.1f MiB\n",
                name, (unsigned long long)samples_of(row),
                (double)(row->last_ns - row->first_ns) / 1e9, utilization_mean(row),
                row->utilization_max, frequency_mean(row), row->energy_j, power_mean(row),
                row->memory_peak_mib);
    }
    return ferror(out) ? -1 : 0;
}

json_t *zm_telemetry_json(const struct zm_telemetry *telemetry, const char *const *hostnames)
{
    json_t *rows = json_array();
    for (size_t i = 0; rows && i < telemetry->count; i++) {
        const struct zm_telemetry_row *row = &telemetry->rows[i];
        json_t *entry =
            json_pack("{s:o, s:o, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "hostname",
                      zm_utf8_json_string(hostnames[row->host]), "device",
                      zm_utf8_json_string(row->device_name), "samples", (json_int_t)samples_of(row),
                      "sampled_ns", (json_int_t)(row->last_ns - row->first_ns), "busy_ns",
                      (json_int_t)(row->busy_ns + 0.5), "utilization_mean_pct",
                      utilization_mean(row), "utilization_max_pct", row->utilization_max,
                      "frequency_mean_mhz", frequency_mean(row), "energy_j", row->energy_j,
                      "power_mean_w", power_mean(row), "memory_peak_mib", row->memory_peak_mib);
        if (!entry || json_array_append_new(rows, entry) != 0) {
            json_decref(rows);
            return NULL;
        }
    }
    return rows;
}
