/*
 * sim_device.c: device enumeration and properties, and the device clock's public face
 * (zeDeviceGetGlobalTimestamps).
 *
 * Devices are static (sim_driver.devices); this module only reads them. Counted queries follow
 * the spec: *count == 0 or a NULL array asks for the count; otherwise at most *count entries are
 * written and *count becomes the number written.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

#define SIM_DEVICE_MEMORY (16ull << 30)

static ze_result_t check_device(ze_device_handle_t handle, const void *out)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_DEVICE);
    if (status == ZE_RESULT_SUCCESS && !out)
        status = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return status;
}

ze_result_t sim_device_get(ze_driver_handle_t driver, uint32_t *count, ze_device_handle_t *devices)
{
    ze_result_t status = sim_handle_check(driver, SIM_KIND_DRIVER);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!count)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint32_t total = sim_driver.device_count;
    if (*count == 0 || !devices) {
        *count = total;
        return ZE_RESULT_SUCCESS;
    }
    uint32_t n = *count < total ? *count : total;
    for (uint32_t i = 0; i < n; i++)
        devices[i] = (ze_device_handle_t)&sim_driver.devices[i];
    *count = n;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_sub_devices(ze_device_handle_t handle, uint32_t *count,
                                       ze_device_handle_t *sub_devices)
{
    (void)sub_devices;
    ze_result_t status = check_device(handle, count);
    if (status == ZE_RESULT_SUCCESS)
        *count = 0; /* one tile per device */
    return status;
}

