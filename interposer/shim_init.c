/*
 * shim_init.c: the shim's one-time initialization.
 *
 * Guarantees: at the first Level Zero call of the process (any thread), exactly once:
 * - ZEPROF_VERBOSE and ZEPROF_MODE are read;
 * - the real loader is opened by absolute path (ZEPROF_LOADER, else the build-time path) with
 *   RTLD_DEEPBIND, so that its calls to its own API bind inside it and never re-enter the shim,
 *   and RTLD_GLOBAL, so that functions the shim does not wrap (a loader newer than the headers it
 *   was built with) still resolve, after the shim's, in the global scope; zeprof_real is filled;
 *   if that fails, one line on stderr and every call is refused with
 *   ZE_RESULT_ERROR_UNINITIALIZED, as the real loader would without a driver;
 * - then the tracepoint providers (libzeprof_providers.so, next to the shim) are loaded; if that
 *   fails (LTTng-UST missing), one line on stderr and the application runs untraced; else the
 *   process name is recorded once (zeprof_device:process), and again in a forked child. The
 *   providers of the zet, zes and zel families are loaded at their family's first call instead
 *   (zeprof_load_family, shim.h), so a program that never calls them never registers their
 *   events. Owns their handles too (never closed).
 * Never exits, never aborts. Owns: the real loader's handle (never closed: drivers and other
 * threads may still run its code at exit), the providers' handle (never closed either: LTTng-UST
 * does not reference-count probe libraries).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zeprof_api.h"
#include "zeprof_device.h"
#include "dl_route.h"
#include "guard.h"
#include "shim.h"

#ifndef ZEPROF_REAL_LOADER
#error "ZEPROF_REAL_LOADER (absolute path of the real loader) must be defined by the build"
#endif

#define ZEPROF_PROVIDERS_FILE "libzeprof_providers.so"

/* The providers loaded at a family's first call (shim.h), in enum zeprof_family's order. */
static const char *const zeprof_family_files[ZEPROF_FAMILY_COUNT] = {
    "libzeprof_providers_zet.so",
    "libzeprof_providers_zes.so",
    "libzeprof_providers_zel.so",
    "libzeprof_providers_sample.so",
};

/*
 * AddressSanitizer's dlopen interceptor aborts on RTLD_DEEPBIND (google/sanitizers issue 611), and
 * which dlopen a preloaded library reaches first depends on the preload order. Sanitizer builds
 * (for testing only) therefore open the real loader without it: the loader's calls to its own
 * exported functions then reach the wrappers, which pass them straight through because every
 * wrapper holds the re-entry guard across its real call.
 */
static void *zeprof_dlopen_deepbind(const char *path, int flags)
{
#if defined(__SANITIZE_ADDRESS__)
    return zeprof_dl_real_dlopen(path, flags);
#else
    return zeprof_dl_real_dlopen(path, flags | RTLD_DEEPBIND);
#endif
}

int zeprof_mode = ZEPROF_MODE_DEFAULT;
void *zeprof_real_handle;
int zeprof_state = ZEPROF_STATE_UNINITIALIZED;

static pthread_once_t zeprof_init_control = PTHREAD_ONCE_INIT;
static bool zeprof_verbose;
/* The shim's directory, where the providers are; empty when the main providers did not load. */
static char zeprof_providers_dir[PATH_MAX];

int zeprof_family_loaded[ZEPROF_FAMILY_COUNT];
static pthread_once_t zeprof_family_control[ZEPROF_FAMILY_COUNT] = {
    PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
};

/* LTTng-UST's fork helpers, from the providers' liblttng-ust; NULL when not loaded. */
static void (*zeprof_ust_before_fork)(sigset_t *);
static void (*zeprof_ust_after_fork_parent)(sigset_t *);
static void (*zeprof_ust_after_fork_child)(sigset_t *);
static __thread sigset_t zeprof_fork_sigset __attribute__((tls_model("initial-exec")));

/* One line on stderr, "zeprof: " first; errno preserved (the application may be reading it). */
static void zeprof_say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void zeprof_say(const char *format, ...)
{
    int saved_errno = errno;
    char line[1024];
    va_list ap;

    va_start(ap, format);
    vsnprintf(line, sizeof(line), format, ap);
    va_end(ap);
    fprintf(stderr, "zeprof: %s\n", line);
    errno = saved_errno;
}

#define zeprof_explain(...)             \
    do {                                \
        if (zeprof_verbose)             \
            zeprof_say(__VA_ARGS__);    \
    } while (0)

static const char *zeprof_mode_name(int mode)
{
    switch (mode) {
    case ZEPROF_MODE_MINIMAL:
        return "minimal";
    case ZEPROF_MODE_FULL:
        return "full";
    default:
        return "default";
    }
}

