/*
 * modern_common.c: see modern_common.h.
 */
#include "modern_common.h" /* the build defines _GNU_SOURCE, which dladdr needs */

#include <dlfcn.h>
#include <string.h>

ze_driver_handle_t modern_init_drivers(modern_init_drivers_fn init_drivers)
{
    ze_init_driver_type_desc_t desc = {ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC, NULL,
                                       ZE_INIT_DRIVER_TYPE_FLAG_GPU};
    uint32_t count = 0;
    CHECK(init_drivers != NULL);
    CHECK_OK(init_drivers(&count, NULL, &desc));
    CHECK(count == 1);
    ze_driver_handle_t driver = NULL;
    CHECK_OK(init_drivers(&count, &driver, &desc));
    CHECK(count == 1 && driver != NULL);
    return driver;
}

void modern_open(struct l0 *l0, ze_driver_handle_t driver)
{
    memset(l0, 0, sizeof(*l0));
    l0->driver = driver;
    l0->device_count = 16;
    CHECK_OK(zeDeviceGet(driver, &l0->device_count, l0->devices));
    CHECK(l0->device_count >= 1);
    l0->device = l0->devices[0];
    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    CHECK_OK(zeContextCreate(driver, &context_desc, &l0->context));
    static const uint8_t binary[] = {0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0}; /* SPIR-V magic only */
    ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV,
                                    sizeof(binary), binary, NULL, NULL};
    CHECK_OK(zeModuleCreate(l0->context, l0->device, &module_desc, &l0->module, NULL));
}

ze_command_list_handle_t modern_in_order_list(struct l0 *l0)
{
    return l0_immediate(l0, l0->device, 0, ZE_COMMAND_QUEUE_FLAG_IN_ORDER);
}

ze_event_pool_handle_t modern_counter_based_pool(struct l0 *l0, ze_event_pool_flags_t flags,
                                                 uint32_t count)
{
    ze_event_pool_counter_based_exp_desc_t counter_based = {
        ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC, NULL,
        ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE};
    ze_event_pool_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, &counter_based,
                                 ZE_EVENT_POOL_FLAG_HOST_VISIBLE | flags, count};
    ze_event_pool_handle_t pool = NULL;
    CHECK_OK(zeEventPoolCreate(l0->context, &desc, 0, NULL, &pool));
    return pool;
}

void *modern_extension(ze_driver_handle_t driver, const char *name)
{
    void *function = NULL;
    if (zeDriverGetExtensionFunctionAddress(driver, name, &function) != ZE_RESULT_SUCCESS)
        return NULL;
    return function;
}

const char *modern_object_of(void *function)
{
    Dl_info info;
    if (!function || !dladdr(function, &info) || !info.dli_fname)
        return "?";
    return info.dli_fname;
}
