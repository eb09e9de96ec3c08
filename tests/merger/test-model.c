/* Unit tests of tolerant reconstruction and statistics: synthetic event sequences fed straight
 * into the model (no babeltrace, no LTTng). */
#include "check.h"
#include "kernels.h"
#include "model.h"
#include "stats.h"
#include "telemetry.h"

#include <math.h>
#include <string.h>

struct fixture {
    struct zm_stats stats;
    struct zm_model *model;
};

/* The model's sink, wired to the statistics alone (main.c adds the timeline). */
static int count_api(void *stats, const struct zm_api_span *span)
{
    return zm_stats_add_api(stats, span);
}

static int count_device(void *stats, const struct zm_device_span *span)
{
    return zm_stats_add_device(stats, span);
}

static void setup(struct fixture *f, bool extended)
{
    zm_stats_init(&f->stats, extended);
    struct zm_span_sink sink = {
        .api_span = count_api, .device_span = count_device, .context = &f->stats};
    f->model = zm_model_new(&sink, 100);
    CHECK(f->model != NULL);
    CHECK_EQ(zm_model_begin_host(f->model, "host-a", "/trace"), 0);
}

static void teardown(struct fixture *f)
{
    zm_model_free(f->model);
    zm_stats_release(&f->stats);
}

static void feed(struct fixture *f, struct zm_event event)
{
    CHECK_EQ(zm_model_event(f->model, &event), 0);
}

static struct zm_event api(struct fixture *f, enum zm_event_kind kind, int64_t ns, int64_t tid,
                           const char *function, uint32_t result)
{
    return (struct zm_event){.kind = kind,
                             .ns = ns,
                             .pid = 100,
                             .tid = tid,
                             .function = zm_model_intern(f->model, function, strlen(function)),
                             .result = result};
}

static void entry(struct fixture *f, int64_t ns, int64_t tid, const char *function)
{
    feed(f, api(f, ZM_EVENT_API_ENTRY, ns, tid, function, 0));
}

static void leave(struct fixture *f, int64_t ns, int64_t tid, const char *function, uint32_t result)
{
    feed(f, api(f, ZM_EVENT_API_EXIT, ns, tid, function, result));
}

/* A one-event call (docs/tracepoints.md): its only event at `end`, carrying its start. */
static void whole_call(struct fixture *f, int64_t start, int64_t end, int64_t tid,
                       const char *function, uint32_t result)
{
    struct zm_event event = api(f, ZM_EVENT_API_CALL, end, tid, function, result);
    event.start_ns = start;
    feed(f, event);
}

static const struct zm_stat_row *row(struct zm_stat_table *table, const char *name)
{
    for (size_t i = 0; i < table->count; i++) {
        if (strcmp(table->rows[i].name, name) == 0)
            return &table->rows[i];
    }
    return NULL;
}

static const struct zm_stat_row *api_row(struct fixture *f, const char *name)
{
    const struct zm_stat_row *found = row(&f->stats.api, name);
    CHECK(found != NULL);
    static const struct zm_stat_row empty = {0};
    return found ? found : &empty;
}

static const struct zm_stat_row *device_row(struct fixture *f, const char *name)
{
    const struct zm_stat_row *found = row(&f->stats.device, name);
    CHECK(found != NULL);
    static const struct zm_stat_row empty = {0};
    return found ? found : &empty;
}

