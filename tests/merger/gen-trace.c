/*
 * gen-trace: a deterministic stand-in for the shim, for the merger's tests and bench.
 *
 * It fires the tracepoints of docs/tracepoints.md (through the test-only providers gen-tp-*.h)
 * describing a made-up Level Zero program on a made-up device whose timer runs at 10 MHz and is
 * derived from CLOCK_MONOTONIC (the LTTng trace clock), so device intervals land where the host
 * events say they should. Kernel timestamps keep 32 bits and the device clock starts just below
 * 2^32 ticks, so they wrap during the run.
 *
 *   gen-trace golden     the scenario tests/merger/check-golden.py knows by heart
 *   gen-trace bench N    N iterations of (launch, append, timing, sync): about 7 events each
 */
#include "zeprof_device.h"
#include "gen-tp-ze.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEVICE 0xd0u
/* device_properties' queue groups: 0 computes and copies, 1 copies (as the simulated device) */
#define GEN_COMPUTE_GROUPS 0x1u
#define GEN_COPY_GROUPS 0x3u
#define CONTEXT 0xc0u
#define TICK_NS 100u /* 10 MHz */
#define KERNEL_MASK 0xffffffffull
#define DEVICE_EPOCH_TICKS 0xfffff000ull /* wraps 32 bits after 409.6 us */

static uint64_t base_ns;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t device_now(void)
{
    return DEVICE_EPOCH_TICKS + (mono_ns() - base_ns) / TICK_NS;
}

/* Waits until the device clock has passed `ticks`, so a timing is only reported once "done". */
static void wait_device(uint64_t ticks)
{
    while (device_now() <= ticks) {
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
}

static void anchor(uint64_t id)
{
    for (uint32_t sample = 0; sample < 3; sample++) {
        lttng_ust_tracepoint(zeprof_device, clock_sample_begin, DEVICE, id, sample);
        uint64_t ticks = device_now();
        lttng_ust_tracepoint(zeprof_device, clock_sample_end, DEVICE, id, sample, ticks, 0);
    }
}

static void sync_call(uint64_t event, uint32_t result)
{
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_entry, event, UINT64_MAX);
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_exit, result);
}

/* One kernel launch with its append event; returns nothing, the timing is reported separately. */
static void launch(uint64_t call_id, uint64_t list, const char *name, uint64_t groups)
{
    lttng_ust_tracepoint(zeprof_ze, zeCommandListAppendLaunchKernel_entry, list, 0x4000 + call_id,
                         0x7ff000, 0, 0, 0);
    lttng_ust_tracepoint(zeprof_ze, zeCommandListAppendLaunchKernel_desc, (uint32_t)groups, 1, 1);
    lttng_ust_tracepoint(zeprof_device, append, call_id, DEVICE, CONTEXT, list, "kernel", name, 0,
                         groups);
    lttng_ust_tracepoint(zeprof_ze, zeCommandListAppendLaunchKernel_exit, 0);
}

static void timing(uint64_t call_id, uint64_t execution, uint64_t queue, uint64_t list,
                   uint64_t start, uint64_t end, uint32_t status)
{
    lttng_ust_tracepoint(zeprof_device, device_timing, call_id, execution, DEVICE, queue, list,
                         start & KERNEL_MASK, end & KERNEL_MASK, start & KERNEL_MASK,
                         end & KERNEL_MASK, status);
}

/* Runs one execution of `ticks` device ticks starting shortly after now, then reports it. */
static void execute_and_sync(uint64_t call_id, uint64_t execution, uint64_t queue, uint64_t list,
                             uint64_t ticks, uint32_t sync_result)
{
    uint64_t start = device_now() + 10;
    wait_device(start + ticks);
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_entry, 0xe000 + call_id, UINT64_MAX);
    timing(call_id, execution, queue, list, start, start + ticks, 0);
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_exit, sync_result);
}

/* The worker: 3 zeDeviceGet, an exit without entry, then an entry that never returns. */
static void *worker(void *unused)
{
    (void)unused;
    for (int i = 0; i < 3; i++) {
        lttng_ust_tracepoint(zeprof_ze, zeDeviceGet_entry, 0xd1, 0x7ff100, 0x7ff200);
        lttng_ust_tracepoint(zeprof_ze, zeDeviceGet_exit, 0, 1, DEVICE);
    }
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_exit, 0);
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_entry, 0xeeee, UINT64_MAX);
    return NULL;
}

