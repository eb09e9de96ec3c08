/*
 * l0_wild: what real Level Zero programs do and the other test programs do not, in one run.
 * - It is not linked to the loader: dlopen("libze_loader.so.1") and dlsym for every function
 *   (as SYCL runtimes do), and zeInit twice.
 * - Invalid handles: NULL handles, a bogus pointer to zeMemFree, an event used after it was
 *   destroyed; each gets the driver's error code.
 * - Threads: 4 threads x 20 rounds of create an immediate list, fill a buffer with an event,
 *   wait, reset, destroy the list, on one shared context.
 * - fork() while a kernel is in flight; the child leaves at once with exit() (atexit handlers run
 *   in it), the parent then waits for its kernel.
 * Prints one line per step (results in hex, no addresses, no times), so that a traced and an
 * untraced run print the same. Exit 0 when every result was the one expected, 1 otherwise.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <level_zero/ze_api.h>

#define THREADS 4
#define ROUNDS 20
#define ELEMENTS 1024

#define FUNCTIONS(X)                                                                               \
    X(zeInit) X(zeDriverGet) X(zeDeviceGet) X(zeContextCreate) X(zeContextDestroy)                 \
    X(zeModuleCreate) X(zeModuleDestroy) X(zeKernelCreate) X(zeKernelDestroy)                      \
    X(zeKernelSetGroupSize) X(zeKernelSetArgumentValue) X(zeMemAllocShared) X(zeMemFree)           \
    X(zeEventPoolCreate) X(zeEventPoolDestroy) X(zeEventCreate) X(zeEventDestroy)                  \
    X(zeEventHostSynchronize) X(zeEventHostReset) X(zeEventQueryStatus)                            \
    X(zeCommandListCreateImmediate) X(zeCommandListDestroy) X(zeCommandListClose)                  \
    X(zeCommandListAppendLaunchKernel)

#define DECLARE(name) static __typeof__(&name) p_##name;
FUNCTIONS(DECLARE)

static int failures;

static void expect(const char *what, ze_result_t got, ze_result_t want)
{
    printf("%s: 0x%x\n", what, (unsigned)got);
    if (got != want) {
        fprintf(stderr, "l0_wild: %s returned 0x%x, expected 0x%x\n", what, (unsigned)got,
                (unsigned)want);
        failures++;
    }
}

static int resolve(void)
{
    void *loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    void *symbol;

    if (loader == NULL) {
        fprintf(stderr, "l0_wild: %s\n", dlerror());
        return -1;
    }
#define RESOLVE(name)                                                                              \
    if ((symbol = dlsym(loader, #name)) == NULL)                                                   \
        return -1;                                                                                 \
    memcpy(&p_##name, &symbol, sizeof(symbol));
    FUNCTIONS(RESOLVE)
    return 0;
}

struct shared {
    ze_context_handle_t context;
    ze_device_handle_t device;
    ze_module_handle_t module;
    ze_event_pool_handle_t pool;
};

struct worker {
    struct shared *shared;
    uint32_t index;
    int errors;
};

static void *work(void *argument)
{
    struct worker *worker = argument;
    struct shared *shared = worker->shared;
    ze_kernel_desc_t kernel_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                    .pKernelName = "zesim_fill_u32"};
    ze_device_mem_alloc_desc_t device_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = worker->index};
    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_group_count_t groups = {ELEMENTS / 64, 1, 1};
    ze_kernel_handle_t kernel;
    ze_event_handle_t event;
    uint32_t *buffer;

    if (p_zeKernelCreate(shared->module, &kernel_desc, &kernel) != ZE_RESULT_SUCCESS ||
        p_zeMemAllocShared(shared->context, &device_desc, &host_desc, ELEMENTS * sizeof(uint32_t),
                           64, shared->device, (void **)&buffer) != ZE_RESULT_SUCCESS ||
        p_zeEventCreate(shared->pool, &event_desc, &event) != ZE_RESULT_SUCCESS) {
        worker->errors = ROUNDS;
        return NULL;
    }
    p_zeKernelSetGroupSize(kernel, 64, 1, 1);
    p_zeKernelSetArgumentValue(kernel, 0, sizeof(buffer), &buffer);
    for (uint32_t round = 0; round < ROUNDS; round++) {
        uint32_t value = worker->index * 1000 + round;
        ze_command_list_handle_t list;
        int ok = p_zeKernelSetArgumentValue(kernel, 1, sizeof(value), &value) == 0 &&
                 p_zeCommandListCreateImmediate(shared->context, shared->device, &queue_desc,
                                                &list) == 0;

        ok = ok && p_zeCommandListAppendLaunchKernel(list, kernel, &groups, event, 0, NULL) == 0;
        ok = ok && p_zeEventHostSynchronize(event, UINT64_MAX) == 0;
        ok = ok && buffer[0] == value && buffer[ELEMENTS - 1] == value;
        ok = ok && p_zeEventHostReset(event) == 0 && p_zeCommandListDestroy(list) == 0;
        worker->errors += !ok;
    }
    p_zeEventDestroy(event);
    p_zeMemFree(shared->context, buffer);
    p_zeKernelDestroy(kernel);
    return NULL;
}

static void run_threads(struct shared *shared)
{
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    int errors = 0;

    for (uint32_t i = 0; i < THREADS; i++) {
        workers[i] = (struct worker){.shared = shared, .index = i};
        pthread_create(&threads[i], NULL, work, &workers[i]);
    }
    for (uint32_t i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        errors += workers[i].errors;
    }
    printf("threads: %d rounds, %d failed\n", THREADS * ROUNDS, errors);
    failures += errors != 0;
}

/* A kernel in flight while the process forks; the child leaves with exit() at once. */
static volatile int forked_child;

