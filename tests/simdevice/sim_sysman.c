/*
 * sim_sysman.c: the Sysman (zes) calls a telemetry sampler needs, reached through the core device
 * handles as Intel's driver does when ZES_ENABLE_SYSMAN=1 was set before zeInit.
 *
 * Per device: two engine groups, ZES_ENGINE_GROUP_ALL (any queue busy) and
 * ZES_ENGINE_GROUP_COPY_ALL (a copy-only queue busy); one GPU frequency domain; one power domain;
 * one memory module. Engine activity is the device's real busy time: the workers report when work
 * (kernels, copies, fills) starts and ends (sim_sysman_busy_begin/end, with the very timestamps
 * the truth log gets), and activeTime is the union of those intervals up to now, in-progress work
 * included. So a sampler's utilization can be checked against the truth file. The rest is simple
 * but consistent with it: the actual frequency is SIM_FREQ_BUSY_MHZ while the device is busy,
 * SIM_FREQ_IDLE_MHZ otherwise; energy grows at SIM_POWER_IDLE_W all the time plus
 * SIM_POWER_BUSY_W - SIM_POWER_IDLE_W while busy, from the driver's initialization; memory in use
 * is the sum of the device's device and shared allocations.
 *
 * Components are static objects (one array per kind, indexed by device); a handle is checked by
 * its address. Without ZES_ENABLE_SYSMAN=1 at initialization every call answers
 * ZE_RESULT_ERROR_UNINITIALIZED; with ZESIM_SYSMAN=0 the tables stay empty (sim_tables.c), so the
 * loader answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, as for a driver without Sysman. With
 * ZESIM_HANG_SYSMAN=1 zesEngineGetActivity never returns.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

#define SIM_FREQ_IDLE_MHZ 300.0
#define SIM_FREQ_BUSY_MHZ 1600.0
#define SIM_POWER_IDLE_W 20u
#define SIM_POWER_BUSY_W 120u
#define SIM_MEMORY_BYTES (16ull << 30)

enum { SIM_ENGINE_ALL, SIM_ENGINE_COPY, SIM_ENGINE_GROUPS };

/* Busy time of one engine group: the union of its work intervals. */
struct busy {
    uint32_t running;  /* commands running now */
    uint64_t since_ns; /* when running went from 0 to 1 */
    uint64_t total_ns; /* closed busy intervals */
};

struct sim_engine_group {
    struct sim_device *device;
    zes_engine_group_t type;
};

struct sim_component {
    struct sim_device *device;
};

static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static struct busy busy[SIM_MAX_DEVICES][SIM_ENGINE_GROUPS]; /* under busy_lock */
static uint64_t base_ns; /* the driver's initialization: energy counts from here */
static bool enabled;     /* ZES_ENABLE_SYSMAN=1 at initialization */

static struct sim_engine_group engines[SIM_MAX_DEVICES][SIM_ENGINE_GROUPS];
static struct sim_component frequencies[SIM_MAX_DEVICES];
static struct sim_component powers[SIM_MAX_DEVICES];
static struct sim_component memories[SIM_MAX_DEVICES];

void sim_sysman_init(void)
{
    const char *value = getenv("ZES_ENABLE_SYSMAN");
    enabled = value && strcmp(value, "1") == 0;
    base_ns = sim_clock_host_ns();
    for (uint32_t d = 0; d < SIM_MAX_DEVICES; d++) {
        struct sim_device *device = &sim_driver.devices[d];
        engines[d][SIM_ENGINE_ALL] = (struct sim_engine_group){device, ZES_ENGINE_GROUP_ALL};
        engines[d][SIM_ENGINE_COPY] = (struct sim_engine_group){device, ZES_ENGINE_GROUP_COPY_ALL};
        frequencies[d].device = powers[d].device = memories[d].device = device;
    }
}

bool sim_sysman_tables_wanted(void)
{
    const char *value = getenv("ZESIM_SYSMAN");
    return !value || strcmp(value, "0") != 0;
}

static void begin(struct busy *b, uint64_t now_ns)
{
    if (b->running++ == 0)
        b->since_ns = now_ns;
}

static void end(struct busy *b, uint64_t now_ns)
{
    if (b->running == 0)
        return;
    if (--b->running == 0 && now_ns > b->since_ns)
        b->total_ns += now_ns - b->since_ns;
}

