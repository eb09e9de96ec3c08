/*
 * Unit tests of remote-dispatch placement (merger/remote_index.c, remote_polygon.c,
 * remote_solver.c) on synthetic windows whose true clock offsets and rates are known: random
 * offsets, drift up to the rate bound, mismatched runs, refusals (dispatched or served twice,
 * cycles), chains and unreachable hosts.
 */
#include "remote_polygon.h"
#include "remote_solver.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t uniform(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng() % (uint64_t)(hi - lo + 1));
}

/* A host clock: local = (true - epoch) * (1 + skew). */
struct clock_model {
    int64_t epoch;
    double skew;
};

static int64_t local_time(const struct clock_model *c, int64_t true_ns)
{
    return (int64_t)llround((double)(true_ns - c->epoch) * (1.0 + c->skew));
}

/* The true offset at a peer-local time: axis time - peer time (axis = caller's clock). */
static double true_offset(const struct clock_model *axis, const struct clock_model *peer,
                          int64_t peer_local)
{
    double true_ns = (double)peer_local / (1.0 + peer->skew) + (double)peer->epoch;
    double axis_local = (true_ns - (double)axis->epoch) * (1.0 + axis->skew);
    return axis_local - (double)peer_local;
}

struct hop {
    int caller, peer;
};

/* Record `n` frames from caller to peer starting at true time `start`, one every `period` ns;
 * the peer serves between 20 and 80 us inside each caller window of 100-300 us. */
static void record_frames(struct zm_remote_index *set, const struct clock_model *clocks,
                          struct hop hop, uint64_t session, int n, int64_t start, int64_t period)
{
    for (int i = 0; i < n; i++) {
        struct zm_remote_key key = {session, (uint32_t)hop.caller, (uint64_t)i};
        int64_t cb = start + (int64_t)i * period + uniform(0, period / 4);
        int64_t ce = cb + uniform(100000, 300000);
        int64_t pb = cb + uniform(20000, 80000);
        int64_t pe = ce - uniform(20000, 80000);
        const struct clock_model *caller = &clocks[hop.caller], *peer = &clocks[hop.peer];
        int caller_pid = 100 + hop.caller, peer_pid = 200 + hop.peer;
        CHECK(zm_remote_index_add(set, ZM_REMOTE_DISPATCH_BEGIN, &key, hop.caller, caller_pid,
                                  local_time(caller, cb)) == 0 &&
                  zm_remote_index_add(set, ZM_REMOTE_SERVE_BEGIN, &key, hop.peer, peer_pid,
                                      local_time(peer, pb)) == 0 &&
                  zm_remote_index_add(set, ZM_REMOTE_SERVE_END, &key, hop.peer, peer_pid,
                                      local_time(peer, pe)) == 0 &&
                  zm_remote_index_add(set, ZM_REMOTE_DISPATCH_END, &key, hop.caller, caller_pid,
                                      local_time(caller, ce)) == 0,
              "frame %d refused: %s", i, zm_remote_index_error(set));
    }
}

/* Every peer window placed on the axis lies inside its caller window, and every placed instant is
 * within its bound of the truth. */
static void check_windows(const struct zm_remote_solver *r, const struct clock_model *clocks)
{
    for (size_t i = 0; i < zm_remote_solver_window_count(r); i++) {
        const struct zm_remote_window *w = zm_remote_solver_window(r, i);
        if (w->status == ZM_REMOTE_WINDOW_DROPPED)
            continue;
        int64_t cb, ce, pb, pe, bcb, bce, bpb, bpe;
        if (zm_remote_solver_place(r, w->caller.host, w->caller.begin_ns, NULL, &cb, &bcb) < 0 ||
            zm_remote_solver_place(r, w->caller.host, w->caller.end_ns, NULL, &ce, &bce) < 0 ||
            zm_remote_solver_place(r, w->peer.host, w->peer.begin_ns, NULL, &pb, &bpb) < 0 ||
            zm_remote_solver_place(r, w->peer.host, w->peer.end_ns, NULL, &pe, &bpe) < 0) {
            CHECK(0, "window %zu not placed", i);
            continue;
        }
        /* Inside, up to the caller's own placement uncertainty (zero when it is the axis). */
        CHECK(pb >= cb - bcb && pe <= ce + bce,
              "peer [%" PRId64 ", %" PRId64 ") outside caller [%" PRId64 ", %" PRId64 ")", pb, pe,
              cb, ce);
        double truth =
            true_offset(&clocks[zm_remote_solver_axis(r)], &clocks[w->peer.host], w->peer.begin_ns);
        double err = fabs((double)(pb - w->peer.begin_ns) - truth);
        CHECK(err <= (double)bpb + 1, "window %zu: error %.0f ns > bound %" PRId64, i, err, bpb);
    }
}

