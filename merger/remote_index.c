/* remote_index: frame marks gathered by key in an open-addressing index (remote_index.h). */
#include "remote_index.h"

#include "grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY_SLOT ((size_t)-1)

struct zm_remote_index {
    struct zm_remote_frame *frames; /* Owned by this */
    size_t nframes, capacity;
    size_t *slots; /* open-addressing index into frames (Owned); EMPTY_SLOT is empty */
    size_t nslots;
    char error[256]; /* the first refusal: frame dispatched or served twice */
};

static uint64_t key_hash(const struct zm_remote_key *key)
{
    /* splitmix64 finalizer over the three fields: cheap and well mixed. */
    uint64_t h = key->session * 0x9e3779b97f4a7c15ULL;
    h ^= ((uint64_t)key->worker << 32) ^ key->sequence;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

static int key_equal(const struct zm_remote_key *a, const struct zm_remote_key *b)
{
    return a->session == b->session && a->worker == b->worker && a->sequence == b->sequence;
}

struct zm_remote_index *zm_remote_index_new(void)
{
    return calloc(1, sizeof(struct zm_remote_index));
}

void zm_remote_index_free(struct zm_remote_index *index)
{
    if (!index)
        return;
    free(index->frames);
    free(index->slots);
    free(index);
}

static int grow_slots(struct zm_remote_index *index)
{
    size_t nslots = index->nslots ? index->nslots * 2 : 64;
    size_t *slots = malloc(nslots * sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < nslots; i++)
        slots[i] = EMPTY_SLOT;
    for (size_t f = 0; f < index->nframes; f++) {
        size_t i = key_hash(&index->frames[f].key) & (nslots - 1);
        while (slots[i] != EMPTY_SLOT)
            i = (i + 1) & (nslots - 1);
        slots[i] = f;
    }
    free(index->slots);
    index->slots = slots;
    index->nslots = nslots;
    return 0;
}

/* The frame with this key, created when absent; NULL when out of memory. */
static struct zm_remote_frame *frame_for(struct zm_remote_index *index,
                                         const struct zm_remote_key *key)
{
    /* Keep the load factor under one half. */
    if ((index->nframes + 1) * 2 > index->nslots && grow_slots(index) < 0)
        return NULL;
    size_t i = key_hash(key) & (index->nslots - 1);
    for (; index->slots[i] != EMPTY_SLOT; i = (i + 1) & (index->nslots - 1)) {
        if (key_equal(&index->frames[index->slots[i]].key, key))
            return &index->frames[index->slots[i]];
    }
    if (ZM_GROW(index->frames, index->capacity, index->nframes + 1, 64) != 0)
        return NULL;
    struct zm_remote_frame *frame = &index->frames[index->nframes];
    memset(frame, 0, sizeof(*frame));
    frame->key = *key;
    index->slots[i] = index->nframes++;
    return frame;
}

int zm_remote_index_add(struct zm_remote_index *index, enum zm_remote_mark mark,
                        const struct zm_remote_key *key, int host, int64_t pid, int64_t time_ns)
{
    struct zm_remote_frame *frame = frame_for(index, key);
    if (!frame) {
        snprintf(index->error, sizeof(index->error), "out of memory");
        return -1;
    }
    int serve = mark == ZM_REMOTE_SERVE_BEGIN || mark == ZM_REMOTE_SERVE_END;
    int begin = mark == ZM_REMOTE_DISPATCH_BEGIN || mark == ZM_REMOTE_SERVE_BEGIN;
    struct zm_remote_side *side = serve ? &frame->peer : &frame->caller;
    /* A mark seen already, or a side begun by another process: the frame is used twice. */
    if ((begin && side->have_begin) || (!begin && side->have_end) ||
        ((side->have_begin || side->have_end) && (side->host != host || side->pid != pid))) {
        snprintf(index->error, sizeof(index->error),
                 "frame %" PRIu64 ":%" PRIu32 ":%" PRIu64 " %s twice", key->session, key->worker,
                 key->sequence, serve ? "served" : "dispatched");
        return -1;
    }
    side->host = host;
    side->pid = pid;
    if (begin) {
        side->begin_ns = time_ns;
        side->have_begin = 1;
    } else {
        side->end_ns = time_ns;
        side->have_end = 1;
    }
    return 0;
}

const char *zm_remote_index_error(const struct zm_remote_index *index)
{
    return index->error;
}

size_t zm_remote_index_count(const struct zm_remote_index *index)
{
    return index->nframes;
}

const struct zm_remote_frame *zm_remote_index_frame(const struct zm_remote_index *index,
                                                    size_t frame)
{
    return &index->frames[frame];
}
