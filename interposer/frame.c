/*
 * frame.c: the frame API as the shim exports it.
 *
 * zeprof_frame_record is the recorder behind zeprof.h: the header's static inline functions look
 * it up once with dlsym(RTLD_DEFAULT) and do nothing when the shim is not preloaded.
 * zeprof_dispatch_begin, zeprof_dispatch_end, zeprof_serve_begin and zeprof_serve_end are the
 * documented functions themselves, for programs that declare them weak or resolve them at run
 * time instead of including the header (Fortran bind(C), Rust, Python ctypes). These five are the
 * shim's only exports besides the Level Zero API and the dl routes (dl_route.c); the version
 * script lists them and the export test pins them. This file includes zeprof.h with
 * ZEPROF_NO_INLINE, so the names are plain external functions here, never the header's inline
 * ones.
 *
 * A program may mark frames before its first Level Zero call, so the shim is initialized here too:
 * that loads the probes, without which the tracepoints would be dropped.
 */
#define ZEPROF_NO_INLINE
#include <zeprof.h>

#include "shim.h"
#include "zeprof_frame.h"

#define ZEPROF_EXPORT __attribute__((visibility("default")))

ZEPROF_EXPORT void zeprof_frame_record(int kind, const zeprof_frame *frame, int32_t status)
{
    if (!frame)
        return;
    (void)zeprof_ready();
    switch (kind) {
    case ZEPROF_FRAME_DISPATCH_BEGIN:
        lttng_ust_tracepoint(zeprof_frame, dispatch_begin, frame->session, frame->worker,
                             frame->sequence);
        break;
    case ZEPROF_FRAME_DISPATCH_END:
        lttng_ust_tracepoint(zeprof_frame, dispatch_end, frame->session, frame->worker,
                             frame->sequence, status);
        break;
    case ZEPROF_FRAME_SERVE_BEGIN:
        lttng_ust_tracepoint(zeprof_frame, serve_begin, frame->session, frame->worker,
                             frame->sequence);
        break;
    case ZEPROF_FRAME_SERVE_END:
        lttng_ust_tracepoint(zeprof_frame, serve_end, frame->session, frame->worker,
                             frame->sequence, status);
        break;
    default:
        break;
    }
}

ZEPROF_EXPORT void zeprof_dispatch_begin(const zeprof_frame *frame)
{
    zeprof_frame_record(ZEPROF_FRAME_DISPATCH_BEGIN, frame, 0);
}

ZEPROF_EXPORT void zeprof_dispatch_end(const zeprof_frame *frame, int32_t status)
{
    zeprof_frame_record(ZEPROF_FRAME_DISPATCH_END, frame, status);
}

ZEPROF_EXPORT void zeprof_serve_begin(const zeprof_frame *frame)
{
    zeprof_frame_record(ZEPROF_FRAME_SERVE_BEGIN, frame, 0);
}

ZEPROF_EXPORT void zeprof_serve_end(const zeprof_frame *frame, int32_t status)
{
    zeprof_frame_record(ZEPROF_FRAME_SERVE_END, frame, status);
}
