/* sorter: external merge sort of timeline records in bounded memory (sorter.h). */
#include "sorter.h"

#include "grow.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Spilled runs are written in chunks of this size, and read back through a buffer of
 * RUN_READ_BUFFER bytes each (grown only for a record longer than that). */
#define WRITE_BUFFER (1u << 20)
#define RUN_READ_BUFFER (64u << 10)

/* In the arena a record is its payload's length then the payload, unaligned (read with memcpy);
 * its key is in the index. In a run file it is the key, the length, then the payload. The host
 * and the order of insertion belong to the whole segment or run. */
#define ARENA_HEADER sizeof(uint32_t)
#define FILE_HEADER (sizeof(int64_t) + sizeof(uint32_t))

struct zm_sorter_run {
    uint32_t host;
    /* A spilled run: the file and the part of it read but not yet consumed. */
    FILE *file;   /* Owned by this: unlinked temporary file */
    char *buffer; /* Owned by this, during the merge */
    size_t buffer_capacity, buffer_start, buffer_end;
    /* A segment still in memory: its entries, [next, end). */
    const struct zm_sorter_entry *next, *end;
    /* Merge state: the current record, its payload in `buffer` or in the arena. */
    int64_t key, axis_key;
    uint32_t length;
    const char *payload;
};

int zm_sorter_init(struct zm_sorter *sorter, size_t budget_bytes)
{
    *sorter = (struct zm_sorter){.budget = budget_bytes};
    sorter->arena = malloc(budget_bytes);
    return sorter->arena ? 0 : -1;
}

static void release_runs(struct zm_sorter_run *runs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (runs[i].file)
            fclose(runs[i].file);
        free(runs[i].buffer);
    }
}

void zm_sorter_release(struct zm_sorter *sorter)
{
    release_runs(sorter->runs, sorter->run_count);
    free(sorter->runs);
    free(sorter->entries);
    free(sorter->scratch);
    free(sorter->segments);
    free(sorter->write_buffer);
    free(sorter->arena);
    *sorter = (struct zm_sorter){0};
}

static const uint64_t SIGN = UINT64_C(1) << 63;

/* Sorts entries [begin, end) by key, stably (equal keys stay in insertion order, which is their
 * order in the index), with a least-significant-digit radix sort: no comparisons, and the bytes
 * that every key shares (the high bytes of nanosecond times) are skipped. */
static void radix_sort(struct zm_sorter *sorter, size_t begin, size_t end)
{
    size_t n = end - begin;
    if (n < 2)
        return;
    struct zm_sorter_entry *from = sorter->entries + begin, *to = sorter->scratch;
    uint64_t varying = 0;
    for (size_t i = 1; i < n; i++)
        varying |= from[i].key ^ from[0].key;
    int digits[8], digit_count = 0;
    for (int digit = 0; digit < 8; digit++) {
        if ((varying >> (8 * digit)) & 0xff)
            digits[digit_count++] = digit;
    }
    size_t counts[8][256]; /* 16 KiB: one table per digit */
    memset(counts, 0, sizeof(counts));
    for (size_t i = 0; i < n; i++) {
        uint64_t key = from[i].key;
        for (int d = 0; d < digit_count; d++)
            counts[d][(key >> (8 * digits[d])) & 0xff]++;
    }
    for (int d = 0; d < digit_count; d++) {
        size_t *count = counts[d], position = 0;
        int shift = 8 * digits[d];
        for (int value = 0; value < 256; value++) {
            size_t here = count[value];
            count[value] = position;
            position += here;
        }
        for (size_t i = 0; i < n; i++)
            to[count[(from[i].key >> shift) & 0xff]++] = from[i];
        struct zm_sorter_entry *swap = from;
        from = to;
        to = swap;
    }
    if (from != sorter->entries + begin)
        memcpy(sorter->entries + begin, from, n * sizeof(*from));
}

/* The records not yet in a segment (one host's) are sorted and become one. */
static int seal(struct zm_sorter *sorter)
{
    size_t begin = sorter->segment_count ? sorter->segments[sorter->segment_count - 1].end : 0;
    if (sorter->count == begin)
        return 0;
    if (ZM_GROW(sorter->segments, sorter->segment_capacity, sorter->segment_count + 1, 4) != 0)
        return -1;
    radix_sort(sorter, begin, sorter->count);
    sorter->segments[sorter->segment_count++] =
        (struct zm_sorter_segment){.end = sorter->count, .host = sorter->host};
    return 0;
}

