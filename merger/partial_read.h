/*
 * partial_read: reads a partial file (partial_format.h, written by zeprof-merge --reduce) into the
 * model as if its hosts' traces had been read: each host begins, gets its devices, anchors, frame
 * marks, counts and anomalies back in the model, gives its totals to the model's sink (span.h
 * api_totals, device_totals), then, when asked, its spans (marked `totalled`), and ends. So the
 * tally, placement and the timeline run the same code on partials as on traces.
 *
 * The file is mapped, checked (magic, version, size, the header's and each used section's hash)
 * and refused in one line when anything is wrong. Borrows the model.
 */
#ifndef ZM_PARTIAL_READ_H
#define ZM_PARTIAL_READ_H

#include "model.h"
#include "must_check.h"

#include <stdbool.h>

/* A path that names a file (not a directory) is read as a partial. */
bool zm_partial_is_file(const char *path);
/* What to do with the hosts' spans: skip them (a tally), replay those there are (another
 * partial: a host reduced with --no-spans stays without), or replay them and refuse a host
 * without (a timeline). */
enum zm_partial_spans {
    ZM_PARTIAL_SPANS_SKIPPED,
    ZM_PARTIAL_SPANS_IF_ANY,
    ZM_PARTIAL_SPANS_REQUIRED,
};

/* Reads every host of the partial at `path`. 0, or -1 with "Failed to read trace: path=…,
 * reason=…" in `reason`. `named` (NULL: `path`) is what the line names and the hosts' path: the
 * input the user gave when `path` is a partial made of it (-J's workers, split.h); it is
 * borrowed for as long as the model lives. */
ZM_MUST_CHECK int zm_partial_read(const char *path, const char *named, struct zm_model *model,
                                  enum zm_partial_spans spans, char *reason, int reason_size);

#endif
