/* validate: cheap framing checks of a CTF trace before babeltrace2 reads it (validate.h). */
#include "validate.h"

#include "io.h"
#include "supervise.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define METADATA_MAGIC 0x75d11d57u
#define METADATA_HEADER_BYTES 37
#define METADATA_MAX_BYTES (256u << 20) /* larger metadata is read by babeltrace2 alone */
#define PACKET_MAGIC 0xc1fc1fc1u
#define INDEX_MAGIC 0xc1f1dcc1u
#define INDEX_HEADER_BYTES 16
#define INDEX_ENTRY_MIN_BYTES 56 /* offset, sizes, timestamps, discarded, stream id */
/* LTTng's packet header (32 bytes) and context up to packet_size: the fields checked. */
#define PACKET_CHECKED_BYTES 64
#define PACKET_CONTEXT_END 84 /* header and the whole LTTng packet context */

static uint32_t load32(const unsigned char *p, bool big)
{
    return (uint32_t)zm_io_load(p, 4, big);
}

static uint64_t load64(const unsigned char *p, bool big)
{
    return zm_io_load(p, 8, big);
}

/* The metadata of one trace directory, as read by metadata_text. */
struct metadata {
    char *text;             /* Owned by this; NUL-terminated */
    bool packetized;        /* LTTng writes packets; a plain text file is someone else's */
    unsigned char uuid[16]; /* the packets' uuid, when packetized */
};

/* Reads the metadata: packets checked and unwrapped, or the text file as it is. -1 with `why`
 * filled on a bad packet; -1 with `why` empty when it cannot be read (babeltrace2 says why).
 * `name` is the metadata file's path as shown in reasons. */
static int metadata_text(const char *directory, const char *name, struct metadata *out, char *why,
                         size_t why_size)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/metadata", directory);
    size_t size = 0;
    unsigned char *data = zm_io_read_file(path, METADATA_MAX_BYTES, &size);
    if (!data) {
        if (errno == EINVAL)
            snprintf(why, why_size, "the metadata is not a regular file");
        else if (errno != EFBIG)
            snprintf(why, why_size, "cannot read the metadata (%s)", strerror(errno));
        return -1;
    }
    bool big = size >= 4 && load32(data, true) == METADATA_MAGIC;
    if (size < 4 || (!big && load32(data, false) != METADATA_MAGIC)) {
        out->text = (char *)data; /* plain text metadata */
        return 0;
    }
    out->packetized = true;
    char *text = malloc(size + 1);
    size_t text_length = 0;
    for (size_t offset = 0, packet = 0; text && offset < size; packet++) {
        const unsigned char *header = data + offset;
        uint64_t left = size - offset;
        if (left < METADATA_HEADER_BYTES) {
            snprintf(why, why_size, "corrupt metadata %s: packet %zu truncated", name, packet);
            goto bad;
        }
        uint64_t content_bits = load32(header + 24, big), packet_bits = load32(header + 28, big);
        if (load32(header, big) != METADATA_MAGIC) {
            snprintf(why, why_size, "corrupt metadata %s: packet %zu has a bad magic number", name,
                     packet);
            goto bad;
        }
        /* A last packet whose padding runs past the end is read fine; its content must not. */
        if (packet_bits % 8 || content_bits % 8 || content_bits > packet_bits ||
            content_bits < METADATA_HEADER_BYTES * 8 || content_bits / 8 > left) {
            snprintf(why, why_size,
                     "corrupt metadata %s: packet %zu declares content %llu bits in %llu bits, "
                     "%llu bytes left in the file",
                     name, packet, (unsigned long long)content_bits,
                     (unsigned long long)packet_bits, (unsigned long long)left);
            goto bad;
        }
        /* CTF 1.8 is the only version (babeltrace2 refuses others without saying which). */
        if (header[35] != 1 || header[36] != 8) {
            snprintf(why, why_size, "corrupt metadata %s: packet %zu says CTF %u.%u, not 1.8", name,
                     packet, header[35], header[36]);
            goto bad;
        }
        if (header[32] || header[33] || header[34]) {
            snprintf(why, why_size,
                     "corrupt metadata %s: packet %zu is compressed, encrypted or checksummed",
                     name, packet);
            goto bad;
        }
        /* No checksum scheme: the checksum is 0 (a set bit there is damage). */
        if (load32(header + 20, big) != 0) {
            snprintf(why, why_size,
                     "corrupt metadata %s: packet %zu has a checksum but no checksum scheme", name,
                     packet);
            goto bad;
        }
        if (packet == 0) {
            memcpy(out->uuid, header + 4, sizeof(out->uuid));
        } else if (memcmp(out->uuid, header + 4, sizeof(out->uuid)) != 0) {
            snprintf(why, why_size, "corrupt metadata %s: packet %zu's uuid is not packet 0's",
                     name, packet);
            goto bad;
        }
        size_t length = (size_t)(content_bits / 8) - METADATA_HEADER_BYTES;
        /* The text ends at the content's end: a NUL inside would cut it short. */
        if (memchr(header + METADATA_HEADER_BYTES, '\0', length)) {
            snprintf(why, why_size, "corrupt metadata %s: packet %zu's text holds a NUL byte", name,
                     packet);
            goto bad;
        }
        memcpy(text + text_length, header + METADATA_HEADER_BYTES, length);
        text_length += length;
        offset += packet_bits / 8 < left ? (size_t)(packet_bits / 8) : (size_t)left;
    }
    free(data);
    if (!text) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    text[text_length] = '\0';
    out->text = text;
    return 0;
