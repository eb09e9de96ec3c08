/*
 * zeprof.h: mark remote dispatch so that zeprof can place a peer host's work inside the
 * caller's dispatch window.
 *
 * Header only. A program that includes this header builds and runs without zeprof and needs no
 * extra library: each call looks up, once, the recorder that zeprof's preloaded shim exports
 * (dlsym in the default namespace, which glibc 2.34 and later provide in libc itself) and does
 * nothing when it is absent. Under zeprof each call emits one `zeprof_frame` tracepoint.
 *
 * The shim also exports the four functions themselves (same names, same signatures), for programs
 * that do not include this header: declare them weak and call them when they are non-NULL (C),
 * or look them up at run time (Fortran bind(C), Rust, Python ctypes). A translation unit that
 * includes this header gets static inline versions (internal linkage: never exported, never in
 * conflict with the shim's symbols, also at -O0 or with --export-dynamic); it cannot also declare
 * them extern itself. Defining ZEPROF_NO_INLINE before including gives plain declarations of what
 * the shim exports instead, for code that links against the shim (the shim itself does).
 *
 * The frame key's text form is `session:worker:sequence` in decimal. The caller calls
 * zeprof_dispatch_begin() just before it publishes the frame and zeprof_dispatch_end() when the
 * completion arrives; the peer calls zeprof_serve_begin() just after it decoded the frame header
 * and zeprof_serve_end() just before it sends the completion, so the peer's window lies inside the
 * caller's.
 */
#ifndef ZEPROF_H
#define ZEPROF_H

#include <stdint.h>

#include <dlfcn.h>

/* glibc defines RTLD_DEFAULT only under _GNU_SOURCE; its value there is a null handle. */
#ifdef RTLD_DEFAULT
#define ZEPROF_RTLD_DEFAULT_ RTLD_DEFAULT
#else
#define ZEPROF_RTLD_DEFAULT_ ((void *)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zeprof_frame {
    uint64_t session;
    uint32_t worker;
    uint64_t sequence;
} zeprof_frame;

/* What the shim exports; `kind` is one of the ZEPROF_FRAME_* values below. */
enum {
    ZEPROF_FRAME_DISPATCH_BEGIN = 0,
    ZEPROF_FRAME_DISPATCH_END = 1,
    ZEPROF_FRAME_SERVE_BEGIN = 2,
    ZEPROF_FRAME_SERVE_END = 3,
};
typedef void (*zeprof_frame_record_fn)(int kind, const zeprof_frame *frame, int32_t status);

#ifdef ZEPROF_NO_INLINE

/* Exactly what the shim exports (interposer/frame.c). */
void zeprof_frame_record(int kind, const zeprof_frame *frame, int32_t status);
void zeprof_dispatch_begin(const zeprof_frame *frame);
void zeprof_dispatch_end(const zeprof_frame *frame, int32_t status);
void zeprof_serve_begin(const zeprof_frame *frame);
void zeprof_serve_end(const zeprof_frame *frame, int32_t status);

#else

/* Looked up once per translation unit; a benign race (every thread finds the same value). */
static inline zeprof_frame_record_fn zeprof_frame_recorder_(void)
{
    static zeprof_frame_record_fn recorder;
    static int looked_up;
    if (!__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE)) {
        void *symbol = dlsym(ZEPROF_RTLD_DEFAULT_, "zeprof_frame_record");
        __atomic_store_n(&recorder, (zeprof_frame_record_fn)symbol, __ATOMIC_RELAXED);
        __atomic_store_n(&looked_up, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&recorder, __ATOMIC_RELAXED);
}

static inline void zeprof_frame_emit_(int kind, const zeprof_frame *frame, int32_t status)
{
    zeprof_frame_record_fn recorder = zeprof_frame_recorder_();
    if (recorder && frame)
        recorder(kind, frame, status);
}

/* Caller: just before publishing the frame. */
static inline void zeprof_dispatch_begin(const zeprof_frame *frame)
{
    zeprof_frame_emit_(ZEPROF_FRAME_DISPATCH_BEGIN, frame, 0);
}

/* Caller: the completion has been received. */
static inline void zeprof_dispatch_end(const zeprof_frame *frame, int32_t status)
{
    zeprof_frame_emit_(ZEPROF_FRAME_DISPATCH_END, frame, status);
}

/* Peer: the frame header has been decoded. */
static inline void zeprof_serve_begin(const zeprof_frame *frame)
{
    zeprof_frame_emit_(ZEPROF_FRAME_SERVE_BEGIN, frame, 0);
}

/* Peer: just before the completion is sent. */
static inline void zeprof_serve_end(const zeprof_frame *frame, int32_t status)
{
    zeprof_frame_emit_(ZEPROF_FRAME_SERVE_END, frame, status);
}

#endif /* ZEPROF_NO_INLINE */

#ifdef __cplusplus
}
#endif

#endif /* ZEPROF_H */
