/*
 * e2e_app: a Level Zero program that writes down every call it makes, so a test can hold its
 * trace against what it really did.
 *
 *   e2e_app calls LOG                 two threads, a vector add, a fill, and calls that fail
 *   e2e_app loop LOG N                N calls of zeDriverGet (for the event-loss test)
 *   e2e_app wait-signal LOG READY     a few calls, creates READY, waits for SIGINT (at most
 *                                     60 s), makes one more call, exits 0
 *
 * LOG gets one line per call, "<thread> <tid> <function> 0x<result>", in the order each thread
 * made them (the thread is "main" or "worker", so two runs compare by role, not by tid), then
 * "checksum <n>" for the computed data, "signal <n>" when a signal arrived, and "loader <path>":
 * the file that zeInit came from (the shim when traced, the real loader when not). When zeInit fails
 * (no loader, no device) that is logged and the program exits 0: a Level Zero application is
 * expected to cope with that, and the test checks that it can.
 * Exit status: 0 when the program ran to its end, 1 on a failure it did not plan, 2 bad usage.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <level_zero/ze_api.h>
#include <level_zero/loader/ze_loader.h>

#define ELEMENTS 1024

static FILE *call_log;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t signal_seen;

static ze_result_t log_call(const char *thread, const char *function, ze_result_t result)
{
    pthread_mutex_lock(&log_lock);
    fprintf(call_log, "%s %d %s 0x%x\n", thread, (int)gettid(), function, (unsigned)result);
    pthread_mutex_unlock(&log_lock);
    return result;
}

/* Calls a Level Zero function and logs it; evaluates to its result. */
#define CALL(thread, function, ...) log_call(thread, #function, function(__VA_ARGS__))

