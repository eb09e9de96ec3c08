/*
 * Unit tests of remote-dispatch placement (merger/remote.c) on synthetic windows whose true clock
 * offsets and rates are known: random offsets, drift up to the rate bound, mismatched runs,
 * refusals (dispatched or served twice, cycles), chains and unreachable hosts.
 */
#include "remote.h"

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
static void record_frames(struct remote_set *set, const struct clock_model *clocks, struct hop hop,
                          uint64_t session, int n, int64_t start, int64_t period)
{
    for (int i = 0; i < n; i++) {
        struct remote_key key = {session, (uint32_t)hop.caller, (uint64_t)i};
        int64_t cb = start + (int64_t)i * period + uniform(0, period / 4);
        int64_t ce = cb + uniform(100000, 300000);
        int64_t pb = cb + uniform(20000, 80000);
        int64_t pe = ce - uniform(20000, 80000);
        remote_set_add(set, REMOTE_DISPATCH_BEGIN, &key, hop.caller, 100 + hop.caller,
                       local_time(&clocks[hop.caller], cb));
        remote_set_add(set, REMOTE_SERVE_BEGIN, &key, hop.peer, 200 + hop.peer,
                       local_time(&clocks[hop.peer], pb));
        remote_set_add(set, REMOTE_SERVE_END, &key, hop.peer, 200 + hop.peer,
                       local_time(&clocks[hop.peer], pe));
        remote_set_add(set, REMOTE_DISPATCH_END, &key, hop.caller, 100 + hop.caller,
                       local_time(&clocks[hop.caller], ce));
    }
}

/* Every peer window placed on the axis lies inside its caller window, and every placed instant is
 * within its bound of the truth. */
static void check_windows(const struct remote_result *r, const struct clock_model *clocks)
{
    for (size_t i = 0; i < r->nwindows; i++) {
        const struct remote_window *w = &r->windows[i];
        if (w->status == REMOTE_WINDOW_DROPPED)
            continue;
        int64_t cb, ce, pb, pe, bcb, bce, bpb, bpe;
        if (remote_place(r, w->caller.host, w->caller.begin_ns, NULL, &cb, &bcb) < 0 ||
            remote_place(r, w->caller.host, w->caller.end_ns, NULL, &ce, &bce) < 0 ||
            remote_place(r, w->peer.host, w->peer.begin_ns, NULL, &pb, &bpb) < 0 ||
            remote_place(r, w->peer.host, w->peer.end_ns, NULL, &pe, &bpe) < 0) {
            CHECK(0, "window %zu not placed", i);
            continue;
        }
        /* Inside, up to the caller's own placement uncertainty (zero when it is the axis). */
        CHECK(pb >= cb - bcb && pe <= ce + bce,
              "peer [%" PRId64 ", %" PRId64 ") outside caller [%" PRId64 ", %" PRId64 ")", pb, pe,
              cb, ce);
        double truth = true_offset(&clocks[r->axis], &clocks[w->peer.host], w->peer.begin_ns);
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
        struct remote_set set;
        remote_set_init(&set);
        record_frames(&set, clocks, (struct hop){0, 1}, seed, 200, 5000000000000LL, 5000000);
        struct remote_result r;
        char error[256];
        int rc = remote_solve(&set, 2, NULL, 0, 100, &r, error, sizeof(error));
        CHECK(rc == 0, "solve failed: %s", error);
        if (rc == 0) {
            CHECK(r.axis == 0, "axis %d", r.axis);
            CHECK(r.hosts[1].role == REMOTE_ROLE_PLACED, "role %s",
                  remote_role_name(r.hosts[1].role));
            CHECK(strncmp(r.hosts[1].method, "per-host", 8) == 0, "method %s", r.hosts[1].method);
            double truth = true_offset(&clocks[0], &clocks[1], r.hosts[1].reference_ns);
            double err = fabs((double)r.hosts[1].offset_ns - truth);
            CHECK(err <= (double)r.hosts[1].bound_ns, "offset error %.0f > bound %" PRId64, err,
                  r.hosts[1].bound_ns);
            int64_t min_slack = INT64_MAX;
            for (size_t i = 0; i < r.nwindows; i++)
                if (r.windows[i].slack_ns < min_slack)
                    min_slack = r.windows[i].slack_ns;
            CHECK(r.hosts[1].bound_ns < min_slack / 2,
                  "per-host bound %" PRId64 " not tighter than half the smallest slack %" PRId64,
                  r.hosts[1].bound_ns, min_slack);
            check_windows(&r, clocks);
            remote_result_release(&r);
        }
        remote_set_release(&set);
    }
}

