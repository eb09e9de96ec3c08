/*
 * timing_scenarios: Level Zero programs for the device-timing end-to-end tests.
 *
 * Usage: timing_scenarios SCENARIO REPORT_FILE
 *
 * Each scenario is an ordinary application on the simulated device: it checks what the
 * application sees (its events become signalled, copies and fills land, nothing hangs) and writes
 * to REPORT_FILE what the trace must contain, one "key value..." line each:
 *   timings N         device_timing records expected (one per profiled append execution)
 *   lost N            of which with status 1 (lost)
 *   executions N      regular lists: executions per append expected (1..N)
 *   marker            every device_timing must precede the zeDriverGetApiVersion call (the
 *                     scenario's only completion signal was a poll)
 *   app_ts GS GE CS CE  kernel timestamps the application read from its own event
 * The program knows nothing of the tracer: run untraced, it must behave the same.
 * Environment: TIMING_SPIN_NS (default 20000): how long each zesim_spin kernel runs;
 * TIMING_LATE_SYNC_NS (default 0): the immediate scenarios sleep this long before they wait for
 * their third round (a program that synchronizes late, or a loaded machine's).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing_app.h"

static FILE *report;
static uint64_t spin_ns = 20000;
static uint64_t late_sync_ns;

static void expect(const char *key, uint64_t value)
{
    fprintf(report, "%s %llu\n", key, (unsigned long long)value);
}

static void spin(ze_command_list_handle_t list, struct app *app, ze_event_handle_t event)
{
    ze_group_count_t groups = app_one_group();
    APP_OK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, event, 0, NULL));
}

static void wait_event(ze_event_handle_t event)
{
    APP_OK(zeEventHostSynchronize(event, APP_TIMEOUT_NS));
    APP_CHECK(zeEventQueryStatus(event) == ZE_RESULT_SUCCESS);
}

static uint64_t mono_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Completion seen only by polling; the poll is bounded so that a hang fails the test. */
static void poll_until(ze_result_t (*query)(void *), void *object)
{
    uint64_t deadline = mono_ns() + APP_TIMEOUT_NS;
    while (query(object) != ZE_RESULT_SUCCESS)
        APP_CHECK(mono_ns() < deadline);
}

static ze_result_t query_event(void *event)
{
    return zeEventQueryStatus(event);
}

static ze_result_t query_fence(void *fence)
{
    return zeFenceQueryStatus(fence);
}

/* A call nothing else makes: the checker's marker. */
static void marker(struct app *app)
{
    ze_api_version_t version;
    APP_OK(zeDriverGetApiVersion(app->driver, &version));
    expect("marker", 1);
}

/* Immediate list: rounds of kernels, a copy and a fill, with or without application events. */
static void scenario_immediate(struct app *app, bool in_order, bool with_events)
{
    enum { ROUNDS = 5, KERNELS = 6 };
    ze_command_list_handle_t list = app_immediate(app, 0, in_order);
    ze_event_pool_handle_t pool = app_pool(app, 0, KERNELS + 1);
    ze_event_handle_t events[KERNELS + 1];
    for (uint32_t i = 0; i <= KERNELS; i++)
        events[i] = app_event(pool, i);
    uint32_t *src = app_host_memory(app, 4096);
    uint32_t *dst = app_host_memory(app, 4096);
    uint64_t appends = 0;

    for (uint32_t round = 0; round < ROUNDS; round++) {
        for (uint32_t i = 0; i < 1024; i++)
            src[i] = round * 1000 + i;
        for (uint32_t i = 0; i < KERNELS; i++)
            spin(list, app, with_events ? events[i] : NULL);
        APP_OK(zeCommandListAppendMemoryCopy(list, dst, src, 4096, NULL, 0, NULL));
        uint32_t pattern = 0xabcd0000u + round;
        APP_OK(zeCommandListAppendMemoryFill(list, dst + 512, &pattern, sizeof pattern, 2048, NULL,
                                             0, NULL));
        /* The round ends at a barrier that carries the application's event. */
        APP_OK(zeCommandListAppendBarrier(list, events[KERNELS], 0, NULL));
        appends += KERNELS + 3;
        if (round == 2 && late_sync_ns) {
            struct timespec late = {(time_t)(late_sync_ns / 1000000000u),
                                    (long)(late_sync_ns % 1000000000u)};
            nanosleep(&late, NULL);
        }
        wait_event(events[KERNELS]);
        if (with_events) {
            for (uint32_t i = 0; i < KERNELS; i++)
                wait_event(events[i]);
        }
        APP_CHECK(dst[5] == round * 1000 + 5);
        APP_CHECK(dst[600] == pattern);
        for (uint32_t i = 0; i <= KERNELS; i++)
            APP_OK(zeEventHostReset(events[i]));
    }
    expect("timings", appends);
    APP_OK(zeCommandListDestroy(list));
    for (uint32_t i = 0; i <= KERNELS; i++)
        APP_OK(zeEventDestroy(events[i]));
    APP_OK(zeEventPoolDestroy(pool));
    APP_OK(zeMemFree(app->context, src));
    APP_OK(zeMemFree(app->context, dst));
}