static void test_calls_pair_per_thread(void)
{
    struct fixture f;
    setup(&f, false);
    entry(&f, 100, 1, "zeInit");
    entry(&f, 110, 2, "zeInit"); /* another thread, interleaved */
    leave(&f, 130, 1, "zeInit", 0);
    leave(&f, 170, 2, "zeInit", 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    const struct zm_stat_row *r = api_row(&f, "zeInit");
    CHECK_EQ(r->calls, 2);
    CHECK_EQ(r->total_ns, 30 + 60);
    CHECK_EQ(r->min_ns, 30);
    CHECK_EQ(r->max_ns, 60);
    CHECK_EQ(zm_model_thread_count(f.model), 2);
    CHECK_EQ(zm_model_process_count(f.model), 1);
    CHECK_EQ(zm_model_anomalies(f.model)->orphan_exits +
                 zm_model_anomalies(f.model)->synthetic_closes,
             0);
    teardown(&f);
}

static void test_nested_calls_nest(void)
{
    struct fixture f;
    setup(&f, false);
    entry(&f, 0, 1, "zeOuter");
    entry(&f, 10, 1, "zeInner");
    leave(&f, 20, 1, "zeInner", 0);
    leave(&f, 50, 1, "zeOuter", 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(api_row(&f, "zeOuter")->total_ns, 50);
    CHECK_EQ(api_row(&f, "zeInner")->total_ns, 10);
    teardown(&f);
}

static void test_one_event_calls_are_complete(void)
{
    struct fixture f;
    setup(&f, false);
    whole_call(&f, 100, 130, 1, "zeKernelSetArgumentValue", 0);
    entry(&f, 200, 1, "zeEventHostSynchronize");
    whole_call(&f, 210, 215, 1, "zeKernelSetArgumentValue", 0x78000004); /* inside: stack kept */
    leave(&f, 250, 1, "zeEventHostSynchronize", 0);
    whole_call(&f, 300, 310, 2, "zeCommandListAppendLaunchKernel", 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    const struct zm_stat_row *r = api_row(&f, "zeKernelSetArgumentValue");
    CHECK_EQ(r->calls, 2);
    CHECK_EQ(r->total_ns, 30 + 5);
    CHECK_EQ(r->errors, 1);
    CHECK_EQ(api_row(&f, "zeEventHostSynchronize")->total_ns, 50);
    CHECK_EQ(api_row(&f, "zeCommandListAppendLaunchKernel")->total_ns, 10);
    CHECK_EQ(zm_model_anomalies(f.model)->orphan_exits, 0);
    CHECK_EQ(zm_model_anomalies(f.model)->synthetic_closes, 0);
    CHECK_EQ(zm_model_anomalies(f.model)->inverted_intervals, 0);
    teardown(&f);
}

static void test_one_event_call_never_orphan_nor_synthetic(void)
{
    struct fixture f;
    setup(&f, false);
    /* An entry whose exit was lost stays open across one-event calls, which do not close it. */
    entry(&f, 0, 1, "zeCommandQueueExecuteCommandLists");
    whole_call(&f, 10, 20, 1, "zeEventQueryStatus", 0);
    whole_call(&f, 30, 25, 1, "zeEventQueryStatus", 0); /* start after its event: inverted */
    CHECK_EQ(zm_model_end_host(f.model), 0);
    const struct zm_stat_row *r = api_row(&f, "zeEventQueryStatus");
    CHECK_EQ(r->calls, 2);
    CHECK_EQ(r->total_ns, 10);
    CHECK_EQ(r->min_ns, 0);
    CHECK_EQ(zm_model_anomalies(f.model)->orphan_exits, 0);
    CHECK_EQ(zm_model_anomalies(f.model)->inverted_intervals, 1);
    /* Only the execute is closed synthetic, at the thread's last event. */
    CHECK_EQ(zm_model_anomalies(f.model)->synthetic_closes, 1);
    CHECK_EQ(api_row(&f, "zeCommandQueueExecuteCommandLists")->total_ns, 25);
    teardown(&f);
}

static void test_orphan_exit_is_counted_and_dropped(void)
{
    struct fixture f;
    setup(&f, false);
    leave(&f, 10, 1, "zeEventHostSynchronize", 0);
    entry(&f, 20, 1, "zeInit");
    leave(&f, 30, 1, "zeEventHostSynchronize", 0); /* not the open call's exit */
    leave(&f, 40, 1, "zeInit", 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(zm_model_anomalies(f.model)->orphan_exits, 2);
    CHECK(row(&f.stats.api, "zeEventHostSynchronize") == NULL);
    CHECK_EQ(api_row(&f, "zeInit")->total_ns, 20);
    teardown(&f);
}

static void test_lost_inner_exit_closes_it_synthetic(void)
{
    struct fixture f;
    setup(&f, false);
    entry(&f, 0, 1, "zeOuter");
    entry(&f, 10, 1, "zeInner");
    leave(&f, 30, 1, "zeOuter", 0); /* zeInner's exit was lost */
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(zm_model_anomalies(f.model)->synthetic_closes, 1);
    CHECK_EQ(api_row(&f, "zeInner")->total_ns, 20);
    CHECK_EQ(api_row(&f, "zeOuter")->total_ns, 30);
    teardown(&f);
}

static void test_open_call_closes_at_threads_last_event(void)
{
    struct fixture f;
    setup(&f, false);
    entry(&f, 100, 1, "zeEventHostSynchronize");
    feed(&f, (struct zm_event){.kind = ZM_EVENT_API_DESC, .ns = 150, .pid = 100, .tid = 1});
    entry(&f, 1000, 2, "zeInit"); /* a later event on another thread does not extend it */
    leave(&f, 1100, 2, "zeInit", 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(zm_model_anomalies(f.model)->synthetic_closes, 1);
    const struct zm_stat_row *r = api_row(&f, "zeEventHostSynchronize");
    CHECK_EQ(r->calls, 1);
    CHECK_EQ(r->total_ns, 50);
    teardown(&f);
}

static void test_inverted_pair_clamps_to_zero(void)
{
    struct fixture f;
    setup(&f, false);
    entry(&f, 100, 1, "zeInit");
    leave(&f, 90, 1, "zeInit", 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(zm_model_anomalies(f.model)->inverted_intervals, 1);
    CHECK_EQ(api_row(&f, "zeInit")->total_ns, 0);
    CHECK_EQ(api_row(&f, "zeInit")->calls, 1);
    teardown(&f);
}

static void test_unknown_and_discarded_are_counted(void)
{
    struct fixture f;
    setup(&f, false);
    feed(&f, (struct zm_event){.kind = ZM_EVENT_UNKNOWN, .ns = 1});
    feed(&f, (struct zm_event){.kind = ZM_EVENT_UNKNOWN, .ns = 2});
    zm_model_discarded(f.model, 7, false);
    zm_model_discarded(f.model, 5, false);
    zm_model_discarded(f.model, 2, true);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(zm_model_anomalies(f.model)->unknown_events, 2);
    CHECK_EQ(zm_model_anomalies(f.model)->discarded_events, 12);
    CHECK_EQ(zm_model_anomalies(f.model)->discarded_packets, 2);
    CHECK_EQ(zm_model_zeprof_events(f.model), 0);
    teardown(&f);
}

static void test_errors_are_level_zero_error_codes(void)
{
    struct fixture f;
    setup(&f, false);
    entry(&f, 0, 1, "zeEventQueryStatus");
    leave(&f, 1, 1, "zeEventQueryStatus", 1); /* ZE_RESULT_NOT_READY: not an error */
    entry(&f, 2, 1, "zeEventQueryStatus");
    leave(&f, 3, 1, "zeEventQueryStatus", 0x78000004u); /* INVALID_ARGUMENT */
    entry(&f, 4, 1, "zeEventQueryStatus");
    leave(&f, 5, 1, "zeEventQueryStatus", 0x70000001u); /* DEVICE_LOST */
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(api_row(&f, "zeEventQueryStatus")->errors, 2);
    CHECK_EQ(api_row(&f, "zeEventQueryStatus")->calls, 3);
    teardown(&f);
}

static void test_extended_rows_split_by_thread(void)
{
    struct fixture f;
    setup(&f, true);
    entry(&f, 0, 1, "zeInit");
    leave(&f, 10, 1, "zeInit", 0);
    entry(&f, 0, 2, "zeInit");
    leave(&f, 30, 2, "zeInit", 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(f.stats.api.count, 2);
    zm_stats_sort(&f.stats.api);
    CHECK_EQ(f.stats.api.rows[0].tid, 2); /* sorted by time */
    CHECK_EQ(f.stats.api.rows[0].total_ns, 30);
    CHECK_EQ(f.stats.api.rows[1].tid, 1);
    teardown(&f);
}

/* Device 0xd0: 10 MHz, 32-bit kernel timestamps. */
static struct zm_event device_properties(void)
{
    return (struct zm_event){.kind = ZM_EVENT_DEVICE_PROPERTIES,
                             .ns = 500000,
                             .pid = 100,
                             .tid = 1,
                             .device = 0xd0,
                             .name = "Dev",
                             .uuid = "01",
                             .timer_hz = 10000000,
                             .kernel_timestamp_valid_bits = 32};
}

/* The device, and one anchor at host 1 ms = tick 0xfffff000. */
static void device_setup(struct fixture *f, bool with_anchor)
{
    feed(f, device_properties());
    if (!with_anchor)
        return;
    feed(f, (struct zm_event){.kind = ZM_EVENT_CLOCK_SAMPLE_BEGIN,
                              .ns = 999950,
                              .pid = 100,
                              .tid = 1,
                              .device = 0xd0,
                              .anchor = 1,
                              .sample = 0});
    feed(f, (struct zm_event){.kind = ZM_EVENT_CLOCK_SAMPLE_END,
                              .ns = 1000050,
                              .pid = 100,
                              .tid = 1,
                              .device = 0xd0,
                              .anchor = 1,
                              .sample = 0,
                              .device_ticks = 0xfffff000ull});
}

static void append_to(struct fixture *f, int64_t ns, uint64_t call_id, const char *name,
                      uint64_t list)
{
    entry(f, ns, 1, "zeCommandListAppendLaunchKernel");
    feed(f, (struct zm_event){.kind = ZM_EVENT_APPEND,
                              .ns = ns + 1,
                              .pid = 100,
                              .tid = 1,
                              .call_id = call_id,
                              .device = 0xd0,
                              .list = list,
                              .name = name,
                              .append_kind = "kernel"});
    leave(f, ns + 2, 1, "zeCommandListAppendLaunchKernel", 0);
}

static void append_call(struct fixture *f, int64_t ns, uint64_t call_id, const char *name)
{
    entry(f, ns, 1, "zeCommandListAppendLaunchKernel");
    feed(f, (struct zm_event){.kind = ZM_EVENT_APPEND,
                              .ns = ns + 1,
                              .pid = 100,
                              .tid = 1,
                              .call_id = call_id,
                              .device = 0xd0,
                              .name = name,
                              .append_kind = "kernel"});
    leave(f, ns + 2, 1, "zeCommandListAppendLaunchKernel", 0);
}

/* An append made by a one-event call: the append event comes before the call's only event. */
static void append_one_event(struct fixture *f, int64_t ns, uint64_t call_id, const char *name)
{
    feed(f, (struct zm_event){.kind = ZM_EVENT_APPEND,
                              .ns = ns + 1,
                              .pid = 100,
                              .tid = 1,
                              .call_id = call_id,
                              .device = 0xd0,
                              .name = name,
                              .append_kind = "kernel"});
    whole_call(f, ns, ns + 2, 1, "zeCommandListAppendLaunchKernel", 0);
}

static void timing(struct fixture *f, int64_t ns, uint64_t call_id, uint64_t execution,
                   uint64_t start, uint64_t end, uint32_t status)
{
    feed(f, (struct zm_event){.kind = ZM_EVENT_DEVICE_TIMING,
                              .ns = ns,
                              .pid = 100,
                              .tid = 1,
                              .call_id = call_id,
                              .execution = execution,
                              .device = 0xd0,
                              .queue = 0x300,
                              .global_start = start & 0xffffffffu,
                              .global_end = end & 0xffffffffu,
                              .status = status});
}

static void test_device_timing_links_to_append_across_wrap(void)
{
    struct fixture f;
    setup(&f, false);
    device_setup(&f, true);
    append_call(&f, 1100000, 7, "my_kernel");
    /* Starts 0x800 ticks after the anchor, 0x1000 ticks long: crosses 2^32. */
    timing(&f, 2000000, 7, 0, 0xfffff800ull, 0x100000800ull, 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    const struct zm_stat_row *r = device_row(&f, "my_kernel");
    CHECK_EQ(r->calls, 1);
    CHECK_EQ(r->total_ns, 0x1000 * 100);
    CHECK_EQ(zm_model_anomalies(f.model)->unmatched_timings +
                 zm_model_anomalies(f.model)->inverted_intervals,
             0);
    CHECK_EQ(zm_model_device_label_count(f.model), 1);
    teardown(&f);
}

static void test_one_event_append_links_its_timing_across_wrap(void)
{
    struct fixture f;
    setup(&f, false);
    device_setup(&f, true);
    append_one_event(&f, 1100000, 7, "my_kernel");
    timing(&f, 2000000, 7, 0, 0xfffff800ull, 0x100000800ull, 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    const struct zm_stat_row *r = device_row(&f, "my_kernel");
    CHECK_EQ(r->calls, 1);
    CHECK_EQ(r->total_ns, 0x1000 * 100);
    CHECK_EQ(api_row(&f, "zeCommandListAppendLaunchKernel")->calls, 1);
    CHECK_EQ(zm_model_anomalies(f.model)->unmatched_timings +
                 zm_model_anomalies(f.model)->inverted_intervals +
                 zm_model_anomalies(f.model)->orphan_exits +
                 zm_model_anomalies(f.model)->synthetic_closes,
             0);
    teardown(&f);
}

static int record_start(void *start_ns, const struct zm_device_span *span)
{
    *(int64_t *)start_ns = span->start_ns;
    return 0;
}

/* An immediate list's timing read more than a wrap after its append (a program that
 * synchronizes that late): its start is still found after the append, not a wrap later. */
static void test_immediate_timing_read_a_wrap_late_keeps_its_append(void)
{
    struct fixture f;
    int64_t start_ns = 0;
    zm_stats_init(&f.stats, false);
    struct zm_span_sink sink = {.device_span = record_start, .context = &start_ns};
    f.model = zm_model_new(&sink, 100);
    CHECK(f.model != NULL);
    CHECK_EQ(zm_model_begin_host(f.model, "host-a", "/trace"), 0);
    device_setup(&f, true); /* 32 bits at 10 MHz: a wrap every 429.5 s */
    append_call(&f, 1100000, 7, "late_read");
    /* Starts 0x800 ticks (204.8 us) after the anchor; read 500 s later. */
    timing(&f, 500001100000, 7, 0, 0xfffff800ull, 0x100000800ull, 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(start_ns, 1000000 + 0x800 * 100);
    teardown(&f);
}

static void test_regular_list_executions_share_the_append(void)
{
    struct fixture f;
    setup(&f, false);
    device_setup(&f, true);
    append_call(&f, 1100000, 9, "replayed");
    timing(&f, 1200000, 9, 1, 0xfffff400ull, 0xfffff500ull, 0);
    timing(&f, 1300000, 9, 2, 0xfffff600ull, 0xfffff700ull, 0);
    append_call(&f, 1400000, 10, "once");
    timing(&f, 1500000, 10, 0, 0xfffff800ull, 0xfffff810ull, 0);
    timing(&f, 1600000, 10, 0, 0xfffff900ull, 0xfffff910ull, 0); /* append already consumed */
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(device_row(&f, "replayed")->calls, 2);
    CHECK_EQ(device_row(&f, "replayed")->total_ns, 2 * 256 * 100);
    CHECK_EQ(device_row(&f, "once")->calls, 1);
    CHECK_EQ(device_row(&f, "(unknown append)")->calls, 1);
    CHECK_EQ(zm_model_anomalies(f.model)->unmatched_timings, 1);
    teardown(&f);
}

static void test_list_destroy_forgets_its_appends(void)
{
    struct fixture f;
    setup(&f, false);
    device_setup(&f, true);
    append_to(&f, 1100000, 1, "kept", 0x200);
    append_to(&f, 1100100, 2, "kept", 0x200);
    append_to(&f, 1100200, 3, "other", 0x300);
    CHECK_EQ(zm_model_pending_appends(f.model), 3);
    timing(&f, 1200000, 1, 1, 0xfffff400ull, 0xfffff500ull, 0);
    struct zm_event destroy = api(&f, ZM_EVENT_API_ENTRY, 1300000, 1, "zeCommandListDestroy", 0);
    destroy.list = 0x200;
    feed(&f, destroy);
    timing(&f, 1300001, 2, 1, 0xfffff600ull, 0xfffff700ull, 0); /* drained inside the call */
    leave(&f, 1300002, 1, "zeCommandListDestroy", 0);
    CHECK_EQ(zm_model_pending_appends(f.model), 1); /* only list 0x300's append is left */
    timing(&f, 1400000, 1, 2, 0xfffff800ull, 0xfffff900ull, 0); /* after destroy: unknown */
    timing(&f, 1400001, 3, 1, 0xfffff800ull, 0xfffff900ull, 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(device_row(&f, "kept")->calls, 2);
    CHECK_EQ(device_row(&f, "other")->calls, 1);
    CHECK_EQ(zm_model_anomalies(f.model)->unmatched_timings, 1);
    teardown(&f);
}

static void test_lost_and_unanchored_timings_are_counted(void)
{
    struct fixture f;
    setup(&f, false);
    device_setup(&f, false); /* properties, but no anchor */
    append_call(&f, 1100000, 1, "k");
    append_call(&f, 1200000, 2, "k");
    timing(&f, 1300000, 1, 0, 0, 0, 1); /* lost */
    timing(&f, 1400000, 2, 0, 100, 150, 0);
    feed(&f, (struct zm_event){.kind = ZM_EVENT_DEVICE_TIMING,
                               .ns = 1500000,
                               .pid = 100,
                               .tid = 1,
                               .call_id = 3,
                               .device = 0xbad}); /* a device never described */
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(zm_model_anomalies(f.model)->lost_timings, 1);
    CHECK_EQ(zm_model_anomalies(f.model)->unanchored_timings, 2);
    /* Unanchored work is still tallied, at the nominal rate. */
    CHECK_EQ(device_row(&f, "k")->calls, 1);
    CHECK_EQ(device_row(&f, "k")->total_ns, 50 * 100);
    teardown(&f);
}

static void test_inverted_device_interval_clamps(void)
{
    struct fixture f;
    setup(&f, false);
    device_setup(&f, true);
    append_call(&f, 1100000, 5, "backwards");
    timing(&f, 1200000, 5, 0, 0xfffff900ull, 0xfffff800ull, 0);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(zm_model_anomalies(f.model)->inverted_intervals, 1);
    CHECK_EQ(device_row(&f, "backwards")->total_ns, 0);
    teardown(&f);
}

static void test_second_host_is_separate(void)
{
    struct fixture f;
    setup(&f, false);
    entry(&f, 0, 1, "zeInit"); /* left open on host A */
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(zm_model_begin_host(f.model, "host-b", "/trace-b"), 1);
    leave(&f, 10, 1, "zeInit", 0); /* same pid/tid on host B: an orphan there */
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(zm_model_anomalies(f.model)->synthetic_closes, 1);
    CHECK_EQ(zm_model_anomalies(f.model)->orphan_exits, 1);
    CHECK_EQ(zm_model_thread_count(f.model), 2);
    teardown(&f);
}

/* A kernel append on thread `tid`, preceded by its `kernel_shape` (for call `shape_call`) when
 * `shape` is not NULL, and timed 100 ticks. */
static void shaped_launch(struct fixture *f, int64_t ns, int64_t tid, uint64_t call_id,
                          const char *name, const struct zm_kernel_shape *shape,
                          uint64_t shape_call)
{
    if (shape)
        feed(f, (struct zm_event){.kind = ZM_EVENT_KERNEL_SHAPE,
                                  .ns = ns,
                                  .pid = 100,
                                  .tid = tid,
                                  .call_id = shape_call,
                                  .shape = *shape});
    feed(f, (struct zm_event){.kind = ZM_EVENT_APPEND,
                              .ns = ns + 1,
                              .pid = 100,
                              .tid = tid,
                              .call_id = call_id,
                              .device = 0xd0,
                              .name = name,
                              .append_kind = "kernel"});
    whole_call(f, ns, ns + 2, tid, "zeCommandListAppendLaunchKernel", 0);
    timing(f, ns + 3, call_id, 0, 0xfffff800ull + call_id * 1000,
           0xfffff800ull + call_id * 1000 + 100, 0);
}

static int count_kernels(void *kernels, const struct zm_device_span *span)
{
    return zm_kernels_add(kernels, span);
}

static uint64_t kernel_calls(struct zm_kernels *kernels, const char *label)
{
    for (size_t i = 0; i < kernels->stats.device.count; i++)
        if (strcmp(kernels->stats.device.rows[i].name, label) == 0)
            return kernels->stats.device.rows[i].calls;
    return 0;
}

/* The shim records a shape only when it changed: the model carries it forward per thread and
 * kernel name, and only to the append of the same call id. */
static void test_kernel_shapes_carry_forward_per_thread_and_name(void)
{
    struct fixture f;
    struct zm_kernels kernels;
    zm_kernels_init(&kernels);
    zm_stats_init(&f.stats, false);
    struct zm_span_sink sink = {.device_span = count_kernels, .context = &kernels};
    f.model = zm_model_new(&sink, 100);
    CHECK(f.model != NULL);
    CHECK_EQ(zm_model_begin_host(f.model, "host-a", "/trace"), 0);
    device_setup(&f, true);
    struct zm_kernel_shape first = {{2, 1, 1}, {8, 1, 1}, 16, true};
    struct zm_kernel_shape indirect = {{0, 0, 0}, {8, 1, 1}, 16, true};
    struct zm_kernel_shape other = {{5, 5, 5}, {1, 1, 1}, 0, true};
    shaped_launch(&f, 1100000, 1, 1, "k", &first, 1);
    shaped_launch(&f, 1110000, 1, 2, "k", NULL, 0);      /* carried forward */
    shaped_launch(&f, 1120000, 2, 3, "k", NULL, 0);      /* another thread: not known */
    shaped_launch(&f, 1130000, 1, 4, "k", &indirect, 4); /* count not known */
    shaped_launch(&f, 1140000, 1, 5, "k", &other, 9);    /* another call's shape: ignored */
    shaped_launch(&f, 1150000, 1, 6, "j", NULL, 0);      /* another name: not known */
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(kernel_calls(&kernels, "k [2,1,1]x[8,1,1] simd 16"), 2);
    CHECK_EQ(kernel_calls(&kernels, "k [?]x[8,1,1] simd 16"), 2);
    CHECK_EQ(kernels.stats.device.count, 2);
    const struct zm_kernel_info *info =
        zm_kernels_info(&kernels, kernels.stats.device.rows[0].name);
    CHECK(info != NULL && strcmp(info->kernel, "k") == 0 && info->shape.size[0] == 8);
    zm_kernels_release(&kernels);
    teardown(&f);
}

/* Counter samples, as the sink receives them. */
struct counters {
    struct zm_counter_sample samples[16];
    int count;
    struct zm_telemetry telemetry;
};

static int record_counter(void *context, const struct zm_counter_sample *sample)
{
    struct counters *counters = context;
    if (counters->count < 16)
        counters->samples[counters->count++] = *sample;
    return zm_telemetry_add(&counters->telemetry, sample);
}

static int device_sample(struct zm_model *model, int64_t ns, uint64_t active_us, uint64_t stamp_us,
                         double mhz, uint64_t energy_uj, uint64_t used)
{
    struct zm_event event = {.kind = ZM_EVENT_DEVICE_SAMPLE,
                             .ns = ns,
                             .pid = 7,
                             .tid = 8,
                             .device = 0x10,
                             .name = "gpu",
                             .uuid = "00ff",
                             .valid = 15,
                             .engine_active_us = active_us,
                             .engine_timestamp_us = stamp_us,
                             .frequency_mhz = mhz,
                             .energy_uj = energy_uj,
                             .energy_timestamp_us = stamp_us,
                             .memory_used = used};
    return zm_model_event(model, &event);
}

static const struct zm_counter_sample *find_counter(const struct counters *counters, int from,
                                                    enum zm_counter_kind kind)
{
    for (int i = from; i < counters->count; i++) {
        if (counters->samples[i].kind == kind)
            return &counters->samples[i];
    }
    return NULL;
}

static void test_device_samples_become_counters(void)
{
    struct counters counters = {.count = 0};
    zm_telemetry_init(&counters.telemetry);
    struct zm_span_sink sink = {.counter = record_counter, .context = &counters};
    struct zm_model *model = zm_model_new(&sink, 100);
    CHECK(model != NULL);
    CHECK_EQ(zm_model_begin_host(model, "host-a", "/trace"), 0);
    /* The first reading: frequency and memory only (utilization and power need two). */
    CHECK_EQ(device_sample(model, 1000000, 5000, 100000, 300, 2000000, 0), 0);
    CHECK_EQ(counters.count, 2);
    CHECK(find_counter(&counters, 0, ZM_COUNTER_UTILIZATION) == NULL);
    CHECK(find_counter(&counters, 0, ZM_COUNTER_FREQUENCY)->value == 300);
    /* 20 ms later: 15 ms busy (75%), 3 J in 20 ms (150 W), 48 MiB in use. */
    CHECK_EQ(device_sample(model, 21000000, 20000, 120000, 1600, 5000000, 48u << 20), 0);
    const struct zm_counter_sample *busy = find_counter(&counters, 2, ZM_COUNTER_UTILIZATION);
    const struct zm_counter_sample *power = find_counter(&counters, 2, ZM_COUNTER_POWER);
    CHECK(busy && fabs(busy->value - 75.0) < 1e-9 && busy->interval_ns == 20000000);
    CHECK(busy && busy->time_ns == 21000000 && busy->pid == 7);
    CHECK(power && fabs(power->value - 150.0) < 1e-9);
    CHECK(find_counter(&counters, 2, ZM_COUNTER_MEMORY)->value == 48.0);
    /* A counter that went backwards (a reset): no interval counter from it. */
    int before = counters.count;
    CHECK_EQ(device_sample(model, 41000000, 10, 140000, 300, 100, 0), 0);
    CHECK(find_counter(&counters, before, ZM_COUNTER_UTILIZATION) == NULL);
    CHECK(find_counter(&counters, before, ZM_COUNTER_POWER) == NULL);
    /* The summary: one device, 75% over the one interval, 3 J, peak 48 MiB. */
    CHECK_EQ(counters.telemetry.count, 1);
    const struct zm_telemetry_row *row = &counters.telemetry.rows[0];
    CHECK(fabs(row->busy_ns - 15e6) < 1e-3 && row->busy_interval_ns == 20000000);
    CHECK(fabs(row->energy_j - 3.0) < 1e-9 && row->memory_peak_mib == 48.0);
    CHECK(fabs(row->frequency_sum / (double)row->frequency_count - 2200.0 / 3) < 1e-9);
    CHECK_EQ(zm_model_device_label_count(model), 1);
    CHECK_EQ(zm_model_end_host(model), 0);
    zm_model_free(model);
    zm_telemetry_release(&counters.telemetry);
}

/* Device spans as the sink receives them (their engines). */
struct engine_spans {
    struct zm_device_span spans[8];
    int count;
};

static int record_span(void *context, const struct zm_device_span *span)
{
    struct engine_spans *spans = context;
    if (spans->count < 8)
        spans->spans[spans->count++] = *span;
    return 0;
}

/* zeCommandQueueCreate (or zeCommandListCreateImmediate) of `handle` on slot (ordinal, index):
 * entry, its descriptor, exit with `result`. */
static void create_queue(struct fixture *f, int64_t ns, const char *function, uint32_t ordinal,
                         uint32_t index, uint64_t handle, uint32_t result)
{
    entry(f, ns, 1, function);
    struct zm_event desc = api(f, ZM_EVENT_API_DESC, ns + 1, 1, function, 0);
    desc.queue_slot = true;
    desc.queue_ordinal = ordinal;
    desc.queue_index = index;
    feed(f, desc);
    struct zm_event exit = api(f, ZM_EVENT_API_EXIT, ns + 2, 1, function, result);
    exit.created = result == 0 ? handle : 0;
    feed(f, exit);
}

/* A timing of work on `queue` (its append not seen: the engine comes from the queue alone). */
static void timing_on(struct fixture *f, int64_t ns, uint64_t call_id, uint64_t queue)
{
    feed(f, (struct zm_event){.kind = ZM_EVENT_DEVICE_TIMING,
                              .ns = ns,
                              .pid = 100,
                              .tid = 1,
                              .call_id = call_id,
                              .device = 0xd0,
                              .queue = queue});
}

static void test_queue_engines_follow_their_creation(void)
{
    struct engine_spans spans = {.count = 0};
    struct fixture f;
    struct zm_span_sink sink = {.device_span = record_span, .context = &spans};
    f.model = zm_model_new(&sink, 100);
    zm_stats_init(&f.stats, false);
    CHECK(f.model != NULL);
    CHECK_EQ(zm_model_begin_host(f.model, "host-a", "/trace"), 0);
    /* Group 0 computes (and copies), group 1 only copies. */
    struct zm_event properties = device_properties();
    properties.groups_known = true;
    properties.compute_groups = 0x1;
    properties.copy_groups = 0x3;
    feed(&f, properties);
    create_queue(&f, 600000, "zeCommandQueueCreate", 1, 1, 0x300, 0);
    create_queue(&f, 610000, "zeCommandListCreateImmediate", 0, 2, 0x400, 0);
    create_queue(&f, 620000, "zeCommandQueueCreate", 0, 3, 0x500, 0x78000004u); /* failed */
    uint64_t queues[] = {0x300, 0x400, 0x500, 0x600 /* created before the trace */};
    for (size_t i = 0; i < sizeof(queues) / sizeof(*queues); i++)
        timing_on(&f, 2000000 + (int64_t)i, 10 + i, queues[i]);
    /* The handle 0x300 destroyed and created again on another engine: later work goes there. */
    create_queue(&f, 2100000, "zeCommandQueueCreate", 0, 1, 0x300, 0);
    timing_on(&f, 2200000, 20, 0x300);
    CHECK_EQ(zm_model_end_host(f.model), 0);
    CHECK_EQ(spans.count, 5);
    const struct zm_engine *e = &spans.spans[0].engine;
    CHECK(e->known && e->ordinal == 1 && e->index == 1 && e->kind == ZM_ENGINE_COPY);
    e = &spans.spans[1].engine;
    CHECK(e->known && e->ordinal == 0 && e->index == 2 && e->kind == ZM_ENGINE_COMPUTE);
    CHECK(!spans.spans[2].engine.known); /* its creation failed */
    CHECK(!spans.spans[3].engine.known); /* its creation was not seen */
    e = &spans.spans[4].engine;
    CHECK(e->known && e->ordinal == 0 && e->index == 1 && e->kind == ZM_ENGINE_COMPUTE);
    teardown(&f);
}

int main(void)
{
    RUN(test_calls_pair_per_thread);
    RUN(test_nested_calls_nest);
    RUN(test_one_event_calls_are_complete);
    RUN(test_one_event_call_never_orphan_nor_synthetic);
    RUN(test_orphan_exit_is_counted_and_dropped);
    RUN(test_lost_inner_exit_closes_it_synthetic);
    RUN(test_open_call_closes_at_threads_last_event);
    RUN(test_inverted_pair_clamps_to_zero);
    RUN(test_unknown_and_discarded_are_counted);
    RUN(test_errors_are_level_zero_error_codes);
    RUN(test_extended_rows_split_by_thread);
    RUN(test_device_timing_links_to_append_across_wrap);
    RUN(test_one_event_append_links_its_timing_across_wrap);
    RUN(test_immediate_timing_read_a_wrap_late_keeps_its_append);
    RUN(test_regular_list_executions_share_the_append);
    RUN(test_list_destroy_forgets_its_appends);
    RUN(test_lost_and_unanchored_timings_are_counted);
    RUN(test_inverted_device_interval_clamps);
    RUN(test_second_host_is_separate);
    RUN(test_kernel_shapes_carry_forward_per_thread_and_name);
    RUN(test_device_samples_become_counters);
    RUN(test_queue_engines_follow_their_creation);
    return check_status();
}
