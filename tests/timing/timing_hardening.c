/*
 * timing_hardening: Level Zero programs that once broke the device-timing engine (hangs,
 * masked errors, lost timings, forked children). Same protocol as timing_scenarios.c:
 *
 * Usage: timing_hardening SCENARIO REPORT_FILE
 *
 * Each scenario is an ordinary application that checks what it sees and writes the trace's
 * expectations to REPORT_FILE ("timings N", "lost N", "lost_max N", "executions N"; see
 * check_timing.py). A watchdog (alarm) turns a hang into a failure: SIGALRM kills the program.
 * Run untraced, every scenario must pass its own checks too.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing_app.h"

/* Much longer than any scenario needs, even on a loaded machine; a hang ends here. */
#define WATCHDOG_S 90u
/* From exit() on: the exit drain gives up on a busy lock after a second. */
#define EXIT_WATCHDOG_S 30u

static FILE *report;

static void expect(const char *key, uint64_t value)
{
    fprintf(report, "%s %llu\n", key, (unsigned long long)value);
}

static void spin(ze_command_list_handle_t list, struct app *app, ze_event_handle_t event)
{
    ze_group_count_t groups = app_one_group();
    APP_OK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, event, 0, NULL));
}

static ze_fence_handle_t new_fence(ze_command_queue_handle_t queue)
{
    ze_fence_desc_t desc = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
    ze_fence_handle_t fence = NULL;
    APP_OK(zeFenceCreate(queue, &desc, &fence));
    return fence;
}

/* ---------------------------------------------------------------- crossed executes --------- */

enum { CROSSED_ROUNDS = 20, CROSSED_KERNELS = 2 };

struct crossed {
    struct app *app;
    ze_command_list_handle_t lists[2];
    uint32_t queue_index;
};

static void *execute_crossed(void *arg)
{
    struct crossed *crossed = arg;
    ze_command_queue_handle_t queue = app_queue(crossed->app, 0, crossed->queue_index);
    for (int round = 0; round < CROSSED_ROUNDS; round++) {
        APP_OK(zeCommandQueueExecuteCommandLists(queue, 2, crossed->lists, NULL));
        APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
    }
    APP_OK(zeCommandQueueDestroy(queue));
    return NULL;
}

/* Two threads execute the same two regular lists in opposite orders on two queues. */
static void scenario_crossed(struct app *app)
{
    ze_command_list_handle_t a = app_list(app, 0, false);
    ze_command_list_handle_t b = app_list(app, 0, false);
    for (int i = 0; i < CROSSED_KERNELS; i++) {
        spin(a, app, NULL);
        spin(b, app, NULL);
    }
    APP_OK(zeCommandListClose(a));
    APP_OK(zeCommandListClose(b));
    struct crossed crossed[2] = {{app, {a, b}, 0}, {app, {b, a}, 1}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        APP_CHECK(pthread_create(&threads[i], NULL, execute_crossed, &crossed[i]) == 0);
    for (int i = 0; i < 2; i++)
        APP_CHECK(pthread_join(threads[i], NULL) == 0);
    /* Every execution of every append accounted for: measured, or lost when two executions
     * of one list overlapped on two queues. */
    uint64_t timings = 2 * 2 * CROSSED_ROUNDS * CROSSED_KERNELS;
    expect("timings", timings);
    expect("lost_max", timings);
    expect("executions", 2 * CROSSED_ROUNDS);
    APP_OK(zeCommandListDestroy(a));
    APP_OK(zeCommandListDestroy(b));
}

/* ---------------------------------------------------------------- resubmission ------------- */

enum { RESUBMIT_EXECUTIONS = 5 };

/* One regular list submitted five times without waiting in between (ze_peak's pattern). The
 * first execution runs for long: if any execute waited for an earlier execution, the list's
 * last event would already be signalled when the fifth execute returns. */
static void scenario_resubmit(struct app *app, uint32_t ordinal, bool in_order)
{
    enum { KERNELS = 2 };
    const uint64_t long_ns = 300000000; /* 0.3 s per kernel */
    bool copy_only = ordinal == 1;
    ze_command_queue_handle_t queue = app_queue(app, ordinal, 0);
    ze_command_list_handle_t list = app_list(app, ordinal, in_order);
    ze_event_pool_handle_t pool = app_pool(app, 0, 1);
    ze_event_handle_t last = app_event(pool, 0);
    uint8_t *src = app_host_memory(app, 1 << 20);
    uint8_t *dst = app_host_memory(app, 1 << 20);
    memset(src, 6, 1 << 20);
    uint64_t appends = 0;

    if (copy_only) {
        /* Copies: 8 MiB at the simulated copy rate take long enough. */
        for (int i = 0; i < KERNELS; i++)
            APP_OK(zeCommandListAppendMemoryCopy(list, dst, src, 1 << 20, i == KERNELS - 1 ? last
                                                                                          : NULL,
                                                 0, NULL));
    } else {
        app_set_spin(app, long_ns);
        for (int i = 0; i < KERNELS; i++)
            spin(list, app, i == KERNELS - 1 ? last : NULL);
        APP_OK(zeCommandListAppendMemoryCopy(list, dst, src, 4096, NULL, 0, NULL));
        appends++;
    }
    appends += KERNELS;
    APP_OK(zeCommandListClose(list));
    for (int i = 0; i < RESUBMIT_EXECUTIONS; i++)
        APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    if (!copy_only)
        APP_CHECK(zeEventQueryStatus(last) == ZE_RESULT_NOT_READY);
    APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
    APP_CHECK(zeEventQueryStatus(last) == ZE_RESULT_SUCCESS);
    APP_CHECK(dst[100] == 6);
    expect("timings", appends * RESUBMIT_EXECUTIONS);
    expect("executions", RESUBMIT_EXECUTIONS);
    if (copy_only)
        expect("lost_max", appends * RESUBMIT_EXECUTIONS); /* no device-side copy there */
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeCommandQueueDestroy(queue));
    APP_OK(zeEventDestroy(last));
    APP_OK(zeEventPoolDestroy(pool));
    APP_OK(zeMemFree(app->context, src));
    APP_OK(zeMemFree(app->context, dst));
}

