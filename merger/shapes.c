/* shapes: launch shapes carried forward per thread and kernel name (shapes.h). */
#include "shapes.h"

#include "grow.h"

#include <stdlib.h>

void zm_shapes_init(struct zm_shapes *shapes)
{
    *shapes = (struct zm_shapes){0};
    zm_map_init(&shapes->index);
}

void zm_shapes_release(struct zm_shapes *shapes)
{
    zm_map_release(&shapes->index);
    free(shapes->shapes);
    zm_shapes_init(shapes);
}

int zm_shapes_set(struct zm_shapes *shapes, const char *name, uint64_t thread,
                  const struct zm_kernel_shape *shape)
{
    uint64_t *found = zm_map_find(&shapes->index, (uint64_t)(uintptr_t)name, thread);
    if (found) {
        shapes->shapes[*found] = *shape;
        return 0;
    }
    if (ZM_GROW(shapes->shapes, shapes->capacity, shapes->count + 1, 16) != 0)
        return -1;
    if (zm_map_put(&shapes->index, (uint64_t)(uintptr_t)name, thread, shapes->count) != 0)
        return -1;
    shapes->shapes[shapes->count++] = *shape;
    return 0;
}

struct zm_kernel_shape zm_shapes_get(const struct zm_shapes *shapes, const char *name,
                                     uint64_t thread)
{
    const uint64_t *found = zm_map_find(&shapes->index, (uint64_t)(uintptr_t)name, thread);
    return found ? shapes->shapes[*found] : (struct zm_kernel_shape){0};
}
