/*
 * placement: puts every host's trace time on one axis (docs/interface.md, metadata.hosts and
 * metadata.remote_windows), from the frames the model collected (remote_solver.h does the math).
 *
 * A single host is the axis ("single"). With several, the host that dispatches and is not served is
 * the axis, peers reached by frames are "placed" (or "observed" when their own clock already fits),
 * and hosts no frame reaches are "unplaced": kept at their own time, drawn under "[unplaced]" lane
 * names. Owns its entries and the solved frames; borrows the host names.
 */
#ifndef ZM_PLACEMENT_H
#define ZM_PLACEMENT_H

#include "must_check.h"
#include "remote_solver.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct zm_host_placement {
    const char *hostname; /* Weak */
    const char *role;     /* "axis", "placed", "observed" or "unplaced" (static) */
    const char *method;   /* Weak: points into `solver` or static */
    int64_t offset_ns, bound_ns, reference_ns;
};

struct zm_placement {
    struct zm_host_placement *hosts; /* Owned by this */
    uint32_t count;
    struct zm_remote_solver *solver;  /* Owned by this */
    struct zm_remote_cursor *cursors; /* Owned by this: two per host (axis, bound) */
};

/* Solves the placement. 0, or -1 with "Failed to place hosts: reason=…" in `reason` (frames that
 * form a cycle, out of memory). */
ZM_MUST_CHECK int zm_placement_compute(struct zm_placement *placement, const char *const *hostnames,
                                       uint32_t host_count, const struct zm_remote_index *frames,
                                       uint64_t max_rate_ppm, char *reason, int reason_size);
void zm_placement_release(struct zm_placement *placement);
/* A host's trace time on the axis (unplaced hosts keep their own time); *bound_ns may be NULL. */
int64_t zm_placement_axis(void *placement, uint32_t host, int64_t host_ns, int64_t *bound_ns);
/* The placement bound of an instant given by its axis time (for labelling spans). */
int64_t zm_placement_bound(void *placement, uint32_t host, int64_t axis_ns);
bool zm_placement_placed(void *placement, uint32_t host);
/* metadata.hosts and metadata.remote_windows: new JSON arrays. */
ZM_MUST_CHECK json_t *zm_placement_to_json(const struct zm_placement *placement);
ZM_MUST_CHECK json_t *zm_placement_windows_json(struct zm_placement *placement);
/* The anomalies placement found: dropped windows, frames with a side missing. */
uint64_t zm_placement_dropped(const struct zm_placement *placement);
uint64_t zm_placement_incomplete(const struct zm_placement *placement);

#endif
