/* options: zeprof-merge's command line (options.h). */
#include "options.h"

#include "supervise.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_MAX_RATE_PPM = 256,
    OPT_MANGLED,
    OPT_MAX_NAME_SIZE,
    OPT_VERSION,
    OPT_TIMELINE_FORMAT,
    OPT_REDUCE,
    OPT_NO_SPANS
};

const char *zm_options_usage(void)
{
    return "usage: zeprof-merge [OPTIONS] TRACE_DIR|PARTIAL...\n"
           "       zeprof-merge --reduce TRACE_DIR|PARTIAL... -o PARTIAL\n"
           "Analyse zeprof traces (one directory per host), or partials made of them.\n"
           "\n"
           "  -e, --extended        split rows by host, process, thread and device\n"
           "  -j, --json            print the tally as JSON\n"
           "  -k, --kernel-verbose  kernel rows split by group count, group size and SIMD width\n"
           "  -l, --timeline FILE   write the timeline to FILE: Perfetto's protobuf trace when\n"
           "                        FILE ends in .pftrace, else Chrome Trace Event JSON\n"
           "      --timeline-format json|perfetto\n"
           "                        the timeline's format, whatever FILE's name\n"
           "  -t, --trace           print every event as one text line, time-ordered per host\n"
           "      --mangled         keep kernel names as recorded (default: demangled)\n"
           "      --max-name-size N shorten longer names in the text tally to N characters\n"
           "      --max-rate-ppm N  bound on the relative rate of two clocks (default 100)\n"
           "      --reduce          write what the analysis needs of the inputs to a partial\n"
           "                        file (-o) instead of the tally\n"
           "  -o, --output PARTIAL  the partial file --reduce writes\n"
           "      --no-spans        --reduce keeps no spans: a smaller partial, no timeline\n"
           "  -J, --jobs N          N worker processes (default: one per core): several\n"
           "                        inputs are reduced N at a time; one large trace is\n"
           "                        decoded in N runs of its packets at once\n"
           "  -v, --verbose         explain what is being done on stderr\n"
           "  -h, --help            show this help\n"
           "      --version         show the version\n";
}

/* A whole decimal number in [min, max] (no sign, no spaces) into `value`: 0; else -1 with the
 * one-line reason (the value escaped: it may hold a newline). */
static int parse_number(const char *option, const char *text, uint64_t min, uint64_t max,
                        uint64_t *value, char *reason, int reason_size)
{
    char *end;
    errno = 0;
    unsigned long long parsed = strtoull(text, &end, 10);
    if (errno || *end || end == text || text[0] < '0' || text[0] > '9' || parsed < min ||
        parsed > max) {
        char escaped[256];
        zm_supervise_escape_line(escaped, sizeof(escaped), text);
        snprintf(reason, (size_t)reason_size, "Failed to parse options: option=%s, value=%s",
                 option, escaped);
        return -1;
    }
    *value = parsed;
    return 0;
}

