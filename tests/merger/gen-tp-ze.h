/* Test-only LTTng-UST provider `zeprof_ze`: a handful of the shim's API events, with exactly the
 * names and fields of docs/tracepoints.md, so the merger can be tested without the real shim; plus
 * one event the merger does not know (`gen_unknown`), so that "unknown events are counted" is
 * testable. The zeprof_device events come from the real provider (tracepoints/zeprof_device.h). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER zeprof_ze

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./gen-tp-ze.h"

#if !defined(GEN_TP_ZE_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define GEN_TP_ZE_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeInit_entry,
    LTTNG_UST_TP_ARGS(uint32_t, flags),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint32_t, flags, flags)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeInit_exit,
    LTTNG_UST_TP_ARGS(uint32_t, result),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint32_t, result, result)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeCommandListAppendLaunchKernel_entry,
    LTTNG_UST_TP_ARGS(uint64_t, hCommandList, uint64_t, hKernel, uint64_t, pLaunchFuncArgs,
        uint64_t, hSignalEvent, uint32_t, numWaitEvents, uint64_t, phWaitEvents),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, hCommandList, hCommandList)
        lttng_ust_field_integer_hex(uint64_t, hKernel, hKernel)
        lttng_ust_field_integer_hex(uint64_t, pLaunchFuncArgs, pLaunchFuncArgs)
        lttng_ust_field_integer_hex(uint64_t, hSignalEvent, hSignalEvent)
        lttng_ust_field_integer(uint32_t, numWaitEvents, numWaitEvents)
        lttng_ust_field_integer_hex(uint64_t, phWaitEvents, phWaitEvents)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeCommandListAppendLaunchKernel_desc,
    LTTNG_UST_TP_ARGS(uint32_t, x, uint32_t, y, uint32_t, z),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, pLaunchFuncArgs_groupCountX, x)
        lttng_ust_field_integer(uint32_t, pLaunchFuncArgs_groupCountY, y)
        lttng_ust_field_integer(uint32_t, pLaunchFuncArgs_groupCountZ, z)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeCommandListAppendLaunchKernel_exit,
    LTTNG_UST_TP_ARGS(uint32_t, result),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint32_t, result, result)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeCommandListAppendMemoryCopy_entry,
    LTTNG_UST_TP_ARGS(uint64_t, hCommandList, uint64_t, dstptr, uint64_t, srcptr, uint64_t, size,
        uint64_t, hSignalEvent, uint32_t, numWaitEvents, uint64_t, phWaitEvents),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, hCommandList, hCommandList)
        lttng_ust_field_integer_hex(uint64_t, dstptr, dstptr)
        lttng_ust_field_integer_hex(uint64_t, srcptr, srcptr)
        lttng_ust_field_integer(uint64_t, size, size)
        lttng_ust_field_integer_hex(uint64_t, hSignalEvent, hSignalEvent)
        lttng_ust_field_integer(uint32_t, numWaitEvents, numWaitEvents)
        lttng_ust_field_integer_hex(uint64_t, phWaitEvents, phWaitEvents)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeCommandListAppendMemoryCopy_exit,
    LTTNG_UST_TP_ARGS(uint32_t, result),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint32_t, result, result)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeEventHostSynchronize_entry,
    LTTNG_UST_TP_ARGS(uint64_t, hEvent, uint64_t, timeout),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, hEvent, hEvent)
        lttng_ust_field_integer(uint64_t, timeout, timeout)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeEventHostSynchronize_exit,
    LTTNG_UST_TP_ARGS(uint32_t, result),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint32_t, result, result)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeCommandQueueExecuteCommandLists_entry,
    LTTNG_UST_TP_ARGS(uint64_t, hCommandQueue, uint32_t, numCommandLists, uint64_t, phCommandLists,
        uint64_t, hFence),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, hCommandQueue, hCommandQueue)
        lttng_ust_field_integer(uint32_t, numCommandLists, numCommandLists)
        lttng_ust_field_integer_hex(uint64_t, phCommandLists, phCommandLists)
        lttng_ust_field_integer_hex(uint64_t, hFence, hFence)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeCommandQueueExecuteCommandLists_exit,
    LTTNG_UST_TP_ARGS(uint32_t, result),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint32_t, result, result)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeDeviceGet_entry,
    LTTNG_UST_TP_ARGS(uint64_t, hDriver, uint64_t, pCount, uint64_t, phDevices),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, hDriver, hDriver)
        lttng_ust_field_integer_hex(uint64_t, pCount, pCount)
        lttng_ust_field_integer_hex(uint64_t, phDevices, phDevices)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, zeDeviceGet_exit,
    LTTNG_UST_TP_ARGS(uint32_t, result, uint32_t, pCount_val, uint64_t, phDevices_val),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint32_t, result, result)
        lttng_ust_field_integer(uint32_t, pCount_val, pCount_val)
        lttng_ust_field_integer_hex(uint64_t, phDevices_val, phDevices_val)))

LTTNG_UST_TRACEPOINT_EVENT(zeprof_ze, gen_unknown,
    LTTNG_UST_TP_ARGS(uint32_t, value),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint32_t, value, value)))

#endif /* GEN_TP_ZE_H */

#include <lttng/tracepoint-event.h>
