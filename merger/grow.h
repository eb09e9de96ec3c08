/*
 * grow: the one way the merger grows a dynamic array. The capacity doubles, from a first capacity
 * the caller picks, until it holds what is needed, so that appending n elements one by one costs
 * O(n) copies in all.
 *
 * On failure (out of memory, or a size that would overflow) the array and its capacity are left as
 * they were and -1 is returned. The caller owns the array before and after; grow borrows it.
 */
#ifndef ZM_GROW_H
#define ZM_GROW_H

#include "must_check.h"

#include <stddef.h>

/* Makes room for `needed` elements of `element_size` bytes in the array whose pointer is at
 * `array_address` (a T **, for any object type T) and whose capacity, in elements, is *capacity.
 * 0 when there is room (already or now), -1 on failure. */
ZM_MUST_CHECK int zm_grow(void *array_address, size_t *capacity, size_t needed, size_t element_size,
                          size_t first_capacity);

/* zm_grow for an array lvalue `array` (T *) and its size_t `capacity`, elements of its own type. */
#define ZM_GROW(array, capacity, needed, first_capacity)                                           \
    zm_grow(&(array), &(capacity), (needed), sizeof(*(array)), (first_capacity))

#endif
