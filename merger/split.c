/* split: a host's runs of packets decoded by worker processes, merged back in one reader's
 * order (split.h). */
#include "split.h"

#include "grow.h"
#include "intern.h"
#include "io.h"
#include "map.h"
#include "partial_format.h"
#include "partial_write.h"
#include "reader.h"
#include "split_plan.h"
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* A worker writes its records to its run's events file, in frames (a u32 length, then whole
 * records; a frame ends after the record that reaches FRAME_BYTES, so a long string makes a
 * longer one), and one byte down its pipe per frame written: the merge waits on
 * the pipe and reads the file. A file, not the pipe itself: a run later in time than the one the
 * merge is at must not wait, its pipe full, until the merge comes to it (the runs would take
 * turns), and what waits is on disk, not in memory. The records:
 *   'H' u64 has_name [string]            the host began, with the trace's hostname
 *   'S' string                           the next string id's text (ids from 1; 0 is NULL)
 *   'D' u64 count, u64 flags             discarded events (flags bit 0: packets; bit 1: count
 *                                        known)
 *   'E' u64 stream key, i64 ns - previous ns, u64 mask, u64 word per mask bit,
 *       u64 ids of function, name, uuid, append_kind
 *                                        an event: zm_event's 8-byte words, those not zero,
 *                                        but for ns and the four strings
 *   'Z'                                  the read ended well
 */
enum { FRAME_BYTES = 1 << 16 };
/* A frame's length, at most: what a u32 holds, less a margin. */
#define FRAME_LIMIT ((size_t)UINT32_MAX - 4096)

#define WORDS (sizeof(struct zm_event) / sizeof(uint64_t))
_Static_assert(sizeof(struct zm_event) % sizeof(uint64_t) == 0, "zm_event is whole words");
_Static_assert(WORDS < 64, "one mask bit per word");
_Static_assert(offsetof(struct zm_event, ns) % 8 == 0 &&
                   offsetof(struct zm_event, function) % 8 == 0 &&
                   offsetof(struct zm_event, name) % 8 == 0 &&
                   offsetof(struct zm_event, uuid) % 8 == 0 &&
                   offsetof(struct zm_event, append_kind) % 8 == 0,
               "the words sent apart are whole words");

static const size_t string_offsets[] = {
    offsetof(struct zm_event, function),
    offsetof(struct zm_event, name),
    offsetof(struct zm_event, uuid),
    offsetof(struct zm_event, append_kind),
};
#define STRINGS (sizeof(string_offsets) / sizeof(*string_offsets))

/* The words sent by id or as a difference, never in the mask. */
#define WORD_BIT(member) (UINT64_C(1) << (offsetof(struct zm_event, member) / 8))
#define SPECIAL_WORDS                                                                              \
    (WORD_BIT(ns) | WORD_BIT(function) | WORD_BIT(name) | WORD_BIT(uuid) | WORD_BIT(append_kind))

/* ---- The worker: a run's trace read through the tap, into its events file ------------- */

struct encoder {
    int file, doorbell; /* the run's events file; the pipe that says a frame is there */
    struct zm_partial_buffer out;
    struct zm_intern texts; /* the strings' own copies (babeltrace2's last one event) */
    struct zm_map ids;      /* interned pointer -> id */
    uint64_t next_id;
    int64_t previous_ns;
    bool failed;
};

/* Sends what is buffered as one frame. */
static int flush_frame(struct encoder *encoder)
{
    if (encoder->out.failed)
        return -1;
    if (encoder->out.size == 0)
        return 0;
    unsigned char length[4];
    for (int i = 0; i < 4; i++)
        length[i] = (unsigned char)(encoder->out.size >> (8 * i));
    static const unsigned char ring = 1;
    int status =
        zm_io_write_all(encoder->file, length, sizeof(length)) == 0 &&
                zm_io_write_all(encoder->file, encoder->out.bytes, encoder->out.size) == 0 &&
                zm_io_write_all(encoder->doorbell, &ring, 1) == 0
            ? 0
            : -1;
    encoder->out.size = 0;
    return status;
}

static int record_done(struct encoder *encoder)
{
    if (encoder->out.size > FRAME_LIMIT)
        encoder->failed = true; /* a string of gigabytes: one reader reads that trace */
    else if (encoder->out.size >= FRAME_BYTES && flush_frame(encoder) != 0)
        encoder->failed = true;
    return encoder->failed || encoder->out.failed ? -1 : 0;
}

