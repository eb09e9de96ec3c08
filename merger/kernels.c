/* kernels: kernel executions split by launch shape (kernels.h). */
#include "kernels.h"

#include "grow.h"
#include "utf8.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

void zm_kernels_init(struct zm_kernels *kernels)
{
    *kernels = (struct zm_kernels){0};
    zm_stats_init(&kernels->stats, false);
    zm_intern_init(&kernels->labels);
    zm_map_init(&kernels->index);
}

void zm_kernels_release(struct zm_kernels *kernels)
{
    zm_stats_release(&kernels->stats);
    zm_intern_release(&kernels->labels);
    zm_map_release(&kernels->index);
    free(kernels->infos);
    zm_kernels_init(kernels);
}

static bool known(const uint32_t xyz[3])
{
    return xyz[0] || xyz[1] || xyz[2];
}

/* "[x,y,z]", or "[?]" when not known. */
static void format_xyz(char *text, size_t size, const uint32_t xyz[3])
{
    if (known(xyz))
        snprintf(text, size, "[%" PRIu32 ",%" PRIu32 ",%" PRIu32 "]", xyz[0], xyz[1], xyz[2]);
    else
        snprintf(text, size, "[?]");
}

int zm_kernels_add(struct zm_kernels *kernels, const struct zm_device_span *span)
{
    if (!span->shape.known)
        return 0;
    char count[48], size[48], simd[24] = "";
    format_xyz(count, sizeof(count), span->shape.count);
    format_xyz(size, sizeof(size), span->shape.size);
    if (span->shape.simd)
        snprintf(simd, sizeof(simd), " simd %" PRIu32, span->shape.simd);
    size_t length = (size_t)snprintf(NULL, 0, "%s %sx%s%s", span->name, count, size, simd);
    char *text = malloc(length + 1);
    if (!text)
        return -1;
    snprintf(text, length + 1, "%s %sx%s%s", span->name, count, size, simd);
    const char *label = zm_intern(&kernels->labels, text);
    free(text);
    if (!label)
        return -1;
    if (!zm_map_find(&kernels->index, (uint64_t)(uintptr_t)label, 0)) {
        if (ZM_GROW(kernels->infos, kernels->capacity, kernels->count + 1, 16) != 0 ||
            zm_map_put(&kernels->index, (uint64_t)(uintptr_t)label, 0, kernels->count) != 0)
            return -1;
        kernels->infos[kernels->count++] =
            (struct zm_kernel_info){label, span->name, span->shape};
    }
    struct zm_device_span row = *span;
    row.name = label;
    return zm_stats_add_device(&kernels->stats, &row);
}

const struct zm_kernel_info *zm_kernels_info(const struct zm_kernels *kernels, const char *label)
{
    const uint64_t *found = zm_map_find(&kernels->index, (uint64_t)(uintptr_t)label, 0);
    return found ? &kernels->infos[*found] : NULL;
}

static json_t *xyz_json(const uint32_t xyz[3])
{
    if (!known(xyz))
        return json_null();
    return json_pack("[I, I, I]", (json_int_t)xyz[0], (json_int_t)xyz[1], (json_int_t)xyz[2]);
}

int zm_kernels_shape_json(const struct zm_kernel_info *info, json_t *row)
{
    json_t *simd = info->shape.simd ? json_integer((json_int_t)info->shape.simd) : json_null();
    if (json_object_set_new(row, "kernel", zm_utf8_json_string(info->kernel)) != 0 ||
        json_object_set_new(row, "group_count", xyz_json(info->shape.count)) != 0 ||
        json_object_set_new(row, "group_size", xyz_json(info->shape.size)) != 0 ||
        json_object_set_new(row, "simd", simd) != 0)
        return -1;
    return 0;
}
