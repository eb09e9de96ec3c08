/*
 * sim_clock.c: host clocks and the simulated device clocks.
 *
 * A device counts ticks at sim_config.timer_hz from its own epoch, which has nothing to do with the
 * host's boot: ticks = epoch_ticks + (CLOCK_MONOTONIC - base) × rate. Because the ticks are a pure
 * function of CLOCK_MONOTONIC, the ground truth (sim_truth.c) can give both for one instant and
 * tests can check a tracer's conversion exactly. Owns nothing.
 */
#include <errno.h>
#include <time.h>

#include "sim.h"

static uint64_t host_base_ns; /* CLOCK_MONOTONIC at driver init */

static uint64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sim_clock_init(void)
{
    host_base_ns = read_clock(CLOCK_MONOTONIC);
}

uint64_t sim_clock_host_ns(void)
{
    return read_clock(CLOCK_MONOTONIC);
}

uint64_t sim_clock_host_raw_ns(void)
{
    return read_clock(CLOCK_MONOTONIC_RAW);
}

uint64_t sim_clock_ticks_at(const struct sim_device *device, uint64_t host_ns)
{
    uint64_t elapsed = host_ns > host_base_ns ? host_ns - host_base_ns : 0;
    uint64_t hz = sim_config.timer_hz;
    /* Split to avoid overflow: whole seconds, then the remainder (< 1e9 ns × hz < 2^64 for
     * rates below 18 GHz). */
    uint64_t ticks =
        (elapsed / 1000000000ull) * hz + (elapsed % 1000000000ull) * hz / 1000000000ull;
    return device->epoch_ticks + ticks;
}

uint64_t sim_clock_kernel_mask(void)
{
    uint32_t bits = sim_config.kernel_ts_bits;
    return bits >= 64 ? UINT64_MAX : ((1ull << bits) - 1);
}

void sim_clock_busy_wait_ns(uint64_t ns)
{
    if (ns == 0)
        return;
    uint64_t end = sim_clock_host_ns() + ns;
    while (sim_clock_host_ns() < end) {
    }
}

void sim_clock_sleep_until(uint64_t host_ns)
{
    /* Sleep most of the way, spin the last stretch: timer slack would otherwise make short
     * kernels much longer than asked. */
    for (;;) {
        uint64_t now = sim_clock_host_ns();
        if (now >= host_ns)
            return;
        if (host_ns - now < 100000) {
            sim_clock_busy_wait_ns(host_ns - now);
            return;
        }
        uint64_t target = host_ns - 50000;
        struct timespec ts = {(time_t)(target / 1000000000ull), (long)(target % 1000000000ull)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
}

uint64_t sim_clock_deadline(uint64_t timeout_ns)
{
    if (timeout_ns == UINT64_MAX)
        return UINT64_MAX;
    uint64_t now = sim_clock_host_ns();
    return UINT64_MAX - now <= timeout_ns ? UINT64_MAX : now + timeout_ns;
}

bool sim_clock_cond_wait(pthread_cond_t *cond, uint64_t deadline)
{
    if (deadline == UINT64_MAX) {
        pthread_cond_wait(cond, &sim_lock);
        return true;
    }
    if (sim_clock_host_ns() >= deadline)
        return false;
    struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    int rc = pthread_cond_timedwait(cond, &sim_lock, &ts);
    return rc != ETIMEDOUT || sim_clock_host_ns() < deadline;
}
