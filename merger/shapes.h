/*
 * shapes: the launch shape each thread last recorded for each kernel name.
 *
 * The shim records `kernel_shape` only when a launch's shape differs from the last one its
 * thread recorded for a kernel of that name (docs/tracepoints.md); every other launch has the
 * shape carried forward here, per (thread, name). Keys are the model's thread index and interned
 * name pointer. Memory grows with the distinct (thread, kernel name) pairs. Owns its arrays.
 */
#ifndef ZM_SHAPES_H
#define ZM_SHAPES_H

#include "map.h"
#include "must_check.h"
#include "span.h"

#include <stddef.h>
#include <stdint.h>

struct zm_shapes {
    struct zm_map index;           /* (name, thread) -> index into shapes */
    struct zm_kernel_shape *shapes; /* Owned by this */
    size_t count, capacity;
};

/* No allocation. */
void zm_shapes_init(struct zm_shapes *shapes);
void zm_shapes_release(struct zm_shapes *shapes);
/* `thread` launched `name` (interned) with `shape` last; -1 when out of memory. */
ZM_MUST_CHECK int zm_shapes_set(struct zm_shapes *shapes, const char *name, uint64_t thread,
                                const struct zm_kernel_shape *shape);
/* The shape last set for (name, thread); known false when none was. */
struct zm_kernel_shape zm_shapes_get(const struct zm_shapes *shapes, const char *name,
                                     uint64_t thread);

#endif
