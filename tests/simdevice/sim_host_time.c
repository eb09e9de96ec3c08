/*
 * sim_host_time.c: host time spent inside some entry points, per thread (zesim_host_time.h).
 *
 * Why in the driver: a benchmark of what a tracer adds per call must tell the driver's share
 * (which the simulated device's worker threads make vary from run to run) from the tracer's own;
 * timed here, both come out of one run. Off unless ZESIM_HOST_TIME=1: the table getters then
 * put the sim_ entry points in the tables as they are.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <level_zero/ze_ddi.h>

#include "sim.h"
#include "zesim_host_time.h"

static const char *const timed_names[ZESIM_TIMED_COUNT] = {
    "zeCommandListAppendLaunchKernel",
    "zeCommandListAppendBarrier",
    "zeCommandListAppendSignalEvent",
    "zeEventQueryStatus",
    "zeEventHostReset",
    "zeEventQueryKernelTimestamp",
    "zeEventCreate",
    "zeEventPoolCreate",
    "zeEventHostSynchronize",
};

static _Thread_local struct zesim_host_time thread_record = {timed_names, {0}, {0}, -1, -1, -1};
/* The calibration's own counters: an empty function, timed as the entry points are. */
static _Thread_local uint64_t empty_ns;

bool sim_host_time_enabled(void)
{
    const char *value = getenv("ZESIM_HOST_TIME");
    return value && strcmp(value, "1") == 0;
}

