/*
 * Functions the shim must wrap that no installed header declares.
 *
 * The loader (libze1) exports a few internal entry points next to the API. The shim must export
 * every symbol the loader exports (a program or layer that dlsym()s one of them through the shim
 * must still reach the loader), so this header declares them in the installed headers' style:
 * the generator parses it like ze_loader.h and emits wrappers that forward to the real loader when
 * it has the function. Signatures follow the loader's source (source/loader/ze_loader_api.h);
 * HMODULE is void * on Linux.
 *
 * The second group: functions newer than the installed headers (spec 1.4) that profiling needs
 * (docs/timing.md): a drain anchor of the device-timing engine. The wrapper forwards to the real loader
 * when it has the function and returns ZE_RESULT_ERROR_UNSUPPORTED_FEATURE otherwise.
 *
 * This file is read by interposer/gen only (never compiled): a declaration here is ignored when an
 * installed header declares the same function, so newer headers take over without an edit.
 */
#ifndef ZEPROF_COMPAT_EXTRA_FUNCTIONS_H
#define ZEPROF_COMPAT_EXTRA_FUNCTIONS_H

#include <level_zero/ze_api.h>
#include <level_zero/loader/ze_loader.h>

ZE_APIEXPORT ze_result_t ZE_APICALL
zeLoaderInit(
    void
    );

ZE_APIEXPORT ze_result_t ZE_APICALL
zelLoaderDriverCheck(
    ze_init_flags_t flags                           ///< [in] initialization flags
    );

ZE_APIEXPORT void* ZE_APICALL
zeLoaderGetTracingHandle(
    void
    );

ZE_APIEXPORT ze_result_t ZE_APICALL
zelLoaderGetVersionsInternal(
    size_t* num_elems,                              ///< [in,out] number of versions
    zel_component_version_t* versions               ///< [out][optional] array of versions
    );

ZE_APIEXPORT ze_result_t ZE_APICALL
zelLoaderTranslateHandleInternal(
    zel_handle_type_t handleType,                   ///< [in] handle type
    void* handleIn,                                 ///< [in] loader handle
    void** handleOut                                ///< [out] driver handle
    );

/* Level Zero 1.6: wait on the host until an immediate command list has completed. */
ZE_APIEXPORT ze_result_t ZE_APICALL
zeCommandListHostSynchronize(
    ze_command_list_handle_t hCommandList,          ///< [in] handle of the immediate command list
    uint64_t timeout                                ///< [in] nanoseconds to wait, UINT64_MAX: forever
    );

#endif
