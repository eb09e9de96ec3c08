/*
 * zeprof-bench-overhead: what the shim costs per call, in one run (see README.md).
 *
 * Run with the shim preloaded, on the simulated device, under a private session daemon:
 *   tests/harness/with-lttng -- env LD_PRELOAD=<shim> \
 *       ZE_ENABLE_ALT_DRIVERS=<libzesim.so> zeprof-bench-overhead
 *
 * (a) No tracing session: the same Level Zero function called through the shim (the symbol the
 *     application binds to) and directly in the real loader (dlopen by absolute path with
 *     RTLD_DEEPBIND, the way the shim itself reaches it): ratio and nanoseconds added per call.
 * (b) Tracing on (the benchmark creates and starts a session with `lttng`, overwrite mode so
 *     that the reader never throttles the writer): the same ratio, the cost per event, and a bare
 *     LTTng-UST event of similar size for comparison. Only under with-lttng
 *     (WITH_LTTNG_PRIVATE_DAEMON=1): the benchmark never talks to a daemon it was not given.
 * Each figure is the best of several rounds (the least disturbed one). Prints only; no asserts.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ze_api.h>

#include "bench_tp.h"
#include "bench_util.h"

#define CALLS_PER_ROUND 50000
#define ROUNDS 25
#define EVENTS_PER_CALL 1 /* both functions are one-event calls (docs/tracepoints.md) */

static const char *const function_names[] = { "zeInit", "zeDriverGet", "zeDeviceGet",
                                               "zeDeviceGetProperties", "zeEventQueryStatus" };

/* Filled by bench_resolve in the order of function_names. */
struct functions {
    ze_result_t (*init)(ze_init_flags_t);
    ze_result_t (*driver_get)(uint32_t *, ze_driver_handle_t *);
    ze_result_t (*device_get)(ze_driver_handle_t, uint32_t *, ze_device_handle_t *);
    ze_result_t (*device_get_properties)(ze_device_handle_t, ze_device_properties_t *);
    ze_result_t (*event_query_status)(ze_event_handle_t);
};
#define FUNCTION_COUNT (sizeof(function_names) / sizeof(function_names[0]))
_Static_assert(sizeof(struct functions) == FUNCTION_COUNT * sizeof(void *),
               "struct functions holds one pointer per name of function_names");

static ze_device_handle_t bench_device;
static ze_event_handle_t bench_event;
static ze_device_properties_t bench_properties;

/* One round of calls of `which` (0: zeDeviceGetProperties, 1: zeEventQueryStatus). */
static double one_round(int which, const struct functions *f)
{
    double start = bench_now_ns();

    if (which == 0) {
        for (int i = 0; i < CALLS_PER_ROUND; i++)
            f->device_get_properties(bench_device, &bench_properties);
    } else {
        for (int i = 0; i < CALLS_PER_ROUND; i++)
            f->event_query_status(bench_event);
    }
    return (bench_now_ns() - start) / CALLS_PER_ROUND;
}

/* Rounds alternate between the two paths, so that a noisy stretch hits both alike. */
static void compare(int which, const struct functions *direct, const struct functions *wrapped,
                    double *direct_ns, double *wrapped_ns)
{
    *direct_ns = *wrapped_ns = 1e30;
    one_round(which, direct); /* warm-up: caches, branch predictors, CPU frequency */
    one_round(which, wrapped);
    for (int round = 0; round < ROUNDS; round++) {
        double d = one_round(which, direct), w = one_round(which, wrapped);

        *direct_ns = d < *direct_ns ? d : *direct_ns;
        *wrapped_ns = w < *wrapped_ns ? w : *wrapped_ns;
    }
}

static double time_bare_event(void)
{
    double best = 1e30;

    for (int round = 0; round < ROUNDS; round++) {
        double start = bench_now_ns();

        for (int i = 0; i < CALLS_PER_ROUND; i++)
            lttng_ust_tracepoint(zeprof_bench, bare, (uint64_t) i, (uint64_t) (uintptr_t) &best);
        double per_event = (bench_now_ns() - start) / CALLS_PER_ROUND;
        best = per_event < best ? per_event : best;
    }
    return best;
}

