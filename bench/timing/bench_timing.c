/*
 * bench_timing: the device-timing engine's host costs, one mode per run.
 *
 * Usage: bench_timing [appends] N   per-append cost, early vs late (below)
 *        bench_timing emulate N     the same appends, untraced, plus the driver calls the engine
 *                                   makes for each (its own timestamp event swapped in, the
 *                                   re-exposing barrier, the reads and resets): run untraced, its
 *                                   cost minus the plain untraced cost is the driver's share
 *        bench_timing execute N     median host cost of zeCommandQueueExecuteCommandLists of one
 *                                   closed regular list (a queue synchronize every 64, untimed)
 *        bench_timing reset N       median host cost of zeCommandListReset (the list is refilled
 *                                   with one kernel and closed between resets, untimed)
 *        bench_timing resubmit N    N rounds of one regular list of 4 kernels submitted 5 times
 *                                   without waiting, then one synchronize (the device's idle
 *                                   gaps are read from the simulated device's truth file)
 *
 * appends mode: appends N kernels, each signalling an application event, to one immediate list, and
 * synchronizes rarely (once per EVENTS appends, when the event pool wraps), so the device's backlog
 * and the tracer's in-flight state grow large. Each append is timed on its own; the program prints
 * the mean (and median) cost of the first and the last quartile and their ratio. A tracer whose
 * cost per append grows with what is in flight (O(N^2) in total) shows a ratio well above 1.
 * bench/timing/run-bench runs it untraced and traced and prints the ratios.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing_app.h"

#define EVENTS 4096u
/* The engine's slots per chunk (interposer/timing/timing_internal.h, TIMING_CHUNK_SLOTS). */
#define EMULATED_CHUNK 64u

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

/* What the engine's driver calls cost per append, done by hand (untraced): a tracer-owned
 * timestamp event in the signal's place, the re-exposing barrier, and up to two reads (kernel
 * timestamp, reset) of completed earlier appends once the oldest unread is a chunk behind, as the
 * engine's append drain does. */
struct emulation {
    ze_event_pool_handle_t pool;
    ze_event_handle_t *events;
    size_t head; /* oldest unread */
};

static void emulate_reads(struct emulation *emulation, size_t upto, unsigned max)
{
    ze_kernel_timestamp_result_t result;
    for (unsigned done = 0; done < max && emulation->head < upto; done++) {
        ze_event_handle_t event = emulation->events[emulation->head % EVENTS];
        /* One call, as the engine reads: NOT_READY until the event is signalled. */
        ze_result_t read = zeEventQueryKernelTimestamp(event, &result);
        if (read == ZE_RESULT_NOT_READY)
            break;
        APP_OK(read);
        /* The previous event is reset only now: its re-exposing barrier waited on it, and this
         * later completion proves that barrier ran (the engine's "held" slot). */
        if (emulation->head > 0)
            APP_OK(zeEventHostReset(emulation->events[(emulation->head - 1) % EVENTS]));
        emulation->head++;
    }
}

static void run_appends(struct app *app, size_t n, uint64_t *costs, bool emulate)
{
    ze_command_list_handle_t list = app_immediate(app, 0, false);
    ze_event_pool_handle_t pool = app_pool(app, 0, EVENTS);
    ze_event_handle_t *events = malloc(EVENTS * sizeof *events);
    APP_CHECK(events != NULL);
    for (uint32_t i = 0; i < EVENTS; i++)
        events[i] = app_event(pool, i);
    struct emulation emulation = {NULL, NULL, 0};
    if (emulate) {
        emulation.pool = app_pool(app, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, EVENTS);
        emulation.events = malloc(EVENTS * sizeof *emulation.events);
        APP_CHECK(emulation.events != NULL);
        for (uint32_t i = 0; i < EVENTS; i++)
            emulation.events[i] = app_event(emulation.pool, i);
    }

    ze_group_count_t groups = app_one_group();
    for (size_t i = 0; i < n; i++) {
        uint32_t e = (uint32_t)(i % EVENTS);
        if (e == 0 && i > 0) {
            /* The rare synchronization: all of the last round, then reuse the events. */
            APP_OK(zeEventHostSynchronize(events[EVENTS - 1], APP_TIMEOUT_NS));
            if (emulate) {
                emulate_reads(&emulation, i, EVENTS);
                APP_OK(zeEventHostReset(emulation.events[(i - 1) % EVENTS]));
            }
            for (uint32_t k = 0; k < EVENTS; k++)
                APP_OK(zeEventHostReset(events[k]));
        }
        uint64_t start = now_ns();
        if (emulate) {
            ze_event_handle_t own = emulation.events[e];
            /* The engine's append looks at its oldest slot only once that is a chunk behind. */
            if (i - emulation.head >= EMULATED_CHUNK)
                emulate_reads(&emulation, i, 2);
            APP_OK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, own, 0, NULL));
            APP_OK(zeCommandListAppendBarrier(list, events[e], 1, &own));
        } else {
            APP_OK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, events[e], 0, NULL));
        }
        costs[i] = now_ns() - start;
    }
    APP_OK(zeEventHostSynchronize(events[(n - 1) % EVENTS], APP_TIMEOUT_NS));
    APP_OK(zeCommandListDestroy(list));
    for (uint32_t i = 0; i < EVENTS; i++)
        APP_OK(zeEventDestroy(events[i]));
    APP_OK(zeEventPoolDestroy(pool));
    free(events);
    if (emulate) {
        for (uint32_t i = 0; i < EVENTS; i++)
            APP_OK(zeEventDestroy(emulation.events[i]));
        APP_OK(zeEventPoolDestroy(emulation.pool));
        free(emulation.events);
    }
}

