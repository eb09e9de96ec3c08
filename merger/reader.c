/* reader: one trace directory through a babeltrace2 graph into the model (reader.h). */
#include "reader.h"

#include "decode.h"
#include "dump.h"
#include "grow.h"
#include "stream_merge.h"
#include "supervise.h"
#include "validate.h"

#include <babeltrace2/babeltrace.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct reader {
    struct zm_model *model;
    FILE *dump;
    const char *path;
    bool host_started;
    uint32_t host;                   /* the model's number of this host, once started */
    const char *hostname;            /* Weak: the trace's environment */
    struct zm_decoder decoder;       /* Owned by this */
    const struct zm_reader_tap *tap; /* Weak, or NULL: events go to the model */
    const bt_stream *tap_stream;     /* the last event's stream, and its tie key */
    uint64_t tap_key;
    bool failed;   /* the model failed (out of memory, I/O), or `why` says what was wrong */
    char why[200]; /* a reason of the reader's own (bad field types, timestamps), or "" */
};

void zm_reader_setup(void)
{
    bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);
}

static int start_host(struct reader *reader)
{
    if (reader->host_started)
        return 0;
    reader->host_started = true;
    int host = zm_model_begin_host(reader->model, reader->hostname, reader->path);
    if (host < 0 ||
        (reader->tap && reader->tap->begin(reader->tap->context, reader->hostname) != 0))
        return -1;
    reader->host = (uint32_t)host;
    return 0;
}

/* The stream's tie key: its class id and id (stream_merge's order among the streams of one trace).
 */
static int tap_event(struct reader *reader, const bt_event *event, const struct zm_event *decoded)
{
    const bt_stream *stream = bt_event_borrow_stream_const(event);
    if (stream != reader->tap_stream) {
        uint64_t class_id = bt_stream_class_get_id(bt_stream_borrow_class_const(stream));
        uint64_t id = bt_stream_get_id(stream);
        if (class_id >= (UINT64_C(1) << 16) || id >= (UINT64_C(1) << 48)) {
            snprintf(reader->why, sizeof(reader->why), "a stream id too large to tap");
            return -1;
        }
        reader->tap_stream = stream;
        reader->tap_key = class_id << 48 | id;
    }
    return reader->tap->event(reader->tap->context, decoded, reader->tap_key);
}

/* `known_ns`: the event's time as the stream merge computed it, or NULL. */
static int handle_event(struct reader *reader, const bt_message *message, const int64_t *known_ns)
{
    const bt_event *event = bt_message_event_borrow_event_const(message);
    const struct zm_decode_class *class = zm_decode_class_of(&reader->decoder, event);
    if (!class || reader->failed || start_host(reader) != 0)
        return -1;
    const struct zm_decode_info *info = zm_decode_info(class);
    if (info->invalid) {
        snprintf(reader->why, sizeof(reader->why), "%s", info->invalid);
        return -1;
    }
    int64_t ns = known_ns ? *known_ns : 0;
    const bt_clock_snapshot *snapshot =
        bt_message_event_borrow_default_clock_snapshot_const(message);
    if (!known_ns && bt_clock_snapshot_get_ns_from_origin(snapshot, &ns) !=
                         BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
        snprintf(reader->why, sizeof(reader->why),
                 "a timestamp out of range (clock offset or value overflows 64 bits)");
        return -1;
    }
    struct zm_event decoded;
    zm_decode_event(class, event, snapshot, ns, &decoded);
    if (reader->dump)
        zm_dump_event(reader->dump, zm_model_host(reader->model, reader->host)->hostname, ns, event,
                      info->kind == ZM_EVENT_API_CALL ? &decoded.start_ns : NULL);
    if (info->process_name)
        return 0; /* the name, once per process, in place of a procname context on every event */
    if (reader->tap)
        return tap_event(reader, event, &decoded);
    return zm_model_event(reader->model, &decoded);
}

static void discarded(struct reader *reader, uint64_t count, bool packets, bool known)
{
    if (reader->tap)
        reader->tap->discarded(reader->tap->context, count, packets, known);
    else
        zm_model_discarded(reader->model, count, packets);
}

