/*
 * utf8: names in a trace are bytes from the application (kernel names, hostnames, device names)
 * and need not be UTF-8; JSON must be. Invalid sequences become U+FFFD, so a row is never lost
 * and the JSON stays valid. Borrows its input; what it returns is the caller's.
 */
#ifndef ZM_UTF8_H
#define ZM_UTF8_H

#include "must_check.h"

#include <jansson.h>
#include <stddef.h>

/* The length of the valid UTF-8 sequence starting at `text` (1 to 4), or 0 if it is invalid. */
size_t zm_utf8_sequence(const unsigned char *text);
/* A JSON string of `text` with invalid sequences replaced by U+FFFD; new reference (NULL: out of
 * memory). NULL `text` gives "". */
ZM_MUST_CHECK json_t *zm_utf8_json_string(const char *text);

#endif
