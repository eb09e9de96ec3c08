/*
 * validate: cheap checks of one CTF trace directory's framing before libbabeltrace2 reads it.
 *
 * libbabeltrace2 2.0.4 loops forever or aborts on some framing values it trusts: metadata packet
 * sizes past the end of the file, packet or content sizes of 2^63 or more, a packet end timestamp
 * of 2^64-1, packet index entries pointing past the stream file. It also reads without a word
 * metadata whose framing declarations are damaged (a packet context without content_size decodes
 * a packet's padding as events) or whose uuids disagree. Those are refused here with a plain
 * reason naming the file, by reading headers and the metadata text only (never the events):
 *   - metadata packets (CTF 1.8 metadata packet header): magic, sizes within the file, version
 *     1.8, no compression, encryption, checksum scheme nor checksum, one uuid in every packet, no
 *     NUL byte in the text;
 *   - packetized metadata is LTTng's: its text must hold, whole and once, the declarations LTTng
 *     (2.8 and later) writes that fix the framing: the trace block (uuid equal to the packets',
 *     byte order, packet header), the integer typealiases, the packet context, both event
 *     headers, and every stream block using them (any clock name: a clock plugin renames it);
 *   - packet index files (index/NAME.idx, LTTng's format): header, whole entries, each packet
 *     within its stream file, sizes consistent, timestamps ordered and below 2^64-1;
 *   - stream packet headers and contexts, when the metadata declares LTTng's layout (a plain
 *     text metadata may declare another: then the supervisor, supervise.h, contains what
 *     libbabeltrace2 does with them): magic, the trace's uuid, sizes within the file and
 *     consistent, timestamps ordered and below 2^64-1.
 * What cannot be foreseen this cheaply (e.g. duplicate member names in the metadata text) is left
 * to the supervisor; a text that does not parse, to babeltrace2's parser (refused in one line).
 * Reads the files and keeps nothing: it owns no state between calls.
 */
#ifndef ZM_VALIDATE_H
#define ZM_VALIDATE_H

#include "must_check.h"

#include <stdbool.h>
#include <stddef.h>

/* What the checks learned of the layout: whether the metadata declares LTTng's (whose packet
 * header and context offsets are then known), its byte order, and the width of its packet
 * context's events_discarded (LTTng's `unsigned long`: 4 or 8 bytes). */
struct zm_validate_layout {
    bool lttng;
    bool big_endian;
    unsigned long_bytes;
};

/* 0 if `directory` (holding a `metadata` file) passes; else -1 with a one-line reason in `why`.
 * `layout`, unless NULL, is filled on success. */
ZM_MUST_CHECK int zm_validate_trace(const char *directory, struct zm_validate_layout *layout,
                                    char *why, size_t why_size);

#endif