static void setup(const struct functions *wrapped)
{
    ze_driver_handle_t driver;
    ze_context_handle_t context;
    ze_event_pool_handle_t pool;
    uint32_t count = 1;

    if (wrapped->init(0) != ZE_RESULT_SUCCESS || wrapped->driver_get(&count, &driver) ||
        wrapped->device_get(driver, &count, &bench_device)) {
        fprintf(stderr, "zeprof-bench-overhead: no device (set ZE_ENABLE_ALT_DRIVERS)\n");
        exit(1);
    }
    ze_context_desc_t context_desc = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
    ze_event_pool_desc_t pool_desc = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                       .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1 };
    ze_event_desc_t event_desc = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC };
    if (zeContextCreate(driver, &context_desc, &context) ||
        zeEventPoolCreate(context, &pool_desc, 1, &bench_device, &pool) ||
        zeEventCreate(pool, &event_desc, &bench_event) || zeEventHostSignal(bench_event)) {
        fprintf(stderr, "zeprof-bench-overhead: cannot create a signalled event\n");
        exit(1);
    }
    bench_properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
}

static void report(const char *phase, const char *name, double direct, double wrapped)
{
    printf("[%s] %-22s direct %7.1f ns, wrapped %7.1f ns: ratio %5.2f, %+7.1f ns per call\n",
           phase, name, direct, wrapped, wrapped / direct, wrapped - direct);
}

static int start_session(const char *output)
{
    char create[256];

    snprintf(create, sizeof(create), "create zeprof-bench --output=%s", output);
    if (bench_lttng(create) != 0)
        return -1;
    if (bench_lttng("enable-channel -u --overwrite --subbuf-size=1M --num-subbuf=4 bench") != 0 ||
        bench_lttng("enable-event -u -c bench 'zeprof_*'") != 0 ||
        bench_lttng("add-context -u -c bench -t vpid -t vtid") != 0 || bench_lttng("start") != 0) {
        bench_lttng("destroy zeprof-bench");
        return -1;
    }
    return bench_wait_enabled();
}

int main(void)
{
    struct functions wrapped, direct;
    void *real = bench_open_real_loader(ZEPROF_REAL_LOADER, RTLD_NOW | RTLD_LOCAL | BENCH_DEEPBIND);

    if (real == NULL) {
        fprintf(stderr, "zeprof-bench-overhead: cannot open %s\n", ZEPROF_REAL_LOADER);
        return 1;
    }
    /* What the application binds to (the shim when preloaded), and the real loader's own. */
    bench_resolve(RTLD_DEFAULT, function_names, FUNCTION_COUNT, &wrapped, "zeprof-bench-overhead");
    bench_resolve(real, function_names, FUNCTION_COUNT, &direct, "zeprof-bench-overhead");
    if (memcmp(&wrapped, &direct, sizeof(wrapped)) == 0)
        printf("note: the shim is not preloaded; both columns measure the real loader\n");
    setup(&wrapped);

    printf("zeprof overhead (simulated device; best of %d rounds of %d calls)\n", ROUNDS,
           CALLS_PER_ROUND);
    double d_props, w_props, d_query, w_query;
    compare(0, &direct, &wrapped, &d_props, &w_props);
    compare(1, &direct, &wrapped, &d_query, &w_query);
    report("no session", "zeDeviceGetProperties", d_props, w_props);
    report("no session", "zeEventQueryStatus", d_query, w_query);

    /* Only a private daemon (tests/harness/with-lttng): never touch another. */
    const char *private_daemon = getenv("WITH_LTTNG_PRIVATE_DAEMON");
    char output[] = "/tmp/zeprof-bench-XXXXXX";
    if (private_daemon == NULL || strcmp(private_daemon, "1") != 0 || mkdtemp(output) == NULL ||
        start_session(output) != 0) {
        printf("[tracing] skipped: no session daemon reachable (run under "
               "tests/harness/with-lttng)\n");
        return 0;
    }
    compare(0, &direct, &wrapped, &d_props, &w_props);
    compare(1, &direct, &wrapped, &d_query, &w_query);
    double bare = time_bare_event();
    bench_lttng("stop");
    bench_lttng("destroy zeprof-bench");
    char remove[128];
    snprintf(remove, sizeof(remove), "rm -rf %s", output);
    if (system(remove) != 0)
        fprintf(stderr, "zeprof-bench-overhead: cannot remove %s\n", output);

    report("tracing", "zeDeviceGetProperties", d_props, w_props);
    report("tracing", "zeEventQueryStatus", d_query, w_query);
    printf("[tracing] bare LTTng-UST event: %.1f ns\n", bare);
    printf("[tracing] per event (%d per call): zeDeviceGetProperties %.1f ns (%.2fx LTTng's own), "
           "zeEventQueryStatus %.1f ns (%.2fx)\n", EVENTS_PER_CALL,
           (w_props - d_props) / EVENTS_PER_CALL, (w_props - d_props) / EVENTS_PER_CALL / bare,
           (w_query - d_query) / EVENTS_PER_CALL, (w_query - d_query) / EVENTS_PER_CALL / bare);
    return 0;
}
