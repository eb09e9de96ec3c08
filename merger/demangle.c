/* demangle: readable kernel names through libstdc++'s demangler (demangle.h). */
#include "demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (the C++ ABI's, <cxxabi.h>), declared here because this is C: returns a
 * malloc'ed string, or NULL with *status non-zero (-2: not a mangled name). */
extern char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

/* SYCL kernel names are typeinfo names (_ZTS...): the type is the kernel's name. */
static const char typeinfo_prefix[] = "typeinfo name for ";

void zm_demangle_init(struct zm_demangle *demangle)
{
    zm_map_init(&demangle->cache);
    zm_intern_init(&demangle->readable);
}

void zm_demangle_release(struct zm_demangle *demangle)
{
    zm_map_release(&demangle->cache);
    zm_intern_release(&demangle->readable);
}

/* Interns the readable text of `name` (`name` itself when it is not a mangled C++ name). */
static const char *readable_of(struct zm_demangle *demangle, const char *name)
{
    /* Only _Z names: __cxa_demangle also reads bare type codes ("i" is "int"). */
    if (strncmp(name, "_Z", 2) != 0)
        return zm_intern(&demangle->readable, name);
    int status = 0;
    char *text = __cxa_demangle(name, NULL, NULL, &status);
    if (status == -1)
        return NULL; /* out of memory */
    if (status != 0 || !text) {
        free(text);
        return zm_intern(&demangle->readable, name);
    }
    const char *shown = text;
    if (strncmp(name, "_ZTS", 4) == 0 &&
        strncmp(text, typeinfo_prefix, sizeof(typeinfo_prefix) - 1) == 0)
        shown += sizeof(typeinfo_prefix) - 1;
    const char *interned = zm_intern(&demangle->readable, shown);
    free(text);
    return interned;
}

const char *zm_demangle_name(struct zm_demangle *demangle, const char *name)
{
    uint64_t *known = zm_map_find(&demangle->cache, (uintptr_t)name, 0);
    if (known)
        return (const char *)(uintptr_t)*known;
    const char *readable = readable_of(demangle, name);
    if (!readable || zm_map_put(&demangle->cache, (uintptr_t)name, 0, (uintptr_t)readable) != 0)
        return NULL;
    return readable;
}
