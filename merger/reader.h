/*
 * reader: reads one trace directory (one host) with a babeltrace2 graph
 *   src.ctf.fs (one per CTF trace found) -> stream_merge's sink (or, for unusual streams,
 *   flt.utils.muxer -> a simple sink)
 * and feeds the model decoded events in time order (the muxer's order either way): event class
 * names mapped to kinds, payload fields by their docs/tracepoints.md names, vpid/vtid from the
 * stream event context, the default clock snapshot in ns from origin, the trace environment's
 * hostname, and discarded-events and discarded-packets messages. With a dump stream, also prints
 * every event (-t). Babeltrace2's own logging is silenced; failures come back as one "Failed to
 * read trace: …" line. Before the graph runs, each CTF trace's framing is checked (validate.h);
 * unreadable directories, stream classes without a clock, non-integer vpid/vtid and overflowing
 * timestamps are refused with a reason of the reader's own; babeltrace2's reasons lose their
 * pointer values.
 */
#ifndef ZM_READER_H
#define ZM_READER_H

#include "model.h"
#include "must_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Where a tapped read sends what it decodes, in place of the model (split.h's workers): the
 * host's beginning, each event with its stream's tie key (stream class id << 48 | stream id,
 * stream_merge's order among the streams of one trace), and discarded-items messages (`known`:
 * the count was given; otherwise it is 1). The model only interns names then. Each returns 0,
 * or -1 to stop the read. A tapped read never falls back to the muxer (unusual streams fail it)
 * and leaves the checks of the host's end to the tap's reader. */
struct zm_reader_tap {
    int (*begin)(void *context, const char *hostname);
    int (*event)(void *context, const struct zm_event *event, uint64_t stream_key);
    void (*discarded)(void *context, uint64_t count, bool packets, bool known);
    void *context;
};

/* Quiets libbabeltrace2 (call once, before any graph). */
void zm_reader_setup(void);
/* Reads `path` into `model` as a new host (or, with `tap`, to the tap). 0 on success; -1 with
 * `reason` filled. */
ZM_MUST_CHECK int zm_reader_read(const char *path, struct zm_model *model, FILE *dump,
                                 const struct zm_reader_tap *tap, bool verbose, char *reason,
                                 int reason_size);
/* The CTF traces under the trace directory `path` (the directories holding a `metadata` file:
 * per-UID buffers give one per ABI, per-PID buffers one per process), sorted, in a
 * NULL-terminated array; NULL with a reason in `why` (unreadable, not a directory, none). */
ZM_MUST_CHECK char **zm_reader_trace_dirs(const char *path, char *why, size_t why_size);
void zm_reader_free_trace_dirs(char **dirs);

#endif
