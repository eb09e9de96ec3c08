/*
 * remote: placing peer hosts on the axis host's clock from remote-dispatch frames.
 *
 * Two hosts share no clock; what they share is a frame key written by the caller when it
 * dispatches (window [cb, ce) on its clock) and by the peer when it serves ([pb, pe) on its own).
 * The peer window lies inside the caller window, so the offset theta (caller time = peer time +
 * theta) satisfies cb - pb <= theta(pb) and theta(pe) <= ce - pe.
 *
 * Per host, theta(t) = a + b*t with |b| <= the rate bound is fitted over the feasible region of all
 * of a peer's window constraints (a convex polygon in (a, b)); a peer instant t is placed at the
 * middle of the range of theta(t) over that region, and the half-width is its error bound. When
 * the region is empty the constraints are inconsistent with any clock pair of bounded relative rate:
 * placement falls back to per window and says so. Callers that are themselves peers add their own
 * bound (chains add their bounds).
 *
 * Ownership: a remote_set owns the frames added to it; a remote_result owns its per-host and
 * per-window arrays. Neither borrows anything from the caller after a call returns.
 * Not thread-safe; one set per merge.
 */
#ifndef ZEPROF_MERGER_REMOTE_H
#define ZEPROF_MERGER_REMOTE_H

#include <stddef.h>
#include <stdint.h>

struct remote_key {
    uint64_t session;
    uint32_t worker;
    uint64_t sequence;
};

enum remote_mark {
    REMOTE_DISPATCH_BEGIN,
    REMOTE_DISPATCH_END,
    REMOTE_SERVE_BEGIN,
    REMOTE_SERVE_END,
};

enum remote_role {
    REMOTE_ROLE_AXIS,     /* its clock is the time axis */
    REMOTE_ROLE_PLACED,   /* offset fitted from frames */
    REMOTE_ROLE_OBSERVED, /* its own times already fit every caller window: kept */
    REMOTE_ROLE_UNPLACED, /* no chain of frames reaches it from the axis host */
};

enum remote_window_status {
    REMOTE_WINDOW_PLACED,
    REMOTE_WINDOW_OBSERVED,
    REMOTE_WINDOW_DROPPED, /* peer window wider than the caller's: not one dispatch */
};

/* One half of a frame: the caller's dispatch window or the peer's serve window. */
struct remote_side {
    int64_t begin_ns; /* the host's trace time (babeltrace2's ns from origin) */
    int64_t end_ns;
    int host;
    int64_t pid;
    unsigned have_begin : 1;
    unsigned have_end : 1;
};

struct remote_window {
    struct remote_key key;
    struct remote_side caller;
    struct remote_side peer;
    int64_t slack_ns;      /* (ce - cb) - (pe - pb) */
    int64_t rate_bound_ns; /* caller duration x rate bound */
    enum remote_window_status status;
};

struct remote_host {
    enum remote_role role;
    int64_t offset_ns;  /* axis time = this host's time + offset_ns, at reference_ns */
    int64_t bound_ns;   /* the offset's error bound at reference_ns */
    int64_t reference_ns; /* the host time where offset_ns and bound_ns hold */
    char method[96];    /* how the offset was found, for metadata.hosts[].method */
    /* Private to remote.c: the fitted model. */
    int per_window;          /* fell back to per-window placement */
    size_t nvertices;        /* feasible polygon, in (a, b), relative to t0 and theta0 */
    double *vertices;        /* 2 * nvertices doubles */
    double t0, theta0;
    size_t first_window, nwindows; /* this host's windows in order_by_peer (per_window case) */
    int caller;              /* a caller host, for the chain */
};

struct remote_set {
    struct remote_window *frames; /* Owned */
    size_t nframes, capacity;
    size_t *slots; /* open-addressing index into frames (Owned); (size_t)-1 is empty */
    size_t nslots;
    char error[256]; /* the first refusal: frame dispatched or served twice */
};

struct remote_result {
    int nhosts;
    int axis; /* -1 when there are no hosts */
    struct remote_host *hosts;     /* Owned, nhosts entries */
    struct remote_window *windows; /* Owned: every complete frame, in dispatch order */
    size_t nwindows;
    size_t *order_by_peer; /* Owned: window indices grouped by peer host, by peer time */
    size_t incomplete;     /* frames with a side missing (e.g. one host's trace not given) */
    size_t dropped;
    double max_rate; /* relative rate bound (ppm / 1e6) */
    /* Private to remote.c: per window, the offset interval [lo, hi] on the axis. */
    int64_t *window_lo, *window_hi;
};

void remote_set_init(struct remote_set *set);
void remote_set_release(struct remote_set *set);

/* Record one frame tracepoint. Returns 0, or -1 with set->error filled when the frame was already
 * dispatched (or served) with that key: a refusal, the merge must stop. Memory errors: -1 too. */
int remote_set_add(struct remote_set *set, enum remote_mark mark, const struct remote_key *key,
                   int host, int64_t pid, int64_t time_ns);

/* Pair, check and place. `nhosts` hosts, numbered 0..nhosts-1, named by `names` in messages (may
 * be NULL); when no frame names an axis, host `default_axis` is the axis. Returns 0, or -1 with
 * `error` (errlen bytes) filled: windows forming a cycle, or out of memory. On success the caller
 * releases `result`. */
int remote_solve(const struct remote_set *set, int nhosts, const char *const *names,
                 int default_axis, double max_rate_ppm, struct remote_result *result, char *error,
                 size_t errlen);

void remote_result_release(struct remote_result *result);

/* Where the last placement of one host found its extremes; placing instants in time order with
 * one cursor per host costs O(1) each. Zero-initialise before first use. */
struct remote_cursor {
    size_t low_vertex, high_vertex;
};

/* Place an instant `t_ns` of `host` on the axis. `cursor` may be NULL. Returns 0 with *axis_ns and
 * *bound_ns set, or -1 when the host is unplaced. */
int remote_place(const struct remote_result *result, int host, int64_t t_ns,
                 struct remote_cursor *cursor, int64_t *axis_ns, int64_t *bound_ns);

const char *remote_role_name(enum remote_role role);
const char *remote_window_status_name(enum remote_window_status status);

#endif /* ZEPROF_MERGER_REMOTE_H */
