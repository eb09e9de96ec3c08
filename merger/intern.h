/*
 * intern: a pool of unique strings. Equal strings get the same pointer, so the rest of the
 * merger compares and hashes names by pointer. The pool owns every string until released.
 */
#ifndef ZM_INTERN_H
#define ZM_INTERN_H

#include "must_check.h"

#include <stddef.h>

struct zm_intern {
    char **strings;  /* Owned by this: open-addressing table of owned strings */
    size_t capacity; /* power of two, or 0 */
    size_t count;
};

void zm_intern_init(struct zm_intern *pool);
void zm_intern_release(struct zm_intern *pool);
/* Returns the pool's copy of the first `length` bytes of `text`, or NULL when out of memory. */
ZM_MUST_CHECK const char *zm_intern_n(struct zm_intern *pool, const char *text, size_t length);
ZM_MUST_CHECK const char *zm_intern(struct zm_intern *pool, const char *text);

#endif
