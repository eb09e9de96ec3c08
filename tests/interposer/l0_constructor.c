/*
 * l0_constructor: calls zeInit from a constructor, before main(), as some runtimes do. The shim
 * loads its tracepoint providers at that first call, so the call must still be traced.
 * Prints "early=0x0 get=0x0" and exits 0 when both calls succeed.
 */
#include <stdio.h>

#include <ze_api.h>

static ze_result_t early_result = ZE_RESULT_ERROR_UNKNOWN;

__attribute__((constructor)) static void initialize_early(void)
{
    early_result = zeInit(0);
}

int main(void)
{
    uint32_t count = 0;
    ze_result_t get = zeDriverGet(&count, NULL);

    printf("early=0x%x get=0x%x\n", (unsigned) early_result, (unsigned) get);
    return early_result == ZE_RESULT_SUCCESS && get == ZE_RESULT_SUCCESS && count > 0 ? 0 : 1;
}
