/*
 * timing_hooks.c: the hooks that keep the registry true and the drain anchors.
 *
 * The generated wrappers call these with the shim's re-entry guard raised, around the real call
 * (notes: docs/timing.md). Creation hooks run after a successful call and record what the engine
 * needs to know (timestamp pools and their events, lists and whether they are immediate or in
 * order, kernel names, devices); destruction hooks forget it. Drain anchors are every call that
 * proves completion. ZEPROF_PROFILE=0 makes every hook return at once (timing_enabled, in
 * timing_core.c).
 *
 * Nothing here changes what the application sees: results pass through untouched, failures on
 * the engine's side only mean "not profiled".
 */
#include <stdlib.h>

#include "timing_internal.h"
#include "zeprof_api.h"

/* ---------------------------------------------------------------- command lists ---------- */

/* Under the registry lock (read or write), the record already out of the registry: a final drain
 * of what is left, then the record goes. wait_ns: see timing_drain_list_locked. */
static void list_free(struct timing_list *list, uint64_t wait_ns)
{
    pthread_mutex_lock(&list->mutex);
    timing_drain_list_locked(list, true, wait_ns);
    timing_release_slots_locked(list);
    timing_release_stash_locked(list);
    if (!list->immediate)
        timing_runs_release_locked(list, true);
    pthread_mutex_unlock(&list->mutex);
    pthread_mutex_destroy(&list->mutex);
    free(list);
}

static void list_register(ze_command_list_handle_t handle, ze_context_handle_t context,
                          ze_device_handle_t device, uint32_t ordinal, bool immediate,
                          bool in_order)
{
    struct timing_list *list = calloc(1, sizeof *list);
    if (!list)
        return;
    list->handle = handle;
    list->context_handle = context;
    list->ordinal = ordinal;
    list->immediate = immediate;
    list->in_order = in_order;
    pthread_mutex_init(&list->mutex, NULL);

    pthread_rwlock_wrlock(&timing_registry_lock);
    /* A record under this handle is stale (its destroy was not seen): forget it first. */
    struct timing_list *stale = timing_registry_remove_list(handle);
    if (stale)
        list_free(stale, 0);
    bool added = false;
    list->context = timing_registry_context_get_or_add(context);
    list->device = timing_registry_device_get_or_add(device, &added);
    if (added)
        timing_anchor_discover(list->device);
    bool ok = list->context && list->device && timing_registry_add_list(list) == 0;
    pthread_rwlock_unlock(&timing_registry_lock);
    if (!ok) {
        pthread_mutex_destroy(&list->mutex);
        free(list);
    }
}

void zeprof_hook_post_zeCommandListCreate(struct zeprof_args_zeCommandListCreate *args,
                                          struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)ctx;
    if (!timing_enabled() || result != ZE_RESULT_SUCCESS || !args->phCommandList || !args->desc)
        return;
    bool in_order = args->desc->flags & TIMING_COMMAND_LIST_FLAG_IN_ORDER;
    list_register(*args->phCommandList, args->hContext, args->hDevice,
                  args->desc->commandQueueGroupOrdinal, false, in_order);
}

void zeprof_hook_post_zeCommandListCreateImmediate(
    struct zeprof_args_zeCommandListCreateImmediate *args, struct zeprof_hook_ctx *ctx,
    ze_result_t result)
{
    (void)ctx;
    if (!timing_enabled() || result != ZE_RESULT_SUCCESS || !args->phCommandList)
        return;
    bool in_order = args->altdesc && (args->altdesc->flags & TIMING_COMMAND_QUEUE_FLAG_IN_ORDER);
    uint32_t ordinal = args->altdesc ? args->altdesc->ordinal : 0;
    list_register(*args->phCommandList, args->hContext, args->hDevice, ordinal, true, in_order);
}

void zeprof_hook_post_zeCommandListReset(struct zeprof_args_zeCommandListReset *args,
                                         struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)ctx;
    if (!timing_enabled() || result != ZE_RESULT_SUCCESS)
        return;
    /* The list is not in use (Level Zero requires it), so what was appended has completed; only
     * the tracer's own list after its last execution may still be finishing. */
    pthread_rwlock_rdlock(&timing_registry_lock);
    struct timing_list *list = timing_registry_list(args->hCommandList);
    if (list) {
        pthread_mutex_lock(&list->mutex);
        timing_drain_list_locked(list, true, TIMING_RELEASE_WAIT_NS);
        timing_release_slots_locked(list);
        if (!list->immediate)
            timing_runs_release_locked(list, false);
        pthread_mutex_unlock(&list->mutex);
    }
    pthread_rwlock_unlock(&timing_registry_lock);
}

/* Detached before the real destroy: once the driver frees the handle, another thread may get it
 * back from a create at once, and the registry must not still hold it then. */
void zeprof_hook_pre_zeCommandListDestroy(struct zeprof_args_zeCommandListDestroy *args,
                                          struct zeprof_hook_ctx *ctx)
{
    ctx->data = NULL;
    if (!timing_enabled())
        return;
    pthread_rwlock_wrlock(&timing_registry_lock);
    ctx->data = timing_registry_remove_list(args->hCommandList);
    pthread_rwlock_unlock(&timing_registry_lock);
}

