/*
 * zeprof-bench-percall: what tracing adds per API call of a chatty program, in one run
 * (README.md, "Per-call cost").
 *
 * Run with the shim preloaded, on the simulated device, under a private session daemon:
 *   tests/harness/with-lttng -- env LD_PRELOAD=<shim> \
 *       ZE_ENABLE_ALT_DRIVERS=<libzesim.so> LTTNG_UST_ALLOW_BLOCKING=1 zeprof-bench-percall
 *
 * Two workloads, each run through the shim (the symbols the application binds to) and directly
 * in the real loader (dlopen by absolute path, as the shim reaches it), rounds alternating so
 * that a noisy stretch hits both alike, fastest batch of 1000 kept (see BATCH):
 * - cheap: 100 000 zeKernelSetArgumentValue;
 * - append-heavy: 100 000 x (zeKernelSetArgumentValue + zeCommandListAppendLaunchKernel) on an
 *   asynchronous immediate list, every 1000th launch signalling an event the host waits for
 *   (zeEventHostSynchronize + zeEventHostReset).
 * With a tracing session like zeprof's own (every zeprof_* event, contexts vpid, vtid;
 * overwrite mode, so the consumer never throttles the writer), it prints the nanoseconds added
 * per call and, for the cheap call, that cost in units of a bare LTTng-UST event (two 64-bit
 * fields) timed in the same session. Then it records the append-heavy workload once more in a
 * blocking channel (nothing discarded: needs LTTNG_UST_ALLOW_BLOCKING=1) and prints the trace's
 * bytes per call. Prints only; no asserts (the machine is noisy).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <ze_api.h>

#include "bench_tp.h"
#include "bench_util.h"

#define CHEAP_CALLS 100000
#define APPENDS 100000
#define SYNC_EVERY 1000
#define ROUNDS 9
/* API calls of one append-heavy round: set-arg + launch per append, synchronize + reset per
 * 1000 appends. */
#define APPEND_ROUND_CALLS (2.0 * APPENDS + 2.0 * (APPENDS / SYNC_EVERY))

static const char *const function_names[] = { "zeKernelSetArgumentValue",
                                               "zeCommandListAppendLaunchKernel",
                                               "zeEventHostSynchronize", "zeEventHostReset" };

/* Filled by bench_resolve in the order of function_names. */
struct functions {
    ze_result_t (*set_arg)(ze_kernel_handle_t, uint32_t, size_t, const void *);
    ze_result_t (*launch)(ze_command_list_handle_t, ze_kernel_handle_t, const ze_group_count_t *,
                          ze_event_handle_t, uint32_t, ze_event_handle_t *);
    ze_result_t (*event_sync)(ze_event_handle_t, uint64_t);
    ze_result_t (*event_reset)(ze_event_handle_t);
};
#define FUNCTION_COUNT (sizeof(function_names) / sizeof(function_names[0]))
_Static_assert(sizeof(struct functions) == FUNCTION_COUNT * sizeof(void *),
               "struct functions holds one pointer per name of function_names");

static ze_kernel_handle_t bench_kernel;
static ze_command_list_handle_t bench_list;
static ze_event_handle_t bench_event;

static void must(ze_result_t result, const char *what)
{
    if (result != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "zeprof-bench-percall: %s failed: result=0x%x\n", what, (unsigned) result);
        exit(1);
    }
}

/*
 * A round is timed in batches (1000 calls; 1000 appends and their synchronization), and the
 * round's figure is its fastest batch: on a shared machine a batch is short enough to run
 * undisturbed now and then, where a whole round of 100 000 calls is preempted every time.
 * Direct, traced and bare-event figures are all taken this way.
 */
#define BATCH 1000

/* Nanoseconds per call of one round of 100 000 zeKernelSetArgumentValue. */
static double cheap_round(const struct functions *f)
{
    uint64_t spin_ns = 0;
    double best = 1e30;

    for (int batch = 0; batch < CHEAP_CALLS / BATCH; batch++) {
        double start = bench_now_ns();

        for (int i = 0; i < BATCH; i++)
            f->set_arg(bench_kernel, 0, sizeof(spin_ns), &spin_ns);
        double per_call = (bench_now_ns() - start) / BATCH;
        best = per_call < best ? per_call : best;
    }
    return best;
}

/* Nanoseconds per API call of one append-heavy round. */
static double append_round(const struct functions *f)
{
    uint64_t spin_ns = 0;
    ze_group_count_t groups = { 1, 1, 1 };
    double best = 1e30;

    for (int batch = 0; batch < APPENDS / SYNC_EVERY; batch++) {
        double start = bench_now_ns();

        for (int i = 1; i <= SYNC_EVERY; i++) {
            bool last = i == SYNC_EVERY;

            f->set_arg(bench_kernel, 0, sizeof(spin_ns), &spin_ns);
            f->launch(bench_list, bench_kernel, &groups, last ? bench_event : NULL, 0, NULL);
        }
        must(f->event_sync(bench_event, UINT64_MAX), "zeEventHostSynchronize");
        f->event_reset(bench_event);
        double per_call = (bench_now_ns() - start) / (2.0 * SYNC_EVERY + 2.0);
        best = per_call < best ? per_call : best;
    }
    return best;
}

