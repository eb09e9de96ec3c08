/*
 * demangle: readable kernel names. SYCL and C++ kernels arrive mangled: SYCL names are typeinfo
 * names (`_ZTSZ4mainEUlvE_`, "typeinfo name for main::{lambda()#1}"), others plain function
 * names (`_Z3addPfS_`). libstdc++'s __cxa_demangle turns them into `main::{lambda()#1}` and
 * `add(float*, float*)`; a name that is not mangled, or that fails to demangle, stays as it is.
 *
 * Each distinct (interned) name is demangled once, then found by pointer: the merger calls this
 * for every device span. The readable names are interned in a pool of their own, so equal texts
 * are one pointer (one tally row); they stay valid until the demangler is released.
 */
#ifndef ZM_DEMANGLE_H
#define ZM_DEMANGLE_H

#include "intern.h"
#include "map.h"
#include "must_check.h"

struct zm_demangle {
    struct zm_map cache;       /* interned name -> its readable form in `readable` */
    struct zm_intern readable; /* Owned by this */
};

void zm_demangle_init(struct zm_demangle *demangle);
void zm_demangle_release(struct zm_demangle *demangle);
/* The readable form of `name` (an interned string: looked up by pointer), or NULL when out of
 * memory. */
ZM_MUST_CHECK const char *zm_demangle_name(struct zm_demangle *demangle, const char *name);

#endif
