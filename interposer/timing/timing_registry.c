/*
 * timing_registry.c: what the engine knows about the application's Level Zero objects.
 *
 * Hash maps from handles to records, filled by the creation hooks and emptied by the destruction
 * hooks, so they are bounded by the objects alive now. Owns: context, device, list, kernel
 * and app-event records (lists are handed back to the caller on removal). Timestamp pools are kept
 * only as a set (value = their context). One rwlock guards all of it: lookups take it for reading
 * (appends, drains), changes for writing (creation and destruction, which are rare).
 */
#include <stdlib.h>
#include <string.h>

#include "timing_internal.h"

pthread_rwlock_t timing_registry_lock = PTHREAD_RWLOCK_INITIALIZER;
pthread_mutex_t timing_app_event_mutex = PTHREAD_MUTEX_INITIALIZER;

static struct timing_map contexts;        /* ze_context_handle_t -> timing_context */
static struct timing_map devices;         /* ze_device_handle_t -> timing_device */
static struct timing_map lists;           /* ze_command_list_handle_t -> timing_list */
static struct timing_map kernels;         /* ze_kernel_handle_t -> timing_kernel (Owned) */
static struct timing_map timestamp_pools; /* ze_event_pool_handle_t -> ze_context_handle_t */
static struct timing_map app_events;      /* ze_event_handle_t -> timing_app_event */
static struct timing_map counter_based_pools; /* ze_event_pool_handle_t -> ze_context_handle_t */
static struct timing_map live_events;     /* ze_event_handle_t -> ze_context_handle_t (or 1) */
static struct timing_map live_pools;      /* ze_event_pool_handle_t -> ze_context_handle_t (or 1) */
static struct timing_list *first_list;    /* every registered list, for drains */

static uint64_t key_of(const void *handle)
{
    return (uint64_t)(uintptr_t)handle;
}

struct timing_list *timing_registry_list(ze_command_list_handle_t handle)
{
    return timing_map_get(&lists, key_of(handle));
}

struct timing_device *timing_registry_device(ze_device_handle_t handle)
{
    return timing_map_get(&devices, key_of(handle));
}

struct timing_kernel *timing_registry_kernel(ze_kernel_handle_t handle)
{
    return timing_map_get(&kernels, key_of(handle));
}

const char *timing_registry_kernel_name(ze_kernel_handle_t handle)
{
    const struct timing_kernel *kernel = timing_registry_kernel(handle);
    return kernel ? kernel->name : NULL;
}

struct timing_app_event *timing_registry_app_event(ze_event_handle_t handle)
{
    return timing_map_get(&app_events, key_of(handle));
}

ze_context_handle_t timing_registry_timestamp_pool_context(ze_event_pool_handle_t handle)
{
    return timing_map_get(&timestamp_pools, key_of(handle));
}

struct timing_list *timing_registry_first_list(void)
{
    return first_list;
}

struct timing_context *timing_registry_context_get_or_add(ze_context_handle_t handle)
{
    struct timing_context *context = timing_map_get(&contexts, key_of(handle));
    if (context)
        return context;
    context = timing_context_new(handle);
    if (context && timing_map_put(&contexts, key_of(handle), context) != 0) {
        timing_context_free(context);
        context = NULL;
    }
    return context;
}

struct timing_device *timing_registry_device_get_or_add(ze_device_handle_t handle, bool *added)
{
    struct timing_device *device = timing_map_get(&devices, key_of(handle));
    *added = false;
    if (device)
        return device;
    device = calloc(1, sizeof *device);
    if (!device)
        return NULL;
    device->handle = handle;
    if (timing_map_put(&devices, key_of(handle), device) != 0) {
        free(device);
        return NULL;
    }
    *added = true;
    return device;
}

int timing_registry_add_list(struct timing_list *list)
{
    if (timing_map_put(&lists, key_of(list->handle), list) != 0)
        return -1;
    list->prev_in_registry = NULL;
    list->next_in_registry = first_list;
    if (first_list)
        first_list->prev_in_registry = list;
    first_list = list;
    return 0;
}

