/*
 * sim_memory.c: host, device and shared allocations.
 *
 * Every kind of allocation is ordinary host memory (the "device" shares the host's address
 * space), so kernels and copies run on it directly. The module owns the allocations and a table
 * of them, which answers zeMemGetAllocProperties and tells the engine how far a kernel may write
 * from a pointer (sim_memory_span), so a launch with a too-large grid is clamped, not a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct sim_allocation {
    uint8_t *base;
    size_t size;
    ze_memory_type_t type;
    struct sim_device *device;   /* Weak; NULL for host allocations */
    struct sim_context *context; /* Weak */
    uint64_t id;
};

static pthread_mutex_t memory_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_allocation *allocations;
static size_t allocation_count, allocation_capacity;
static uint64_t next_id = 1;

/* Index of the allocation containing ptr, or SIZE_MAX; memory_lock held. */
static size_t find_locked(const void *ptr)
{
    const uint8_t *p = ptr;
    for (size_t i = 0; i < allocation_count; i++) {
        if (p >= allocations[i].base && p < allocations[i].base + allocations[i].size)
            return i;
    }
    return SIZE_MAX;
}

size_t sim_memory_span(const void *ptr)
{
    size_t span = 0;
    if (!ptr)
        return 0;
    pthread_mutex_lock(&memory_lock);
    size_t i = find_locked(ptr);
    if (i != SIZE_MAX)
        span = allocations[i].size - (size_t)((const uint8_t *)ptr - allocations[i].base);
    pthread_mutex_unlock(&memory_lock);
    return span;
}

uint64_t sim_memory_device_bytes(const struct sim_device *device)
{
    uint64_t bytes = 0;
    pthread_mutex_lock(&memory_lock);
    for (size_t i = 0; i < allocation_count; i++) {
        if (allocations[i].device == device)
            bytes += allocations[i].size;
    }
    pthread_mutex_unlock(&memory_lock);
    return bytes;
}

static ze_result_t allocate(ze_context_handle_t context, ze_device_handle_t device, size_t size,
                            size_t alignment, ze_memory_type_t type, void **out)
{
    ze_result_t status = sim_handle_check(context, SIM_KIND_CONTEXT);
    if (status == ZE_RESULT_SUCCESS && type != ZE_MEMORY_TYPE_HOST &&
        (device || type == ZE_MEMORY_TYPE_DEVICE))
        status = sim_handle_check(device, SIM_KIND_DEVICE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0 || size > (8ull << 30))
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (alignment & (alignment - 1))
        return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    if (alignment < 64)
        alignment = 64;

    void *memory = NULL;
    if (posix_memalign(&memory, alignment, size) != 0)
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    pthread_mutex_lock(&memory_lock);
    if (allocation_count == allocation_capacity) {
        size_t capacity = allocation_capacity ? 2 * allocation_capacity : 64;
        struct sim_allocation *grown = realloc(allocations, capacity * sizeof(*grown));
        if (!grown) {
            pthread_mutex_unlock(&memory_lock);
            free(memory);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        allocations = grown;
        allocation_capacity = capacity;
    }
    allocations[allocation_count++] = (struct sim_allocation){
        .base = memory,
        .size = size,
        .type = type,
        .device = type == ZE_MEMORY_TYPE_HOST ? NULL : (struct sim_device *)device,
        .context = (struct sim_context *)context,
        .id = next_id++,
    };
    pthread_mutex_unlock(&memory_lock);
    *out = memory;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_mem_alloc_shared(ze_context_handle_t context,
                                 const ze_device_mem_alloc_desc_t *device_desc,
                                 const ze_host_mem_alloc_desc_t *host_desc, size_t size,
                                 size_t alignment, ze_device_handle_t device, void **out)
{
    if (!device_desc || !host_desc)
        return context ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return allocate(context, device, size, alignment, ZE_MEMORY_TYPE_SHARED, out);
}

ze_result_t sim_mem_alloc_device(ze_context_handle_t context,
                                 const ze_device_mem_alloc_desc_t *desc, size_t size,
                                 size_t alignment, ze_device_handle_t device, void **out)
{
    if (!desc)
        return context ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return allocate(context, device, size, alignment, ZE_MEMORY_TYPE_DEVICE, out);
}

ze_result_t sim_mem_alloc_host(ze_context_handle_t context, const ze_host_mem_alloc_desc_t *desc,
                               size_t size, size_t alignment, void **out)
{
    if (!desc)
        return context ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return allocate(context, NULL, size, alignment, ZE_MEMORY_TYPE_HOST, out);
}

ze_result_t sim_mem_free(ze_context_handle_t context, void *ptr)
{
    ze_result_t status = sim_handle_check(context, SIM_KIND_CONTEXT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!ptr)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_mutex_lock(&memory_lock);
    size_t i = find_locked(ptr);
    if (i == SIZE_MAX || allocations[i].base != ptr) {
        pthread_mutex_unlock(&memory_lock);
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    allocations[i] = allocations[--allocation_count];
    pthread_mutex_unlock(&memory_lock);
    free(ptr);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_mem_free_ext(ze_context_handle_t context, const ze_memory_free_ext_desc_t *desc,
                             void *ptr)
{
    if (!desc)
        return context ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return sim_mem_free(context, ptr);
}

ze_result_t sim_mem_get_alloc_properties(ze_context_handle_t context, const void *ptr,
                                         ze_memory_allocation_properties_t *props,
                                         ze_device_handle_t *device)
{
    ze_result_t status = sim_handle_check(context, SIM_KIND_CONTEXT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!ptr || !props)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_mutex_lock(&memory_lock);
    size_t i = find_locked(ptr);
    if (i == SIZE_MAX) {
        props->type = ZE_MEMORY_TYPE_UNKNOWN;
        props->id = 0;
        props->pageSize = 0;
        if (device)
            *device = NULL;
    } else {
        props->type = allocations[i].type;
        props->id = allocations[i].id;
        props->pageSize = allocations[i].type == ZE_MEMORY_TYPE_HOST ? 4096 : 65536;
        if (device)
            *device = (ze_device_handle_t)allocations[i].device;
    }
    pthread_mutex_unlock(&memory_lock);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_mem_get_address_range(ze_context_handle_t context, const void *ptr, void **base,
                                      size_t *size)
{
    ze_result_t status = sim_handle_check(context, SIM_KIND_CONTEXT);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!ptr)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_mutex_lock(&memory_lock);
    size_t i = find_locked(ptr);
    if (i != SIZE_MAX) {
        if (base)
            *base = allocations[i].base;
        if (size)
            *size = allocations[i].size;
    }
    pthread_mutex_unlock(&memory_lock);
    return i == SIZE_MAX ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

void sim_memory_release_all(void)
{
    pthread_mutex_lock(&memory_lock);
    free(allocations);
    allocations = NULL;
    allocation_count = allocation_capacity = 0;
    pthread_mutex_unlock(&memory_lock);
}
