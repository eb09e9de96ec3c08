/*
 * timing_append.c: the hooks around every profiled append, and the execute prologue.
 *
 * Pre hook: take a tracer-owned timestamp event ("inj") from the context's pool and pass it to
 * the driver as the signal event in place of the application's; open a slot for it on the list.
 * Post hook: if the driver refused the append, give inj back and close the slot; else emit
 * `append` (still between the call's entry and exit) and re-expose the application's own event
 * on the same list:
 * zeCommandListAppendSignalEvent(user) on an in-order list (cheaper), elsewhere
 * zeCommandListAppendBarrier(signal=user, wait={inj}) (keeps the ordering the application
 * expects). No application event: nothing to re-expose.
 *
 * An application event from a KERNEL_TIMESTAMP pool is not swapped: the application may read its
 * own timestamps, and a re-exposing signal or barrier would hand it that command's times instead
 * of the kernel's. The slot then reads the application's event, read-only, at the next drain.
 *
 * Any failure on the engine's side (no pool, no memory) means this append is not profiled; the
 * application's arguments and result are then exactly its own.
 */
#include <stdlib.h>

#include "timing_internal.h"
#include "zeprof_api.h"
#include "zeprof_device.h"

/* Completed slots an append reads on its way (keeps memory bounded for programs that never
 * synchronize, at O(1) per append). */
#define TIMING_APPEND_DRAIN 2u

struct append_info {
    const char *kind;
    const char *name;
    uint64_t bytes;
    uint64_t groups;
};

/* What a few appends record besides `append`, each in its own event so that the others (kernel
 * launches above all) carry none of it: a copy's or fill's pointers (`transfer`: the merger's
 * memory traffic by direction), a launch's group count (`kernel_shape`, timing_shape.c). */
struct append_detail {
    const void *dst, *src;
    bool launch; /* a kernel launch: groups is its group count, NULL when not readable here */
    const ze_group_count_t *groups;
};

static void append_pre(ze_command_list_handle_t handle, ze_event_handle_t *signal,
                       struct zeprof_hook_ctx *ctx)
{
    ctx->data = NULL;
    if (!timing_enabled())
        return;
    pthread_rwlock_rdlock(&timing_registry_lock);
    struct timing_list *list = timing_registry_list(handle);
    if (!list)
        goto end;
    ze_event_handle_t user = *signal;
    /* Not a live event (a destroyed event, another kind of handle): the call goes to the driver
     * untouched, so the application gets the driver's own error. */
    if (user && !timing_registry_event_alive(user))
        goto end;
    const struct timing_app_event *record = user ? timing_registry_app_event(user) : NULL;
    bool app_timestamps = record != NULL;
    /* Re-signalling the application's timestamp event: read (or lose) the earlier use first,
     * before taking this list's mutex (the earlier use may be on this very list). */
    if (app_timestamps)
        timing_resolve_app_event(user);

    pthread_mutex_lock(&list->mutex);
    timing_drain_some_locked(list, TIMING_APPEND_DRAIN);
    struct timing_slot *slot = timing_slot_add(list);
    if (!slot)
        goto unlock;
    slot->user_event = user;
    if (app_timestamps) {
        slot->app_event = user;
        /* Still signalled from an earlier command (reused without a reset): this command's
         * completion cannot be told apart, so its timing is lost rather than misattributed.
         * Not so for a counter-based event: this append makes it show this command only
         * (unsignalled until it completes), and its earlier use was read just above. */
        if (!record->counter_based && zeprof_real.zeEventQueryStatus(user) == ZE_RESULT_SUCCESS)
            slot->lost = true;
    } else {
        slot->inj = timing_take_inj_locked(list);
        if (!slot->inj) {
            timing_slot_remove(list, slot);
            goto unlock;
        }
        *signal = slot->inj->event;
    }
    slot->call_id = ctx->call_id ? ctx->call_id : timing_next_call_id();
    ctx->data = slot;
unlock:
    pthread_mutex_unlock(&list->mutex);
end:
    pthread_rwlock_unlock(&timing_registry_lock);
}

/* Under the registry lock: `append` links the call to its timings; emitted only for an append
 * the driver accepted, so that every `append` gets one timing per execution. */
static void emit_append(const struct timing_list *list, const struct timing_slot *slot,
                        const struct append_info *info, ze_kernel_handle_t kernel,
                        const struct append_detail *detail)
{
    const char *name = info->name;
    if (kernel) {
        const struct timing_kernel *record = timing_registry_kernel(kernel);
        if (record) {
            name = record->name;
            if (detail && detail->launch)
                timing_shape_record(record, slot->call_id, detail->groups);
        }
    }
    if (detail && !detail->launch)
        lttng_ust_tracepoint(zeprof_device, transfer, slot->call_id,
                             (uint64_t)(uintptr_t)detail->dst, (uint64_t)(uintptr_t)detail->src);
    lttng_ust_tracepoint(zeprof_device, append, slot->call_id,
                         timing_handle_bits(list->device->handle),
                         timing_handle_bits(list->context_handle), timing_handle_bits(list->handle),
                         info->kind, name, info->bytes, info->groups);
}

