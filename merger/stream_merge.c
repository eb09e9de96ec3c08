/* stream_merge: the streams of a trace merged in flt.utils.muxer's order, in our sink
 * (stream_merge.h). The muxer (babeltrace 2.0.4, src/plugins/utils/muxer/muxer.c) recomputes the
 * timestamp of every stream's next message each time it picks one and compares equal timestamps
 * message by message; here each head's timestamp is computed once, and equal timestamps of
 * different streams are ordered by a rank the streams get once, which is what the muxer's
 * comparison amounts to when the streams differ (checked at the start, else zm_merge_unusual). */
#include "stream_merge.h"

#include "supervise.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages delivered per consume call: a heartbeat for the supervisor now and then. */
enum { BATCH = 256 };

/* A babeltrace2 UUID (bt_uuid) is 16 bytes. */
enum { UUID_BYTES = 16 };

struct input {
    bt_message_iterator *iterator; /* Owned by this */
    bt_message_array_const batch;  /* the iterator's last batch: ours from `next` on */
    uint64_t count, next;
    const bt_stream *stream;       /* Weak: the stream of this port (one per CTF stream file) */
    uint32_t rank;                 /* order among streams on equal timestamps */
    bool head_known;               /* head_ns/head_floats are the head's (batch[next]) */
    bool head_floats;              /* no clock snapshot: it takes the last timestamp given */
    int64_t head_ns;
    /* The stream class's packets and discarded-item messages carry clock snapshots. */
    bool packet_begin_clock, packet_end_clock, discarded_events_clock, discarded_packets_clock;
};

struct zm_merge {
    zm_merge_deliver deliver;
    void *user;
    struct input *inputs; /* Owned by this */
    size_t input_count;
    /* Indexes of inputs not ended, in the muxer's order: its array of upstream iterators loses
     * an ended one by moving the last into its place, and it asks them for messages in that
     * order (which matters for which error of two broken streams is reported). */
    size_t *active; /* Owned by this */
    size_t active_count;
    bool started, unusual;
    int64_t last_ns; /* the last timestamp given */
    char why[200];
};

struct zm_merge *zm_merge_new(zm_merge_deliver deliver, void *user)
{
    struct zm_merge *merge = calloc(1, sizeof(*merge));
    if (merge) {
        merge->deliver = deliver;
        merge->user = user;
        merge->last_ns = INT64_MIN;
    }
    return merge;
}

bool zm_merge_unusual(const struct zm_merge *merge)
{
    return merge->unusual;
}

const char *zm_merge_error(const struct zm_merge *merge)
{
    return merge->why;
}

/* libbabeltrace2 2.0.4's CTF reader keeps the message of an event it stopped decoding half-way
 * (its data ran out: the stream ends quietly; or it failed) for ever: destroying the reader does
 * not release it (src/plugins/ctf/common/msg-iter/msg-iter.c, ctf_msg_iter_destroy), a leak with
 * the very stack a leak of ours would have, so no sanitizer suppression can tell them apart.
 * Seeking back to the beginning resets the readers, which releases it (ctf_msg_iter_reset): done
 * once, at the end or on the error, when nothing is read any more (tests/fuzz/README.md). */
void zm_merge_release_unfinished_events(bt_message_iterator *iterator)
{
    /* The reader leaves a cause behind even so, and no API call is allowed with one pending. */
    bt_current_thread_clear_error();
    bt_bool can_seek = BT_FALSE;
    if (bt_message_iterator_can_seek_beginning(iterator, &can_seek) ==
            BT_MESSAGE_ITERATOR_CAN_SEEK_BEGINNING_STATUS_OK &&
        can_seek)
        (void)bt_message_iterator_seek_beginning(iterator);
    bt_current_thread_clear_error();
}

/* Gives back the messages of a batch not delivered. */
static void drop_batch(struct input *input)
{
    for (; input->next < input->count; input->next++)
        bt_message_put_ref(input->batch[input->next]);
}

/* Done (at the end or on an error): every stream's half-decoded event released, the pending
 * error (if any) kept. */