/* A list whose execution waits on an event the host signals only after executing it again. */
static void scenario_host_gated(struct app *app)
{
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    ze_command_list_handle_t list = app_list(app, 0, false);
    ze_event_pool_handle_t pool = app_pool(app, 0, 1);
    ze_event_handle_t gate = app_event(pool, 0);
    APP_OK(zeCommandListAppendWaitOnEvents(list, 1, &gate));
    spin(list, app, NULL);
    APP_OK(zeCommandListClose(list));
    APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    APP_OK(zeEventHostSignal(gate));
    APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
    expect("timings", 2);
    expect("executions", 2);
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeCommandQueueDestroy(queue));
    APP_OK(zeEventDestroy(gate));
    APP_OK(zeEventPoolDestroy(pool));
}

/* ---------------------------------------------------------------- masked errors ------------ */

/* Appends given a signal event that is not a live event: the driver's error, traced or not. */
static void scenario_bad_signal(struct app *app)
{
    ze_command_list_handle_t lists[2] = {app_immediate(app, 0, false), app_list(app, 0, false)};
    ze_event_pool_handle_t pool = app_pool(app, 0, 2);
    ze_event_handle_t live = app_event(pool, 0);
    ze_event_handle_t destroyed = app_event(pool, 1);
    APP_OK(zeEventDestroy(destroyed));
    uint8_t *buffer = app_host_memory(app, 4096);
    uint64_t *timestamps = app_host_memory(app, 64);
    ze_group_count_t groups = app_one_group();
    const ze_event_handle_t bad[] = {(ze_event_handle_t)app->spin, (ze_event_handle_t)pool,
                                     destroyed};
    const ze_result_t want = ZE_RESULT_ERROR_INVALID_ARGUMENT;

    for (int l = 0; l < 2; l++) {
        ze_command_list_handle_t list = lists[l];
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            ze_event_handle_t event = bad[b];
            uint8_t pattern = 1;
            APP_CHECK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, event, 0, NULL) ==
                      want);
            APP_CHECK(zeCommandListAppendMemoryCopy(list, buffer, buffer + 2048, 64, event, 0,
                                                    NULL) == want);
            APP_CHECK(zeCommandListAppendMemoryFill(list, buffer, &pattern, 1, 64, event, 0,
                                                    NULL) == want);
            APP_CHECK(zeCommandListAppendBarrier(list, event, 0, NULL) == want);
            APP_CHECK(zeCommandListAppendSignalEvent(list, event) == want);
            APP_CHECK(zeCommandListAppendWriteGlobalTimestamp(list, timestamps, event, 0, NULL) ==
                      want);
            /* A bad event in a wait list is the driver's to refuse too. */
            APP_CHECK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, NULL, 1, &event) ==
                      want);
        }
        /* The list still works, and its good append is measured. */
        spin(list, app, live);
    }
    APP_OK(zeEventHostSynchronize(live, APP_TIMEOUT_NS));
    APP_OK(zeEventHostReset(live));
    APP_OK(zeCommandListClose(lists[1]));
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &lists[1], NULL));
    APP_OK(zeCommandQueueSynchronize(queue, APP_TIMEOUT_NS));
    APP_CHECK(zeEventQueryStatus(live) == ZE_RESULT_SUCCESS);
    expect("timings", 2);
    for (int l = 0; l < 2; l++)
        APP_OK(zeCommandListDestroy(lists[l]));
    APP_OK(zeCommandQueueDestroy(queue));
    APP_OK(zeEventDestroy(live));
    APP_OK(zeEventPoolDestroy(pool));
    APP_OK(zeMemFree(app->context, buffer));
    APP_OK(zeMemFree(app->context, timestamps));
}

