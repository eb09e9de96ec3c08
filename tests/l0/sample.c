/*
 * sample: a small, realistic Level Zero application, the one the README traces first.
 * It adds two vectors, fills a buffer, copies results back to the host and runs a short spin
 * kernel, on an immediate list and on a regular list executed twice with events and a fence;
 * it checks its results and prints one line.
 */
#include <stdio.h>
#include <string.h>

#include <level_zero/ze_api.h>

#define N 4096

#define TRY(call)                                                                                  \
    do {                                                                                           \
        ze_result_t result_ = (call);                                                              \
        if (result_ != ZE_RESULT_SUCCESS) {                                                        \
            fprintf(stderr, "sample: %s failed: 0x%x\n", #call, (unsigned)result_);                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    TRY(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    ze_driver_handle_t driver;
    TRY(zeDriverGet(&count, &driver));
    ze_device_handle_t device;
    count = 1;
    TRY(zeDeviceGet(driver, &count, &device));
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    TRY(zeDeviceGetProperties(device, &props));
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
    ze_kernel_desc_t vadd_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                  .pKernelName = "zesim_vadd_f32"};
    ze_kernel_desc_t spin_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                  .pKernelName = "zesim_spin"};
    ze_kernel_desc_t fill_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                  .pKernelName = "zesim_fill_u32"};
    ze_kernel_handle_t vadd, spin, fill;
    TRY(zeKernelCreate(module, &vadd_desc, &vadd));
    TRY(zeKernelCreate(module, &spin_desc, &spin));
    TRY(zeKernelCreate(module, &fill_desc, &fill));

    ze_device_mem_alloc_desc_t device_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    float *a, *b, *c, *host_c;
    uint32_t *flags;
    TRY(zeMemAllocShared(context, &device_desc, &host_desc, N * sizeof(float), 64, device,
                         (void **)&a));
    TRY(zeMemAllocShared(context, &device_desc, &host_desc, N * sizeof(float), 64, device,
                         (void **)&b));
    TRY(zeMemAllocDevice(context, &device_desc, N * sizeof(float), 64, device, (void **)&c));
    TRY(zeMemAllocDevice(context, &device_desc, N * sizeof(uint32_t), 64, device, (void **)&flags));
    TRY(zeMemAllocHost(context, &host_desc, N * sizeof(float), 64, (void **)&host_c));
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
    }

    uint32_t gx, gy, gz;
    TRY(zeKernelSuggestGroupSize(vadd, N, 1, 1, &gx, &gy, &gz));
    TRY(zeKernelSetGroupSize(vadd, gx, gy, gz));
    TRY(zeKernelSetArgumentValue(vadd, 0, sizeof(a), &a));
    TRY(zeKernelSetArgumentValue(vadd, 1, sizeof(b), &b));
    TRY(zeKernelSetArgumentValue(vadd, 2, sizeof(c), &c));
    uint64_t spin_ns = 200000;
    TRY(zeKernelSetArgumentValue(spin, 0, sizeof(spin_ns), &spin_ns));
    uint32_t flag = 1;
    TRY(zeKernelSetGroupSize(fill, 256, 1, 1));
    TRY(zeKernelSetArgumentValue(fill, 0, sizeof(flags), &flags));
    TRY(zeKernelSetArgumentValue(fill, 1, sizeof(flag), &flag));

    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
                                               ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                                      .count = 2};
    ze_event_pool_handle_t pool;
    TRY(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool));
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 0};
    ze_event_handle_t computed, copied;
    TRY(zeEventCreate(pool, &event_desc, &computed));
    event_desc.index = 1;
    TRY(zeEventCreate(pool, &event_desc, &copied));

    /* Immediate list: compute, then copy back once the kernel's event fires. */
    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_list_handle_t immediate;
    TRY(zeCommandListCreateImmediate(context, device, &queue_desc, &immediate));
    ze_group_count_t vadd_groups = {N / gx, 1, 1};
    TRY(zeCommandListAppendLaunchKernel(immediate, vadd, &vadd_groups, computed, 0, NULL));
    TRY(zeCommandListAppendMemoryCopy(immediate, host_c, c, N * sizeof(float), copied, 1,
                                      &computed));
    TRY(zeEventHostSynchronize(copied, UINT64_MAX));
    ze_kernel_timestamp_result_t ts;
    TRY(zeEventQueryKernelTimestamp(computed, &ts));

    /* Regular list executed twice with a fence: fill, spin, zero-fill of c, barrier. */
    ze_command_queue_handle_t queue;
    TRY(zeCommandQueueCreate(context, device, &queue_desc, &queue));
    ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list;
    TRY(zeCommandListCreate(context, device, &list_desc, &list));
    ze_group_count_t fill_groups = {N / 256, 1, 1}, one = {1, 1, 1};
    float zero = 0.0f;
    TRY(zeCommandListAppendLaunchKernel(list, fill, &fill_groups, NULL, 0, NULL));
    TRY(zeCommandListAppendLaunchKernel(list, spin, &one, NULL, 0, NULL));
    TRY(zeCommandListAppendMemoryFill(list, c, &zero, sizeof(zero), N * sizeof(float), NULL, 0,
                                      NULL));
    TRY(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    TRY(zeCommandListClose(list));
    ze_fence_desc_t fence_desc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence;
    TRY(zeFenceCreate(queue, &fence_desc, &fence));
    for (int run = 0; run < 2; run++) {
        TRY(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
        TRY(zeFenceHostSynchronize(fence, UINT64_MAX));
        TRY(zeFenceReset(fence));
    }

    int errors = 0;
    for (int i = 0; i < N; i++) {
        errors += host_c[i] != 3.0f * (float)i;
        errors += flags[i] != 1u || c[i] != 0.0f;
    }

    TRY(zeFenceDestroy(fence));
    TRY(zeCommandListDestroy(list));
    TRY(zeCommandQueueDestroy(queue));
    TRY(zeCommandListDestroy(immediate));
    TRY(zeEventDestroy(computed));
    TRY(zeEventDestroy(copied));
    TRY(zeEventPoolDestroy(pool));
    void *allocations[] = {a, b, c, flags, host_c};
    for (int i = 0; i < 5; i++)
        TRY(zeMemFree(context, allocations[i]));
    TRY(zeKernelDestroy(vadd));
    TRY(zeKernelDestroy(spin));
    TRY(zeKernelDestroy(fill));
    TRY(zeModuleDestroy(module));
    TRY(zeContextDestroy(context));
    if (errors) {
        fprintf(stderr, "sample: %d wrong results\n", errors);
        return 1;
    }
    printf("sample: vadd, fill, copies and spin OK on %s\n", props.name);
    return 0;
}
