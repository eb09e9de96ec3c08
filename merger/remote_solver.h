/*
 * remote_solver: places peer hosts on the axis host's clock from the frames of a remote_index.
 *
 * The peer's serve window lies inside the caller's dispatch window, so the offset theta (caller
 * time = peer time + theta) satisfies cb - pb <= theta(pb) and theta(pe) <= ce - pe for each frame
 * (caller window [cb, ce), peer window [pb, pe)). Per host, theta(t) = a + b*t with |b| <= the rate
 * bound is fitted over the feasible region of all of a peer's window constraints (a convex polygon
 * in (a, b), remote_polygon.h); a peer instant t is placed at the middle of the range of theta(t)
 * over that region, and the half-width is its error bound. When the region is empty the
 * constraints are inconsistent with any clock pair of bounded relative rate: placement falls back
 * to per window and says so. Callers that are themselves peers add their own bound (chains add
 * their bounds). docs/remote.md has the reasoning.
 *
 * A solver owns its per-host results and its windows (copied from the index, which it does not
 * keep). Not thread-safe; one solver per merge.
 */
#ifndef ZM_REMOTE_SOLVER_H
#define ZM_REMOTE_SOLVER_H

#include "must_check.h"
#include "remote_index.h"

#include <stddef.h>
#include <stdint.h>

enum zm_remote_role {
    ZM_REMOTE_ROLE_AXIS,     /* its clock is the time axis */
    ZM_REMOTE_ROLE_PLACED,   /* offset fitted from frames */
    ZM_REMOTE_ROLE_OBSERVED, /* its own times already fit every caller window: kept */
    ZM_REMOTE_ROLE_UNPLACED, /* no chain of frames reaches it from the axis host */
};

enum zm_remote_window_status {
    ZM_REMOTE_WINDOW_PLACED,
    ZM_REMOTE_WINDOW_OBSERVED,
    ZM_REMOTE_WINDOW_DROPPED, /* peer window wider than the caller's: not one dispatch */
};

/* One complete frame, as the solver measured it. */
struct zm_remote_window {
    struct zm_remote_key key;
    struct zm_remote_side caller;
    struct zm_remote_side peer;
    int64_t slack_ns;      /* (ce - cb) - (pe - pb) */
    int64_t rate_bound_ns; /* caller duration x rate bound */
    enum zm_remote_window_status status;
};

/* Where one host stands on the axis. */
struct zm_remote_host {
    enum zm_remote_role role;
    int64_t offset_ns;    /* axis time = this host's time + offset_ns, at reference_ns */
    int64_t bound_ns;     /* the offset's error bound at reference_ns */
    int64_t reference_ns; /* the host time where offset_ns and bound_ns hold */
    char method[96];      /* how the offset was found, for metadata.hosts[].method */
};

/* Opaque: the solved placement. */
struct zm_remote_solver;

/* Pairs, checks and places. `nhosts` hosts, numbered 0..nhosts-1, named by `names` in messages
 * (may be NULL); when no frame names an axis, host `default_axis` is the axis. Returns the
 * solution, or NULL with `error` (errlen bytes) filled: windows forming a cycle, or out of
 * memory. */
ZM_MUST_CHECK struct zm_remote_solver *zm_remote_solver_solve(const struct zm_remote_index *frames,
                                                              int nhosts, const char *const *names,
                                                              int default_axis, double max_rate_ppm,
                                                              char *error, size_t errlen);
void zm_remote_solver_free(struct zm_remote_solver *solver);

/* The axis host, or -1 when there are no hosts. */
int zm_remote_solver_axis(const struct zm_remote_solver *solver);
/* Host `host` (0..nhosts-1); borrowed from the solver. */
const struct zm_remote_host *zm_remote_solver_host(const struct zm_remote_solver *solver, int host);
/* Every complete frame, in the order of the index; borrowed from the solver. */
size_t zm_remote_solver_window_count(const struct zm_remote_solver *solver);
const struct zm_remote_window *zm_remote_solver_window(const struct zm_remote_solver *solver,
                                                       size_t window);
/* Frames with a side missing (e.g. one host's trace not given), and dropped windows. */
size_t zm_remote_solver_incomplete(const struct zm_remote_solver *solver);
size_t zm_remote_solver_dropped(const struct zm_remote_solver *solver);

/* Where the last placement of one host found its extremes; placing instants in time order with
 * one cursor per host costs O(1) each. Zero-initialise before first use. */
struct zm_remote_cursor {
    size_t low_vertex, high_vertex;
};

/* Places an instant `t_ns` of `host` on the axis. `cursor` may be NULL. Returns 0 with *axis_ns
 * and *bound_ns set, or -1 when the host is unplaced (or not a host). */
ZM_MUST_CHECK int zm_remote_solver_place(const struct zm_remote_solver *solver, int host,
                                         int64_t t_ns, struct zm_remote_cursor *cursor,
                                         int64_t *axis_ns, int64_t *bound_ns);

const char *zm_remote_solver_role_name(enum zm_remote_role role);
const char *zm_remote_solver_window_status_name(enum zm_remote_window_status status);

#endif
