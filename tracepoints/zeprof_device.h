/*
 * LTTng-UST provider zeprof_device: device properties, clock anchors, device timing results and
 * the process name.
 * Fields and their order are fixed by docs/tracepoints.md ("Device work"); the device-timing
 * engine fires these events with lttng_ust_tracepoint(zeprof_device, <event>, ...).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER zeprof_device
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "zeprof_device.h"

#if !defined(ZEPROF_DEVICE_PROVIDER_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define ZEPROF_DEVICE_PROVIDER_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/* The most frequent events first: LTTng numbers a channel's events in registration order and gives
 * the first 31 a compact header (docs/tracepoints.md, "Event order and header size"): these 8 and
 * the 22 first events of zeprof_ze make 30. */

/* During each profiled append, on the calling thread (before its `_call` event). Payload is
 * cost: `context` is an argument for the call site's sake but not recorded (nothing reads it). */
LTTNG_UST_TRACEPOINT_EVENT(zeprof_device, append,
    LTTNG_UST_TP_ARGS(uint64_t, call_id, uint64_t, device, uint64_t, context, uint64_t, list,
        const char *, kind, const char *, name, uint64_t, bytes, uint64_t, groups),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, call_id, call_id)
        lttng_ust_field_integer_hex(uint64_t, device, device)
        lttng_ust_field_integer_hex(uint64_t, list, list)
        lttng_ust_field_string(kind, kind)
        lttng_ust_field_string(name, name)
        lttng_ust_field_integer(uint64_t, bytes, bytes)
        lttng_ust_field_integer(uint64_t, groups, groups)
    )
)

/* One per completed execution of a profiled append. Ten arguments: LTTng-UST's maximum. `list`
 * is not recorded: the `append` of the same call_id has it. */
LTTNG_UST_TRACEPOINT_EVENT(zeprof_device, device_timing,
    LTTNG_UST_TP_ARGS(uint64_t, call_id, uint64_t, execution, uint64_t, device, uint64_t, queue,
        uint64_t, list, uint64_t, global_start, uint64_t, global_end, uint64_t, context_start,
        uint64_t, context_end, uint32_t, status),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, call_id, call_id)
        lttng_ust_field_integer(uint64_t, execution, execution)
        lttng_ust_field_integer_hex(uint64_t, device, device)
        lttng_ust_field_integer_hex(uint64_t, queue, queue)
        lttng_ust_field_integer(uint64_t, global_start, global_start)
        lttng_ust_field_integer(uint64_t, global_end, global_end)
        lttng_ust_field_integer(uint64_t, context_start, context_start)
        lttng_ust_field_integer(uint64_t, context_end, context_end)
        lttng_ust_field_integer(uint32_t, status, status)
    )
)

/* Before the `append` of each profiled copy or fill (and of no other append: a kernel's `append`
 * is the most frequent event and carries nothing for this), on the same thread: the pointers
 * the merger places in host, device or shared memory for the traffic by direction. A fill's
 * `src` is its pattern. */
LTTNG_UST_TRACEPOINT_EVENT(zeprof_device, transfer,
    LTTNG_UST_TP_ARGS(uint64_t, call_id, uint64_t, dst, uint64_t, src),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, call_id, call_id)
        lttng_ust_field_integer_hex(uint64_t, dst, dst)
        lttng_ust_field_integer_hex(uint64_t, src, src)
    )
)

/* Before the `append` of a kernel launch whose shape differs from the last one this thread
 * recorded for a kernel of that name (interposer/timing/timing_shape.c): the launch's group
 * count, the kernel's group size and its SIMD width (0: not reported). Launches of an unchanged
 * shape record nothing: the merger carries the shape forward per thread and kernel name. */
LTTNG_UST_TRACEPOINT_EVENT(zeprof_device, kernel_shape,
    LTTNG_UST_TP_ARGS(uint64_t, call_id, uint32_t, group_count_x, uint32_t, group_count_y,
        uint32_t, group_count_z, uint32_t, group_size_x, uint32_t, group_size_y,
        uint32_t, group_size_z, uint32_t, simd),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, call_id, call_id)
        lttng_ust_field_integer(uint32_t, group_count_x, group_count_x)
        lttng_ust_field_integer(uint32_t, group_count_y, group_count_y)
        lttng_ust_field_integer(uint32_t, group_count_z, group_count_z)
        lttng_ust_field_integer(uint32_t, group_size_x, group_size_x)
        lttng_ust_field_integer(uint32_t, group_size_y, group_size_y)
        lttng_ust_field_integer(uint32_t, group_size_z, group_size_z)
        lttng_ust_field_integer(uint32_t, simd, simd)
    )
)

/* Once per device per process, before any anchor or timing of that device. */
LTTNG_UST_TRACEPOINT_EVENT(zeprof_device, device_properties,
    LTTNG_UST_TP_ARGS(uint64_t, device, uint64_t, driver, const char *, name, const char *, uuid,
        uint32_t, type, uint64_t, timer_hz, uint32_t, timestamp_valid_bits,
        uint32_t, kernel_timestamp_valid_bits, uint32_t, compute_groups, uint32_t, copy_groups),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, device, device)
        lttng_ust_field_integer_hex(uint64_t, driver, driver)
        lttng_ust_field_string(name, name)
        lttng_ust_field_string(uuid, uuid)
        lttng_ust_field_integer(uint32_t, type, type)
        lttng_ust_field_integer(uint64_t, timer_hz, timer_hz)
        lttng_ust_field_integer(uint32_t, timestamp_valid_bits, timestamp_valid_bits)
        lttng_ust_field_integer(uint32_t, kernel_timestamp_valid_bits, kernel_timestamp_valid_bits)
        lttng_ust_field_integer_hex(uint32_t, compute_groups, compute_groups)
        lttng_ust_field_integer_hex(uint32_t, copy_groups, copy_groups)
    )
)

/* The host time of a clock sample lies between clock_sample_begin and clock_sample_end. */
LTTNG_UST_TRACEPOINT_EVENT(zeprof_device, clock_sample_begin,
    LTTNG_UST_TP_ARGS(uint64_t, device, uint64_t, anchor, uint32_t, sample),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, device, device)
        lttng_ust_field_integer(uint64_t, anchor, anchor)
        lttng_ust_field_integer(uint32_t, sample, sample)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(zeprof_device, clock_sample_end,
    LTTNG_UST_TP_ARGS(uint64_t, device, uint64_t, anchor, uint32_t, sample, uint64_t, device_ticks,
        uint32_t, result),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, device, device)
        lttng_ust_field_integer(uint64_t, anchor, anchor)
        lttng_ust_field_integer(uint32_t, sample, sample)
        lttng_ust_field_integer(uint64_t, device_ticks, device_ticks)
        lttng_ust_field_integer_hex(uint32_t, result, result)
    )
)

/* Once per process, when the shim initializes (and in a forked child): the process name
 * (/proc/self/comm), recorded once here instead of a procname context on every event. */
LTTNG_UST_TRACEPOINT_EVENT(zeprof_device, process,
    LTTNG_UST_TP_ARGS(const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(name, name)
    )
)

#endif /* ZEPROF_DEVICE_PROVIDER_H */

#include <lttng/tracepoint-event.h>