/* A call that must succeed for the program to go on. */
#define MUST(thread, function, ...)                                                                \
    do {                                                                                           \
        if (CALL(thread, function, __VA_ARGS__) != ZE_RESULT_SUCCESS) {                            \
            fprintf(stderr, "e2e_app: %s failed\n", #function);                                    \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

struct device {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
};

/* zeInit and the first device. 1: zeInit failed (logged; the caller exits 0). */
static int open_device(const char *thread, struct device *out)
{
    if (CALL(thread, zeInit, ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS)
        return 1;
    uint32_t count = 1;
    MUST(thread, zeDriverGet, &count, &out->driver);
    count = 1;
    MUST(thread, zeDeviceGet, out->driver, &count, &out->device);
    return 0;
}

/* The worker: its own context, a fill on an immediate list, one failing call. */
static void *worker_main(void *arg)
{
    static const char thread[] = "worker";
    const struct device *device = arg;
    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t context;
    if (CALL(thread, zeContextCreate, device->driver, &context_desc, &context) != ZE_RESULT_SUCCESS)
        return "zeContextCreate";
    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_list_handle_t list;
    if (CALL(thread, zeCommandListCreateImmediate, context, device->device, &queue_desc, &list) !=
        ZE_RESULT_SUCCESS)
        return "zeCommandListCreateImmediate";
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    uint32_t *buffer;
    if (CALL(thread, zeMemAllocHost, context, &host_desc, ELEMENTS * sizeof(*buffer), 64,
             (void **)&buffer) != ZE_RESULT_SUCCESS)
        return "zeMemAllocHost";
    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                      .count = 1};
    ze_event_pool_handle_t pool;
    if (CALL(thread, zeEventPoolCreate, context, &pool_desc, 0, NULL, &pool) != ZE_RESULT_SUCCESS)
        return "zeEventPoolCreate";
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                                  .signal = ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t done;
    if (CALL(thread, zeEventCreate, pool, &event_desc, &done) != ZE_RESULT_SUCCESS)
        return "zeEventCreate";
    uint32_t pattern = 0x5a5a5a5a;
    CALL(thread, zeCommandListAppendMemoryFill, list, buffer, &pattern, sizeof(pattern),
         ELEMENTS * sizeof(*buffer), done, 0, NULL);
    CALL(thread, zeEventHostSynchronize, done, UINT64_MAX);
    /* Planned failure: freeing memory that was never allocated. */
    int not_allocated = 0;
    CALL(thread, zeMemFree, context, &not_allocated);
    unsigned long sum = 0;
    for (int i = 0; i < ELEMENTS; i++)
        sum += buffer[i] & 0xff;
    pthread_mutex_lock(&log_lock);
    fprintf(call_log, "checksum-fill %lu\n", sum);
    pthread_mutex_unlock(&log_lock);
    CALL(thread, zeMemFree, context, buffer);
    CALL(thread, zeEventDestroy, done);
    CALL(thread, zeEventPoolDestroy, pool);
    CALL(thread, zeCommandListDestroy, list);
    CALL(thread, zeContextDestroy, context);
    return NULL;
}

/* Which library the program's Level Zero calls go to. */
static void log_loader(void)
{
    Dl_info info = {0};
    ze_result_t (*init)(ze_init_flags_t) = zeInit;
    void *address;
    memcpy(&address, &init, sizeof(address));
    if (dladdr(address, &info) && info.dli_fname)
        fprintf(call_log, "loader %s\n", info.dli_fname);
}

static int run_calls(void)
{
    static const char thread[] = "main";
    struct device device;
    log_loader();
    if (open_device(thread, &device))
        return 0;
    pthread_t worker;
    if (pthread_create(&worker, NULL, worker_main, &device) != 0)
        return 1;

    ze_device_properties_t properties = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    MUST(thread, zeDeviceGetProperties, device.device, &properties);
    /* Planned failures: a NULL pointer and a NULL handle. */
    CALL(thread, zeDeviceGetProperties, device.device, NULL);
    CALL(thread, zeContextDestroy, NULL);
    /* A family whose events the shim registers at its first call (zel): traced all the same. */
    size_t loader_components = 0;
    MUST(thread, zelLoaderGetVersions, &loader_components, NULL);

    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t context;
    MUST(thread, zeContextCreate, device.driver, &context_desc, &context);
    static const uint8_t binary[] = {0x03, 0x02, 0x23, 0x07};
    ze_module_desc_t module_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                                    .format = ZE_MODULE_FORMAT_IL_SPIRV,
                                    .inputSize = sizeof(binary),
                                    .pInputModule = binary};
    ze_module_handle_t module;
    MUST(thread, zeModuleCreate, context, device.device, &module_desc, &module, NULL);
    ze_kernel_desc_t kernel_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                    .pKernelName = "zesim_vadd_f32"};
    ze_kernel_handle_t vadd;
    MUST(thread, zeKernelCreate, module, &kernel_desc, &vadd);

    ze_device_mem_alloc_desc_t device_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    float *a, *b, *c;
    MUST(thread, zeMemAllocShared, context, &device_desc, &host_desc, ELEMENTS * sizeof(float), 64,
         device.device, (void **)&a);
    MUST(thread, zeMemAllocShared, context, &device_desc, &host_desc, ELEMENTS * sizeof(float), 64,
         device.device, (void **)&b);
    MUST(thread, zeMemAllocShared, context, &device_desc, &host_desc, ELEMENTS * sizeof(float), 64,
         device.device, (void **)&c);
    for (int i = 0; i < ELEMENTS; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)(ELEMENTS - i);
        c[i] = -1.0f;
    }
    MUST(thread, zeKernelSetGroupSize, vadd, 64, 1, 1);
    MUST(thread, zeKernelSetArgumentValue, vadd, 0, sizeof(a), &a);
    MUST(thread, zeKernelSetArgumentValue, vadd, 1, sizeof(b), &b);
    MUST(thread, zeKernelSetArgumentValue, vadd, 2, sizeof(c), &c);
    /* Planned failure: an argument index the kernel does not have. */
    CALL(thread, zeKernelSetArgumentValue, vadd, 7, sizeof(c), &c);

    /* A regular list, executed twice, synchronized with a fence. */
    ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list;
    MUST(thread, zeCommandListCreate, context, device.device, &list_desc, &list);
    ze_group_count_t groups = {ELEMENTS / 64, 1, 1};
    MUST(thread, zeCommandListAppendLaunchKernel, list, vadd, &groups, NULL, 0, NULL);
    MUST(thread, zeCommandListClose, list);
    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_queue_handle_t queue;
    MUST(thread, zeCommandQueueCreate, context, device.device, &queue_desc, &queue);
    ze_fence_desc_t fence_desc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence;
    MUST(thread, zeFenceCreate, queue, &fence_desc, &fence);
    for (int execution = 0; execution < 2; execution++) {
        MUST(thread, zeCommandQueueExecuteCommandLists, queue, 1, &list, fence);
        MUST(thread, zeFenceHostSynchronize, fence, UINT64_MAX);
        MUST(thread, zeFenceReset, fence);
    }
    double sum = 0;
    for (int i = 0; i < ELEMENTS; i++)
        sum += c[i];
    pthread_mutex_lock(&log_lock);
    fprintf(call_log, "checksum-vadd %.1f\n", sum);
    pthread_mutex_unlock(&log_lock);

    void *worker_failure = NULL;
    pthread_join(worker, &worker_failure);
    if (worker_failure) {
        fprintf(stderr, "e2e_app: worker: %s failed\n", (const char *)worker_failure);
        return 1;
    }
    MUST(thread, zeFenceDestroy, fence);
    MUST(thread, zeCommandQueueDestroy, queue);
    MUST(thread, zeCommandListDestroy, list);
    MUST(thread, zeMemFree, context, c);
    MUST(thread, zeMemFree, context, b);
    MUST(thread, zeMemFree, context, a);
    MUST(thread, zeKernelDestroy, vadd);
    MUST(thread, zeModuleDestroy, module);
    MUST(thread, zeContextDestroy, context);
    return 0;
}

