/* remote_solver: per-host offset fits from frame windows, and placing instants (remote_solver.h).
 */
#include "remote_solver.h"

#include "remote_polygon.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the solver keeps of a fitted host besides its zm_remote_host. */
struct host_fit {
    bool per_window; /* fell back to per-window placement */
    /* Owned by this: the feasible (a, b) of theta(t) = theta0 + a + b (t - t0), or NULL */
    struct zm_remote_polygon *region;
    double t0, theta0;
    size_t first_window, nwindows; /* this host's windows in order_by_peer */
};

struct zm_remote_solver {
    int nhosts;
    int axis;                         /* -1 when there are no hosts */
    struct zm_remote_host *hosts;     /* Owned by this: nhosts entries */
    struct host_fit *fits;            /* Owned by this: nhosts entries */
    struct zm_remote_window *windows; /* Owned by this: every complete frame, in index order */
    size_t nwindows;
    size_t *order_by_peer; /* Owned by this: window indices grouped by peer host, by peer time */
    size_t incomplete;     /* frames with a side missing */
    size_t dropped;
    double max_rate; /* relative rate bound (ppm / 1e6) */
    /* Owned by this: per window, the offset interval [lo, hi] on the axis */
    int64_t *window_lo, *window_hi;
};

const char *zm_remote_solver_role_name(enum zm_remote_role role)
{
    switch (role) {
    case ZM_REMOTE_ROLE_AXIS:
        return "axis";
    case ZM_REMOTE_ROLE_PLACED:
        return "placed";
    case ZM_REMOTE_ROLE_OBSERVED:
        return "observed";
    case ZM_REMOTE_ROLE_UNPLACED:
        return "unplaced";
    }
    return "unknown";
}

const char *zm_remote_solver_window_status_name(enum zm_remote_window_status status)
{
    switch (status) {
    case ZM_REMOTE_WINDOW_PLACED:
        return "placed";
    case ZM_REMOTE_WINDOW_OBSERVED:
        return "observed";
    case ZM_REMOTE_WINDOW_DROPPED:
        return "dropped";
    }
    return "unknown";
}

void zm_remote_solver_free(struct zm_remote_solver *r)
{
    if (!r)
        return;
    if (r->fits) {
        for (int h = 0; h < r->nhosts; h++)
            zm_remote_polygon_free(r->fits[h].region);
    }
    free(r->hosts);
    free(r->fits);
    free(r->windows);
    free(r->order_by_peer);
    free(r->window_lo);
    free(r->window_hi);
    free(r);
}

static int by_peer_time(const void *x, const void *y, void *context)
{
    const struct zm_remote_solver *r = context;
    const struct zm_remote_window *a = &r->windows[*(const size_t *)x];
    const struct zm_remote_window *b = &r->windows[*(const size_t *)y];
    if (a->peer.host != b->peer.host)
        return a->peer.host < b->peer.host ? -1 : 1;
    if (a->peer.begin_ns != b->peer.begin_ns)
        return a->peer.begin_ns < b->peer.begin_ns ? -1 : 1;
    return 0;
}

static const char *host_label(const char *const *names, int host, char *buf, size_t len)
{
    if (names && names[host])
        return names[host];
    snprintf(buf, len, "host %d", host);
    return buf;
}

/* Depth-first search for a cycle in the caller -> peer graph (adjacency matrix). */
static int find_cycle(const unsigned char *edge, int n, int node, unsigned char *color, int *from,
                      int *to)
{
    color[node] = 1;
    for (int next = 0; next < n; next++) {
        if (!edge[node * n + next])
            continue;
        if (color[next] == 1) {
            *from = node;
            *to = next;
            return 1;
        }
        if (color[next] == 0 && find_cycle(edge, n, next, color, from, to))
            return 1;
    }
    color[node] = 2;
    return 0;
}

/* Windows of `host` as a peer: the slice of order_by_peer. */
static void host_slice(const struct zm_remote_solver *r, int host, size_t *first, size_t *count)
{
    size_t i = 0;
    while (i < r->nwindows && r->windows[r->order_by_peer[i]].peer.host < host)
        i++;
    size_t j = i;
    while (j < r->nwindows && r->windows[r->order_by_peer[j]].peer.host == host)
        j++;
    *first = i;
    *count = j - i;
}

