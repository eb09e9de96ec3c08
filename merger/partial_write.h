/*
 * partial_write: zeprof-merge --reduce, the span sink (span.h) that writes a partial file
 * (partial_format.h) instead of a tally: per host, its spans as they come (compact, in the host's
 * own clock), then at the host's end its summary (totals at the finest split, anomalies, devices
 * and anchors, frame marks), read back from the model it is attached to.
 *
 * The file is written as PATH.tmp.XXXXXX beside PATH (named to the supervisor, which removes it if
 * the worker dies) and renamed over PATH only when complete: nothing half-written looks like a
 * partial. Owns its file and its statistics; borrows the model.
 */
#ifndef ZM_PARTIAL_WRITE_H
#define ZM_PARTIAL_WRITE_H

#include "model.h"
#include "must_check.h"
#include "span.h"

struct zm_partial_writer;

/* Opens PATH's temporary file; NULL with "Failed to write partial: path=…, reason=…".
 * `spans`: keep the hosts' spans (false: --no-spans, a partial no timeline can be made of). A host
 * read from a partial without spans has none in this one either. `supervised`: the supervisor
 * removes the temporary file if the process dies (false: it is in a directory that the
 * supervisor removes, split.h's). */
ZM_MUST_CHECK struct zm_partial_writer *zm_partial_writer_open(const char *path, bool spans,
                                                               bool supervised, char *reason,
                                                               int reason_size);
/* The sink to give zm_model_new; its context is the writer. */
struct zm_span_sink zm_partial_writer_sink(struct zm_partial_writer *writer);
/* The model whose hosts are written (the sink's end_host reads it); before its first host. */
void zm_partial_writer_attach(struct zm_partial_writer *writer, const struct zm_model *model);
/* Completes the file and renames it over PATH, then frees the writer: 0, or -1 with the line. */
ZM_MUST_CHECK int zm_partial_writer_finish(struct zm_partial_writer *writer, char *reason,
                                           int reason_size);
/* Removes the temporary file and frees the writer (NULL: nothing). */
void zm_partial_writer_abort(struct zm_partial_writer *writer);

#endif
