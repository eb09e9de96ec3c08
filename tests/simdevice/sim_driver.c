/*
 * sim_driver.c: configuration, driver initialisation, the driver and context entry points.
 *
 * Initialisation runs once whatever the number of zeInit calls (the 1.8 loader calls the driver's
 * init twice). The driver and its devices are static objects; contexts are allocated here and
 * only carry their driver. Owns the global lock and condition variable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"
#include "zesim_host_time.h"

pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t sim_cond;
pthread_cond_t sim_progress_cond;
struct sim_config sim_config;
struct sim_driver sim_driver;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static uint64_t env_u64(const char *name, uint64_t fallback, uint64_t min, uint64_t max)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return fallback;
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 0);
    if (*end != '\0' || value < min || value > max) {
        fprintf(stderr, "zesim: Failed to parse %s: value=%s, using %llu\n", name, text,
                (unsigned long long)fallback);
        return fallback;
    }
    return value;
}

/* A mixing function so that epochs and UUIDs look unrelated across devices and runs. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static void init_driver(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&sim_cond, &attr);
    pthread_cond_init(&sim_progress_cond, &attr);
    pthread_condattr_destroy(&attr);

    sim_config.devices = (uint32_t)env_u64("ZESIM_DEVICES", 1, 1, SIM_MAX_DEVICES);
    sim_config.timer_hz = env_u64("ZESIM_TIMER_HZ", 19200000, 1000, 1000000000ull);
    sim_config.kernel_ts_bits = (uint32_t)env_u64("ZESIM_KERNEL_TS_BITS", 32, 8, 64);
    sim_config.ns_per_group = env_u64("ZESIM_NS_PER_GROUP", 1000, 0, 1000000000ull);
    sim_config.qkt_cost_ns = env_u64("ZESIM_QKT_COST_NS", 0, 0, 1000000000ull);
    sim_config.append_ns = env_u64("ZESIM_APPEND_NS", 0, 0, 1000000000ull);
    sim_config.hang_props = (uint32_t)env_u64("ZESIM_HANG_DEVICE_PROPERTIES", 0, 0, 1);

    sim_clock_init();
    sim_truth_open();
    sim_sysman_init();

    uint64_t seed = mix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ sim_clock_host_ns());
    for (int i = 0; i < ZE_MAX_DRIVER_UUID_SIZE; i++)
        sim_driver.uuid[i] = (uint8_t)(mix64(seed + 1000 + (uint64_t)i) >> 24);
    sim_driver.device_count = sim_config.devices;
    for (uint32_t d = 0; d < sim_config.devices; d++) {
        struct sim_device *device = &sim_driver.devices[d];
        device->index = d;
        snprintf(device->name, sizeof(device->name), "Intel(R) zesim Simulated GPU %u", d);
        /* Fixed vendor-like prefix, then bytes that differ per device and run. */
        uint64_t a = mix64(seed + 2 * d + 1), b = mix64(seed + 2 * d + 2);
        memcpy(device->uuid, &a, 8);
        memcpy(device->uuid + 8, &b, 8);
        device->uuid[0] = 0x86;
        device->uuid[1] = 0x80;
        device->uuid[15] = (uint8_t)d;
        /* An epoch of up to ~2^40 ticks (hours at 19.2 MHz): unrelated to the host's boot. */
        device->epoch_ticks = (mix64(seed ^ (0xD1CEull + d)) >> 24) + 1000000;
        device->context_epoch = device->epoch_ticks / 3;
        sim_handle_add(device, SIM_KIND_DEVICE);
    }
    sim_handle_add(&sim_driver, SIM_KIND_DRIVER);
}

/* Process exit: close the truth file, free the registries when no worker may still use them. */
__attribute__((destructor)) static void fini_driver(void)
{
    sim_truth_close();
    if (sim_engine_live_workers() == 0) {
        sim_memory_release_all();
        sim_handle_release_all();
    }
}