static void release_all(struct zm_merge *merge)
{
    const bt_error *error = bt_current_thread_take_error();
    for (size_t i = 0; i < merge->input_count; i++) {
        drop_batch(&merge->inputs[i]);
        if (merge->inputs[i].iterator)
            zm_merge_release_unfinished_events(merge->inputs[i].iterator);
    }
    if (error)
        bt_current_thread_move_error(error);
}

static int compare_present(const void *left, const void *right)
{
    return left && !right ? -1 : !left && right ? 1 : 0;
}

/* The muxer's order of two messages of different streams with equal timestamps: trace UUID
 * (present first, then bytewise), trace name (present first, then strcmp), stream class id,
 * stream id. 0 when these are equal (the muxer would then compare the messages themselves). */
static int compare_streams(const bt_stream *left, const bt_stream *right)
{
    const bt_trace *left_trace = bt_stream_borrow_trace_const(left);
    const bt_trace *right_trace = bt_stream_borrow_trace_const(right);
    bt_uuid left_uuid = bt_trace_get_uuid(left_trace), right_uuid = bt_trace_get_uuid(right_trace);
    int order = compare_present(left_uuid, right_uuid);
    if (order == 0 && left_uuid)
        order = memcmp(left_uuid, right_uuid, UUID_BYTES);
    if (order != 0)
        return order;
    const char *left_name = bt_trace_get_name(left_trace);
    const char *right_name = bt_trace_get_name(right_trace);
    order = compare_present(left_name, right_name);
    if (order == 0 && left_name)
        order = strcmp(left_name, right_name);
    if (order != 0)
        return order;
    uint64_t left_class = bt_stream_class_get_id(bt_stream_borrow_class_const(left));
    uint64_t right_class = bt_stream_class_get_id(bt_stream_borrow_class_const(right));
    if (left_class != right_class)
        return left_class < right_class ? -1 : 1;
    uint64_t left_id = bt_stream_get_id(left), right_id = bt_stream_get_id(right);
    return left_id == right_id ? 0 : left_id < right_id ? -1 : 1;
}

/* The muxer's expectation of clock classes, set by the first stream: all absolute, or all
 * relative with the first one's UUID, or all relative without a UUID. */
static bool clock_classes_agree(const bt_clock_class *first, const bt_clock_class *other)
{
    bool absolute = bt_clock_class_origin_is_unix_epoch(first);
    if (absolute || bt_clock_class_origin_is_unix_epoch(other))
        return absolute && bt_clock_class_origin_is_unix_epoch(other);
    bt_uuid first_uuid = bt_clock_class_get_uuid(first);
    bt_uuid other_uuid = bt_clock_class_get_uuid(other);
    if (!first_uuid || !other_uuid)
        return !first_uuid && !other_uuid;
    return memcmp(first_uuid, other_uuid, UUID_BYTES) == 0;
}

/* First heads (each stream's beginning): learns the streams and ranks them, or finds them
 * unusual. */
static bool learn_streams(struct zm_merge *merge)
{
    const bt_clock_class *first_clock = NULL;
    for (size_t a = 0; a < merge->active_count; a++) {
        struct input *input = &merge->inputs[merge->active[a]];
        const bt_message *head = input->batch[input->next];
        if (bt_message_get_type(head) != BT_MESSAGE_TYPE_STREAM_BEGINNING)
            return false;
        input->stream = bt_message_stream_beginning_borrow_stream_const(head);
        const bt_stream_class *stream_class = bt_stream_borrow_class_const(input->stream);
        const bt_clock_class *clock =
            bt_stream_class_borrow_default_clock_class_const(stream_class);
        if (!clock)
            return false; /* the muxer then orders nothing by time (or refuses the mix) */
        if (!first_clock)
            first_clock = clock;
        else if (!clock_classes_agree(first_clock, clock))
            return false; /* the muxer refuses it, with its own error */
        input->packet_begin_clock =
            bt_stream_class_supports_packets(stream_class) &&
            bt_stream_class_packets_have_beginning_default_clock_snapshot(stream_class);
        input->packet_end_clock =
            bt_stream_class_supports_packets(stream_class) &&
            bt_stream_class_packets_have_end_default_clock_snapshot(stream_class);
        input->discarded_events_clock =
            bt_stream_class_supports_discarded_events(stream_class) &&
            bt_stream_class_discarded_events_have_default_clock_snapshots(stream_class);
        input->discarded_packets_clock =
            bt_stream_class_supports_discarded_packets(stream_class) &&
            bt_stream_class_discarded_packets_have_default_clock_snapshots(stream_class);
    }
    /* Rank: how many streams come before; two equal keys are beyond this merge. */
    for (size_t a = 0; a < merge->active_count; a++) {
        struct input *input = &merge->inputs[merge->active[a]];
        input->rank = 0;
        for (size_t b = 0; b < merge->active_count; b++) {
            if (a == b)
                continue;
            int order = compare_streams(merge->inputs[merge->active[b]].stream, input->stream);
            if (order == 0)
                return false;
            input->rank += order < 0;
        }
    }
    return true;
}

