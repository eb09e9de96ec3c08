/*
 * libzeprof_daemon_poll.so: preloaded into the LTTng session daemons that zeprof starts (and so
 * into the consumer daemons they start, which inherit the environment); never into a program.
 *
 * Why: lttng-tools 2.13 waits for conditions by polling with usleep() every 100 or 200 ms, and a
 * zeprof run hits two of those polls every time: the consumer daemon, handed a run's metadata
 * (at the program's exit, or at stop), checks once whether its metadata thread has written it
 * and, as that thread has not had time to run yet, sleeps 200 ms before checking again
 * (DEFAULT_METADATA_AVAILABILITY_WAIT_TIME); meanwhile it answers no command, so stopping the
 * session waits too. A starting consumer daemon likewise polls every 100 ms for its health
 * thread. In lttng-tools 2.13.9 every usleep() of lttng-sessiond and lttng-consumerd is such a
 * loop (it re-checks its condition after each sleep), so shortening a long sleep changes when
 * the condition is seen, never what happens: this usleep() sleeps at most POLL_US.
 *
 * Nothing else is replaced. Debian 12's daemons call usleep() from glibc, which this library's
 * definition precedes when preloaded.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <time.h>
#include <unistd.h>

/* Long enough not to spin, short against the 100 and 200 ms polls it replaces. */
#define POLL_US 1000u

__attribute__((visibility("default"))) int usleep(useconds_t microseconds)
{
    struct timespec pause;

    if (microseconds > POLL_US)
        microseconds = POLL_US;
    pause.tv_sec = 0;
    pause.tv_nsec = (long) microseconds * 1000L;
    while (nanosleep(&pause, &pause) != 0) {
        if (errno != EINTR)
            return -1;
    }
    return 0;
}