static void print_appends(const uint64_t *costs, size_t n)
{
    double early = mean(costs, 0, n / 4);
    double late = mean(costs, n - n / 4, n);
    double early_median = median(costs, 0, n / 4);
    double late_median = median(costs, n - n / 4, n);
    printf("n=%zu mean_ns=%.1f first_quartile_ns=%.1f last_quartile_ns=%.1f "
           "first_quartile_median_ns=%.1f last_quartile_median_ns=%.1f late_over_early=%.3f\n",
           n, mean(costs, 0, n), early, late, early_median, late_median,
           early > 0 ? late / early : 0);
    printf("median_ns=%.1f\n", median(costs, 0, n));
}

/* zeCommandQueueExecuteCommandLists of one closed list, synchronized every 64 (untimed). */
static void run_execute(struct app *app, size_t n, uint64_t *costs)
{
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    ze_command_list_handle_t list = app_list(app, 0, false);
    ze_group_count_t groups = app_one_group();
    APP_OK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, NULL, 0, NULL));
    APP_OK(zeCommandListClose(list));
    for (size_t i = 0; i < n; i++) {
        uint64_t start = now_ns();
        APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
        costs[i] = now_ns() - start;
        if (i % 64 == 63)
            APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
    }
    APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeCommandQueueDestroy(queue));
}

/* zeCommandListReset of an executed list, refilled and closed in between (untimed). */
static void run_reset(struct app *app, size_t n, uint64_t *costs)
{
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    ze_command_list_handle_t list = app_list(app, 0, false);
    ze_group_count_t groups = app_one_group();
    for (size_t i = 0; i < n; i++) {
        APP_OK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, NULL, 0, NULL));
        APP_OK(zeCommandListClose(list));
        APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
        APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
        uint64_t start = now_ns();
        APP_OK(zeCommandListReset(list));
        costs[i] = now_ns() - start;
    }
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeCommandQueueDestroy(queue));
}

/* One list of 4 kernels submitted 5 times without waiting, then a synchronize; n rounds. */
static void run_resubmit(struct app *app, size_t n)
{
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    ze_command_list_handle_t list = app_list(app, 0, false);
    app_set_spin(app, 50000);
    ze_group_count_t groups = app_one_group();
    for (int k = 0; k < 4; k++)
        APP_OK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, NULL, 0, NULL));
    APP_OK(zeCommandListClose(list));
    for (size_t round = 0; round < n; round++) {
        for (int i = 0; i < 5; i++)
            APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
        APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
    }
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeCommandQueueDestroy(queue));
    printf("rounds=%zu executions=%zu\n", n, n * 5);
}

int main(int argc, char **argv)
{
    const char *mode = "appends";
    int first = 1;
    if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9')) {
        mode = argv[1];
        first = 2;
    }
    size_t n = argc > first ? strtoul(argv[first], NULL, 10) : 32768;
    if (n < 8) {
        fprintf(stderr, "usage: bench_timing [appends|emulate|execute|reset|resubmit] N (N >= 8)\n");
        return 2;
    }
    uint64_t *costs = malloc(n * sizeof *costs);
    APP_CHECK(costs != NULL);

    struct app app;
    app_open(&app);
    app_set_spin(&app, 0);
    if (strcmp(mode, "appends") == 0 || strcmp(mode, "emulate") == 0) {
        run_appends(&app, n, costs, strcmp(mode, "emulate") == 0);
        print_appends(costs, n);
    } else if (strcmp(mode, "execute") == 0 || strcmp(mode, "reset") == 0) {
        if (strcmp(mode, "execute") == 0)
            run_execute(&app, n, costs);
        else
            run_reset(&app, n, costs);
        printf("n=%zu median_ns=%.1f mean_ns=%.1f\n", n, median(costs, 0, n), mean(costs, 0, n));
    } else if (strcmp(mode, "resubmit") == 0) {
        run_resubmit(&app, n);
    } else {
        fprintf(stderr, "unknown mode: %s\n", mode);
        return 2;
    }
    app_close(&app);
    free(costs);
    return 0;
}