/* The head's timestamp as the muxer takes it: its default clock snapshot, or none (it then
 * takes the last timestamp given). -1 when the snapshot is out of range. */
static int learn_head(struct zm_merge *merge, struct input *input)
{
    const bt_message *head = input->batch[input->next];
    const bt_clock_snapshot *snapshot = NULL;
    switch (bt_message_get_type(head)) {
    case BT_MESSAGE_TYPE_EVENT:
        snapshot = bt_message_event_borrow_default_clock_snapshot_const(head);
        break;
    case BT_MESSAGE_TYPE_PACKET_BEGINNING:
        if (input->packet_begin_clock)
            snapshot = bt_message_packet_beginning_borrow_default_clock_snapshot_const(head);
        break;
    case BT_MESSAGE_TYPE_PACKET_END:
        if (input->packet_end_clock)
            snapshot = bt_message_packet_end_borrow_default_clock_snapshot_const(head);
        break;
    case BT_MESSAGE_TYPE_STREAM_BEGINNING:
        if (bt_message_stream_beginning_borrow_default_clock_snapshot_const(head, &snapshot) !=
            BT_MESSAGE_STREAM_CLOCK_SNAPSHOT_STATE_KNOWN)
            snapshot = NULL;
        break;
    case BT_MESSAGE_TYPE_STREAM_END:
        if (bt_message_stream_end_borrow_default_clock_snapshot_const(head, &snapshot) !=
            BT_MESSAGE_STREAM_CLOCK_SNAPSHOT_STATE_KNOWN)
            snapshot = NULL;
        break;
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
        if (input->discarded_events_clock)
            snapshot =
                bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(head);
        break;
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
        if (input->discarded_packets_clock)
            snapshot =
                bt_message_discarded_packets_borrow_beginning_default_clock_snapshot_const(head);
        break;
    case BT_MESSAGE_TYPE_MESSAGE_ITERATOR_INACTIVITY:
        snapshot = bt_message_message_iterator_inactivity_borrow_clock_snapshot_const(head);
        break;
    default:
        break;
    }
    input->head_known = true;
    input->head_floats = snapshot == NULL;
    if (snapshot &&
        bt_clock_snapshot_get_ns_from_origin(snapshot, &input->head_ns) !=
            BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
        snprintf(merge->why, sizeof(merge->why),
                 "a timestamp out of range (clock offset or value overflows 64 bits)");
        return -1;
    }
    return 0;
}

/* Every input whose batch is used up asks its iterator for more, in the muxer's order. */
static bt_component_class_sink_consume_method_status refill(struct zm_merge *merge)
{
    for (size_t a = 0; a < merge->active_count; a++) {
        struct input *input = &merge->inputs[merge->active[a]];
        if (input->next < input->count)
            continue;
        input->count = input->next = 0;
        input->head_known = false;
        switch (bt_message_iterator_next(input->iterator, &input->batch, &input->count)) {
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
            break;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
            merge->active[a] = merge->active[--merge->active_count];
            a--; /* the one moved here is asked next (wraps to 0 at the start: fine) */
            break;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
        default:
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
        }
    }
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
}

