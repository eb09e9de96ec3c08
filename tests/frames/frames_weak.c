/*
 * frames_weak: marks frames through the functions the shim exports, declared weak, without
 * zeprof.h (as a program in another language, or one that cannot use the header, would). Untraced
 * the functions are NULL and nothing is marked; under the shim they are the shim's.
 *
 *   frames_weak           marks 11:22:33 (dispatch begin, serve begin, serve end -7, dispatch end 9)
 *
 * Built a second time as frames_mixed (-DFRAMES_MIXED, -O0, --export-dynamic) with
 * frames_header.c, which includes zeprof.h in the same program: both kinds of calls must reach
 * the shim, each exactly once. stdout is the same traced or not; stderr says whether the shim was
 * there.
 */
#include <stdint.h>
#include <stdio.h>

/* The documented layout (zeprof.h's zeprof_frame), declared here without the header. */
struct frame_key {
    uint64_t session;
    uint32_t worker;
    uint64_t sequence;
};

extern void zeprof_dispatch_begin(const struct frame_key *frame) __attribute__((weak));
extern void zeprof_dispatch_end(const struct frame_key *frame, int32_t status)
    __attribute__((weak));
extern void zeprof_serve_begin(const struct frame_key *frame) __attribute__((weak));
extern void zeprof_serve_end(const struct frame_key *frame, int32_t status) __attribute__((weak));

#ifdef FRAMES_MIXED
/* frames_header.c: the same marks through zeprof.h's inline functions. */
void frames_header_mark(void);
#endif

int main(void)
{
    struct frame_key key = {.session = 11, .worker = 22, .sequence = 33};
    int present = zeprof_dispatch_begin != NULL && zeprof_dispatch_end != NULL &&
                  zeprof_serve_begin != NULL && zeprof_serve_end != NULL;

    if (present) {
        zeprof_dispatch_begin(&key);
        zeprof_serve_begin(&key);
        zeprof_serve_end(&key, -7);
        zeprof_dispatch_end(&key, 9);
        zeprof_dispatch_begin(NULL); /* ignored, never a crash */
    }
#ifdef FRAMES_MIXED
    frames_header_mark();
#endif
    fprintf(stderr, "frames_weak: shim %s\n", present ? "present" : "absent");
    puts("frames_weak: ok");
    return 0;
}