static int run_loop(long calls)
{
    static const char thread[] = "main";
    struct device device;
    if (open_device(thread, &device))
        return 0;
    for (long i = 0; i < calls; i++) {
        uint32_t count = 0;
        /* Not logged one by one: the log would cost more than the calls. */
        if (zeDriverGet(&count, NULL) != ZE_RESULT_SUCCESS)
            return 1;
    }
    pthread_mutex_lock(&log_lock);
    fprintf(call_log, "loop zeDriverGet %ld\n", calls);
    pthread_mutex_unlock(&log_lock);
    return 0;
}

static void on_signal(int signal_number)
{
    signal_seen = signal_number;
}

static int run_wait_signal(const char *ready_path)
{
    static const char thread[] = "main";
    struct sigaction action = {.sa_handler = on_signal};
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    struct device device;
    if (open_device(thread, &device))
        return 0;
    FILE *ready = fopen(ready_path, "w");
    if (!ready)
        return 1;
    fclose(ready);
    /* Bounded, so a lost signal fails the test instead of hanging it. */
    for (int tick = 0; tick < 6000 && !signal_seen; tick++) {
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    fprintf(call_log, "signal %d\n", (int)signal_seen);
    uint32_t count = 0;
    MUST(thread, zeDriverGet, &count, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: e2e_app calls|loop|wait-signal LOG [N|READY]\n");
        return 2;
    }
    call_log = fopen(argv[2], "w");
    if (!call_log) {
        perror("e2e_app: cannot open the log");
        return 2;
    }
    int status = 2;
    if (strcmp(argv[1], "calls") == 0)
        status = run_calls();
    else if (strcmp(argv[1], "loop") == 0 && argc > 3)
        status = run_loop(atol(argv[3]));
    else if (strcmp(argv[1], "wait-signal") == 0 && argc > 3)
        status = run_wait_signal(argv[3]);
    else
        fprintf(stderr, "e2e_app: unknown mode %s\n", argv[1]);
    fclose(call_log);
    return status;
}