void zeprof_hook_post_zeCommandListDestroy(struct zeprof_args_zeCommandListDestroy *args,
                                           struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    struct timing_list *list = ctx->data;
    if (!list)
        return;
    if (result != ZE_RESULT_SUCCESS) {
        /* The list lives on (the handle was not freed, so nobody can have reused it). */
        pthread_rwlock_wrlock(&timing_registry_lock);
        bool back = !timing_registry_list(args->hCommandList) &&
                    timing_registry_add_list(list) == 0;
        if (!back)
            list_free(list, 0);
        pthread_rwlock_unlock(&timing_registry_lock);
        return;
    }
    /* After the real destroy: an immediate list's destroy waits for its work, so all is read. */
    pthread_rwlock_rdlock(&timing_registry_lock);
    list_free(list, TIMING_RELEASE_WAIT_NS);
    pthread_rwlock_unlock(&timing_registry_lock);
}

/* ---------------------------------------------------------------- contexts ---------------- */

void zeprof_hook_pre_zeContextDestroy(struct zeprof_args_zeContextDestroy *args,
                                      struct zeprof_hook_ctx *ctx)
{
    (void)ctx;
    if (!timing_enabled())
        return;
    /* Before the real destroy, while the tracer's events and pools are still valid: lists the
     * application left behind are drained and forgotten, then events, then pools go. */
    pthread_rwlock_wrlock(&timing_registry_lock);
    struct timing_list *list = timing_registry_first_list();
    while (list) {
        struct timing_list *next = list->next_in_registry;
        if (list->context_handle == args->hContext) {
            timing_registry_remove_list(list->handle);
            list_free(list, 0);
        }
        list = next;
    }
    struct timing_context *context = timing_registry_remove_context(args->hContext);
    timing_registry_forget_app_objects(args->hContext);
    pthread_rwlock_unlock(&timing_registry_lock);
    timing_context_free(context);
}

/* ---------------------------------------------------------------- pools, events, kernels ---- */

void zeprof_hook_post_zeEventPoolCreate(struct zeprof_args_zeEventPoolCreate *args,
                                        struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)ctx;
    if (!timing_enabled() || result != ZE_RESULT_SUCCESS || !args->desc || !args->phEventPool)
        return;
    pthread_rwlock_wrlock(&timing_registry_lock);
    timing_registry_add_live_pool(*args->phEventPool, args->hContext);
    pthread_rwlock_unlock(&timing_registry_lock);
    /* Beyond that, only timestamp pools matter: their events are read in place, never swapped. Pools with
     * timestamps already mapped to host time are not readable as ticks: their events are
     * swapped like any other (see docs/timing.md). */
    if (!(args->desc->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) ||
        (args->desc->flags & TIMING_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP))
        return;
    bool counter_based = false;
    for (const ze_base_desc_t *next = args->desc->pNext; next; next = next->pNext)
        counter_based |= next->stype == TIMING_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC;
    pthread_rwlock_wrlock(&timing_registry_lock);
    timing_registry_add_timestamp_pool(*args->phEventPool, args->hContext);
    if (counter_based)
        timing_registry_add_counter_based_pool(*args->phEventPool, args->hContext);
    pthread_rwlock_unlock(&timing_registry_lock);
}

void zeprof_hook_pre_zeEventPoolDestroy(struct zeprof_args_zeEventPoolDestroy *args,
                                        struct zeprof_hook_ctx *ctx)
{
    (void)ctx;
    if (!timing_enabled())
        return;
    pthread_rwlock_wrlock(&timing_registry_lock);
    timing_registry_remove_timestamp_pool(args->hEventPool);
    timing_registry_remove_counter_based_pool(args->hEventPool);
    timing_registry_remove_live_pool(args->hEventPool);
    pthread_rwlock_unlock(&timing_registry_lock);
}

void zeprof_hook_post_zeEventCreate(struct zeprof_args_zeEventCreate *args,
                                    struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)ctx;
    if (!timing_enabled() || result != ZE_RESULT_SUCCESS || !args->phEvent)
        return;
    /* Every event is known alive (only those are swapped); timestamp events are also read in
     * place. */
    pthread_rwlock_wrlock(&timing_registry_lock);
    timing_registry_add_live_event(*args->phEvent,
                                   timing_registry_live_pool_context(args->hEventPool));
    ze_context_handle_t context = timing_registry_timestamp_pool_context(args->hEventPool);
    if (context)
        timing_registry_add_app_event(*args->phEvent, context,
                                      timing_registry_counter_based_pool(args->hEventPool));
    pthread_rwlock_unlock(&timing_registry_lock);
}

/* The application is about to change or drop one of its timestamp events: read it first. */
static void resolve_before_change(ze_event_handle_t event)
{
    if (!timing_enabled() || !event)
        return;
    pthread_rwlock_rdlock(&timing_registry_lock);
    timing_resolve_app_event(event);
    pthread_rwlock_unlock(&timing_registry_lock);
}

