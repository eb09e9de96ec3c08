/*
 * timing_shape.c: the launch shapes of kernels, for the merger's kernel detail (-k).
 *
 * A launch's shape is its group count (an argument of the append), its kernel's group size (the
 * last zeKernelSetGroupSize, kept in the kernel's registry record) and its SIMD width (asked of
 * the driver once, when the kernel is created). Payload is cost on the hottest path, so the
 * `kernel_shape` event is recorded only when the shape of a launch differs from the last shape
 * this thread recorded for a kernel of that name; the merger carries a shape forward per thread
 * and kernel name. Each thread keeps the last shape of a few names (direct-mapped by the name's
 * hash): a name pushed out of the cache is simply recorded again at its next launch.
 *
 * Limit: two names with the same 64-bit hash would share a cache entry: the second would not be
 * recorded while its shape equals the first's last one (odds of 1 in 2^64 per pair of names).
 * A forked child starts with an empty cache (timing_shape_forget_after_fork).
 */
#include <string.h>

#include "timing_internal.h"
#include "zeprof_device.h"

/* Small: initial-exec TLS of a library loaded by dlopen comes from a few kilobytes shared by the
 * whole process. */
#define SHAPE_CACHE 8u

struct shape {
    uint32_t count[3], size[3], simd;
};

struct shape_seen {
    uint64_t name_hash; /* 0 with `shape` all 0: empty */
    struct shape shape;
};

static __thread struct shape_seen shapes_seen[SHAPE_CACHE]
    __attribute__((tls_model("initial-exec")));

void timing_shape_set_group_size(ze_kernel_handle_t handle, uint32_t x, uint32_t y, uint32_t z)
{
    struct timing_kernel *kernel = timing_registry_kernel(handle);
    if (!kernel)
        return;
    __atomic_store_n(&kernel->group_size[0], x, __ATOMIC_RELAXED);
    __atomic_store_n(&kernel->group_size[1], y, __ATOMIC_RELAXED);
    __atomic_store_n(&kernel->group_size[2], z, __ATOMIC_RELAXED);
}

void timing_shape_forget_after_fork(void)
{
    memset(shapes_seen, 0, sizeof(shapes_seen));
}

void timing_shape_record(const struct timing_kernel *kernel, uint64_t call_id,
                         const ze_group_count_t *groups)
{
    /* Not recording: nothing to remember either, or a session started later would miss it. */
    if (!lttng_ust_tracepoint_enabled(zeprof_device, kernel_shape))
        return;
    struct shape shape = {
        .count = {groups ? groups->groupCountX : 0, groups ? groups->groupCountY : 0,
                  groups ? groups->groupCountZ : 0},
        .size = {__atomic_load_n(&kernel->group_size[0], __ATOMIC_RELAXED),
                 __atomic_load_n(&kernel->group_size[1], __ATOMIC_RELAXED),
                 __atomic_load_n(&kernel->group_size[2], __ATOMIC_RELAXED)},
        .simd = kernel->simd,
    };
    struct shape_seen *seen = &shapes_seen[kernel->name_hash % SHAPE_CACHE];
    if (seen->name_hash == kernel->name_hash && memcmp(&seen->shape, &shape, sizeof(shape)) == 0)
        return;
    seen->name_hash = kernel->name_hash;
    seen->shape = shape;
    lttng_ust_do_tracepoint(zeprof_device, kernel_shape, call_id, shape.count[0], shape.count[1],
                            shape.count[2], shape.size[0], shape.size[1], shape.size[2],
                            shape.simd);
}
