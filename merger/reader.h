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
#include <stdio.h>

/* Quiets libbabeltrace2 (call once, before any graph). */
void zm_reader_setup(void);
/* Reads `path` into `model` as a new host. 0 on success; -1 with `reason` filled. */
ZM_MUST_CHECK int zm_reader_read(const char *path, struct zm_model *model, FILE *dump, bool verbose,
                                 char *reason, int reason_size);

#endif
