/*
 * dl_route.c: the shim's dlopen and dlsym (see dl_route.h for what they reroute and why).
 *
 * Why a jump and not a call: glibc's dlopen and dlsym take their caller from their own return
 * address. A C wrapper that calls them would make the shim the caller of every dlopen and dlsym in
 * the process, and dlsym(RTLD_NEXT, ...) in another preloaded library would then search after the
 * shim instead of after that library (it could find itself and recurse forever). So the exported
 * symbol is a trampoline: it saves the two argument registers, calls the router (plain C, below),
 * restores them and jumps to the function the router chose, whose return address is then the
 * caller's. GCC 12 has no guaranteed tail call, hence the few lines of assembly, x86-64 only; on
 * other architectures nothing is exported and glibc's functions are used unchanged.
 *
 * The real functions are glibc's, found with dlvsym(RTLD_NEXT) (the versioned lookup does not
 * reach this file's dlsym). Everything here is lock-free and allocation-free on the common path:
 * a few compares, plus one stat() for a dlopen of a path with a slash.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "dl_route.h"
#include "shim.h"

#if defined(__x86_64__) && defined(__GLIBC__)

/*
 * In sanitizer builds the sanitizer runtime resolves its interceptors with dlsym(RTLD_NEXT) before
 * it has initialized itself, and that dlsym is this file's: the path from the trampoline to
 * glibc's dlsym must not be instrumented (it would touch shadow memory that does not exist yet).
 * It reads the guard's counter directly for the same reason (guard.h's inline function is a call
 * at -O0, and an instrumented one).
 */
#define ZEPROF_DL_UNINSTRUMENTED __attribute__((no_sanitize("address", "undefined")))

typedef void *(*zeprof_dlopen_fn)(const char *path, int flags);
typedef void *(*zeprof_dlsym_fn)(void *handle, const char *name);

/* Called from the trampolines below only; hidden, so the assembly calls them directly. */
zeprof_dlopen_fn zeprof_dl_route_dlopen(const char *path, int flags)
    __attribute__((visibility("hidden"), used)) ZEPROF_DL_UNINSTRUMENTED;
zeprof_dlsym_fn zeprof_dl_route_dlsym(void *handle, const char *name)
    __attribute__((visibility("hidden"), used)) ZEPROF_DL_UNINSTRUMENTED;

/*
 * trampoline NAME ROUTER: at entry the stack is 8 bytes off a 16-byte boundary (the return
 * address); two pushes and 8 more bytes make the call aligned again.
 */
#define ZEPROF_DL_TRAMPOLINE(name, router)                                                        \
    __asm__(".pushsection .text\n"                                                               \
            ".globl " #name "\n"                                                                  \
            ".type " #name ", @function\n" #name ":\n"                                            \
            ".cfi_startproc\n"                                                                    \
            "  endbr64\n"                                                                         \
            "  pushq %rdi\n"                                                                      \
            ".cfi_adjust_cfa_offset 8\n"                                                          \
            "  pushq %rsi\n"                                                                      \
            ".cfi_adjust_cfa_offset 8\n"                                                          \
            "  subq $8, %rsp\n"                                                                   \
            ".cfi_adjust_cfa_offset 8\n"                                                          \
            "  call " #router "\n"                                                                \
            "  addq $8, %rsp\n"                                                                   \
            ".cfi_adjust_cfa_offset -8\n"                                                         \
            "  popq %rsi\n"                                                                       \
            ".cfi_adjust_cfa_offset -8\n"                                                         \
            "  popq %rdi\n"                                                                       \
            ".cfi_adjust_cfa_offset -8\n"                                                         \
            "  jmp *%rax\n"                                                                       \
            ".cfi_endproc\n"                                                                      \
            ".size " #name ", .-" #name "\n"                                                         \
            ".popsection\n")

ZEPROF_DL_TRAMPOLINE(dlopen, zeprof_dl_route_dlopen);
ZEPROF_DL_TRAMPOLINE(dlsym, zeprof_dl_route_dlsym);

static zeprof_dlopen_fn zeprof_dl_glibc_dlopen_fn;
static zeprof_dlsym_fn zeprof_dl_glibc_dlsym_fn;

/* Never used on glibc x86-64, where GLIBC_2.2.5 always exists: a safe target if it did not. */
static void *zeprof_dl_no_dlopen(const char *path, int flags)
{
    (void)path;
    (void)flags;
    return NULL;
}

static void *zeprof_dl_no_dlsym(void *handle, const char *name)
{
    (void)handle;
    (void)name;
    return NULL;
}

/* glibc's NAME: dlvsym asks for a version, so it never finds this file's unversioned symbols. */
ZEPROF_DL_UNINSTRUMENTED static void *zeprof_dl_next(const char *name)
{
    static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5" };

    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        void *function = dlvsym(RTLD_NEXT, name, versions[i]);

        if (function != NULL)
            return function;
    }
    return NULL;
}

/* A benign race: every thread finds the same function. */
ZEPROF_DL_UNINSTRUMENTED static zeprof_dlopen_fn zeprof_dl_glibc_dlopen(void)
{
    zeprof_dlopen_fn function = __atomic_load_n(&zeprof_dl_glibc_dlopen_fn, __ATOMIC_RELAXED);

    if (function == NULL) {
        void *symbol = zeprof_dl_next("dlopen");

        if (symbol != NULL)
            memcpy(&function, &symbol, sizeof(symbol));
        else
            function = zeprof_dl_no_dlopen;
        __atomic_store_n(&zeprof_dl_glibc_dlopen_fn, function, __ATOMIC_RELAXED);
    }
    return function;
}

