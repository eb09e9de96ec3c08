/* split_plan: a trace's packets cut into runs, each copied into a trace of its own
 * (split_plan.h). */
#include "split_plan.h"

#include "grow.h"
#include "io.h"
#include "supervise.h"
#include "validate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* LTTng's packet index (index/NAME.idx, big-endian): header, then entries starting with the
 * packet's offset and its size in bits. */
#define INDEX_MAGIC 0xc1f1dcc1u
#define INDEX_HEADER_BYTES 16
#define INDEX_ENTRY_MIN_BYTES 56
/* LTTng's packet header and context: magic, uuid, stream_id (u32) at 20, stream_instance_id
 * (u64) at 24, then timestamps, sizes, packet_seq_num (u64) at 64, events_discarded (unsigned
 * long) at 72. */
#define PACKET_MAGIC 0xc1fc1fc1u
#define PACKET_STREAM_ID 20
#define PACKET_INSTANCE 24
#define PACKET_SEQ_NUM 64
#define PACKET_DISCARDED 72
/* Room left in the temporary directory's file system beyond twice the trace: the runs' copy of
 * its packets, and the workers' decoded events (a third to a half of its size). */
#define SPARE_BYTES ((uint64_t)64 << 20)

struct packet {
    uint64_t offset, size;
    uint64_t seq, discarded; /* packet_seq_num, events_discarded */
    unsigned run;
};

struct stream {
    char *name;           /* Owned by this */
    unsigned char *index; /* Owned by this: the index file */
    uint32_t entry_size;
    struct packet *packets; /* Owned by this, one per index entry */
    size_t count, capacity;
};

static void store_be(unsigned char *p, uint64_t value)
{
    for (int i = 7; i >= 0; i--, value >>= 8)
        p[i] = (unsigned char)value;
}

/* `directory`/`prefix``name``suffix` into `path`; -1 when it does not fit. */
static int path_of(char *path, size_t size, const char *directory, const char *prefix,
                   const char *name, const char *suffix)
{
    int n = snprintf(path, size, "%s/%s%s%s", directory, prefix, name, suffix);
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* Reads `stream`'s index and each packet's counters; -1 unless the index covers the file's
 * packets one after the other (what libbabeltrace2 itself requires of an index) and every packet
 * is LTTng's, of one stream. `key` is the stream's (stream_id, stream_instance_id). */
static int read_stream(const char *trace_dir, struct stream *stream, uint64_t file_size,
                       const struct zm_validate_layout *layout, uint64_t key[2])
{
    char path[4096];
    size_t size = 0;
    if (path_of(path, sizeof(path), trace_dir, "index/", stream->name, ".idx") != 0)
        return -1;
    stream->index = zm_io_read_file(path, UINT32_MAX, &size);
    if (!stream->index || size < INDEX_HEADER_BYTES ||
        zm_io_load(stream->index, 4, true) != INDEX_MAGIC ||
        zm_io_load(stream->index + 4, 4, true) != 1)
        return -1;
    stream->entry_size = (uint32_t)zm_io_load(stream->index + 12, 4, true);
    if (stream->entry_size < INDEX_ENTRY_MIN_BYTES ||
        (size - INDEX_HEADER_BYTES) % stream->entry_size != 0)
        return -1;
    size_t entries = (size - INDEX_HEADER_BYTES) / stream->entry_size;
    int fd = path_of(path, sizeof(path), trace_dir, "", stream->name, "") == 0
                 ? open(path, O_RDONLY | O_CLOEXEC)
                 : -1;
    if (fd < 0)
        return -1;
    int status = -1;
    uint64_t end = 0;
    for (size_t i = 0; i < entries; i++) {
        const unsigned char *entry = stream->index + INDEX_HEADER_BYTES + i * stream->entry_size;
        uint64_t offset = zm_io_load(entry, 8, true), bits = zm_io_load(entry + 8, 8, true);
        unsigned char context[PACKET_DISCARDED + 8];
        size_t context_bytes = PACKET_DISCARDED + layout->long_bytes;
        if (offset != end || bits == 0 || bits % 8 || bits / 8 > file_size - offset ||
            bits / 8 < context_bytes || zm_io_read_at(fd, context, context_bytes, offset) != 0 ||
            zm_io_load(context, 4, layout->big_endian) != PACKET_MAGIC)
            goto end;
        uint64_t id = zm_io_load(context + PACKET_STREAM_ID, 4, layout->big_endian);
        uint64_t instance = zm_io_load(context + PACKET_INSTANCE, 8, layout->big_endian);
        if (i == 0) {
            key[0] = id;
            key[1] = instance;
        } else if (key[0] != id || key[1] != instance) {
            goto end; /* packets of two streams in one file: not one run per stream file */
        }
        if (ZM_GROW(stream->packets, stream->capacity, stream->count + 1, 16) != 0)
            goto end;
        stream->packets[stream->count++] =
            (struct packet){.offset = offset,
                            .size = bits / 8,
                            .seq = zm_io_load(context + PACKET_SEQ_NUM, 8, layout->big_endian),
                            .discarded = zm_io_load(context + PACKET_DISCARDED, layout->long_bytes,
                                                    layout->big_endian)};
        end = offset + bits / 8;
    }
    status = end == file_size && entries > 0 ? 0 : -1;
end:
    close(fd);
    return status;
}

static void release_streams(struct stream *streams, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(streams[i].name);
        free(streams[i].index);
        free(streams[i].packets);
    }
    free(streams);
}

