/*
 * shim.h: the shim's process-wide state, shared by the generated wrappers and shim_init.c.
 *
 * zeprof_ready() is the wrappers' first step: it initializes the shim once per process (thread-safe,
 * lazy: the real loader is opened at the first Level Zero call, not at load time) and says whether
 * the real loader is usable. After it returned true, zeprof_real and zeprof_mode are set for good.
 */
#ifndef ZEPROF_SHIM_H
#define ZEPROF_SHIM_H

#include <stdbool.h>

#include "guard.h"

enum zeprof_mode_level {
    ZEPROF_MODE_MINIMAL = 0, /* entry and exit only */
    ZEPROF_MODE_DEFAULT = 1, /* plus the curated descriptors */
    ZEPROF_MODE_FULL = 2,    /* plus every descriptor */
};

enum zeprof_state {
    ZEPROF_STATE_UNINITIALIZED = 0,
    ZEPROF_STATE_READY = 1,
    ZEPROF_STATE_FAILED = 2, /* the real loader could not be opened: every call is refused */
};

/* ZEPROF_MODE, read once by the initialization. */
extern int zeprof_mode;

/* One of enum zeprof_state; written once (release) by the initialization. */
extern int zeprof_state;

/* The real loader's handle once the initialization opened it (RTLD_GLOBAL), else NULL. */
extern void *zeprof_real_handle;

/* The real loader's path: ZEPROF_LOADER if set and not empty, else the build-time path. */
const char *zeprof_real_loader_path(void);

/* Runs the initialization once (pthread_once); true when the real loader is usable. */
bool zeprof_init_slow(void);

static inline bool zeprof_ready(void)
{
    if (zeprof_likely(__atomic_load_n(&zeprof_state, __ATOMIC_ACQUIRE) == ZEPROF_STATE_READY))
        return true;
    return zeprof_init_slow();
}

/*
 * The API families whose tracepoint provider is loaded at their first call (their events are
 * rare, and each enabled event a program registers costs it a round trip to the session daemon
 * at start-up); zeprof_ze, zeprof_device and zeprof_frame are loaded at initialization.
 */
enum zeprof_family {
    ZEPROF_FAMILY_ZET,
    ZEPROF_FAMILY_ZES,
    ZEPROF_FAMILY_ZEL,
    ZEPROF_FAMILY_SAMPLE, /* not an API family: zeprof_sample, loaded when sampling starts */
    ZEPROF_FAMILY_COUNT
};

/* Nonzero (acquire) once the family's provider was loaded, or could not be: never retried. */
extern int zeprof_family_loaded[ZEPROF_FAMILY_COUNT];

/* Loads the family's provider once (pthread_once); its events are enabled when it returns. */
void zeprof_load_family_slow(enum zeprof_family family);

static inline void zeprof_load_family(enum zeprof_family family)
{
    if (zeprof_unlikely(!__atomic_load_n(&zeprof_family_loaded[family], __ATOMIC_ACQUIRE)))
        zeprof_load_family_slow(family);
}

#endif /* ZEPROF_SHIM_H */
