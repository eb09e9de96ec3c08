/*
 * zeprof-start: create a zeprof recording session and start it, in one process.
 *
 *   zeprof-start [--wait-ms MS] --output DIR --subbuf-size BYTES --num-subbuf N
 *                --metadata-subbuf-size BYTES [--blocking] [--context NAME[,NAME...]]
 *                SESSION CHANNEL EVENT_PATTERN
 *
 * The session records the user-space events matching EVENT_PATTERN of the applications of the
 * daemon into DIR, in one per-UID channel
 * CHANNEL of N sub-buffers of BYTES (discarding when full, or with --blocking making the
 * application wait for space as long as it takes), with the contexts given (vpid, vtid,
 * procname). The metadata channel gets 2 sub-buffers of --metadata-subbuf-size bytes, which
 * only the control library can set (an LTTng session file cannot): with sub-buffers as large as
 * a run's metadata, the consumer daemon writes it in one go.
 *
 * One process instead of one `lttng` client per step: each client costs a start-up, and a run
 * pays for them before its program starts. With --wait-ms it first waits for a session daemon
 * that is starting (asking every POLL_NS), so a cold run sets up its session as soon as the
 * daemon answers.
 *
 * No exclusions: lttng-sessiond 2.13.9 crashes when a client lists a session whose event rule
 * has exclusions.
 *
 * It talks to the session daemon that the lttng client would (LTTNG_HOME; root: /var/run/lttng
 * of its mount namespace) through liblttng-ctl (lttng-tools' control library).
 *
 * Exit status: 0 once the session records; 1 with one line on stderr ("zeprof-start: Cannot
 * ...: session=..., reason=...") otherwise, and then no session of that name is left behind;
 * 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <lttng/lttng.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Between two attempts to reach a daemon that is starting. */
#define POLL_NS 2000000L
#define METADATA_NUM_SUBBUF 2

struct start_options {
    const char *session, *channel, *events, *output;
    long wait_ms;
    unsigned long long subbuf_size, metadata_subbuf_size;
    unsigned long long num_subbuf;
    bool blocking;
    enum lttng_event_context_type contexts[3];
    int context_count;
};

static void say_failure(const char *what, const char *session, const char *reason)
{
    fprintf(stderr, "zeprof-start: Cannot %s: session=%s, reason=%s\n", what, session, reason);
}

static int usage(void)
{
    fprintf(stderr, "usage: zeprof-start [--wait-ms MS] --output DIR --subbuf-size BYTES "
                    "--num-subbuf N --metadata-subbuf-size BYTES [--blocking] "
                    "[--context NAME,...] SESSION CHANNEL EVENT_PATTERN\n");
    return 2;
}

static bool parse_number(const char *text, unsigned long long *value)
{
    char *end;

    if (text[0] < '0' || text[0] > '9')
        return false;
    *value = strtoull(text, &end, 10);
    return *end == '\0';
}

/* Splits a comma-separated list in place; false when it has too many items. */
static bool split_list(char *text, char **items, int *count, int capacity)
{
    for (char *item = strtok(text, ","); item != NULL; item = strtok(NULL, ",")) {
        if (*count == capacity)
            return false;
        items[(*count)++] = item;
    }
    return true;
}

static bool parse_contexts(char *text, struct start_options *options)
{
    char *names[3];
    int count = 0;

    if (!split_list(text, names, &count, 3))
        return false;
    for (int i = 0; i < count; i++) {
        if (strcmp(names[i], "vpid") == 0)
            options->contexts[i] = LTTNG_EVENT_CONTEXT_VPID;
        else if (strcmp(names[i], "vtid") == 0)
            options->contexts[i] = LTTNG_EVENT_CONTEXT_VTID;
        else if (strcmp(names[i], "procname") == 0)
            options->contexts[i] = LTTNG_EVENT_CONTEXT_PROCNAME;
        else
            return false;
    }
    options->context_count = count;
    return true;
}