/* Regular list with every kind of append, executed twice with a fence. */
static void scenario_regular(struct app *app, bool in_order)
{
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    ze_command_list_handle_t list = app_list(app, 0, in_order);
    ze_event_pool_handle_t pool = app_pool(app, 0, 3);
    ze_event_handle_t events[3] = {app_event(pool, 0), app_event(pool, 1), app_event(pool, 2)};
    uint8_t *src = app_host_memory(app, 4096);
    uint8_t *dst = app_host_memory(app, 4096);
    ze_fence_desc_t fence_desc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
    ze_fence_handle_t fence = NULL;
    APP_OK(zeFenceCreate(queue, &fence_desc, &fence));

    memset(src, 7, 4096);
    spin(list, app, events[0]);
    APP_OK(zeCommandListAppendMemoryCopy(list, dst, src, 1024, NULL, 0, NULL));
    uint8_t pattern = 9;
    APP_OK(zeCommandListAppendMemoryFill(list, dst + 1024, &pattern, 1, 1024, events[1], 0, NULL));
    ze_copy_region_t region = {0, 0, 0, 64, 4, 1};
    APP_OK(zeCommandListAppendMemoryCopyRegion(list, dst + 2048, &region, 64, 0, src, &region, 64,
                                               0, NULL, 0, NULL));
    APP_OK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    size_t range_size = 64;
    const void *range = dst;
    APP_OK(zeCommandListAppendMemoryRangesBarrier(list, 1, &range_size, &range, NULL, 0, NULL));
    APP_OK(zeCommandListAppendSignalEvent(list, events[2]));
    spin(list, app, NULL);
    APP_OK(zeCommandListClose(list));

    for (int execution = 0; execution < 2; execution++) {
        memset(dst, 0, 4096);
        APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
        APP_OK(zeFenceHostSynchronize(fence, APP_TIMEOUT_NS));
        for (int i = 0; i < 3; i++)
            APP_CHECK(zeEventQueryStatus(events[i]) == ZE_RESULT_SUCCESS);
        APP_CHECK(dst[100] == 7 && dst[1500] == 9 && dst[2048 + 130] == 7);
        for (int i = 0; i < 3; i++)
            APP_OK(zeEventHostReset(events[i]));
        APP_OK(zeFenceReset(fence));
    }
    expect("timings", 8 * 2);
    expect("executions", 2);
    APP_OK(zeFenceDestroy(fence));
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeCommandQueueDestroy(queue));
    for (int i = 0; i < 3; i++)
        APP_OK(zeEventDestroy(events[i]));
    APP_OK(zeEventPoolDestroy(pool));
    APP_OK(zeMemFree(app->context, src));
    APP_OK(zeMemFree(app->context, dst));
}

/* One application event signalled by every append, never reset. */
static void scenario_reuse_event(struct app *app)
{
    ze_command_list_handle_t list = app_immediate(app, 0, false);
    ze_event_pool_handle_t pool = app_pool(app, 0, 1);
    ze_event_handle_t event = app_event(pool, 0);
    for (int i = 0; i < 10; i++)
        spin(list, app, event);
    wait_event(event);
    expect("timings", 10);
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeEventDestroy(event));
    APP_OK(zeEventPoolDestroy(pool));
}

