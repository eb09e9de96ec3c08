/*
 * partial_format: the bytes of a partial file (docs/merger.md "Partials"), shared by its writer
 * (partial_write.h) and its reader (partial_read.h).
 *
 * A partial holds, per host, everything the job-wide analysis needs of that host, in the host's
 * own clock: its tally at the finest split, its anomalies, devices and anchors, its frame marks
 * and, for the timeline, its spans. Layout (integers in the header and section heads are
 * little-endian u32/u64; everything inside a section is LEB128 varints, signed ones zigzagged):
 *
 *   header   "ZEPROFPT" | u32 version | u32 host count | u64 file size | u64 hash of the above
 *   per host u64 size | u64 hash | spans section | u64 size | u64 hash | summary section
 *
 * The hash is 64-bit FNV-1a. The file size in the header catches truncation; each section's
 * hash catches corruption where that section is used (a tally skips the spans unread).
 * Encoders append to a growable buffer; decoders read from a bounded cursor whose `failed`
 * flag sticks once anything runs past the end.
 */
#ifndef ZM_PARTIAL_FORMAT_H
#define ZM_PARTIAL_FORMAT_H

#include "must_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZM_PARTIAL_MAGIC "ZEPROFPT"
#define ZM_PARTIAL_MAGIC_SIZE 8
#define ZM_PARTIAL_VERSION 1u
#define ZM_PARTIAL_HEADER_SIZE 32
#define ZM_PARTIAL_FNV_OFFSET 0xcbf29ce484222325ull

/* 64-bit FNV-1a of `size` bytes, continuing from `hash` (start at ZM_PARTIAL_FNV_OFFSET). */
uint64_t zm_partial_hash(uint64_t hash, const void *data, size_t size);

struct zm_partial_buffer {
    unsigned char *bytes; /* Owned by this */
    size_t size, capacity;
    bool failed; /* out of memory: every later append does nothing */
};

/* The general case of zm_partial_put_u64: growing the buffer, or nothing once failed. */
void zm_partial_put_u64_slow(struct zm_partial_buffer *buffer, uint64_t value);

/* A varint. Inline, with its own loop when the buffer has room: a partial's spans are
 * some twenty varints per event, and a call each was 1% of a --reduce. */
static inline void zm_partial_put_u64(struct zm_partial_buffer *buffer, uint64_t value)
{
    if (buffer->failed || buffer->capacity - buffer->size < 10) { /* 10: the longest varint */
        zm_partial_put_u64_slow(buffer, value);
        return;
    }
    unsigned char *at = buffer->bytes + buffer->size;
    size_t n = 0;
    while (value >= 0x80) {
        at[n++] = (unsigned char)(value | 0x80);
        value >>= 7;
    }
    at[n++] = (unsigned char)value;
    buffer->size += n;
}

/* A signed varint, zigzagged: small magnitudes of either sign stay short. */
static inline void zm_partial_put_i64(struct zm_partial_buffer *buffer, int64_t value)
{
    zm_partial_put_u64(buffer, ((uint64_t)value << 1) ^ (uint64_t)(value >> 63));
}

void zm_partial_put_bytes(struct zm_partial_buffer *buffer, const void *data, size_t size);
/* A string: its length, then its bytes. */
void zm_partial_put_string(struct zm_partial_buffer *buffer, const char *text);
/* A fixed little-endian u64 (header fields), at the end of the buffer. */
void zm_partial_put_fixed64(struct zm_partial_buffer *buffer, uint64_t value);
void zm_partial_buffer_release(struct zm_partial_buffer *buffer);

struct zm_partial_cursor {
    const unsigned char *at, *end;
    bool failed; /* read past the end or a malformed varint */
};

uint64_t zm_partial_get_u64(struct zm_partial_cursor *cursor);
int64_t zm_partial_get_i64(struct zm_partial_cursor *cursor);
/* A string's bytes (not NUL-terminated) and length; NULL once failed. */
const char *zm_partial_get_string(struct zm_partial_cursor *cursor, size_t *length);
uint64_t zm_partial_get_fixed64(struct zm_partial_cursor *cursor);

#endif
