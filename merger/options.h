/*
 * options: zeprof-merge's command line (docs/interface.md, "Analysis options"). Parsing never
 * exits; the caller decides what to print. The parsed options borrow their strings from argv.
 */
#ifndef ZM_OPTIONS_H
#define ZM_OPTIONS_H

#include "must_check.h"

#include <stdbool.h>
#include <stdint.h>

/* --timeline-format: how -l FILE is written. */
enum zm_options_timeline_format {
    ZM_OPTIONS_TIMELINE_BY_NAME, /* not given: Perfetto for a FILE ending in .pftrace, else JSON */
    ZM_OPTIONS_TIMELINE_JSON,
    ZM_OPTIONS_TIMELINE_PERFETTO,
};

struct zm_options {
    bool extended;            /* -e: rows split by host, process, thread and device */
    bool kernel_verbose;      /* -k: kernel rows split by launch shape */
    bool json;                /* -j: the tally as JSON */
    bool dump;                /* -t: every event as one text line instead of the tally */
    bool verbose;             /* -v */
    bool help;                /* -h */
    bool version;             /* --version */
    const char *timeline;     /* -l FILE, or NULL (Weak: argv) */
    enum zm_options_timeline_format timeline_format; /* --timeline-format json|perfetto */
    bool mangled;             /* --mangled: kernel names as recorded, not demangled */
    uint64_t max_name_size;   /* --max-name-size N: text tally names cut to N; 0: never */
    uint64_t max_rate_ppm;    /* --max-rate-ppm N, default 100 */
    bool reduce;              /* --reduce: write a partial (-o) instead of the tally */
    const char *output;       /* -o FILE: the partial (Weak: argv) */
    bool no_spans;            /* --no-spans: the partial holds no spans (no timeline of it) */
    uint64_t jobs;            /* -J N: inputs reduced at once; 0: one per online core */
    const char *const *paths; /* TRACE_DIR... (Weak: argv) */
    /* The inputs as given, when -J's workers replaced `paths` by their partials (parallel.h):
     * what messages name. NULL: `paths`. (Weak) */
    const char *const *named;
    int path_count;
};

enum zm_options_status { ZM_OPTIONS_OK, ZM_OPTIONS_ERROR };

/* Fills `options`; on error writes a one-line reason (without newline) into `reason`. */
ZM_MUST_CHECK enum zm_options_status zm_options_parse(struct zm_options *options, int argc,
                                                      char **argv, char *reason, int reason_size);
/* The --help text. */
const char *zm_options_usage(void);

#endif
