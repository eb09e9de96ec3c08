/*
 * l0-workload: a small Level Zero program with a known shape, for the merger's end-to-end test
 * on the simulated device under the real shim (e2e-simdevice.py knows these counts):
 * Engines (queue group ordinal.index; e2e-simdevice.py knows them): the immediate list on compute
 * engine 0.2, the 64 KiB copies on an immediate list of copy engine 1.1, the queue of the
 * regular list on compute engine 0.1.
 *   immediate list: 8 x zesim_spin (30 us) and 4 x 64 KiB copies, each waited for on an event;
 *   the spins in two launch shapes (SHAPE_* below: 4 of 1x1 groups of size 1x1, then 4 of the
 *   same kernel given another group size and count), for the kernel detail (-k);
 *   then one launch each of two kernels named as C++ compilers name them, each waited for: the
 *   SYCL kernel _ZTSZ4mainEUlvE_ (the typeinfo name of a lambda in main) and the function
 *   _Z3addPfS_ (add(float*, float*)), for the merger's demangling;
 *   then one copy or fill per direction of the memory traffic, each of its own size and waited
 *   for (TRAFFIC_* below: host to device from a zeMemAllocHost buffer, device to host into
 *   malloc'd memory, device to device into the middle of a device allocation, shared, fill of
 *   device memory);
 *   regular list: 1 x zesim_spin (50 us, 1x1 groups of the second group size: a third shape),
 *   executed 3 times, each followed by a queue sync.
 * `l0-workload busy` instead, for device telemetry (zeprof --sample): 48 MiB of device memory,
 * then BUSY_PHASES x (zesim_spin of BUSY_NS, waited for, then BUSY_NS idle), on the immediate
 * list: busy about half the time, with whole intervals busy and whole intervals idle.
 */