struct timing_list *timing_registry_remove_list(ze_command_list_handle_t handle)
{
    struct timing_list *list = timing_map_remove(&lists, key_of(handle));
    if (!list)
        return NULL;
    if (list->prev_in_registry)
        list->prev_in_registry->next_in_registry = list->next_in_registry;
    else
        first_list = list->next_in_registry;
    if (list->next_in_registry)
        list->next_in_registry->prev_in_registry = list->prev_in_registry;
    list->prev_in_registry = list->next_in_registry = NULL;
    return list;
}

/* FNV-1a: a name's key in the threads' shape caches (timing_shape.c). */
static uint64_t name_hash(const char *name)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        hash = (hash ^ *c) * 0x100000001b3ull;
    return hash;
}

int timing_registry_add_kernel(ze_kernel_handle_t handle, const char *name,
                               const ze_kernel_properties_t *properties)
{
    if (!name)
        name = "";
    size_t length = strlen(name);
    struct timing_kernel *kernel = malloc(sizeof(*kernel) + length + 1);
    if (!kernel)
        return -1;
    memcpy(kernel->name, name, length + 1);
    kernel->name_hash = name_hash(name);
    kernel->group_size[0] = properties ? properties->requiredGroupSizeX : 0;
    kernel->group_size[1] = properties ? properties->requiredGroupSizeY : 0;
    kernel->group_size[2] = properties ? properties->requiredGroupSizeZ : 0;
    kernel->simd = 0;
    if (properties)
        kernel->simd = properties->requiredSubgroupSize ? properties->requiredSubgroupSize
                                                        : properties->maxSubgroupSize;
    free(timing_map_remove(&kernels, key_of(handle)));
    if (timing_map_put(&kernels, key_of(handle), kernel) != 0) {
        free(kernel);
        return -1;
    }
    return 0;
}

void timing_registry_remove_kernel(ze_kernel_handle_t handle)
{
    free(timing_map_remove(&kernels, key_of(handle)));
}

int timing_registry_add_timestamp_pool(ze_event_pool_handle_t handle, ze_context_handle_t ctx)
{
    /* The value must be non-NULL to be found; a NULL context cannot create pools anyway. */
    return timing_map_put(&timestamp_pools, key_of(handle), ctx ? (void *)ctx : (void *)1);
}

void timing_registry_remove_timestamp_pool(ze_event_pool_handle_t handle)
{
    timing_map_remove(&timestamp_pools, key_of(handle));
}

int timing_registry_add_counter_based_pool(ze_event_pool_handle_t handle, ze_context_handle_t ctx)
{
    return timing_map_put(&counter_based_pools, key_of(handle), ctx ? (void *)ctx : (void *)1);
}

bool timing_registry_counter_based_pool(ze_event_pool_handle_t handle)
{
    return timing_map_get(&counter_based_pools, key_of(handle)) != NULL;
}

void timing_registry_remove_counter_based_pool(ze_event_pool_handle_t handle)
{
    timing_map_remove(&counter_based_pools, key_of(handle));
}

int timing_registry_add_app_event(ze_event_handle_t handle, ze_context_handle_t ctx,
                                  bool counter_based)
{
    struct timing_app_event *event = calloc(1, sizeof *event);
    if (!event)
        return -1;
    event->handle = handle;
    event->context_handle = ctx;
    event->counter_based = counter_based;
    /* A stale record under a reused handle (destroy not seen) is replaced. */
    free(timing_map_remove(&app_events, key_of(handle)));
    if (timing_map_put(&app_events, key_of(handle), event) != 0) {
        free(event);
        return -1;
    }
    return 0;
}

struct timing_app_event *timing_registry_remove_app_event(ze_event_handle_t handle)
{
    return timing_map_remove(&app_events, key_of(handle));
}

/* A set's value must be non-NULL to be found; a NULL context owns nothing anyway. */
static void *context_value(ze_context_handle_t ctx)
{
    return ctx ? (void *)ctx : (void *)1;
}

bool timing_registry_event_alive(ze_event_handle_t handle)
{
    return timing_map_get(&live_events, key_of(handle)) != NULL;
}

int timing_registry_add_live_event(ze_event_handle_t handle, ze_context_handle_t ctx)
{
    return timing_map_put(&live_events, key_of(handle), context_value(ctx));
}

void timing_registry_remove_live_event(ze_event_handle_t handle)
{
    timing_map_remove(&live_events, key_of(handle));
}

