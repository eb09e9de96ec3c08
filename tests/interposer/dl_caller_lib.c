/*
 * dl_caller_lib.c: the libraries of dl_caller_check, one per role (-DDLCHECK_ROLE_*):
 *   A      defines dlcheck_probe ('A') and dlcheck_next(), which calls dlsym(RTLD_NEXT,
 *          "dlcheck_probe"): glibc searches after the caller, A, so it finds B's
 *   B      defines dlcheck_probe ('B') and dlcheck_b_marker (which the program calls, so that B
 *          is loaded after A)
 *   DEP    defines dlcheck_dep_value (a dependency of LOCAL only)
 *   LOCAL  (dlopen()ed RTLD_LOCAL, needs DEP) dlcheck_default(): dlsym(RTLD_DEFAULT,
 *          "dlcheck_dep_value"), which glibc finds in the caller's local scope
 * Both answers depend on glibc seeing the real caller, which the shim's dlsym must preserve.
 */
#include <dlfcn.h>
#include <string.h>

int dlcheck_probe(void);
int dlcheck_next(void);
int dlcheck_dep_value(void);
int dlcheck_default(void);
int dlcheck_b_marker(void);

#if defined(DLCHECK_ROLE_A) || defined(DLCHECK_ROLE_B)
int dlcheck_probe(void)
{
#ifdef DLCHECK_ROLE_A
    return 'A';
#else
    return 'B';
#endif
}
#endif

#ifdef DLCHECK_ROLE_A
int dlcheck_next(void)
{
    void *symbol = dlsym(RTLD_NEXT, "dlcheck_probe");
    int (*next)(void);

    if (symbol == NULL)
        return '-';
    memcpy(&next, &symbol, sizeof(symbol));
    return next();
}
#endif

#ifdef DLCHECK_ROLE_B
int dlcheck_b_marker(void)
{
    return 'b';
}
#endif

#ifdef DLCHECK_ROLE_DEP
int dlcheck_dep_value(void)
{
    return 7;
}
#endif

#ifdef DLCHECK_ROLE_LOCAL
int dlcheck_default(void)
{
    void *symbol = dlsym(RTLD_DEFAULT, "dlcheck_dep_value");
    int (*value)(void);

    if (symbol == NULL)
        return -1;
    memcpy(&value, &symbol, sizeof(symbol));
    /* The direct call also makes DEP a dependency of this library. */
    return value == dlcheck_dep_value ? value() : -2;
}
#endif
