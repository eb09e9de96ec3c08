/*
 * remote: pairing remote-dispatch frames and placing peer hosts on the axis clock.
 * The model and its guarantees are described in remote.h.
 */
#include "remote.h"

#include "grow.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY_SLOT ((size_t)-1)

/* ---- frame set --------------------------------------------------------------------------- */

static uint64_t key_hash(const struct remote_key *key)
{
    /* splitmix64 finalizer over the three fields: cheap and well mixed. */
    uint64_t h = key->session * 0x9e3779b97f4a7c15ULL;
    h ^= ((uint64_t)key->worker << 32) ^ key->sequence;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

static int key_equal(const struct remote_key *a, const struct remote_key *b)
{
    return a->session == b->session && a->worker == b->worker && a->sequence == b->sequence;
}

void remote_set_init(struct remote_set *set)
{
    memset(set, 0, sizeof(*set));
}

void remote_set_release(struct remote_set *set)
{
    free(set->frames);
    free(set->slots);
    remote_set_init(set);
}

static int set_grow_index(struct remote_set *set)
{
    size_t nslots = set->nslots ? set->nslots * 2 : 64;
    size_t *slots = malloc(nslots * sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < nslots; i++)
        slots[i] = EMPTY_SLOT;
    for (size_t f = 0; f < set->nframes; f++) {
        size_t i = key_hash(&set->frames[f].key) & (nslots - 1);
        while (slots[i] != EMPTY_SLOT)
            i = (i + 1) & (nslots - 1);
        slots[i] = f;
    }
    free(set->slots);
    set->slots = slots;
    set->nslots = nslots;
    return 0;
}

/* The frame with this key, created when absent; NULL when out of memory. */
static struct remote_window *set_frame(struct remote_set *set, const struct remote_key *key)
{
    /* Keep the load factor under one half. */
    if ((set->nframes + 1) * 2 > set->nslots && set_grow_index(set) < 0)
        return NULL;
    size_t i = key_hash(key) & (set->nslots - 1);
    for (; set->slots[i] != EMPTY_SLOT; i = (i + 1) & (set->nslots - 1)) {
        if (key_equal(&set->frames[set->slots[i]].key, key))
            return &set->frames[set->slots[i]];
    }
    if (ZM_GROW(set->frames, set->capacity, set->nframes + 1, 64) != 0)
        return NULL;
    struct remote_window *frame = &set->frames[set->nframes];
    memset(frame, 0, sizeof(*frame));
    frame->key = *key;
    set->slots[i] = set->nframes++;
    return frame;
}

int remote_set_add(struct remote_set *set, enum remote_mark mark, const struct remote_key *key,
                   int host, int64_t pid, int64_t time_ns)
{
    struct remote_window *frame = set_frame(set, key);
    if (!frame) {
        snprintf(set->error, sizeof(set->error), "out of memory");
        return -1;
    }
    int serve = mark == REMOTE_SERVE_BEGIN || mark == REMOTE_SERVE_END;
    int begin = mark == REMOTE_DISPATCH_BEGIN || mark == REMOTE_SERVE_BEGIN;
    struct remote_side *side = serve ? &frame->peer : &frame->caller;
    if ((begin && side->have_begin) || (!begin && side->have_end)) {
        snprintf(set->error, sizeof(set->error),
                 "frame %" PRIu64 ":%" PRIu32 ":%" PRIu64 " %s twice", key->session, key->worker,
                 key->sequence, serve ? "served" : "dispatched");
        return -1;
    }
    if ((side->have_begin || side->have_end) && (side->host != host || side->pid != pid)) {
        snprintf(set->error, sizeof(set->error),
                 "frame %" PRIu64 ":%" PRIu32 ":%" PRIu64 " %s twice", key->session, key->worker,
                 key->sequence, serve ? "served" : "dispatched");
        return -1;
    }
    side->host = host;
    side->pid = pid;
    if (begin) {
        side->begin_ns = time_ns;
        side->have_begin = 1;
    } else {
        side->end_ns = time_ns;
        side->have_end = 1;
    }
    return 0;
}

/* ---- feasible region of theta(t) = theta0 + a + b (t - t0) --------------------------------- */

/* A convex polygon in (a, b), clipped by half-planes alpha*a + beta*b <= gamma. */
struct polygon {
    double *xy; /* a0, b0, a1, b1, ... */
    size_t n;
    double *scratch;                      /* the next xy while clipping */
    size_t xy_capacity, scratch_capacity; /* in vertices */
};

static int polygon_reserve(struct polygon *p, size_t n)
{
    const size_t vertex = 2 * sizeof(double);
    if (zm_grow(&p->xy, &p->xy_capacity, n, vertex, 16) != 0 ||
        zm_grow(&p->scratch, &p->scratch_capacity, n, vertex, 16) != 0)
        return -1;
    return 0;
}

/* Sutherland-Hodgman against one half-plane; the polygon stays convex. */
static int polygon_clip(struct polygon *p, double alpha, double beta, double gamma)
{
    if (p->n == 0)
        return 0;
    if (polygon_reserve(p, p->n + 1) < 0)
        return -1;
    size_t out = 0;
    for (size_t i = 0; i < p->n; i++) {
        size_t j = (i + 1) % p->n;
        double ax = p->xy[2 * i], ay = p->xy[2 * i + 1];
        double bx = p->xy[2 * j], by = p->xy[2 * j + 1];
        double da = alpha * ax + beta * ay - gamma;
        double db = alpha * bx + beta * by - gamma;
        if (da <= 0) {
            p->scratch[2 * out] = ax;
            p->scratch[2 * out + 1] = ay;
            out++;
        }
        if ((da < 0 && db > 0) || (da > 0 && db < 0)) {
            double s = da / (da - db);
            p->scratch[2 * out] = ax + s * (bx - ax);
            p->scratch[2 * out + 1] = ay + s * (by - ay);
            out++;
        }
    }
    double *swap = p->xy;
    size_t swap_capacity = p->xy_capacity;
    p->xy = p->scratch;
    p->xy_capacity = p->scratch_capacity;
    p->scratch = swap;
    p->scratch_capacity = swap_capacity;
    p->n = out;
    return 0;
}

/* Drop consecutive vertices that coincide, so that a linear function is strictly unimodal along
 * the boundary (clipping through a vertex can repeat it). */
static void polygon_dedupe(struct polygon *p)
{
    size_t out = 0;
    for (size_t i = 0; i < p->n; i++) {
        const double *v = &p->xy[2 * i];
        if (out > 0 && v[0] == p->xy[2 * (out - 1)] && v[1] == p->xy[2 * (out - 1) + 1])
            continue;
        p->xy[2 * out] = v[0];
        p->xy[2 * out + 1] = v[1];
        out++;
    }
    while (out > 1 && p->xy[0] == p->xy[2 * (out - 1)] && p->xy[1] == p->xy[2 * (out - 1) + 1])
        out--;
    p->n = out;
}

/* The vertex where sign * (a + b*x) is largest, by climbing from *start along the convex boundary:
 * a linear function is unimodal there, and consecutive x move the optimum little. */
static double polygon_extreme(const double *xy, size_t n, double x, double sign, size_t *start)
{
    size_t i = *start < n ? *start : 0;
    double best = sign * (xy[2 * i] + xy[2 * i + 1] * x);
    for (size_t steps = 0; steps < n; steps++) {
        size_t next = (i + 1) % n, prev = (i + n - 1) % n;
        double vn = sign * (xy[2 * next] + xy[2 * next + 1] * x);
        double vp = sign * (xy[2 * prev] + xy[2 * prev + 1] * x);
        if (vn > best && vn >= vp) {
            i = next;
            best = vn;
        } else if (vp > best) {
            i = prev;
            best = vp;
        } else {
            break;
        }
    }
    *start = i;
    return sign * best;
}

/* ---- solving --------------------------------------------------------------------------- */

const char *remote_role_name(enum remote_role role)
{
    switch (role) {
    case REMOTE_ROLE_AXIS:
        return "axis";
    case REMOTE_ROLE_PLACED:
        return "placed";
    case REMOTE_ROLE_OBSERVED:
        return "observed";
    case REMOTE_ROLE_UNPLACED:
        return "unplaced";
    }
    return "unknown";
}

const char *remote_window_status_name(enum remote_window_status status)
{
    switch (status) {
    case REMOTE_WINDOW_PLACED:
        return "placed";
    case REMOTE_WINDOW_OBSERVED:
        return "observed";
    case REMOTE_WINDOW_DROPPED:
        return "dropped";
    }
    return "unknown";
}

void remote_result_release(struct remote_result *result)
{
    if (result->hosts) {
        for (int h = 0; h < result->nhosts; h++)
            free(result->hosts[h].vertices);
    }
    free(result->hosts);
    free(result->windows);
    free(result->order_by_peer);
    free(result->window_lo);
    free(result->window_hi);
    memset(result, 0, sizeof(*result));
}

static int by_peer_time(const void *x, const void *y, void *context)
{
    const struct remote_result *r = context;
    const struct remote_window *a = &r->windows[*(const size_t *)x];
    const struct remote_window *b = &r->windows[*(const size_t *)y];
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
static int find_cycle(const unsigned char *edge, int n, int node, unsigned char *color,
                      int *from, int *to)
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
static void host_slice(const struct remote_result *r, int host, size_t *first, size_t *count)
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

/* Offset interval of each window of `host` on the axis, from its (already placed) callers. */
static void window_intervals(struct remote_result *r, int host, size_t first, size_t count)
{
    for (size_t k = first; k < first + count; k++) {
        size_t w = r->order_by_peer[k];
        struct remote_window *win = &r->windows[w];
        int64_t cb, ce, bb, be;
        if (win->status == REMOTE_WINDOW_DROPPED ||
            remote_place(r, win->caller.host, win->caller.begin_ns, NULL, &cb, &bb) < 0 ||
            remote_place(r, win->caller.host, win->caller.end_ns, NULL, &ce, &be) < 0) {
            r->window_lo[w] = INT64_MAX; /* not a constraint */
            r->window_hi[w] = INT64_MIN;
            continue;
        }
        r->window_lo[w] = cb - bb - win->peer.begin_ns;
        r->window_hi[w] = ce + be - win->peer.end_ns;
    }
    (void)host;
}

static int usable(const struct remote_result *r, size_t w)
{
    return r->window_lo[w] <= r->window_hi[w];
}

/* Fit one peer host. Returns 0, or -1 when out of memory. */
static int fit_host(struct remote_result *r, int host, struct polygon *poly)
{
    struct remote_host *h = &r->hosts[host];
    size_t first, count;
    host_slice(r, host, &first, &count);
    window_intervals(r, host, first, count);
    h->first_window = first;
    h->nwindows = count;

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
        h->role = REMOTE_ROLE_UNPLACED;
        snprintf(h->method, sizeof(h->method), "unplaced: no usable window");
        return 0;
    }
    /* Relative coordinates keep doubles exact enough: ns since the first window, offsets from it. */
    size_t seen = 0;
    for (size_t k = first; k < first + count; k++) {
        size_t w = r->order_by_peer[k];
        if (!usable(r, w))
            continue;
        if (seen == 0) {
            h->t0 = (double)r->windows[w].peer.begin_ns;
            h->theta0 = (double)r->window_lo[w];
        }
        if (seen == nused / 2)
            median = k;
        seen++;
        double lo = (double)r->window_lo[w] - h->theta0;
        double hi = (double)r->window_hi[w] - h->theta0;
        lo_min = fmin(lo_min, lo);
        hi_max = fmax(hi_max, hi);
        span = fmax(span, (double)r->windows[w].peer.end_ns - h->t0);
    }
    h->reference_ns = r->windows[r->order_by_peer[median]].peer.begin_ns;

    /* The starting box: any offset the windows could imply, any rate within the bound. */
    double rate = r->max_rate;
    double box = 4 * (fabs(lo_min) + fabs(hi_max) + rate * span) + 1e9;
    if (polygon_reserve(poly, 8) < 0)
        return -1;
    poly->n = 4;
    double corners[8] = {-box, -rate, box, -rate, box, rate, -box, rate};
    memcpy(poly->xy, corners, sizeof(corners));
    for (size_t k = first; k < first + count && poly->n > 0; k++) {
        size_t w = r->order_by_peer[k];
        if (!usable(r, w))
            continue;
        double xb = (double)r->windows[w].peer.begin_ns - h->t0;
        double xe = (double)r->windows[w].peer.end_ns - h->t0;
        /* a + b*xb >= lo  and  a + b*xe <= hi */
        if (polygon_clip(poly, -1, -xb, -((double)r->window_lo[w] - h->theta0)) < 0 ||
            polygon_clip(poly, 1, xe, (double)r->window_hi[w] - h->theta0) < 0)
            return -1;
    }

    if (poly->n == 0) {
        h->per_window = 1;
        h->role = REMOTE_ROLE_PLACED;
        snprintf(h->method, sizeof(h->method),
                 "per-window: windows inconsistent with one clock drifting <= %.0f ppm",
                 rate * 1e6);
        int64_t axis, bound;
        remote_place(r, host, h->reference_ns, NULL, &axis, &bound);
        h->offset_ns = axis - h->reference_ns;
        h->bound_ns = bound;
        return 0;
    }
    polygon_dedupe(poly);
    h->vertices = malloc(2 * poly->n * sizeof(double));
    if (!h->vertices)
        return -1;
    memcpy(h->vertices, poly->xy, 2 * poly->n * sizeof(double));
    h->nvertices = poly->n;
    h->role = observed ? REMOTE_ROLE_OBSERVED : REMOTE_ROLE_PLACED;
    if (observed)
        snprintf(h->method, sizeof(h->method), "observed: own clock fits %zu windows", nused);
    else
        snprintf(h->method, sizeof(h->method), "per-host: %zu windows, drift <= %.0f ppm", nused,
                 rate * 1e6);
    int64_t axis, bound;
    remote_place(r, host, h->reference_ns, NULL, &axis, &bound);
    h->offset_ns = axis - h->reference_ns;
    h->bound_ns = bound;
    return 0;
}

static int alloc_result(struct remote_result *r, const struct remote_set *set, int nhosts)
{
    r->nhosts = nhosts;
    r->hosts = calloc(nhosts > 0 ? (size_t)nhosts : 1, sizeof(*r->hosts));
    size_t n = set->nframes ? set->nframes : 1;
    r->windows = malloc(n * sizeof(*r->windows));
    r->order_by_peer = malloc(n * sizeof(*r->order_by_peer));
    r->window_lo = malloc(n * sizeof(*r->window_lo));
    r->window_hi = malloc(n * sizeof(*r->window_hi));
    return r->hosts && r->windows && r->order_by_peer && r->window_lo && r->window_hi ? 0 : -1;
}

/* Keep complete frames, measure them, mark the ones that cannot be one dispatch. */
static void collect_windows(struct remote_result *r, const struct remote_set *set)
{
    for (size_t f = 0; f < set->nframes; f++) {
        const struct remote_window *frame = &set->frames[f];
        if (!(frame->caller.have_begin && frame->caller.have_end && frame->peer.have_begin &&
              frame->peer.have_end) ||
            frame->caller.host < 0 || frame->caller.host >= r->nhosts || frame->peer.host < 0 ||
            frame->peer.host >= r->nhosts) {
            r->incomplete++;
            continue;
        }
        struct remote_window *w = &r->windows[r->nwindows];
        *w = *frame;
        int64_t caller_duration = w->caller.end_ns - w->caller.begin_ns;
        int64_t peer_duration = w->peer.end_ns - w->peer.begin_ns;
        w->slack_ns = caller_duration - peer_duration;
        w->rate_bound_ns = (int64_t)ceil((double)caller_duration * r->max_rate);
        w->status = REMOTE_WINDOW_PLACED;
        if (w->slack_ns < 0 || peer_duration < 0) {
            w->status = REMOTE_WINDOW_DROPPED;
            r->dropped++;
        } else if (w->caller.host == w->peer.host) {
            /* One host, one clock: the windows must nest as recorded. */
            int nested = w->peer.begin_ns >= w->caller.begin_ns && w->peer.end_ns <= w->caller.end_ns;
            w->status = nested ? REMOTE_WINDOW_OBSERVED : REMOTE_WINDOW_DROPPED;
            if (!nested)
                r->dropped++;
        }
        r->order_by_peer[r->nwindows] = r->nwindows;
        r->nwindows++;
    }
}

int remote_solve(const struct remote_set *set, int nhosts, const char *const *names,
                 int default_axis, double max_rate_ppm, struct remote_result *r, char *error,
                 size_t errlen)
{
    int status = -1;
    unsigned char *edge = NULL, *color = NULL;
    int *queue = NULL, *indegree = NULL, *outcount = NULL;
    struct polygon poly = {0};
    char buf1[32], buf2[32];

    memset(r, 0, sizeof(*r));
    r->axis = -1;
    r->max_rate = max_rate_ppm / 1e6;
    if (alloc_result(r, set, nhosts) < 0)
        goto nomem;
    collect_windows(r, set);

    size_t nn = nhosts > 0 ? (size_t)nhosts : 1;
    edge = calloc(nn * nn, 1);
    color = calloc(nn, 1);
    queue = malloc(nn * sizeof(int));
    indegree = calloc(nn, sizeof(int));
    outcount = calloc(nn, sizeof(int));
    if (!edge || !color || !queue || !indegree || !outcount)
        goto nomem;
    for (size_t i = 0; i < r->nwindows; i++) {
        const struct remote_window *w = &r->windows[i];
        if (w->status != REMOTE_WINDOW_PLACED)
            continue;
        edge[w->caller.host * nhosts + w->peer.host] = 1;
        outcount[w->caller.host]++;
    }
    for (int h = 0; h < nhosts; h++) {
        int from, to;
        if (color[h] == 0 && find_cycle(edge, nhosts, h, color, &from, &to)) {
            snprintf(error, errlen, "remote windows form a cycle: %s dispatches to %s, which is "
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
        r->hosts[h].role = REMOTE_ROLE_UNPLACED;
        r->hosts[h].caller = -1;
        snprintf(r->hosts[h].method, sizeof(r->hosts[h].method),
                 "unplaced: no chain of frames from the axis host");
    }
    if (r->axis < 0) {
        status = 0;
        goto end;
    }
    r->hosts[r->axis].role = REMOTE_ROLE_AXIS;
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
        if (c != r->axis && fit_host(r, c, &poly) < 0)
            goto nomem;
        for (int p = 0; p < nhosts; p++) {
            if (color[c] && edge[c * nhosts + p] && --indegree[p] == 0)
                queue[tail++] = p;
        }
    }
    /* A window whose peer kept its own times is "observed", not moved. */
    for (size_t i = 0; i < r->nwindows; i++) {
        struct remote_window *w = &r->windows[i];
        if (w->status == REMOTE_WINDOW_PLACED && r->hosts[w->peer.host].role == REMOTE_ROLE_OBSERVED)
            w->status = REMOTE_WINDOW_OBSERVED;
    }
    status = 0;
    goto end;

nomem:
    snprintf(error, errlen, "out of memory");
end:
    free(poly.xy);
    free(poly.scratch);
    free(edge);
    free(color);
    free(queue);
    free(indegree);
    free(outcount);
    if (status < 0)
        remote_result_release(r);
    return status;
}

/* Per-window fallback: the window of `h` nearest to t, widened by the drift over the distance. */
static void place_per_window(const struct remote_result *r, const struct remote_host *h, int64_t t,
                             double *lo, double *hi)
{
    double best = INFINITY;
    *lo = 0;
    *hi = 0;
    /* Binary search for the last usable window starting at or before t. */
    size_t a = h->first_window, b = h->first_window + h->nwindows;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (r->windows[r->order_by_peer[mid]].peer.begin_ns <= t)
            a = mid + 1;
        else
            b = mid;
    }
    size_t end = h->first_window + h->nwindows;
    /* Look at a few neighbours on each side, skipping unusable windows. */
    for (size_t k = a > h->first_window + 4 ? a - 4 : h->first_window; k < end && k < a + 4; k++) {
        size_t w = r->order_by_peer[k];
        if (!usable(r, w))
            continue;
        const struct remote_window *win = &r->windows[w];
        double distance = 0;
        if (t < win->peer.begin_ns)
            distance = (double)(win->peer.begin_ns - t);
        else if (t > win->peer.end_ns)
            distance = (double)(t - win->peer.end_ns);
        if (distance < best) {
            best = distance;
            double drift = r->max_rate * (distance + (double)(win->peer.end_ns - win->peer.begin_ns));
            *lo = (double)r->window_lo[w] - drift;
            *hi = (double)r->window_hi[w] + drift;
        }
    }
}

int remote_place(const struct remote_result *r, int host, int64_t t_ns,
                 struct remote_cursor *cursor, int64_t *axis_ns, int64_t *bound_ns)
{
    struct remote_cursor scratch = {0, 0};
    if (!cursor)
        cursor = &scratch;
    if (host < 0 || host >= r->nhosts)
        return -1;
    const struct remote_host *h = &r->hosts[host];
    double lo, hi;
    switch (h->role) {
    case REMOTE_ROLE_AXIS:
        *axis_ns = t_ns;
        *bound_ns = 0;
        return 0;
    case REMOTE_ROLE_UNPLACED:
        return -1;
    case REMOTE_ROLE_OBSERVED:
    case REMOTE_ROLE_PLACED:
        break;
    }
    if (h->per_window) {
        place_per_window(r, h, t_ns, &lo, &hi);
    } else {
        double x = (double)t_ns - h->t0;
        lo = h->theta0 + polygon_extreme(h->vertices, h->nvertices, x, -1, &cursor->low_vertex);
        hi = h->theta0 + polygon_extreme(h->vertices, h->nvertices, x, 1, &cursor->high_vertex);
    }
    if (h->role == REMOTE_ROLE_OBSERVED) {
        *axis_ns = t_ns;
        *bound_ns = (int64_t)ceil(fmax(fabs(lo), fabs(hi)));
        return 0;
    }
    double mid = lo + (hi - lo) / 2;
    *axis_ns = t_ns + (int64_t)llround(mid);
    *bound_ns = (int64_t)ceil((hi - lo) / 2) + 1; /* +1 ns for rounding the midpoint */
    return 0;
}