/* The id of the string at `own` (the worker's own copy, or the model's interned name). */
static uint64_t id_of(struct encoder *encoder, const char *own)
{
    uint64_t *found = zm_map_find(&encoder->ids, (uint64_t)(uintptr_t)own, 0);
    if (found)
        return *found;
    uint64_t id = ++encoder->next_id;
    zm_partial_put_u64(&encoder->out, 'S');
    zm_partial_put_string(&encoder->out, own);
    if (zm_map_put(&encoder->ids, (uint64_t)(uintptr_t)own, 0, id) != 0)
        encoder->failed = true;
    return id;
}

/* The id of `text` (0 for NULL), its definition sent first when new. */
static uint64_t string_id(struct encoder *encoder, const char *text)
{
    if (!text)
        return 0;
    const char *own = zm_intern(&encoder->texts, text);
    if (!own) {
        encoder->failed = true;
        return 0;
    }
    return id_of(encoder, own);
}

static int tap_begin(void *context, const char *hostname)
{
    struct encoder *encoder = context;
    zm_partial_put_u64(&encoder->out, 'H');
    zm_partial_put_u64(&encoder->out, hostname != NULL);
    if (hostname)
        zm_partial_put_string(&encoder->out, hostname);
    return record_done(encoder);
}

static int tap_event(void *context, const struct zm_event *event, uint64_t stream_key)
{
    struct encoder *encoder = context;
    uint64_t ids[STRINGS];
    /* the function name is the model's, interned for good: known by its pointer */
    ids[0] = event->function ? id_of(encoder, event->function) : 0;
    for (size_t i = 1; i < STRINGS; i++) {
        const char *text;
        memcpy(&text, (const char *)event + string_offsets[i], sizeof(text));
        ids[i] = string_id(encoder, text);
    }
    uint64_t words[WORDS], mask = 0;
    memcpy(words, event, sizeof(words));
    for (size_t w = 0; w < WORDS; w++)
        mask |= (uint64_t)(words[w] != 0) << w;
    mask &= ~SPECIAL_WORDS;
    struct zm_partial_buffer *out = &encoder->out;
    zm_partial_put_u64(out, 'E');
    zm_partial_put_u64(out, stream_key);
    zm_partial_put_i64(out, (int64_t)((uint64_t)event->ns - (uint64_t)encoder->previous_ns));
    encoder->previous_ns = event->ns;
    zm_partial_put_u64(out, mask);
    for (uint64_t bits = mask; bits; bits &= bits - 1)
        zm_partial_put_u64(out, words[__builtin_ctzll(bits)]);
    for (size_t i = 0; i < STRINGS; i++)
        zm_partial_put_u64(out, ids[i]);
    return record_done(encoder);
}

static void tap_discarded(void *context, uint64_t count, bool packets, bool known)
{
    struct encoder *encoder = context;
    zm_partial_put_u64(&encoder->out, 'D');
    zm_partial_put_u64(&encoder->out, count);
    zm_partial_put_u64(&encoder->out, (packets ? 1u : 0u) | (known ? 2u : 0u));
    (void)record_done(encoder);
}

/* The worker's whole life: read run `path` into `file`, ringing `doorbell` per frame, then exit
 * (0: all sent). */
static void run_worker(const char *path, int file, int doorbell)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_IGN); /* a merge that stopped reading: write fails, the worker ends */
    struct encoder encoder = {.file = file, .doorbell = doorbell};
    zm_intern_init(&encoder.texts);
    zm_map_init(&encoder.ids);
    /* A model for the function names the decoder interns (no sink: the events go to the tap). */
    struct zm_span_sink sink = {0};
    struct zm_model *names = zm_model_new(&sink, 0);
    struct zm_reader_tap tap = {tap_begin, tap_event, tap_discarded, &encoder};
    char reason[1024];
    int status = 1;
    if (names && zm_reader_read(path, names, NULL, &tap, false, reason, sizeof(reason)) == 0 &&
        !encoder.failed) {
        zm_partial_put_u64(&encoder.out, 'Z');
        if (flush_frame(&encoder) == 0)
            status = 0;
    }
    _exit(status);
}

/* ---- The merge: the workers' events in one reader's order, into a model -------------------- */

struct source {
    pid_t pid;
    int file, doorbell; /* Owned by this: the run's events file (read), the pipe's end */
    unsigned run;
    uint64_t offset;      /* in the file, of the next frame */
    size_t frames_rung;   /* doorbell bytes read whose frames are not read yet */
    unsigned char *frame; /* Owned by this: the frame being decoded */
    size_t frame_capacity;
    struct zm_partial_cursor cursor;
    const char **strings; /* Owned by this (the texts are the model's): id - 1 -> text */
    size_t string_count, string_capacity;
    int64_t previous_ns;
    bool ended;    /* 'Z' came */
    bool has_head; /* `head` is its next event */
    struct zm_event head;
    uint64_t head_key;
};

