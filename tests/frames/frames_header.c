/*
 * frames_header.c: the zeprof.h half of frames_mixed (see frames_weak.c). Built at -O0, the
 * header's static inline functions are emitted as local symbols named like the shim's exports;
 * with --export-dynamic they must still stay out of the program's dynamic symbols, and the weak
 * references of the other file must still reach the shim.
 */
#include <zeprof.h>

void frames_header_mark(void);

void frames_header_mark(void)
{
    zeprof_frame frame = {.session = 44, .worker = 55, .sequence = 66};

    zeprof_dispatch_begin(&frame);
    zeprof_dispatch_end(&frame, 1);
}