/* Completion seen only by polling the application's event; nothing else drains. */
static void scenario_poll_event(struct app *app)
{
    ze_command_list_handle_t list = app_immediate(app, 0, true);
    ze_event_pool_handle_t pool = app_pool(app, 0, 1);
    ze_event_handle_t event = app_event(pool, 0);
    for (int i = 0; i < 9; i++)
        spin(list, app, NULL);
    spin(list, app, event);
    poll_until(query_event, event);
    expect("timings", 10);
    marker(app);
    /* Exit without any teardown: the exit drain must not be what produced the timings. */
}

/* Completion seen only by polling a fence. */
static void scenario_poll_fence(struct app *app)
{
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    ze_command_list_handle_t list = app_list(app, 0, false);
    ze_fence_desc_t fence_desc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
    ze_fence_handle_t fence = NULL;
    APP_OK(zeFenceCreate(queue, &fence_desc, &fence));
    for (int i = 0; i < 5; i++)
        spin(list, app, NULL);
    APP_OK(zeCommandListClose(list));
    APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    poll_until(query_fence, fence);
    expect("timings", 5);
    marker(app);
}

/* A regular list executed three times back to back, then one synchronization. Its last kernel
 * signals an application event (re-signalled by every execution, as Level Zero allows). */
static void scenario_regular_three(struct app *app)
{
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    ze_command_list_handle_t list = app_list(app, 0, false);
    ze_event_pool_handle_t pool = app_pool(app, 0, 1);
    ze_event_handle_t event = app_event(pool, 0);
    for (int i = 0; i < 4; i++)
        spin(list, app, i == 3 ? event : NULL);
    APP_OK(zeCommandListClose(list));
    for (int i = 0; i < 3; i++)
        APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
    wait_event(event);
    expect("timings", 12);
    expect("executions", 3);
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeCommandQueueDestroy(queue));
    APP_OK(zeEventDestroy(event));
    APP_OK(zeEventPoolDestroy(pool));
}

struct executor {
    struct app *app;
    ze_command_list_handle_t list;
    uint32_t queue_index;
};

static void *execute_four_times(void *arg)
{
    struct executor *executor = arg;
    ze_command_queue_handle_t queue = app_queue(executor->app, 0, executor->queue_index);
    for (int i = 0; i < 4; i++)
        APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &executor->list, NULL));
    APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
    APP_OK(zeCommandQueueDestroy(queue));
    return NULL;
}

