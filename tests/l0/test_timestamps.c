/*
 * test_timestamps: kernel timestamps against the ground truth (ZESIM_TRUTH).
 *
 * Each command runs with its own timestamp event. Its kernel timestamps must equal the truth's
 * device ticks truncated to kernelTimestampValidBits, and converted to host time the way a tracer
 * does it (an anchor from zeDeviceGetGlobalTimestamps bracketed by CLOCK_MONOTONIC reads, the rate
 * from the 1.2 properties) they must land on the truth's CLOCK_MONOTONIC times within the
 * anchor's uncertainty. Also: write-global-timestamp and query-kernel-timestamps commands, every
 * device (run with ZESIM_DEVICES=2), and, when the valid bits are few (ZESIM_KERNEL_TS_BITS=16),
 * a kernel long enough that its counter wraps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MAX_COMMANDS 16

struct anchor {
    uint64_t ns, ticks, uncertainty_ns;
};

struct device_clock {
    uint64_t hz;
    uint32_t bits;
    uint64_t mask;
};

static struct device_clock clock_of(ze_device_handle_t device)
{
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
    CHECK_OK(zeDeviceGetProperties(device, &props));
    struct device_clock clock = {props.timerResolution, props.kernelTimestampValidBits, 0};
    clock.mask = clock.bits >= 64 ? UINT64_MAX : (1ull << clock.bits) - 1;
    return clock;
}

static struct anchor take_anchor(ze_device_handle_t device)
{
    struct anchor best = {0, 0, UINT64_MAX};
    for (int i = 0; i < 5; i++) {
        uint64_t host = 0, ticks = 0;
        uint64_t h0 = now_mono_ns();
        CHECK_OK(zeDeviceGetGlobalTimestamps(device, &host, &ticks));
        uint64_t h1 = now_mono_ns();
        if ((h1 - h0) / 2 < best.uncertainty_ns)
            best = (struct anchor){h0 + (h1 - h0) / 2, ticks, (h1 - h0) / 2};
    }
    return best;
}

/* Full ticks of a truncated timestamp taken after the anchor (and less than a wrap after it). */
static uint64_t unwrap(const struct anchor *anchor, const struct device_clock *clock,
                       uint64_t truncated)
{
    return anchor->ticks + ((truncated - anchor->ticks) & clock->mask);
}

static int64_t to_ns(const struct anchor *anchor, const struct device_clock *clock, uint64_t ticks)
{
    return (int64_t)anchor->ns +
           (int64_t)((double)(int64_t)(ticks - anchor->ticks) * 1e9 / (double)clock->hz);
}

struct expected {
    const char *kind;
    const char *name;
    ze_event_handle_t event;
    struct anchor anchor; /* taken just before the append */
    uint32_t device;
};

static void compare(const struct expected *e, const struct truth_line *t,
                    const struct device_clock *clock)
{
    CHECK(strcmp(t->kind, e->kind) == 0);
    CHECK(strcmp(t->name, e->name) == 0);
    CHECK(t->device == e->device);
    CHECK(t->start_ns <= t->end_ns && t->start_ticks <= t->end_ticks);
    ze_kernel_timestamp_result_t ts;
    CHECK_OK(zeEventQueryKernelTimestamp(e->event, &ts));
    /* Exactly the truth's ticks, truncated to the valid bits. */
    CHECK(ts.global.kernelStart == (t->start_ticks & clock->mask));
    CHECK(ts.global.kernelEnd == (t->end_ticks & clock->mask));
    CHECK(ts.global.kernelStart <= clock->mask && ts.global.kernelEnd <= clock->mask);
    CHECK(((ts.context.kernelEnd - ts.context.kernelStart) & clock->mask) ==
          ((t->end_ticks - t->start_ticks) & clock->mask));
    /* Converted with the anchor: within its uncertainty plus two ticks of rounding. Only when
     * the counter's period is long enough (a second) that the anchor taken before the append
     * unambiguously gives the missing high bits, whatever the machine's load. */
    if (clock->mask / clock->hz < 1)
        return;
    uint64_t start_ticks = unwrap(&e->anchor, clock, ts.global.kernelStart);
    int64_t error = to_ns(&e->anchor, clock, start_ticks) - (int64_t)t->start_ns;
    int64_t bound =
        (int64_t)e->anchor.uncertainty_ns + 2 * (int64_t)(1000000000ull / clock->hz) + 2;
    if (error > bound || error < -bound)
        fprintf(stderr, "conversion error %lld ns > bound %lld ns (%s)\n", (long long)error,
                (long long)bound, e->name);
    CHECK(error <= bound && error >= -bound);
}

