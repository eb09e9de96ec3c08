/* sorter: external merge sort of timeline records in bounded memory (sorter.h). */
#include "sorter.h"

#include "grow.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct record_header {
    int64_t key;
    uint64_t seq; /* insertion order: equal keys keep it */
    uint32_t host;
    uint32_t length;
};

struct zm_sorter_run {
    FILE *file; /* Owned by this: unlinked temporary file */
    /* Merge state: the current record. */
    struct record_header head;
    char *payload;
    size_t payload_capacity;
    int64_t axis_key;
};

int zm_sorter_init(struct zm_sorter *sorter, size_t budget_bytes)
{
    *sorter = (struct zm_sorter){.budget = budget_bytes};
    sorter->arena = malloc(budget_bytes);
    return sorter->arena ? 0 : -1;
}

void zm_sorter_release(struct zm_sorter *sorter)
{
    for (size_t i = 0; i < sorter->run_count; i++) {
        if (sorter->runs[i].file)
            fclose(sorter->runs[i].file);
        free(sorter->runs[i].payload);
    }
    free(sorter->runs);
    free(sorter->offsets);
    free(sorter->arena);
    *sorter = (struct zm_sorter){0};
}

static const struct record_header *header_at(const struct zm_sorter *sorter, size_t offset)
{
    return (const struct record_header *)(const void *)(sorter->arena + offset);
}

static const char *arena_base; /* qsort has no context argument in C11 */

static int compare_offsets(const void *left, const void *right)
{
    const struct record_header *a = (const void *)(arena_base + *(const size_t *)left);
    const struct record_header *b = (const void *)(arena_base + *(const size_t *)right);
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int zm_sorter_flush(struct zm_sorter *sorter)
{
    if (sorter->count == 0)
        return 0;
    if (ZM_GROW(sorter->runs, sorter->run_capacity, sorter->run_count + 1, 8) != 0)
        return -1;
    FILE *file = tmpfile();
    if (!file)
        return -1;
    sorter->runs[sorter->run_count++] = (struct zm_sorter_run){.file = file};
    arena_base = sorter->arena;
    qsort(sorter->offsets, sorter->count, sizeof(*sorter->offsets), compare_offsets);
    for (size_t i = 0; i < sorter->count; i++) {
        const struct record_header *header = header_at(sorter, sorter->offsets[i]);
        if (fwrite(header, sizeof(*header) + header->length, 1, file) != 1)
            return -1;
    }
    if (fflush(file) != 0)
        return -1;
    rewind(file);
    sorter->count = 0;
    sorter->used = 0;
    return 0;
}

static size_t aligned(size_t size)
{
    return (size + 7) & ~(size_t)7;
}

int zm_sorter_add(struct zm_sorter *sorter, int64_t key, uint32_t host, const void *payload,
                  uint32_t length)
{
    size_t size = aligned(sizeof(struct record_header) + length);
    if (size > sorter->budget)
        return -1;
    if (sorter->used + size > sorter->budget && zm_sorter_flush(sorter) != 0)
        return -1;
    if (ZM_GROW(sorter->offsets, sorter->capacity, sorter->count + 1, 4096) != 0)
        return -1;
    struct record_header header = {key, sorter->next_seq++, host, length};
    memcpy(sorter->arena + sorter->used, &header, sizeof(header));
    memcpy(sorter->arena + sorter->used + sizeof(header), payload, length);
    memset(sorter->arena + sorter->used + sizeof(header) + length, 0,
           size - sizeof(header) - length);
    sorter->offsets[sorter->count++] = sorter->used;
    sorter->used += size;
    return 0;
}

/* Loads the run's next record; 1 when it has one, 0 at its end, -1 on error. */
static int run_next(struct zm_sorter_run *run, zm_sorter_axis_fn axis, void *context)
{
    size_t got = fread(&run->head, sizeof(run->head), 1, run->file);
    if (got != 1)
        return ferror(run->file) ? -1 : 0;
    if (ZM_GROW(run->payload, run->payload_capacity, run->head.length, 64) != 0)
        return -1;
    if (run->head.length && fread(run->payload, run->head.length, 1, run->file) != 1)
        return -1;
    run->axis_key = axis(context, run->head.host, run->head.key);
    return 1;
}

static bool run_before(const struct zm_sorter_run *a, const struct zm_sorter_run *b)
{
    if (a->axis_key != b->axis_key)
        return a->axis_key < b->axis_key;
    return a->head.seq < b->head.seq;
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
    if (zm_sorter_flush(sorter) != 0)
        return -1;
    struct zm_sorter_run **heap = calloc(sorter->run_count + 1, sizeof(*heap));
    if (!heap)
        return -1;
    size_t count = 0;
    for (size_t i = 0; i < sorter->run_count; i++) {
        int loaded = run_next(&sorter->runs[i], axis, context);
        if (loaded < 0) {
            status = -1;
            goto end;
        }
        if (loaded)
            heap[count++] = &sorter->runs[i];
    }
    for (size_t i = count; i-- > 0;)
        sift_down(heap, count, i);
    while (count > 0) {
        struct zm_sorter_run *run = heap[0];
        status = emit(context, run->axis_key, run->head.host, run->payload, run->head.length);
        if (status != 0)
            goto end;
        int loaded = run_next(run, axis, context);
        if (loaded < 0) {
            status = -1;
            goto end;
        }
        if (!loaded)
            heap[0] = heap[--count];
        sift_down(heap, count, 0);
    }
end:
    free(heap);
    return status;
}
