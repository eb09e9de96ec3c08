/*
 * split: one host's raw trace decoded by several worker processes at once, then merged back
 * into exactly what one reader would have given (docs/merger.md "A host split across cores").
 *
 * libbabeltrace2 decodes a trace's events one after the other: on a node whose ranks have left,
 * one core works and the others wait. Here every stream's packets are cut into N runs of about
 * equal bytes, run k of every stream is copied into a trace of its own (the same metadata, an
 * index of those packets) in a private temporary directory, and worker k reads it through the
 * reader (reader.h, tapped) and sends each decoded event, with its stream's tie key, down a pipe.
 * This process merges the workers' events in the order one stream merge gives (time, then
 * stream, then run: runs of a stream follow each other), counts what the cuts hide from
 * libbabeltrace2 (events and packets discarded between the last packet of a run and the first of
 * the next, from the packets' own counters), and gives them to a model of its own, whose spans
 * go to a temporary partial (partial_write.h). That partial is then read into the caller's model
 * (partial_read.h): the path partials already take, which gives the same tally, timeline and
 * partial as reading the trace, byte for byte. A --reduce of that one host writes its partial
 * straight away (zm_split_reduce).
 *
 * It applies to a trace directory holding one CTF trace in LTTng's layout, every stream file
 * indexed and one stream per file, with at least two packets and ZM_SPLIT_MIN_BYTES of streams,
 * when the temporary directory has room for a copy. Otherwise, and whenever anything goes wrong
 * (a worker's decoding error, a corrupt packet, memory), nothing has reached the caller's model
 * and the caller reads the trace itself, which then reports what is wrong in its own words.
 */
#ifndef ZM_SPLIT_H
#define ZM_SPLIT_H

#include "model.h"
#include "must_check.h"
#include "partial_read.h"

#include <stdbool.h>
#include <stdint.h>

/* Below this many bytes of streams, workers cost more than they save (forks, copies). The
 * environment's ZEPROF_MERGE_SPLIT_MIN_BYTES replaces it (tests split small traces). */
#define ZM_SPLIT_MIN_BYTES ((uint64_t)4 << 20)

struct zm_split_options {
    unsigned workers;            /* at least 2, or nothing is split */
    uint64_t rate_ppm;           /* the caller's model's (--max-rate-ppm) */
    enum zm_partial_spans spans; /* what the caller's model needs of the spans */
    bool verbose;
};

/* --reduce of the one host at `path` straight into the partial `output`: 1 when written; 0 when
 * it was not split and nothing was written; -1 when the partial could not be completed, with the
 * one line in `reason`. */
ZM_MUST_CHECK int zm_split_reduce(const char *path, const char *output,
                                  const struct zm_split_options *options, char *reason,
                                  int reason_size);
/* 1 when the host at `path` was read into `model`; 0 when it was not split and nothing was read
 * (read it with zm_reader_read); -1 when the host was partly given to `model` and failed there,
 * with the one line in `reason`. */
ZM_MUST_CHECK int zm_split_read(const char *path, struct zm_model *model,
                                const struct zm_split_options *options, char *reason,
                                int reason_size);

#endif