enum zm_options_status zm_options_parse(struct zm_options *options, int argc, char **argv,
                                        char *reason, int reason_size)
{
    static const struct option long_options[] = {
        {"extended", no_argument, NULL, 'e'},
        {"json", no_argument, NULL, 'j'},
        {"kernel-verbose", no_argument, NULL, 'k'},
        {"timeline", required_argument, NULL, 'l'},
        {"timeline-format", required_argument, NULL, OPT_TIMELINE_FORMAT},
        {"trace", no_argument, NULL, 't'},
        {"mangled", no_argument, NULL, OPT_MANGLED},
        {"max-name-size", required_argument, NULL, OPT_MAX_NAME_SIZE},
        {"max-rate-ppm", required_argument, NULL, OPT_MAX_RATE_PPM},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"reduce", no_argument, NULL, OPT_REDUCE},
        {"no-spans", no_argument, NULL, OPT_NO_SPANS},
        {"output", required_argument, NULL, 'o'},
        {"jobs", required_argument, NULL, 'J'},
        {NULL, 0, NULL, 0},
    };
    *options = (struct zm_options){.max_rate_ppm = 100};
    /* getopt keeps global state; reset it so that parsing twice (tests) works. Options may
     * follow the paths (`--reduce DIR -o FILE`): getopt moves the paths to the end. */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ejkl:tvho:J:", long_options, NULL)) != -1) {
        switch (c) {
        case 'e':
            options->extended = true;
            break;
        case 'j':
            options->json = true;
            break;
        case 'k':
            options->kernel_verbose = true;
            break;
        case 'l':
            options->timeline = optarg;
            break;
        case 't':
            options->dump = true;
            break;
        case 'v':
            options->verbose = true;
            break;
        case 'h':
            options->help = true;
            break;
        case OPT_VERSION:
            options->version = true;
            break;
        case OPT_REDUCE:
            options->reduce = true;
            break;
        case OPT_NO_SPANS:
            options->no_spans = true;
            break;
        case 'o':
            options->output = optarg;
            break;
        case 'J':
            if (parse_number("-J", optarg, 1, 1024, &options->jobs, reason, reason_size) != 0)
                return ZM_OPTIONS_ERROR;
            break;
        case OPT_MANGLED:
            options->mangled = true;
            break;
        case OPT_TIMELINE_FORMAT:
            if (strcmp(optarg, "json") == 0) {
                options->timeline_format = ZM_OPTIONS_TIMELINE_JSON;
            } else if (strcmp(optarg, "perfetto") == 0) {
                options->timeline_format = ZM_OPTIONS_TIMELINE_PERFETTO;
            } else {
                char escaped[256];
                zm_supervise_escape_line(escaped, sizeof(escaped), optarg);
                snprintf(reason, (size_t)reason_size,
                         "Failed to parse options: option=--timeline-format, value=%s "
                         "(json or perfetto)",
                         escaped);
                return ZM_OPTIONS_ERROR;
            }
            break;
        case OPT_MAX_NAME_SIZE:
            if (parse_number("--max-name-size", optarg, 1, 1000000, &options->max_name_size, reason,
                             reason_size) != 0)
                return ZM_OPTIONS_ERROR;
            break;
        case OPT_MAX_RATE_PPM:
            if (parse_number("--max-rate-ppm", optarg, 0, 1000000, &options->max_rate_ppm, reason,
                             reason_size) != 0)
                return ZM_OPTIONS_ERROR;
            break;
        default:
            snprintf(reason, (size_t)reason_size, "Failed to parse options: option=%s",
                     optind > 0 && optind <= argc ? argv[optind - 1] : "?");
            return ZM_OPTIONS_ERROR;
        }
    }
    options->paths = (const char *const *)&argv[optind];
    options->path_count = argc - optind;
    if (options->timeline_format != ZM_OPTIONS_TIMELINE_BY_NAME && !options->timeline) {
        snprintf(reason, (size_t)reason_size,
                 "Failed to parse options: option=--timeline-format, reason=no -l FILE given");
        return ZM_OPTIONS_ERROR;
    }
    if (!options->help && !options->version && options->path_count == 0) {
        snprintf(reason, (size_t)reason_size, "Failed to parse options: reason=no TRACE_DIR given");
        return ZM_OPTIONS_ERROR;
    }
    const char *conflict = NULL;
    if (options->reduce && !options->output)
        conflict = "--reduce needs -o PARTIAL";
    else if (options->output && !options->reduce)
        conflict = "-o is the partial of --reduce";
    else if (options->no_spans && !options->reduce)
        conflict = "--no-spans is an option of --reduce";
    else if (options->reduce && (options->dump || options->timeline))
        conflict = "--reduce writes a partial, not a timeline (-l) nor events (-t)";
    if (conflict && !options->help && !options->version) {
        snprintf(reason, (size_t)reason_size, "Failed to parse options: reason=%s", conflict);
        return ZM_OPTIONS_ERROR;
    }
    return ZM_OPTIONS_OK;
}
