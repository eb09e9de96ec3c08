/*
 * trace_clock.c: resolves LTTng-UST's trace clock reader (trace_clock.h).
 *
 * LTTng-UST 2.13 keeps the active clock in liblttng-ust-common; its public
 * lttng_ust_trace_clock_get_read64_cb() returns the plugin's read64 when a plugin overrides the
 * clock (the plugin is installed by liblttng-ust-common's constructor, before any event can be
 * enabled) and LTTng's CLOCK_MONOTONIC reader otherwise. The shim does not link LTTng-UST (its
 * providers library does, loaded RTLD_LOCAL), so the library is found with RTLD_NOLOAD.
 * Should it be missing (another LTTng-UST version), CLOCK_MONOTONIC is LTTng's clock unless a
 * plugin is set: that is the fallback, and its limit is documented in docs/tracepoints.md.
 */
#include <dlfcn.h>
#include <string.h>
#include <time.h>

#include "trace_clock.h"

static uint64_t zeprof_trace_clock_resolve(void);

uint64_t (*zeprof_trace_clock_read)(void) = zeprof_trace_clock_resolve;

static uint64_t zeprof_monotonic_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static uint64_t zeprof_trace_clock_resolve(void)
{
    typedef uint64_t (*read64_function)(void);
    uint64_t (*reader)(void) = zeprof_monotonic_ns;
    void *common = dlopen("liblttng-ust-common.so.1", RTLD_NOW | RTLD_NOLOAD);

    if (common != NULL) {
        void *symbol = dlsym(common, "lttng_ust_trace_clock_get_read64_cb");
        int (*get_read64)(read64_function *) = NULL;
        read64_function found = NULL;

        /* POSIX guarantees that dlsym's data pointer converts to a function pointer. */
        memcpy(&get_read64, &symbol, sizeof(symbol));
        if (get_read64 != NULL && get_read64(&found) == 0 && found != NULL)
            reader = found;
        dlclose(common); /* only drops the reference RTLD_NOLOAD took: the library stays */
    }
    __atomic_store_n(&zeprof_trace_clock_read, reader, __ATOMIC_RELAXED);
    return reader();
}
