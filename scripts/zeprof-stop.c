/*
 * zeprof-stop: stop an LTTng recording session and return as soon as its data is all written.
 *
 *   zeprof-stop SESSION
 *
 * `lttng stop` does the same but sleeps 200 ms between its checks for data still in flight
 * (lttng-tools' DEFAULT_DATA_AVAILABILITY_WAIT_TIME), so it nearly always costs a run 0.2 s; a
 * zeprof run's fixed cost is meant to be far below that. This asks every POLL_NS instead.
 *
 * It talks to the session daemon that the lttng client would (LTTNG_HOME; root: /var/run/lttng
 * of its mount namespace) through liblttng-ctl (lttng-tools' control library).
 *
 * Only the call sequence of `lttng stop` is used (stop without waiting, then ask whether data is
 * pending): asking a session that is still recording makes lttng-sessiond 2.13.9 abort.
 *
 * Exit status: 0 once the session is stopped and its trace complete; 1 with one line on stderr
 * ("zeprof-stop: Cannot ...: reason=...") otherwise; 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <lttng/lttng.h>
#include <stdio.h>
#include <time.h>

/* Between two questions about pending data: short, as the data is usually written within a few
 * milliseconds of the stop, and cheap (one round trip to the session daemon). */
#define POLL_NS 2000000L
/* A consumer that has not written the data after this long is not going to. */
#define GIVE_UP_S 120

static void say_failure(const char *what, const char *session, const char *reason)
{
    fprintf(stderr, "zeprof-stop: Cannot %s: session=%s, reason=%s\n", what, session, reason);
}

int main(int argc, char **argv)
{
    int status = 1;
    struct timespec pause = {0, POLL_NS}, start, now;
    const char *session;
    int result;

    if (argc != 2) {
        fprintf(stderr, "usage: zeprof-stop SESSION\n");
        return 2;
    }
    session = argv[1];
    result = lttng_stop_tracing_no_wait(session);
    if (result < 0) {
        say_failure("stop the session", session, lttng_strerror(result));
        goto end;
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        result = lttng_data_pending(session);
        if (result == 0)
            break;
        if (result < 0) {
            say_failure("tell whether the trace is complete", session, lttng_strerror(result));
            goto end;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > GIVE_UP_S) {
            say_failure("wait for the trace", session, "data still pending after 120 s");
            goto end;
        }
        nanosleep(&pause, NULL);
    }
    status = 0;
end:
    return status;
}
