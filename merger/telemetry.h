/*
 * telemetry: the per-device summary of the counter samples (span.h, zeprof --sample) for the
 * tally: samples, the sampled window, mean and peak utilization, mean frequency, energy and mean
 * power, peak memory in use. One row per device label (the model's distinct (host, uuid)), in
 * the order devices were first sampled. Owns its rows; borrows the device names (interned).
 */
#ifndef ZM_TELEMETRY_H
#define ZM_TELEMETRY_H

#include "must_check.h"
#include "span.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct zm_telemetry_row {
    uint32_t host, device_label;
    const char *device_name; /* Weak: interned */
    uint64_t samples;        /* frequency or memory readings: one per sample taken */
    int64_t first_ns, last_ns;
    int64_t busy_interval_ns; /* the intervals utilization covers */
    double busy_ns;           /* of which the engines were busy */
    double utilization_max;   /* %, of one interval */
    double frequency_sum;     /* MHz, over frequency_count readings */
    uint64_t frequency_count;
    int64_t power_interval_ns; /* the intervals power covers */
    double energy_j;
    double memory_peak_mib;
    bool has_memory;
};

struct zm_telemetry {
    struct zm_telemetry_row *rows; /* Owned by this */
    size_t count, capacity;
};

void zm_telemetry_init(struct zm_telemetry *telemetry);
void zm_telemetry_release(struct zm_telemetry *telemetry);
/* Counts one counter sample in its device's row; -1 when out of memory. */
ZM_MUST_CHECK int zm_telemetry_add(struct zm_telemetry *telemetry,
                                   const struct zm_counter_sample *sample);
/* The text table ("Device telemetry"), nothing when no device was sampled; hostnames[host] names
 * each host (shown when there are several). -1 on a write error. */
int zm_telemetry_print_text(FILE *out, const struct zm_telemetry *telemetry,
                            const char *const *hostnames, uint32_t host_count);
/* The JSON rows (new reference), NULL when out of memory. */
json_t *zm_telemetry_json(const struct zm_telemetry *telemetry, const char *const *hostnames);

#endif