bad:
    free(data);
    free(text);
    return -1;
}

/* `text` with every run of white space made one space (in place). */
static void squeeze_spaces(char *text)
{
    char *out = text;
    for (const char *in = text; *in; in++) {
        bool space = *in == ' ' || *in == '\t' || *in == '\n' || *in == '\r';
        if (space && (out == text || out[-1] == ' '))
            continue;
        *out++ = space ? ' ' : *in;
    }
    *out = '\0';
}

/* `pattern` matches at `at`: its text, where each '*' is an identifier (a clock's name). */
static bool matches_at(const char *at, const char *pattern)
{
    for (; *pattern; pattern++) {
        if (*pattern != '*') {
            if (*at++ != *pattern)
                return false;
            continue;
        }
        const char *start = at;
        while ((*at >= 'a' && *at <= 'z') || (*at >= 'A' && *at <= 'Z') ||
               (*at >= '0' && *at <= '9') || *at == '_')
            at++;
        if (at == start)
            return false;
    }
    return true;
}

/* `pattern` (see matches_at) matches `text` at exactly one place. */
static bool contains_once(const char *text, const char *pattern)
{
    char prefix[512]; /* the pattern up to its first '*': what strstr can look for */
    snprintf(prefix, sizeof(prefix), "%.*s", (int)strcspn(pattern, "*"), pattern);
    size_t found = 0;
    for (const char *at = strstr(text, prefix); at && found < 2; at = strstr(at + 1, prefix))
        found += matches_at(at, pattern);
    return found == 1;
}