ZEPROF_DL_UNINSTRUMENTED static zeprof_dlsym_fn zeprof_dl_glibc_dlsym(void)
{
    zeprof_dlsym_fn function = __atomic_load_n(&zeprof_dl_glibc_dlsym_fn, __ATOMIC_RELAXED);

    if (function == NULL) {
        void *symbol = zeprof_dl_next("dlsym");

        if (symbol != NULL)
            memcpy(&function, &symbol, sizeof(symbol));
        else
            function = zeprof_dl_no_dlsym;
        __atomic_store_n(&zeprof_dl_glibc_dlsym_fn, function, __ATOMIC_RELAXED);
    }
    return function;
}

void *zeprof_dl_real_dlopen(const char *path, int flags)
{
    return zeprof_dl_glibc_dlopen()(path, flags);
}

/* The shim's own handle (its link map, which is what dlopen returns for it) and file name. */
static void *zeprof_dl_self_handle;
static const char *zeprof_dl_self_name;
static pthread_once_t zeprof_dl_self_once = PTHREAD_ONCE_INIT;

static void zeprof_dl_find_self(void)
{
    Dl_info info;
    struct link_map *map = NULL;

    if (dladdr1((void *)&zeprof_dl_find_self, &info, (void **)&map, RTLD_DL_LINKMAP) != 0 &&
        map != NULL) {
        zeprof_dl_self_name = map->l_name;
        zeprof_dl_self_handle = map;
    }
}

/* The real loader's file, as the initialization will open it (or has opened it). */
static bool zeprof_dl_loader_known;
static dev_t zeprof_dl_loader_dev;
static ino_t zeprof_dl_loader_ino;
static pthread_once_t zeprof_dl_loader_once = PTHREAD_ONCE_INIT;

static void zeprof_dl_find_loader(void)
{
    const char *path = zeprof_real_loader_path();
    struct stat file;

    if (path[0] == '/' && stat(path, &file) == 0) {
        zeprof_dl_loader_dev = file.st_dev;
        zeprof_dl_loader_ino = file.st_ino;
        zeprof_dl_loader_known = true;
    }
}

static bool zeprof_dl_is_real_loader(const char *path)
{
    struct stat file;

    pthread_once(&zeprof_dl_loader_once, zeprof_dl_find_loader);
    return zeprof_dl_loader_known && stat(path, &file) == 0 &&
           file.st_dev == zeprof_dl_loader_dev && file.st_ino == zeprof_dl_loader_ino;
}

/* ze*, zet*, zes*, zel* followed by an upper-case letter, as every Level Zero function is named. */
ZEPROF_DL_UNINSTRUMENTED static bool zeprof_dl_is_api_name(const char *name)
{
    size_t at = 2;

    if (name[0] != 'z' || name[1] != 'e')
        return false;
    if (name[at] == 't' || name[at] == 's' || name[at] == 'l')
        at++;
    return name[at] >= 'A' && name[at] <= 'Z';
}

/* dlopen of the real loader's file: the program gets the shim, as dlopen("libze_loader.so.1"). */
static void *zeprof_dl_open_shim(const char *path, int flags)
{
    (void)path;
    return zeprof_dl_glibc_dlopen()(zeprof_dl_self_name, flags);
}

/* dlsym on the shim's handle: what the shim lacks comes from the real loader. */
static void *zeprof_dl_sym_in_shim(void *handle, const char *name)
{
    zeprof_dlsym_fn glibc_dlsym = zeprof_dl_glibc_dlsym();
    void *symbol = glibc_dlsym(handle, name);

    if (symbol != NULL || !zeprof_ready() || zeprof_real_handle == NULL)
        return symbol;
    symbol = glibc_dlsym(zeprof_real_handle, name);
    if (symbol == NULL)
        return glibc_dlsym(handle, name); /* dlerror() then names the shim's handle, as before */
    return symbol;
}

zeprof_dlopen_fn zeprof_dl_route_dlopen(const char *path, int flags)
{
    (void)flags;
    /* The tracer's own calls, and the loader's inside a wrapper, are never rerouted. */
    if (path != NULL && zeprof_guard_depth == 0 && strchr(path, '/') != NULL) {
        pthread_once(&zeprof_dl_self_once, zeprof_dl_find_self);
        if (zeprof_dl_self_name != NULL && zeprof_dl_is_real_loader(path))
            return zeprof_dl_open_shim;
    }
    return zeprof_dl_glibc_dlopen();
}

zeprof_dlsym_fn zeprof_dl_route_dlsym(void *handle, const char *name)
{
    if (name != NULL && zeprof_guard_depth == 0 && zeprof_dl_is_api_name(name)) {
        if (handle == RTLD_DEFAULT) {
            /* Opens the real loader RTLD_GLOBAL: what the shim lacks is then found globally. */
            (void)zeprof_ready();
        } else {
            pthread_once(&zeprof_dl_self_once, zeprof_dl_find_self);
            if (handle == zeprof_dl_self_handle)
                return zeprof_dl_sym_in_shim;
        }
    }
    return zeprof_dl_glibc_dlsym();
}

#else /* not x86-64 glibc: no routes, glibc's dlopen and dlsym serve the program directly */

void *zeprof_dl_real_dlopen(const char *path, int flags)
{
    return dlopen(path, flags);
}

#endif
