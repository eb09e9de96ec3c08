/*
 * bench_timing: the device-timing engine's host costs, one mode per run.
 *
 * Usage: bench_timing [appends] N   per-append cost, early vs late (below)
 *        bench_timing split N       the same appends, each split into the host time spent inside
 *                                   the driver's entry points (the application's append, every
 *                                   other driver call) and the rest (the loader's dispatch and,
 *                                   traced, zeprof's own bookkeeping): needs ZESIM_HOST_TIME=1
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
#include "zesim_host_time.h"

#define EVENTS 4096u
/* split mode: an append over SPLIT_PREEMPTED times its round's median was preempted
 * (split_round). */
#define SPLIT_PREEMPTED 20.0

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

/* One timed call in split mode, with what the simulated driver's host-time record
 * (zesim_host_time.h) counted during it. */
struct timed_call {
    uint64_t cost;   /* the call, as the bench timed it */
    uint64_t own;    /* inside the driver's entry point of the call itself */
    uint64_t driver; /* inside every other timed entry point (zeprof's calls, traced) */
    uint64_t calls;  /* timed calls, the call itself included */
};

/* split mode: every append, and the synchronization that ends each round of EVENTS appends. */
struct append_split {
    struct timed_call *appends;
    struct timed_call *syncs;
};

static uint64_t sum_u64(const uint64_t *values, size_t count)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < count; i++)
        sum += values[i];
    return sum;
}

/* Fills *call from the record's counters before (*before) and now; `own`: the call's entry. */
static void timed_call_end(const struct zesim_host_time *record, const struct timed_call *before,
                           enum zesim_timed own, struct timed_call *call)
{
    call->own = record->ns[own] - before->own;
    call->driver = sum_u64(record->ns, ZESIM_TIMED_COUNT) - before->driver - call->own;
    call->calls = sum_u64(record->calls, ZESIM_TIMED_COUNT) - before->calls;
}

static void timed_call_begin(const struct zesim_host_time *record, enum zesim_timed own,
                             struct timed_call *before)
{
    before->own = record->ns[own];
    before->driver = sum_u64(record->ns, ZESIM_TIMED_COUNT);
    before->calls = sum_u64(record->calls, ZESIM_TIMED_COUNT);
}

/* N appends to one immediate list, a host synchronization at the end of every round of EVENTS
 * (then the events are reset and reused). Each append is timed (costs); in split mode (record
 * and split given) the synchronizations too, and both are split as struct timed_call says. */
static void run_appends(struct app *app, size_t n, uint64_t *costs,
                        const struct zesim_host_time *record, struct append_split *split)
{
    ze_command_list_handle_t list = app_immediate(app, 0, false);
    ze_event_pool_handle_t pool = app_pool(app, 0, EVENTS);
    ze_event_handle_t *events = malloc(EVENTS * sizeof *events);
    APP_CHECK(events != NULL);
    for (uint32_t i = 0; i < EVENTS; i++)
        events[i] = app_event(pool, i);
    ze_group_count_t groups = app_one_group();
    struct timed_call before = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        uint32_t e = (uint32_t)(i % EVENTS);
        if (record)
            timed_call_begin(record, ZESIM_TIMED_LAUNCH_KERNEL, &before);
        uint64_t start = now_ns();
        APP_OK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, events[e], 0, NULL));
        costs[i] = now_ns() - start;
        if (record) {
            split->appends[i].cost = costs[i];
            timed_call_end(record, &before, ZESIM_TIMED_LAUNCH_KERNEL, &split->appends[i]);
        }
        if (e != EVENTS - 1 && i != n - 1)
            continue;
        /* The rare synchronization: all of this round, then reuse the events. */
        if (record)
            timed_call_begin(record, ZESIM_TIMED_HOST_SYNCHRONIZE, &before);
        start = now_ns();
        APP_OK(zeEventHostSynchronize(events[e], APP_TIMEOUT_NS));
        if (record) {
            struct timed_call *sync = &split->syncs[i / EVENTS];
            sync->cost = now_ns() - start;
            timed_call_end(record, &before, ZESIM_TIMED_HOST_SYNCHRONIZE, sync);
        }
        if (i != n - 1)
            for (uint32_t k = 0; k < EVENTS; k++)
                APP_OK(zeEventHostReset(events[k]));
    }
    APP_OK(zeCommandListDestroy(list));
    for (uint32_t i = 0; i < EVENTS; i++)
        APP_OK(zeEventDestroy(events[i]));
    APP_OK(zeEventPoolDestroy(pool));
    free(events);
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

/* The simulated driver's host-time record of this thread (ZESIM_HOST_TIME=1), else NULL. */
static const struct zesim_host_time *host_time_record(struct app *app)
{
    void *function = NULL;
    if (zeDriverGetExtensionFunctionAddress(app->driver, ZESIM_EXT_HOST_TIME, &function) !=
            ZE_RESULT_SUCCESS ||
        !function)
        return NULL;
    zesim_get_host_time_t get;
    memcpy(&get, &function, sizeof get);
    struct zesim_host_time *record = NULL;
    return get(app->driver, &record) == ZE_RESULT_SUCCESS ? record : NULL;
}