static void zeprof_read_environment(void)
{
    const char *verbose = getenv("ZEPROF_VERBOSE");
    const char *mode = getenv("ZEPROF_MODE");

    zeprof_verbose = verbose != NULL && verbose[0] != '\0' && strcmp(verbose, "0") != 0;
    if (mode == NULL || mode[0] == '\0' || strcmp(mode, "default") == 0)
        zeprof_mode = ZEPROF_MODE_DEFAULT;
    else if (strcmp(mode, "minimal") == 0)
        zeprof_mode = ZEPROF_MODE_MINIMAL;
    else if (strcmp(mode, "full") == 0)
        zeprof_mode = ZEPROF_MODE_FULL;
    else
        zeprof_say("unknown ZEPROF_MODE, using default: mode=%s", mode);
    zeprof_explain("mode=%s", zeprof_mode_name(zeprof_mode));
}

/*
 * Records the process name (the name of its main thread, as /proc/self/comm gives it: what the
 * procname context would say) once, so that events need not carry it. open/read/close only: also
 * called in a forked child, where only async-signal-safe functions are allowed.
 */
static void zeprof_record_process(void)
{
    char name[64] = "";
    ssize_t length = 0;
    int saved_errno = errno;
    int fd;

    if (!lttng_ust_tracepoint_enabled(zeprof_device, process))
        return;
    fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        length = read(fd, name, sizeof(name) - 1);
        close(fd);
    }
    if (length < 0)
        length = 0;
    while (length > 0 && name[length - 1] == '\n')
        length--;
    name[length] = '\0';
    lttng_ust_do_tracepoint(zeprof_device, process, name);
    errno = saved_errno;
}

/* The fork helpers keep LTTng-UST usable in a child that does not exec (see lttng-ust(3)). */
static void zeprof_prepare_fork(void)
{
    zeprof_ust_before_fork(&zeprof_fork_sigset);
}

static void zeprof_parent_after_fork(void)
{
    zeprof_ust_after_fork_parent(&zeprof_fork_sigset);
}

static void zeprof_child_after_fork(void)
{
    zeprof_ust_after_fork_child(&zeprof_fork_sigset);
    zeprof_record_process();
}

static bool zeprof_fork_wrapper_loaded(void)
{
    /* liblttng-ust-fork wraps fork() itself; doing it twice would take LTTng's lock twice. */
    static const char *const names[] = { "liblttng-ust-fork.so.1", "liblttng-ust-fork.so" };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *handle = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);

        if (handle != NULL) {
            dlclose(handle);
            return true;
        }
    }
    return false;
}

/* POSIX guarantees that dlsym's data pointer converts to a function pointer. */
static void zeprof_lookup(void *handle, const char *name, void (**function)(sigset_t *))
{
    void *symbol = dlsym(handle, name);

    memcpy(function, &symbol, sizeof(symbol));
}

static void zeprof_load_providers(void)
{
    Dl_info self;
    char path[PATH_MAX];
    const char *slash;
    void *handle;

    if (dladdr((void *) &zeprof_load_providers, &self) == 0 || self.dli_fname == NULL ||
        (slash = strrchr(self.dli_fname, '/')) == NULL) {
        zeprof_say("LTTng-UST tracing unavailable, calls are not traced: reason=cannot locate "
                   "the shim's directory");
        return;
    }
    snprintf(path, sizeof(path), "%.*s/%s", (int) (slash - self.dli_fname), self.dli_fname,
             ZEPROF_PROVIDERS_FILE);
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();

        zeprof_say("LTTng-UST tracing unavailable, calls are not traced: path=%s, reason=%s", path,
                   reason != NULL ? reason : "unknown");
        return;
    }
    zeprof_explain("tracepoint providers loaded: path=%s", path);
    snprintf(zeprof_providers_dir, sizeof(zeprof_providers_dir), "%.*s",
             (int) (slash - self.dli_fname), self.dli_fname);

    zeprof_lookup(handle, "lttng_ust_before_fork", &zeprof_ust_before_fork);
    zeprof_lookup(handle, "lttng_ust_after_fork_parent", &zeprof_ust_after_fork_parent);
    zeprof_lookup(handle, "lttng_ust_after_fork_child", &zeprof_ust_after_fork_child);
    if (zeprof_ust_before_fork != NULL && zeprof_ust_after_fork_parent != NULL &&
        zeprof_ust_after_fork_child != NULL && !zeprof_fork_wrapper_loaded()) {
        if (pthread_atfork(zeprof_prepare_fork, zeprof_parent_after_fork,
                           zeprof_child_after_fork) == 0)
            zeprof_explain("fork handlers installed: a forked child keeps tracing");
    }
}

