/*
 * bench_util: what the per-call benchmarks (overhead.c, percall.c) share: reaching the real
 * loader's functions directly, a clock, and driving the private session daemon with `lttng`.
 * Benchmarks print figures only; these helpers exit with one line when the set-up cannot be made.
 */
#ifndef ZEPROF_BENCH_UTIL_H
#define ZEPROF_BENCH_UTIL_H

#include <dlfcn.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define BENCH_DEEPBIND 0 /* AddressSanitizer aborts on RTLD_DEEPBIND; see interposer/shim_init.c */
#else
#define BENCH_DEEPBIND RTLD_DEEPBIND
#endif

/* Opens the real loader at `path` with glibc's own dlopen. The shim hands itself back for a
 * dlopen of the real loader's file (so that programs doing that are traced); a benchmark that
 * compares the shim with the real loader needs the real one. NULL when it cannot be opened. */
void *bench_open_real_loader(const char *path, int flags);

/* Fills `functions`, a struct of `count` function pointers in the order of `names`, with the
 * symbols of `handle`; exits with "PROGRAM: missing NAME" when one is absent. */
void bench_resolve(void *handle, const char *const *names, size_t count, void *functions,
                   const char *program);

/* CLOCK_MONOTONIC in nanoseconds. */
double bench_now_ns(void);

/* Runs `lttng --no-sessiond ARGUMENTS` quietly (never spawning a daemon nobody would stop);
 * returns its exit status. */
int bench_lttng(const char *arguments);

/* Waits (up to 5 s) until the session daemon has enabled the zeprof_bench:bare tracepoint in this
 * process, which it does asynchronously after `lttng start`; 0 once it is, -1 otherwise. */
int bench_wait_enabled(void);

#endif /* ZEPROF_BENCH_UTIL_H */
