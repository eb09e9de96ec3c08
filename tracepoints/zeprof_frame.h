/*
 * LTTng-UST provider zeprof_frame: remote dispatch marks (zeprof.h, docs/tracepoints.md "Remote
 * dispatch"). A frame is identified by (session, worker, sequence); the ends carry a status.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER zeprof_frame
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "zeprof_frame.h"

#if !defined(ZEPROF_FRAME_PROVIDER_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define ZEPROF_FRAME_PROVIDER_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT_CLASS(zeprof_frame, mark,
    LTTNG_UST_TP_ARGS(uint64_t, session, uint32_t, worker, uint64_t, sequence),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, session, session)
        lttng_ust_field_integer(uint32_t, worker, worker)
        lttng_ust_field_integer(uint64_t, sequence, sequence)
    )
)

LTTNG_UST_TRACEPOINT_EVENT_CLASS(zeprof_frame, mark_end,
    LTTNG_UST_TP_ARGS(uint64_t, session, uint32_t, worker, uint64_t, sequence, int32_t, status),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, session, session)
        lttng_ust_field_integer(uint32_t, worker, worker)
        lttng_ust_field_integer(uint64_t, sequence, sequence)
        lttng_ust_field_integer(int32_t, status, status)
    )
)

/* Caller: just before publishing the request. */
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(zeprof_frame, mark, zeprof_frame, dispatch_begin,
    LTTNG_UST_TP_ARGS(uint64_t, session, uint32_t, worker, uint64_t, sequence))

/* Caller: the completion came in. */
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(zeprof_frame, mark_end, zeprof_frame, dispatch_end,
    LTTNG_UST_TP_ARGS(uint64_t, session, uint32_t, worker, uint64_t, sequence, int32_t, status))

/* Peer: the request header is decoded. */
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(zeprof_frame, mark, zeprof_frame, serve_begin,
    LTTNG_UST_TP_ARGS(uint64_t, session, uint32_t, worker, uint64_t, sequence))

/* Peer: just before replying. */
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(zeprof_frame, mark_end, zeprof_frame, serve_end,
    LTTNG_UST_TP_ARGS(uint64_t, session, uint32_t, worker, uint64_t, sequence, int32_t, status))

#endif /* ZEPROF_FRAME_PROVIDER_H */

#include <lttng/tracepoint-event.h>