/* Offset interval of each window in the slice on the axis, from its (already placed) callers. */
static void window_intervals(struct zm_remote_solver *r, size_t first, size_t count)
{
    for (size_t k = first; k < first + count; k++) {
        size_t w = r->order_by_peer[k];
        struct zm_remote_window *win = &r->windows[w];
        int64_t cb, ce, bb, be;
        if (win->status == ZM_REMOTE_WINDOW_DROPPED ||
            zm_remote_solver_place(r, win->caller.host, win->caller.begin_ns, NULL, &cb, &bb) < 0 ||
            zm_remote_solver_place(r, win->caller.host, win->caller.end_ns, NULL, &ce, &be) < 0) {
            r->window_lo[w] = INT64_MAX; /* not a constraint */
            r->window_hi[w] = INT64_MIN;
            continue;
        }
        r->window_lo[w] = cb - bb - win->peer.begin_ns;
        r->window_hi[w] = ce + be - win->peer.end_ns;
    }
}

static int usable(const struct zm_remote_solver *r, size_t w)
{
    return r->window_lo[w] <= r->window_hi[w];
}

/* Per-window fallback: the window of the host nearest to t, widened by the drift over the
 * distance. */
static void place_per_window(const struct zm_remote_solver *r, const struct host_fit *fit,
                             int64_t t, double *lo, double *hi)
{
    double best = INFINITY;
    *lo = 0;
    *hi = 0;
    /* Binary search for the last usable window starting at or before t. */
    size_t a = fit->first_window, b = fit->first_window + fit->nwindows;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (r->windows[r->order_by_peer[mid]].peer.begin_ns <= t)
            a = mid + 1;
        else
            b = mid;
    }
    size_t end = fit->first_window + fit->nwindows;
    /* Look at a few neighbours on each side, skipping unusable windows. */
    for (size_t k = a > fit->first_window + 4 ? a - 4 : fit->first_window; k < end && k < a + 4;
         k++) {
        size_t w = r->order_by_peer[k];
        if (!usable(r, w))
            continue;
        const struct zm_remote_window *win = &r->windows[w];
        double distance = 0;
        if (t < win->peer.begin_ns)
            distance = (double)(win->peer.begin_ns - t);
        else if (t > win->peer.end_ns)
            distance = (double)(t - win->peer.end_ns);
        if (distance < best) {
            best = distance;
            double drift =
                r->max_rate * (distance + (double)(win->peer.end_ns - win->peer.begin_ns));
            *lo = (double)r->window_lo[w] - drift;
            *hi = (double)r->window_hi[w] + drift;
        }
    }
}

/* Places t_ns of a host that was fitted (placed or observed). */
static void place_fitted(const struct zm_remote_solver *r, int host, int64_t t_ns,
                         struct zm_remote_cursor *cursor, int64_t *axis_ns, int64_t *bound_ns)
{
    const struct host_fit *fit = &r->fits[host];
    double lo, hi;
    if (fit->per_window) {
        place_per_window(r, fit, t_ns, &lo, &hi);
    } else {
        double x = (double)t_ns - fit->t0;
        lo = fit->theta0 + zm_remote_polygon_extreme(fit->region, x, -1, &cursor->low_vertex);
        hi = fit->theta0 + zm_remote_polygon_extreme(fit->region, x, 1, &cursor->high_vertex);
    }
    if (r->hosts[host].role == ZM_REMOTE_ROLE_OBSERVED) {
        *axis_ns = t_ns;
        *bound_ns = (int64_t)ceil(fmax(fabs(lo), fabs(hi)));
        return;
    }
    double mid = lo + (hi - lo) / 2;
    *axis_ns = t_ns + (int64_t)llround(mid);
    *bound_ns = (int64_t)ceil((hi - lo) / 2) + 1; /* +1 ns for rounding the midpoint */
}

/* The host's offset and bound at its reference time, once its role and fit are set. */
static void set_reference_offset(const struct zm_remote_solver *r, int host)
{
    struct zm_remote_host *h = &r->hosts[host];
    struct zm_remote_cursor cursor = {0, 0};
    int64_t axis, bound;
    place_fitted(r, host, h->reference_ns, &cursor, &axis, &bound);
    h->offset_ns = axis - h->reference_ns;
    h->bound_ns = bound;
}