/* Writes entries [begin, end), sorted, of `host`, as one run to a new temporary file. */
static int write_run(struct zm_sorter *sorter, size_t begin, size_t end, uint32_t host)
{
    if (ZM_GROW(sorter->runs, sorter->run_capacity, sorter->run_count + 1, 8) != 0)
        return -1;
    FILE *file = tmpfile();
    if (!file)
        return -1;
    sorter->runs[sorter->run_count++] = (struct zm_sorter_run){.host = host, .file = file};
    /* Unbuffered: the run is written and read in large chunks of our own. */
    if (setvbuf(file, NULL, _IONBF, 0) != 0)
        return -1;
    if (!sorter->write_buffer && !(sorter->write_buffer = malloc(WRITE_BUFFER)))
        return -1;
    char *buffer = sorter->write_buffer;
    size_t filled = 0;
    for (size_t i = begin; i < end; i++) {
        const char *record = sorter->arena + sorter->entries[i].offset;
        int64_t key = (int64_t)(sorter->entries[i].key ^ SIGN);
        uint32_t length;
        memcpy(&length, record, sizeof(length));
        size_t size = FILE_HEADER + length;
        if (filled + size > WRITE_BUFFER) {
            if (filled && fwrite(buffer, filled, 1, file) != 1)
                return -1;
            filled = 0;
        }
        if (size > WRITE_BUFFER) { /* a record longer than the buffer: written on its own */
            if (fwrite(&key, sizeof(key), 1, file) != 1 ||
                fwrite(record, ARENA_HEADER + length, 1, file) != 1)
                return -1;
            continue;
        }
        memcpy(buffer + filled, &key, sizeof(key));
        memcpy(buffer + filled + sizeof(key), record, ARENA_HEADER + length);
        filled += size;
    }
    if (filled && fwrite(buffer, filled, 1, file) != 1)
        return -1;
    if (fflush(file) != 0)
        return -1;
    rewind(file);
    return 0;
}

/* Writes every segment in the arena, the current host's records sorted first, as runs, and
 * empties the arena. */
static int spill(struct zm_sorter *sorter)
{
    if (seal(sorter) != 0)
        return -1;
    size_t begin = 0;
    for (size_t s = 0; s < sorter->segment_count; s++) {
        const struct zm_sorter_segment *segment = &sorter->segments[s];
        if (write_run(sorter, begin, segment->end, segment->host) != 0)
            return -1;
        begin = segment->end;
    }
    sorter->segment_count = 0;
    sorter->count = 0;
    sorter->used = 0;
    return 0;
}

int zm_sorter_flush(struct zm_sorter *sorter)
{
    return seal(sorter);
}

int zm_sorter_add(struct zm_sorter *sorter, int64_t key, uint32_t host, const void *payload,
                  uint32_t length)
{
    /* A record costs its bytes in the arena and two index entries (the index and scratch). */
    const size_t index_cost = 2 * sizeof(struct zm_sorter_entry);
    size_t size = ARENA_HEADER + (size_t)length;
    if (size + index_cost > sorter->budget)
        return -1;
    size_t begin = sorter->segment_count ? sorter->segments[sorter->segment_count - 1].end : 0;
    if (sorter->count > begin && host != sorter->host && seal(sorter) != 0)
        return -1;
    if (sorter->used + size + (sorter->count + 1) * index_cost > sorter->budget &&
        spill(sorter) != 0)
        return -1;
    if (ZM_GROW(sorter->entries, sorter->capacity, sorter->count + 1, 4096) != 0 ||
        ZM_GROW(sorter->scratch, sorter->scratch_capacity, sorter->count + 1, 4096) != 0)
        return -1;
    sorter->host = host;
    memcpy(sorter->arena + sorter->used, &length, ARENA_HEADER);
    memcpy(sorter->arena + sorter->used + ARENA_HEADER, payload, length);
    sorter->entries[sorter->count++] = (struct zm_sorter_entry){(uint64_t)key ^ SIGN, sorter->used};
    sorter->used += size;
    return 0;
}

/* Makes the run's buffer hold at least `wanted` unconsumed bytes, or all that is left of the
 * file. -1 on error. */
static int fill(struct zm_sorter_run *run, size_t wanted)
{
    size_t have = run->buffer_end - run->buffer_start;
    if (have >= wanted)
        return 0;
    if (wanted > run->buffer_capacity) {
        size_t capacity = wanted > RUN_READ_BUFFER ? wanted : RUN_READ_BUFFER;
        char *buffer = malloc(capacity);
        if (!buffer)
            return -1;
        if (have)
            memcpy(buffer, run->buffer + run->buffer_start, have);
        free(run->buffer);
        run->buffer = buffer;
        run->buffer_capacity = capacity;
    } else if (have) {
        memmove(run->buffer, run->buffer + run->buffer_start, have);
    }
    run->buffer_start = 0;
    run->buffer_end = have;
    size_t got = fread(run->buffer + have, 1, run->buffer_capacity - have, run->file);
    run->buffer_end += got;
    return ferror(run->file) ? -1 : 0;
}