/* The same regular list executed from two threads, on two queues. */
static void scenario_two_threads(struct app *app)
{
    ze_command_list_handle_t list = app_list(app, 0, false);
    for (int i = 0; i < 3; i++)
        spin(list, app, NULL);
    APP_OK(zeCommandListClose(list));
    struct executor executors[2] = {{app, list, 0}, {app, list, 1}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        APP_CHECK(pthread_create(&threads[i], NULL, execute_four_times, &executors[i]) == 0);
    for (int i = 0; i < 2; i++)
        APP_CHECK(pthread_join(threads[i], NULL) == 0);
    /* Executions of one list overlapping on two queues cannot be told apart: each is measured
     * or reported lost, never misattributed. */
    expect("timings", 3 * 8);
    expect("lost_max", 3 * 8);
    expect("executions", 8);
    APP_OK(zeCommandListDestroy(list));
}

struct appender {
    struct app *app;
    bool in_order;
};

static void *append_and_sync(void *arg)
{
    enum { KERNELS = 200, BATCH = 10 };
    struct appender *appender = arg;
    ze_command_list_handle_t list = app_immediate(appender->app, 0, appender->in_order);
    ze_event_pool_handle_t pool = app_pool(appender->app, 0, BATCH);
    ze_event_handle_t events[BATCH];
    for (uint32_t i = 0; i < BATCH; i++)
        events[i] = app_event(pool, i);
    ze_group_count_t groups = app_one_group();
    for (int k = 0; k < KERNELS; k++) {
        APP_OK(zeCommandListAppendLaunchKernel(list, appender->app->spin, &groups,
                                               events[k % BATCH], 0, NULL));
        if (k % BATCH == BATCH - 1) {
            for (uint32_t i = 0; i < BATCH; i++) {
                wait_event(events[i]);
                APP_OK(zeEventHostReset(events[i]));
            }
        }
    }
    APP_OK(zeCommandListDestroy(list));
    for (uint32_t i = 0; i < BATCH; i++)
        APP_OK(zeEventDestroy(events[i]));
    APP_OK(zeEventPoolDestroy(pool));
    return NULL;
}

/* Four threads, each appending to its own immediate list and synchronizing (drains from every
 * thread at once, appends racing drains). */
static void scenario_threads(struct app *app)
{
    pthread_t threads[4];
    struct appender appenders[4];
    for (int i = 0; i < 4; i++) {
        appenders[i] = (struct appender){app, i % 2 == 0};
        APP_CHECK(pthread_create(&threads[i], NULL, append_and_sync, &appenders[i]) == 0);
    }
    for (int i = 0; i < 4; i++)
        APP_CHECK(pthread_join(threads[i], NULL) == 0);
    expect("timings", 4 * 200);
}

/* Copies on the copy-only queue group (ordinal 1), immediate and regular. */
static void scenario_copy_queue(struct app *app)
{
    ze_command_list_handle_t immediate = app_immediate(app, 1, false);
    ze_event_pool_handle_t pool = app_pool(app, 0, 2);
    ze_event_handle_t events[2] = {app_event(pool, 0), app_event(pool, 1)};
    uint8_t *src = app_host_memory(app, 65536);
    uint8_t *dst = app_host_memory(app, 65536);
    /* A copy engine refuses kernels: the application gets the driver's error, traced or not,
     * and its event stays unsignalled. */
    ze_group_count_t groups = app_one_group();
    APP_CHECK(zeCommandListAppendLaunchKernel(immediate, app->spin, &groups, events[0], 0, NULL) !=
              ZE_RESULT_SUCCESS);
    APP_CHECK(zeEventQueryStatus(events[0]) == ZE_RESULT_NOT_READY);
    memset(src, 3, 65536);
    APP_OK(zeCommandListAppendMemoryCopy(immediate, dst, src, 65536, events[0], 0, NULL));
    uint8_t pattern = 5;
    APP_OK(zeCommandListAppendMemoryFill(immediate, dst, &pattern, 1, 1024, NULL, 0, NULL));
    APP_OK(zeCommandListAppendMemoryCopy(immediate, dst + 2048, src, 1024, events[1], 0, NULL));
    wait_event(events[1]);
    wait_event(events[0]);
    APP_CHECK(dst[10] == 5 && dst[5000] == 3);

    ze_command_queue_handle_t queue = app_queue(app, 1, 0);
    ze_command_list_handle_t list = app_list(app, 1, false);
    ze_fence_desc_t fence_desc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
    ze_fence_handle_t fence = NULL;
    APP_OK(zeFenceCreate(queue, &fence_desc, &fence));
    memset(src, 4, 65536);
    APP_OK(zeCommandListAppendMemoryCopy(list, dst, src, 32768, NULL, 0, NULL));
    APP_OK(zeCommandListAppendMemoryCopy(list, dst + 32768, src, 32768, NULL, 0, NULL));
    APP_OK(zeCommandListClose(list));
    APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    APP_OK(zeFenceHostSynchronize(fence, APP_TIMEOUT_NS));
    APP_CHECK(dst[10] == 4 && dst[40000] == 4);
    expect("timings", 5);
    APP_OK(zeFenceDestroy(fence));
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeCommandQueueDestroy(queue));
    APP_OK(zeCommandListDestroy(immediate));
    for (int i = 0; i < 2; i++)
        APP_OK(zeEventDestroy(events[i]));
    APP_OK(zeEventPoolDestroy(pool));
    APP_OK(zeMemFree(app->context, src));
    APP_OK(zeMemFree(app->context, dst));
}

/* 10 000 appends, one synchronization at the end. */
static void scenario_many(struct app *app)
{
    enum { APPENDS = 10000 };
    ze_command_list_handle_t list = app_immediate(app, 0, true);
    ze_event_pool_handle_t pool = app_pool(app, 0, 1);
    ze_event_handle_t event = app_event(pool, 0);
    app_set_spin(app, 0);
    for (int i = 0; i < APPENDS - 1; i++)
        spin(list, app, NULL);
    spin(list, app, event);
    wait_event(event);
    expect("timings", APPENDS);
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeEventDestroy(event));
    APP_OK(zeEventPoolDestroy(pool));
}

static void report_app_timestamps(ze_event_handle_t event)
{
    ze_kernel_timestamp_result_t result;
    APP_OK(zeEventQueryKernelTimestamp(event, &result));
    fprintf(report, "app_ts %llu %llu %llu %llu\n", (unsigned long long)result.global.kernelStart,
            (unsigned long long)result.global.kernelEnd,
            (unsigned long long)result.context.kernelStart,
            (unsigned long long)result.context.kernelEnd);
}