/* Best round of each path, alternating direct and wrapped. */
static void compare(double (*round)(const struct functions *), const struct functions *direct,
                    const struct functions *wrapped, double *direct_ns, double *wrapped_ns)
{
    *direct_ns = *wrapped_ns = 1e30;
    round(direct); /* warm-up: caches, branch predictors, CPU frequency, event pools */
    round(wrapped);
    for (int i = 0; i < ROUNDS; i++) {
        double d = round(direct), w = round(wrapped);

        *direct_ns = d < *direct_ns ? d : *direct_ns;
        *wrapped_ns = w < *wrapped_ns ? w : *wrapped_ns;
    }
}

static double time_bare_event(void)
{
    double best = 1e30;

    for (int batch = 0; batch < ROUNDS * CHEAP_CALLS / BATCH; batch++) {
        double start = bench_now_ns();

        for (int i = 0; i < BATCH; i++)
            lttng_ust_tracepoint(zeprof_bench, bare, (uint64_t) i, (uint64_t) (uintptr_t) &best);
        double per_event = (bench_now_ns() - start) / BATCH;
        best = per_event < best ? per_event : best;
    }
    return best;
}

static void setup(void)
{
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
    ze_module_handle_t module;
    ze_event_pool_handle_t pool;
    uint32_t count = 1;
    static const uint8_t binary[4] = { 0 }; /* the simulated device accepts any module */

    must(zeInit(0), "zeInit");
    must(zeDriverGet(&count, &driver), "zeDriverGet");
    must(zeDeviceGet(driver, &count, &device), "zeDeviceGet");
    ze_context_desc_t context_desc = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
    must(zeContextCreate(driver, &context_desc, &context), "zeContextCreate");
    ze_module_desc_t module_desc = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                                     .format = ZE_MODULE_FORMAT_IL_SPIRV,
                                     .inputSize = sizeof(binary),
                                     .pInputModule = binary };
    must(zeModuleCreate(context, device, &module_desc, &module, NULL), "zeModuleCreate");
    ze_kernel_desc_t kernel_desc = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                     .pKernelName = "zesim_spin" };
    must(zeKernelCreate(module, &kernel_desc, &bench_kernel), "zeKernelCreate");
    ze_command_queue_desc_t queue_desc = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                           .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS };
    must(zeCommandListCreateImmediate(context, device, &queue_desc, &bench_list),
         "zeCommandListCreateImmediate");
    ze_event_pool_desc_t pool_desc = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                       .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1 };
    ze_event_desc_t event_desc = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                                   .signal = ZE_EVENT_SCOPE_FLAG_HOST };
    must(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool), "zeEventPoolCreate");
    must(zeEventCreate(pool, &event_desc, &bench_event), "zeEventCreate");
}

/* A session like zeprof's (every zeprof_* event, vpid, vtid) with `channel_options`. */
static int start_session(const char *name, const char *output, const char *channel_options)
{
    char command[512];

    snprintf(command, sizeof(command), "create %s --output=%s", name, output);
    if (bench_lttng(command) != 0)
        return -1;
    snprintf(command, sizeof(command), "enable-channel -u -s %s %s bench", name, channel_options);
    int failed = bench_lttng(command) != 0;
    snprintf(command, sizeof(command), "enable-event -u -s %s -c bench 'zeprof_*'", name);
    failed = failed || bench_lttng(command) != 0;
    snprintf(command, sizeof(command), "add-context -u -s %s -c bench -t vpid -t vtid",
             name);
    failed = failed || bench_lttng(command) != 0;
    snprintf(command, sizeof(command), "start %s", name);
    failed = failed || bench_lttng(command) != 0;
    if (failed || bench_wait_enabled() != 0) {
        snprintf(command, sizeof(command), "destroy %s", name);
        bench_lttng(command);
        return -1;
    }
    return 0;
}

static void end_session(const char *name)
{
    char command[256];

    snprintf(command, sizeof(command), "stop %s", name);
    bench_lttng(command);
    snprintf(command, sizeof(command), "destroy %s", name);
    bench_lttng(command);
}

/* Bytes of the stream files under `path` (the CTF metadata excluded). */
static uint64_t stream_bytes(const char *path)
{
    uint64_t total = 0;
    DIR *dir = opendir(path);
    struct dirent *entry;

    if (dir == NULL)
        return 0;
    while ((entry = readdir(dir)) != NULL) {
        char child[4096];
        struct stat info;

        if (entry->d_name[0] == '.' || strcmp(entry->d_name, "metadata") == 0)
            continue;
        snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
        if (lstat(child, &info) != 0)
            continue;
        if (S_ISDIR(info.st_mode))
            total += stream_bytes(child);
        else if (S_ISREG(info.st_mode) && strcmp(entry->d_name, "index") != 0)
            total += (uint64_t) info.st_size;
    }
    closedir(dir);
    return total;
}