void sim_sysman_busy_begin(const struct sim_queue *queue, uint64_t now_ns)
{
    pthread_mutex_lock(&busy_lock);
    begin(&busy[queue->device->index][SIM_ENGINE_ALL], now_ns);
    if (queue->ordinal == 1)
        begin(&busy[queue->device->index][SIM_ENGINE_COPY], now_ns);
    pthread_mutex_unlock(&busy_lock);
}

void sim_sysman_busy_end(const struct sim_queue *queue, uint64_t now_ns)
{
    pthread_mutex_lock(&busy_lock);
    end(&busy[queue->device->index][SIM_ENGINE_ALL], now_ns);
    if (queue->ordinal == 1)
        end(&busy[queue->device->index][SIM_ENGINE_COPY], now_ns);
    pthread_mutex_unlock(&busy_lock);
}

/* Busy nanoseconds of one group up to now_ns (in-progress work included), and whether busy. */
static uint64_t busy_ns(uint32_t device, int group, uint64_t now_ns, bool *running)
{
    pthread_mutex_lock(&busy_lock);
    const struct busy *b = &busy[device][group];
    uint64_t total = b->total_ns;
    if (b->running && now_ns > b->since_ns)
        total += now_ns - b->since_ns;
    if (running)
        *running = b->running != 0;
    pthread_mutex_unlock(&busy_lock);
    return total;
}

/* The device of a core handle given to a zes call, or NULL. */
static struct sim_device *device_of(zes_device_handle_t handle, ze_result_t *status)
{
    *status = sim_handle_check(handle, SIM_KIND_DEVICE);
    if (*status == ZE_RESULT_SUCCESS && !enabled)
        *status = ZE_RESULT_ERROR_UNINITIALIZED;
    return *status == ZE_RESULT_SUCCESS ? (struct sim_device *)handle : NULL;
}

/* Whether `handle` is one of the `count` objects of `size` bytes at `array` of a live device. */
static bool is_component(const void *handle, const void *array, size_t size, size_t count)
{
    const char *first = array, *p = handle;
    if (!p || p < first || p >= first + size * count || (size_t)(p - first) % size != 0)
        return false;
    return (size_t)(p - first) / size / (count / SIM_MAX_DEVICES) < sim_driver.device_count;
}

static ze_result_t check_component(const void *handle, const void *array, size_t size, size_t count)
{
    if (!handle)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!is_component(handle, array, size, count))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return enabled ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNINITIALIZED;
}

#define CHECK_COMPONENT(handle, array)                                                             \
    check_component((handle), (array), sizeof(*(array)), sizeof(array) / sizeof(*(array)))

/* The enumeration protocol: *count 0 asks how many; otherwise up to *count handles. */
static ze_result_t enumerate(uint32_t *count, void **out, void *const *components, uint32_t n)
{
    if (!count)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*count == 0 || !out) {
        *count = n;
        return ZE_RESULT_SUCCESS;
    }
    if (*count > n)
        *count = n;
    for (uint32_t i = 0; i < *count; i++)
        out[i] = components[i];
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_sysman_enum_engine_groups(zes_device_handle_t handle, uint32_t *count,
                                          zes_engine_handle_t *out)
{
    ze_result_t status;
    struct sim_device *device = device_of(handle, &status);
    if (!device)
        return status;
    void *components[SIM_ENGINE_GROUPS];
    for (int g = 0; g < SIM_ENGINE_GROUPS; g++)
        components[g] = &engines[device->index][g];
    return enumerate(count, (void **)out, components, SIM_ENGINE_GROUPS);
}

ze_result_t sim_sysman_engine_get_properties(zes_engine_handle_t handle,
                                             zes_engine_properties_t *props)
{
    ze_result_t status = check_component(handle, engines, sizeof(engines[0][0]),
                                         SIM_MAX_DEVICES * SIM_ENGINE_GROUPS);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!props)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const struct sim_engine_group *engine = (const struct sim_engine_group *)handle;
    props->type = engine->type;
    props->onSubdevice = 0;
    props->subdeviceId = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_sysman_engine_get_activity(zes_engine_handle_t handle, zes_engine_stats_t *stats)
{
    ze_result_t status = check_component(handle, engines, sizeof(engines[0][0]),
                                         SIM_MAX_DEVICES * SIM_ENGINE_GROUPS);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!stats)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    /* ZESIM_HANG_SYSMAN=1: a driver whose activity query never returns (a tool's sampler must
     * not hang the program with it). */
    const char *hang = getenv("ZESIM_HANG_SYSMAN");
    while (hang && strcmp(hang, "1") == 0)
        sleep(1000);
    const struct sim_engine_group *engine = (const struct sim_engine_group *)handle;
    uint64_t now = sim_clock_host_ns();
    int group = engine->type == ZES_ENGINE_GROUP_ALL ? SIM_ENGINE_ALL : SIM_ENGINE_COPY;
    stats->activeTime = busy_ns(engine->device->index, group, now, NULL) / 1000;
    stats->timestamp = now / 1000;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_sysman_enum_frequency_domains(zes_device_handle_t handle, uint32_t *count,
                                              zes_freq_handle_t *out)
{
    ze_result_t status;
    struct sim_device *device = device_of(handle, &status);
    if (!device)
        return status;
    void *component = &frequencies[device->index];
    return enumerate(count, (void **)out, &component, 1);
}

