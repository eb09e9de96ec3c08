/*
 * sim_tables.c: the dispatch-table getters, the library's only exported symbols.
 *
 * The 1.8 loader refuses a driver that lacks any of the 46 getters below (17 ze core tables,
 * 12 zet including TracerExp and Debug, 17 zes), so all are exported even where the table stays
 * empty; the loader answers an empty entry itself. The getters are declared ZE_DLLEXPORT by the
 * ddi headers, which gives them default visibility in this hidden-visibility library. Everything
 * the tables point to is a hidden sim_ function: nothing here is named like an API call, so
 * nothing can bind to a preloaded shim that is.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "sim.h"

/*
 * Version negotiation. The loader asks for a table at its own API version and passes a table of
 * that version's size: the 1.8 loader asks for spec 1.4 tables, the 1.20 loader for spec 1.12
 * ones. A driver built against newer headers than the loader's must write only the members the
 * requested version has (the headers only ever append members), or it writes past the loader's
 * table. The table sizes of spec 1.4 are known (its headers are frozen): `entries_1_4` below.
 * A request between 1.4 and the headers' version gets the 1.4 part only (a member newer than 1.4
 * then stays NULL, which the loader answers with ZE_RESULT_ERROR_UNSUPPORTED_FEATURE).
 */
#define SIM_SAME_SINCE_1_4 SIZE_MAX

static size_t table_bytes(ze_api_version_t version, size_t full, size_t entries_1_4)
{
    if (version >= ZE_API_VERSION_CURRENT || entries_1_4 == SIM_SAME_SINCE_1_4)
        return full;
    size_t old = entries_1_4 * sizeof(void (*)(void));
    return old < full ? old : full;
}

/* Set one member only when the requested table has it. */
#define SIM_SET(table, bytes, member, function)                                                    \
    do {                                                                                           \
        if (offsetof(__typeof__(*(table)), member) + sizeof((table)->member) <= (bytes))          \
            (table)->member = (function);                                                          \
    } while (0)

static ze_result_t check_request(ze_api_version_t version, const void *table)
{
    if (!table)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT))
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    return ZE_RESULT_SUCCESS;
}

/* A table this driver leaves empty: every entry NULL. */
#define SIM_EMPTY_TABLE(getter, table_type, entries_1_4)                                           \
    ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, table_type *table)        \
    {                                                                                              \
        ze_result_t status = check_request(version, table);                                        \
        if (status == ZE_RESULT_SUCCESS)                                                           \
            memset(table, 0, table_bytes(version, sizeof(*table), (entries_1_4)));                 \
        return status;                                                                             \
    }

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t version,
                                                             ze_global_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    table->pfnInit = sim_init;
#if SIM_HEADERS_AT_LEAST(1, 10)
    SIM_SET(table, table_bytes(version, sizeof(*table), 1), pfnInitDrivers, sim_init_drivers);
#endif
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t version,
                                                             ze_driver_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    table->pfnGet = sim_driver_get;
    table->pfnGetApiVersion = sim_driver_get_api_version;
    table->pfnGetProperties = sim_driver_get_properties;
    table->pfnGetIpcProperties = sim_driver_get_ipc_properties;
    table->pfnGetExtensionProperties = sim_driver_get_extension_properties;
    table->pfnGetExtensionFunctionAddress = sim_driver_get_extension_function_address;
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t version,
                                                             ze_device_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    memset(table, 0, table_bytes(version, sizeof(*table), 18));
    table->pfnGet = sim_device_get;
    table->pfnGetSubDevices = sim_device_get_sub_devices;
    table->pfnGetProperties = sim_device_get_properties;
    table->pfnGetComputeProperties = sim_device_get_compute_properties;
    table->pfnGetModuleProperties = sim_device_get_module_properties;
    table->pfnGetCommandQueueGroupProperties = sim_device_get_queue_group_properties;
    table->pfnGetMemoryProperties = sim_device_get_memory_properties;
    table->pfnGetMemoryAccessProperties = sim_device_get_memory_access_properties;
    table->pfnGetCacheProperties = sim_device_get_cache_properties;
    table->pfnGetImageProperties = sim_device_get_image_properties;
    table->pfnGetExternalMemoryProperties = sim_device_get_external_memory_properties;
    table->pfnGetP2PProperties = sim_device_get_p2p_properties;
    table->pfnCanAccessPeer = sim_device_can_access_peer;
    table->pfnGetStatus = sim_device_get_status;
    table->pfnGetGlobalTimestamps = sim_device_get_global_timestamps;