/* The cursor's climb along the polygon finds the same extremes as a scan of every vertex, for
 * instants in time order and out of order. */
static void test_cursor_matches_full_scan(void)
{
    rng_state = 31337;
    struct clock_model clocks[2] = {{0, 0}, {777777, 40e-6}};
    struct remote_set set;
    remote_set_init(&set);
    record_frames(&set, clocks, (struct hop){0, 1}, 5, 2000, 1000000000LL, 2000000);
    struct remote_result r;
    char error[256];
    CHECK(remote_solve(&set, 2, NULL, 0, 100, &r, error, sizeof(error)) == 0, "%s", error);
    const struct remote_host *h = &r.hosts[1];
    CHECK(h->nvertices >= 3, "polygon has %zu vertices", h->nvertices);
    struct remote_cursor cursor = {0, 0};
    for (int i = 0; i < 3000; i++) {
        int64_t t = i < 2000 ? (int64_t)h->t0 + (int64_t)i * 2000000 : (int64_t)h->t0 + uniform(-1000000000LL, 5000000000LL);
        double lo = INFINITY, hi = -INFINITY, x = (double)t - h->t0;
        for (size_t v = 0; v < h->nvertices; v++) {
            double value = h->vertices[2 * v] + h->vertices[2 * v + 1] * x;
            lo = fmin(lo, value);
            hi = fmax(hi, value);
        }
        int64_t axis, bound;
        remote_place(&r, 1, t, &cursor, &axis, &bound);
        int64_t expect_axis = t + (int64_t)llround(h->theta0 + lo + (hi - lo) / 2);
        int64_t expect_bound = (int64_t)ceil((hi - lo) / 2) + 1;
        CHECK(llabs(axis - expect_axis) <= 1 && llabs(bound - expect_bound) <= 1,
              "at %" PRId64 ": climb %" PRId64 " +- %" PRId64 ", scan %" PRId64 " +- %" PRId64, t,
              axis, bound, expect_axis, expect_bound);
    }
    remote_result_release(&r);
    remote_set_release(&set);
}

static void test_drift_within_bound(void)
{
    rng_state = 77;
    /* The peer runs 60 ppm fast over 20 s of frames: consistent with a 100 ppm bound. */
    struct clock_model clocks[2] = {{1000, 0}, {-987654321, 60e-6}};
    struct remote_set set;
    remote_set_init(&set);
    record_frames(&set, clocks, (struct hop){0, 1}, 9, 400, 3000000000LL, 50000000);
    struct remote_result r;
    char error[256];
    CHECK(remote_solve(&set, 2, NULL, 0, 100, &r, error, sizeof(error)) == 0, "%s", error);
    CHECK(strncmp(r.hosts[1].method, "per-host", 8) == 0, "method %s", r.hosts[1].method);
    check_windows(&r, clocks);
    remote_result_release(&r);

    /* The same windows claim a clock pair within 10 ppm: impossible, fall back per window. */
    CHECK(remote_solve(&set, 2, NULL, 0, 10, &r, error, sizeof(error)) == 0, "%s", error);
    CHECK(strncmp(r.hosts[1].method, "per-window", 10) == 0, "method %s", r.hosts[1].method);
    for (size_t i = 0; i < r.nwindows; i++) {
        const struct remote_window *w = &r.windows[i];
        int64_t pb, bound;
        CHECK(remote_place(&r, 1, w->peer.begin_ns, NULL, &pb, &bound) == 0, "unplaced");
        CHECK(pb >= w->caller.begin_ns - bound && pb <= w->caller.end_ns + bound,
              "per-window placement outside the caller window");
    }
    remote_result_release(&r);
    remote_set_release(&set);
}

