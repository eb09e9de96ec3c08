/*
 * test_compute: kernels compute, copies copy and fills fill, on real memory, through the loader.
 * Covers every launch variant, copy region, memory fill, kernel queries and the capture of
 * kernel arguments at append time.
 */
#include <string.h>

#include "check.h"

#define N 1024

static void run_and_wait(struct l0 *l0, ze_command_list_handle_t list)
{
    ze_command_queue_handle_t queue = l0_queue(l0, l0->device, 0, 0);
    CHECK_OK(zeCommandListClose(list));
    CHECK_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    CHECK_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    CHECK_OK(zeCommandQueueDestroy(queue));
}

static void test_vadd_and_fill(struct l0 *l0)
{
    float *a = l0_shared(l0, N * sizeof(float));
    float *b = l0_shared(l0, N * sizeof(float));
    float *c = l0_shared(l0, N * sizeof(float));
    uint32_t *u = l0_shared(l0, N * sizeof(uint32_t));
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
        c[i] = -1.0f;
        u[i] = 0;
    }
    ze_kernel_handle_t vadd = l0_kernel(l0, "zesim_vadd_f32");
    ze_kernel_handle_t fill = l0_kernel(l0, "zesim_fill_u32");
    uint32_t gx = 0, gy = 0, gz = 0;
    CHECK_OK(zeKernelSuggestGroupSize(vadd, N, 1, 1, &gx, &gy, &gz));
    CHECK(gx > 0 && N % gx == 0 && gy == 1 && gz == 1);
    CHECK_OK(zeKernelSetGroupSize(vadd, gx, 1, 1));
    CHECK_OK(zeKernelSetArgumentValue(vadd, 0, sizeof(a), &a));
    CHECK_OK(zeKernelSetArgumentValue(vadd, 1, sizeof(b), &b));
    CHECK_OK(zeKernelSetArgumentValue(vadd, 2, sizeof(c), &c));
    CHECK_OK(zeKernelSetGroupSize(fill, 64, 1, 1));
    uint32_t value = 0xC0FFEEu;
    CHECK_OK(zeKernelSetArgumentValue(fill, 0, sizeof(u), &u));
    CHECK_OK(zeKernelSetArgumentValue(fill, 1, sizeof(value), &value));

    ze_command_list_handle_t list = l0_list(l0, l0->device, 0, 0);
    ze_group_count_t groups = {N / gx, 1, 1};
    CHECK_OK(zeCommandListAppendLaunchKernel(list, vadd, &groups, NULL, 0, NULL));
    /* Half the buffer only: 8 groups of 64. */
    ze_group_count_t fill_groups = {N / 128, 1, 1};
    CHECK_OK(zeCommandListAppendLaunchKernel(list, fill, &fill_groups, NULL, 0, NULL));
    /* Arguments are captured at append: changing them now must not change the launch above. */
    uint32_t other = 7;
    CHECK_OK(zeKernelSetArgumentValue(fill, 1, sizeof(other), &other));
    run_and_wait(l0, list);
    for (int i = 0; i < N; i++) {
        CHECK(c[i] == a[i] + b[i]);
        CHECK(u[i] == (i < N / 2 ? value : 0u));
    }

    /* Indirect launch: the group count is read from device memory at execution. */
    ze_group_count_t *indirect = l0_shared(l0, sizeof(*indirect));
    *indirect = (ze_group_count_t){N / 64, 1, 1};
    CHECK_OK(zeCommandListReset(list));
    CHECK_OK(zeCommandListAppendLaunchKernelIndirect(list, fill, indirect, NULL, 0, NULL));
    run_and_wait(l0, list);
    for (int i = 0; i < N; i++)
        CHECK(u[i] == other);

    /* Cooperative launch and several kernels indirect (count buffer says 2 of 2). */
    value = 11;
    CHECK_OK(zeKernelSetArgumentValue(fill, 1, sizeof(value), &value));
    uint32_t *count = l0_shared(l0, sizeof(*count));
    *count = 2;
    ze_group_count_t *launch_args = l0_shared(l0, 2 * sizeof(*launch_args));
    launch_args[0] = (ze_group_count_t){N / 64, 1, 1};
    launch_args[1] = (ze_group_count_t){N / gx, 1, 1};
    for (int i = 0; i < N; i++)
        c[i] = 0.0f;
    ze_kernel_handle_t both[2] = {fill, vadd};
    CHECK_OK(zeCommandListReset(list));
    CHECK_OK(zeCommandListAppendLaunchMultipleKernelsIndirect(list, 2, both, count, launch_args,
                                                              NULL, 0, NULL));
    run_and_wait(l0, list);
    for (int i = 0; i < N; i++) {
        CHECK(u[i] == 11u);
        CHECK(c[i] == a[i] + b[i]);
    }
    value = 12;
    CHECK_OK(zeKernelSetArgumentValue(fill, 1, sizeof(value), &value));
    CHECK_OK(zeCommandListReset(list));
    CHECK_OK(
        zeCommandListAppendLaunchCooperativeKernel(list, fill, &launch_args[0], NULL, 0, NULL));
    run_and_wait(l0, list);
    for (int i = 0; i < N; i++)
        CHECK(u[i] == 12u);

    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeKernelDestroy(vadd));
    CHECK_OK(zeKernelDestroy(fill));
    void *all[] = {a, b, c, u, indirect, count, launch_args};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        CHECK_OK(zeMemFree(l0->context, all[i]));
}