/* Loads the run's next record; 1 when it has one, 0 at its end, -1 on error. */
static int run_next(const struct zm_sorter *sorter, struct zm_sorter_run *run,
                    zm_sorter_axis_fn axis, void *context)
{
    if (!run->file) {
        if (run->next == run->end)
            return 0;
        const char *record = sorter->arena + run->next->offset;
        run->key = (int64_t)(run->next->key ^ SIGN);
        run->next++;
        memcpy(&run->length, record, ARENA_HEADER);
        run->payload = record + ARENA_HEADER;
    } else {
        if (fill(run, FILE_HEADER) != 0)
            return -1;
        size_t have = run->buffer_end - run->buffer_start;
        if (have == 0)
            return 0;
        if (have < FILE_HEADER)
            return -1; /* a truncated run file */
        const char *record = run->buffer + run->buffer_start;
        memcpy(&run->key, record, sizeof(run->key));
        memcpy(&run->length, record + sizeof(run->key), sizeof(run->length));
        size_t size = FILE_HEADER + run->length;
        if (fill(run, size) != 0 || run->buffer_end - run->buffer_start < size)
            return -1;
        run->payload = run->buffer + run->buffer_start + FILE_HEADER;
        run->buffer_start += size;
    }
    run->axis_key = axis(context, run->host, run->key);
    return 1;
}

/* Runs are numbered in insertion order (sorter.h): equal axis keys go to the lower number. */
static bool run_before(const struct zm_sorter_run *a, const struct zm_sorter_run *b)
{
    if (a->axis_key != b->axis_key)
        return a->axis_key < b->axis_key;
    return a < b;
}

static void sift_down(struct zm_sorter_run **heap, size_t count, size_t i)
{
    for (;;) {
        size_t smallest = i, left = 2 * i + 1, right = left + 1;
        if (left < count && run_before(heap[left], heap[smallest]))
            smallest = left;
        if (right < count && run_before(heap[right], heap[smallest]))
            smallest = right;
        if (smallest == i)
            return;
        struct zm_sorter_run *swap = heap[i];
        heap[i] = heap[smallest];
        heap[smallest] = swap;
        i = smallest;
    }
}

int zm_sorter_merge(struct zm_sorter *sorter, zm_sorter_axis_fn axis, zm_sorter_emit_fn emit,
                    void *context)
{
    int status = 0;
    if (seal(sorter) != 0)
        return -1;
    /* The spilled runs, then the segments still in memory as runs of their own: in insertion
     * order, which run_before relies on. */
    size_t total = sorter->run_count + sorter->segment_count;
    struct zm_sorter_run *runs = calloc(total + 1, sizeof(*runs));
    struct zm_sorter_run **heap = calloc(total + 1, sizeof(*heap));
    if (!runs || !heap) {
        free(runs);
        free(heap);
        return -1;
    }
    if (sorter->run_count)
        memcpy(runs, sorter->runs, sorter->run_count * sizeof(*runs));
    size_t begin = 0;
    for (size_t s = 0; s < sorter->segment_count; s++) {
        struct zm_sorter_run *run = &runs[sorter->run_count + s];
        run->host = sorter->segments[s].host;
        run->next = sorter->entries + begin;
        run->end = sorter->entries + sorter->segments[s].end;
        begin = sorter->segments[s].end;
    }
    /* The files are now the merge's: released once, below. */
    free(sorter->runs);
    sorter->runs = NULL;
    sorter->run_count = sorter->run_capacity = 0;
    size_t count = 0;
    for (size_t i = 0; i < total; i++) {
        int loaded = run_next(sorter, &runs[i], axis, context);
        if (loaded < 0) {
            status = -1;
            goto end;
        }
        if (loaded)
            heap[count++] = &runs[i];
    }
    for (size_t i = count; i-- > 0;)
        sift_down(heap, count, i);
    while (count > 0) {
        struct zm_sorter_run *run = heap[0];
        status = emit(context, run->axis_key, run->host, run->payload, run->length);
        if (status != 0)
            goto end;
        int loaded = run_next(sorter, run, axis, context);
        if (loaded < 0) {
            status = -1;
            goto end;
        }
        if (!loaded)
            heap[0] = heap[--count];
        sift_down(heap, count, 0);
    }
end:
    release_runs(runs, total);
    free(runs);
    free(heap);
    return status;
}
