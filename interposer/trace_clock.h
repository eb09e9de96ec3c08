/*
 * trace_clock.h: LTTng-UST's own trace clock, read in-process.
 *
 * A one-event call (docs/tracepoints.md, "Call shapes") records its start time in its only event,
 * fired at the call's exit. That start must be on the clock LTTng stamps events with, which a
 * clock plugin (LTTNG_UST_CLOCK_PLUGIN) may replace: never CLOCK_MONOTONIC read directly.
 * zeprof_trace_clock() calls the very function LTTng-UST uses, obtained once from the public
 * lttng_ust_trace_clock_get_read64_cb() of liblttng-ust-common (2.13): CLOCK_MONOTONIC without
 * a plugin, the plugin's read64 with one. Its value is in the clock's cycles (the plugin's
 * frequency), the unit of the event timestamps themselves.
 *
 * Only called when a tracepoint is enabled, hence when LTTng-UST is loaded. Thread-safe: the
 * function pointer is resolved at the first read (idempotent, atomic store).
 */
#ifndef ZEPROF_TRACE_CLOCK_H
#define ZEPROF_TRACE_CLOCK_H

#include <stdint.h>

/* The trace clock's reader; starts as a resolver that replaces itself on first use. */
extern uint64_t (*zeprof_trace_clock_read)(void);

static inline uint64_t zeprof_trace_clock(void)
{
    return __atomic_load_n(&zeprof_trace_clock_read, __ATOMIC_RELAXED)();
}

#endif /* ZEPROF_TRACE_CLOCK_H */
