/* api_ready.c: see api_ready.h. */
#include "compat/api_ready.h"
#include "sampler.h"

static bool api_ready; /* written and read with atomic builtins */

void zeprof_api_init_returned(int result)
{
    if (result == 0) { /* ZE_RESULT_SUCCESS */
        __atomic_store_n(&api_ready, true, __ATOMIC_RELEASE);
        zeprof_sampler_start(); /* the devices can be enumerated now */
    }
}

bool zeprof_api_ready(void)
{
    return __atomic_load_n(&api_ready, __ATOMIC_ACQUIRE);
}
