/*
 * zeprof-merge: reads zeprof traces (one directory per host) and prints the tally, writes the
 * timeline, or dumps the events. Wires the modules together (the model's span sink to the
 * statistics and the timeline, the model's frames to placement); see docs/merger.md.
 * merge() owns the statistics, the model, the timeline and the placement of the run.
 * With --reduce the model's spans go to a partial file instead (partial_write.h); partials given
 * as inputs are replayed into the same model and consumers (partial_read.h); with several trace
 * directories and -J above 1 they are first reduced in parallel (parallel.h).
 * Exit status: 0, or 2 with one "Failed to …" line on stderr. The work runs in a supervised
 * child (supervise.h): a crash or a stall of libbabeltrace2 is that one line too.
 */
#include "demangle.h"
#include "dump.h"
#include "kernels.h"
#include "model.h"
#include "options.h"
#include "parallel.h"
#include "partial_read.h"
#include "partial_write.h"
#include "placement.h"
#include "reader.h"
#include "split.h"
#include "stats.h"
#include "supervise.h"
#include "tally.h"
#include "telemetry.h"
#include "timeline.h"
#include "traffic.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef ZEPROF_VERSION
#define ZEPROF_VERSION "unknown"
#endif

/* Where the model's spans go: every span to the statistics (the tally), copies and fills to the
 * memory traffic too, and to the timeline when one is written. Kernel names are demangled here,
 * once for both, so that they agree. A partial's totals go to the statistics, the traffic and the
 * kernel detail, and its spans (already counted there) to the timeline only. */
struct span_consumers {
    struct zm_stats *stats;         /* Weak */
    struct zm_traffic *traffic;     /* Weak */
    struct zm_kernels *kernels;     /* Weak, NULL without -k */
    struct zm_timeline *timeline;   /* Weak, may be NULL */
    struct zm_demangle *demangle;   /* Weak, NULL with --mangled */
    struct zm_telemetry *telemetry; /* Weak */
};

static int begin_host(void *context, uint32_t host, const char *hostname)
{
    struct span_consumers *consumers = context;
    return consumers->timeline ? zm_timeline_begin_host(consumers->timeline, host, hostname) : 0;
}

static int api_span(void *context, const struct zm_api_span *span)
{
    struct span_consumers *consumers = context;
    if (!span->totalled && zm_stats_add_api(consumers->stats, span) != 0)
        return -1;
    return consumers->timeline ? zm_timeline_api_span(consumers->timeline, span) : 0;
}

static int device_span(void *context, const struct zm_device_span *span)
{
    struct span_consumers *consumers = context;
    struct zm_device_span shown = *span;
    if (consumers->demangle && !(shown.name = zm_demangle_name(consumers->demangle, span->name)))
        return -1;
    if (!span->totalled) {
        if (zm_stats_add_device(consumers->stats, &shown) != 0)
            return -1;
        zm_traffic_add(consumers->traffic, &shown);
        if (consumers->kernels && zm_kernels_add(consumers->kernels, &shown) != 0)
            return -1;
    }
    return consumers->timeline ? zm_timeline_device_span(consumers->timeline, &shown) : 0;
}

static int api_totals(void *context, const struct zm_api_totals *totals)
{
    struct span_consumers *consumers = context;
    return zm_stats_add_api_totals(consumers->stats, totals);
}

static int device_totals(void *context, const struct zm_device_totals *totals)
{
    struct span_consumers *consumers = context;
    struct zm_device_totals shown = *totals;
    if (consumers->demangle && !(shown.name = zm_demangle_name(consumers->demangle, totals->name)))
        return -1;
    if (zm_stats_add_device_totals(consumers->stats, &shown) != 0)
        return -1;
    zm_traffic_add_totals(consumers->traffic, &shown);
    return consumers->kernels ? zm_kernels_add_totals(consumers->kernels, &shown) : 0;
}

static int counter(void *context, const struct zm_counter_sample *sample)
{
    struct span_consumers *consumers = context;
    if (!sample->totalled && zm_telemetry_add(consumers->telemetry, sample) != 0)
        return -1;
    return consumers->timeline ? zm_timeline_counter(consumers->timeline, sample) : 0;
}