/* `text` starts with `part`: then `*at` moves past it. */
static bool take(const char **at, const char *part)
{
    size_t length = strlen(part);
    if (strncmp(*at, part, length) != 0)
        return false;
    *at += length;
    return true;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A uuid in its text form (8-4-4-4-12 hex digits) at `*at`, moved past it. */
static bool take_uuid(const char **at, unsigned char uuid[16])
{
    const char *p = *at;
    for (int byte = 0; byte < 16; byte++) {
        if (byte == 4 || byte == 6 || byte == 8 || byte == 10) {
            if (*p++ != '-')
                return false;
        }
        int high = hex_digit(p[0]), low = high < 0 ? -1 : hex_digit(p[1]);
        if (low < 0)
            return false;
        uuid[byte] = (unsigned char)(high << 4 | low);
        p += 2;
    }
    *at = p;
    return true;
}

/* The trace block of LTTng's metadata (squeezed): its uuid and byte order. */
static bool lttng_trace_block(const char *text, unsigned char uuid[16], bool *big)
{
    static const char start[] = "trace { major = 1; minor = 8; uuid = \"";
    const char *at = strstr(text, start);
    if (!at || strstr(at + 1, start))
        return false;
    at += strlen(start);
    if (!take_uuid(&at, uuid) || !take(&at, "\"; byte_order = "))
        return false;
    *big = take(&at, "be;");
    if (!*big && !take(&at, "le;"))
        return false;
    return take(&at, " packet.header := struct { uint32_t magic; uint8_t uuid[16]; "
                     "uint32_t stream_id; uint64_t stream_instance_id; }; };");
}

/* Every stream block (there is one per channel) uses LTTng's packet context and one of its two
 * event headers. */
static bool lttng_stream_blocks(const char *text)
{
    size_t streams = 0;
    for (const char *at = strstr(text, "stream { "); at; at = strstr(at, "stream { ")) {
        at += strlen("stream { ");
        if (!take(&at, "id = ") || *at < '0' || *at > '9')
            return false;
        while (*at >= '0' && *at <= '9')
            at++;
        if (!take(&at, "; event.header := struct event_header_") ||
            !(take(&at, "compact;") || take(&at, "large;")) ||
            !take(&at, " packet.context := struct packet_context;"))
            return false;
        streams++;
    }
    return streams > 0;
}

/* The declarations LTTng-UST (2.8 and later; kernel traces are untested) writes once that fix how
 * packets and events are framed: each must be there, once and whole. A renamed content_size, for
 * one, makes babeltrace2 decode a packet's padding as events without a word. */
static const struct {
    const char *what, *text;
} lttng_declarations[] = {
    {"uint8_t", "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;"},
    {"uint16_t", "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;"},
    {"uint32_t", "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;"},
    {"uint64_t", "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;"},
    {"uint5_t", "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;"},
    {"uint27_clock_monotonic_t", "typealias integer { size = 27; align = 1; signed = false; "
                                 "map = clock.*.value; } := uint27_clock_monotonic_t;"},
    {"uint32_clock_monotonic_t", "typealias integer { size = 32; align = 8; signed = false; "
                                 "map = clock.*.value; } := uint32_clock_monotonic_t;"},
    {"uint64_clock_monotonic_t", "typealias integer { size = 64; align = 8; signed = false; "
                                 "map = clock.*.value; } := uint64_clock_monotonic_t;"},
    {"the packet context",
     "struct packet_context { uint64_clock_monotonic_t timestamp_begin; "
     "uint64_clock_monotonic_t timestamp_end; uint64_t content_size; uint64_t packet_size; "
     "uint64_t packet_seq_num; unsigned long events_discarded; uint32_t cpu_id; };"},
    {"the compact event header",
     "struct event_header_compact { enum : uint5_t { compact = 0 ... 30, extended = 31 } id; "
     "variant <id> { struct { uint27_clock_monotonic_t timestamp; } compact; struct { "
     "uint32_t id; uint64_clock_monotonic_t timestamp; } extended; } v; } align(8);"},
    {"the large event header",
     "struct event_header_large { enum : uint16_t { compact = 0 ... 65534, extended = 65535 } "
     "id; variant <id> { struct { uint32_clock_monotonic_t timestamp; } compact; struct { "
     "uint32_t id; uint64_clock_monotonic_t timestamp; } extended; } v; } align(8);"},
};

/* Whether the metadata declares LTTng's packet header, packet context and event headers, whose
 * offsets are then known: NULL, with `uuid` and the byte order `big`; else what is missing or
 * damaged. `text` is squeezed in place. */
static const char *lttng_layout(char *text, unsigned char uuid[16], bool *big, unsigned *long_bytes)
{
    squeeze_spaces(text);
    if (!lttng_trace_block(text, uuid, big))
        return "the trace block (uuid, byte order, packet header)";
    for (size_t i = 0; i < sizeof(lttng_declarations) / sizeof(*lttng_declarations); i++) {
        if (!contains_once(text, lttng_declarations[i].text))
            return lttng_declarations[i].what;
    }
    /* events_discarded's type: the word of the traced application's architecture */
    if (contains_once(text, "typealias integer { size = 64; align = 8; signed = false; } := "
                            "unsigned long;"))
        *long_bytes = 8;
    else if (contains_once(text, "typealias integer { size = 32; align = 8; signed = false; } := "
                                 "unsigned long;"))
        *long_bytes = 4;
    else
        return "unsigned long";
    if (!lttng_stream_blocks(text))
        return "a stream block (its packet context or event header)";
    return NULL;
}

/* Every packet of one stream file in LTTng's layout, of the trace whose uuid is `uuid`. */
static int check_stream(const char *path, const char *name, bool big, const unsigned char uuid[16],
                        char *why, size_t why_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot read stream %s (%s)", name, strerror(errno));
        return -1;
    }
    struct stat info;
    int status = -1;
    if (fstat(fd, &info) != 0) {
        snprintf(why, why_size, "cannot read stream %s (%s)", name, strerror(errno));
        goto end;
    }
    uint64_t size = (uint64_t)info.st_size, offset = 0;
    for (uint64_t packet = 0; offset < size; packet++) {
        unsigned char header[PACKET_CHECKED_BYTES];
        if (size - offset < PACKET_CONTEXT_END ||
            zm_io_read_at(fd, header, sizeof(header), offset) != 0) {
            snprintf(why, why_size, "corrupt stream %s: packet %llu truncated", name,
                     (unsigned long long)packet);
            goto end;
        }
        uint64_t begin = load64(header + 32, big), end = load64(header + 40, big);
        uint64_t content_bits = load64(header + 48, big), packet_bits = load64(header + 56, big);
        if (load32(header, big) != PACKET_MAGIC) {
            snprintf(why, why_size, "corrupt stream %s: packet %llu has a bad magic number", name,
                     (unsigned long long)packet);
            goto end;
        }
        /* babeltrace2 2.0.4 does not compare them: another trace's packet would be read */
        if (memcmp(header + 4, uuid, 16) != 0) {
            snprintf(why, why_size, "corrupt stream %s: packet %llu's uuid is not the trace's",
                     name, (unsigned long long)packet);
            goto end;
        }
        if (packet_bits % 8 || content_bits > packet_bits ||
            content_bits < PACKET_CONTEXT_END * 8 || packet_bits / 8 > size - offset) {
            snprintf(why, why_size,
                     "corrupt stream %s: packet %llu declares content %llu bits in %llu bits, "
                     "%llu bytes left in the file",
                     name, (unsigned long long)packet, (unsigned long long)content_bits,
                     (unsigned long long)packet_bits, (unsigned long long)(size - offset));
            goto end;
        }
        if (begin > end || end == UINT64_MAX) {
            snprintf(why, why_size, "corrupt stream %s: packet %llu has bad timestamps", name,
                     (unsigned long long)packet);
            goto end;
        }
        offset += packet_bits / 8;
    }
    status = 0;
end:
    close(fd);
    return status;
}