#include <level_zero/ze_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRY(call)                                                                                  \
    do {                                                                                           \
        ze_result_t result_ = (call);                                                              \
        if (result_ != ZE_RESULT_SUCCESS) {                                                        \
            fprintf(stderr, "l0-workload: %s failed: 0x%x\n", #call, (unsigned)result_);           \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

enum { SPINS = 8, COPIES = 4, EXECUTIONS = 3, COPY_BYTES = 64 * 1024 };
/* The second launch shape of zesim_spin (e2e-simdevice.py knows it). */
enum {
    SHAPE_GROUP_SIZE_X = 16,
    SHAPE_GROUP_SIZE_Y = 2,
    SHAPE_GROUP_COUNT_X = 3,
    SHAPE_GROUP_COUNT_Y = 2,
};
/* Bytes of each memory traffic direction's one append (e2e-simdevice.py knows them). */
enum {
    TRAFFIC_HOST_TO_DEVICE = 8192,
    TRAFFIC_DEVICE_TO_HOST = 4096,
    TRAFFIC_DEVICE_TO_DEVICE = 2048,
    TRAFFIC_SHARED = 1024,
    TRAFFIC_FILL_DEVICE = 512,
    DEVICE_BYTES = 32 * 1024,
};

#define WAIT(event)                                                                                \
    do {                                                                                           \
        TRY(zeEventHostSynchronize((event), UINT64_MAX));                                          \
        TRY(zeEventHostReset(event));                                                              \
    } while (0)
enum { BUSY_PHASES = 4, BUSY_NS = 40000000, BUSY_DEVICE_BYTES = 48 << 20 };

static int busy_phases(ze_context_handle_t context, ze_device_handle_t device,
                       ze_command_list_handle_t immediate, ze_kernel_handle_t spin,
                       ze_event_handle_t event)
{
    ze_device_mem_alloc_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    void *memory;
    TRY(zeMemAllocDevice(context, &desc, BUSY_DEVICE_BYTES, 64, device, &memory));
    uint64_t spin_ns = BUSY_NS;
    ze_group_count_t groups = {1, 1, 1};
    TRY(zeKernelSetArgumentValue(spin, 0, sizeof(spin_ns), &spin_ns));
    for (int i = 0; i < BUSY_PHASES; i++) {
        TRY(zeCommandListAppendLaunchKernel(immediate, spin, &groups, event, 0, NULL));
        TRY(zeEventHostSynchronize(event, UINT64_MAX));
        TRY(zeEventHostReset(event));
        struct timespec idle = {0, BUSY_NS};
        while (nanosleep(&idle, &idle) != 0)
            ;
    }
    TRY(zeMemFree(context, memory));
    return 0;
}

int main(int argc, char **argv)
{
    int busy = argc > 1 && strcmp(argv[1], "busy") == 0;
    TRY(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    ze_driver_handle_t driver;
    TRY(zeDriverGet(&count, &driver));
    ze_device_handle_t device;
    count = 1;
    TRY(zeDeviceGet(driver, &count, &device));
    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t context;
    TRY(zeContextCreate(driver, &context_desc, &context));

    static const uint8_t spirv[] = {0x03, 0x02, 0x23, 0x07};
    ze_module_desc_t module_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                                    .format = ZE_MODULE_FORMAT_IL_SPIRV,
                                    .inputSize = sizeof(spirv),
                                    .pInputModule = spirv};
    ze_module_handle_t module;
    TRY(zeModuleCreate(context, device, &module_desc, &module, NULL));
    ze_kernel_desc_t spin_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                  .pKernelName = "zesim_spin"};
    ze_kernel_handle_t spin;
    TRY(zeKernelCreate(module, &spin_desc, &spin));
    TRY(zeKernelSetGroupSize(spin, 1, 1, 1));
    ze_group_count_t groups = {1, 1, 1};

    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                      .count = 1};
    ze_event_pool_handle_t pool;
    TRY(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool));
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                                  .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                                  .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t event;
    TRY(zeEventCreate(pool, &event_desc, &event));

    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .ordinal = 0,
                                          .index = 2,
                                          .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_list_handle_t immediate;
    TRY(zeCommandListCreateImmediate(context, device, &queue_desc, &immediate));
    if (busy) {
        if (busy_phases(context, device, immediate, spin, event) != 0)
            return 1;
        TRY(zeCommandListDestroy(immediate));
        TRY(zeEventDestroy(event));
        TRY(zeEventPoolDestroy(pool));
        TRY(zeKernelDestroy(spin));
        TRY(zeModuleDestroy(module));
        TRY(zeContextDestroy(context));
        puts("l0-workload: busy done");
        return 0;
    }
    uint64_t spin_ns = 30000;
    TRY(zeKernelSetArgumentValue(spin, 0, sizeof(spin_ns), &spin_ns));
    const ze_group_count_t second_groups = {SHAPE_GROUP_COUNT_X, SHAPE_GROUP_COUNT_Y, 1};
    for (int i = 0; i < SPINS; i++) {
        if (i == SPINS / 2)
            TRY(zeKernelSetGroupSize(spin, SHAPE_GROUP_SIZE_X, SHAPE_GROUP_SIZE_Y, 1));
        const ze_group_count_t *launch = i < SPINS / 2 ? &groups : &second_groups;
        TRY(zeCommandListAppendLaunchKernel(immediate, spin, launch, event, 0, NULL));
        TRY(zeEventHostSynchronize(event, UINT64_MAX));
        TRY(zeEventHostReset(event));
    }
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *source, *destination;
    TRY(zeMemAllocHost(context, &host_desc, COPY_BYTES, 64, &source));
    TRY(zeMemAllocHost(context, &host_desc, COPY_BYTES, 64, &destination));
    ze_command_queue_desc_t copy_desc = queue_desc;
    copy_desc.ordinal = 1;
    copy_desc.index = 1;
    ze_command_list_handle_t copier;
    TRY(zeCommandListCreateImmediate(context, device, &copy_desc, &copier));
    for (int i = 0; i < COPIES; i++) {
        TRY(zeCommandListAppendMemoryCopy(copier, destination, source, COPY_BYTES, event, 0, NULL));
        TRY(zeEventHostSynchronize(event, UINT64_MAX));
        TRY(zeEventHostReset(event));
    }
    ze_device_mem_alloc_desc_t device_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    void *device_buffer, *shared;
    TRY(zeMemAllocDevice(context, &device_desc, DEVICE_BYTES, 64, device, &device_buffer));
    TRY(zeMemAllocShared(context, &device_desc, &host_desc, TRAFFIC_SHARED, 64, device, &shared));
    char *system = malloc(TRAFFIC_DEVICE_TO_HOST);
    if (!system)
        return 1;
    memset(system, 0, TRAFFIC_DEVICE_TO_HOST);
    TRY(zeCommandListAppendMemoryCopy(immediate, device_buffer, source, TRAFFIC_HOST_TO_DEVICE,
                                      event, 0, NULL));
    WAIT(event);
    TRY(zeCommandListAppendMemoryCopy(immediate, system, device_buffer, TRAFFIC_DEVICE_TO_HOST,
                                      event, 0, NULL));
    WAIT(event);
    TRY(zeCommandListAppendMemoryCopy(immediate, (char *)device_buffer + DEVICE_BYTES / 2,
                                      device_buffer, TRAFFIC_DEVICE_TO_DEVICE, event, 0, NULL));
    WAIT(event);
    TRY(zeCommandListAppendMemoryCopy(immediate, device_buffer, shared, TRAFFIC_SHARED, event, 0,
                                      NULL));
    WAIT(event);
    static const uint32_t pattern = 0x5a5a5a5a;
    TRY(zeCommandListAppendMemoryFill(immediate, device_buffer, &pattern, sizeof(pattern),
                                      TRAFFIC_FILL_DEVICE, event, 0, NULL));
    WAIT(event);
    free(system);
    TRY(zeMemFree(context, shared));
    TRY(zeMemFree(context, device_buffer));

    static const char *const mangled_names[] = {"_ZTSZ4mainEUlvE_", "_Z3addPfS_"};
    for (size_t i = 0; i < sizeof(mangled_names) / sizeof(*mangled_names); i++) {
        ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                 .pKernelName = mangled_names[i]};
        ze_kernel_handle_t kernel;
        TRY(zeKernelCreate(module, &desc, &kernel));
        TRY(zeKernelSetGroupSize(kernel, 1, 1, 1));
        TRY(zeCommandListAppendLaunchKernel(immediate, kernel, &groups, event, 0, NULL));
        TRY(zeEventHostSynchronize(event, UINT64_MAX));
        TRY(zeEventHostReset(event));
        TRY(zeKernelDestroy(kernel));
    }

    queue_desc.index = 1;
    ze_command_queue_handle_t queue;
    TRY(zeCommandQueueCreate(context, device, &queue_desc, &queue));
    ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t regular;
    TRY(zeCommandListCreate(context, device, &list_desc, &regular));
    spin_ns = 50000;
    TRY(zeKernelSetArgumentValue(spin, 0, sizeof(spin_ns), &spin_ns));
    TRY(zeCommandListAppendLaunchKernel(regular, spin, &groups, NULL, 0, NULL));
    TRY(zeCommandListClose(regular));
    for (int i = 0; i < EXECUTIONS; i++) {
        TRY(zeCommandQueueExecuteCommandLists(queue, 1, &regular, NULL));
        TRY(zeCommandQueueSynchronize(queue, UINT64_MAX));
    }

    TRY(zeCommandListDestroy(regular));
    TRY(zeCommandQueueDestroy(queue));
    TRY(zeCommandListDestroy(copier));
    TRY(zeCommandListDestroy(immediate));
    TRY(zeMemFree(context, source));
    TRY(zeMemFree(context, destination));
    TRY(zeEventDestroy(event));
    TRY(zeEventPoolDestroy(pool));
    TRY(zeKernelDestroy(spin));
    TRY(zeModuleDestroy(module));
    TRY(zeContextDestroy(context));
    puts("l0-workload: done");
    return 0;
}
