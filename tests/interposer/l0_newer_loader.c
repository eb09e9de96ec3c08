/*
 * l0_newer_loader: a program built against a loader newer than zeprof's headers (the stand-in,
 * standin_loader.c), reaching that loader's extra function zeZeprofStandInExtra in the ways real
 * programs do, and a program that dlopen()s the loader by absolute path.
 *
 *   l0_newer_loader lazy             zeInit, zeDriverGet, then the extra function by lazy binding
 *   l0_newer_loader dlsym-handle     dlopen("libze_loader.so.1") + dlsym of all three
 *   l0_newer_loader dlsym-default    dlsym(RTLD_DEFAULT) of the extra function first, then the rest
 *   l0_newer_loader abs-path PATH    zeInit first (the loader it is linked to, i.e. the shim when
 *                                    traced, which then maps the real loader), then dlopen(PATH) +
 *                                    dlsym of zeInit and zeDriverGet (PATH: a loader file; the extra
 *                                    function only when PATH has it)
 *
 * Prints one line of results; exit 0 when every call succeeded, 1 otherwise. Linked with lazy
 * binding: the extra function is resolved at its first call, after zeInit.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <level_zero/ze_api.h>

typedef ze_result_t (*init_fn)(ze_init_flags_t);
typedef ze_result_t (*driver_get_fn)(uint32_t *, ze_driver_handle_t *);
typedef ze_result_t (*extra_fn)(uint32_t *);

/* Exported by the stand-in loader only. */
ze_result_t ZE_APICALL zeZeprofStandInExtra(uint32_t *value);

static int report(const char *mode, ze_result_t init, ze_result_t drivers, uint32_t count,
                  int extra, uint32_t value, ze_result_t extra_result)
{
    printf("%s: init=0x%x drivers=0x%x count=%u extra=%s value=%u result=0x%x\n", mode,
           (unsigned)init, (unsigned)drivers, count, extra ? "found" : "absent", value,
           (unsigned)extra_result);
    return init == ZE_RESULT_SUCCESS && drivers == ZE_RESULT_SUCCESS &&
                   extra_result == ZE_RESULT_SUCCESS ? 0 : 1;
}

/* POSIX guarantees that dlsym's data pointer converts to a function pointer. */
static void lookup(void *handle, const char *name, void *function)
{
    void *symbol = dlsym(handle, name);

    memcpy(function, &symbol, sizeof(symbol));
}

static int resolved(const char *mode, void *handle, int extra_first, int want_extra)
{
    init_fn init = NULL;
    driver_get_fn driver_get = NULL;
    extra_fn extra = NULL;
    uint32_t count = 0;
    ze_result_t init_result, drivers_result, extra_result = ZE_RESULT_SUCCESS;
    uint32_t value = 0;

    if (extra_first)
        lookup(handle, "zeZeprofStandInExtra", &extra);
    lookup(handle, "zeInit", &init);
    lookup(handle, "zeDriverGet", &driver_get);
    if (!extra_first && want_extra)
        lookup(handle, "zeZeprofStandInExtra", &extra);
    if (init == NULL || driver_get == NULL || (want_extra && extra == NULL)) {
        printf("%s: lookup failed: init=%p drivers=%p extra=%p\n", mode, (void *)init,
               (void *)driver_get, (void *)extra);
        return 1;
    }
    init_result = init(0);
    drivers_result = driver_get(&count, NULL);
    if (extra != NULL)
        extra_result = extra(&value);
    return report(mode, init_result, drivers_result, count, extra != NULL, value, extra_result);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";

    if (strcmp(mode, "lazy") == 0) {
        uint32_t count = 0, value = 0;
        ze_result_t init = zeInit(0);
        ze_result_t drivers = zeDriverGet(&count, NULL);
        /* A direct call (never its address), so that it binds lazily, at this first call. */
        ze_result_t extra = zeZeprofStandInExtra(&value);

        return report(mode, init, drivers, count, 1, value, extra);
    }
    if (strcmp(mode, "dlsym-handle") == 0) {
        void *loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);

        return loader != NULL ? resolved(mode, loader, 0, 1) : 1;
    }
    if (strcmp(mode, "dlsym-default") == 0)
        return resolved(mode, RTLD_DEFAULT, 1, 1);
    if (strcmp(mode, "abs-path") == 0 && argc == 3) {
        ze_result_t first = zeInit(0);
        void *loader = first == ZE_RESULT_SUCCESS ? dlopen(argv[2], RTLD_NOW | RTLD_LOCAL) : NULL;
        void *extra = loader != NULL ? dlsym(loader, "zeZeprofStandInExtra") : NULL;

        if (loader == NULL) {
            printf("%s: zeInit=0x%x, dlopen failed: %s\n", mode, (unsigned)first, dlerror());
            return 1;
        }
        return resolved(mode, loader, 0, extra != NULL);
    }
    fprintf(stderr, "usage: l0_newer_loader lazy|dlsym-handle|dlsym-default|abs-path PATH\n");
    return 2;
}