ze_result_t sim_sysman_frequency_get_properties(zes_freq_handle_t handle,
                                                zes_freq_properties_t *props)
{
    ze_result_t status = CHECK_COMPONENT(handle, frequencies);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!props)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    props->type = ZES_FREQ_DOMAIN_GPU;
    props->onSubdevice = 0;
    props->subdeviceId = 0;
    props->canControl = 0;
    props->isThrottleEventSupported = 0;
    props->min = SIM_FREQ_IDLE_MHZ;
    props->max = SIM_FREQ_BUSY_MHZ;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_sysman_frequency_get_state(zes_freq_handle_t handle, zes_freq_state_t *state)
{
    ze_result_t status = CHECK_COMPONENT(handle, frequencies);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!state)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const struct sim_component *domain = (const struct sim_component *)handle;
    bool running = false;
    busy_ns(domain->device->index, SIM_ENGINE_ALL, sim_clock_host_ns(), &running);
    double mhz = running ? SIM_FREQ_BUSY_MHZ : SIM_FREQ_IDLE_MHZ;
    state->currentVoltage = -1.0;
    state->request = mhz;
    state->tdp = SIM_FREQ_BUSY_MHZ;
    state->efficient = SIM_FREQ_IDLE_MHZ;
    state->actual = mhz;
    state->throttleReasons = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_sysman_enum_power_domains(zes_device_handle_t handle, uint32_t *count,
                                          zes_pwr_handle_t *out)
{
    ze_result_t status;
    struct sim_device *device = device_of(handle, &status);
    if (!device)
        return status;
    void *component = &powers[device->index];
    return enumerate(count, (void **)out, &component, 1);
}

ze_result_t sim_sysman_power_get_energy_counter(zes_pwr_handle_t handle,
                                                zes_power_energy_counter_t *energy)
{
    ze_result_t status = CHECK_COMPONENT(handle, powers);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!energy)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const struct sim_component *domain = (const struct sim_component *)handle;
    uint64_t now = sim_clock_host_ns();
    uint64_t busy = busy_ns(domain->device->index, SIM_ENGINE_ALL, now, NULL);
    /* W × ns = nJ; the counter is in µJ. */
    energy->energy =
        (SIM_POWER_IDLE_W * (now - base_ns) + (SIM_POWER_BUSY_W - SIM_POWER_IDLE_W) * busy) / 1000;
    energy->timestamp = now / 1000;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_sysman_enum_memory_modules(zes_device_handle_t handle, uint32_t *count,
                                           zes_mem_handle_t *out)
{
    ze_result_t status;
    struct sim_device *device = device_of(handle, &status);
    if (!device)
        return status;
    void *component = &memories[device->index];
    return enumerate(count, (void **)out, &component, 1);
}

ze_result_t sim_sysman_memory_get_properties(zes_mem_handle_t handle, zes_mem_properties_t *props)
{
    ze_result_t status = CHECK_COMPONENT(handle, memories);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!props)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    props->type = ZES_MEM_TYPE_HBM;
    props->onSubdevice = 0;
    props->subdeviceId = 0;
    props->location = ZES_MEM_LOC_DEVICE;
    props->physicalSize = SIM_MEMORY_BYTES;
    props->busWidth = -1;
    props->numChannels = -1;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_sysman_memory_get_state(zes_mem_handle_t handle, zes_mem_state_t *state)
{
    ze_result_t status = CHECK_COMPONENT(handle, memories);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!state)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const struct sim_component *module = (const struct sim_component *)handle;
    uint64_t used = sim_memory_device_bytes(module->device);
    state->health = ZES_MEM_HEALTH_OK;
    state->size = SIM_MEMORY_BYTES;
    state->free = used < SIM_MEMORY_BYTES ? SIM_MEMORY_BYTES - used : 0;
    return ZE_RESULT_SUCCESS;
}