static void test_copies(struct l0 *l0)
{
    ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    uint8_t *host = NULL, *device = NULL, *back = NULL;
    CHECK_OK(zeMemAllocHost(l0->context, &host_desc, 4096, 0, (void **)&host));
    CHECK_OK(zeMemAllocDevice(l0->context, &device_desc, 4096, 4096, l0->device, (void **)&device));
    CHECK(((uintptr_t)device & 4095) == 0);
    CHECK_OK(zeMemAllocHost(l0->context, &host_desc, 4096, 0, (void **)&back));
    for (int i = 0; i < 4096; i++) {
        host[i] = (uint8_t)(i * 7);
        back[i] = 0;
    }
    ze_memory_allocation_properties_t props = {ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, NULL,
                                               0, 0, 0};
    ze_device_handle_t owner = NULL;
    CHECK_OK(zeMemGetAllocProperties(l0->context, device + 100, &props, &owner));
    CHECK(props.type == ZE_MEMORY_TYPE_DEVICE && owner == l0->device && props.id != 0);
    CHECK_OK(zeMemGetAllocProperties(l0->context, host, &props, &owner));
    CHECK(props.type == ZE_MEMORY_TYPE_HOST);
    int on_stack = 0;
    CHECK_OK(zeMemGetAllocProperties(l0->context, &on_stack, &props, NULL));
    CHECK(props.type == ZE_MEMORY_TYPE_UNKNOWN);

    ze_command_list_handle_t list = l0_list(l0, l0->device, 0, 0);
    /* host -> device -> back, a fill of 4-byte pattern over 1024..2047, a 2D region copy. */
    uint32_t pattern = 0xA1B2C3D4u;
    CHECK_OK(zeCommandListAppendMemoryCopy(list, device, host, 4096, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendMemoryFill(list, device + 1024, &pattern, sizeof(pattern), 1024,
                                           NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendMemoryPrefetch(list, device, 4096));
    CHECK_OK(zeCommandListAppendMemAdvise(list, l0->device, device, 4096,
                                          ZE_MEMORY_ADVICE_SET_READ_MOSTLY));
    CHECK_OK(zeCommandListAppendMemoryCopyFromContext(list, back, l0->context, device, 2048, NULL,
                                                      0, NULL));
    CHECK_OK(zeCommandListAppendMemoryCopy(list, back + 2048, device + 2048, 2048, NULL, 0, NULL));
    CHECK_OK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    /* Region: 16x4 bytes from host (pitch 64, origin 8,2) to back (pitch 32, origin 0,0) slice 3.
     */
    ze_copy_region_t src_region = {8, 2, 0, 16, 4, 1};
    ze_copy_region_t dst_region = {0, 0, 3, 16, 4, 1};
    CHECK_OK(zeCommandListAppendMemoryCopyRegion(list, back + 3000, &dst_region, 32, 128, host,
                                                 &src_region, 64, 4096, NULL, 0, NULL));
    run_and_wait(l0, list);
    for (int i = 0; i < 1024; i++)
        CHECK(back[i] == (uint8_t)(i * 7));
    for (int i = 1024; i < 2048; i++)
        CHECK(back[i] == ((const uint8_t *)&pattern)[i % 4]);
    for (int y = 0; y < 4; y++) {
        for (int x = 0; x < 16; x++)
            CHECK(back[3000 + 3 * 128 + y * 32 + x] == (uint8_t)(((2 + y) * 64 + 8 + x) * 7));
    }
    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeMemFree(l0->context, host));
    CHECK_OK(zeMemFree(l0->context, device));
    CHECK_OK(zeMemFree(l0->context, back));
}

static void test_kernel_queries(struct l0 *l0)
{
    ze_kernel_handle_t vadd = l0_kernel(l0, "zesim_vadd_f32");
    ze_kernel_handle_t other = l0_kernel(l0, "my_app_kernel");
    size_t size = 0;
    CHECK_OK(zeKernelGetName(vadd, &size, NULL));
    CHECK(size == strlen("zesim_vadd_f32") + 1);
    char name[64];
    CHECK_OK(zeKernelGetName(vadd, &size, name));
    CHECK(strcmp(name, "zesim_vadd_f32") == 0);
    size = sizeof(name);
    CHECK_OK(zeKernelGetName(other, &size, name));
    CHECK(strcmp(name, "my_app_kernel") == 0);
    ze_kernel_properties_t props = {
        ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, {{0}, {0}}};
    CHECK_OK(zeKernelGetProperties(vadd, &props));
    CHECK(props.numKernelArgs == 3);
    CHECK(props.maxSubgroupSize > 0);
    uint32_t gx, gy, gz;
    CHECK_OK(zeKernelSuggestGroupSize(vadd, 1000, 6, 1, &gx, &gy, &gz));
    CHECK(1000 % gx == 0 && 6 % gy == 0 && gz == 1 && gx * gy * gz <= 1024);
    uint32_t names = 0;
    CHECK_OK(zeModuleGetKernelNames(l0->module, &names, NULL));
    CHECK(names == 3);
    CHECK_OK(zeKernelDestroy(vadd));
    CHECK_OK(zeKernelDestroy(other));
}

int main(void)
{
    struct l0 l0;
    l0_open(&l0);
    test_vadd_and_fill(&l0);
    test_copies(&l0);
    test_kernel_queries(&l0);
    l0_close(&l0);
    return check_pass("test_compute");
}
