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
/* Reads every host of the partial at `path`; `spans`: replay the spans too (for a timeline or
 * another partial). 0, or -1 with "Failed to read trace: path=…, reason=…" in `reason`. */
ZM_MUST_CHECK int zm_partial_read(const char *path, struct zm_model *model, bool spans,
                                  char *reason, int reason_size);

#endif
