/*
 * resolve_check: with the shim preloaded, every name listed resolves into the shim, both through
 * the global scope (what a program linked to the loader gets) and through
 * dlopen("libze_loader.so.1") + dlsym (what SYCL runtimes and MKL do).
 *
 * Usage: resolve_check NAMES_FILE SHIM_PATH   (one name per line)
 * Prints "resolved=N" (names that resolved into the shim both ways); exit 0 when all did.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lies_in(void *symbol, const char *want)
{
    Dl_info info;
    char got[PATH_MAX];

    return symbol != NULL && dladdr(symbol, &info) != 0 && info.dli_fname != NULL &&
           realpath(info.dli_fname, got) != NULL && strcmp(got, want) == 0;
}

int main(int argc, char **argv)
{
    char want[PATH_MAX], name[256];
    int resolved = 0, wrong = 0;
    FILE *names;
    void *loader;

    if (argc != 3 || realpath(argv[2], want) == NULL || (names = fopen(argv[1], "r")) == NULL) {
        fprintf(stderr, "usage: resolve_check NAMES_FILE SHIM_PATH\n");
        return 2;
    }
    loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (loader == NULL) {
        fprintf(stderr, "resolve_check: dlopen failed: %s\n", dlerror());
        fclose(names);
        return 1;
    }
    while (fscanf(names, "%255s", name) == 1) {
        if (lies_in(dlsym(RTLD_DEFAULT, name), want) && lies_in(dlsym(loader, name), want)) {
            resolved++;
        } else {
            fprintf(stderr, "resolve_check: %s does not resolve into %s\n", name, want);
            wrong++;
        }
    }
    fclose(names);
    printf("resolved=%d\n", resolved);
    return wrong == 0 ? 0 : 1;
}
