/*
 * LTTng-UST provider zeprof_sample: device telemetry read from Sysman (zes) by the shim's sampler
 * thread (interposer/sampler.c) every ZEPROF_SAMPLE_MS milliseconds. A provider of its own,
 * loaded only when sampling starts, so that runs without it register nothing more.
 * Fields and their order are fixed by docs/tracepoints.md ("Device telemetry").
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER zeprof_sample
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "zeprof_sample.h"

#if !defined(ZEPROF_SAMPLE_PROVIDER_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define ZEPROF_SAMPLE_PROVIDER_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/* Which of a sample's readings are valid (the `valid` field). */
#define ZEPROF_SAMPLE_ENGINE 1u    /* engine_active_us, engine_timestamp_us */
#define ZEPROF_SAMPLE_FREQUENCY 2u /* frequency_mhz */
#define ZEPROF_SAMPLE_ENERGY 4u    /* energy_uj, energy_timestamp_us */
#define ZEPROF_SAMPLE_MEMORY 8u    /* memory_used */

/* One reading of one device; its host time is the event's timestamp. Ten arguments: LTTng-UST's
 * maximum. */
LTTNG_UST_TRACEPOINT_EVENT(zeprof_sample, device_sample,
    LTTNG_UST_TP_ARGS(uint64_t, device, const char *, uuid, const char *, name, uint32_t, valid,
        uint64_t, engine_active_us, uint64_t, engine_timestamp_us, double, frequency_mhz,
        uint64_t, energy_uj, uint64_t, energy_timestamp_us, uint64_t, memory_used),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, device, device)
        lttng_ust_field_string(uuid, uuid)
        lttng_ust_field_string(name, name)
        lttng_ust_field_integer(uint32_t, valid, valid)
        lttng_ust_field_integer(uint64_t, engine_active_us, engine_active_us)
        lttng_ust_field_integer(uint64_t, engine_timestamp_us, engine_timestamp_us)
        lttng_ust_field_float(double, frequency_mhz, frequency_mhz)
        lttng_ust_field_integer(uint64_t, energy_uj, energy_uj)
        lttng_ust_field_integer(uint64_t, energy_timestamp_us, energy_timestamp_us)
        lttng_ust_field_integer(uint64_t, memory_used, memory_used)
    )
)

#endif /* ZEPROF_SAMPLE_PROVIDER_H */

#include <lttng/tracepoint-event.h>