/* index/NAME.idx, if there is one, against the stream file it describes. */
static int check_index(const char *directory, const char *name, uint64_t stream_size, char *why,
                       size_t why_size)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/index/%s.idx", directory, name);
    size_t size = 0;
    unsigned char *data = zm_io_read_file(path, UINT32_MAX, &size);
    if (!data) {
        if (errno == ENOENT)
            return 0;
        snprintf(why, why_size, "cannot read index %s.idx (%s)", name,
                 errno == EINVAL ? "not a regular file" : strerror(errno));
        return -1;
    }
    int status = -1;
    uint32_t entry_bytes = size >= INDEX_HEADER_BYTES ? load32(data + 12, true) : 0;
    if (size < INDEX_HEADER_BYTES || load32(data, true) != INDEX_MAGIC ||
        entry_bytes < INDEX_ENTRY_MIN_BYTES || (size - INDEX_HEADER_BYTES) % entry_bytes) {
        snprintf(why, why_size, "corrupt packet index %s.idx: bad header or truncated entry", name);
        goto end;
    }
    uint64_t previous_end = 0;
    for (size_t at = INDEX_HEADER_BYTES, entry = 0; at < size; at += entry_bytes, entry++) {
        const unsigned char *p = data + at;
        uint64_t offset = load64(p, true), packet_bits = load64(p + 8, true);
        uint64_t content_bits = load64(p + 16, true);
        uint64_t begin = load64(p + 24, true), end = load64(p + 32, true);
        if (packet_bits == 0 || packet_bits % 8 || content_bits > packet_bits ||
            offset < previous_end || offset > stream_size ||
            packet_bits / 8 > stream_size - offset || begin > end || end == UINT64_MAX) {
            snprintf(why, why_size,
                     "corrupt packet index %s.idx: entry %zu (offset %llu, %llu bits) does not "
                     "fit the %llu-byte stream file or has bad timestamps",
                     name, entry, (unsigned long long)offset, (unsigned long long)packet_bits,
                     (unsigned long long)stream_size);
            goto end;
        }
        previous_end = offset + packet_bits / 8;
    }
    status = 0;