static int golden(void)
{
    lttng_ust_tracepoint(zeprof_ze, zeInit_entry, 0);
    lttng_ust_tracepoint(zeprof_ze, zeInit_exit, 0);
    lttng_ust_tracepoint(zeprof_ze, zeDeviceGet_entry, 0xd1, 0x7ff100, 0x7ff200);
    lttng_ust_tracepoint(zeprof_ze, zeDeviceGet_exit, 0, 1, DEVICE);
    lttng_ust_tracepoint(zeprof_device, device_properties, DEVICE, 0xd1, "Gen Device",
                         "00000000000000000000000000000001", 1, 1000000000ull / TICK_NS, 64, 32,
                         GEN_COMPUTE_GROUPS, GEN_COPY_GROUPS);
    anchor(1);

    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0)
        return 1;
    pthread_join(thread, NULL);

    /* 10 x gen_kernel_a, 500 ticks each, immediate list 0x100. */
    for (uint64_t i = 1; i <= 10; i++) {
        launch(i, 0x100, "gen_kernel_a", 4);
        execute_and_sync(i, 0, 0x100, 0x100, 500, 0);
    }
    /* 4 copies of 4096 bytes, 200 ticks each. */
    for (uint64_t i = 11; i <= 14; i++) {
        lttng_ust_tracepoint(zeprof_ze, zeCommandListAppendMemoryCopy_entry, 0x100, 0x9000, 0xa000,
                             4096, 0, 0, 0);
        lttng_ust_tracepoint(zeprof_device, append, i, DEVICE, CONTEXT, 0x100, "copy",
                             "zeCommandListAppendMemoryCopy", 4096, 0);
        lttng_ust_tracepoint(zeprof_ze, zeCommandListAppendMemoryCopy_exit, 0);
        execute_and_sync(i, 0, 0x100, 0x100, 200, 0);
    }
    /* A regular list 0x200 holding gen_kernel_b (1000 ticks), executed 3 times on queue 0x300. */
    launch(20, 0x200, "gen_kernel_b", 8);
    for (uint64_t execution = 1; execution <= 3; execution++) {
        lttng_ust_tracepoint(zeprof_ze, zeCommandQueueExecuteCommandLists_entry, 0x300, 1, 0x7ff300,
                             0);
        lttng_ust_tracepoint(zeprof_ze, zeCommandQueueExecuteCommandLists_exit, 0);
        execute_and_sync(20, execution, 0x300, 0x200, 1000, 0);
    }
    /* Two overlapping gen_kernel_c on immediate list 0x400: [s, s+300) and [s+100, s+400). */
    launch(30, 0x400, "gen_kernel_c", 2);
    launch(31, 0x400, "gen_kernel_c", 2);
    uint64_t start = device_now() + 10;
    wait_device(start + 400);
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_entry, 0xe030, UINT64_MAX);
    timing(30, 0, 0x400, 0x400, start, start + 300, 0);
    timing(31, 0, 0x400, 0x400, start + 100, start + 400, 0);
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_exit, 0);
    /* A lost timing and an inverted one (end before start: clamped to 0). */
    launch(40, 0x100, "gen_kernel_lost", 1);
    launch(41, 0x100, "gen_kernel_inv", 1);
    start = device_now() + 10;
    wait_device(start + 50);
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_entry, 0xe040, UINT64_MAX);
    lttng_ust_tracepoint(zeprof_device, device_timing, 40, 0, DEVICE, 0x100, 0x100, 0, 0, 0, 0, 1);
    timing(41, 0, 0x100, 0x100, start + 50, start, 0);
    lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_exit, 0);
    /* One failing call and two events the merger does not know. */
    sync_call(0xbad, 0x78000004u);
    lttng_ust_tracepoint(zeprof_ze, gen_unknown, 1);
    lttng_ust_tracepoint(zeprof_ze, gen_unknown, 2);
    anchor(2);
    return 0;
}

static int bench(uint64_t iterations)
{
    lttng_ust_tracepoint(zeprof_ze, zeInit_entry, 0);
    lttng_ust_tracepoint(zeprof_ze, zeInit_exit, 0);
    lttng_ust_tracepoint(zeprof_device, device_properties, DEVICE, 0xd1, "Gen Device",
                         "00000000000000000000000000000001", 1, 1000000000ull / TICK_NS, 64, 32,
                         GEN_COMPUTE_GROUPS, GEN_COPY_GROUPS);
    anchor(1);
    for (uint64_t i = 1; i <= iterations; i++) {
        launch(i, 0x100, (i & 1) ? "gen_kernel_a" : "gen_kernel_b", 4);
        uint64_t start = device_now();
        lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_entry, 0xe000, UINT64_MAX);
        timing(i, 0, 0x100, 0x100, start, start + 1, 0);
        lttng_ust_tracepoint(zeprof_ze, zeEventHostSynchronize_exit, 0);
        if (i % 100000 == 0)
            anchor(1 + i / 100000);
    }
    anchor(UINT32_MAX);
    return 0;
}

int main(int argc, char **argv)
{
    base_ns = mono_ns();
    if (argc == 2 && strcmp(argv[1], "golden") == 0)
        return golden();
    if (argc == 3 && strcmp(argv[1], "bench") == 0)
        return bench(strtoull(argv[2], NULL, 10));
    fprintf(stderr, "usage: gen-trace golden | gen-trace bench ITERATIONS\n");
    return 2;
}