int main(void)
{
    char truth_path[64];
    truth_setup(truth_path, sizeof(truth_path));
    struct l0 l0;
    l0_open(&l0);

    struct device_clock clock = clock_of(l0.device);
    ze_event_pool_handle_t pool = l0_pool(
        &l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, MAX_COMMANDS);
    ze_event_handle_t events[MAX_COMMANDS];
    for (uint32_t i = 0; i < MAX_COMMANDS; i++)
        events[i] = l0_event(pool, i);

    ze_kernel_handle_t spin = l0_kernel(&l0, "zesim_spin");
    ze_kernel_handle_t vadd = l0_kernel(&l0, "zesim_vadd_f32");
    ze_kernel_handle_t generic = l0_kernel(&l0, "app_kernel");
    float *data = l0_shared(&l0, 3 * 256 * sizeof(float));
    memset(data, 0, 3 * 256 * sizeof(float));
    float *a = data, *b = data + 256, *c = data + 512;
    CHECK_OK(zeKernelSetArgumentValue(vadd, 0, sizeof(a), &a));
    CHECK_OK(zeKernelSetArgumentValue(vadd, 1, sizeof(b), &b));
    CHECK_OK(zeKernelSetArgumentValue(vadd, 2, sizeof(c), &c));
    CHECK_OK(zeKernelSetGroupSize(vadd, 64, 1, 1));
    CHECK_OK(zeKernelSetGroupSize(generic, 32, 1, 1));

    struct expected expected[MAX_COMMANDS];
    uint32_t n = 0;
    ze_command_list_handle_t list = l0_immediate(&l0, l0.device, 0, 0);
    ze_group_count_t one = {1, 1, 1}, four = {4, 1, 1}, many = {300, 1, 1};
    const uint64_t spins[] = {100000, 700000, 2000000};
    for (int i = 0; i < 3; i++) {
        l0_set_spin(spin, spins[i]);
        expected[n] =
            (struct expected){"kernel", "zesim_spin", events[n], take_anchor(l0.device), 0};
        CHECK_OK(zeCommandListAppendLaunchKernel(list, spin, &one, events[n], 0, NULL));
        CHECK_OK(zeEventHostSynchronize(events[n++], UINT64_MAX));
    }
    expected[n] =
        (struct expected){"kernel", "zesim_vadd_f32", events[n], take_anchor(l0.device), 0};
    CHECK_OK(zeCommandListAppendLaunchKernel(list, vadd, &four, events[n], 0, NULL));
    CHECK_OK(zeEventHostSynchronize(events[n++], UINT64_MAX));
    expected[n] = (struct expected){"kernel", "app_kernel", events[n], take_anchor(l0.device), 0};
    CHECK_OK(zeCommandListAppendLaunchKernel(list, generic, &many, events[n], 0, NULL));
    CHECK_OK(zeEventHostSynchronize(events[n++], UINT64_MAX));
    expected[n] = (struct expected){"copy", "zeCommandListAppendMemoryCopy", events[n],
                                    take_anchor(l0.device), 0};
    CHECK_OK(zeCommandListAppendMemoryCopy(list, c, a, 256 * sizeof(float), events[n], 0, NULL));
    CHECK_OK(zeEventHostSynchronize(events[n++], UINT64_MAX));
    expected[n] = (struct expected){"barrier", "zeCommandListAppendBarrier", events[n],
                                    take_anchor(l0.device), 0};
    CHECK_OK(zeCommandListAppendBarrier(list, events[n], 0, NULL));
    CHECK_OK(zeEventHostSynchronize(events[n++], UINT64_MAX));

    /* Device-side timestamp query and global timestamp write. */
    ze_kernel_timestamp_result_t *results = l0_shared(&l0, 2 * sizeof(*results));
    uint64_t *global = l0_shared(&l0, sizeof(*global));
    ze_event_handle_t queried[2] = {events[0], events[3]};
    CHECK_OK(
        zeCommandListAppendQueryKernelTimestamps(list, 2, queried, results, NULL, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendWriteGlobalTimestamp(list, global, events[n], 0, NULL));
    CHECK_OK(zeEventHostSynchronize(events[n], UINT64_MAX));
    for (int i = 0; i < 2; i++) {
        ze_kernel_timestamp_result_t host_view;
        CHECK_OK(zeEventQueryKernelTimestamp(queried[i], &host_view));
        CHECK(memcmp(&host_view, &results[i], sizeof(host_view)) == 0);
    }
    uint32_t device_side_lines = 2;

    /* The other devices, each on its own clock; events[7] went to the global timestamp. */
    uint32_t other_devices = l0.device_count - 1;
    CHECK(7 + other_devices < MAX_COMMANDS);
    ze_command_list_handle_t other_lists[16];
    for (uint32_t d = 1; d < l0.device_count; d++) {
        other_lists[d] = l0_immediate(&l0, l0.devices[d], 0, 0);
        uint32_t slot = 7 + d;
        expected[slot] =
            (struct expected){"kernel", "app_kernel", events[slot], take_anchor(l0.devices[d]), d};
        /* A kernel object belongs to a module of device 0; the simulator runs it anywhere. */
        CHECK_OK(
            zeCommandListAppendLaunchKernel(other_lists[d], generic, &four, events[slot], 0, NULL));
        CHECK_OK(zeEventHostSynchronize(events[slot], UINT64_MAX));
    }

    CHECK_OK(zeCommandListDestroy(list));
    for (uint32_t d = 1; d < l0.device_count; d++)
        CHECK_OK(zeCommandListDestroy(other_lists[d]));

    struct truth_line *lines = NULL;
    size_t count = truth_read(truth_path, &lines);
    CHECK(count == 7 + device_side_lines + other_devices);
    for (uint32_t i = 0; i < 7; i++)
        compare(&expected[i], &lines[i], &clock);
    CHECK(strcmp(lines[7].kind, "query_timestamps") == 0);
    CHECK(strcmp(lines[8].kind, "global_timestamp") == 0);
    CHECK(*global == lines[8].start_ticks); /* full 64 bits: timestampValidBits is 64 */
    for (uint32_t d = 1; d <= other_devices; d++) {
        struct device_clock other = clock_of(l0.devices[d]);
        compare(&expected[7 + d], &lines[8 + d], &other);
        /* Own epoch: the same instant reads differently on another device. */
        CHECK(lines[8 + d].start_ticks != lines[8].start_ticks);
    }
    /* One queue: the truth is in execution order and intervals do not overlap. */
    for (size_t i = 1; i < 9; i++)
        CHECK(lines[i].start_ns >= lines[i - 1].end_ns);

    /* Wrap: with few valid bits (ZESIM_KERNEL_TS_BITS=12) a 2 ms kernel spans more than one
     * counter period, and only the truncated difference survives. */
    if (clock.mask < 2000000ull * clock.hz / 1000000000ull) {
        uint64_t spin_ticks = lines[2].end_ticks - lines[2].start_ticks;
        CHECK(spin_ticks > clock.mask);
        ze_kernel_timestamp_result_t ts;
        CHECK_OK(zeEventQueryKernelTimestamp(events[2], &ts));
        CHECK(((ts.global.kernelEnd - ts.global.kernelStart) & clock.mask) ==
              (spin_ticks & clock.mask));
    }

    free(lines);
    unlink(truth_path);
    CHECK_OK(zeMemFree(l0.context, data));
    CHECK_OK(zeMemFree(l0.context, results));
    CHECK_OK(zeMemFree(l0.context, global));
    CHECK_OK(zeKernelDestroy(spin));
    CHECK_OK(zeKernelDestroy(vadd));
    CHECK_OK(zeKernelDestroy(generic));
    for (uint32_t i = 0; i < MAX_COMMANDS; i++)
        CHECK_OK(zeEventDestroy(events[i]));
    CHECK_OK(zeEventPoolDestroy(pool));
    l0_close(&l0);
    return check_pass("test_timestamps");
}