static void stream_beginning(struct reader *reader, const bt_message *message)
{
    if (reader->hostname)
        return;
    const bt_stream *stream = bt_message_stream_beginning_borrow_stream_const(message);
    const bt_trace *trace = bt_stream_borrow_trace_const(stream);
    const bt_value *value =
        bt_trace_borrow_environment_entry_value_by_name_const(trace, "hostname");
    if (value && bt_value_is_string(value))
        reader->hostname = bt_value_string_get(value);
}

/* One message in time order, from the muxer or the stream merge. 0, or -1 (reader->failed). */
static int handle_message(struct reader *reader, const bt_message *message, const int64_t *ns)
{
    uint64_t lost;
    bool known;
    int status = 0;
    switch (bt_message_get_type(message)) {
    case BT_MESSAGE_TYPE_EVENT:
        status = handle_event(reader, message, ns);
        break;
    case BT_MESSAGE_TYPE_STREAM_BEGINNING:
        stream_beginning(reader, message);
        break;
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
        /* The count is unknown when a stream's first packet already lost events: then at least
         * one was lost. */
        known = bt_message_discarded_events_get_count(message, &lost) ==
                BT_PROPERTY_AVAILABILITY_AVAILABLE;
        if (!known)
            lost = 1;
        status = start_host(reader);
        discarded(reader, lost, false, known);
        break;
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
        known = bt_message_discarded_packets_get_count(message, &lost) ==
                BT_PROPERTY_AVAILABILITY_AVAILABLE;
        if (!known)
            lost = 1;
        status = start_host(reader);
        discarded(reader, lost, true, known);
        break;
    default:
        break;
    }
    if (status != 0)
        reader->failed = true;
    return status;
}

static int deliver_merged(void *user, const bt_message *message, int64_t ns)
{
    return handle_message(user, message, &ns);
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *iterator,
                                                                  void *user_data)
{
    struct reader *reader = user_data;
    bt_message_array_const messages;
    uint64_t count;
    zm_supervise_progress();
    switch (bt_message_iterator_next(iterator, &messages, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        zm_merge_release_unfinished_events(iterator);
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default: {
        /* Another stream's reader may be stopped in the middle of an event too; the error,
         * which the reason quotes, is set aside meanwhile. */
        const bt_error *error = bt_current_thread_take_error();
        zm_merge_release_unfinished_events(iterator);
        if (error)
            bt_current_thread_move_error(error);
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    }
    int status = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (status == 0)
            status = handle_message(reader, messages[i], NULL);
        bt_message_put_ref(messages[i]);
    }
    /* handle_message marked the reader failed */
    return status != 0 ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
                       : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* ---- The graph ------------------------------------------------------------------------- */

/* nftw has no context argument: the directories found by the current walk. */
static char **trace_dirs;
static size_t trace_dir_count, trace_dir_capacity;
static bool walk_failed;
static char *walk_unreadable; /* the first directory or file the walk could not read */
static int walk_errno;

/* Collects every directory holding a CTF `metadata` file: one logical trace each (per-UID
 * buffers give one per host and ABI, per-PID buffers one per process). */
static int look_for_metadata(const char *path, const struct stat *info, int type, struct FTW *where)
{
    (void)info;
    if (type == FTW_DNR || type == FTW_NS) {
        /* Part of the trace may be in there: never read a trace partly without saying so. */
        walk_errno = errno ? errno : EACCES;
        if (!walk_unreadable)
            walk_unreadable = strdup(path);
        return 0;
    }
    if (type != FTW_F || strcmp(path + where->base, "metadata") != 0)
        return 0;
    char *dir = strndup(path, where->base > 0 ? (size_t)where->base - 1 : 0);
    if (!dir || ZM_GROW(trace_dirs, trace_dir_capacity, trace_dir_count + 1, 16) != 0) {
        free(dir);
        walk_failed = true;
        return 1;
    }
    trace_dirs[trace_dir_count++] = dir;
    return 0;
}

static void forget_walk(void)
{
    for (size_t i = 0; i < trace_dir_count; i++)
        free(trace_dirs[i]);
    free(trace_dirs);
    trace_dirs = NULL;
    trace_dir_count = trace_dir_capacity = 0;
    walk_failed = false;
    free(walk_unreadable);
    walk_unreadable = NULL;
}

void zm_reader_free_trace_dirs(char **dirs)
{
    for (size_t i = 0; dirs && dirs[i]; i++)
        free(dirs[i]);
    free(dirs);
}

static int compare_paths(const void *left, const void *right)
{
    return strcmp(*(char *const *)left, *(char *const *)right);
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* babeltrace2's message without its internals: pointer values ("addr=0x55d0…", "0x7f…") and
 * the "key=" naming them go, whitespace runs become one space. */
static void clean_cause(char *out, size_t size, const char *message)
{
    size_t n = 0;
    for (const char *c = message; *c && n + 1 < size;) {
        if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X')) {
            size_t digits = 0;
            while (is_hex(c[2 + digits]))
                digits++;
            if (digits >= 6) { /* an address, not a small constant */
                while (n > 0 && out[n - 1] != ' ' && out[n - 1] != '(' && out[n - 1] != '[')
                    n--; /* its "name=" */
                c += 2 + digits;
                while (*c == ',' || *c == ' ')
                    c++;
                continue;
            }
        }
        char ch = (unsigned char)*c < 0x20 ? ' ' : *c;
        if (!(ch == ' ' && (n == 0 || out[n - 1] == ' ')))
            out[n++] = ch;
        c++;
    }
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == ','))
        n--;
    out[n] = '\0';
}

