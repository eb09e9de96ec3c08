/*
 * timing_anchor.c: device properties and clock anchors.
 *
 * device_properties is emitted once per device, at discovery (the first command list created on
 * it), before any anchor or timing of that device.
 *
 * An anchor ties the device clock to the trace clock. The trace clock is whatever LTTng stamps
 * events with (a clock plugin may replace CLOCK_MONOTONIC), so the engine never reads a host
 * clock for it: each sample brackets zeDeviceGetGlobalTimestamps between clock_sample_begin and
 * clock_sample_end, whose own timestamps are the trace clock by construction. The driver's host
 * timestamp is ignored (Intel's comes from another clock). Of the TIMING_ANCHOR_SAMPLES samples
 * the merger keeps the tightest. Anchors are emitted at discovery, then again at drains when the
 * last one is older than TIMING_ANCHOR_PERIOD_NS (so long runs can correct drift), and at exit.
 *
 * CLOCK_MONOTONIC_COARSE is read here only to rate-limit, never as a time stamp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing_internal.h"
#include "zeprof_api.h"
#include "zeprof_device.h"

#define TIMING_ANCHOR_SAMPLES 5u
#define TIMING_ANCHOR_PERIOD_NS UINT64_C(1000000000)

static _Atomic uint64_t anchor_sequence;
static _Atomic uint64_t next_refresh_ns;

static uint64_t coarse_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
}

/* The driver a device belongs to (Level Zero has no direct query). */
static ze_driver_handle_t driver_of(ze_device_handle_t device)
{
    uint32_t driver_count = 0;
    ze_driver_handle_t found = NULL;

    if (zeprof_real.zeDriverGet(&driver_count, NULL) != ZE_RESULT_SUCCESS || driver_count == 0)
        return NULL;
    ze_driver_handle_t *drivers = calloc(driver_count, sizeof *drivers);
    if (!drivers || zeprof_real.zeDriverGet(&driver_count, drivers) != ZE_RESULT_SUCCESS)
        goto end;
    for (uint32_t i = 0; i < driver_count && !found; i++) {
        uint32_t device_count = 0;
        if (zeprof_real.zeDeviceGet(drivers[i], &device_count, NULL) != ZE_RESULT_SUCCESS ||
            device_count == 0)
            continue;
        ze_device_handle_t *devices = calloc(device_count, sizeof *devices);
        if (devices &&
            zeprof_real.zeDeviceGet(drivers[i], &device_count, devices) == ZE_RESULT_SUCCESS) {
            for (uint32_t j = 0; j < device_count; j++) {
                if (devices[j] == device)
                    found = drivers[i];
            }
        }
        free(devices);
    }
end:
    free(drivers);
    return found;
}

static void emit_anchor(struct timing_device *device)
{
    uint64_t anchor = atomic_fetch_add(&anchor_sequence, 1) + 1;

    for (uint32_t sample = 0; sample < TIMING_ANCHOR_SAMPLES; sample++) {
        uint64_t host_ticks = 0; /* ignored: another host clock */
        uint64_t device_ticks = 0;
        lttng_ust_tracepoint(zeprof_device, clock_sample_begin, timing_handle_bits(device->handle),
                             anchor, sample);
        ze_result_t result =
            zeprof_real.zeDeviceGetGlobalTimestamps(device->handle, &host_ticks, &device_ticks);
        lttng_ust_tracepoint(zeprof_device, clock_sample_end, timing_handle_bits(device->handle),
                             anchor, sample, device_ticks, (uint32_t)result);
    }
    atomic_store(&device->last_anchor_ns, coarse_now_ns());
}

/* Which of the device's first 32 queue groups run kernels and which copy (bit o: group o), so
 * that the merger can name the engine each queue submits to; none when the driver does not say. */
static void queue_group_kinds(ze_device_handle_t handle, uint32_t *compute, uint32_t *copy)
{
    ze_command_queue_group_properties_t groups[32];
    uint32_t count = 0;
    if (!zeprof_real.zeDeviceGetCommandQueueGroupProperties ||
        zeprof_real.zeDeviceGetCommandQueueGroupProperties(handle, &count, NULL) !=
            ZE_RESULT_SUCCESS)
        return;
    if (count > 32)
        count = 32;
    for (uint32_t i = 0; i < count; i++)
        groups[i] = (ze_command_queue_group_properties_t){
            .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES};
    if (zeprof_real.zeDeviceGetCommandQueueGroupProperties(handle, &count, groups) !=
        ZE_RESULT_SUCCESS)
        return;
    for (uint32_t i = 0; i < count && i < 32; i++) {
        if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE)
            *compute |= 1u << i;
        if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY)
            *copy |= 1u << i;
    }
}

void timing_anchor_discover(struct timing_device *device)
{
    ze_device_properties_t props = {
        .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2, /* timerResolution in Hz */
        .pNext = NULL,
    };
    char uuid[2 * ZE_MAX_DEVICE_UUID_SIZE + 1];

    if (zeprof_real.zeDeviceGetProperties(device->handle, &props) != ZE_RESULT_SUCCESS)
        return;
    device->timer_hz = props.timerResolution;
    device->kernel_timestamp_valid_bits = props.kernelTimestampValidBits;
    for (size_t i = 0; i < ZE_MAX_DEVICE_UUID_SIZE; i++)
        snprintf(uuid + 2 * i, 3, "%02x", props.uuid.id[i]);
    props.name[ZE_MAX_DEVICE_NAME - 1] = '\0';
    uint32_t compute_groups = 0, copy_groups = 0;
    queue_group_kinds(device->handle, &compute_groups, &copy_groups);
    lttng_ust_tracepoint(zeprof_device, device_properties, timing_handle_bits(device->handle),
                         timing_handle_bits(driver_of(device->handle)), props.name, uuid,
                         (uint32_t)props.type, props.timerResolution, props.timestampValidBits,
                         props.kernelTimestampValidBits, compute_groups, copy_groups);
    emit_anchor(device);
}

static void refresh_one(struct timing_device *device, void *user)
{
    const bool *force = user;
    uint64_t now = coarse_now_ns();
    uint64_t last = atomic_load(&device->last_anchor_ns);

    if (!*force && now - last < TIMING_ANCHOR_PERIOD_NS)
        return;
    /* One thread per period emits: the others see the exchanged value and skip. */
    if (!atomic_compare_exchange_strong(&device->last_anchor_ns, &last, now))
        return;
    emit_anchor(device);
}

static bool refresh_due(bool force)
{
    uint64_t now = coarse_now_ns();

    if (!force && now < atomic_load(&next_refresh_ns))
        return false;
    atomic_store(&next_refresh_ns, now + TIMING_ANCHOR_PERIOD_NS);
    return true;
}

void timing_anchor_refresh(bool force)
{
    if (!refresh_due(force))
        return;
    pthread_rwlock_rdlock(&timing_registry_lock);
    timing_registry_for_each_device(refresh_one, &force);
    pthread_rwlock_unlock(&timing_registry_lock);
}

void timing_anchor_refresh_locked(bool force)
{
    if (refresh_due(force))
        timing_registry_for_each_device(refresh_one, &force);
}