static void append_post(ze_command_list_handle_t handle, ze_event_handle_t *signal,
                        const struct append_info *info, ze_kernel_handle_t kernel,
                        const struct append_detail *detail, struct zeprof_hook_ctx *ctx,
                        ze_result_t result)
{
    struct timing_slot *slot = ctx->data;
    if (!slot)
        return;
    pthread_rwlock_rdlock(&timing_registry_lock);
    struct timing_list *list = timing_registry_list(handle);
    if (!list)
        goto end;
    *signal = slot->user_event;
    if (result != ZE_RESULT_SUCCESS) {
        pthread_mutex_lock(&list->mutex);
        if (slot->inj)
            timing_give_back_inj_locked(list, slot->inj); /* never submitted */
        slot->inj = NULL;
        timing_slot_remove(list, slot);
        pthread_mutex_unlock(&list->mutex);
        goto end;
    }
    emit_append(list, slot, info, kernel, detail);
    /* The slot is not armed yet, so no drain touches it: its fields are ours to read. */
    if (slot->inj && slot->user_event) {
        ze_event_handle_t inj = slot->inj->event;
        ze_result_t exposed = ZE_RESULT_ERROR_UNKNOWN;
        if (list->in_order)
            exposed = zeprof_real.zeCommandListAppendSignalEvent(handle, slot->user_event);
        if (exposed != ZE_RESULT_SUCCESS && !list->immediate) {
            /* Regular lists: a barrier that waits on nothing but what precedes it, never on inj.
             * The harvest resets inj on the device between executions, and an execution of the
             * same list on another queue must never find a command waiting on it. */
            exposed = zeprof_real.zeCommandListAppendBarrier(handle, slot->user_event, 0, NULL);
        } else if (exposed != ZE_RESULT_SUCCESS) {
            exposed = zeprof_real.zeCommandListAppendBarrier(handle, slot->user_event, 1, &inj);
            /* The barrier waits on inj: it must not be reset before the barrier has run. */
            slot->waited_on = exposed == ZE_RESULT_SUCCESS;
        }
        /* Last resort, so that the application's event is signalled at all. */
        if (exposed != ZE_RESULT_SUCCESS && !list->in_order)
            zeprof_real.zeCommandListAppendSignalEvent(handle, slot->user_event);
    }
    pthread_mutex_lock(&list->mutex);
    slot->armed = true;
    if (!list->immediate)
        list->layout++; /* the harvest must read this slot too */
    if (slot->app_event && list->immediate) {
        pthread_mutex_lock(&timing_app_event_mutex);
        struct timing_app_event *record = timing_registry_app_event(slot->app_event);
        if (record) {
            record->pending = slot;
            record->pending_list = list;
        }
        pthread_mutex_unlock(&timing_app_event_mutex);
    }
    pthread_mutex_unlock(&list->mutex);
end:
    pthread_rwlock_unlock(&timing_registry_lock);
}

static uint64_t group_total(const ze_group_count_t *groups)
{
    if (!groups)
        return 0;
    return (uint64_t)groups->groupCountX * groups->groupCountY * groups->groupCountZ;
}

static uint64_t region_bytes(const ze_copy_region_t *region)
{
    if (!region)
        return 0;
    uint64_t height = region->height ? region->height : 1;
    uint64_t depth = region->depth ? region->depth : 1;
    return (uint64_t)region->width * height * depth;
}

/* Each profiled append: the common pre hook, and a post hook that describes the append (and, for
 * some, the details of append_detail). */
#define TIMING_APPEND_HOOKS_DETAIL(function, signal_member, kernel_expr, detail_expr, ...)         \
    void zeprof_hook_pre_##function(struct zeprof_args_##function *args,                           \
                                    struct zeprof_hook_ctx *ctx)                                   \
    {                                                                                              \
        append_pre(args->hCommandList, &args->signal_member, ctx);                                 \
    }                                                                                              \
    void zeprof_hook_post_##function(struct zeprof_args_##function *args,                          \
                                     struct zeprof_hook_ctx *ctx, ze_result_t result)              \
    {                                                                                              \
        if (!ctx->data)                                                                            \
            return;                                                                                \
        const struct append_info info = __VA_ARGS__;                                               \
        append_post(args->hCommandList, &args->signal_member, &info, (kernel_expr), (detail_expr), \
                    ctx, result);                                                                  \
    }