/* ---------------------------------------------------------------- create/destroy churn ----- */

enum { CHURN_THREADS = 16, CHURN_ROUNDS = 300 };

static void *churn(void *arg)
{
    struct app *app = arg;
    ze_command_queue_handle_t queue = app_queue(app, 0, 0);
    uint32_t *buffer = app_host_memory(app, 4096);
    for (int round = 0; round < CHURN_ROUNDS; round++) {
        ze_command_list_handle_t list = app_list(app, 0, false);
        uint32_t pattern = (uint32_t)round;
        APP_OK(zeCommandListAppendMemoryFill(list, buffer, &pattern, sizeof pattern, 4096, NULL, 0,
                                             NULL));
        APP_OK(zeCommandListClose(list));
        ze_fence_handle_t fence = new_fence(queue);
        APP_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
        APP_OK(zeFenceHostSynchronize(fence, APP_TIMEOUT_NS));
        APP_CHECK(buffer[1000] == pattern);
        APP_OK(zeFenceDestroy(fence));
        APP_OK(zeCommandListDestroy(list));
    }
    APP_OK(zeMemFree(app->context, buffer));
    return NULL;
}

/* Threads creating, executing and destroying lists as fast as they can: the driver reuses a
 * destroyed list's address at once. */
static void scenario_churn(struct app *app)
{
    pthread_t threads[CHURN_THREADS];
    for (int i = 0; i < CHURN_THREADS; i++)
        APP_CHECK(pthread_create(&threads[i], NULL, churn, app) == 0);
    for (int i = 0; i < CHURN_THREADS; i++)
        APP_CHECK(pthread_join(threads[i], NULL) == 0);
    expect("timings", CHURN_THREADS * CHURN_ROUNDS);
}

/* ---------------------------------------------------------------- fork --------------------- */

enum { FORK_CHILDREN = 8 };

static volatile int fork_stop;
static uint64_t fork_rounds;
static volatile int forked_child;

/* LeakSanitizer's hook (sanitizer builds): in a child forked from a multithreaded process the
 * other threads' stacks are gone, so the driver's work in flight there looks leaked. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return forked_child;
}

static void *append_forever(void *arg)
{
    struct app *app = arg;
    ze_command_list_handle_t list = app_immediate(app, 0, false);
    ze_event_pool_handle_t pool = app_pool(app, 0, 1);
    ze_event_handle_t event = app_event(pool, 0);
    while (!fork_stop) {
        /* Creation and destruction take the engine's locks for writing (destroying an
         * immediate list waits for its work, so its append is measured). */
        ze_command_list_handle_t extra = app_immediate(app, 0, false);
        spin(extra, app, NULL);
        APP_OK(zeCommandListDestroy(extra));
        spin(list, app, event);
        APP_OK(zeEventHostSynchronize(event, APP_TIMEOUT_NS));
        APP_OK(zeEventHostReset(event));
        fork_rounds++;
    }
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeEventDestroy(event));
    APP_OK(zeEventPoolDestroy(pool));
    return NULL;
}

static bool wait_child(pid_t child)
{
    for (int tenth = 0; tenth < 300; tenth++) {
        int status = 0;
        pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child)
            return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        struct timespec pause = {0, 100000000};
        nanosleep(&pause, NULL);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return false;
}

/* Forks while another thread has work in flight and creates and destroys lists; each child
 * leaves with exit(), which runs the exit handlers it inherited. */
