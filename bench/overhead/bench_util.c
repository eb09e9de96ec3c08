/* bench_util: helpers shared by the per-call benchmarks (bench_util.h). */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_tp.h"

void bench_resolve(void *handle, const char *const *names, size_t count, void *functions,
                   const char *program)
{
    for (size_t i = 0; i < count; i++) {
        void *symbol = dlsym(handle, names[i]);

        if (symbol == NULL) {
            fprintf(stderr, "%s: missing %s\n", program, names[i]);
            exit(1);
        }
        /* POSIX guarantees that dlsym's data pointer converts to a function pointer. */
        memcpy((char *) functions + i * sizeof(void *), &symbol, sizeof(void *));
    }
}

void *bench_open_real_loader(const char *path, int flags)
{
    /* dlsym on libc's own handle is never rerouted by the shim: it yields glibc's dlopen. */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *symbol = libc ? dlsym(libc, "dlopen") : NULL;
    void *(*glibc_dlopen)(const char *, int);

    if (symbol == NULL)
        return NULL;
    memcpy(&glibc_dlopen, &symbol, sizeof(symbol));
    return glibc_dlopen(path, flags);
}

double bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

int bench_lttng(const char *arguments)
{
    char command[512];

    snprintf(command, sizeof(command), "lttng --no-sessiond %s >/dev/null 2>&1", arguments);
    return system(command);
}

int bench_wait_enabled(void)
{
    for (int i = 0; i < 500 && !lttng_ust_tracepoint_enabled(zeprof_bench, bare); i++) {
        struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

        nanosleep(&ten_ms, NULL);
    }
    return lttng_ust_tracepoint_enabled(zeprof_bench, bare) ? 0 : -1;
}