#define TIMING_APPEND_HOOKS(function, signal_member, kernel_expr, ...)                             \
    TIMING_APPEND_HOOKS_DETAIL(function, signal_member, kernel_expr, NULL, __VA_ARGS__)
/* A launch's group count, a copy's or fill's pointers. */
#define LAUNCH_DETAIL(groups) (&(const struct append_detail){NULL, NULL, true, (groups)})
#define TRANSFER_DETAIL(dst, src) (&(const struct append_detail){(dst), (src), false, NULL})

TIMING_APPEND_HOOKS_DETAIL(zeCommandListAppendLaunchKernel, hSignalEvent, args->hKernel,
                           LAUNCH_DETAIL(args->pLaunchFuncArgs),
                           {"kernel", "zeCommandListAppendLaunchKernel", 0,
                            group_total(args->pLaunchFuncArgs)})
TIMING_APPEND_HOOKS_DETAIL(zeCommandListAppendLaunchCooperativeKernel, hSignalEvent,
                           args->hKernel, LAUNCH_DETAIL(args->pLaunchFuncArgs),
                           {"kernel", "zeCommandListAppendLaunchCooperativeKernel", 0,
                            group_total(args->pLaunchFuncArgs)})
/* Indirect launches: the group counts live in device memory, unreadable here (the shape says
 * so, rather than leave the kernel's previous shape to be carried forward). */
TIMING_APPEND_HOOKS_DETAIL(zeCommandListAppendLaunchKernelIndirect, hSignalEvent, args->hKernel,
                           LAUNCH_DETAIL(NULL),
                           {"kernel", "zeCommandListAppendLaunchKernelIndirect", 0, 0})
TIMING_APPEND_HOOKS_DETAIL(zeCommandListAppendLaunchMultipleKernelsIndirect, hSignalEvent,
                           (args->numKernels == 1 && args->phKernels) ? args->phKernels[0] : NULL,
                           LAUNCH_DETAIL(NULL),
                           {"kernel", "zeCommandListAppendLaunchMultipleKernelsIndirect", 0, 0})
TIMING_APPEND_HOOKS_DETAIL(zeCommandListAppendMemoryCopy, hSignalEvent, NULL,
                           TRANSFER_DETAIL(args->dstptr, args->srcptr),
                           {"copy", "zeCommandListAppendMemoryCopy", args->size, 0})
TIMING_APPEND_HOOKS_DETAIL(zeCommandListAppendMemoryCopyRegion, hSignalEvent, NULL,
                           TRANSFER_DETAIL(args->dstptr, args->srcptr),
                           {"copy_region", "zeCommandListAppendMemoryCopyRegion",
                            region_bytes(args->dstRegion ? args->dstRegion : args->srcRegion), 0})
TIMING_APPEND_HOOKS_DETAIL(zeCommandListAppendMemoryCopyFromContext, hSignalEvent, NULL,
                           TRANSFER_DETAIL(args->dstptr, args->srcptr),
                           {"copy", "zeCommandListAppendMemoryCopyFromContext", args->size, 0})