int timing_registry_add_live_pool(ze_event_pool_handle_t handle, ze_context_handle_t ctx)
{
    return timing_map_put(&live_pools, key_of(handle), context_value(ctx));
}

void timing_registry_remove_live_pool(ze_event_pool_handle_t handle)
{
    timing_map_remove(&live_pools, key_of(handle));
}

ze_context_handle_t timing_registry_live_pool_context(ze_event_pool_handle_t handle)
{
    void *value = timing_map_get(&live_pools, key_of(handle));
    return value == (void *)1 ? NULL : value;
}

/* The parent's registry as a forked child inherited it: kept reachable, never used. */
struct inherited_registry {
    struct inherited_registry *older; /* a child of a child keeps its parent's too */
    struct timing_map maps[9];
    struct timing_list *first_list;
};
static struct inherited_registry *inherited;

void timing_registry_forget_after_fork(void)
{
    /* The child is single-threaded here. Locks another thread of the parent held stay held in
     * the child: start from fresh ones. The records, their mutexes and the Level Zero objects
     * they name belong to the parent: left untouched, and kept reachable (a one-time cost in the
     * child, not a leak for leak checkers). */
    timing_registry_lock = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
    timing_app_event_mutex = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    struct inherited_registry *keep = malloc(sizeof *keep);
    if (keep) {
        *keep = (struct inherited_registry){
            inherited,
            {contexts, devices, lists, kernels, timestamp_pools, app_events, live_events,
             live_pools, counter_based_pools},
            first_list,
        };
        inherited = keep;
    }
    timing_map_init(&contexts);
    timing_map_init(&devices);
    timing_map_init(&lists);
    timing_map_init(&kernels);
    timing_map_init(&timestamp_pools);
    timing_map_init(&app_events);
    timing_map_init(&live_events);
    timing_map_init(&live_pools);
    timing_map_init(&counter_based_pools);
    first_list = NULL;
    timing_shape_forget_after_fork();
}

struct timing_context *timing_registry_remove_context(ze_context_handle_t handle)
{
    return timing_map_remove(&contexts, key_of(handle));
}

struct forget_request {
    ze_context_handle_t context;
    uint64_t *keys;
    size_t count;
    size_t capacity;
};

static void collect_if_context(uint64_t key, void *value, void *user)
{
    struct forget_request *request = user;
    ze_context_handle_t owner = value;
    if (owner != request->context)
        return;
    if (request->count == request->capacity) {
        size_t capacity = request->capacity ? request->capacity * 2 : 16;
        uint64_t *keys = realloc(request->keys, capacity * sizeof *keys);
        if (!keys)
            return;
        request->keys = keys;
        request->capacity = capacity;
    }
    request->keys[request->count++] = key;
}

static void collect_event_if_context(uint64_t key, void *value, void *user)
{
    struct timing_app_event *event = value;
    collect_if_context(key, event->context_handle, user);
}

/* Removes from `map` every entry `collect` picks for `request`'s context, freeing the values when
 * the map owns them. */
static void forget_collected(struct timing_map *map,
                             void (*collect)(uint64_t key, void *value, void *user),
                             struct forget_request *request, bool owns_values)
{
    request->count = 0;
    timing_map_for_each(map, collect, request);
    for (size_t i = 0; i < request->count; i++) {
        void *value = timing_map_remove(map, request->keys[i]);
        if (owns_values)
            free(value);
    }
}

void timing_registry_forget_app_objects(ze_context_handle_t ctx)
{
    struct forget_request request = {ctx, NULL, 0, 0};

    forget_collected(&timestamp_pools, collect_if_context, &request, false);
    forget_collected(&counter_based_pools, collect_if_context, &request, false);
    forget_collected(&app_events, collect_event_if_context, &request, true);
    forget_collected(&live_events, collect_if_context, &request, false);
    forget_collected(&live_pools, collect_if_context, &request, false);
    free(request.keys);
}

struct device_visit {
    void (*fn)(struct timing_device *device, void *user);
    void *user;
};

static void visit_device(uint64_t key, void *value, void *user)
{
    struct device_visit *visit = user;
    (void)key;
    visit->fn(value, visit->user);
}

void timing_registry_for_each_device(void (*fn)(struct timing_device *device, void *user),
                                     void *user)
{
    struct device_visit visit = {fn, user};
    timing_map_for_each(&devices, visit_device, &visit);
}
