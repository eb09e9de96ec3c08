/*
 * frames_app: marks remote dispatches with zeprof.h and nothing else. Built without any library
 * beyond libc, it must run untraced (the calls do nothing) and, under the shim, leave the
 * zeprof_frame events with its keys and statuses.
 *
 *   frames_app                 one dispatch and one serve of the key 1234567890123:7:42
 *   frames_app STEP...         each STEP is call:N (dispatch key 1:0:N, 20 ms long),
 *                              serve:N (serve key 1:0:N, at once) or twice:N (dispatch N twice)
 */
#include <zeprof.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static int step(const char *arg)
{
    const char *colon = strchr(arg, ':');
    if (!colon)
        return -1;
    zeprof_frame frame = {.session = 1, .worker = 0, .sequence = strtoull(colon + 1, NULL, 10)};
    if (strncmp(arg, "call:", 5) == 0 || strncmp(arg, "twice:", 6) == 0) {
        zeprof_dispatch_begin(&frame);
        if (arg[0] == 't')
            zeprof_dispatch_begin(&frame);
        sleep_ms(20);
        zeprof_dispatch_end(&frame, 0);
    } else if (strncmp(arg, "serve:", 6) == 0) {
        zeprof_serve_begin(&frame);
        zeprof_serve_end(&frame, 0);
    } else {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            if (step(argv[i]) != 0) {
                fprintf(stderr, "frames_app: bad step: %s\n", argv[i]);
                return 2;
            }
        }
        return 0;
    }
    zeprof_frame frame = {.session = 1234567890123ULL, .worker = 7, .sequence = 42};
    zeprof_dispatch_begin(&frame);
    zeprof_serve_begin(&frame);
    zeprof_serve_end(&frame, -5);
    zeprof_dispatch_end(&frame, 3);
    zeprof_dispatch_begin(NULL); /* ignored, never a crash */
    puts("frames_app: ok");
    return 0;
}