ze_result_t sim_device_get_properties(ze_device_handle_t handle, ze_device_properties_t *props)
{
    ze_result_t status = check_device(handle, props);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    /* A device that hangs once in use (ZESIM_HANG_DEVICE_PROPERTIES=1): the call never returns
     * after a context was created, so that a test can leave a thread inside the driver for good
     * while the program exits. Newer loaders ask for properties at initialisation: not then. */
    while (sim_config.hang_props && atomic_load(&sim_driver.context_created))
        pause();
    const struct sim_device *device = (const struct sim_device *)handle;
    props->type = ZE_DEVICE_TYPE_GPU;
    props->vendorId = 0x8086;
    props->deviceId = 0x0bd5;
    props->flags = 0;
    props->subdeviceId = 0;
    props->coreClockRate = 1600;
    props->maxMemAllocSize = SIM_DEVICE_MEMORY / 2;
    props->maxHardwareContexts = 65536;
    props->maxCommandQueuePriority = 0;
    props->numThreadsPerEU = 8;
    props->physicalEUSimdWidth = 16;
    props->numEUsPerSubslice = 8;
    props->numSubslicesPerSlice = 56;
    props->numSlices = 1;
    /* The unit depends on the structure's version: 1.2 changed it from ns per tick to Hz. */
    if (props->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2)
        props->timerResolution = sim_config.timer_hz;
    else
        props->timerResolution = 1000000000ull / sim_config.timer_hz;
    props->timestampValidBits = 64;
    props->kernelTimestampValidBits = sim_config.kernel_ts_bits;
    memcpy(props->uuid.id, device->uuid, sizeof(props->uuid.id));
    snprintf(props->name, sizeof(props->name), "%s", device->name);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_compute_properties(ze_device_handle_t handle,
                                              ze_device_compute_properties_t *props)
{
    ze_result_t status = check_device(handle, props);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    props->maxTotalGroupSize = 1024;
    props->maxGroupSizeX = 1024;
    props->maxGroupSizeY = 1024;
    props->maxGroupSizeZ = 1024;
    props->maxGroupCountX = UINT32_MAX;
    props->maxGroupCountY = UINT32_MAX;
    props->maxGroupCountZ = UINT32_MAX;
    props->maxSharedLocalMemory = 128 * 1024;
    props->numSubGroupSizes = 2;
    memset(props->subGroupSizes, 0, sizeof(props->subGroupSizes));
    props->subGroupSizes[0] = 16;
    props->subGroupSizes[1] = 32;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_module_properties(ze_device_handle_t handle,
                                             ze_device_module_properties_t *props)
{
    ze_result_t status = check_device(handle, props);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    props->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
    props->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64 |
                   ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
    props->fp16flags = props->fp32flags = props->fp64flags =
        ZE_DEVICE_FP_FLAG_DENORM | ZE_DEVICE_FP_FLAG_INF_NAN | ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST |
        ZE_DEVICE_FP_FLAG_FMA;
    props->maxArgumentsSize = 2048;
    props->printfBufferSize = 4 * 1024 * 1024;
    memset(props->nativeKernelSupported.id, 0, sizeof(props->nativeKernelSupported.id));
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_queue_group_properties(ze_device_handle_t handle, uint32_t *count,
                                                  ze_command_queue_group_properties_t *props)
{
    ze_result_t status = check_device(handle, count);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (*count == 0 || !props) {
        *count = SIM_GROUP_COUNT;
        return ZE_RESULT_SUCCESS;
    }
    uint32_t n = *count < SIM_GROUP_COUNT ? *count : SIM_GROUP_COUNT;
    for (uint32_t i = 0; i < n; i++) {
        if (i == 0) {
            props[i].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                             ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
                             ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS |
                             ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_METRICS;
            props[i].numQueues = SIM_COMPUTE_QUEUES;
        } else {
            props[i].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
            props[i].numQueues = SIM_COPY_QUEUES;
        }
        props[i].maxMemoryFillPatternSize = SIM_MAX_FILL_PATTERN;
    }
    *count = n;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_memory_properties(ze_device_handle_t handle, uint32_t *count,
                                             ze_device_memory_properties_t *props)
{
    ze_result_t status = check_device(handle, count);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (*count == 0 || !props) {
        *count = 1;
        return ZE_RESULT_SUCCESS;
    }
    props[0].flags = 0;
    props[0].maxClockRate = 3200;
    props[0].maxBusWidth = 4096;
    props[0].totalSize = SIM_DEVICE_MEMORY;
    snprintf(props[0].name, sizeof(props[0].name), "HBM");
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_memory_access_properties(ze_device_handle_t handle,
                                                    ze_device_memory_access_properties_t *props)
{
    ze_result_t status = check_device(handle, props);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    ze_memory_access_cap_flags_t all =
        ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
        ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
    props->hostAllocCapabilities = all;
    props->deviceAllocCapabilities = all;
    props->sharedSingleDeviceAllocCapabilities = all;
    props->sharedCrossDeviceAllocCapabilities = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
    props->sharedSystemAllocCapabilities = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_cache_properties(ze_device_handle_t handle, uint32_t *count,
                                            ze_device_cache_properties_t *props)
{
    ze_result_t status = check_device(handle, count);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (*count == 0 || !props) {
        *count = 1;
        return ZE_RESULT_SUCCESS;
    }
    props[0].flags = ZE_DEVICE_CACHE_PROPERTY_FLAG_USER_CONTROL;
    props[0].cacheSize = 128ull << 20;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_image_properties(ze_device_handle_t handle,
                                            ze_device_image_properties_t *props)
{
    ze_result_t status = check_device(handle, props);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    /* No image support: every limit is zero, as the spec says for such devices. */
    props->maxImageDims1D = props->maxImageDims2D = props->maxImageDims3D = 0;
    props->maxImageBufferSize = 0;
    props->maxImageArraySlices = props->maxSamplers = 0;
    props->maxReadImageArgs = props->maxWriteImageArgs = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_external_memory_properties(ze_device_handle_t handle,
                                                      ze_device_external_memory_properties_t *props)
{
    ze_result_t status = check_device(handle, props);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    props->memoryAllocationImportTypes = props->memoryAllocationExportTypes = 0;
    props->imageImportTypes = props->imageExportTypes = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_device_get_p2p_properties(ze_device_handle_t handle, ze_device_handle_t peer,
                                          ze_device_p2p_properties_t *props)
{
    ze_result_t status = check_device(handle, props);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(peer, SIM_KIND_DEVICE);
    if (status == ZE_RESULT_SUCCESS)
        props->flags = ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS;
    return status;
}

ze_result_t sim_device_can_access_peer(ze_device_handle_t handle, ze_device_handle_t peer,
                                       ze_bool_t *value)
{
    ze_result_t status = check_device(handle, value);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(peer, SIM_KIND_DEVICE);
    if (status == ZE_RESULT_SUCCESS)
        *value = 1;
    return status;
}

ze_result_t sim_device_get_status(ze_device_handle_t handle)
{
    return sim_handle_check(handle, SIM_KIND_DEVICE);
}

ze_result_t sim_device_get_global_timestamps(ze_device_handle_t handle, uint64_t *host_timestamp,
                                             uint64_t *device_timestamp)
{
    ze_result_t status = check_device(handle, host_timestamp);
    if (status == ZE_RESULT_SUCCESS && !device_timestamp)
        status = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (status != ZE_RESULT_SUCCESS)
        return status;
    const struct sim_device *device = (const struct sim_device *)handle;
    /* Like Intel's driver: an ioctl of a few microseconds that reads the GPU timer, and a host
     * timestamp from CLOCK_MONOTONIC_RAW (not the clock tracers stamp events with). */
    sim_clock_busy_wait_ns(1500);
    *device_timestamp = sim_clock_ticks_at(device, sim_clock_host_ns());
    *host_timestamp = sim_clock_host_raw_ns();
    sim_clock_busy_wait_ns(1500);
    return ZE_RESULT_SUCCESS;
}
