/* utf8: application bytes made valid UTF-8 for JSON (utf8.h). */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

static int continuation(unsigned char c)
{
    return (c & 0xc0) == 0x80;
}

size_t zm_utf8_sequence(const unsigned char *text)
{
    unsigned char c = text[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return continuation(text[1]) ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        /* No overlong forms (e0 80..9f) and no surrogates (ed a0..bf). */
        if (!continuation(text[1]) || !continuation(text[2]) || (c == 0xe0 && text[1] < 0xa0) ||
            (c == 0xed && text[1] > 0x9f))
            return 0;
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if (!continuation(text[1]) || !continuation(text[2]) || !continuation(text[3]) ||
            (c == 0xf0 && text[1] < 0x90) || (c == 0xf4 && text[1] > 0x8f))
            return 0;
        return 4;
    }
    return 0;
}

json_t *zm_utf8_json_string(const char *text)
{
    if (!text)
        return json_string("");
    const unsigned char *p = (const unsigned char *)text;
    size_t length = strlen(text), valid = 0;
    while (p[valid]) {
        size_t n = zm_utf8_sequence(p + valid);
        if (!n)
            break;
        valid += n;
    }
    if (valid == length)
        return json_stringn(text, length);
    /* At worst every byte becomes three. */
    char *repaired = malloc(length * 3 + 1);
    if (!repaired)
        return NULL;
    size_t out = 0;
    for (size_t i = 0; p[i];) {
        size_t n = zm_utf8_sequence(p + i);
        if (n) {
            memcpy(repaired + out, p + i, n);
            out += n;
            i += n;
        } else {
            memcpy(repaired + out, replacement, 3);
            out += 3;
            i++;
        }
    }
    json_t *string = json_stringn(repaired, out);
    free(repaired);
    return string;
}
