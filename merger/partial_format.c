/* partial_format: varints, strings, fixed fields and the hash of partial files (partial_format.h).
 */
#include "partial_format.h"

#include "grow.h"

#include <stdlib.h>
#include <string.h>

uint64_t zm_partial_hash(uint64_t hash, const void *data, size_t size)
{
    const unsigned char *bytes = data;
    for (size_t i = 0; i < size; i++) {
        hash ^= bytes[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

static unsigned char *reserve(struct zm_partial_buffer *buffer, size_t size)
{
    if (buffer->failed)
        return NULL;
    if (buffer->size + size > buffer->capacity &&
        ZM_GROW(buffer->bytes, buffer->capacity, buffer->size + size, 4096) != 0) {
        buffer->failed = true;
        return NULL;
    }
    unsigned char *at = buffer->bytes + buffer->size;
    buffer->size += size;
    return at;
}

void zm_partial_put_u64_slow(struct zm_partial_buffer *buffer, uint64_t value)
{
    unsigned char *at = reserve(buffer, 10); /* the longest varint; the rest is given back */
    if (!at)
        return;
    size_t n = 0;
    do {
        at[n] = (unsigned char)(value & 0x7f);
        value >>= 7;
        if (value)
            at[n] |= 0x80;
        n++;
    } while (value);
    buffer->size -= 10 - n;
}

void zm_partial_put_bytes(struct zm_partial_buffer *buffer, const void *data, size_t size)
{
    unsigned char *at = reserve(buffer, size);
    if (at && size)
        memcpy(at, data, size);
}

void zm_partial_put_string(struct zm_partial_buffer *buffer, const char *text)
{
    size_t length = strlen(text);
    zm_partial_put_u64(buffer, length);
    zm_partial_put_bytes(buffer, text, length);
}

void zm_partial_put_fixed64(struct zm_partial_buffer *buffer, uint64_t value)
{
    unsigned char encoded[8];
    for (int i = 0; i < 8; i++)
        encoded[i] = (unsigned char)(value >> (8 * i));
    zm_partial_put_bytes(buffer, encoded, 8);
}

void zm_partial_buffer_release(struct zm_partial_buffer *buffer)
{
    free(buffer->bytes);
    *buffer = (struct zm_partial_buffer){0};
}

uint64_t zm_partial_get_u64(struct zm_partial_cursor *cursor)
{
    uint64_t value = 0;
    for (unsigned shift = 0; !cursor->failed; shift += 7) {
        if (cursor->at >= cursor->end || shift > 63) {
            cursor->failed = true;
            break;
        }
        unsigned char byte = *cursor->at++;
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return value;
    }
    return 0;
}

int64_t zm_partial_get_i64(struct zm_partial_cursor *cursor)
{
    uint64_t value = zm_partial_get_u64(cursor);
    return (int64_t)(value >> 1) ^ -(int64_t)(value & 1);
}

const char *zm_partial_get_string(struct zm_partial_cursor *cursor, size_t *length)
{
    uint64_t size = zm_partial_get_u64(cursor);
    if (cursor->failed || size > (uint64_t)(cursor->end - cursor->at)) {
        cursor->failed = true;
        *length = 0;
        return NULL;
    }
    const char *text = (const char *)cursor->at;
    cursor->at += size;
    *length = (size_t)size;
    return text;
}

uint64_t zm_partial_get_fixed64(struct zm_partial_cursor *cursor)
{
    if (cursor->failed || cursor->end - cursor->at < 8) {
        cursor->failed = true;
        return 0;
    }
    uint64_t value = 0;
    for (int i = 0; i < 8; i++)
        value |= (uint64_t)cursor->at[i] << (8 * i);
    cursor->at += 8;
    return value;
}