#if SIM_HEADERS_AT_LEAST(1, 12)
    SIM_SET(table, table_bytes(version, sizeof(*table), 18), pfnImportExternalSemaphoreExt,
            sim_semaphore_import);
    SIM_SET(table, table_bytes(version, sizeof(*table), 18), pfnReleaseExternalSemaphoreExt,
            sim_semaphore_release);
#endif
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t version,
                                                              ze_context_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    memset(table, 0, table_bytes(version, sizeof(*table), SIM_SAME_SINCE_1_4));
    table->pfnCreate = sim_context_create;
    table->pfnCreateEx = sim_context_create_ex;
    table->pfnDestroy = sim_context_destroy;
    table->pfnGetStatus = sim_context_get_status;
    table->pfnSystemBarrier = sim_context_system_barrier;
    table->pfnMakeMemoryResident = sim_context_make_memory_resident;
    table->pfnEvictMemory = sim_context_make_memory_resident; /* both only validate */
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL
zeGetCommandQueueProcAddrTable(ze_api_version_t version, ze_command_queue_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    table->pfnCreate = sim_queue_create;
    table->pfnDestroy = sim_queue_destroy;
    table->pfnExecuteCommandLists = sim_queue_execute_command_lists;
    table->pfnSynchronize = sim_queue_synchronize;
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetCommandListProcAddrTable(ze_api_version_t version,
                                                                  ze_command_list_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    memset(table, 0, table_bytes(version, sizeof(*table), 28)); /* image copies stay unsupported */
    table->pfnCreate = sim_list_create;
    table->pfnCreateImmediate = sim_list_create_immediate;
    table->pfnDestroy = sim_list_destroy;
    table->pfnClose = sim_list_close;
    table->pfnReset = sim_list_reset;
    table->pfnAppendWriteGlobalTimestamp = sim_list_append_write_global_timestamp;
    table->pfnAppendBarrier = sim_list_append_barrier;
    table->pfnAppendMemoryRangesBarrier = sim_list_append_memory_ranges_barrier;
    table->pfnAppendMemoryCopy = sim_list_append_memory_copy;
    table->pfnAppendMemoryFill = sim_list_append_memory_fill;
    table->pfnAppendMemoryCopyRegion = sim_list_append_memory_copy_region;
    table->pfnAppendMemoryCopyFromContext = sim_list_append_memory_copy_from_context;
    table->pfnAppendMemoryPrefetch = sim_list_append_memory_prefetch;
    table->pfnAppendMemAdvise = sim_list_append_mem_advise;
    table->pfnAppendSignalEvent = sim_list_append_signal_event;
    table->pfnAppendWaitOnEvents = sim_list_append_wait_on_events;
    table->pfnAppendEventReset = sim_list_append_event_reset;
    table->pfnAppendQueryKernelTimestamps = sim_list_append_query_kernel_timestamps;
    table->pfnAppendLaunchKernel = sim_list_append_launch_kernel;
    table->pfnAppendLaunchCooperativeKernel = sim_list_append_launch_cooperative_kernel;
    table->pfnAppendLaunchKernelIndirect = sim_list_append_launch_kernel_indirect;
    table->pfnAppendLaunchMultipleKernelsIndirect =
        sim_list_append_launch_multiple_kernels_indirect;
#if SIM_HEADERS_AT_LEAST(1, 6)
    SIM_SET(table, table_bytes(version, sizeof(*table), 28), pfnHostSynchronize,
            sim_list_host_synchronize);
#endif
#if SIM_HEADERS_AT_LEAST(1, 12)
    SIM_SET(table, table_bytes(version, sizeof(*table), 28), pfnAppendSignalExternalSemaphoreExt,
            sim_list_append_signal_semaphores);
    SIM_SET(table, table_bytes(version, sizeof(*table), 28), pfnAppendWaitExternalSemaphoreExt,
            sim_list_append_wait_semaphores);
#endif
    if (sim_host_time_enabled())
        sim_host_time_list_table(table);
    return ZE_RESULT_SUCCESS;
}

#if SIM_HEADERS_AT_LEAST(1, 9)
/* Spec 1.9: a table of its own, which a 1.4 loader never asks for. */
ZE_DLLEXPORT ze_result_t ZE_APICALL
zeGetCommandListExpProcAddrTable(ze_api_version_t version, ze_command_list_exp_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (version < ZE_API_VERSION_1_9)
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    memset(table, 0, sizeof(*table));
    table->pfnImmediateAppendCommandListsExp = sim_list_immediate_append_command_lists;
    return ZE_RESULT_SUCCESS;
}
#endif

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetFenceProcAddrTable(ze_api_version_t version,
                                                            ze_fence_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    table->pfnCreate = sim_fence_create;
    table->pfnDestroy = sim_fence_destroy;
    table->pfnHostSynchronize = sim_fence_host_synchronize;
    table->pfnQueryStatus = sim_fence_query_status;
    table->pfnReset = sim_fence_reset;
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventPoolProcAddrTable(ze_api_version_t version,
                                                                ze_event_pool_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    memset(table, 0, table_bytes(version, sizeof(*table), 5)); /* no IPC */
    table->pfnCreate = sim_event_pool_create;
    table->pfnDestroy = sim_event_pool_destroy;
    if (sim_host_time_enabled())
        sim_host_time_event_pool_table(table);
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventProcAddrTable(ze_api_version_t version,
                                                            ze_event_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    table->pfnCreate = sim_event_create;
    table->pfnDestroy = sim_event_destroy;
    table->pfnHostSignal = sim_event_host_signal;
    table->pfnHostSynchronize = sim_event_host_synchronize;
    table->pfnQueryStatus = sim_event_query_status;
    table->pfnHostReset = sim_event_host_reset;
    table->pfnQueryKernelTimestamp = sim_event_query_kernel_timestamp;
    if (sim_host_time_enabled())
        sim_host_time_event_table(table);
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetModuleProcAddrTable(ze_api_version_t version,
                                                             ze_module_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    memset(table, 0, table_bytes(version, sizeof(*table), SIM_SAME_SINCE_1_4));
    table->pfnCreate = sim_module_create;
    table->pfnDestroy = sim_module_destroy;
    table->pfnGetNativeBinary = sim_module_get_native_binary;
    table->pfnGetKernelNames = sim_module_get_kernel_names;
    table->pfnGetProperties = sim_module_get_properties;
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL
zeGetModuleBuildLogProcAddrTable(ze_api_version_t version, ze_module_build_log_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    table->pfnDestroy = sim_module_build_log_destroy;
    table->pfnGetString = sim_module_build_log_get_string;
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetKernelProcAddrTable(ze_api_version_t version,
                                                             ze_kernel_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    table->pfnCreate = sim_kernel_create;
    table->pfnDestroy = sim_kernel_destroy;
    table->pfnSetCacheConfig = sim_kernel_set_cache_config;
    table->pfnSetGroupSize = sim_kernel_set_group_size;
    table->pfnSuggestGroupSize = sim_kernel_suggest_group_size;
    table->pfnSuggestMaxCooperativeGroupCount = sim_kernel_suggest_max_cooperative_group_count;
    table->pfnSetArgumentValue = sim_kernel_set_argument_value;
    table->pfnSetIndirectAccess = sim_kernel_set_indirect_access;
    table->pfnGetIndirectAccess = sim_kernel_get_indirect_access;
    table->pfnGetSourceAttributes = sim_kernel_get_source_attributes;
    table->pfnGetProperties = sim_kernel_get_properties;
    table->pfnGetName = sim_kernel_get_name;
    return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t version,
                                                          ze_mem_dditable_t *table)
{
    ze_result_t status = check_request(version, table);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    memset(table, 0, table_bytes(version, sizeof(*table), 10)); /* no IPC */
    table->pfnAllocShared = sim_mem_alloc_shared;
    table->pfnAllocDevice = sim_mem_alloc_device;
    table->pfnAllocHost = sim_mem_alloc_host;
    table->pfnFree = sim_mem_free;
    table->pfnFreeExt = sim_mem_free_ext;
    table->pfnGetAllocProperties = sim_mem_get_alloc_properties;
    table->pfnGetAddressRange = sim_mem_get_address_range;
    return ZE_RESULT_SUCCESS;
}

SIM_EMPTY_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t, 4)
SIM_EMPTY_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t, SIM_SAME_SINCE_1_4)

/* Tools (zet): no metrics, no debugger, no driver-side tracer. */
SIM_EMPTY_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t, 11)

/* Sysman (zes): what a telemetry sampler reads (sim_sysman.c), unless ZESIM_SYSMAN=0. */
#define SIM_SYSMAN_TABLE_BEGIN(getter, table_type, entries_1_4)                                    \
    ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, table_type *table)        \
    {                                                                                              \
        ze_result_t status = check_request(version, table);                                        \
        if (status != ZE_RESULT_SUCCESS)                                                           \
            return status;                                                                         \
        size_t bytes = table_bytes(version, sizeof(*table), (entries_1_4));                        \
        memset(table, 0, bytes);                                                                   \
        if (!sim_sysman_tables_wanted())                                                           \
            return ZE_RESULT_SUCCESS;
#define SIM_SYSMAN_TABLE_END                                                                       \
    return ZE_RESULT_SUCCESS;                                                                      \
    }

SIM_SYSMAN_TABLE_BEGIN(zesGetDeviceProcAddrTable, zes_device_dditable_t, 29)
SIM_SET(table, bytes, pfnEnumEngineGroups, sim_sysman_enum_engine_groups);
SIM_SET(table, bytes, pfnEnumFrequencyDomains, sim_sysman_enum_frequency_domains);
SIM_SET(table, bytes, pfnEnumPowerDomains, sim_sysman_enum_power_domains);
SIM_SET(table, bytes, pfnEnumMemoryModules, sim_sysman_enum_memory_modules);
SIM_SYSMAN_TABLE_END

SIM_SYSMAN_TABLE_BEGIN(zesGetEngineProcAddrTable, zes_engine_dditable_t, 2)
SIM_SET(table, bytes, pfnGetProperties, sim_sysman_engine_get_properties);
SIM_SET(table, bytes, pfnGetActivity, sim_sysman_engine_get_activity);
SIM_SYSMAN_TABLE_END

SIM_SYSMAN_TABLE_BEGIN(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t, SIM_SAME_SINCE_1_4)
SIM_SET(table, bytes, pfnGetProperties, sim_sysman_frequency_get_properties);
SIM_SET(table, bytes, pfnGetState, sim_sysman_frequency_get_state);
SIM_SYSMAN_TABLE_END

SIM_SYSMAN_TABLE_BEGIN(zesGetPowerProcAddrTable, zes_power_dditable_t, SIM_SAME_SINCE_1_4)
SIM_SET(table, bytes, pfnGetEnergyCounter, sim_sysman_power_get_energy_counter);
SIM_SYSMAN_TABLE_END

SIM_SYSMAN_TABLE_BEGIN(zesGetMemoryProcAddrTable, zes_memory_dditable_t, SIM_SAME_SINCE_1_4)
SIM_SET(table, bytes, pfnGetProperties, sim_sysman_memory_get_properties);
SIM_SET(table, bytes, pfnGetState, sim_sysman_memory_get_state);
SIM_SYSMAN_TABLE_END

/* The other management interfaces: none. */
SIM_EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t, 2)
SIM_EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t, 2)
SIM_EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t, 6)
SIM_EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t, SIM_SAME_SINCE_1_4)
SIM_EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t, SIM_SAME_SINCE_1_4)
