/*
 * validate: cheap checks of one CTF trace directory's framing before libbabeltrace2 reads it.
 *
 * libbabeltrace2 2.0.4 loops forever or aborts on some framing values it trusts: metadata packet
 * sizes past the end of the file, packet or content sizes of 2^63 or more, a packet end timestamp
 * of 2^64-1, packet index entries pointing past the stream file. Those are refused here with a
 * plain reason, by reading headers only (never the events):
 *   - metadata packets (CTF 1.8 metadata packet header): magic, sizes within the file, no
 *     compression, encryption or checksum;
 *   - packet index files (index/NAME.idx, LTTng's format): header, whole entries, each packet
 *     within its stream file, sizes consistent, timestamps ordered and below 2^64-1;
 *   - stream packet headers and contexts, when the metadata declares LTTng's layout (otherwise
 *     the supervisor, supervise.h, contains what libbabeltrace2 does with them): magic, sizes
 *     within the file and consistent, timestamps ordered and below 2^64-1.
 * What cannot be foreseen this cheaply (e.g. duplicate member names in the metadata text) is left
 * to the supervisor. Reads the files and keeps nothing: it owns no state between calls.
 */
#ifndef ZM_VALIDATE_H
#define ZM_VALIDATE_H

#include "must_check.h"

#include <stddef.h>

/* 0 if `directory` (holding a `metadata` file) passes; else -1 with a one-line reason in `why`. */
ZM_MUST_CHECK int zm_validate_trace(const char *directory, char *why, size_t why_size);

#endif
