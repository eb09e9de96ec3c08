/*
 * split_plan: cuts one CTF trace (LTTng's layout, every stream file indexed) into runs of packets
 * for split.h's workers, and makes each run a trace of its own in a private temporary directory:
 * run<k>/metadata (a link to the trace's), and for every stream with packets in run k a stream
 * file holding just those packets and index/<name>.idx describing them (libbabeltrace2 reads a
 * stream's packets from its index, and only an index that covers its whole file).
 *
 * The streams' packets, one stream after the other, are cut into runs of about equal bytes, so
 * that a run holds a contiguous range of packets of each stream: a large stream is cut, small
 * ones go whole. Where a stream is cut, libbabeltrace2 reading the next run sees a stream's first
 * packet and cannot count what was discarded since the previous one; the plan counts it from
 * the two packets' contexts, as libbabeltrace2 does between packets.
 *
 * Owns its directory and its path; the directory is named to the supervisor (supervise.h) from
 * before it exists until it is removed, so that it goes if this process dies.
 */
#ifndef ZM_SPLIT_PLAN_H
#define ZM_SPLIT_PLAN_H

#include "must_check.h"

#include <stddef.h>
#include <stdint.h>

struct zm_split_plan {
    char *directory; /* Owned by this: the runs' traces, removed by zm_split_plan_remove */
    unsigned runs;
    uint64_t bytes; /* of all stream files */
    /* At the cuts: the discarded events and packets libbabeltrace2 would have counted between
     * the two packets, and how many discarded-events messages of unknown count the runs'
     * readers give instead (a run's first packet of a stream with events already discarded). */
    uint64_t cut_events, cut_packets, cut_unknown_messages;
};

/* Plans `runs` runs of the trace at `trace_dir` in a new directory under `temporary` and copies
 * their packets; 0, or -1 when the trace cannot be split that way (or the copy failed: nothing
 * is left behind). `min_bytes`: smaller traces are not split. */
ZM_MUST_CHECK int zm_split_plan_make(const char *trace_dir, unsigned runs, uint64_t min_bytes,
                                     const char *temporary, struct zm_split_plan *plan);
/* The path of run `k`'s trace, in `path`. */
void zm_split_plan_run_path(const struct zm_split_plan *plan, unsigned k, char *path, size_t size);
/* Removes the runs' directory and everything in it, and frees the plan. */
void zm_split_plan_remove(struct zm_split_plan *plan);

#endif
