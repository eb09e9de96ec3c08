/*
 * timing_app.h: a small Level Zero fixture for the device-timing test and bench programs.
 *
 * Every check is fatal (prints what failed and where, exits 1), so a program never goes on with
 * handles that were not created. The programs run on the simulated device through the real
 * loader, traced (the zeprof shim preloaded) or not; they never know which.
 */
#ifndef ZEPROF_TIMING_APP_H
#define ZEPROF_TIMING_APP_H

#include <stdbool.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#define APP_CHECK(cond) app_check((cond), #cond, __FILE__, __LINE__)
#define APP_OK(call) app_check_result((call), #call, __FILE__, __LINE__)

/* Level Zero 1.7 flags the installed 1.4 headers lack. */
#define APP_LIST_IN_ORDER ((ze_command_list_flags_t)(1u << 3))
#define APP_QUEUE_IN_ORDER ((ze_command_queue_flags_t)(1u << 1))

/* A wait that is long for the simulated device but still ends: a hang becomes a failure. */
#define APP_TIMEOUT_NS UINT64_C(20000000000)

void app_check(bool ok, const char *what, const char *file, int line);
void app_check_result(ze_result_t result, const char *what, const char *file, int line);

struct app {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
    ze_module_handle_t module;
    ze_kernel_handle_t spin; /* zesim_spin: runs arg 0 nanoseconds */
};

void app_open(struct app *app);
void app_close(struct app *app);
ze_command_queue_handle_t app_queue(struct app *app, uint32_t ordinal, uint32_t index);
ze_command_list_handle_t app_list(struct app *app, uint32_t ordinal, bool in_order);
ze_command_list_handle_t app_immediate(struct app *app, uint32_t ordinal, bool in_order);
ze_event_pool_handle_t app_pool(struct app *app, ze_event_pool_flags_t flags, uint32_t count);
ze_event_handle_t app_event(ze_event_pool_handle_t pool, uint32_t index);
void *app_host_memory(struct app *app, size_t size);
/* Sets zesim_spin's duration (arguments are captured at append time). */
void app_set_spin(struct app *app, uint64_t ns);
ze_group_count_t app_one_group(void);

#endif