end:
    free(data);
    return status;
}

int zm_validate_trace(const char *directory, struct zm_validate_layout *learned, char *why,
                      size_t why_size)
{
    why[0] = '\0';
    if (learned)
        *learned = (struct zm_validate_layout){0};
    char path[4096], name[1024];
    snprintf(path, sizeof(path), "%s/metadata", directory);
    zm_supervise_escape_line(name, sizeof(name), path);
    struct metadata metadata = {0};
    if (metadata_text(directory, name, &metadata, why, why_size) != 0)
        return why[0] ? -1 : 0;
    unsigned char uuid[16];
    bool big = false;
    unsigned long_bytes = 0;
    const char *damaged = lttng_layout(metadata.text, uuid, &big, &long_bytes);
    free(metadata.text);
    /* Packetized metadata is LTTng's: its layout is then required, not merely recognized. */
    if (damaged && metadata.packetized) {
        snprintf(why, why_size,
                 "corrupt metadata %s: LTTng's declaration of %s is missing or damaged", name,
                 damaged);
        return -1;
    }
    if (!damaged && metadata.packetized && memcmp(uuid, metadata.uuid, sizeof(uuid)) != 0) {
        snprintf(why, why_size, "corrupt metadata %s: the trace's uuid is not its packets'", name);
        return -1;
    }
    bool layout = !damaged;
    DIR *folder = opendir(directory);
    if (!folder) {
        snprintf(why, why_size, "cannot read the trace directory (%s)", strerror(errno));
        return -1;
    }
    int status = 0;
    struct dirent *entry;
    while (status == 0 && (entry = readdir(folder))) {
        /* Stream files: the regular files beside `metadata` (src.ctf.fs reads the same). */
        if (entry->d_name[0] == '.' || strcmp(entry->d_name, "metadata") == 0)
            continue;
        struct stat info;
        snprintf(path, sizeof(path), "%s/%s", directory, entry->d_name);
        if (stat(path, &info) != 0 || !S_ISREG(info.st_mode))
            continue;
        if (info.st_size == 0)
            continue; /* an empty stream: babeltrace2 skips it */
        if (layout) {
            status = check_stream(path, entry->d_name, big, uuid, why, why_size);
        } else if (access(path, R_OK) != 0) {
            snprintf(why, why_size, "cannot read stream %s (%s)", entry->d_name, strerror(errno));
            status = -1;
        }
        if (status == 0)
            status = check_index(directory, entry->d_name, (uint64_t)info.st_size, why, why_size);
    }
    closedir(folder);
    if (status == 0 && learned)
        *learned = (struct zm_validate_layout){
            .lttng = layout, .big_endian = big, .long_bytes = long_bytes};
    return status;
}