static void test_two_hosts_random_offsets(void)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        rng_state = seed * 0x2545f4914f6cdd1dULL;
        struct clock_model clocks[2] = {{uniform(0, 1000000000000LL), 0},
                                        {uniform(0, 1000000000000LL), 0}};
        struct zm_remote_index *set = zm_remote_index_new();
        record_frames(set, clocks, (struct hop){0, 1}, seed, 200, 5000000000000LL, 5000000);
        char error[256];
        struct zm_remote_solver *r =
            zm_remote_solver_solve(set, 2, NULL, 0, 100, error, sizeof(error));
        CHECK(r != NULL, "solve failed: %s", error);
        if (r) {
            const struct zm_remote_host *peer = zm_remote_solver_host(r, 1);
            CHECK(zm_remote_solver_axis(r) == 0, "axis %d", zm_remote_solver_axis(r));
            CHECK(peer->role == ZM_REMOTE_ROLE_PLACED, "role %s",
                  zm_remote_solver_role_name(peer->role));
            CHECK(strncmp(peer->method, "per-host", 8) == 0, "method %s", peer->method);
            double truth = true_offset(&clocks[0], &clocks[1], peer->reference_ns);
            double err = fabs((double)peer->offset_ns - truth);
            CHECK(err <= (double)peer->bound_ns, "offset error %.0f > bound %" PRId64, err,
                  peer->bound_ns);
            int64_t min_slack = INT64_MAX;
            for (size_t i = 0; i < zm_remote_solver_window_count(r); i++)
                if (zm_remote_solver_window(r, i)->slack_ns < min_slack)
                    min_slack = zm_remote_solver_window(r, i)->slack_ns;
            CHECK(peer->bound_ns < min_slack / 2,
                  "per-host bound %" PRId64 " not tighter than half the smallest slack %" PRId64,
                  peer->bound_ns, min_slack);
            check_windows(r, clocks);
            zm_remote_solver_free(r);
        }
        zm_remote_index_free(set);
    }
}

/* The climb along the polygon's boundary from a remembered vertex finds the same extremes as a
 * scan of every vertex, for x in order and out of order, on a region clipped like a peer's: a box,
 * then for each of 2000 windows a lower bound at its start and an upper bound at its end. */
static void test_climb_matches_full_scan(void)
{
    rng_state = 31337;
    struct zm_remote_polygon *region = zm_remote_polygon_new();
    CHECK(region && zm_remote_polygon_box(region, -1e12, 1e12, -1e-4, 1e-4) == 0, "box");
    /* The true offset: 777 us plus 40 ppm of drift; each window leaves 20-80 us of slack. */
    for (int i = 0; i < 2000; i++) {
        double xb = (double)i * 2000000 + (double)uniform(0, 500000);
        double xe = xb + (double)uniform(100000, 300000);
        double lo = 777777 + 40e-6 * xb - (double)uniform(20000, 80000);
        double hi = 777777 + 40e-6 * xe + (double)uniform(20000, 80000);
        CHECK(zm_remote_polygon_clip(region, -1, -xb, -lo) == 0 &&
                  zm_remote_polygon_clip(region, 1, xe, hi) == 0,
              "clip %d", i);
    }
    zm_remote_polygon_dedupe(region);
    size_t count = zm_remote_polygon_vertex_count(region);
    CHECK(count >= 3, "polygon has %zu vertices", count);
    size_t low = 0, high = 0;
    for (int i = 0; i < 3000 && count > 0; i++) {
        double x = i < 2000 ? (double)i * 2000000 : (double)uniform(-1000000000LL, 5000000000LL);
        double scan_lo = INFINITY, scan_hi = -INFINITY;
        for (size_t v = 0; v < count; v++) {
            double a, b;
            zm_remote_polygon_vertex(region, v, &a, &b);
            scan_lo = fmin(scan_lo, a + b * x);
            scan_hi = fmax(scan_hi, a + b * x);
        }
        double climb_lo = zm_remote_polygon_extreme(region, x, -1, &low);
        double climb_hi = zm_remote_polygon_extreme(region, x, 1, &high);
        CHECK(climb_lo == scan_lo && climb_hi == scan_hi,
              "at %.0f: climb [%.3f, %.3f], scan [%.3f, %.3f]", x, climb_lo, climb_hi, scan_lo,
              scan_hi);
    }
    zm_remote_polygon_free(region);
}