/* Fit one peer host. Returns 0, or -1 when out of memory. */
static int fit_host(struct zm_remote_solver *r, int host)
{
    struct zm_remote_host *h = &r->hosts[host];
    struct host_fit *fit = &r->fits[host];
    size_t first, count;
    host_slice(r, host, &first, &count);
    window_intervals(r, first, count);
    fit->first_window = first;
    fit->nwindows = count;

    size_t nused = 0, median = first;
    int observed = 1;
    double lo_min = INFINITY, hi_max = -INFINITY, span = 0;
    for (size_t k = first; k < first + count; k++) {
        size_t w = r->order_by_peer[k];
        if (!usable(r, w))
            continue;
        nused++;
        if (r->window_lo[w] > 0 || r->window_hi[w] < 0)
            observed = 0;
    }
    if (nused == 0) {
        h->role = ZM_REMOTE_ROLE_UNPLACED;
        snprintf(h->method, sizeof(h->method), "unplaced: no usable window");
        return 0;
    }
    /* Relative coordinates keep doubles exact enough: ns since the first window, offsets from it.
     */
    size_t seen = 0;
    for (size_t k = first; k < first + count; k++) {
        size_t w = r->order_by_peer[k];
        if (!usable(r, w))
            continue;
        if (seen == 0) {
            fit->t0 = (double)r->windows[w].peer.begin_ns;
            fit->theta0 = (double)r->window_lo[w];
        }
        if (seen == nused / 2)
            median = k;
        seen++;
        double lo = (double)r->window_lo[w] - fit->theta0;
        double hi = (double)r->window_hi[w] - fit->theta0;
        lo_min = fmin(lo_min, lo);
        hi_max = fmax(hi_max, hi);
        span = fmax(span, (double)r->windows[w].peer.end_ns - fit->t0);
    }
    h->reference_ns = r->windows[r->order_by_peer[median]].peer.begin_ns;

    /* The starting box: any offset the windows could imply, any rate within the bound. */
    double rate = r->max_rate;
    double box = 4 * (fabs(lo_min) + fabs(hi_max) + rate * span) + 1e9;
    struct zm_remote_polygon *region = zm_remote_polygon_new();
    if (!region || zm_remote_polygon_box(region, -box, box, -rate, rate) != 0)
        goto nomem;
    for (size_t k = first; k < first + count && !zm_remote_polygon_empty(region); k++) {
        size_t w = r->order_by_peer[k];
        if (!usable(r, w))
            continue;
        double xb = (double)r->windows[w].peer.begin_ns - fit->t0;
        double xe = (double)r->windows[w].peer.end_ns - fit->t0;
        double lo = (double)r->window_lo[w] - fit->theta0;
        double hi = (double)r->window_hi[w] - fit->theta0;
        /* a + b*xb >= lo  and  a + b*xe <= hi */
        if (zm_remote_polygon_clip(region, -1, -xb, -lo) != 0 ||
            zm_remote_polygon_clip(region, 1, xe, hi) != 0)
            goto nomem;
    }

    if (zm_remote_polygon_empty(region)) {
        zm_remote_polygon_free(region);
        fit->per_window = true;
        h->role = ZM_REMOTE_ROLE_PLACED;
        snprintf(h->method, sizeof(h->method),
                 "per-window: windows inconsistent with one clock drifting <= %.0f ppm",
                 rate * 1e6);
        set_reference_offset(r, host);
        return 0;
    }
    zm_remote_polygon_dedupe(region);
    fit->region = region;
    h->role = observed ? ZM_REMOTE_ROLE_OBSERVED : ZM_REMOTE_ROLE_PLACED;
    if (observed)
        snprintf(h->method, sizeof(h->method), "observed: own clock fits %zu windows", nused);
    else
        snprintf(h->method, sizeof(h->method), "per-host: %zu windows, drift <= %.0f ppm", nused,
                 rate * 1e6);
    set_reference_offset(r, host);
    return 0;
nomem:
    zm_remote_polygon_free(region);
    return -1;
}

static int alloc_solver(struct zm_remote_solver *r, size_t nframes, int nhosts)
{
    r->nhosts = nhosts;
    size_t hosts = nhosts > 0 ? (size_t)nhosts : 1;
    r->hosts = calloc(hosts, sizeof(*r->hosts));
    r->fits = calloc(hosts, sizeof(*r->fits));
    size_t n = nframes ? nframes : 1;
    r->windows = malloc(n * sizeof(*r->windows));
    r->order_by_peer = malloc(n * sizeof(*r->order_by_peer));
    r->window_lo = malloc(n * sizeof(*r->window_lo));
    r->window_hi = malloc(n * sizeof(*r->window_hi));
    return r->hosts && r->fits && r->windows && r->order_by_peer && r->window_lo && r->window_hi
               ? 0
               : -1;
}

