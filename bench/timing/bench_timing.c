/*
 * bench_timing: per-append cost early vs late in a long stream of appends.
 *
 * Usage: bench_timing N
 *
 * Appends N kernels, each signalling an application event, to one immediate list, and
 * synchronizes rarely (once per EVENTS appends, when the event pool wraps), so the device's backlog
 * and the tracer's in-flight state grow large. Each append is timed on its own; the program prints
 * the mean (and median) cost of the first and the last quartile and their ratio. A tracer whose
 * cost per append grows with what is in flight (O(N^2) in total) shows a ratio well above 1.
 * bench/timing/run-bench runs it untraced and traced and prints the ratios.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing_app.h"

#define EVENTS 4096u

static uint64_t now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static int compare_costs(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median of costs[from, to): robust to the odd preemption on a shared machine. */
static double median(const uint64_t *costs, size_t from, size_t to)
{
    size_t count = to - from;
    uint64_t *sorted = malloc(count * sizeof *sorted);
    APP_CHECK(sorted != NULL);
    for (size_t i = 0; i < count; i++)
        sorted[i] = costs[from + i];
    qsort(sorted, count, sizeof *sorted, compare_costs);
    double middle = (double)sorted[count / 2];
    free(sorted);
    return middle;
}

static double mean(const uint64_t *costs, size_t from, size_t to)
{
    double sum = 0;
    for (size_t i = from; i < to; i++)
        sum += (double)costs[i];
    return to > from ? sum / (double)(to - from) : 0;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 32768;
    if (n < 8) {
        fprintf(stderr, "usage: bench_timing N (N >= 8)\n");
        return 2;
    }
    uint64_t *costs = malloc(n * sizeof *costs);
    APP_CHECK(costs != NULL);

    struct app app;
    app_open(&app);
    app_set_spin(&app, 0);
    ze_command_list_handle_t list = app_immediate(&app, 0, false);
    ze_event_pool_handle_t pool = app_pool(&app, 0, EVENTS);
    ze_event_handle_t *events = malloc(EVENTS * sizeof *events);
    APP_CHECK(events != NULL);
    for (uint32_t i = 0; i < EVENTS; i++)
        events[i] = app_event(pool, i);

    ze_group_count_t groups = app_one_group();
    for (size_t i = 0; i < n; i++) {
        uint32_t e = (uint32_t)(i % EVENTS);
        if (e == 0 && i > 0) {
            /* The rare synchronization: all of the last round, then reuse the events. */
            APP_OK(zeEventHostSynchronize(events[EVENTS - 1], APP_TIMEOUT_NS));
            for (uint32_t k = 0; k < EVENTS; k++)
                APP_OK(zeEventHostReset(events[k]));
        }
        uint64_t start = now_ns();
        APP_OK(zeCommandListAppendLaunchKernel(list, app.spin, &groups, events[e], 0, NULL));
        costs[i] = now_ns() - start;
    }
    APP_OK(zeEventHostSynchronize(events[(n - 1) % EVENTS], APP_TIMEOUT_NS));

    double early = mean(costs, 0, n / 4);
    double late = mean(costs, n - n / 4, n);
    double early_median = median(costs, 0, n / 4);
    double late_median = median(costs, n - n / 4, n);
    printf("n=%zu mean_ns=%.1f first_quartile_ns=%.1f last_quartile_ns=%.1f "
           "first_quartile_median_ns=%.1f last_quartile_median_ns=%.1f late_over_early=%.3f\n",
           n, mean(costs, 0, n), early, late, early_median, late_median,
           early > 0 ? late / early : 0);

    APP_OK(zeCommandListDestroy(list));
    for (uint32_t i = 0; i < EVENTS; i++)
        APP_OK(zeEventDestroy(events[i]));
    APP_OK(zeEventPoolDestroy(pool));
    app_close(&app);
    free(events);
    free(costs);
    return 0;
}