/* Placing instants in time order with one cursor gives what a fresh climb gives each time. */
static void test_cursor_matches_fresh_climb(void)
{
    rng_state = 31337;
    struct clock_model clocks[2] = {{0, 0}, {777777, 40e-6}};
    struct zm_remote_index *set = zm_remote_index_new();
    record_frames(set, clocks, (struct hop){0, 1}, 5, 2000, 1000000000LL, 2000000);
    char error[256];
    struct zm_remote_solver *r = zm_remote_solver_solve(set, 2, NULL, 0, 100, error, sizeof(error));
    CHECK(r != NULL, "%s", error);
    struct zm_remote_cursor cursor = {0, 0};
    for (int i = 0; r && i < 3000; i++) {
        int64_t t =
            1000000000LL + (i < 2000 ? (int64_t)i * 2000000 : uniform(-1000000000LL, 5000000000LL));
        int64_t axis, bound, fresh_axis, fresh_bound;
        CHECK(zm_remote_solver_place(r, 1, t, &cursor, &axis, &bound) == 0 &&
                  zm_remote_solver_place(r, 1, t, NULL, &fresh_axis, &fresh_bound) == 0,
              "at %" PRId64 ": unplaced", t);
        CHECK(axis == fresh_axis && bound == fresh_bound,
              "at %" PRId64 ": cursor %" PRId64 " +- %" PRId64 ", fresh %" PRId64 " +- %" PRId64, t,
              axis, bound, fresh_axis, fresh_bound);
    }
    zm_remote_solver_free(r);
    zm_remote_index_free(set);
}

static void test_drift_within_bound(void)
{
    rng_state = 77;
    /* The peer runs 60 ppm fast over 20 s of frames: consistent with a 100 ppm bound. */
    struct clock_model clocks[2] = {{1000, 0}, {-987654321, 60e-6}};
    struct zm_remote_index *set = zm_remote_index_new();
    record_frames(set, clocks, (struct hop){0, 1}, 9, 400, 3000000000LL, 50000000);
    char error[256];
    struct zm_remote_solver *r = zm_remote_solver_solve(set, 2, NULL, 0, 100, error, sizeof(error));
    CHECK(r != NULL, "%s", error);
    const char *method = zm_remote_solver_host(r, 1)->method;
    CHECK(strncmp(method, "per-host", 8) == 0, "method %s", method);
    check_windows(r, clocks);
    zm_remote_solver_free(r);

    /* The same windows claim a clock pair within 10 ppm: impossible, fall back per window. */
    r = zm_remote_solver_solve(set, 2, NULL, 0, 10, error, sizeof(error));
    CHECK(r != NULL, "%s", error);
    method = zm_remote_solver_host(r, 1)->method;
    CHECK(strncmp(method, "per-window", 10) == 0, "method %s", method);
    for (size_t i = 0; i < zm_remote_solver_window_count(r); i++) {
        const struct zm_remote_window *w = zm_remote_solver_window(r, i);
        int64_t pb, bound;
        CHECK(zm_remote_solver_place(r, 1, w->peer.begin_ns, NULL, &pb, &bound) == 0, "unplaced");
        CHECK(pb >= w->caller.begin_ns - bound && pb <= w->caller.end_ns + bound,
              "per-window placement outside the caller window");
    }
    zm_remote_solver_free(r);
    zm_remote_index_free(set);
}