static bool parse_options(int argc, char **argv, struct start_options *options)
{
    static const struct option long_options[] = {
        {"wait-ms", required_argument, NULL, 'w'},
        {"output", required_argument, NULL, 'o'},
        {"subbuf-size", required_argument, NULL, 's'},
        {"num-subbuf", required_argument, NULL, 'n'},
        {"metadata-subbuf-size", required_argument, NULL, 'm'},
        {"blocking", no_argument, NULL, 'b'},
        {"context", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    unsigned long long wait_ms = 0;
    int option;

    while ((option = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        switch (option) {
        case 'w':
            if (!parse_number(optarg, &wait_ms) || wait_ms > 3600000)
                return false;
            break;
        case 'o':
            options->output = optarg;
            break;
        case 's':
            if (!parse_number(optarg, &options->subbuf_size))
                return false;
            break;
        case 'n':
            if (!parse_number(optarg, &options->num_subbuf))
                return false;
            break;
        case 'm':
            if (!parse_number(optarg, &options->metadata_subbuf_size))
                return false;
            break;
        case 'b':
            options->blocking = true;
            break;
        case 'c':
            if (!parse_contexts(optarg, options))
                return false;
            break;
        default:
            return false;
        }
    }
    if (argc - optind != 3 || options->output == NULL || options->subbuf_size == 0 ||
        options->num_subbuf == 0 || options->metadata_subbuf_size == 0)
        return false;
    options->wait_ms = (long) wait_ms;
    options->session = argv[optind];
    options->channel = argv[optind + 1];
    options->events = argv[optind + 2];
    return true;
}

static long elapsed_ms(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000L + (now.tv_nsec - start->tv_nsec) / 1000000L;
}

/* Creates the session, waiting up to wait_ms for a daemon that does not answer yet. */
static int create_session(const struct start_options *options)
{
    struct timespec pause = {0, POLL_NS}, start;
    struct lttng_session_descriptor *descriptor;
    enum lttng_error_code result;

    descriptor = lttng_session_descriptor_local_create(options->session, options->output);
    if (descriptor == NULL) {
        say_failure("describe the session", options->session, "out of memory");
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        result = lttng_create_session_ext(descriptor);
        if (result != LTTNG_ERR_NO_SESSIOND || elapsed_ms(&start) >= options->wait_ms)
            break;
        nanosleep(&pause, NULL);
    }
    lttng_session_descriptor_destroy(descriptor);
    if (result != LTTNG_OK) {
        say_failure("create the session", options->session, lttng_strerror(-(int) result));
        return -1;
    }
    return 0;
}

static int enable_channel(struct lttng_handle *handle, struct lttng_domain *domain,
                          const char *name, unsigned long long subbuf_size,
                          unsigned long long num_subbuf, bool blocking)
{
    struct lttng_channel *channel = lttng_channel_create(domain);
    int result;

    if (channel == NULL)
        return -LTTNG_ERR_NOMEM;
    snprintf(channel->name, sizeof(channel->name), "%s", name);
    channel->attr.overwrite = 0;
    channel->attr.subbuf_size = subbuf_size;
    channel->attr.num_subbuf = num_subbuf;
    channel->attr.switch_timer_interval = 0;
    channel->attr.read_timer_interval = 0;
    channel->attr.output = LTTNG_EVENT_MMAP;
    /* -1: the application waits for space as long as it takes; 0: it never waits. */
    result = lttng_channel_set_blocking_timeout(channel, blocking ? -1 : 0);
    if (result == 0)
        result = lttng_enable_channel(handle, channel);
    lttng_channel_destroy(channel);
    return result;
}

static int configure_session(const struct start_options *options)
{
    struct lttng_domain domain = {.type = LTTNG_DOMAIN_UST, .buf_type = LTTNG_BUFFER_PER_UID};
    struct lttng_handle *handle = lttng_create_handle(options->session, &domain);
    struct lttng_event *event = NULL;
    const char *step = "create a handle";
    int result = -LTTNG_ERR_NOMEM;

    if (handle == NULL)
        goto end;
    step = "configure the metadata channel";
    result = enable_channel(handle, &domain, "metadata", options->metadata_subbuf_size,
                            METADATA_NUM_SUBBUF, false);
    if (result < 0)
        goto end;
    step = "create the channel";
    result = enable_channel(handle, &domain, options->channel, options->subbuf_size,
                            options->num_subbuf, options->blocking);
    if (result < 0)
        goto end;
    step = "enable the events";
    event = lttng_event_create();
    result = -LTTNG_ERR_NOMEM;
    if (event == NULL)
        goto end;
    snprintf(event->name, sizeof(event->name), "%s", options->events);
    event->type = LTTNG_EVENT_TRACEPOINT;
    event->loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
    result = lttng_enable_event_with_exclusions(handle, event, options->channel, NULL, 0, NULL);
    if (result < 0)
        goto end;
    step = "add a context";
    for (int i = 0; i < options->context_count; i++) {
        struct lttng_event_context context = {.ctx = options->contexts[i]};

        result = lttng_add_context(handle, &context, NULL, options->channel);
        if (result < 0)
            goto end;
    }
    step = "start the session";
    result = lttng_start_tracing(options->session);
end:
    if (result < 0)
        say_failure(step, options->session, lttng_strerror(result));
    lttng_event_destroy(event);
    lttng_destroy_handle(handle);
    return result < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    struct start_options options = {0};

    if (!parse_options(argc, argv, &options))
        return usage();
    if (create_session(&options) < 0)
        return 1;
    if (configure_session(&options) < 0) {
        /* Nothing half-made is left: the caller may retry under the same name. */
        lttng_destroy_session_no_wait(options.session);
        return 1;
    }
    return 0;
}
