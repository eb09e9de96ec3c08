/* Tracepoint provider of harness_tick: one event per tick, to check the recording harness. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER zeprof_harness

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./harness_tick_tp.h"

#if !defined(HARNESS_TICK_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define HARNESS_TICK_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(zeprof_harness, tick,
    LTTNG_UST_TP_ARGS(int, sequence),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int, sequence, sequence)))

#endif /* HARNESS_TICK_TP_H */

#include <lttng/tracepoint-event.h>
