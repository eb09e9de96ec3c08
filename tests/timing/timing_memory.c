/*
 * timing_memory: a long-lived immediate list reused for many rounds must not make the tracer grow.
 *
 * Usage: timing_memory [ROUNDS]
 *
 * Each round appends 16 kernels signalling the application's events to one immediate list,
 * waits for them and resets the events: what a long-running application does. The heap in use
 * (mallinfo2: small blocks + mmapped blocks) is measured after a warm-up and at the end; the
 * growth per round must stay under MAX_BYTES_PER_ROUND. Run under the shim (the meson test
 * preloads it): the device-timing engine then runs for every append, traced session or not.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "timing_app.h"

#define KERNELS_PER_ROUND 16u
#define WARM_UP_ROUNDS 200u
#define MAX_BYTES_PER_ROUND 4.0

static size_t heap_in_use(void)
{
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

static void round_of_work(struct app *app, ze_command_list_handle_t list, ze_event_handle_t *events)
{
    ze_group_count_t groups = app_one_group();
    for (uint32_t i = 0; i < KERNELS_PER_ROUND; i++)
        APP_OK(zeCommandListAppendLaunchKernel(list, app->spin, &groups, events[i], 0, NULL));
    for (uint32_t i = 0; i < KERNELS_PER_ROUND; i++) {
        APP_OK(zeEventHostSynchronize(events[i], APP_TIMEOUT_NS));
        APP_OK(zeEventHostReset(events[i]));
    }
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 3000;
    struct app app;
    app_open(&app);
    app_set_spin(&app, 0);
    ze_command_list_handle_t list = app_immediate(&app, 0, false);
    ze_event_pool_handle_t pool = app_pool(&app, 0, KERNELS_PER_ROUND);
    ze_event_handle_t events[KERNELS_PER_ROUND];
    for (uint32_t i = 0; i < KERNELS_PER_ROUND; i++)
        events[i] = app_event(pool, i);

    for (unsigned r = 0; r < WARM_UP_ROUNDS; r++)
        round_of_work(&app, list, events);
    size_t before = heap_in_use();
    for (unsigned r = 0; r < rounds; r++)
        round_of_work(&app, list, events);
    size_t after = heap_in_use();
    double per_round = ((double)after - (double)before) / rounds;
    printf("heap in use: %zu -> %zu bytes over %u rounds: %.3f bytes per round (limit %.1f)\n",
           before, after, rounds, per_round, MAX_BYTES_PER_ROUND);

    for (uint32_t i = 0; i < KERNELS_PER_ROUND; i++)
        APP_OK(zeEventDestroy(events[i]));
    APP_OK(zeEventPoolDestroy(pool));
    APP_OK(zeCommandListDestroy(list));
    app_close(&app);
    APP_CHECK(per_round <= MAX_BYTES_PER_ROUND);
    printf("PASS timing_memory\n");
    return 0;
}
