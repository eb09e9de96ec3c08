/*
 * kernels: the kernel detail (-k, docs/interface.md "Kernel detail"): kernel executions split by
 * launch shape, one row per (kernel name, group count, group size, SIMD width).
 *
 * Each row is a device statistics row (stats.h) named by its label, "name [gx,gy,gz]x[lx,ly,lz]
 * simd N" (a count or size not known shows as [?]; no " simd N" when not reported), so the tally
 * prints it as it prints the device rows; zm_kernels_info gives the name and shape behind a label
 * for the JSON fields. Only executions whose launch shape was recorded count. Owns its labels.
 */
#ifndef ZM_KERNELS_H
#define ZM_KERNELS_H

#include "intern.h"
#include "map.h"
#include "must_check.h"
#include "span.h"
#include "stats.h"

#include <jansson.h>
#include <stddef.h>

struct zm_kernel_info {
    const char *label;  /* Weak: interned by this */
    const char *kernel; /* Weak: the span's (demangled) name */
    struct zm_kernel_shape shape;
};

struct zm_kernels {
    struct zm_stats stats;        /* its device table holds the rows */
    struct zm_intern labels;      /* Owned by this */
    struct zm_map index;          /* label pointer -> index into infos */
    struct zm_kernel_info *infos; /* Owned by this */
    size_t count, capacity;
};

void zm_kernels_init(struct zm_kernels *kernels);
void zm_kernels_release(struct zm_kernels *kernels);
/* Counts one execution in its shape's row (nothing when its shape is not known); -1 when out of
 * memory. The span's name must stay valid as long as `kernels`. */
ZM_MUST_CHECK int zm_kernels_add(struct zm_kernels *kernels, const struct zm_device_span *span);
/* The name and shape behind a row's label, or NULL. */
const struct zm_kernel_info *zm_kernels_info(const struct zm_kernels *kernels, const char *label);
/* Adds "kernel", "group_count", "group_size" (arrays of 3, null when not known) and "simd" (null
 * when not reported) to a row object; -1 on failure. */
ZM_MUST_CHECK int zm_kernels_shape_json(const struct zm_kernel_info *info, json_t *row);

#endif