/* The pthread_once routines of the families (pthread_once passes no argument). */
static void zeprof_load_family_now(enum zeprof_family family)
{
    char path[PATH_MAX + 64];
    int length;

    /* Without the main providers (no LTTng-UST) nothing is traced: nothing to load. */
    length = snprintf(path, sizeof(path), "%s/%s", zeprof_providers_dir,
                      zeprof_family_files[family]);
    if (zeprof_providers_dir[0] != '\0' && length > 0 && (size_t) length < sizeof(path)) {
        /* Its constructors register the probes; with a session active, LTTng-UST registers their
         * events with the session daemon and enables them before dlopen returns. */
        if (dlopen(path, RTLD_NOW | RTLD_LOCAL) == NULL) {
            const char *reason = dlerror();

            zeprof_say("these calls are not traced: path=%s, reason=%s", path,
                       reason != NULL ? reason : "unknown");
        } else {
            zeprof_explain("tracepoint providers loaded: path=%s", path);
        }
    }
    __atomic_store_n(&zeprof_family_loaded[family], 1, __ATOMIC_RELEASE);
}

static void zeprof_load_zet(void)
{
    zeprof_load_family_now(ZEPROF_FAMILY_ZET);
}

static void zeprof_load_zes(void)
{
    zeprof_load_family_now(ZEPROF_FAMILY_ZES);
}

static void zeprof_load_zel(void)
{
    zeprof_load_family_now(ZEPROF_FAMILY_ZEL);
}

static void zeprof_load_sample(void)
{
    zeprof_load_family_now(ZEPROF_FAMILY_SAMPLE);
}

void zeprof_load_family_slow(enum zeprof_family family)
{
    static void (*const loaders[ZEPROF_FAMILY_COUNT])(void) = {
        zeprof_load_zet, zeprof_load_zes, zeprof_load_zel, zeprof_load_sample,
    };
    int saved_errno = errno;

    /* A family's first call can come before any other (the initialization opens the real
     * loader and the main providers first); anything that reaches a wrapper meanwhile on this
     * thread passes straight through. */
    if (!zeprof_ready())
        return;
    zeprof_guard_enter();
    pthread_once(&zeprof_family_control[family], loaders[family]);
    zeprof_guard_leave();
    errno = saved_errno;
}

static bool zeprof_is_own_function(void *function)
{
    Dl_info theirs, ours;

    if (dladdr(function, &theirs) == 0 || dladdr((void *) &zeprof_is_own_function, &ours) == 0)
        return false;
    return theirs.dli_fbase == ours.dli_fbase;
}

const char *zeprof_real_loader_path(void)
{
    const char *path = getenv("ZEPROF_LOADER");

    return path == NULL || path[0] == '\0' ? ZEPROF_REAL_LOADER : path;
}

static bool zeprof_open_real_loader(void)
{
    const char *path = zeprof_real_loader_path();
    void *handle;
    int found;

    if (path[0] != '/') {
        /* A bare name would find the shim itself (same SONAME). */
        zeprof_say("cannot open the real Level Zero loader: path=%s, reason=not an absolute path",
                   path);
        return false;
    }
    /* The dl routes (dl_route.c) find what the shim lacks through this handle. */
    handle = zeprof_dlopen_deepbind(path, RTLD_NOW | RTLD_GLOBAL);
    if (handle == NULL) {
        const char *reason = dlerror();

        zeprof_say("cannot open the real Level Zero loader: path=%s, reason=%s", path,
                   reason != NULL ? reason : "unknown");
        return false;
    }
    found = zeprof_real_resolve(handle);
    if (found == 0 || (zeprof_real.zeInit != NULL && zeprof_is_own_function((void *) zeprof_real.zeInit))) {
        zeprof_say("cannot open the real Level Zero loader: path=%s, reason=%s", path,
                   found == 0 ? "no Level Zero function in it" : "it is the zeprof shim itself");
        memset(&zeprof_real, 0, sizeof(zeprof_real));
        return false;
    }
    zeprof_explain("real loader opened: path=%s, functions=%d of %d", path, found,
                   ZEPROF_API_FUNCTION_COUNT);
    __atomic_store_n(&zeprof_real_handle, handle, __ATOMIC_RELEASE);
    return true;
}

static void zeprof_initialize(void)
{
    int state;

    /* Anything below that reaches a wrapper on this thread must not recurse into pthread_once. */
    zeprof_guard_enter();
    zeprof_read_environment();
    state = zeprof_open_real_loader() ? ZEPROF_STATE_READY : ZEPROF_STATE_FAILED;
    if (state == ZEPROF_STATE_READY) {
        zeprof_load_providers(); /* nothing is traced when every call is refused */
        zeprof_record_process();
    }
    zeprof_guard_leave();
    __atomic_store_n(&zeprof_state, state, __ATOMIC_RELEASE);
}

bool zeprof_init_slow(void)
{
    int state = __atomic_load_n(&zeprof_state, __ATOMIC_ACQUIRE);

    if (state != ZEPROF_STATE_UNINITIALIZED)
        return state == ZEPROF_STATE_READY;
    if (zeprof_guard_raised())
        return false; /* called from inside the initialization itself */
    pthread_once(&zeprof_init_control, zeprof_initialize);
    return __atomic_load_n(&zeprof_state, __ATOMIC_ACQUIRE) == ZEPROF_STATE_READY;
}
