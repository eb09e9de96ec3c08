/*
 * sampler.c: see sampler.h.
 *
 * Which readings: per device the engine group ZES_ENGINE_GROUP_ALL (else COMPUTE_ALL, else the
 * first group) for utilization, the GPU frequency domain (else the first) for the actual
 * frequency, the first power domain for the energy counter, and the sum over memory modules of
 * size - free for memory in use. Components are enumerated once, when sampling starts. The
 * device's identity (uuid, name) goes with every sample, so the merger needs nothing else of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "sampler.h"
#include "shim.h"
#include "zeprof_api.h"
#include "zeprof_sample.h"

#define SAMPLER_MAX_DEVICES 64
#define SAMPLER_MAX_COMPONENTS 64
#define SAMPLER_MAX_MS 3600000

struct sampled_device {
    ze_device_handle_t handle;
    char uuid[2 * ZE_MAX_DEVICE_UUID_SIZE + 1];
    char name[ZE_MAX_DEVICE_NAME];
    zes_engine_handle_t engine; /* NULL when none */
    zes_freq_handle_t frequency;
    zes_pwr_handle_t power;
    uint32_t memory_count;
    zes_mem_handle_t memories[SAMPLER_MAX_COMPONENTS];
};

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond; /* on CLOCK_MONOTONIC */
static bool stop_requested;      /* under stop_lock */
static bool first_done;          /* under stop_lock: the first reading was taken, or none will */
static bool running;             /* a thread was started and not yet joined */
static bool abandoned; /* (atomic) the exit stopped waiting for the thread: it fires no more */
static pthread_t thread;
static uint64_t period_ns;
static int lock_fd = -1;
static struct sampled_device devices[SAMPLER_MAX_DEVICES];
static uint32_t device_count;

/* One line on stderr; errno preserved. */
static void say(const char *what)
{
    int saved_errno = errno;
    fprintf(stderr, "zeprof: %s\n", what);
    errno = saved_errno;
}

static bool verbose(void)
{
    const char *value = getenv("ZEPROF_VERBOSE");
    return value && value[0] && strcmp(value, "0") != 0;
}

/* ZEPROF_SAMPLE_MS: a whole number of milliseconds, 1 to an hour; 0 or unset: no sampling. */
static uint64_t read_period_ns(void)
{
    const char *value = getenv("ZEPROF_SAMPLE_MS");
    char *end;
    if (!value || !value[0])
        return 0;
    errno = 0;
    unsigned long ms = strtoul(value, &end, 10);
    if (errno || *end || value[0] == '-' || ms > SAMPLER_MAX_MS) {
        say("device telemetry not sampled: reason=ZEPROF_SAMPLE_MS is not a number of "
            "milliseconds from 0 to 3600000");
        return 0;
    }
    return (uint64_t)ms * 1000000u;
}

/* With ZEPROF_SAMPLE_LOCK, only the first process to lock the file samples. */
static bool claim_node(void)
{
    const char *path = getenv("ZEPROF_SAMPLE_LOCK");
    if (!path || !path[0])
        return true;
    lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd < 0)
        return true; /* cannot coordinate: sample rather than lose the telemetry */
    if (flock(lock_fd, LOCK_EX | LOCK_NB) == 0)
        return true;
    close(lock_fd);
    lock_fd = -1;
    if (verbose())
        say("device telemetry sampled by another process of this node");
    return false;
}

/* Of `count` engine groups, the one that stands for the whole device. */
static zes_engine_handle_t pick_engine(zes_engine_handle_t *engines, uint32_t count)
{
    zes_engine_handle_t compute = NULL;
    for (uint32_t i = 0; i < count; i++) {
        zes_engine_properties_t props = {.stype = ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES};
        if (zeprof_real.zesEngineGetProperties(engines[i], &props) != ZE_RESULT_SUCCESS)
            continue;
        if (props.type == ZES_ENGINE_GROUP_ALL && !props.onSubdevice)
            return engines[i];
        if (props.type == ZES_ENGINE_GROUP_COMPUTE_ALL && !props.onSubdevice && !compute)
            compute = engines[i];
    }
    return compute ? compute : count ? engines[0] : NULL;
}

static zes_freq_handle_t pick_frequency(zes_freq_handle_t *domains, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        zes_freq_properties_t props = {.stype = ZES_STRUCTURE_TYPE_FREQ_PROPERTIES};
        if (zeprof_real.zesFrequencyGetProperties(domains[i], &props) == ZE_RESULT_SUCCESS &&
            props.type == ZES_FREQ_DOMAIN_GPU && !props.onSubdevice)
            return domains[i];
    }
    return count ? domains[0] : NULL;
}

