/*
 * guard.h: the thread-local re-entrancy guard of the shim.
 *
 * While a thread's guard is raised, the wrappers call the real Level Zero function straight away:
 * no tracepoint, no hook. The shim raises it around its hooks, and the device-timing engine may
 * raise it around anything that could call back into Level Zero, so that the tracer's own calls
 * never show up in the trace and never re-enter the hooks. The guard nests (it is a counter).
 *
 * The counter is thread-local with the initial-exec model: reading it is one %fs-relative load,
 * with no call to __tls_get_addr (which may allocate, and so may re-enter malloc wrappers).
 * The shim is preloaded, so static TLS space is available for it.
 */
#ifndef ZEPROF_GUARD_H
#define ZEPROF_GUARD_H

#include <stdbool.h>

/* Owned by guard.c; hidden (the shim exports only the Level Zero API). */
extern __thread unsigned int zeprof_guard_depth __attribute__((tls_model("initial-exec")));

#define zeprof_unlikely(x) __builtin_expect(!!(x), 0)
#define zeprof_likely(x) __builtin_expect(!!(x), 1)

static inline void zeprof_guard_enter(void)
{
    zeprof_guard_depth++;
}

static inline void zeprof_guard_leave(void)
{
    zeprof_guard_depth--;
}

static inline bool zeprof_guard_raised(void)
{
    return zeprof_guard_depth != 0;
}

#endif /* ZEPROF_GUARD_H */
