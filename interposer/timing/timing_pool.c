/*
 * timing_pool.c: the tracer's own kernel-timestamp events, per context.
 *
 * Event pools are expensive to create, so injected events come from pools of 64
 * (KERNEL_TIMESTAMP | HOST_VISIBLE) owned by the context record and are recycled through its free
 * list. Pools live until the context is destroyed; Level Zero requires every event destroyed
 * before its pool, and that is the order timing_context_free() keeps.
 *
 * Guarantees: an inj on the free list is unsignalled (fresh or host-reset by the drain). Failure
 * to create a pool only means "do not profile this append": the caller gets NULL.
 */
#include <stdlib.h>

#include "timing_internal.h"
#include "zeprof_api.h"

struct timing_context *timing_context_new(ze_context_handle_t handle)
{
    struct timing_context *context = calloc(1, sizeof *context);

    if (!context)
        return NULL;
    context->handle = handle;
    pthread_mutex_init(&context->mutex, NULL);
    return context;
}

void timing_context_free(struct timing_context *context)
{
    if (!context)
        return;
    struct timing_pool *pool = context->pools;
    while (pool) {
        struct timing_pool *next = pool->next;
        for (uint32_t i = 0; i < pool->created; i++)
            zeprof_real.zeEventDestroy(pool->injs[i].event);
        zeprof_real.zeEventPoolDestroy(pool->handle);
        free(pool);
        pool = next;
    }
    pthread_mutex_destroy(&context->mutex);
    free(context);
}

/* Under context->mutex. Adds a pool's events to the free list; -1 when the driver refuses. */
static int pool_add_locked(struct timing_context *context)
{
    struct timing_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return -1;

    ze_event_pool_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        .pNext = NULL,
        .flags = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
        .count = TIMING_POOL_EVENTS,
    };
    if (zeprof_real.zeEventPoolCreate(context->handle, &desc, 0, NULL, &pool->handle) !=
        ZE_RESULT_SUCCESS) {
        free(pool);
        return -1;
    }
    for (uint32_t i = 0; i < TIMING_POOL_EVENTS; i++) {
        ze_event_desc_t event_desc = {
            .stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
            .pNext = NULL,
            .index = i,
            .signal = ZE_EVENT_SCOPE_FLAG_HOST,
            .wait = ZE_EVENT_SCOPE_FLAG_HOST,
        };
        if (zeprof_real.zeEventCreate(pool->handle, &event_desc, &pool->injs[i].event) !=
            ZE_RESULT_SUCCESS)
            break;
        pool->injs[i].pool = pool;
        pool->created = i + 1;
    }
    if (pool->created == 0) {
        zeprof_real.zeEventPoolDestroy(pool->handle);
        free(pool);
        return -1;
    }
    /* Push in reverse so that events are handed out in index order. */
    for (uint32_t i = pool->created; i-- > 0;) {
        pool->injs[i].next_free = context->free_list;
        context->free_list = &pool->injs[i];
    }
    pool->next = context->pools;
    context->pools = pool;
    return 0;
}

struct timing_inj *timing_pool_take(struct timing_context *context)
{
    struct timing_inj *inj = NULL;

    pthread_mutex_lock(&context->mutex);
    /* After a failure, retry only now and then: a driver that refuses pools stays cheap. */
    if (!context->free_list &&
        (context->pool_failures == 0 || (context->pool_failures & 1023) == 0)) {
        if (pool_add_locked(context) != 0)
            context->pool_failures++;
    } else if (!context->free_list) {
        context->pool_failures++;
    }
    if (context->free_list) {
        inj = context->free_list;
        context->free_list = inj->next_free;
        inj->next_free = NULL;
    }
    pthread_mutex_unlock(&context->mutex);
    return inj;
}

void timing_pool_give_back(struct timing_context *context, struct timing_inj *inj)
{
    pthread_mutex_lock(&context->mutex);
    inj->next_free = context->free_list;
    context->free_list = inj;
    pthread_mutex_unlock(&context->mutex);
}