static int telemetry_totals(void *context, const struct zm_telemetry_row *row)
{
    struct span_consumers *consumers = context;
    return zm_telemetry_add_row(consumers->telemetry, row);
}

static int end_host(void *context)
{
    struct span_consumers *consumers = context;
    return consumers->timeline ? zm_timeline_end_host(consumers->timeline) : 0;
}

/* metadata.devices: each device's anchors and their uncertainty. New reference. */
static json_t *devices_json(const struct zm_model *model)
{
    json_t *devices = json_array();
    for (size_t i = 0; devices && i < zm_model_device_count(model); i++) {
        const struct zm_device *device = zm_model_device(model, i);
        json_t *uncertainties = json_array();
        for (size_t j = 0; j < device->clock.count; j++)
            json_array_append_new(uncertainties,
                                  json_integer(device->clock.anchors[j].uncertainty_ns));
        json_array_append_new(
            devices,
            json_pack("{s:o, s:I, s:o, s:I, s:I, s:o}", "hostname",
                      zm_utf8_json_string(zm_model_host(model, device->host)->hostname), "pid",
                      (json_int_t)device->pid, "device", zm_utf8_json_string(device->name),
                      "timer_hz", (json_int_t)device->clock.timer_hz, "anchors",
                      (json_int_t)device->clock.count, "anchor_uncertainty_ns", uncertainties));
    }
    return devices;
}

static int write_timeline(struct zm_timeline *timeline, const struct zm_model *model,
                          struct zm_placement *placement, char *reason, int reason_size)
{
    int status = -1;
    json_t *metadata = json_pack("{s:o, s:o, s:o, s:o}", "hosts", zm_placement_to_json(placement),
                                 "remote_windows", zm_placement_windows_json(placement), "devices",
                                 devices_json(model), "anomalies",
                                 zm_tally_anomalies_json(zm_model_anomalies(model)));
    if (!metadata) {
        snprintf(reason, (size_t)reason_size, "Failed to write timeline: reason=out of memory");
        zm_timeline_abort(timeline);
        return -1;
    }
    struct zm_timeline_placement axis = {zm_placement_axis, zm_placement_bound, zm_placement_placed,
                                         placement};
    status = zm_timeline_finish(timeline, &axis, metadata, reason, reason_size);
    json_decref(metadata);
    return status;
}