/* Keep complete frames, measure them, mark the ones that cannot be one dispatch. */
static void collect_windows(struct zm_remote_solver *r, const struct zm_remote_index *frames)
{
    size_t nframes = zm_remote_index_count(frames);
    for (size_t f = 0; f < nframes; f++) {
        const struct zm_remote_frame *frame = zm_remote_index_frame(frames, f);
        if (!(frame->caller.have_begin && frame->caller.have_end && frame->peer.have_begin &&
              frame->peer.have_end) ||
            frame->caller.host < 0 || frame->caller.host >= r->nhosts || frame->peer.host < 0 ||
            frame->peer.host >= r->nhosts) {
            r->incomplete++;
            continue;
        }
        struct zm_remote_window *w = &r->windows[r->nwindows];
        *w = (struct zm_remote_window){
            .key = frame->key, .caller = frame->caller, .peer = frame->peer};
        int64_t caller_duration = w->caller.end_ns - w->caller.begin_ns;
        int64_t peer_duration = w->peer.end_ns - w->peer.begin_ns;
        w->slack_ns = caller_duration - peer_duration;
        w->rate_bound_ns = (int64_t)ceil((double)caller_duration * r->max_rate);
        w->status = ZM_REMOTE_WINDOW_PLACED;
        if (w->slack_ns < 0 || peer_duration < 0) {
            w->status = ZM_REMOTE_WINDOW_DROPPED;
            r->dropped++;
        } else if (w->caller.host == w->peer.host) {
            /* One host, one clock: the windows must nest as recorded. */
            int nested =
                w->peer.begin_ns >= w->caller.begin_ns && w->peer.end_ns <= w->caller.end_ns;
            w->status = nested ? ZM_REMOTE_WINDOW_OBSERVED : ZM_REMOTE_WINDOW_DROPPED;
            if (!nested)
                r->dropped++;
        }
        r->order_by_peer[r->nwindows] = r->nwindows;
        r->nwindows++;
    }
}