static void test_chain_bounds_add(void)
{
    rng_state = 4242;
    struct clock_model clocks[3] = {{0, 0}, {123456789, 0}, {-55555555, 0}};
    struct remote_set set;
    remote_set_init(&set);
    /* A -> B frames, and B -> C frames nested in time (B serves A by calling C). */
    record_frames(&set, clocks, (struct hop){0, 1}, 1, 100, 1000000000LL, 10000000);
    record_frames(&set, clocks, (struct hop){1, 2}, 2, 100, 1000000000LL, 10000000);
    struct remote_result r;
    char error[256];
    CHECK(remote_solve(&set, 3, NULL, 1, 100, &r, error, sizeof(error)) == 0, "%s", error);
    CHECK(r.axis == 0, "axis %d (the host that dispatches and is not served)", r.axis);
    CHECK(r.hosts[2].role == REMOTE_ROLE_PLACED, "C role %s", remote_role_name(r.hosts[2].role));
    double truth = true_offset(&clocks[0], &clocks[2], r.hosts[2].reference_ns);
    CHECK(fabs((double)r.hosts[2].offset_ns - truth) <= (double)r.hosts[2].bound_ns,
          "C offset %" PRId64 " truth %.0f bound %" PRId64, r.hosts[2].offset_ns, truth,
          r.hosts[2].bound_ns);
    check_windows(&r, clocks);
    remote_result_release(&r);
    remote_set_release(&set);
}

static void test_mismatched_runs_dropped(void)
{
    struct remote_set set;
    remote_set_init(&set);
    struct remote_key key = {1, 0, 0};
    /* The peer served for 2 ms within a 1 ms dispatch: not one dispatch. */
    remote_set_add(&set, REMOTE_DISPATCH_BEGIN, &key, 0, 1, 1000000);
    remote_set_add(&set, REMOTE_DISPATCH_END, &key, 0, 1, 2000000);
    remote_set_add(&set, REMOTE_SERVE_BEGIN, &key, 1, 2, 5000000);
    remote_set_add(&set, REMOTE_SERVE_END, &key, 1, 2, 7000000);
    /* A frame whose peer side is missing. */
    struct remote_key lonely = {1, 0, 1};
    remote_set_add(&set, REMOTE_DISPATCH_BEGIN, &lonely, 0, 1, 3000000);
    remote_set_add(&set, REMOTE_DISPATCH_END, &lonely, 0, 1, 4000000);
    struct remote_result r;
    char error[256];
    CHECK(remote_solve(&set, 2, NULL, 0, 100, &r, error, sizeof(error)) == 0, "%s", error);
    CHECK(r.dropped == 1, "dropped %zu", r.dropped);
    CHECK(r.incomplete == 1, "incomplete %zu", r.incomplete);
    CHECK(r.nwindows == 1 && r.windows[0].status == REMOTE_WINDOW_DROPPED, "status");
    CHECK(r.windows[0].slack_ns == -1000000, "slack %" PRId64, r.windows[0].slack_ns);
    CHECK(r.hosts[1].role == REMOTE_ROLE_UNPLACED, "role %s", remote_role_name(r.hosts[1].role));
    int64_t axis, bound;
    CHECK(remote_place(&r, 1, 5000000, NULL, &axis, &bound) < 0, "an unplaced host was placed");
    remote_result_release(&r);
    remote_set_release(&set);
}