/* The same before a reset or a host signal, which a counter-based event refuses (the driver
 * answers an error and the event stays as it is): its pending slot is left to read. */
static void resolve_before_reset(ze_event_handle_t event)
{
    if (!timing_enabled() || !event)
        return;
    pthread_rwlock_rdlock(&timing_registry_lock);
    const struct timing_app_event *record = timing_registry_app_event(event);
    if (record && !record->counter_based)
        timing_resolve_app_event(event);
    pthread_rwlock_unlock(&timing_registry_lock);
}

void zeprof_hook_pre_zeEventDestroy(struct zeprof_args_zeEventDestroy *args,
                                    struct zeprof_hook_ctx *ctx)
{
    (void)ctx;
    if (!timing_enabled())
        return;
    resolve_before_change(args->hEvent);
    pthread_rwlock_wrlock(&timing_registry_lock);
    free(timing_registry_remove_app_event(args->hEvent));
    timing_registry_remove_live_event(args->hEvent);
    pthread_rwlock_unlock(&timing_registry_lock);
}

void zeprof_hook_pre_zeEventHostReset(struct zeprof_args_zeEventHostReset *args,
                                      struct zeprof_hook_ctx *ctx)
{
    (void)ctx;
    resolve_before_reset(args->hEvent);
}

void zeprof_hook_pre_zeEventHostSignal(struct zeprof_args_zeEventHostSignal *args,
                                       struct zeprof_hook_ctx *ctx)
{
    (void)ctx;
    resolve_before_reset(args->hEvent);
}

void zeprof_hook_pre_zeCommandListAppendEventReset(
    struct zeprof_args_zeCommandListAppendEventReset *args, struct zeprof_hook_ctx *ctx)
{
    (void)ctx;
    resolve_before_reset(args->hEvent);
}

void zeprof_hook_post_zeKernelCreate(struct zeprof_args_zeKernelCreate *args,
                                     struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)ctx;
    if (!timing_enabled() || result != ZE_RESULT_SUCCESS || !args->phKernel || !args->desc)
        return;
    /* Once per kernel, for its launch shapes (-k): the SIMD width and any required group
     * size. A driver that cannot tell leaves them unknown. */
    ze_kernel_properties_t properties = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    bool known = zeprof_real.zeKernelGetProperties &&
                 zeprof_real.zeKernelGetProperties(*args->phKernel, &properties) ==
                     ZE_RESULT_SUCCESS;
    pthread_rwlock_wrlock(&timing_registry_lock);
    timing_registry_add_kernel(*args->phKernel, args->desc->pKernelName,
                               known ? &properties : NULL);
    pthread_rwlock_unlock(&timing_registry_lock);
}

void zeprof_hook_post_zeKernelSetGroupSize(struct zeprof_args_zeKernelSetGroupSize *args,
                                           struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)ctx;
    if (!timing_enabled() || result != ZE_RESULT_SUCCESS)
        return;
    pthread_rwlock_rdlock(&timing_registry_lock);
    timing_shape_set_group_size(args->hKernel, args->groupSizeX, args->groupSizeY,
                                args->groupSizeZ);
    pthread_rwlock_unlock(&timing_registry_lock);
}

void zeprof_hook_pre_zeKernelDestroy(struct zeprof_args_zeKernelDestroy *args,
                                     struct zeprof_hook_ctx *ctx)
{
    (void)ctx;
    if (!timing_enabled())
        return;
    pthread_rwlock_wrlock(&timing_registry_lock);
    timing_registry_remove_kernel(args->hKernel);
    pthread_rwlock_unlock(&timing_registry_lock);
}

/* ---------------------------------------------------------------- drain anchors ----------- */

static void drain_if(ze_result_t result)
{
    if (result == ZE_RESULT_SUCCESS && timing_enabled())
        timing_drain_all();
}

void zeprof_hook_post_zeEventHostSynchronize(struct zeprof_args_zeEventHostSynchronize *args,
                                             struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)args;
    (void)ctx;
    drain_if(result);
}

void zeprof_hook_post_zeEventQueryStatus(struct zeprof_args_zeEventQueryStatus *args,
                                         struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)args;
    (void)ctx;
    drain_if(result);
}

void zeprof_hook_post_zeFenceHostSynchronize(struct zeprof_args_zeFenceHostSynchronize *args,
                                             struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)args;
    (void)ctx;
    drain_if(result);
}

void zeprof_hook_post_zeFenceQueryStatus(struct zeprof_args_zeFenceQueryStatus *args,
                                         struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)args;
    (void)ctx;
    drain_if(result);
}

void zeprof_hook_post_zeCommandListHostSynchronize(
    struct zeprof_args_zeCommandListHostSynchronize *args, struct zeprof_hook_ctx *ctx,
    ze_result_t result)
{
    (void)args;
    (void)ctx;
    drain_if(result);
}

void zeprof_hook_post_zeCommandQueueSynchronize(struct zeprof_args_zeCommandQueueSynchronize *args,
                                                struct zeprof_hook_ctx *ctx, ze_result_t result)
{
    (void)args;
    (void)ctx;
    drain_if(result);
}