static void scenario_fork(struct app *app)
{
#if defined(__SANITIZE_ADDRESS__)
    /* Skipped under AddressSanitizer (exit 77), for a reason outside zeprof: GCC 12's libasan
     * does not lock its allocator across fork (it intercepts vfork only), so a size-class lock
     * that another thread (ours, the driver's workers) holds at the instant of the fork stays
     * held in the child, and the child's first allocation of that size waits for ever. Seen
     * here: the child stuck inside fork() itself, in zeprof's child handler ->
     * lttng_ust_after_fork_child -> lttng_ust_dl_update -> calloc ->
     * SizeClassAllocator64::GetFromAllocator (1 run of 8). Nothing outside the runtime can take
     * that lock (libasan exports no lock function), and the child cannot avoid allocating: LTTng
     * must set up tracing for it. (The other hang once seen in a child, on the simulated device's
     * truth-file lock, was the device's and is fixed there: tests/simdevice/sim_truth.c.) */
    (void)app;
    printf("SKIP fork: GCC 12's AddressSanitizer allocator is not fork-safe with threads\n");
    exit(77);
#endif
    ze_command_list_handle_t list = app_immediate(app, 0, false);
    ze_event_pool_handle_t pool = app_pool(app, 0, 1);
    ze_event_handle_t event = app_event(pool, 0);
    pthread_t thread;
    APP_CHECK(pthread_create(&thread, NULL, append_forever, app) == 0);
    uint64_t appends = 0;
    for (int i = 0; i < FORK_CHILDREN; i++) {
        spin(list, app, NULL); /* in flight while forking */
        appends++;
        fflush(NULL);
        pid_t child = fork();
        APP_CHECK(child >= 0);
        if (child == 0) {
            forked_child = 1;
            exit(0);
        }
        APP_CHECK(wait_child(child));
    }
    spin(list, app, event);
    appends++;
    APP_OK(zeEventHostSynchronize(event, APP_TIMEOUT_NS));
    fork_stop = 1;
    APP_CHECK(pthread_join(thread, NULL) == 0);
    expect("timings", appends + 2 * fork_rounds);
    APP_OK(zeCommandListDestroy(list));
    APP_OK(zeEventDestroy(event));
    APP_OK(zeEventPoolDestroy(pool));
}

/* ---------------------------------------------------------------- exit past a hung thread -- */

/* Run with ZESIM_HANG_DEVICE_PROPERTIES=1. Untraced nothing calls zeDeviceGetProperties and the
 * thread ends at once; traced, the engine asks for the device's properties the first time a list
 * is created on it, under its registry lock taken for writing, and the thread never comes back.
 * The program then ends as programs do with a thread stuck in a driver: the engine's exit drain
 * must give up on that lock (one second) instead of waiting for ever. */
static atomic_int hung_thread_returned;

static void *create_list_on_hung_device(void *arg)
{
    struct app *app = arg;
    ze_command_list_handle_t list = app_list(app, 0, false);
    APP_OK(zeCommandListDestroy(list));
    atomic_store(&hung_thread_returned, 1);
    return NULL;
}

static void scenario_exit_past_hung_thread(struct app *app)
{
    pthread_t thread;
    APP_CHECK(pthread_create(&thread, NULL, create_list_on_hung_device, app) == 0);
    APP_CHECK(pthread_detach(thread) == 0);
    /* Untraced: the thread is done long before. Traced: it is inside the lock by then. */
    for (int tenth = 0; tenth < 20 && !atomic_load(&hung_thread_returned); tenth++)
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    expect("timings", 0);
    fclose(report);
    printf("PASS exit-past-hung-thread\n");
    fflush(stdout);
    /* The exit drain waits at most a second for the lock; far more than that is a hang. */
    alarm(EXIT_WATCHDOG_S);
    exit(0); /* nothing is closed: the context's list is still being created */
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: timing_hardening SCENARIO REPORT_FILE\n");
        return 2;
    }
    alarm(WATCHDOG_S);
    report = fopen(argv[2], "w");
    APP_CHECK(report != NULL);
    setvbuf(report, NULL, _IOLBF, 0);

    struct app app;
    app_open(&app);
    app_set_spin(&app, 20000);
    const char *name = argv[1];
    if (strcmp(name, "crossed") == 0)
        scenario_crossed(&app);
    else if (strcmp(name, "resubmit") == 0)
        scenario_resubmit(&app, 0, false);
    else if (strcmp(name, "resubmit-in-order") == 0)
        scenario_resubmit(&app, 0, true);
    else if (strcmp(name, "resubmit-copy") == 0)
        scenario_resubmit(&app, 1, false);
    else if (strcmp(name, "host-gated") == 0)
        scenario_host_gated(&app);
    else if (strcmp(name, "bad-signal") == 0)
        scenario_bad_signal(&app);
    else if (strcmp(name, "churn") == 0)
        scenario_churn(&app);
    else if (strcmp(name, "fork") == 0)
        scenario_fork(&app);
    else if (strcmp(name, "exit-past-hung-thread") == 0)
        scenario_exit_past_hung_thread(&app);
    else {
        fprintf(stderr, "unknown scenario: %s\n", name);
        return 2;
    }
    app_close(&app);
    fclose(report);
    printf("PASS %s\n", name);
    return 0;
}
