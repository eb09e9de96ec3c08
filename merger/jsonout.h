/*
 * jsonout: fast, buffered writing of JSON text to a stream, for the timeline's millions of
 * events (stdio's formatted output was a fifth of the merger's time). Text accumulates in a
 * buffer owned by this and goes to the stream (borrowed) in large writes. Errors are sticky:
 * check zm_jsonout_flush's result at the end.
 */
#ifndef ZM_JSONOUT_H
#define ZM_JSONOUT_H

#include "must_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct zm_jsonout {
    FILE *file; /* Weak */
    char *data; /* Owned by this */
    size_t length, capacity;
    bool failed;
};

void zm_jsonout_init(struct zm_jsonout *out, FILE *file);
void zm_jsonout_release(struct zm_jsonout *out);
void zm_jsonout_raw(struct zm_jsonout *out, const char *text, size_t length);
#define zm_jsonout_literal(out, text) zm_jsonout_raw((out), (text), sizeof(text) - 1)
/* A JSON string, quoted and escaped; invalid UTF-8 sequences become U+FFFD. */
void zm_jsonout_string(struct zm_jsonout *out, const char *text);
void zm_jsonout_u64(struct zm_jsonout *out, uint64_t value);
void zm_jsonout_i64(struct zm_jsonout *out, int64_t value);
/* "0x" and lower-case hex digits. */
void zm_jsonout_hex(struct zm_jsonout *out, uint64_t value);
/* Nanoseconds as microseconds with three decimals. */
void zm_jsonout_micros(struct zm_jsonout *out, int64_t ns);
/* Writes the buffer out once it is large; call between events. */
void zm_jsonout_maybe_flush(struct zm_jsonout *out);
/* Writes everything out; -1 if any write failed. */
ZM_MUST_CHECK int zm_jsonout_flush(struct zm_jsonout *out);

#endif
