/*
 * frames_app: marks one remote dispatch and one serve with zeprof.h and nothing else. Built
 * without any library beyond libc, it must run untraced (the calls do nothing) and, under the
 * shim, leave the four zeprof_frame events with its key and statuses.
 */
#include <zeprof.h>

#include <stdio.h>

int main(void)
{
    zeprof_frame frame = {.session = 1234567890123ULL, .worker = 7, .sequence = 42};
    zeprof_dispatch_begin(&frame);
    zeprof_serve_begin(&frame);
    zeprof_serve_end(&frame, -5);
    zeprof_dispatch_end(&frame, 3);
    zeprof_dispatch_begin(NULL); /* ignored, never a crash */
    puts("frames_app: ok");
    return 0;
}