struct zm_remote_solver *zm_remote_solver_solve(const struct zm_remote_index *frames, int nhosts,
                                                const char *const *names, int default_axis,
                                                double max_rate_ppm, char *error, size_t errlen)
{
    int status = -1;
    unsigned char *edge = NULL, *color = NULL;
    int *queue = NULL, *indegree = NULL, *outcount = NULL;
    char buf1[32], buf2[32];

    struct zm_remote_solver *r = calloc(1, sizeof(*r));
    if (!r)
        goto nomem;
    r->axis = -1;
    r->max_rate = max_rate_ppm / 1e6;
    if (alloc_solver(r, zm_remote_index_count(frames), nhosts) < 0)
        goto nomem;
    collect_windows(r, frames);

    size_t nn = nhosts > 0 ? (size_t)nhosts : 1;
    edge = calloc(nn * nn, 1);
    color = calloc(nn, 1);
    queue = malloc(nn * sizeof(int));
    indegree = calloc(nn, sizeof(int));
    outcount = calloc(nn, sizeof(int));
    if (!edge || !color || !queue || !indegree || !outcount)
        goto nomem;
    for (size_t i = 0; i < r->nwindows; i++) {
        const struct zm_remote_window *w = &r->windows[i];
        if (w->status != ZM_REMOTE_WINDOW_PLACED)
            continue;
        edge[w->caller.host * nhosts + w->peer.host] = 1;
        outcount[w->caller.host]++;
    }
    for (int h = 0; h < nhosts; h++) {
        int from, to;
        if (color[h] == 0 && find_cycle(edge, nhosts, h, color, &from, &to)) {
            snprintf(error, errlen,
                     "remote windows form a cycle: %s dispatches to %s, which is "
                     "already upstream of it",
                     host_label(names, from, buf1, sizeof(buf1)),
                     host_label(names, to, buf2, sizeof(buf2)));
            goto end;
        }
    }
    for (int c = 0; c < nhosts; c++)
        for (int p = 0; p < nhosts; p++)
            indegree[p] += edge[c * nhosts + p];

    /* The axis: a host that dispatches and is not served; the busiest such one. */
    for (int h = 0; h < nhosts; h++) {
        if (outcount[h] > 0 && indegree[h] == 0 && (r->axis < 0 || outcount[h] > outcount[r->axis]))
            r->axis = h;
    }
    if (r->axis < 0 && nhosts > 0)
        r->axis = default_axis >= 0 && default_axis < nhosts ? default_axis : 0;
    for (int h = 0; h < nhosts; h++) {
        r->hosts[h].role = ZM_REMOTE_ROLE_UNPLACED;
        snprintf(r->hosts[h].method, sizeof(r->hosts[h].method),
                 "unplaced: no chain of frames from the axis host");
    }
    if (r->axis < 0) {
        status = 0;
        goto end;
    }
    r->hosts[r->axis].role = ZM_REMOTE_ROLE_AXIS;
    snprintf(r->hosts[r->axis].method, sizeof(r->hosts[r->axis].method), "axis");

    qsort_r(r->order_by_peer, r->nwindows, sizeof(*r->order_by_peer), by_peer_time, r);

    /* Reachable hosts in topological order (Kahn over the subgraph reachable from the axis), so
     * every caller is placed before its peers. */
    memset(color, 0, nn);
    int head = 0, tail = 0;
    queue[tail++] = r->axis;
    color[r->axis] = 1;
    while (head < tail) {
        int c = queue[head++];
        for (int p = 0; p < nhosts; p++) {
            if (edge[c * nhosts + p] && !color[p]) {
                color[p] = 1;
                queue[tail++] = p;
            }
        }
    }
    for (int p = 0; p < nhosts; p++) {
        indegree[p] = 0;
        for (int c = 0; c < nhosts; c++)
            indegree[p] += color[c] && color[p] && edge[c * nhosts + p];
    }
    head = tail = 0;
    queue[tail++] = r->axis;
    while (head < tail) {
        int c = queue[head++];
        if (c != r->axis && fit_host(r, c) < 0)
            goto nomem;
        for (int p = 0; p < nhosts; p++) {
            if (color[c] && edge[c * nhosts + p] && --indegree[p] == 0)
                queue[tail++] = p;
        }
    }
    /* A window whose peer kept its own times is "observed", not moved. */
    for (size_t i = 0; i < r->nwindows; i++) {
        struct zm_remote_window *w = &r->windows[i];
        if (w->status == ZM_REMOTE_WINDOW_PLACED &&
            r->hosts[w->peer.host].role == ZM_REMOTE_ROLE_OBSERVED)
            w->status = ZM_REMOTE_WINDOW_OBSERVED;
    }
    status = 0;
    goto end;

nomem:
    snprintf(error, errlen, "out of memory");
end:
    free(edge);
    free(color);
    free(queue);
    free(indegree);
    free(outcount);
    if (status < 0) {
        zm_remote_solver_free(r);
        return NULL;
    }
    return r;
}

int zm_remote_solver_place(const struct zm_remote_solver *r, int host, int64_t t_ns,
                           struct zm_remote_cursor *cursor, int64_t *axis_ns, int64_t *bound_ns)
{
    struct zm_remote_cursor scratch = {0, 0};
    if (!cursor)
        cursor = &scratch;
    if (host < 0 || host >= r->nhosts)
        return -1;
    switch (r->hosts[host].role) {
    case ZM_REMOTE_ROLE_AXIS:
        *axis_ns = t_ns;
        *bound_ns = 0;
        return 0;
    case ZM_REMOTE_ROLE_UNPLACED:
        return -1;
    case ZM_REMOTE_ROLE_OBSERVED:
    case ZM_REMOTE_ROLE_PLACED:
        break;
    }
    place_fitted(r, host, t_ns, cursor, axis_ns, bound_ns);
    return 0;
}

int zm_remote_solver_axis(const struct zm_remote_solver *solver)
{
    return solver->axis;
}

const struct zm_remote_host *zm_remote_solver_host(const struct zm_remote_solver *solver, int host)
{
    return &solver->hosts[host];
}

size_t zm_remote_solver_window_count(const struct zm_remote_solver *solver)
{
    return solver->nwindows;
}

const struct zm_remote_window *zm_remote_solver_window(const struct zm_remote_solver *solver,
                                                       size_t window)
{
    return &solver->windows[window];
}

size_t zm_remote_solver_incomplete(const struct zm_remote_solver *solver)
{
    return solver->incomplete;
}

size_t zm_remote_solver_dropped(const struct zm_remote_solver *solver)
{
    return solver->dropped;
}