/* Places every host on one axis from the frames read; the anomalies it finds join the model's. */
static int place_hosts(struct zm_model *model, uint64_t max_rate_ppm,
                       struct zm_placement *placement, char *reason, int reason_size)
{
    int status = -1;
    uint32_t host_count = zm_model_host_count(model);
    const char **hostnames = calloc(host_count + 1, sizeof(*hostnames));
    if (!hostnames) {
        snprintf(reason, (size_t)reason_size, "Failed to place hosts: reason=out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < host_count; i++)
        hostnames[i] = zm_model_host(model, i)->hostname;
    if (zm_placement_compute(placement, hostnames, host_count, zm_model_frames(model), max_rate_ppm,
                             reason, reason_size) == 0) {
        zm_model_set_placement_anomalies(model, zm_placement_dropped(placement),
                                         zm_placement_incomplete(placement));
        status = 0;
    }
    free(hostnames);
    return status;
}

/* The whole merge, run in the supervised child (supervise.h). Returns 0, or 2 with `reason`
 * holding the one "Failed to …" line. */
static int merge(void *context, char *reason, int reason_size)
{
    const struct zm_options *options = context;
    char head[1536], escaped[1024];
    zm_reader_setup();
    int status = 2;
    struct zm_timeline *timeline = NULL;
    struct zm_stats stats;
    struct zm_traffic traffic;
    struct zm_kernels kernels;
    struct zm_demangle demangle;
    struct zm_telemetry telemetry;
    const char **hostnames = NULL;
    struct zm_model *model = NULL;
    struct zm_placement placement = {0};
    struct zm_partial_writer *partial = NULL;
    FILE *dump = NULL;
    zm_stats_init(&stats, options->extended);
    zm_traffic_init(&traffic);
    zm_kernels_init(&kernels);
    zm_demangle_init(&demangle);
    zm_telemetry_init(&telemetry);
    if (options->timeline) {
        static const enum zm_timeline_kind kinds[] = {
            [ZM_OPTIONS_TIMELINE_BY_NAME] = ZM_TIMELINE_BY_NAME,
            [ZM_OPTIONS_TIMELINE_JSON] = ZM_TIMELINE_JSON,
            [ZM_OPTIONS_TIMELINE_PERFETTO] = ZM_TIMELINE_PERFETTO,
        };
        timeline = zm_timeline_open(options->timeline, kinds[options->timeline_format], reason,
                                    reason_size);
        if (!timeline) {
            zm_stats_release(&stats);
            return 2;
        }
    }
    struct zm_kernels *detail = options->kernel_verbose ? &kernels : NULL;
    struct span_consumers consumers = {
        &stats, &traffic, detail, timeline, options->mangled ? NULL : &demangle, &telemetry};
    struct zm_span_sink sink = {.begin_host = begin_host,
                                .api_span = api_span,
                                .device_span = device_span,
                                .end_host = end_host,
                                .counter = counter,
                                .context = &consumers,
                                .api_totals = api_totals,
                                .device_totals = device_totals,
                                .telemetry_totals = telemetry_totals};
    /* Spans are read only when something draws or keeps them. */
    enum zm_partial_spans spans = timeline          ? ZM_PARTIAL_SPANS_REQUIRED
                                  : options->reduce ? ZM_PARTIAL_SPANS_IF_ANY
                                                    : ZM_PARTIAL_SPANS_SKIPPED;
    /* One raw trace (several are reduced by parallel.c's workers, one each): its packets are
     * decoded by the cores at once when it is large enough (split.h). */
    struct zm_split_options split = {
        .workers = options->path_count == 1 && !options->dump ? zm_parallel_jobs(options) : 1,
        .rate_ppm = options->max_rate_ppm,
        .spans = options->reduce && options->no_spans ? ZM_PARTIAL_SPANS_SKIPPED : spans,
        .verbose = options->verbose};
    if (options->reduce && options->path_count == 1 && !zm_partial_is_file(options->paths[0])) {
        zm_supervise_escape_line(escaped, sizeof(escaped), options->paths[0]);
        snprintf(head, sizeof(head), "Failed to read trace: path=%s", escaped);
        zm_supervise_context(head);
        zm_supervise_watch(1);
        int written =
            zm_split_reduce(options->paths[0], options->output, &split, reason, reason_size);
        zm_supervise_watch(0);
        if (written != 0) {
            status = written > 0 ? 0 : 2;
            goto end;
        }
    }
    if (options->reduce) {
        if (!(partial = zm_partial_writer_open(options->output, !options->no_spans, true, reason,
                                               reason_size)))
            goto error;
        sink = zm_partial_writer_sink(partial);
    }
    model = zm_model_new(&sink, options->max_rate_ppm);
    if (!model) {
        snprintf(reason, (size_t)reason_size,
                 "Failed to start: reason=cannot create a temporary file");
        goto error;
    }
    if (partial)
        zm_partial_writer_attach(partial, model);
    if (options->dump && !(dump = zm_dump_begin(stdout))) {
        snprintf(reason, (size_t)reason_size, "Failed to start: reason=out of memory");
        goto error;
    }
    zm_supervise_watch(1);
    for (int i = 0; i < options->path_count; i++) {
        const char *named = options->named ? options->named[i] : options->paths[i];
        zm_supervise_escape_line(escaped, sizeof(escaped), named);
        snprintf(head, sizeof(head), "Failed to read trace: path=%s", escaped);
        zm_supervise_context(head);
        if (zm_partial_is_file(options->paths[i])) {
            if (dump) {
                snprintf(reason, (size_t)reason_size,
                         "%s, reason=a partial holds no events: -t needs the trace directory",
                         head);
                goto error;
            }
            if (options->verbose)
                fprintf(zm_supervise_log(), "zeprof-merge: reading the partial %s\n",
                        options->paths[i]);
            if (zm_partial_read(options->paths[i], named, model, spans, reason, reason_size) != 0)
                goto error;
            continue;
        }
        int split_read = zm_split_read(options->paths[i], model, &split, reason, reason_size);
        if (split_read < 0)
            goto error;
        if (split_read == 0 && zm_reader_read(options->paths[i], model, dump, NULL,
                                              options->verbose, reason, reason_size) != 0)
            goto error;
    }
    zm_supervise_watch(0);
    if (partial) {
        zm_supervise_escape_line(escaped, sizeof(escaped), options->output);
        snprintf(head, sizeof(head), "Failed to write partial: path=%s", escaped);
        zm_supervise_context(head);
        struct zm_partial_writer *finishing = partial;
        partial = NULL;
        if (zm_partial_writer_finish(finishing, reason, reason_size) != 0)
            goto error;
        status = 0;
        goto end;
    }
    zm_supervise_context("Failed to place hosts");
    if (place_hosts(model, options->max_rate_ppm, &placement, reason, reason_size) != 0)
        goto error;
    if (timeline) {
        zm_supervise_escape_line(escaped, sizeof(escaped), options->timeline);
        snprintf(head, sizeof(head), "Failed to write timeline: path=%s", escaped);
        zm_supervise_context(head);
        struct zm_timeline *finishing = timeline;
        timeline = NULL;
        if (write_timeline(finishing, model, &placement, reason, reason_size) != 0)
            goto error;
    }
    zm_supervise_context("Failed to write tally: path=stdout");
    if (dump && zm_dump_end() != 0) {
        dump = NULL;
        snprintf(reason, (size_t)reason_size, "Failed to write events: path=stdout");
        goto error;
    }
    dump = NULL;
    zm_supervise_output_wait(1); /* stdout may be a pipe to a slow reader */
    if (!options->dump) {
        uint32_t host_count = zm_model_host_count(model);
        hostnames = calloc(host_count + 1, sizeof(*hostnames));
        for (uint32_t i = 0; hostnames && i < host_count; i++)
            hostnames[i] = zm_model_host(model, i)->hostname;
        json_t *sampled = hostnames ? zm_telemetry_json(&telemetry, hostnames) : NULL;
        int printed = !sampled        ? -1
                      : options->json ? zm_tally_print_json(stdout, model, &stats, &traffic, detail,
                                                            &placement, sampled)
                                      : zm_tally_print_text(stdout, model, &stats, &traffic, detail,
                                                            &placement, options->max_name_size);
        if (printed == 0 && !options->json)
            printed = zm_telemetry_print_text(stdout, &telemetry, hostnames, host_count);
        if (printed == 0 && !options->json)
            printed = zm_tally_print_anomalies_text(stdout, zm_model_anomalies(model));
        json_decref(sampled);
        if (printed != 0 || fflush(stdout) != 0) {
            snprintf(reason, (size_t)reason_size, "Failed to write tally: path=stdout");
            goto error;
        }
    }
    zm_supervise_output_wait(0);
    status = 0;
    goto end;
error:
    /* The whole lines decoded before the failure go out; if that fails too, the first failure
     * is still the one to report. */
    if (dump && zm_dump_end() != 0)
        dump = NULL;
    zm_timeline_abort(timeline);
    zm_partial_writer_abort(partial);
end:
    zm_placement_release(&placement);
    zm_model_free(model);
    zm_stats_release(&stats);
    zm_kernels_release(&kernels);
    zm_telemetry_release(&telemetry);
    free(hostnames);
    zm_demangle_release(&demangle); /* after the timeline and the tally: they borrow its names */
    return status;
}

int main(int argc, char **argv)
{
    char reason[1024];
    struct zm_options options;
    if (zm_options_parse(&options, argc, argv, reason, sizeof(reason)) != ZM_OPTIONS_OK) {
        fprintf(stderr, "%s\n", reason);
        return 2;
    }
    if (options.help) {
        fputs(zm_options_usage(), stdout);
        return 0;
    }
    if (options.version) {
        printf("zeprof-merge %s\n", ZEPROF_VERSION);
        return 0;
    }
    /* Several trace directories: reduced at once by -J workers, then merged as partials. */
    struct zm_parallel parallel;
    if (zm_parallel_reduce(&parallel, &options, merge, reason, sizeof(reason)) != 0) {
        fprintf(stderr, "%s\n", reason);
        return 2;
    }
    int status =
        zm_supervise(merge, &options,
                     options.dump ? "the events printed before this line are incomplete" : NULL);
    zm_parallel_release(&parallel);
    return status;
}