/* LeakSanitizer's hook (sanitizer builds): in a child forked from a multithreaded process the
 * driver's worker threads do not exist, so the work they hold in flight looks leaked. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return forked_child;
}

static void run_fork(struct shared *shared)
{
    ze_kernel_desc_t kernel_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                    .pKernelName = "zesim_spin"};
    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = THREADS};
    ze_group_count_t one = {1, 1, 1};
    uint64_t spin_ns = 20000000;
    ze_command_list_handle_t list;
    ze_kernel_handle_t spin;
    ze_event_handle_t event;
    int status = -1;
    pid_t child;

    expect("fork setup",
           p_zeKernelCreate(shared->module, &kernel_desc, &spin) ||
               p_zeKernelSetArgumentValue(spin, 0, sizeof(spin_ns), &spin_ns) ||
               p_zeEventCreate(shared->pool, &event_desc, &event) ||
               p_zeCommandListCreateImmediate(shared->context, shared->device, &queue_desc,
                                              &list) ||
               p_zeCommandListAppendLaunchKernel(list, spin, &one, event, 0, NULL),
           ZE_RESULT_SUCCESS);
    fflush(stdout);
    child = fork();
    if (child == 0) {
        forked_child = 1;
        exit(0);
    }
    if (child > 0)
        waitpid(child, &status, 0);
    printf("fork: child exited %s %d\n", WIFEXITED(status) ? "with" : "by signal",
           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    expect("fork: kernel in flight completes", p_zeEventHostSynchronize(event, UINT64_MAX),
           ZE_RESULT_SUCCESS);
    p_zeCommandListDestroy(list);
    p_zeEventDestroy(event);
    p_zeKernelDestroy(spin);
}

int main(void)
{
    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    static const uint8_t spirv[] = {0x03, 0x02, 0x23, 0x07};
    ze_module_desc_t module_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                                    .format = ZE_MODULE_FORMAT_IL_SPIRV,
                                    .inputSize = sizeof(spirv),
                                    .pInputModule = spirv};
    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                      .count = THREADS + 2};
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = THREADS + 1};
    struct shared shared = {0};
    ze_driver_handle_t driver;
    ze_context_handle_t none;
    ze_event_handle_t gone;
    uint32_t count = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (resolve() != 0) {
        fprintf(stderr, "l0_wild: cannot resolve the Level Zero functions\n");
        return 1;
    }
    expect("zeInit", p_zeInit(0), ZE_RESULT_SUCCESS);
    expect("zeInit again", p_zeInit(0), ZE_RESULT_SUCCESS);
    expect("zeDriverGet count", p_zeDriverGet(&count, NULL), ZE_RESULT_SUCCESS);
    count = 1;
    expect("zeDriverGet", p_zeDriverGet(&count, &driver), ZE_RESULT_SUCCESS);
    count = 1;
    expect("zeDeviceGet", p_zeDeviceGet(driver, &count, &shared.device), ZE_RESULT_SUCCESS);
    expect("zeContextCreate", p_zeContextCreate(driver, &context_desc, &shared.context),
           ZE_RESULT_SUCCESS);
    expect("zeModuleCreate",
           p_zeModuleCreate(shared.context, shared.device, &module_desc, &shared.module, NULL),
           ZE_RESULT_SUCCESS);
    expect("zeEventPoolCreate",
           p_zeEventPoolCreate(shared.context, &pool_desc, 1, &shared.device, &shared.pool),
           ZE_RESULT_SUCCESS);

    /* Invalid handles: the driver's error codes, traced or not. */
    expect("zeContextCreate(NULL driver)", p_zeContextCreate(NULL, &context_desc, &none),
           ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    expect("zeEventHostSynchronize(NULL)", p_zeEventHostSynchronize(NULL, 0),
           ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    expect("zeCommandListClose(NULL)", p_zeCommandListClose(NULL),
           ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    expect("zeMemFree(bogus pointer)", p_zeMemFree(shared.context, (void *)(uintptr_t)0x1000),
           ZE_RESULT_ERROR_INVALID_ARGUMENT);
    expect("zeEventCreate", p_zeEventCreate(shared.pool, &event_desc, &gone), ZE_RESULT_SUCCESS);
    expect("zeEventDestroy", p_zeEventDestroy(gone), ZE_RESULT_SUCCESS);
    expect("zeEventQueryStatus(destroyed event)", p_zeEventQueryStatus(gone),
           ZE_RESULT_ERROR_INVALID_ARGUMENT);

    run_threads(&shared);
    run_fork(&shared);

    expect("zeEventPoolDestroy", p_zeEventPoolDestroy(shared.pool), ZE_RESULT_SUCCESS);
    expect("zeModuleDestroy", p_zeModuleDestroy(shared.module), ZE_RESULT_SUCCESS);
    expect("zeContextDestroy", p_zeContextDestroy(shared.context), ZE_RESULT_SUCCESS);
    printf("l0_wild: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