/* Up to SAMPLER_MAX_COMPONENTS handles of one kind; 0 when the call fails or is missing. */
#define ENUMERATE(function, device, handles)                                                       \
    __extension__({                                                                                \
        uint32_t n_ = SAMPLER_MAX_COMPONENTS;                                                      \
        if (!zeprof_real.function || zeprof_real.function((zes_device_handle_t)(device), &n_,      \
                                                          (handles)) != ZE_RESULT_SUCCESS)         \
            n_ = 0;                                                                                \
        n_ > SAMPLER_MAX_COMPONENTS ? (uint32_t)SAMPLER_MAX_COMPONENTS : n_;                       \
    })

/* Fills `device`'s components; false when it has none that can be read. */
static bool describe(struct sampled_device *device)
{
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    zes_engine_handle_t engines[SAMPLER_MAX_COMPONENTS];
    zes_freq_handle_t frequencies[SAMPLER_MAX_COMPONENTS];
    zes_pwr_handle_t powers[SAMPLER_MAX_COMPONENTS];

    if (zeprof_real.zeDeviceGetProperties(device->handle, &props) != ZE_RESULT_SUCCESS)
        return false;
    for (size_t i = 0; i < ZE_MAX_DEVICE_UUID_SIZE; i++)
        snprintf(device->uuid + 2 * i, 3, "%02x", props.uuid.id[i]);
    props.name[ZE_MAX_DEVICE_NAME - 1] = '\0';
    memcpy(device->name, props.name, sizeof(device->name));

    uint32_t n = ENUMERATE(zesDeviceEnumEngineGroups, device->handle, engines);
    if (zeprof_real.zesEngineGetProperties && zeprof_real.zesEngineGetActivity)
        device->engine = pick_engine(engines, n);
    n = ENUMERATE(zesDeviceEnumFrequencyDomains, device->handle, frequencies);
    if (zeprof_real.zesFrequencyGetProperties && zeprof_real.zesFrequencyGetState)
        device->frequency = pick_frequency(frequencies, n);
    n = ENUMERATE(zesDeviceEnumPowerDomains, device->handle, powers);
    if (n && zeprof_real.zesPowerGetEnergyCounter)
        device->power = powers[0];
    if (zeprof_real.zesMemoryGetState)
        device->memory_count =
            ENUMERATE(zesDeviceEnumMemoryModules, device->handle, device->memories);
    return device->engine || device->frequency || device->power || device->memory_count;
}

/* Every device of every driver that has something to read. */
static void discover(void)
{
    ze_driver_handle_t drivers[16];
    uint32_t driver_count = 16;

    if (zeprof_real.zeDriverGet(&driver_count, drivers) != ZE_RESULT_SUCCESS)
        return;
    for (uint32_t d = 0; d < driver_count && d < 16; d++) {
        ze_device_handle_t handles[SAMPLER_MAX_DEVICES];
        uint32_t count = SAMPLER_MAX_DEVICES;
        if (zeprof_real.zeDeviceGet(drivers[d], &count, handles) != ZE_RESULT_SUCCESS)
            continue;
        for (uint32_t i = 0; i < count && i < SAMPLER_MAX_DEVICES; i++) {
            if (device_count == SAMPLER_MAX_DEVICES)
                return;
            struct sampled_device *device = &devices[device_count];
            memset(device, 0, sizeof(*device));
            device->handle = handles[i];
            if (describe(device))
                device_count++;
        }
    }
}

static void sample(const struct sampled_device *device)
{
    uint32_t valid = 0;
    zes_engine_stats_t engine = {0};
    zes_freq_state_t frequency = {.stype = ZES_STRUCTURE_TYPE_FREQ_STATE};
    zes_power_energy_counter_t energy = {0};
    uint64_t memory_used = 0;

    if (device->engine &&
        zeprof_real.zesEngineGetActivity(device->engine, &engine) == ZE_RESULT_SUCCESS)
        valid |= ZEPROF_SAMPLE_ENGINE;
    if (device->frequency &&
        zeprof_real.zesFrequencyGetState(device->frequency, &frequency) == ZE_RESULT_SUCCESS &&
        frequency.actual >= 0)
        valid |= ZEPROF_SAMPLE_FREQUENCY;
    if (device->power &&
        zeprof_real.zesPowerGetEnergyCounter(device->power, &energy) == ZE_RESULT_SUCCESS)
        valid |= ZEPROF_SAMPLE_ENERGY;
    for (uint32_t i = 0; i < device->memory_count; i++) {
        zes_mem_state_t state = {.stype = ZES_STRUCTURE_TYPE_MEM_STATE};
        if (zeprof_real.zesMemoryGetState(device->memories[i], &state) == ZE_RESULT_SUCCESS &&
            state.size >= state.free) {
            memory_used += state.size - state.free;
            valid |= ZEPROF_SAMPLE_MEMORY;
        }
    }
    /* A Sysman call that returns after the exit gave up on this thread: LTTng may be gone. */
    if (__atomic_load_n(&abandoned, __ATOMIC_ACQUIRE))
        return;
    lttng_ust_tracepoint(zeprof_sample, device_sample, (uint64_t)(uintptr_t)device->handle,
                         device->uuid, device->name, valid, engine.activeTime, engine.timestamp,
                         (valid & ZEPROF_SAMPLE_FREQUENCY) ? frequency.actual : 0.0, energy.energy,
                         energy.timestamp, memory_used);
}

