/*
 * Placement cost per span as frames grow: 500, 5 000 and 50 000 frames, 100 spans per frame.
 * Prints the cost per span at each size and the ratio of the largest to the smallest (target:
 * <= 1.2, i.e. flat, and under 1 us per span). Spans are placed in time order, as the merger does.
 */
#include "remote_solver.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Build frames between two hosts (peer clock 1 ms ahead, 30 ppm fast) and time the placement of
 * 100 spans per frame; returns ns per span, or a negative value on failure. */
static double cost_per_span(int nframes)
{
    struct zm_remote_index *set = zm_remote_index_new();
    if (!set)
        return -1;
    const int64_t period = 1000000;
    for (int i = 0; i < nframes; i++) {
        struct zm_remote_key key = {1, 0, (uint64_t)i};
        int64_t cb = (int64_t)i * period + (int64_t)(rng() % 1000);
        int64_t ce = cb + 200000 + (int64_t)(rng() % 100000);
        int64_t pb = cb + 5000 + (int64_t)(rng() % 20000);
        int64_t pe = ce - 5000 - (int64_t)(rng() % 20000);
        double skew = 1 + 30e-6;
        if (zm_remote_index_add(set, ZM_REMOTE_DISPATCH_BEGIN, &key, 0, 1, cb) != 0 ||
            zm_remote_index_add(set, ZM_REMOTE_DISPATCH_END, &key, 0, 1, ce) != 0 ||
            zm_remote_index_add(set, ZM_REMOTE_SERVE_BEGIN, &key, 1, 2,
                                (int64_t)((double)pb * skew) - 1000000) != 0 ||
            zm_remote_index_add(set, ZM_REMOTE_SERVE_END, &key, 1, 2,
                                (int64_t)((double)pe * skew) - 1000000) != 0) {
            fprintf(stderr, "Failed to record frames: %s\n", zm_remote_index_error(set));
            zm_remote_index_free(set);
            return -1;
        }
    }
    char error[256];
    struct zm_remote_solver *r = zm_remote_solver_solve(set, 2, NULL, 0, 100, error, sizeof(error));
    if (!r) {
        fprintf(stderr, "Failed to place: %s\n", error);
        zm_remote_index_free(set);
        return -1;
    }
    const long nspans = (long)nframes * 100;
    int64_t sink = 0;
    struct zm_remote_cursor cursor = {0, 0};
    double start = now_ns();
    for (long s = 0; s < nspans; s++) {
        int64_t t = (int64_t)((double)s * (double)period / 100 * (1 + 30e-6)) - 1000000;
        int64_t axis, bound;
        if (zm_remote_solver_place(r, 1, t, &cursor, &axis, &bound) == 0)
            sink += axis + bound;
    }
    double elapsed = now_ns() - start;
    if (sink == 42)
        fputs("", stderr); /* keep the loop */
    zm_remote_solver_free(r);
    zm_remote_index_free(set);
    return elapsed / (double)nspans;
}

int main(void)
{
    const int sizes[] = {500, 5000, 50000};
    double cost[3];
    for (int i = 0; i < 3; i++) {
        cost[i] = cost_per_span(sizes[i]);
        if (cost[i] < 0)
            return 1;
        printf("frames %6d: %.1f ns per span\n", sizes[i], cost[i]);
    }
    printf("placement cost per span, %d vs %d frames: ratio %.2f (target <= 1.2)\n", sizes[2],
           sizes[0], cost[2] / cost[0]);
    return 0;
}
