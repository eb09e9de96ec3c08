/*
 * dl_caller_check: glibc's dlsym answers by who calls it (RTLD_NEXT searches after the caller,
 * RTLD_DEFAULT includes the local scope of a library opened RTLD_LOCAL). With the shim preloaded
 * every dlsym goes through the shim's, which must keep these answers (dl_route.c).
 *
 *   dl_caller_check LOCAL_LIB   prints "next=B default=7" when glibc saw the real callers
 * Linked to dl_caller_lib's A then B; LOCAL_LIB is the LOCAL library's path. Exit 0 when right.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int dlcheck_next(void);
int dlcheck_b_marker(void);

int main(int argc, char **argv)
{
    void *local = argc == 2 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    void *symbol = local != NULL ? dlsym(local, "dlcheck_default") : NULL;
    int (*from_local)(void);
    int next = dlcheck_next(), value;

    if (symbol == NULL) {
        fprintf(stderr, "dl_caller_check: cannot load the local library: %s\n", dlerror());
        return 2;
    }
    memcpy(&from_local, &symbol, sizeof(symbol));
    value = from_local();
    printf("next=%c default=%d\n", next, value);
    return next == 'B' && value == 7 && dlcheck_b_marker() == 'b' ? 0 : 1;
}