static void test_refusals(void)
{
    struct remote_set set;
    remote_set_init(&set);
    struct remote_key key = {7, 3, 11};
    CHECK(remote_set_add(&set, REMOTE_DISPATCH_BEGIN, &key, 0, 1, 10) == 0, "first dispatch");
    CHECK(remote_set_add(&set, REMOTE_DISPATCH_BEGIN, &key, 0, 1, 20) < 0, "second dispatch");
    CHECK(strstr(set.error, "7:3:11 dispatched twice") != NULL, "error: %s", set.error);
    remote_set_release(&set);

    remote_set_init(&set);
    CHECK(remote_set_add(&set, REMOTE_SERVE_BEGIN, &key, 1, 1, 10) == 0, "first serve");
    CHECK(remote_set_add(&set, REMOTE_SERVE_END, &key, 1, 1, 20) == 0, "first serve end");
    CHECK(remote_set_add(&set, REMOTE_SERVE_BEGIN, &key, 2, 5, 30) < 0, "second serve");
    CHECK(strstr(set.error, "served twice") != NULL, "error: %s", set.error);
    remote_set_release(&set);

    /* A dispatches to B and B to A: a cycle. */
    rng_state = 99;
    struct clock_model clocks[2] = {{0, 0}, {500, 0}};
    remote_set_init(&set);
    record_frames(&set, clocks, (struct hop){0, 1}, 1, 10, 1000000, 1000000);
    record_frames(&set, clocks, (struct hop){1, 0}, 2, 10, 1000000, 1000000);
    struct remote_result r;
    char error[256];
    const char *names[2] = {"alpha", "beta"};
    CHECK(remote_solve(&set, 2, names, 0, 100, &r, error, sizeof(error)) < 0, "cycle accepted");
    CHECK(strstr(error, "cycle") && strstr(error, "alpha") && strstr(error, "beta"), "error: %s",
          error);
    remote_set_release(&set);
}

static void test_one_clock_is_observed(void)
{
    rng_state = 5;
    struct clock_model clocks[2] = {{0, 0}, {0, 0}};
    struct remote_set set;
    remote_set_init(&set);
    record_frames(&set, clocks, (struct hop){0, 1}, 3, 50, 1000000000, 1000000);
    struct remote_result r;
    char error[256];
    CHECK(remote_solve(&set, 2, NULL, 0, 100, &r, error, sizeof(error)) == 0, "%s", error);
    CHECK(r.hosts[1].role == REMOTE_ROLE_OBSERVED, "role %s", remote_role_name(r.hosts[1].role));
    int64_t axis, bound;
    CHECK(remote_place(&r, 1, 1234567890, NULL, &axis, &bound) == 0 && axis == 1234567890,
          "observed time moved to %" PRId64, axis);
    CHECK(r.windows[0].status == REMOTE_WINDOW_OBSERVED, "window status %s",
          remote_window_status_name(r.windows[0].status));
    remote_result_release(&r);
    remote_set_release(&set);
}

static void test_no_frames_keeps_default_axis(void)
{
    struct remote_set set;
    remote_set_init(&set);
    struct remote_result r;
    char error[256];
    CHECK(remote_solve(&set, 3, NULL, 2, 100, &r, error, sizeof(error)) == 0, "%s", error);
    CHECK(r.axis == 2 && r.hosts[2].role == REMOTE_ROLE_AXIS, "axis %d", r.axis);
    CHECK(r.hosts[0].role == REMOTE_ROLE_UNPLACED && r.hosts[1].role == REMOTE_ROLE_UNPLACED,
          "hosts without frames must be unplaced");
    int64_t axis, bound;
    CHECK(remote_place(&r, 2, 42, NULL, &axis, &bound) == 0 && axis == 42 && bound == 0, "axis moved");
    remote_result_release(&r);
    remote_set_release(&set);
}

int main(void)
{
    test_two_hosts_random_offsets();
    test_cursor_matches_full_scan();
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