/* The most recent (innermost) cause babeltrace2 gave, cleaned and on one line, for the reason. */
static void babeltrace_reason(char *text, size_t size, const char *fallback)
{
    snprintf(text, size, "%s", fallback);
    const bt_error *error = bt_current_thread_take_error();
    if (!error)
        return;
    uint64_t causes = bt_error_get_cause_count(error);
    if (causes > 0) {
        const bt_error_cause *cause = bt_error_borrow_cause_by_index(error, 0);
        char cleaned[300];
        clean_cause(cleaned, sizeof(cleaned), bt_error_cause_get_message(cause));
        if (cleaned[0])
            snprintf(text, size, "%s (%s)", fallback, cleaned);
    }
    bt_error_release(error);
}

char **zm_reader_trace_dirs(const char *path, char *why, size_t why_size)
{
    char **dirs = NULL;
    char *resolved = NULL;
    struct stat info;
    if (stat(path, &info) != 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        goto end;
    }
    if (!S_ISDIR(info.st_mode)) {
        snprintf(why, why_size, "not a directory");
        goto end;
    }
    /* The walk does not follow links inside the trace, but the directory itself may be one. */
    resolved = realpath(path, NULL);
    if (!resolved) {
        snprintf(why, why_size, "%s", strerror(errno));
        goto end;
    }
    errno = 0;
    if (nftw(resolved, look_for_metadata, 16, FTW_PHYS) != 0 && !walk_failed) {
        snprintf(why, why_size, "cannot walk the directory (%s)", strerror(errno));
        goto end;
    }
    if (walk_failed) {
        snprintf(why, why_size, "out of memory");
        goto end;
    }
    if (walk_unreadable) {
        char shown[200];
        zm_supervise_escape_line(shown, sizeof(shown), walk_unreadable);
        snprintf(why, why_size, "cannot read %s (%s)", shown, strerror(walk_errno));
        goto end;
    }
    if (trace_dir_count == 0) {
        snprintf(why, why_size, "no CTF trace in the directory");
        goto end;
    }
    if (ZM_GROW(trace_dirs, trace_dir_capacity, trace_dir_count + 1, 16) != 0) {
        snprintf(why, why_size, "out of memory");
        goto end;
    }
    qsort(trace_dirs, trace_dir_count, sizeof(*trace_dirs), compare_paths);
    trace_dirs[trace_dir_count] = NULL;
    dirs = trace_dirs; /* handed over: the walk's state starts afresh */
    trace_dirs = NULL;
    trace_dir_count = trace_dir_capacity = 0;
end:
    free(resolved);
    forget_walk();
    return dirs;
}

/* Builds the graph: one src.ctf.fs per logical trace, its ports into the stream merge (or, with
 * `muxer`, into flt.utils.muxer and a simple sink), and runs it. Returns the run's status; on a
 * failure to build, -1 with `why` filled. */