static inline uint64_t host_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Times one call into `slot` (thread_record's counters or empty_ns). */
#define SIM_TIMED(calls_slot, ns_slot, call)                                                       \
    do {                                                                                           \
        uint64_t timed_start = host_now();                                                         \
        ze_result_t timed_result = (call);                                                         \
        uint64_t timed_end = host_now();                                                           \
        calls_slot++;                                                                              \
        ns_slot += timed_end - timed_start;                                                        \
        return timed_result;                                                                       \
    } while (0)
#define SIM_TIMED_ENTRY(index, call)                                                               \
    SIM_TIMED(thread_record.calls[index], thread_record.ns[index], call)

static ze_result_t timed_launch_kernel(ze_command_list_handle_t list, ze_kernel_handle_t kernel,
                                       const ze_group_count_t *groups, ze_event_handle_t signal,
                                       uint32_t wait_count, ze_event_handle_t *waits)
{
    SIM_TIMED_ENTRY(ZESIM_TIMED_LAUNCH_KERNEL,
                    sim_list_append_launch_kernel(list, kernel, groups, signal, wait_count, waits));
}

static ze_result_t timed_barrier(ze_command_list_handle_t list, ze_event_handle_t signal,
                                 uint32_t wait_count, ze_event_handle_t *waits)
{
    SIM_TIMED_ENTRY(ZESIM_TIMED_BARRIER, sim_list_append_barrier(list, signal, wait_count, waits));
}

static ze_result_t timed_signal_event(ze_command_list_handle_t list, ze_event_handle_t event)
{
    SIM_TIMED_ENTRY(ZESIM_TIMED_SIGNAL_EVENT, sim_list_append_signal_event(list, event));
}

static ze_result_t timed_query_status(ze_event_handle_t event)
{
    SIM_TIMED_ENTRY(ZESIM_TIMED_QUERY_STATUS, sim_event_query_status(event));
}

static ze_result_t timed_host_reset(ze_event_handle_t event)
{
    SIM_TIMED_ENTRY(ZESIM_TIMED_HOST_RESET, sim_event_host_reset(event));
}

static ze_result_t timed_query_kernel_timestamp(ze_event_handle_t event,
                                                ze_kernel_timestamp_result_t *result)
{
    SIM_TIMED_ENTRY(ZESIM_TIMED_QUERY_KERNEL_TIMESTAMP,
                    sim_event_query_kernel_timestamp(event, result));
}

static ze_result_t timed_host_synchronize(ze_event_handle_t event, uint64_t timeout)
{
    SIM_TIMED_ENTRY(ZESIM_TIMED_HOST_SYNCHRONIZE, sim_event_host_synchronize(event, timeout));
}

static ze_result_t timed_event_create(ze_event_pool_handle_t pool, const ze_event_desc_t *desc,
                                      ze_event_handle_t *out)
{
    SIM_TIMED_ENTRY(ZESIM_TIMED_EVENT_CREATE, sim_event_create(pool, desc, out));
}

static ze_result_t timed_pool_create(ze_context_handle_t context, const ze_event_pool_desc_t *desc,
                                     uint32_t device_count, ze_device_handle_t *devices,
                                     ze_event_pool_handle_t *out)
{
    SIM_TIMED_ENTRY(ZESIM_TIMED_POOL_CREATE,
                    sim_event_pool_create(context, desc, device_count, devices, out));
}

void sim_host_time_list_table(ze_command_list_dditable_t *table)
{
    table->pfnAppendLaunchKernel = timed_launch_kernel;
    table->pfnAppendBarrier = timed_barrier;
    table->pfnAppendSignalEvent = timed_signal_event;
}

void sim_host_time_event_table(ze_event_dditable_t *table)
{
    table->pfnQueryStatus = timed_query_status;
    table->pfnHostReset = timed_host_reset;
    table->pfnQueryKernelTimestamp = timed_query_kernel_timestamp;
    table->pfnCreate = timed_event_create;
    table->pfnHostSynchronize = timed_host_synchronize;
}

void sim_host_time_event_pool_table(ze_event_pool_dditable_t *table)
{
    table->pfnCreate = timed_pool_create;
}

/* ---------------------------------------------------------------- calibration ------------- */

static __attribute__((noinline)) ze_result_t empty_entry(void)
{
    __asm__ volatile("");
    return ZE_RESULT_SUCCESS;
}

static ze_result_t timed_empty(void)
{
    uint64_t calls = 0;
    SIM_TIMED(calls, empty_ns, empty_entry());
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The mean of the fastest 98%: the clock ticks in steps of up to tens of nanoseconds here, so
 * a median would be off by up to a step; the slowest were preempted. Sorts values. */
static double trimmed_mean(uint64_t *values, size_t count)
{
    qsort(values, count, sizeof *values, compare_u64);
    size_t kept = count * 98 / 100;
    double sum = 0;
    for (size_t i = 0; i < kept; i++)
        sum += (double)values[i];
    return sum / (double)kept;
}

#define CALIBRATION_ROUNDS 20000u

/* The accounting's own cost, as a caller timing a timed call through a function pointer (the
 * loader's dispatch) sees it: a timed empty call spans `total` between the caller's two clock
 * reads, of which `inside` is counted; a bare pair of clock reads spans `reads`. The rest,
 * total - reads - inside, is spent around the timed span. */
static void calibrate(struct zesim_host_time *record)
{
    uint64_t *reads = malloc(CALIBRATION_ROUNDS * sizeof *reads);
    uint64_t *inside = malloc(CALIBRATION_ROUNDS * sizeof *inside);
    uint64_t *total = malloc(CALIBRATION_ROUNDS * sizeof *total);
    ze_result_t (*volatile call)(void) = timed_empty;
    record->inside_ns = record->outside_ns = record->clock_read_ns = 0;
    if (reads && inside && total) {
        for (unsigned i = 0; i < CALIBRATION_ROUNDS; i++) {
            uint64_t first = host_now();
            reads[i] = host_now() - first;
            uint64_t before = empty_ns;
            uint64_t start = host_now();
            call();
            total[i] = host_now() - start;
            inside[i] = empty_ns - before;
        }
        record->clock_read_ns = trimmed_mean(reads, CALIBRATION_ROUNDS);
        record->inside_ns = trimmed_mean(inside, CALIBRATION_ROUNDS);
        double outside =
            trimmed_mean(total, CALIBRATION_ROUNDS) - record->clock_read_ns - record->inside_ns;
        record->outside_ns = outside > 0 ? outside : 0;
    }
    free(reads);
    free(inside);
    free(total);
}

/* The extension function (ZESIM_EXT_HOST_TIME). */
ze_result_t sim_ext_host_time(ze_driver_handle_t driver, struct zesim_host_time **record)
{
    ze_result_t status = sim_handle_check(driver, SIM_KIND_DRIVER);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!record)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!sim_host_time_enabled())
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (thread_record.inside_ns < 0)
        calibrate(&thread_record);
    *record = &thread_record;
    return ZE_RESULT_SUCCESS;
}
