/*
 * skewclock: an LTTng-UST clock plugin (LTTNG_UST_CLOCK_PLUGIN=/abs/path/libzeprof_skewclock.so)
 * whose trace clock is  CLOCK_MONOTONIC x (1 + ZEPROF_TEST_CLOCK_RATE_PPM / 1e6)
 *                       + ZEPROF_TEST_CLOCK_SKEW_NS.
 * Tests use it for a simulated host whose trace clock drifts from its wall clock: LTTng measures
 * the clock's offset from the wall clock once, when the session starts, so a constant shift is
 * compensated in babeltrace2's "ns from origin" but a rate is not, and no merger can then place the
 * host from wall-clock time. The session daemon (and so its consumer daemon, which stamps packets)
 * must load the plugin with the same settings, or packet and event times disagree.
 */
#include <lttng/ust-clock.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void lttng_ust_clock_plugin_init(void);

static int64_t skew_ns;
static double rate = 1.0;

static uint64_t skewed_read64(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    /* long double keeps the nanosecond exact for monotonic values of days. */
    long double ns = (long double)ts.tv_sec * 1000000000.0L + (long double)ts.tv_nsec;
    return (uint64_t)((int64_t)(ns * (long double)rate) + skew_ns);
}

static uint64_t skewed_freq(void)
{
    return 1000000000;
}

static int skewed_uuid(char *uuid)
{
    /* A fixed identity: every process of the simulated host shares one clock. */
    const char *id = "5ce3c10c-0000-4000-8000-000000000001";
    memcpy(uuid, id, strlen(id) + 1);
    return 0;
}

static const char *skewed_name(void)
{
    return "zeprof_skewed_monotonic";
}

static const char *skewed_description(void)
{
    return "CLOCK_MONOTONIC scaled and shifted (zeprof test clock)";
}

void lttng_ust_clock_plugin_init(void)
{
    const char *skew = getenv("ZEPROF_TEST_CLOCK_SKEW_NS");
    const char *ppm = getenv("ZEPROF_TEST_CLOCK_RATE_PPM");
    skew_ns = skew ? strtoll(skew, NULL, 10) : 0;
    rate = 1.0 + (ppm ? strtod(ppm, NULL) : 0.0) / 1e6;
    if (lttng_ust_trace_clock_set_read64_cb(skewed_read64) ||
        lttng_ust_trace_clock_set_freq_cb(skewed_freq) ||
        lttng_ust_trace_clock_set_uuid_cb(skewed_uuid) ||
        lttng_ust_trace_clock_set_name_cb(skewed_name) ||
        lttng_ust_trace_clock_set_description_cb(skewed_description))
        return;
    lttng_ust_enable_trace_clock_override();
}
