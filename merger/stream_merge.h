/*
 * stream_merge: a babeltrace2 sink with one input port per source output port (one CTF stream
 * each) that hands the messages of all streams to a callback in the order flt.utils.muxer 2.0.4
 * would, without the muxer: a k-way merge by timestamp, ties broken by the stream (trace UUID,
 * trace name, stream class id, stream id, as the muxer does for messages of different streams),
 * messages without a clock snapshot taking the last timestamp given (so they come first), and the
 * muxer's errors: a timestamp earlier than the last one given, a clock snapshot out of range.
 * When the streams are unusual (a stream class without a clock, clock classes the muxer would
 * refuse, two streams with the same tie key, a stream that does not start with its beginning), it
 * stops before delivering anything and says so (zm_merge_unusual): the reader then runs the muxer.
 */
#ifndef ZM_STREAM_MERGE_H
#define ZM_STREAM_MERGE_H

#include <babeltrace2/babeltrace.h>
#include <stdbool.h>
#include <stdint.h>

/* One message, in order; `ns` is its time as the merge saw it. Returns 0, or -1 to stop the
 * graph with an error (the callback keeps its own reason). The message stays the merge's. */
typedef int (*zm_merge_deliver)(void *user, const bt_message *message, int64_t ns);

struct zm_merge;

struct zm_merge *zm_merge_new(zm_merge_deliver deliver, void *user);
/* Adds the sink to `graph` with `inputs` input ports, to be connected to the sources' outputs in
 * order. 0 or -1 (the babeltrace2 error is left pending). */
int zm_merge_add(struct zm_merge *merge, bt_graph *graph, uint64_t inputs,
                 const bt_component_sink **sink);
/* After the graph stopped with an error: true when the streams were unusual and nothing was
 * delivered (run the muxer instead). */
bool zm_merge_unusual(const struct zm_merge *merge);
/* After the graph stopped with an error: the merge's own reason (the muxer's errors), or "". */
const char *zm_merge_error(const struct zm_merge *merge);
/* Frees the merge; call after the graph was released. */
void zm_merge_free(struct zm_merge *merge);

/* libbabeltrace2 2.0.4's CTF reader keeps the message of an event it stopped decoding half-way
 * for ever; seeking the iterator back to its beginning releases it (stream_merge.c says more). */
void zm_merge_release_unfinished_events(bt_message_iterator *iterator);

#endif