static void test_chain_bounds_add(void)
{
    rng_state = 4242;
    struct clock_model clocks[3] = {{0, 0}, {123456789, 0}, {-55555555, 0}};
    struct zm_remote_index *set = zm_remote_index_new();
    /* A -> B frames, and B -> C frames nested in time (B serves A by calling C). */
    record_frames(set, clocks, (struct hop){0, 1}, 1, 100, 1000000000LL, 10000000);
    record_frames(set, clocks, (struct hop){1, 2}, 2, 100, 1000000000LL, 10000000);
    char error[256];
    struct zm_remote_solver *r = zm_remote_solver_solve(set, 3, NULL, 1, 100, error, sizeof(error));
    CHECK(r != NULL, "%s", error);
    CHECK(zm_remote_solver_axis(r) == 0, "axis %d (the host that dispatches and is not served)",
          zm_remote_solver_axis(r));
    const struct zm_remote_host *c = zm_remote_solver_host(r, 2);
    CHECK(c->role == ZM_REMOTE_ROLE_PLACED, "C role %s", zm_remote_solver_role_name(c->role));
    double truth = true_offset(&clocks[0], &clocks[2], c->reference_ns);
    CHECK(fabs((double)c->offset_ns - truth) <= (double)c->bound_ns,
          "C offset %" PRId64 " truth %.0f bound %" PRId64, c->offset_ns, truth, c->bound_ns);
    check_windows(r, clocks);
    zm_remote_solver_free(r);
    zm_remote_index_free(set);
}

static void test_mismatched_runs_dropped(void)
{
    struct zm_remote_index *set = zm_remote_index_new();
    struct zm_remote_key key = {1, 0, 0};
    /* The peer served for 2 ms within a 1 ms dispatch: not one dispatch. */
    CHECK(zm_remote_index_add(set, ZM_REMOTE_DISPATCH_BEGIN, &key, 0, 1, 1000000) == 0 &&
              zm_remote_index_add(set, ZM_REMOTE_DISPATCH_END, &key, 0, 1, 2000000) == 0 &&
              zm_remote_index_add(set, ZM_REMOTE_SERVE_BEGIN, &key, 1, 2, 5000000) == 0 &&
              zm_remote_index_add(set, ZM_REMOTE_SERVE_END, &key, 1, 2, 7000000) == 0,
          "frame refused");
    /* A frame whose peer side is missing. */
    struct zm_remote_key lonely = {1, 0, 1};
    CHECK(zm_remote_index_add(set, ZM_REMOTE_DISPATCH_BEGIN, &lonely, 0, 1, 3000000) == 0 &&
              zm_remote_index_add(set, ZM_REMOTE_DISPATCH_END, &lonely, 0, 1, 4000000) == 0,
          "lonely frame refused");
    char error[256];
    struct zm_remote_solver *r = zm_remote_solver_solve(set, 2, NULL, 0, 100, error, sizeof(error));
    CHECK(r != NULL, "%s", error);
    CHECK(zm_remote_solver_dropped(r) == 1, "dropped %zu", zm_remote_solver_dropped(r));
    CHECK(zm_remote_solver_incomplete(r) == 1, "incomplete %zu", zm_remote_solver_incomplete(r));
    const struct zm_remote_window *window = zm_remote_solver_window(r, 0);
    CHECK(zm_remote_solver_window_count(r) == 1 && window->status == ZM_REMOTE_WINDOW_DROPPED,
          "status");
    CHECK(window->slack_ns == -1000000, "slack %" PRId64, window->slack_ns);
    enum zm_remote_role role = zm_remote_solver_host(r, 1)->role;
    CHECK(role == ZM_REMOTE_ROLE_UNPLACED, "role %s", zm_remote_solver_role_name(role));
    int64_t axis, bound;
    CHECK(zm_remote_solver_place(r, 1, 5000000, NULL, &axis, &bound) < 0,
          "an unplaced host was placed");
    zm_remote_solver_free(r);
    zm_remote_index_free(set);
}

