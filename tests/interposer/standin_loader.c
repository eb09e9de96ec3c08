/*
 * standin_loader: a stand-in for a Level Zero loader newer than the headers zeprof was built with.
 * Its SONAME is libze_loader.so.1; it exports zeInit, zeDriverGet (no driver) and one function no
 * header declares, zeZeprofStandInExtra, which the shim therefore does not wrap. Tests point
 * ZEPROF_LOADER at it (shim_test.py newer-loader).
 */
#include <level_zero/ze_api.h>

ZE_APIEXPORT ze_result_t ZE_APICALL zeZeprofStandInExtra(uint32_t *value);

ze_result_t ZE_APICALL zeInit(ze_init_flags_t flags)
{
    (void)flags;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers)
{
    (void)phDrivers;
    if (pCount == NULL)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *pCount = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeZeprofStandInExtra(uint32_t *value)
{
    if (value == NULL)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *value = 42;
    return ZE_RESULT_SUCCESS;
}
