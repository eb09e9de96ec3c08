/*
 * frame.c: zeprof_frame_record, the recorder behind zeprof.h.
 *
 * zeprof.h is header-only: each of its four calls looks this function up once with
 * dlsym(RTLD_DEFAULT) and does nothing when the shim is not preloaded. It is the one symbol the
 * shim exports besides the Level Zero API (the version script lists it, and the export test pins
 * it). A program may mark frames before its first Level Zero call, so the shim is initialized here
 * too: that loads the probes, without which the tracepoints would be dropped.
 */
#include <zeprof.h>

#include "shim.h"
#include "zeprof_frame.h"

__attribute__((visibility("default"))) void zeprof_frame_record(int kind,
                                                                const zeprof_frame *frame,
                                                                int32_t status);

void zeprof_frame_record(int kind, const zeprof_frame *frame, int32_t status)
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