static void test_refusals(void)
{
    struct zm_remote_index *set = zm_remote_index_new();
    struct zm_remote_key key = {7, 3, 11};
    CHECK(zm_remote_index_add(set, ZM_REMOTE_DISPATCH_BEGIN, &key, 0, 1, 10) == 0,
          "first dispatch");
    CHECK(zm_remote_index_add(set, ZM_REMOTE_DISPATCH_BEGIN, &key, 0, 1, 20) < 0,
          "second dispatch");
    CHECK(strstr(zm_remote_index_error(set), "7:3:11 dispatched twice") != NULL, "error: %s",
          zm_remote_index_error(set));
    zm_remote_index_free(set);

    set = zm_remote_index_new();
    CHECK(zm_remote_index_add(set, ZM_REMOTE_SERVE_BEGIN, &key, 1, 1, 10) == 0, "first serve");
    CHECK(zm_remote_index_add(set, ZM_REMOTE_SERVE_END, &key, 1, 1, 20) == 0, "first serve end");
    CHECK(zm_remote_index_add(set, ZM_REMOTE_SERVE_BEGIN, &key, 2, 5, 30) < 0, "second serve");
    CHECK(strstr(zm_remote_index_error(set), "served twice") != NULL, "error: %s",
          zm_remote_index_error(set));
    zm_remote_index_free(set);

    /* A dispatches to B and B to A: a cycle. */
    rng_state = 99;
    struct clock_model clocks[2] = {{0, 0}, {500, 0}};
    set = zm_remote_index_new();
    record_frames(set, clocks, (struct hop){0, 1}, 1, 10, 1000000, 1000000);
    record_frames(set, clocks, (struct hop){1, 0}, 2, 10, 1000000, 1000000);
    char error[256];
    const char *names[2] = {"alpha", "beta"};
    CHECK(zm_remote_solver_solve(set, 2, names, 0, 100, error, sizeof(error)) == NULL,
          "cycle accepted");
    CHECK(strstr(error, "cycle") && strstr(error, "alpha") && strstr(error, "beta"), "error: %s",
          error);
    zm_remote_index_free(set);
}

static void test_one_clock_is_observed(void)
{
    rng_state = 5;
    struct clock_model clocks[2] = {{0, 0}, {0, 0}};
    struct zm_remote_index *set = zm_remote_index_new();
    record_frames(set, clocks, (struct hop){0, 1}, 3, 50, 1000000000, 1000000);
    char error[256];
    struct zm_remote_solver *r = zm_remote_solver_solve(set, 2, NULL, 0, 100, error, sizeof(error));
    CHECK(r != NULL, "%s", error);
    enum zm_remote_role role = zm_remote_solver_host(r, 1)->role;
    CHECK(role == ZM_REMOTE_ROLE_OBSERVED, "role %s", zm_remote_solver_role_name(role));
    int64_t axis, bound;
    CHECK(zm_remote_solver_place(r, 1, 1234567890, NULL, &axis, &bound) == 0 && axis == 1234567890,
          "observed time moved to %" PRId64, axis);
    CHECK(zm_remote_solver_window(r, 0)->status == ZM_REMOTE_WINDOW_OBSERVED, "window status %s",
          zm_remote_solver_window_status_name(zm_remote_solver_window(r, 0)->status));
    zm_remote_solver_free(r);
    zm_remote_index_free(set);
}

static void test_no_frames_keeps_default_axis(void)
{
    struct zm_remote_index *set = zm_remote_index_new();
    char error[256];
    struct zm_remote_solver *r = zm_remote_solver_solve(set, 3, NULL, 2, 100, error, sizeof(error));
    CHECK(r != NULL, "%s", error);
    CHECK(zm_remote_solver_axis(r) == 2 && zm_remote_solver_host(r, 2)->role == ZM_REMOTE_ROLE_AXIS,
          "axis %d", zm_remote_solver_axis(r));
    CHECK(zm_remote_solver_host(r, 0)->role == ZM_REMOTE_ROLE_UNPLACED &&
              zm_remote_solver_host(r, 1)->role == ZM_REMOTE_ROLE_UNPLACED,
          "hosts without frames must be unplaced");
    int64_t axis, bound;
    CHECK(zm_remote_solver_place(r, 2, 42, NULL, &axis, &bound) == 0 && axis == 42 && bound == 0,
          "axis moved");
    zm_remote_solver_free(r);
    zm_remote_index_free(set);
}

int main(void)
{
    test_two_hosts_random_offsets();
    test_climb_matches_full_scan();
    test_cursor_matches_fresh_climb();
    test_drift_within_bound();
    test_chain_bounds_add();
    test_mismatched_runs_dropped();
    test_refusals();
    test_one_clock_is_observed();
    test_no_frames_keeps_default_axis();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
