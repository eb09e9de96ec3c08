/*
 * sim_handle.c: the registry of live handles.
 *
 * Every object handed to the application is registered here with its kind, so that entry points
 * can tell a live handle of the right kind from NULL, a destroyed object or a handle of another
 * kind without dereferencing it. Owns its nodes; borrows the objects (it never dereferences them).
 */
#include <stdlib.h>

#include "sim.h"

#define SIM_HANDLE_BUCKETS 4096

struct sim_handle_node {
    const void *handle;
    enum sim_kind kind;
    struct sim_handle_node *next;
};

static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_handle_node *buckets[SIM_HANDLE_BUCKETS];

static size_t bucket_of(const void *handle)
{
    uintptr_t bits = (uintptr_t)handle;
    bits ^= bits >> 17;
    bits *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(bits >> 20) % SIM_HANDLE_BUCKETS;
}

void sim_handle_add(void *handle, enum sim_kind kind)
{
    struct sim_handle_node *node = malloc(sizeof(*node));
    if (!node)
        abort(); /* the driver cannot keep its promises without its registry */
    node->handle = handle;
    node->kind = kind;
    pthread_mutex_lock(&handle_lock);
    size_t b = bucket_of(handle);
    node->next = buckets[b];
    buckets[b] = node;
    pthread_mutex_unlock(&handle_lock);
}

void sim_handle_remove(void *handle)
{
    pthread_mutex_lock(&handle_lock);
    struct sim_handle_node **link = &buckets[bucket_of(handle)];
    while (*link && (*link)->handle != handle)
        link = &(*link)->next;
    if (*link) {
        struct sim_handle_node *node = *link;
        *link = node->next;
        free(node);
    }
    pthread_mutex_unlock(&handle_lock);
}

bool sim_handle_is(const void *handle, enum sim_kind kind)
{
    bool found = false;
    if (!handle)
        return false;
    pthread_mutex_lock(&handle_lock);
    for (struct sim_handle_node *n = buckets[bucket_of(handle)]; n; n = n->next) {
        if (n->handle == handle) {
            found = n->kind == kind;
            break;
        }
    }
    pthread_mutex_unlock(&handle_lock);
    return found;
}

ze_result_t sim_handle_check(const void *handle, enum sim_kind kind)
{
    if (!handle)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return sim_handle_is(handle, kind) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

void sim_handle_release_all(void)
{
    pthread_mutex_lock(&handle_lock);
    for (size_t b = 0; b < SIM_HANDLE_BUCKETS; b++) {
        while (buckets[b]) {
            struct sim_handle_node *node = buckets[b];
            buckets[b] = node->next;
            free(node);
        }
    }
    pthread_mutex_unlock(&handle_lock);
}