static int run_graph(struct reader *reader, char **dirs, size_t dir_count, const bt_plugin *ctf,
                     const bt_plugin *utils, struct zm_merge *merge, bool verbose, char *why,
                     size_t why_size, bt_graph_run_status *run)
{
    int status = -1;
    bt_value *params = NULL;
    bt_graph *graph = bt_graph_create(0);
    if (!graph) {
        snprintf(why, why_size, "out of memory");
        goto end;
    }
    const bt_component_filter *muxer = NULL;
    if (!merge &&
        bt_graph_add_filter_component(
            graph, bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer"), "muxer",
            NULL, BT_LOGGING_LEVEL_NONE, &muxer) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        babeltrace_reason(why, why_size, "cannot create the muxer");
        goto end;
    }
    const bt_component_source **sources = calloc(dir_count, sizeof(*sources));
    if (!sources) {
        snprintf(why, why_size, "out of memory");
        goto end;
    }
    uint64_t ports = 0;
    for (size_t t = 0; t < dir_count; t++) {
        /* One source per logical trace: src.ctf.fs reads one trace (one UUID) per component. */
        char source_name[32];
        snprintf(source_name, sizeof(source_name), "source-%zu", t);
        bt_value *inputs = NULL;
        bt_value_put_ref(params);
        params = bt_value_map_create();
        if (!params ||
            bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) !=
                BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
            bt_value_array_append_string_element(inputs, dirs[t]) !=
                BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
            snprintf(why, why_size, "out of memory");
            goto end_sources;
        }
        if (bt_graph_add_source_component(
                graph, bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs"),
                source_name, params, BT_LOGGING_LEVEL_NONE,
                &sources[t]) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
            babeltrace_reason(why, why_size, "cannot open the CTF trace");
            goto end_sources;
        }
        ports += bt_component_source_get_output_port_count(sources[t]);
    }
    const bt_component_sink *sink = NULL;
    if (merge ? zm_merge_add(merge, graph, ports, &sink) != 0
              : bt_graph_add_simple_sink_component(graph, "zeprof", NULL, consume, NULL, reader,
                                                   &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        babeltrace_reason(why, why_size, "cannot create the sink");
        goto end_sources;
    }
    uint64_t port = 0;
    for (size_t t = 0; t < dir_count; t++) {
        uint64_t count = bt_component_source_get_output_port_count(sources[t]);
        for (uint64_t i = 0; i < count; i++, port++) {
            /* The muxer adds a fresh input port each time one is connected; the merge has one
             * per source port already. */
            const bt_port_input *input =
                merge ? bt_component_sink_borrow_input_port_by_index_const(sink, port)
                      : bt_component_filter_borrow_input_port_by_index_const(muxer, port);
            if (bt_graph_connect_ports(
                    graph, bt_component_source_borrow_output_port_by_index_const(sources[t], i),
                    input, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
                babeltrace_reason(why, why_size, "cannot connect the graph");
                goto end_sources;
            }
        }
    }
    if (!merge && bt_graph_connect_ports(
                      graph, bt_component_filter_borrow_output_port_by_index_const(muxer, 0),
                      bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                      NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        babeltrace_reason(why, why_size, "cannot connect the graph");
        goto end_sources;
    }
    if (verbose)
        fprintf(zm_supervise_log(), "zeprof-merge: reading %s (%llu streams%s)\n", reader->path,
                (unsigned long long)ports, merge ? "" : ", through the muxer");
    while ((*run = bt_graph_run(graph)) == BT_GRAPH_RUN_STATUS_AGAIN) {
        /* A component waits for something: let it, without burning a core. Progress is the
         * consume callback's to report, so a source that says AGAIN forever is a stall. */
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    status = 0;
end_sources:
    free(sources);
end:
    bt_value_put_ref(params);
    bt_graph_put_ref(graph);
    return status;
}

int zm_reader_read(const char *path, struct zm_model *model, FILE *dump,
                   const struct zm_reader_tap *tap, bool verbose, char *reason, int reason_size)
{
    char why[400] = "";
    int status = -1;
    struct reader reader = {.model = model, .dump = dump, .path = path, .tap = tap};
    zm_decode_init(&reader.decoder, model);
    struct zm_merge *merge = NULL;
    const bt_plugin *ctf = NULL, *utils = NULL;
    char **dirs = NULL;
    size_t dir_count = 0;
    uint64_t events_before = zm_model_zeprof_events(model);
    uint64_t unknown_before = zm_model_anomalies(model)->unknown_events;

    dirs = zm_reader_trace_dirs(path, why, sizeof(why));
    if (!dirs)
        goto end;
    while (dirs[dir_count])
        dir_count++;
    /* What libbabeltrace2 would abort or loop on, refused first (the supervisor contains the
     * rest). */
    /* ZEPROF_MERGE_SKIP_VALIDATION=1 leaves all to the supervisor (to test it alone). */
    const char *skip = getenv("ZEPROF_MERGE_SKIP_VALIDATION");
    for (size_t t = 0; t < dir_count && !(skip && strcmp(skip, "1") == 0); t++) {
        zm_supervise_progress();
        if (zm_validate_trace(dirs[t], NULL, why, sizeof(why)) != 0)
            goto end;
    }
    if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) !=
            BT_PLUGIN_FIND_STATUS_OK ||
        bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &utils) !=
            BT_PLUGIN_FIND_STATUS_OK) {
        snprintf(why, sizeof(why), "babeltrace2 plugins ctf and utils not found");
        goto end;
    }
    /* Our own merge of the streams unless they are unusual (stream_merge.h), or asked not to
     * (ZEPROF_MERGE_MUXER=1: the muxer, as before, to compare). */
    const char *use_muxer = getenv("ZEPROF_MERGE_MUXER");
    bt_graph_run_status run = BT_GRAPH_RUN_STATUS_OK;
    if (tap || !(use_muxer && strcmp(use_muxer, "1") == 0)) {
        merge = zm_merge_new(deliver_merged, &reader);
        if (!merge) {
            snprintf(why, sizeof(why), "out of memory");
            goto end;
        }
        if (run_graph(&reader, dirs, dir_count, ctf, utils, merge, verbose, why, sizeof(why),
                      &run) != 0)
            goto end;
        if (run != BT_GRAPH_RUN_STATUS_OK && zm_merge_unusual(merge) && tap) {
            snprintf(why, sizeof(why), "unusual streams: the muxer orders them");
            goto end;
        }
        if (run != BT_GRAPH_RUN_STATUS_OK && zm_merge_unusual(merge)) {
            bt_current_thread_clear_error(); /* nothing was read: the muxer reads it all */
            zm_merge_free(merge);
            merge = NULL;
        }
    }
    if (!merge &&
        run_graph(&reader, dirs, dir_count, ctf, utils, NULL, verbose, why, sizeof(why), &run) != 0)
        goto end;
    if (reader.failed) {
        bt_current_thread_clear_error();
        snprintf(why, sizeof(why), "%s",
                 reader.why[0]              ? reader.why
                 : zm_model_error(model)[0] ? zm_model_error(model)
                                            : "out of memory or temporary file error");
        goto end;
    }
    if (run != BT_GRAPH_RUN_STATUS_OK && merge && zm_merge_error(merge)[0]) {
        bt_current_thread_clear_error();
        snprintf(why, sizeof(why), "cannot decode the trace (truncated or corrupt?) (%s)",
                 zm_merge_error(merge));
        goto end;
    }
    if (run != BT_GRAPH_RUN_STATUS_OK) {
        babeltrace_reason(why, sizeof(why), "cannot decode the trace (truncated or corrupt?)");
        goto end;
    }
    if (tap) {
        status = 0; /* the tap's reader has the events and says what they lack */
        goto end;
    }
    if (zm_model_zeprof_events(model) == events_before) {
        if (zm_model_anomalies(model)->unknown_events > unknown_before)
            snprintf(why, sizeof(why), "no zeprof events (a trace from another tracer?)");
        else
            snprintf(why, sizeof(why), "no zeprof events (empty trace)");
        goto end;
    }
    if (zm_model_end_host(model) != 0) {
        snprintf(why, sizeof(why), "out of memory or temporary file error");
        goto end;
    }
    status = 0;
end:
    if (status != 0) {
        char shown[1024];
        zm_supervise_escape_line(shown, sizeof(shown), path);
        snprintf(reason, (size_t)reason_size, "Failed to read trace: path=%s, reason=%s", shown,
                 why);
    }
    zm_reader_free_trace_dirs(dirs);
    zm_merge_free(merge);
    bt_plugin_put_ref(ctf);
    bt_plugin_put_ref(utils);
    /* Tearing a failed graph down may report more causes: never leave an error behind. */
    bt_current_thread_clear_error();
    zm_decode_release(&reader.decoder);
    return status;
}