struct merge {
    struct zm_model *model; /* Weak */
    const char *path;       /* Weak: the trace directory, as the host's path */
    const struct zm_split_plan *plan;
    const char *hostname; /* Weak: interned in the model */
    bool hostname_known, host_begun;
    uint64_t unknown_to_skip; /* the cuts' own discarded-events messages of unknown count */
};

/* The next frame of `source` into its cursor, once its worker said it is whole; -1 when the
 * worker has ended with no frame left, or on error. */
static int next_frame(struct source *source)
{
    while (source->frames_rung == 0) {
        unsigned char rings[4096];
        ssize_t n = read(source->doorbell, rings, sizeof(rings));
        if (n > 0)
            source->frames_rung += (size_t)n;
        else if (n == 0 || errno != EINTR)
            return -1;
    }
    unsigned char length[4];
    if (zm_io_read_at(source->file, length, sizeof(length), source->offset) != 0)
        return -1;
    size_t size = (size_t)length[0] | (size_t)length[1] << 8 | (size_t)length[2] << 16 |
                  (size_t)length[3] << 24;
    if (size == 0 || size > FRAME_LIMIT ||
        ZM_GROW(source->frame, source->frame_capacity, size, FRAME_BYTES + 4096) != 0 ||
        zm_io_read_at(source->file, source->frame, size, source->offset + 4) != 0)
        return -1;
    source->offset += 4 + size;
    source->frames_rung--;
    source->cursor = (struct zm_partial_cursor){.at = source->frame, .end = source->frame + size};
    return 0;
}

static int begin_host(struct merge *merge)
{
    if (merge->host_begun)
        return 0;
    merge->host_begun = true;
    if (zm_model_begin_host(merge->model, merge->hostname, merge->path) < 0)
        return -1;
    /* What the cuts hid from the runs' readers, counted as one reader would have. */
    if (merge->plan->cut_events)
        zm_model_discarded(merge->model, merge->plan->cut_events, false);
    if (merge->plan->cut_packets)
        zm_model_discarded(merge->model, merge->plan->cut_packets, true);
    return 0;
}

static const char *string_of(const struct source *source, uint64_t id, bool *bad)
{
    if (id == 0)
        return NULL;
    if (id > source->string_count) {
        *bad = true;
        return NULL;
    }
    return source->strings[id - 1];
}

/* Reads `source` up to its next event (head) or its end; -1 on a broken pipe or record. */
static int advance(struct merge *merge, struct source *source)
{
    source->has_head = false;
    while (!source->ended) {
        struct zm_partial_cursor *cursor = &source->cursor;
        if (cursor->at >= cursor->end && next_frame(source) != 0)
            return -1;
        uint64_t tag = zm_partial_get_u64(cursor);
        size_t length;
        const char *text;
        switch (tag) {
        case 'H':
            if (zm_partial_get_u64(cursor) && (text = zm_partial_get_string(cursor, &length))) {
                const char *name = zm_model_intern(merge->model, text, length);
                if (!name)
                    return -1;
                if (merge->hostname_known && merge->hostname != name)
                    return -1; /* the runs are of one trace: one hostname */
                merge->hostname = name;
            } else if (merge->hostname_known && merge->hostname) {
                return -1;
            }
            merge->hostname_known = true;
            break;
        case 'S':
            text = zm_partial_get_string(cursor, &length);
            if (!text ||
                ZM_GROW(source->strings, source->string_capacity, source->string_count + 1, 64) !=
                    0 ||
                !(source->strings[source->string_count++] =
                      zm_model_intern(merge->model, text, length)))
                return -1;
            break;
        case 'D': {
            uint64_t count = zm_partial_get_u64(cursor), flags = zm_partial_get_u64(cursor);
            if (cursor->failed || !merge->hostname_known || begin_host(merge) != 0)
                return -1;
            bool packets = flags & 1, known = flags & 2;
            if (!packets && !known && merge->unknown_to_skip > 0)
                merge->unknown_to_skip--; /* the cut's, counted at the host's beginning */
            else
                zm_model_discarded(merge->model, count, packets);
            break;
        }
        case 'E': {
            source->head_key = zm_partial_get_u64(cursor);
            source->previous_ns =
                (int64_t)((uint64_t)source->previous_ns + (uint64_t)zm_partial_get_i64(cursor));
            uint64_t mask = zm_partial_get_u64(cursor), words[WORDS] = {0};
            if (mask >> WORDS || (mask & SPECIAL_WORDS))
                return -1;
            for (uint64_t bits = mask; bits; bits &= bits - 1)
                words[__builtin_ctzll(bits)] = zm_partial_get_u64(cursor);
            memcpy(&source->head, words, sizeof(words));
            source->head.ns = source->previous_ns;
            bool bad = false;
            for (size_t i = 0; i < STRINGS; i++) {
                const char *string = string_of(source, zm_partial_get_u64(cursor), &bad);
                memcpy((char *)&source->head + string_offsets[i], &string, sizeof(string));
            }
            if (bad || cursor->failed || !merge->hostname_known)
                return -1;
            source->has_head = true;
            return 0;
        }
        case 'Z':
            source->ended = true;
            break;
        default:
            return -1;
        }
        if (cursor->failed)
            return -1;
    }
    return 0;
}

