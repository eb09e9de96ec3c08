/*
 * LTTng-UST provider zeprof_bench: one bare event, LTTng-UST's own cost per event, the yardstick
 * the overhead benchmark compares the shim's per-event cost with.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER zeprof_bench
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "bench_tp.h"

#if !defined(ZEPROF_BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define ZEPROF_BENCH_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/* Same shape as a short entry event: two 64-bit fields. */
LTTNG_UST_TRACEPOINT_EVENT(zeprof_bench, bare,
    LTTNG_UST_TP_ARGS(uint64_t, handle, uint64_t, pointer),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, handle, handle)
        lttng_ust_field_integer_hex(uint64_t, pointer, pointer)
    )
)

#endif /* ZEPROF_BENCH_TP_H */

#include <lttng/tracepoint-event.h>