static int compare_streams(const void *left, const void *right)
{
    return strcmp(((const struct stream *)left)->name, ((const struct stream *)right)->name);
}

/* The stream files beside `metadata`, as src.ctf.fs reads them (regular, not hidden, not
 * empty), each read by read_stream; -1 if one cannot be split. */
static int list_streams(const char *trace_dir, const struct zm_validate_layout *layout,
                        struct stream **out, size_t *out_count, uint64_t *bytes)
{
    DIR *folder = opendir(trace_dir);
    if (!folder)
        return -1;
    struct stream *streams = NULL;
    size_t count = 0, capacity = 0;
    uint64_t(*keys)[2] = NULL;
    size_t key_capacity = 0;
    int status = 0;
    *bytes = 0;
    for (struct dirent *entry; status == 0 && (entry = readdir(folder));) {
        if (entry->d_name[0] == '.' || strcmp(entry->d_name, "metadata") == 0)
            continue;
        char path[4096];
        struct stat info;
        if (path_of(path, sizeof(path), trace_dir, "", entry->d_name, "") != 0) {
            status = -1;
            break;
        }
        if (stat(path, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size == 0)
            continue;
        if (ZM_GROW(streams, capacity, count + 1, 8) != 0 ||
            ZM_GROW(keys, key_capacity, count + 1, 8) != 0) {
            status = -1;
            break;
        }
        struct stream *stream = &streams[count++];
        *stream = (struct stream){.name = strdup(entry->d_name)};
        if (!stream->name ||
            read_stream(trace_dir, stream, (uint64_t)info.st_size, layout, keys[count - 1]) != 0)
            status = -1;
        for (size_t k = 0; status == 0 && k + 1 < count; k++)
            if (keys[k][0] == keys[count - 1][0] && keys[k][1] == keys[count - 1][1])
                status = -1; /* one stream in two files: its files are read as one */
        *bytes += (uint64_t)info.st_size;
    }
    closedir(folder);
    free(keys);
    if (status != 0) {
        release_streams(streams, count);
        return -1;
    }
    qsort(streams, count, sizeof(*streams), compare_streams);
    *out = streams;
    *out_count = count;
    return 0;
}

/* Cuts the packets, one stream after the other, into at most `runs` runs of about equal bytes
 * (a packet larger than a run's share leaves the next run empty: runs are numbered without
 * gaps), and counts what the cuts hide. Returns the number of runs. */
static unsigned cut(struct stream *streams, size_t count, uint64_t bytes, unsigned runs,
                    struct zm_split_plan *plan)
{
    uint64_t before = 0;
    unsigned used = 0, last = 0;
    for (size_t s = 0; s < count; s++) {
        for (size_t i = 0; i < streams[s].count; i++) {
            struct packet *packet = &streams[s].packets[i];
            /* by the packet's middle (a stream of one packet goes to the run holding most of
             * it); below `runs`, as middle < bytes; 128 bits: no overflow */
            uint64_t middle = before + packet->size / 2;
            unsigned share = (unsigned)((__uint128_t)middle * runs / bytes);
            if (used == 0 || share != last)
                used++;
            last = share;
            packet->run = used - 1;
            before += packet->size;
        }
    }
    for (size_t s = 0; s < count; s++) {
        for (size_t i = 1; i < streams[s].count; i++) {
            struct packet *packet = &streams[s].packets[i];
            if (packet->run == packet[-1].run)
                continue;
            /* libbabeltrace2 between two packets of a stream (ctf msg-iter.c, 2.0.4):
             * events_discarded's difference when not zero; packet_seq_num's difference less
             * one when above one. A run's first packet: a message of unknown count when its
             * events_discarded is not zero, none for packets. */
            uint64_t events = packet->discarded - packet[-1].discarded;
            uint64_t packets = packet->seq - packet[-1].seq;
            plan->cut_events += events;
            if (packets > 1)
                plan->cut_packets += packets - 1;
            if (packet->discarded != 0)
                plan->cut_unknown_messages++;
        }
    }
    return used;
}

/* Copies `size` bytes at `offset` of `in` to the end of `out`. */
static int copy_range(int in, int out, uint64_t offset, uint64_t size)
{
    loff_t from = (loff_t)offset;
    while (size > 0) {
        ssize_t n = copy_file_range(in, &from, out, NULL, size, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* not supported across these file systems: copy by hand */
        size -= (uint64_t)n;
    }
    char buffer[1 << 16];
    while (size > 0) {
        size_t chunk = size < sizeof(buffer) ? (size_t)size : sizeof(buffer);
        if (zm_io_read_at(in, buffer, chunk, (uint64_t)from) != 0 ||
            zm_io_write_all(out, buffer, chunk) != 0)
            return -1;
        from += (loff_t)chunk;
        size -= chunk;
    }
    return 0;
}

/* Run `run`'s part of `stream`: its packets' bytes and an index of them, rebased. */
static int write_run_stream(const char *trace_dir, const struct stream *stream, unsigned run,
                            const char *run_dir)
{
    size_t first = 0;
    while (first < stream->count && stream->packets[first].run < run)
        first++;
    size_t last = first;
    while (last < stream->count && stream->packets[last].run == run)
        last++;
    if (first == last)
        return 0;
    char path[4096];
    int in = path_of(path, sizeof(path), trace_dir, "", stream->name, "") == 0
                 ? open(path, O_RDONLY | O_CLOEXEC)
                 : -1;
    int out = path_of(path, sizeof(path), run_dir, "", stream->name, "") == 0
                  ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)
                  : -1;
    int index = path_of(path, sizeof(path), run_dir, "index/", stream->name, ".idx") == 0
                    ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)
                    : -1;
    int status = in >= 0 && out >= 0 && index >= 0 &&
                         zm_io_write_all(index, stream->index, INDEX_HEADER_BYTES) == 0
                     ? 0
                     : -1;
    uint64_t at = 0;
    for (size_t i = first; status == 0 && i < last; i++) {
        const struct packet *packet = &stream->packets[i];
        unsigned char entry[1024];
        size_t entry_size = stream->entry_size;
        if (entry_size > sizeof(entry)) {
            status = -1;
            break;
        }
        memcpy(entry, stream->index + INDEX_HEADER_BYTES + i * entry_size, entry_size);
        store_be(entry, at); /* the packet's offset in the run's file */
        if (copy_range(in, out, packet->offset, packet->size) != 0 ||
            zm_io_write_all(index, entry, entry_size) != 0)
            status = -1;
        at += packet->size;
    }
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        status = -1;
    if (index >= 0 && close(index) != 0)
        status = -1;
    return status;
}

