/*
 * remote_index: every remote-dispatch frame mark of a merge, gathered by frame key.
 *
 * Two hosts share no clock; what they share is a frame key (session, worker, sequence) written by
 * the caller when it dispatches (its window [begin, end) on its clock) and by the peer when it
 * serves (its window on its own clock). The index pairs the four marks of each key into one frame
 * (docs/remote.md); the solver (remote_solver.h) places hosts from the frames.
 *
 * A frame dispatched twice, or served twice, is a refusal: the merge must stop.
 * The index owns its frames and copies what it is given. Not thread-safe; one index per merge.
 */
#ifndef ZM_REMOTE_INDEX_H
#define ZM_REMOTE_INDEX_H

#include "must_check.h"

#include <stddef.h>
#include <stdint.h>

struct zm_remote_key {
    uint64_t session;
    uint32_t worker;
    uint64_t sequence;
};

enum zm_remote_mark {
    ZM_REMOTE_DISPATCH_BEGIN,
    ZM_REMOTE_DISPATCH_END,
    ZM_REMOTE_SERVE_BEGIN,
    ZM_REMOTE_SERVE_END,
};

/* One half of a frame: the caller's dispatch window or the peer's serve window. */
struct zm_remote_side {
    int64_t begin_ns; /* the host's trace time (babeltrace2's ns from origin) */
    int64_t end_ns;
    int host;
    int64_t pid;
    unsigned have_begin : 1;
    unsigned have_end : 1;
};

struct zm_remote_frame {
    struct zm_remote_key key;
    struct zm_remote_side caller;
    struct zm_remote_side peer;
};

/* Opaque. */
struct zm_remote_index;

/* An empty index, or NULL when out of memory. */
ZM_MUST_CHECK struct zm_remote_index *zm_remote_index_new(void);
void zm_remote_index_free(struct zm_remote_index *index);

/* Records one frame tracepoint of `host`. Returns 0, or -1 with zm_remote_index_error filled
 * when the frame was already dispatched (or served) with that key, or when out of memory. */
ZM_MUST_CHECK int zm_remote_index_add(struct zm_remote_index *index, enum zm_remote_mark mark,
                                      const struct zm_remote_key *key, int host, int64_t pid,
                                      int64_t time_ns);
/* Why the last zm_remote_index_add failed ("" if none did). */
const char *zm_remote_index_error(const struct zm_remote_index *index);

/* The frames in the order their first mark came, each with the sides seen so far; borrowed, valid
 * until the next add. */
size_t zm_remote_index_count(const struct zm_remote_index *index);
const struct zm_remote_frame *zm_remote_index_frame(const struct zm_remote_index *index,
                                                    size_t frame);

#endif
