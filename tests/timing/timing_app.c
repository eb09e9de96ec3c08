/*
 * timing_app.c: the fixture of timing_app.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "timing_app.h"

void app_check(bool ok, const char *what, const char *file, int line)
{
    if (ok)
        return;
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
    exit(1);
}

void app_check_result(ze_result_t result, const char *what, const char *file, int line)
{
    if (result == ZE_RESULT_SUCCESS)
        return;
    fprintf(stderr, "FAIL %s:%d: %s returned 0x%x\n", file, line, what, (unsigned)result);
    exit(1);
}

void app_open(struct app *app)
{
    uint32_t count = 1;
    APP_OK(zeInit(0));
    APP_OK(zeDriverGet(&count, &app->driver));
    count = 1;
    APP_OK(zeDeviceGet(app->driver, &count, &app->device));
    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    APP_OK(zeContextCreate(app->driver, &context_desc, &app->context));
    static const uint8_t binary[4] = {0x7f, 'S', 'I', 'M'};
    ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC,
                                    NULL,
                                    ZE_MODULE_FORMAT_NATIVE,
                                    sizeof binary,
                                    binary,
                                    NULL,
                                    NULL};
    APP_OK(zeModuleCreate(app->context, app->device, &module_desc, &app->module, NULL));
    ze_kernel_desc_t kernel_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "zesim_spin"};
    APP_OK(zeKernelCreate(app->module, &kernel_desc, &app->spin));
    APP_OK(zeKernelSetGroupSize(app->spin, 1, 1, 1));
    app_set_spin(app, 1000);
}

void app_close(struct app *app)
{
    APP_OK(zeKernelDestroy(app->spin));
    APP_OK(zeModuleDestroy(app->module));
    APP_OK(zeContextDestroy(app->context));
}

ze_command_queue_handle_t app_queue(struct app *app, uint32_t ordinal, uint32_t index)
{
    ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                    NULL,
                                    ordinal,
                                    index,
                                    0,
                                    ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                    ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = NULL;
    APP_OK(zeCommandQueueCreate(app->context, app->device, &desc, &queue));
    return queue;
}

ze_command_list_handle_t app_list(struct app *app, uint32_t ordinal, bool in_order)
{
    ze_command_list_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, ordinal,
                                   in_order ? APP_LIST_IN_ORDER : 0};
    ze_command_list_handle_t list = NULL;
    APP_OK(zeCommandListCreate(app->context, app->device, &desc, &list));
    return list;
}

ze_command_list_handle_t app_immediate(struct app *app, uint32_t ordinal, bool in_order)
{
    ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                    NULL,
                                    ordinal,
                                    0,
                                    in_order ? APP_QUEUE_IN_ORDER : 0,
                                    ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                    ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list = NULL;
    APP_OK(zeCommandListCreateImmediate(app->context, app->device, &desc, &list));
    return list;
}

ze_event_pool_handle_t app_pool(struct app *app, ze_event_pool_flags_t flags, uint32_t count)
{
    ze_event_pool_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                                 flags | ZE_EVENT_POOL_FLAG_HOST_VISIBLE, count};
    ze_event_pool_handle_t pool = NULL;
    APP_OK(zeEventPoolCreate(app->context, &desc, 0, NULL, &pool));
    return pool;
}

ze_event_handle_t app_event(ze_event_pool_handle_t pool, uint32_t index)
{
    ze_event_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, index, ZE_EVENT_SCOPE_FLAG_HOST,
                            ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t event = NULL;
    APP_OK(zeEventCreate(pool, &desc, &event));
    return event;
}

void *app_host_memory(struct app *app, size_t size)
{
    ze_host_mem_alloc_desc_t desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *memory = NULL;
    APP_OK(zeMemAllocHost(app->context, &desc, size, 64, &memory));
    return memory;
}

void app_set_spin(struct app *app, uint64_t ns)
{
    APP_OK(zeKernelSetArgumentValue(app->spin, 0, sizeof ns, &ns));
}

ze_group_count_t app_one_group(void)
{
    ze_group_count_t groups = {1, 1, 1};
    return groups;
}