void zm_split_plan_run_path(const struct zm_split_plan *plan, unsigned k, char *path, size_t size)
{
    snprintf(path, size, "%s/run%u", plan->directory, k);
}

void zm_split_plan_remove(struct zm_split_plan *plan)
{
    if (plan->directory) {
        zm_supervise_remove_tree(plan->directory);
        zm_supervise_temp_dir(NULL);
    }
    free(plan->directory);
    *plan = (struct zm_split_plan){0};
}

/* A new private directory under `temporary` for the plan, named to the supervisor before it
 * exists: this process may be killed at any time (SIGTERM, a stall) and nothing of it may stay
 * behind. 0, or -1. */
static int make_directory(const char *temporary, struct zm_split_plan *plan)
{
    char path[4096];
    for (int attempt = 0; attempt < 100; attempt++) {
        uint32_t random;
        if (getrandom(&random, sizeof(random), 0) != sizeof(random))
            return -1;
        int n = snprintf(path, sizeof(path), "%s/zeprof-split-%ld-%08x", temporary, (long)getpid(),
                         random);
        if (n < 0 || (size_t)n >= sizeof(path))
            return -1;
        zm_supervise_temp_dir(path);
        if (mkdir(path, 0700) == 0) {
            plan->directory = strdup(path);
            if (plan->directory)
                return 0;
            rmdir(path);
        }
        zm_supervise_temp_dir(NULL);
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* A copy of the file at `from` (a regular file) at `to`, new. */
static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    struct stat info;
    int status = in >= 0 && out >= 0 && fstat(in, &info) == 0 && S_ISREG(info.st_mode) &&
                         copy_range(in, out, 0, (uint64_t)info.st_size) == 0
                     ? 0
                     : -1;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        status = -1;
    return status;
}

/* Makes run k's directory: its metadata (a copy: the reader follows no links inside a trace)
 * and its part of every stream. */
static int write_run(const char *trace_dir, const struct stream *streams, size_t count,
                     const struct zm_split_plan *plan, unsigned run)
{
    char run_dir[4096], path[4096], metadata[4096], copy[4096];
    zm_split_plan_run_path(plan, run, run_dir, sizeof(run_dir));
    if (path_of(path, sizeof(path), run_dir, "", "index", "") != 0 ||
        path_of(metadata, sizeof(metadata), trace_dir, "", "metadata", "") != 0 ||
        path_of(copy, sizeof(copy), run_dir, "", "metadata", "") != 0 ||
        mkdir(run_dir, 0700) != 0 || mkdir(path, 0700) != 0 || copy_file(metadata, copy) != 0)
        return -1;
    for (size_t s = 0; s < count; s++)
        if (write_run_stream(trace_dir, &streams[s], run, run_dir) != 0)
            return -1;
    return 0;
}

/* The bytes of the regular files beside `metadata` (what src.ctf.fs reads as streams). */
static uint64_t stream_bytes(const char *trace_dir)
{
    DIR *folder = opendir(trace_dir);
    uint64_t bytes = 0;
    for (struct dirent *entry; folder && (entry = readdir(folder));) {
        char path[4096];
        struct stat info;
        if (entry->d_name[0] != '.' && strcmp(entry->d_name, "metadata") != 0 &&
            path_of(path, sizeof(path), trace_dir, "", entry->d_name, "") == 0 &&
            stat(path, &info) == 0 && S_ISREG(info.st_mode))
            bytes += (uint64_t)info.st_size;
    }
    if (folder)
        closedir(folder);
    return bytes;
}

int zm_split_plan_make(const char *trace_dir, unsigned runs, uint64_t min_bytes,
                       const char *temporary, struct zm_split_plan *plan)
{
    *plan = (struct zm_split_plan){0};
    char why[256];
    struct zm_validate_layout layout;
    /* the size first: most traces are small, and their reader checks them anyway */
    if (runs < 2 || stream_bytes(trace_dir) < min_bytes ||
        zm_validate_trace(trace_dir, &layout, why, sizeof(why)) != 0 || !layout.lttng)
        return -1;
    char *absolute = realpath(trace_dir, NULL);
    struct stream *streams = NULL;
    size_t count = 0, packets = 0;
    uint64_t bytes = 0;
    if (!absolute || list_streams(absolute, &layout, &streams, &count, &bytes) != 0) {
        free(absolute);
        return -1;
    }
    for (size_t s = 0; s < count; s++)
        packets += streams[s].count;
    struct statvfs room;
    int status = -1;
    if (packets < 2 || bytes < min_bytes || statvfs(temporary, &room) != 0 ||
        (uint64_t)room.f_bavail * room.f_frsize / 2 < bytes + SPARE_BYTES)
        goto end;
    runs = cut(streams, count, bytes, runs > packets ? (unsigned)packets : runs, plan);
    if (runs < 2)
        goto end;
    if (make_directory(temporary, plan) != 0)
        goto end;
    plan->runs = runs;
    plan->bytes = bytes;
    status = 0;
    for (unsigned k = 0; status == 0 && k < runs; k++)
        status = write_run(absolute, streams, count, plan, k);
end:
    if (status != 0)
        zm_split_plan_remove(plan);
    release_streams(streams, count);
    free(absolute);
    return status;
}
