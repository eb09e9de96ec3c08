/*
 * dl_route.h: the shim's dlopen and dlsym, which keep a program's view of the loader on the shim.
 *
 * The shim exports dlopen and dlsym (x86-64 with glibc; elsewhere they are not built and glibc's
 * are used as they are). Each is a few instructions that ask a router where the call should go and
 * then jump there with the caller's arguments and return address intact, so that glibc still sees
 * the real caller (RTLD_NEXT, RTLD_DEFAULT from a library opened RTLD_LOCAL, and the caller's
 * RUNPATH all depend on it). Two calls are rerouted:
 * - dlopen of a path naming the real loader's file (same device and inode), e.g.
 *   dlopen("/usr/lib/x86_64-linux-gnu/libze_loader.so.1"), returns the shim, so the program's calls
 *   are traced instead of going to the real loader untraced;
 * - dlsym of a Level Zero name on the shim's handle (what dlopen("libze_loader.so.1") returns)
 *   that the shim does not export (a loader newer than the headers the shim was built with) returns
 *   the real loader's function. dlsym(RTLD_DEFAULT) of a Level Zero name initializes the shim
 *   first, so the real loader, opened RTLD_GLOBAL, is in the global scope.
 * Everything else reaches glibc unchanged.
 *
 * The shim's own code must open the real loader with zeprof_dl_real_dlopen(), which is never
 * rerouted.
 */
#ifndef ZEPROF_DL_ROUTE_H
#define ZEPROF_DL_ROUTE_H

/* glibc's dlopen, never rerouted; NULL with a dlerror()-like reason when it cannot be found. */
void *zeprof_dl_real_dlopen(const char *path, int flags);

#endif /* ZEPROF_DL_ROUTE_H */