/* Whether `a`'s head comes before `b`'s: time, then stream (stream_merge's tie order for the
 * streams of one trace), then run (a stream's runs follow each other). */
static bool before(const struct source *a, const struct source *b)
{
    if (a->head.ns != b->head.ns)
        return a->head.ns < b->head.ns;
    if (a->head_key != b->head_key)
        return a->head_key < b->head_key;
    return a->run < b->run;
}

/* Every event of every source into the model, in order; -1 on any failure. */
static int merge_sources(struct merge *merge, struct source *sources, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        if (advance(merge, &sources[i]) != 0)
            return -1;
    int64_t last_ns = INT64_MIN;
    for (uint64_t delivered = 0;; delivered++) {
        struct source *next = NULL;
        for (unsigned i = 0; i < count; i++)
            if (sources[i].has_head && (!next || before(&sources[i], next)))
                next = &sources[i];
        if (!next)
            break;
        /* each run is in order; across runs a stream going back in time is the reader's to
         * report (it refuses such a trace) */
        if (next->head.ns < last_ns || begin_host(merge) != 0 ||
            zm_model_event(merge->model, &next->head) != 0)
            return -1;
        last_ns = next->head.ns;
        if ((delivered & 4095) == 0)
            zm_supervise_progress();
        if (advance(merge, next) != 0)
            return -1;
    }
    for (unsigned i = 0; i < count; i++)
        if (!sources[i].ended)
            return -1;
    return merge->unknown_to_skip == 0 && merge->host_begun &&
                   zm_model_zeprof_events(merge->model) > 0
               ? 0
               : -1;
}

/* Stops the workers still running and reaps them all; 0 when every one exited with 0. */
static int reap(struct source *sources, unsigned count, bool stop)
{
    int status = 0;
    for (unsigned i = 0; i < count; i++) {
        if (sources[i].file >= 0)
            close(sources[i].file);
        if (sources[i].doorbell >= 0)
            close(sources[i].doorbell);
        sources[i].file = sources[i].doorbell = -1;
        if (sources[i].pid <= 0)
            continue;
        if (stop)
            kill(sources[i].pid, SIGKILL);
        int wait_status;
        while (waitpid(sources[i].pid, &wait_status, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0)
            status = -1;
        sources[i].pid = 0;
    }
    return status;
}

static void release_sources(struct source *sources, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        free(sources[i].frame);
        free(sources[i].strings);
    }
    free(sources);
}

/* Forks one worker per run, each with its events file and doorbell; -1 when one could not be
 * started. */