static void remove_tree(const char *path)
{
    char command[256];

    snprintf(command, sizeof(command), "rm -rf %s", path);
    if (system(command) != 0)
        fprintf(stderr, "zeprof-bench-percall: cannot remove %s\n", path);
}

/* The machine is shared: the figures are read with its load beside them. */
static void print_load(void)
{
    double load = -1;
    FILE *file = fopen("/proc/loadavg", "r");

    if (file) {
        if (fscanf(file, "%lf", &load) != 1)
            load = -1;
        fclose(file);
    }
    printf("[per call] machine load: %.2f (1 min)\n", load);
}

int main(void)
{
    struct functions wrapped, direct;
    void *real = bench_open_real_loader(ZEPROF_REAL_LOADER, RTLD_NOW | RTLD_LOCAL | BENCH_DEEPBIND);

    if (real == NULL) {
        fprintf(stderr, "zeprof-bench-percall: cannot open %s\n", ZEPROF_REAL_LOADER);
        return 1;
    }
    /* What the application binds to (the shim when preloaded), and the real loader's own. */
    bench_resolve(RTLD_DEFAULT, function_names, FUNCTION_COUNT, &wrapped, "zeprof-bench-percall");
    bench_resolve(real, function_names, FUNCTION_COUNT, &direct, "zeprof-bench-percall");
    if (memcmp(&wrapped, &direct, sizeof(wrapped)) == 0)
        printf("note: the shim is not preloaded; both columns measure the real loader\n");
    setup();

    /* Only a private daemon (tests/harness/with-lttng): never touch another. */
    const char *private_daemon = getenv("WITH_LTTNG_PRIVATE_DAEMON");
    char output[] = "/tmp/zeprof-bench-XXXXXX";
    if (private_daemon == NULL || strcmp(private_daemon, "1") != 0 || mkdtemp(output) == NULL ||
        start_session("zeprof-percall", output,
                      "--buffers-uid --overwrite --subbuf-size=256K --num-subbuf=8") != 0) {
        printf("[per call] skipped: no session daemon reachable (run under "
               "tests/harness/with-lttng)\n");
        return 0;
    }
    printf("zeprof per-call cost (simulated device; fastest batch of %d in %d rounds; mode %s)\n",
           BATCH, ROUNDS,
           getenv("ZEPROF_MODE") ? getenv("ZEPROF_MODE") : "default");
    double d_cheap, w_cheap, d_append, w_append;
    compare(cheap_round, &direct, &wrapped, &d_cheap, &w_cheap);
    compare(append_round, &direct, &wrapped, &d_append, &w_append);
    double bare = time_bare_event();
    end_session("zeprof-percall");
    remove_tree(output);

    print_load();
    printf("[per call] bare LTTng-UST event (two 64-bit fields), same session: %.1f ns\n", bare);
    printf("[per call] cheap: %d zeKernelSetArgumentValue: direct %.1f ns, traced %.1f ns: "
           "%+.1f ns per call = %.2f bare events (goal <= 1.3)\n", CHEAP_CALLS, d_cheap, w_cheap,
           w_cheap - d_cheap, (w_cheap - d_cheap) / bare);
    printf("[per call] append-heavy: %d x (set-arg + append), sync every %d: direct %.1f ns, "
           "traced %.1f ns: %+.1f ns per call\n", APPENDS, SYNC_EVERY, d_append, w_append,
           w_append - d_append);

    /* Trace size: the append-heavy workload recorded once, nothing discarded. */
    char size_output[] = "/tmp/zeprof-bench-XXXXXX";
    if (mkdtemp(size_output) == NULL ||
        start_session("zeprof-size", size_output,
                      "--buffers-uid --subbuf-size=256K --num-subbuf=8 --blocking-timeout=inf") != 0) {
        printf("[trace size] skipped: cannot create a blocking session\n");
        return 0;
    }
    append_round(&wrapped);
    end_session("zeprof-size");
    uint64_t bytes = stream_bytes(size_output);
    remove_tree(size_output);
    const char *blocking = getenv("LTTNG_UST_ALLOW_BLOCKING");
    printf("[trace size] append-heavy round: %.0f calls, %llu bytes of streams: %.1f bytes per "
           "call%s\n", APPEND_ROUND_CALLS, (unsigned long long) bytes, bytes / APPEND_ROUND_CALLS,
           blocking && strcmp(blocking, "1") == 0
               ? ""
               : " (LTTNG_UST_ALLOW_BLOCKING unset: events may have been discarded)");
    return 0;
}