ze_result_t sim_init(ze_init_flags_t flags)
{
    if (flags & ~(ze_init_flags_t)(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (flags == ZE_INIT_FLAG_VPU_ONLY)
        return ZE_RESULT_ERROR_UNINITIALIZED; /* this driver has GPUs only */
    pthread_once(&init_once, init_driver);
    return ZE_RESULT_SUCCESS;
}

#if SIM_HEADERS_AT_LEAST(1, 10)
/* zeInitDrivers (spec 1.10): initialization and discovery in one call, for GPU drivers only. */
ze_result_t sim_init_drivers(uint32_t *count, ze_driver_handle_t *drivers,
                             ze_init_driver_type_desc_t *desc)
{
    if (!count || !desc)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->flags == 0 || (desc->flags & ~(ze_init_driver_type_flags_t)0x3))
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (!(desc->flags & ZE_INIT_DRIVER_TYPE_FLAG_GPU))
        return ZE_RESULT_ERROR_UNINITIALIZED; /* this driver has GPUs only */
    return sim_driver_get(count, drivers);
}
#endif

ze_result_t sim_driver_get(uint32_t *count, ze_driver_handle_t *drivers)
{
    if (!count)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_once(&init_once, init_driver);
    if (*count == 0 || !drivers) {
        *count = 1;
        return ZE_RESULT_SUCCESS;
    }
    drivers[0] = (ze_driver_handle_t)&sim_driver;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_driver_get_api_version(ze_driver_handle_t driver, ze_api_version_t *version)
{
    ze_result_t status = sim_handle_check(driver, SIM_KIND_DRIVER);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!version)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *version = ZE_API_VERSION_CURRENT;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_driver_get_properties(ze_driver_handle_t driver, ze_driver_properties_t *props)
{
    ze_result_t status = sim_handle_check(driver, SIM_KIND_DRIVER);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!props)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    memcpy(props->uuid.id, sim_driver.uuid, sizeof(props->uuid.id));
    props->driverVersion = 0x01000000u | 1u; /* "1.0.1" in Intel's major.minor.build packing */
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_driver_get_ipc_properties(ze_driver_handle_t driver,
                                          ze_driver_ipc_properties_t *props)
{
    ze_result_t status = sim_handle_check(driver, SIM_KIND_DRIVER);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!props)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    props->flags = 0; /* no IPC */
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_driver_get_extension_properties(ze_driver_handle_t driver, uint32_t *count,
                                                ze_driver_extension_properties_t *props)
{
    (void)props;
    ze_result_t status = sim_handle_check(driver, SIM_KIND_DRIVER);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!count)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t sim_ext_device_count(ze_driver_handle_t driver, uint32_t *count);

ze_result_t sim_driver_get_extension_function_address(ze_driver_handle_t driver, const char *name,
                                                      void **function)
{
    ze_result_t status = sim_handle_check(driver, SIM_KIND_DRIVER);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!name || !function)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    /* Extension functions, as runtimes reach them: one the Level Zero headers declare
     * (zeCommandListHostSynchronize, which runtimes used to look up by name), and the driver's
     * own that no header declares, as Intel's zex* functions (the host-time record:
     * sim_host_time.c). */
    if (strcmp(name, "zeCommandListHostSynchronize") == 0) {
        ze_result_t (*host_synchronize)(ze_command_list_handle_t, uint64_t) =
            sim_list_host_synchronize;
        memcpy(function, &host_synchronize, sizeof(*function));
        return ZE_RESULT_SUCCESS;
    }
    if (strcmp(name, SIM_EXT_DEVICE_COUNT) == 0) {
        ze_result_t (*device_count)(ze_driver_handle_t, uint32_t *) = sim_ext_device_count;
        memcpy(function, &device_count, sizeof(*function));
        return ZE_RESULT_SUCCESS;
    }
    if (strcmp(name, ZESIM_EXT_HOST_TIME) == 0) {
        ze_result_t (*host_time)(ze_driver_handle_t, struct zesim_host_time **) = sim_ext_host_time;
        memcpy(function, &host_time, sizeof(*function));
        return ZE_RESULT_SUCCESS;
    }
    *function = NULL;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/* The driver's own extension function: how many devices it has. */
static ze_result_t sim_ext_device_count(ze_driver_handle_t driver, uint32_t *count)
{
    ze_result_t status = sim_handle_check(driver, SIM_KIND_DRIVER);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!count)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = sim_driver.device_count;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_context_create_ex(ze_driver_handle_t driver, const ze_context_desc_t *desc,
                                  uint32_t device_count, ze_device_handle_t *devices,
                                  ze_context_handle_t *out)
{
    ze_result_t status = sim_handle_check(driver, SIM_KIND_DRIVER);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out || (device_count > 0 && !devices))
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (uint32_t i = 0; i < device_count; i++) {
        status = sim_handle_check(devices[i], SIM_KIND_DEVICE);
        if (status != ZE_RESULT_SUCCESS)
            return status;
    }
    struct sim_context *context = calloc(1, sizeof(*context));
    if (!context)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    context->driver = &sim_driver;
    sim_handle_add(context, SIM_KIND_CONTEXT);
    atomic_store(&sim_driver.context_created, true);
    *out = (ze_context_handle_t)context;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_context_create(ze_driver_handle_t driver, const ze_context_desc_t *desc,
                               ze_context_handle_t *out)
{
    return sim_context_create_ex(driver, desc, 0, NULL, out);
}

ze_result_t sim_context_destroy(ze_context_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_CONTEXT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    sim_handle_remove(handle);
    free(handle);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_context_get_status(ze_context_handle_t handle)
{
    return sim_handle_check(handle, SIM_KIND_CONTEXT);
}

ze_result_t sim_context_system_barrier(ze_context_handle_t handle, ze_device_handle_t device)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_CONTEXT);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(device, SIM_KIND_DEVICE);
    return status;
}

ze_result_t sim_context_make_memory_resident(ze_context_handle_t handle, ze_device_handle_t device,
                                             void *ptr, size_t size)
{
    (void)size;
    ze_result_t status = sim_handle_check(handle, SIM_KIND_CONTEXT);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(device, SIM_KIND_DEVICE);
    if (status == ZE_RESULT_SUCCESS && !ptr)
        status = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return status;
}