TIMING_APPEND_HOOKS_DETAIL(zeCommandListAppendMemoryFill, hSignalEvent, NULL,
                           TRANSFER_DETAIL(args->ptr, args->pattern),
                           {"fill", "zeCommandListAppendMemoryFill", args->size, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendImageCopy, hSignalEvent, NULL,
                    {"image_copy", "zeCommandListAppendImageCopy", 0, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendImageCopyRegion, hSignalEvent, NULL,
                    {"image_copy", "zeCommandListAppendImageCopyRegion", 0, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendImageCopyToMemory, hSignalEvent, NULL,
                    {"image_copy", "zeCommandListAppendImageCopyToMemory", 0, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendImageCopyFromMemory, hSignalEvent, NULL,
                    {"image_copy", "zeCommandListAppendImageCopyFromMemory", 0, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendImageCopyToMemoryExt, hSignalEvent, NULL,
                    {"image_copy", "zeCommandListAppendImageCopyToMemoryExt", 0, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendImageCopyFromMemoryExt, hSignalEvent, NULL,
                    {"image_copy", "zeCommandListAppendImageCopyFromMemoryExt", 0, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendBarrier, hSignalEvent, NULL,
                    {"barrier", "zeCommandListAppendBarrier", 0, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendMemoryRangesBarrier, hSignalEvent, NULL,
                    {"ranges_barrier", "zeCommandListAppendMemoryRangesBarrier", 0, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendWriteGlobalTimestamp, hSignalEvent, NULL,
                    {"timestamps", "zeCommandListAppendWriteGlobalTimestamp", 0, 0})
TIMING_APPEND_HOOKS(zeCommandListAppendQueryKernelTimestamps, hSignalEvent, NULL,
                    {"timestamps", "zeCommandListAppendQueryKernelTimestamps", 0, 0})

/* zeCommandListAppendSignalEvent's event is required: without one the application's call is
 * invalid, and substituting inj would make it valid. */
void zeprof_hook_pre_zeCommandListAppendSignalEvent(
    struct zeprof_args_zeCommandListAppendSignalEvent *args, struct zeprof_hook_ctx *ctx)
{
    ctx->data = NULL;
    if (args->hEvent)
        append_pre(args->hCommandList, &args->hEvent, ctx);
}

void zeprof_hook_post_zeCommandListAppendSignalEvent(
    struct zeprof_args_zeCommandListAppendSignalEvent *args, struct zeprof_hook_ctx *ctx,
    ze_result_t result)
{
    const struct append_info info = {"signal", "zeCommandListAppendSignalEvent", 0, 0};
    if (ctx->data)
        append_post(args->hCommandList, &args->hEvent, &info, NULL, NULL, ctx, result);
}

/* Appends found in the headers without hand-written hooks (interposer/gen/classify.py): what was
 * appended is only known by the function's name. */
void timing_append_pre_generic(ze_command_list_handle_t list, ze_event_handle_t *signal,
                               struct zeprof_hook_ctx *ctx)
{
    append_pre(list, signal, ctx);
}

void timing_append_post_generic(ze_command_list_handle_t list, ze_event_handle_t *signal,
                                const char *function, struct zeprof_hook_ctx *ctx,
                                ze_result_t result)
{
    if (!ctx->data)
        return;
    const struct append_info info = {"append", function, 0, 0};
    append_post(list, signal, &info, NULL, NULL, ctx, result);
}

/* ---------------------------------------------------------------- regular lists ----------- */

void zeprof_hook_post_zeCommandListClose(struct zeprof_args_zeCommandListClose *args,
                                         struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)ctx;
    if (!timing_enabled() || result != ZE_RESULT_SUCCESS)
        return;
    pthread_rwlock_rdlock(&timing_registry_lock);
    struct timing_list *list = timing_registry_list(args->hCommandList);
    if (list && !list->immediate) {
        pthread_mutex_lock(&list->mutex);
        timing_runs_prepare_locked(list);
        pthread_mutex_unlock(&list->mutex);
    }
    pthread_rwlock_unlock(&timing_registry_lock);
}

/* Each profiled regular list gets the tracer's list right after it in the same submission
 * (timing_runs.c); nothing here waits. The application's array is handed back before the exit
 * event records the arguments. */
void zeprof_hook_pre_zeCommandQueueExecuteCommandLists(
    struct zeprof_args_zeCommandQueueExecuteCommandLists *args, struct zeprof_hook_ctx *ctx)
{
    ctx->data = NULL;
    if (!timing_enabled() || !args->phCommandLists)
        return;
    ctx->data =
        timing_execute_begin(args->hCommandQueue, &args->numCommandLists, &args->phCommandLists);
}

void zeprof_hook_post_zeCommandQueueExecuteCommandLists(
    struct zeprof_args_zeCommandQueueExecuteCommandLists *args, struct zeprof_hook_ctx *ctx,
    ze_result_t result)
{
    struct timing_execute *execute = ctx->data;
    if (!execute)
        return;
    timing_execute_end(execute, result == ZE_RESULT_SUCCESS, &args->numCommandLists,
                       &args->phCommandLists);
}

#if defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 9)
/* zeCommandListImmediateAppendCommandListsExp (spec 1.9, hooked when the headers declare it:
 * interposer/gen/classify.py): regular lists executed on an immediate list. Each is one
 * execution, claimed exactly as by zeCommandQueueExecuteCommandLists; the immediate list stands
 * for the queue in the timings. */
void zeprof_hook_pre_zeCommandListImmediateAppendCommandListsExp(
    struct zeprof_args_zeCommandListImmediateAppendCommandListsExp *args,
    struct zeprof_hook_ctx *ctx)
{
    ctx->data = NULL;
    if (!timing_enabled() || !args->phCommandLists)
        return;
    ze_command_queue_handle_t on = (ze_command_queue_handle_t)(void *)args->hCommandListImmediate;
    ctx->data = timing_execute_begin(on, &args->numCommandLists, &args->phCommandLists);
}

void zeprof_hook_post_zeCommandListImmediateAppendCommandListsExp(
    struct zeprof_args_zeCommandListImmediateAppendCommandListsExp *args,
    struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    struct timing_execute *execute = ctx->data;
    if (!execute)
        return;
    timing_execute_end(execute, result == ZE_RESULT_SUCCESS, &args->numCommandLists,
                       &args->phCommandLists);
}
#endif
