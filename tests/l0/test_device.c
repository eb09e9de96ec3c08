/*
 * test_device: the driver and its devices as an application discovers them.
 * Run with ZESIM_DEVICES=3: three GPUs with distinct names and UUIDs, the timer resolution in ns
 * for the old properties structure and in Hz for the 1.2 one, the valid timestamp bits, compute,
 * queue-group and memory properties, and a device clock with its own epoch and rate.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static uint64_t env_or(const char *name, uint64_t fallback)
{
    const char *text = getenv(name);
    return text && *text ? strtoull(text, NULL, 0) : fallback;
}

static void test_properties(struct l0 *l0)
{
    uint64_t hz = env_or("ZESIM_TIMER_HZ", 19200000);
    uint32_t expected_devices = (uint32_t)env_or("ZESIM_DEVICES", 1);
    CHECK(l0->device_count == expected_devices);
    uint32_t count = 0;
    CHECK_OK(zeDeviceGet(l0->driver, &count, NULL));
    CHECK(count == expected_devices);

    ze_device_properties_t props[16];
    for (uint32_t d = 0; d < l0->device_count; d++) {
        memset(&props[d], 0, sizeof(props[d]));
        props[d].stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        CHECK_OK(zeDeviceGetProperties(l0->devices[d], &props[d]));
        CHECK(props[d].type == ZE_DEVICE_TYPE_GPU);
        CHECK(props[d].vendorId == 0x8086);
        CHECK(props[d].timerResolution == 1000000000ull / hz); /* ns per tick */
        CHECK(props[d].timestampValidBits == 64);
        CHECK(props[d].kernelTimestampValidBits == env_or("ZESIM_KERNEL_TS_BITS", 32));
        CHECK(strlen(props[d].name) > 0);
        ze_device_properties_t props12 = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
        CHECK_OK(zeDeviceGetProperties(l0->devices[d], &props12));
        CHECK(props12.timerResolution == hz); /* cycles per second */
        for (uint32_t e = 0; e < d; e++) {
            CHECK(memcmp(props[d].uuid.id, props[e].uuid.id, ZE_MAX_DEVICE_UUID_SIZE) != 0);
            CHECK(strcmp(props[d].name, props[e].name) != 0);
        }
    }

    ze_device_compute_properties_t compute = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
    CHECK_OK(zeDeviceGetComputeProperties(l0->device, &compute));
    CHECK(compute.maxTotalGroupSize >= 256 && compute.numSubGroupSizes > 0);

    uint32_t groups = 0;
    CHECK_OK(zeDeviceGetCommandQueueGroupProperties(l0->device, &groups, NULL));
    CHECK(groups == 2);
    ze_command_queue_group_properties_t group_props[2] = {
        {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES, NULL, 0, 0, 0},
        {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES, NULL, 0, 0, 0}};
    CHECK_OK(zeDeviceGetCommandQueueGroupProperties(l0->device, &groups, group_props));
    CHECK(group_props[0].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);
    CHECK(group_props[0].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY);
    CHECK(group_props[1].flags == ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY);
    CHECK(group_props[0].numQueues >= 1 && group_props[1].numQueues >= 1);

    uint32_t memories = 0;
    CHECK_OK(zeDeviceGetMemoryProperties(l0->device, &memories, NULL));
    CHECK(memories == 1);
    ze_device_memory_properties_t memory = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES};
    CHECK_OK(zeDeviceGetMemoryProperties(l0->device, &memories, &memory));
    CHECK(memory.totalSize > 0);

    ze_driver_properties_t driver_props = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
    CHECK_OK(zeDriverGetProperties(l0->driver, &driver_props));
    ze_api_version_t version = 0;
    CHECK_OK(zeDriverGetApiVersion(l0->driver, &version));
    CHECK(ZE_MAJOR_VERSION(version) == 1);
    uint32_t subdevices = 5;
    CHECK_OK(zeDeviceGetSubDevices(l0->device, &subdevices, NULL));
    CHECK(subdevices == 0);
}

static void test_clock(struct l0 *l0)
{
    uint64_t hz = env_or("ZESIM_TIMER_HZ", 19200000);
    uint64_t epochs[16];
    for (uint32_t d = 0; d < l0->device_count; d++) {
        uint64_t raw_before = now_raw_ns();
        uint64_t host0 = 0, ticks0 = 0, host1 = 0, ticks1 = 0;
        CHECK_OK(zeDeviceGetGlobalTimestamps(l0->devices[d], &host0, &ticks0));
        uint64_t raw_after = now_raw_ns();
        /* The host timestamp is CLOCK_MONOTONIC_RAW, taken within the call. */
        CHECK(host0 >= raw_before && host0 <= raw_after);
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
        CHECK_OK(zeDeviceGetGlobalTimestamps(l0->devices[d], &host1, &ticks1));
        CHECK(ticks1 > ticks0 && host1 > host0);
        /* Rate: ticks over the same interval agree with the advertised frequency within 5 %
         * (each read takes microseconds, the interval is 100 ms). */
        double rate = (double)(ticks1 - ticks0) * 1e9 / (double)(host1 - host0);
        CHECK(rate > 0.95 * (double)hz && rate < 1.05 * (double)hz);
        /* Epoch: the device counter is not the host's boot clock in disguise. */
        epochs[d] = ticks0 - (uint64_t)((double)host0 * (double)hz / 1e9);
        for (uint32_t e = 0; e < d; e++)
            CHECK(epochs[d] != epochs[e]);
    }
}

int main(void)
{
    struct l0 l0;
    l0_open(&l0);
    /* zeInit again: the driver's init is idempotent and nothing changes. */
    CHECK_OK(zeInit(0));
    uint32_t count = 0;
    CHECK_OK(zeDeviceGet(l0.driver, &count, NULL));
    CHECK(count == l0.device_count);
    test_properties(&l0);
    test_clock(&l0);
    l0_close(&l0);
    return check_pass("test_device");
}
