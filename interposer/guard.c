/* guard.c: the storage of the re-entrancy guard declared in guard.h. */
#include "guard.h"

__thread unsigned int zeprof_guard_depth __attribute__((tls_model("initial-exec")));
