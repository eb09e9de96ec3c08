/* jsonout: buffered JSON text for the timeline's many events (jsonout.h). */
#include "jsonout.h"

#include "grow.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

#define FLUSH_AT (256u << 10)

void zm_jsonout_init(struct zm_jsonout *out, FILE *file)
{
    *out = (struct zm_jsonout){.file = file};
}

void zm_jsonout_release(struct zm_jsonout *out)
{
    free(out->data);
    *out = (struct zm_jsonout){0};
}

static bool reserve(struct zm_jsonout *out, size_t more)
{
    if (ZM_GROW(out->data, out->capacity, out->length + more, FLUSH_AT + 4096) != 0) {
        out->failed = true;
        return false;
    }
    return true;
}

void zm_jsonout_raw(struct zm_jsonout *out, const char *text, size_t length)
{
    if (!reserve(out, length))
        return;
    memcpy(out->data + out->length, text, length);
    out->length += length;
}

void zm_jsonout_string(struct zm_jsonout *out, const char *text)
{
    static const char hex[] = "0123456789abcdef";
    size_t length = strlen(text);
    if (!reserve(out, length * 6 + 2)) /* worst case: every byte as \u00XX */
        return;
    char *p = out->data + out->length;
    *p++ = '"';
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') {
            *p++ = '\\';
            *p++ = (char)*c;
        } else if (*c < 0x20) {
            memcpy(p, "\\u00", 4);
            p[4] = hex[*c >> 4];
            p[5] = hex[*c & 15];
            p += 6;
        } else if (*c < 0x80) {
            *p++ = (char)*c;
        } else {
            /* Names are the application's bytes: invalid UTF-8 becomes U+FFFD (3 bytes, within
             * the 6 reserved per input byte). */
            size_t n = zm_utf8_sequence(c);
            if (n == 0) {
                memcpy(p, "\xef\xbf\xbd", 3);
                p += 3;
            } else {
                memcpy(p, c, n);
                p += n;
                c += n - 1;
            }
        }
    }
    *p++ = '"';
    out->length = (size_t)(p - out->data);
}

void zm_jsonout_u64(struct zm_jsonout *out, uint64_t value)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    if (!reserve(out, n))
        return;
    while (n)
        out->data[out->length++] = digits[--n];
}

void zm_jsonout_i64(struct zm_jsonout *out, int64_t value)
{
    if (value < 0) {
        zm_jsonout_literal(out, "-");
        zm_jsonout_u64(out, (uint64_t)0 - (uint64_t)value);
    } else {
        zm_jsonout_u64(out, (uint64_t)value);
    }
}

void zm_jsonout_hex(struct zm_jsonout *out, uint64_t value)
{
    static const char hex[] = "0123456789abcdef";
    char digits[16];
    size_t n = 0;
    do {
        digits[n++] = hex[value & 15];
        value >>= 4;
    } while (value);
    if (!reserve(out, n + 2))
        return;
    out->data[out->length++] = '0';
    out->data[out->length++] = 'x';
    while (n)
        out->data[out->length++] = digits[--n];
}

void zm_jsonout_micros(struct zm_jsonout *out, int64_t ns)
{
    if (ns < 0) {
        zm_jsonout_literal(out, "-");
        ns = -ns;
    }
    zm_jsonout_u64(out, (uint64_t)ns / 1000);
    uint64_t fraction = (uint64_t)ns % 1000;
    char text[4] = {'.', (char)('0' + fraction / 100), (char)('0' + fraction / 10 % 10),
                    (char)('0' + fraction % 10)};
    zm_jsonout_raw(out, text, sizeof(text));
}

/* Writes the buffer to the stream; a failure sticks in out->failed. */
static void write_buffer(struct zm_jsonout *out)
{
    if (out->length && fwrite(out->data, out->length, 1, out->file) != 1)
        out->failed = true;
    out->length = 0;
}

void zm_jsonout_maybe_flush(struct zm_jsonout *out)
{
    if (out->length >= FLUSH_AT)
        write_buffer(out);
}

int zm_jsonout_flush(struct zm_jsonout *out)
{
    write_buffer(out);
    return out->failed ? -1 : 0;
}
