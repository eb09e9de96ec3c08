/* intern: the string pool that makes equal names one pointer (intern.h). */
#include "intern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void zm_intern_init(struct zm_intern *pool)
{
    pool->strings = NULL;
    pool->capacity = 0;
    pool->count = 0;
}

void zm_intern_release(struct zm_intern *pool)
{
    for (size_t i = 0; i < pool->capacity; i++)
        free(pool->strings[i]);
    free(pool->strings);
    zm_intern_init(pool);
}

static size_t hash_text(const char *text, size_t length)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < length; i++) {
        h ^= (unsigned char)text[i];
        h *= 1099511628211ull;
    }
    return (size_t)h;
}

static int grow(struct zm_intern *pool)
{
    size_t capacity = pool->capacity ? pool->capacity * 2 : 256;
    char **strings = calloc(capacity, sizeof(*strings));
    if (!strings)
        return -1;
    for (size_t i = 0; i < pool->capacity; i++) {
        char *s = pool->strings[i];
        if (!s)
            continue;
        size_t j = hash_text(s, strlen(s)) & (capacity - 1);
        while (strings[j])
            j = (j + 1) & (capacity - 1);
        strings[j] = s;
    }
    free(pool->strings);
    pool->strings = strings;
    pool->capacity = capacity;
    return 0;
}

const char *zm_intern_n(struct zm_intern *pool, const char *text, size_t length)
{
    if ((pool->count + 1) * 2 > pool->capacity && grow(pool) != 0)
        return NULL;
    size_t mask = pool->capacity - 1;
    size_t i = hash_text(text, length) & mask;
    for (; pool->strings[i]; i = (i + 1) & mask) {
        const char *s = pool->strings[i];
        if (strncmp(s, text, length) == 0 && s[length] == '\0')
            return s;
    }
    char *copy = malloc(length + 1);
    if (!copy)
        return NULL;
    memcpy(copy, text, length);
    copy[length] = '\0';
    pool->strings[i] = copy;
    pool->count++;
    return copy;
}

const char *zm_intern(struct zm_intern *pool, const char *text)
{
    return zm_intern_n(pool, text, strlen(text));
}