static void sample_all(void)
{
    for (uint32_t i = 0; i < device_count; i++)
        sample(&devices[i]);
}

/* The first reading is done (or there is nothing to read): zeInit may return. */
static void first_reading_done(void)
{
    pthread_mutex_lock(&stop_lock);
    first_done = true;
    pthread_cond_broadcast(&stop_cond);
    pthread_mutex_unlock(&stop_lock);
}

static void *run(void *unused)
{
    (void)unused;
    struct timespec next;

    /* Every Level Zero call of this thread is the tracer's own: never traced, never hooked. A
     * call that never returns holds this thread only: zeInit waits for the first reading for
     * one second at most, the exit for the last one as long. */
    zeprof_guard_enter();
    discover();
    if (device_count == 0) {
        say("device telemetry not sampled: reason=no device answers Sysman (zes) calls; "
            "ZES_ENABLE_SYSMAN=1 must be set before zeInit");
        first_reading_done();
        return NULL;
    }
    /* Its events register only now: runs without sampling pay nothing for them. */
    zeprof_load_family(ZEPROF_FAMILY_SAMPLE);
    if (verbose())
        say("device telemetry sampled");
    clock_gettime(CLOCK_MONOTONIC, &next);
    sample_all();
    first_reading_done();
    pthread_mutex_lock(&stop_lock);
    for (;;) {
        /* Deadlines are absolute: a late wake-up shortens the next interval, no drift. */
        uint64_t ns = (uint64_t)next.tv_nsec + period_ns;
        next.tv_sec += (time_t)(ns / 1000000000u);
        next.tv_nsec = (long)(ns % 1000000000u);
        while (!stop_requested && pthread_cond_timedwait(&stop_cond, &stop_lock, &next) == 0)
            ;
        if (stop_requested)
            break;
        pthread_mutex_unlock(&stop_lock);
        sample_all();
        pthread_mutex_lock(&stop_lock);
    }
    pthread_mutex_unlock(&stop_lock);
    sample_all(); /* the last interval, up to the exit */
    return NULL;
}

/* At exit: one last sample, then the thread is joined; a zes call that does not return holds the
 * exit for one second at most. */
static void stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&stop_lock);
    stop_requested = true;
    pthread_cond_broadcast(&stop_cond);
    pthread_mutex_unlock(&stop_lock);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 1;
    if (pthread_timedjoin_np(thread, NULL, &deadline) == 0)
        running = false;
    else
        __atomic_store_n(&abandoned, true, __ATOMIC_RELEASE);
}

/* A forked child has no sampler thread, and does not sample. */
static void forget_in_child(void)
{
    running = false;
    stop_requested = true;
    if (lock_fd >= 0)
        close(lock_fd);
    lock_fd = -1;
}

static void start_once_now(void)
{
    period_ns = read_period_ns();
    if (period_ns == 0 || !claim_node())
        return;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&stop_cond, &attr);
    pthread_condattr_destroy(&attr);
    /* The thread must not receive the application's signals. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    running = pthread_create(&thread, NULL, run, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (!running) {
        say("device telemetry not sampled: reason=cannot start a thread");
        return;
    }
    atexit(stop);
    pthread_atfork(NULL, NULL, forget_in_child);
    /* The first reading before zeInit returns, so the sampled window begins before any of the
     * application's work, however late the thread gets to run; one second at most. */
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += 1;
    pthread_mutex_lock(&stop_lock);
    while (!first_done && pthread_cond_timedwait(&stop_cond, &stop_lock, &deadline) == 0)
        ;
    pthread_mutex_unlock(&stop_lock);
}

void zeprof_sampler_start(void)
{
    int saved_errno = errno;
    pthread_once(&start_once, start_once_now);
    errno = saved_errno;
}