static bt_component_class_sink_consume_method_status consume(bt_self_component_sink *self)
{
    struct zm_merge *merge =
        bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    zm_supervise_progress();
    for (int delivered = 0; delivered < BATCH; delivered++) {
        bt_component_class_sink_consume_method_status status = refill(merge);
        if (status == BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN)
            return status;
        if (status != BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK) {
            release_all(merge);
            return status;
        }
        if (!merge->started) {
            merge->started = true;
            if (!learn_streams(merge)) {
                merge->unusual = true;
                release_all(merge);
                return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
            }
        }
        if (merge->active_count == 0) {
            release_all(merge);
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
        }
        struct input *best = NULL;
        int64_t best_ns = 0;
        for (size_t a = 0; a < merge->active_count; a++) {
            struct input *input = &merge->inputs[merge->active[a]];
            if (!input->head_known && learn_head(merge, input) != 0) {
                release_all(merge);
                return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
            }
            int64_t ns = input->head_floats ? merge->last_ns : input->head_ns;
            if (!best || ns < best_ns || (ns == best_ns && input->rank < best->rank)) {
                best = input;
                best_ns = ns;
            }
        }
        if (best_ns < merge->last_ns) {
            /* The muxer's error: a stream went back in time (a corrupt packet header). */
            snprintf(merge->why, sizeof(merge->why),
                     "a timestamp earlier than the last one (%" PRId64 " ns < %" PRId64 " ns)",
                     best_ns, merge->last_ns);
            release_all(merge);
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
        }
        const bt_message *message = best->batch[best->next++];
        best->head_known = false;
        merge->last_ns = best_ns;
        int failed = merge->deliver(merge->user, message, best_ns);
        bt_message_put_ref(message);
        if (failed) {
            release_all(merge);
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
        }
    }
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
}

static bt_component_class_initialize_method_status
initialize(bt_self_component_sink *self, bt_self_component_sink_configuration *configuration,
           const bt_value *params, void *data)
{
    (void)configuration;
    (void)params;
    struct zm_merge *merge = data;
    bt_self_component_set_data(bt_self_component_sink_as_self_component(self), merge);
    for (size_t i = 0; i < merge->input_count; i++) {
        char name[32];
        snprintf(name, sizeof(name), "in%zu", i);
        if (bt_self_component_sink_add_input_port(self, name, NULL, NULL) !=
            BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
            return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    }
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_sink_graph_is_configured_method_status
graph_is_configured(bt_self_component_sink *self)
{
    struct zm_merge *merge =
        bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    for (size_t i = 0; i < merge->input_count; i++) {
        if (bt_message_iterator_create_from_sink_component(
                self, bt_self_component_sink_borrow_input_port_by_index(self, i),
                &merge->inputs[i].iterator) !=
            BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
            return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
        merge->active[merge->active_count++] = i;
    }
    return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

/* The iterators and undelivered messages go with the component, before the graph's sources. */
static void finalize(bt_self_component_sink *self)
{
    struct zm_merge *merge =
        bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    for (size_t i = 0; i < merge->input_count; i++) {
        drop_batch(&merge->inputs[i]);
        bt_message_iterator_put_ref(merge->inputs[i].iterator);
        merge->inputs[i].iterator = NULL;
    }
}

int zm_merge_add(struct zm_merge *merge, bt_graph *graph, uint64_t inputs,
                 const bt_component_sink **sink)
{
    merge->inputs = calloc(inputs ? inputs : 1, sizeof(*merge->inputs));
    merge->active = calloc(inputs ? inputs : 1, sizeof(*merge->active));
    if (!merge->inputs || !merge->active)
        return -1;
    merge->input_count = inputs;
    bt_component_class_sink *class = bt_component_class_sink_create("zeprof-merge", consume);
    if (!class)
        return -1;
    int status = -1;
    if (bt_component_class_sink_set_initialize_method(class, initialize) ==
            BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK &&
        bt_component_class_sink_set_graph_is_configured_method(class, graph_is_configured) ==
            BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK &&
        bt_component_class_sink_set_finalize_method(class, finalize) ==
            BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK &&
        bt_graph_add_sink_component_with_initialize_method_data(
            graph, class, "zeprof", NULL, merge, BT_LOGGING_LEVEL_NONE, sink) ==
            BT_GRAPH_ADD_COMPONENT_STATUS_OK)
        status = 0;
    bt_component_class_sink_put_ref(class);
    return status;
}

void zm_merge_free(struct zm_merge *merge)
{
    if (!merge)
        return;
    free(merge->inputs);
    free(merge->active);
    free(merge);
}