/* The application's own timestamp events: it reads its kernels' times, traced or not. */
static void scenario_app_timestamps(struct app *app)
{
    ze_command_list_handle_t list = app_immediate(app, 0, true);
    ze_event_pool_handle_t pool = app_pool(app, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 4);
    ze_event_handle_t events[4];
    for (uint32_t i = 0; i < 4; i++)
        events[i] = app_event(pool, i);

    spin(list, app, events[0]);
    spin(list, app, events[1]);
    wait_event(events[1]);
    wait_event(events[0]);
    report_app_timestamps(events[0]);
    report_app_timestamps(events[1]);
    /* Reset, then reuse. */
    APP_OK(zeEventHostReset(events[0]));
    spin(list, app, events[0]);
    wait_event(events[0]);
    report_app_timestamps(events[0]);
    /* Reused without a reset: that use's completion cannot be told apart (lost). */
    spin(list, app, events[1]);
    spin(list, app, events[2]);
    wait_event(events[2]);
    report_app_timestamps(events[2]);

    /* A regular list signalling the application's timestamp event, executed twice. */
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    ze_command_list_handle_t regular = app_list(app, 0, false);
    spin(regular, app, events[3]);
    APP_OK(zeCommandListClose(regular));
    for (int i = 0; i < 2; i++) {
        APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, NULL));
        APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
        report_app_timestamps(events[3]);
        APP_OK(zeEventHostReset(events[3]));
    }
    expect("timings", 5 + 2);
    expect("lost", 1);
    APP_OK(zeCommandListDestroy(regular));
    APP_OK(zeCommandQueueDestroy(queue));
    APP_OK(zeCommandListDestroy(list));
    for (uint32_t i = 0; i < 4; i++)
        APP_OK(zeEventDestroy(events[i]));
    APP_OK(zeEventPoolDestroy(pool));
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: timing_scenarios SCENARIO REPORT_FILE\n");
        return 2;
    }
    const char *spin_env = getenv("TIMING_SPIN_NS");
    if (spin_env)
        spin_ns = strtoull(spin_env, NULL, 10);
    const char *late_env = getenv("TIMING_LATE_SYNC_NS");
    if (late_env)
        late_sync_ns = strtoull(late_env, NULL, 10);
    report = fopen(argv[2], "w");
    APP_CHECK(report != NULL);
    setvbuf(report, NULL, _IOLBF, 0);

    struct app app;
    app_open(&app);
    app_set_spin(&app, spin_ns);
    const char *name = argv[1];
    bool teardown = true;
    if (strcmp(name, "immediate-in-order-events") == 0)
        scenario_immediate(&app, true, true);
    else if (strcmp(name, "immediate-in-order") == 0)
        scenario_immediate(&app, true, false);
    else if (strcmp(name, "immediate-events") == 0)
        scenario_immediate(&app, false, true);
    else if (strcmp(name, "immediate") == 0)
        scenario_immediate(&app, false, false);
    else if (strcmp(name, "regular-in-order") == 0)
        scenario_regular(&app, true);
    else if (strcmp(name, "regular") == 0)
        scenario_regular(&app, false);
    else if (strcmp(name, "reuse-event") == 0)
        scenario_reuse_event(&app);
    else if (strcmp(name, "poll-event") == 0) {
        scenario_poll_event(&app);
        teardown = false;
    } else if (strcmp(name, "poll-fence") == 0) {
        scenario_poll_fence(&app);
        teardown = false;
    } else if (strcmp(name, "regular-three") == 0)
        scenario_regular_three(&app);
    else if (strcmp(name, "two-threads") == 0)
        scenario_two_threads(&app);
    else if (strcmp(name, "threads") == 0)
        scenario_threads(&app);
    else if (strcmp(name, "copy-queue") == 0)
        scenario_copy_queue(&app);
    else if (strcmp(name, "many") == 0)
        scenario_many(&app);
    else if (strcmp(name, "app-timestamps") == 0)
        scenario_app_timestamps(&app);
    else {
        fprintf(stderr, "unknown scenario: %s\n", name);
        return 2;
    }
    if (teardown)
        app_close(&app);
    fclose(report);
    printf("PASS %s\n", name);
    return 0;
}
