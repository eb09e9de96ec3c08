/*
 * zesim_host_time.h: the simulated driver's host-time accounting, as a program on top of the
 * loader sees it (bench/timing reads it; nothing else should).
 *
 * With ZESIM_HOST_TIME=1 in the environment when the loader loads the driver, the driver times
 * the host time spent inside a few of its entry points (those a profiled append and the
 * device-timing engine's work around it call), per calling thread. The extension function
 * ZESIM_EXT_HOST_TIME, found with zeDriverGetExtensionFunctionAddress, hands the calling thread
 * its record; the driver updates it in place after every timed call, so a program reads the
 * counters before and after its own call with no further call. Without the variable the
 * dispatch tables point straight at the entry points (no cost) and the function answers
 * ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
 */
#ifndef ZESIM_HOST_TIME_H
#define ZESIM_HOST_TIME_H

#include <stdint.h>

#include <level_zero/ze_api.h>

#define ZESIM_EXT_HOST_TIME "zexSimulatorGetHostTime"

/* The timed entry points, in record order. */
enum zesim_timed {
    ZESIM_TIMED_LAUNCH_KERNEL,          /* zeCommandListAppendLaunchKernel */
    ZESIM_TIMED_BARRIER,                /* zeCommandListAppendBarrier */
    ZESIM_TIMED_SIGNAL_EVENT,           /* zeCommandListAppendSignalEvent */
    ZESIM_TIMED_QUERY_STATUS,           /* zeEventQueryStatus */
    ZESIM_TIMED_HOST_RESET,             /* zeEventHostReset */
    ZESIM_TIMED_QUERY_KERNEL_TIMESTAMP, /* zeEventQueryKernelTimestamp */
    ZESIM_TIMED_EVENT_CREATE,           /* zeEventCreate */
    ZESIM_TIMED_POOL_CREATE,            /* zeEventPoolCreate */
    ZESIM_TIMED_HOST_SYNCHRONIZE,       /* zeEventHostSynchronize */
    ZESIM_TIMED_COUNT
};

/* One thread's record. calls and ns grow by one and by the call's duration (CLOCK_MONOTONIC,
 * read just before and just after the entry point) after every timed call of this thread. The
 * accounting costs time of its own, measured once per thread when the record is first asked for
 * (means of many timed calls of an empty function, the slowest 2% left out): inside_ns of it
 * lands in ns per call (about one clock read), outside_ns per call is spent around the timed
 * span, in the caller's time. clock_read_ns: what one CLOCK_MONOTONIC read adds to a span that a
 * caller times itself. */
struct zesim_host_time {
    const char *const *names; /* ZESIM_TIMED_COUNT function names */
    uint64_t calls[ZESIM_TIMED_COUNT];
    uint64_t ns[ZESIM_TIMED_COUNT];
    double inside_ns;
    double outside_ns;
    double clock_read_ns;
};

/* The extension function's type. */
typedef ze_result_t (*zesim_get_host_time_t)(ze_driver_handle_t driver,
                                             struct zesim_host_time **record);

#endif