/* Host time per append of one round (split mode), the accounting's own cost and the bench's
 * clock reads taken out first: total = own (the application's append, inside the driver) +
 * driver (every other call into the driver: zeprof's, traced, during the appends and during the
 * round's synchronization, which reads what the appends did not) + rest (outside the driver: the
 * loader's dispatch and, traced, zeprof's bookkeeping, the synchronization's drain included).
 * The synchronization's own wait for the device is no host cost of the appends: left out. */
struct split_means {
    double total, own, driver, calls;
};

static void split_add(struct split_means *sum, const struct timed_call *call, bool own,
                      const struct zesim_host_time *record)
{
    double k = (double)call->calls;
    double cost =
        (double)call->cost - record->clock_read_ns - k * (record->inside_ns + record->outside_ns);
    double inside = (double)call->own - record->inside_ns;
    sum->total += own ? cost : cost - inside;
    sum->own += own ? inside : 0;
    sum->driver += (double)call->driver - (k - 1) * record->inside_ns;
    sum->calls += own ? k : k - 1;
}

/* One round: its appends but the preempted ones (over SPLIT_PREEMPTED times the round's median
 * cost: a time slice of another thread, not the append's work), and its synchronization. */
static struct split_means split_round(const struct append_split *split, size_t round,
                                      const struct zesim_host_time *record)
{
    const struct timed_call *appends = split->appends + round * EVENTS;
    uint64_t *costs = malloc(EVENTS * sizeof *costs);
    APP_CHECK(costs != NULL);
    for (size_t i = 0; i < EVENTS; i++)
        costs[i] = appends[i].cost;
    double limit = median(costs, 0, EVENTS) * SPLIT_PREEMPTED;
    free(costs);
    struct split_means sum = {0, 0, 0, 0};
    size_t kept = 0;
    for (size_t i = 0; i < EVENTS; i++) {
        if ((double)appends[i].cost > limit)
            continue;
        split_add(&sum, &appends[i], true, record);
        kept++;
    }
    split_add(&sum, &split->syncs[round], false, record);
    double d = (double)kept;
    return (struct split_means){sum.total / d, sum.own / d, sum.driver / d, sum.calls / d};
}

static int compare_totals(const void *a, const void *b)
{
    double x = ((const struct split_means *)a)->total;
    double y = ((const struct split_means *)b)->total;
    return x < y ? -1 : x > y;
}

/* The means of the quietest quarter of rounds (least total). What disturbs the appends on a
 * shared machine (other processes, the simulated device's worker thread contending for the
 * driver's lock) comes in stretches that slow every part alike, by up to 5x in a round; every
 * round does the same work (its appends, all their reads), so the quietest show the undisturbed
 * cost, and their parts add up. */
static void print_split(size_t n, const struct zesim_host_time *record,
                        const struct append_split *split)
{
    size_t rounds = n / EVENTS;
    struct split_means *means = malloc(rounds * sizeof *means);
    APP_CHECK(means != NULL);
    for (size_t r = 0; r < rounds; r++)
        means[r] = split_round(split, r, record);
    qsort(means, rounds, sizeof *means, compare_totals);
    size_t quiet = rounds / 4 ? rounds / 4 : 1;
    struct split_means sum = {0, 0, 0, 0};
    for (size_t r = 0; r < quiet; r++) {
        sum.total += means[r].total / (double)quiet;
        sum.own += means[r].own / (double)quiet;
        sum.driver += means[r].driver / (double)quiet;
        sum.calls += means[r].calls / (double)quiet;
    }
    printf("split n=%zu rounds=%zu quiet=%zu round_total_ns_min=%.1f round_total_ns_median=%.1f "
           "clock_read_ns=%.1f timed_call_inside_ns=%.1f timed_call_outside_ns=%.1f "
           "calls=%.2f total_ns=%.1f own_ns=%.1f driver_ns=%.1f rest_ns=%.1f\n",
           n, rounds, quiet, means[0].total, means[rounds / 2].total, record->clock_read_ns,
           record->inside_ns, record->outside_ns, sum.calls, sum.total, sum.own, sum.driver,
           sum.total - sum.own - sum.driver);
    free(means);
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
        fprintf(stderr, "usage: bench_timing [appends|split|execute|reset|resubmit] N (N >= 8)\n");
        return 2;
    }
    uint64_t *costs = malloc(n * sizeof *costs);
    APP_CHECK(costs != NULL);

    struct app app;
    app_open(&app);
    app_set_spin(&app, 0);
    if (strcmp(mode, "appends") == 0) {
        run_appends(&app, n, costs, NULL, NULL);
        print_appends(costs, n);
    } else if (strcmp(mode, "split") == 0) {
        const struct zesim_host_time *record = host_time_record(&app);
        if (!record) {
            fprintf(stderr, "Failed to find the driver's host-time record: split needs the "
                            "simulated device with ZESIM_HOST_TIME=1\n");
            return 2;
        }
        if (n % EVENTS != 0) {
            fprintf(stderr, "split needs N a multiple of %u (whole rounds)\n", EVENTS);
            return 2;
        }
        struct append_split split = {malloc(n * sizeof(struct timed_call)),
                                     malloc(n / EVENTS * sizeof(struct timed_call))};
        APP_CHECK(split.appends && split.syncs);
        run_appends(&app, n, costs, record, &split);
        print_split(n, record, &split);
        free(split.appends);
        free(split.syncs);
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
