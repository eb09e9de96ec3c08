/* grow: doubling growth of dynamic arrays (grow.h). */
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int zm_grow(void *array_address, size_t *capacity, size_t needed, size_t element_size,
            size_t first_capacity)
{
    if (needed <= *capacity)
        return 0;
    size_t grown = *capacity ? *capacity : first_capacity ? first_capacity : 1;
    while (grown < needed) {
        if (grown > SIZE_MAX / 2)
            return -1;
        grown *= 2;
    }
    if (element_size && grown > SIZE_MAX / element_size)
        return -1;
    /* The pointer is copied in and out as bytes: `array_address` may point to any T *. */
    void *array;
    memcpy(&array, array_address, sizeof(array));
    void *bigger = realloc(array, grown * element_size);
    if (!bigger)
        return -1;
    memcpy(array_address, &bigger, sizeof(bigger));
    *capacity = grown;
    return 0;
}