static int start_workers(const struct zm_split_plan *plan, struct source *sources)
{
    for (unsigned k = 0; k < plan->runs; k++)
        sources[k] = (struct source){.file = -1, .doorbell = -1, .run = k};
    for (unsigned k = 0; k < plan->runs; k++) {
        char path[4096], events[4200];
        zm_split_plan_run_path(plan, k, path, sizeof(path));
        snprintf(events, sizeof(events), "%s.events", path);
        int pipe_fds[2] = {-1, -1};
        int writing = open(events, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        sources[k].file = open(events, O_RDONLY | O_CLOEXEC);
        if (writing < 0 || sources[k].file < 0 || pipe2(pipe_fds, O_CLOEXEC) != 0) {
            if (writing >= 0)
                close(writing);
            return -1;
        }
        fflush(NULL); /* nothing buffered is written twice */
        pid_t pid = fork();
        if (pid == 0) {
            close(pipe_fds[0]);
            run_worker(path, writing, pipe_fds[1]); /* the merge's descriptors close at exit */
        }
        close(writing);
        close(pipe_fds[1]);
        sources[k].doorbell = pipe_fds[0];
        if (pid < 0)
            return -1;
        sources[k].pid = pid;
    }
    return 0;
}

/* The host into a partial at `partial` through a model of our own: 1 written; 0 when the runs
 * could not be read (nothing written: one reader is to read the trace); -1 when the partial
 * could not be completed, with the writer's line in `reason`. `supervised`: the writer's
 * temporary file is the supervisor's to remove (not in the plan's directory). */
static int reduce_runs(const char *path, const struct zm_split_plan *plan, const char *partial,
                       bool supervised, const struct zm_split_options *options, char *reason,
                       int reason_size)
{
    struct zm_partial_writer *writer = zm_partial_writer_open(
        partial, options->spans != ZM_PARTIAL_SPANS_SKIPPED, supervised, reason, reason_size);
    if (!writer)
        return 0;
    struct zm_span_sink sink = zm_partial_writer_sink(writer);
    struct zm_model *model = zm_model_new(&sink, options->rate_ppm);
    struct source *sources = calloc(plan->runs, sizeof(*sources));
    int status = 0;
    if (model && sources) {
        zm_partial_writer_attach(writer, model);
        struct merge merge = {.model = model,
                              .path = path,
                              .plan = plan,
                              .unknown_to_skip = plan->cut_unknown_messages};
        bool started = start_workers(plan, sources) == 0;
        bool merged = started && merge_sources(&merge, sources, plan->runs) == 0;
        if (reap(sources, plan->runs, !merged) == 0 && merged && zm_model_end_host(model) == 0)
            status = 1;
    }
    if (sources)
        release_sources(sources, plan->runs);
    if (status == 1) {
        if (zm_partial_writer_finish(writer, reason, reason_size) != 0)
            status = -1;
        writer = NULL;
    }
    zm_partial_writer_abort(writer);
    zm_model_free(model);
    return status;
}

static uint64_t min_bytes(void)
{
    const char *text = getenv("ZEPROF_MERGE_SPLIT_MIN_BYTES");
    char *end;
    unsigned long long value = text ? strtoull(text, &end, 10) : 0;
    return text && *text && !*end ? (uint64_t)value : ZM_SPLIT_MIN_BYTES;
}

/* Plans the runs of the host at `path`: 0, or -1 when it is not to be split. */
static int plan_host(const char *path, const struct zm_split_options *options,
                     struct zm_split_plan *plan)
{
    if (options->workers < 2)
        return -1;
    char why[400];
    char **dirs = zm_reader_trace_dirs(path, why, sizeof(why));
    if (!dirs)
        return -1;
    const char *tmp = getenv("TMPDIR");
    int status = dirs[0] && !dirs[1] &&
                         zm_split_plan_make(dirs[0], options->workers, min_bytes(),
                                            tmp && tmp[0] ? tmp : "/tmp", plan) == 0
                     ? 0
                     : -1;
    zm_reader_free_trace_dirs(dirs);
    if (status == 0) {
        if (options->verbose)
            fprintf(zm_supervise_log(), "zeprof-merge: reading %s in %u runs of packets\n", path,
                    plan->runs);
    }
    return status;
}

static void forget_plan(const char *path, struct zm_split_plan *plan, int status,
                        const struct zm_split_options *options)
{
    if (status == 0 && options->verbose)
        fprintf(zm_supervise_log(), "zeprof-merge: reading %s again in one run\n", path);
    zm_split_plan_remove(plan);
}

int zm_split_reduce(const char *path, const char *output, const struct zm_split_options *options,
                    char *reason, int reason_size)
{
    struct zm_split_plan plan;
    if (plan_host(path, options, &plan) != 0)
        return 0;
    int status = reduce_runs(path, &plan, output, true, options, reason, reason_size);
    forget_plan(path, &plan, status, options);
    return status;
}

int zm_split_read(const char *path, struct zm_model *model, const struct zm_split_options *options,
                  char *reason, int reason_size)
{
    struct zm_split_plan plan;
    if (plan_host(path, options, &plan) != 0)
        return 0;
    char partial[4200];
    snprintf(partial, sizeof(partial), "%s/host.partial", plan.directory);
    int status = reduce_runs(path, &plan, partial, false, options, reason, reason_size);
    if (status == 1 &&
        zm_partial_read(partial, path, model, options->spans, reason, reason_size) != 0)
        status = -1;
    forget_plan(path, &plan, status, options);
    return status;
}
