/*
 * test_errors: NULL handles, stale or foreign handles, NULL pointers and bad sizes get the spec's
 * error codes and never a crash. (Through the loader without ZE_ENABLE_LOADER_INTERCEPT: with one
 * driver the loader hands handles straight to it, so the driver sees what the application passed.)
 * Stale and wrong-kind handles answer ZE_RESULT_ERROR_INVALID_ARGUMENT. Entries the device does
 * not implement (images) answer ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
 */
#include "check.h"

int main(void)
{
    struct l0 l0;
    l0_open(&l0);
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeDeviceGetProperties(NULL, &props));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDeviceGetProperties(l0.device, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDriverGet(NULL, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeContextDestroy(NULL));
    ze_context_handle_t context = NULL;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeContextCreate(l0.driver, NULL, &context));
    uint64_t host_ts, device_ts;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
             zeDeviceGetGlobalTimestamps(l0.device, &host_ts, NULL));

    /* Memory. */
    ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    void *ptr = NULL;
    CHECK_ZE(ZE_RESULT_ERROR_UNSUPPORTED_SIZE,
             zeMemAllocDevice(l0.context, &device_desc, 0, 0, l0.device, &ptr));
    CHECK_ZE(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT,
             zeMemAllocDevice(l0.context, &device_desc, 64, 3, l0.device, &ptr));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
             zeMemAllocDevice(l0.context, &device_desc, 64, 0, l0.device, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
             zeMemAllocDevice(l0.context, &device_desc, 64, 0, NULL, &ptr));
    int not_allocated = 0;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(l0.context, &not_allocated));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeMemFree(l0.context, NULL));

    /* Modules and kernels. */
    ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC,
                                    NULL,
                                    ZE_MODULE_FORMAT_IL_SPIRV,
                                    0,
                                    (const uint8_t *)"x",
                                    NULL,
                                    NULL};
    ze_module_handle_t module = NULL;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_SIZE,
             zeModuleCreate(l0.context, l0.device, &module_desc, &module, NULL));
    ze_kernel_desc_t kernel_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, NULL};
    ze_kernel_handle_t kernel = NULL;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
             zeKernelCreate(l0.module, &kernel_desc, &kernel));
    ze_kernel_handle_t vadd = l0_kernel(&l0, "zesim_vadd_f32");
    void *p = NULL;
    uint32_t small = 0;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
             zeKernelSetArgumentValue(vadd, 3, sizeof(p), &p));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
             zeKernelSetArgumentValue(vadd, 0, sizeof(small), &small));
    /* Application kernels take any arguments, as large as a SYCL capture. */
    ze_kernel_handle_t app = l0_kernel(&l0, "app_kernel_with_captures");
    uint8_t capture[200] = {0};
    CHECK_OK(zeKernelSetArgumentValue(app, 20, sizeof(capture), capture));
    CHECK_OK(zeKernelDestroy(app));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(vadd, 0, 1, 1));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(vadd, 64, 64, 1));

    /* Lists, queues, events. */
    ze_command_list_handle_t list = l0_list(&l0, l0.device, 0, 0);
    ze_event_pool_handle_t pool = l0_pool(&l0, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1);
    ze_event_handle_t event = l0_event(pool, 0);
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
             zeCommandListAppendLaunchKernel(list, vadd, NULL, NULL, 0, NULL));
    ze_group_count_t one = {1, 1, 1};
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_SIZE,
             zeCommandListAppendLaunchKernel(list, vadd, &one, NULL, 1, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
             zeCommandListAppendLaunchKernel(list, NULL, &one, NULL, 0, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeCommandListAppendBarrier(NULL, NULL, 0, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
             zeCommandListAppendMemoryCopy(list, NULL, &small, 4, NULL, 0, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_SIZE,
             zeCommandListAppendMemoryFill(list, &small, &small, 3, 4, NULL, 0, NULL));
    /* A handle of the wrong kind. */
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventQueryStatus((ze_event_handle_t)vadd));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT,
             zeCommandListAppendSignalEvent(list, (ze_event_handle_t)pool));
    ze_event_pool_desc_t pool_desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, 0, 0};
    ze_event_pool_handle_t empty_pool = NULL;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_SIZE,
             zeEventPoolCreate(l0.context, &pool_desc, 0, NULL, &empty_pool));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeEventHostSynchronize(NULL, 0));
    ze_kernel_timestamp_result_t ts;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeEventQueryKernelTimestamp(event, NULL));
    (void)ts;
    ze_command_queue_handle_t queue = l0_queue(&l0, l0.device, 0, 0);
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_SIZE,
             zeCommandQueueExecuteCommandLists(queue, 0, &list, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
             zeCommandQueueExecuteCommandLists(queue, 1, NULL, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeFenceCreate(NULL, NULL, NULL));

    /* Stale handles: destroyed objects are recognised as such. */
    CHECK_OK(zeEventDestroy(event));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventQueryStatus(event));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventDestroy(event));
    CHECK_OK(zeKernelDestroy(vadd));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeKernelSetGroupSize(vadd, 1, 1, 1));

    /* Not implemented by the simulated device: the loader answers for the empty entry. */
    ze_image_handle_t image = NULL;
    ze_image_desc_t image_desc = {.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC};
    CHECK_ZE(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
             zeImageCreate(l0.context, l0.device, &image_desc, &image));
    (void)device_ts;

    CHECK_OK(zeCommandQueueDestroy(queue));
    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeEventPoolDestroy(pool));
    l0_close(&l0);
    return check_pass("test_errors");
}
