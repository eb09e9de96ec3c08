/*
 * check.h: the tiny helper shared by the Level Zero test programs.
 *
 * Every check is fatal: the first failure prints what failed and where, and exits 1, so a test
 * never goes on with handles that were not created. Also: a fixture that opens the driver, the
 * devices, a context and a module through the real loader; kernels by name; the host clocks; and
 * a reader for the simulated device's truth file (ZESIM_TRUTH).
 */
#ifndef ZESIM_TEST_CHECK_H
#define ZESIM_TEST_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#define CHECK(cond) check_true((cond), #cond, __FILE__, __LINE__)
#define CHECK_ZE(expected, call) check_result((call), (expected), #call, __FILE__, __LINE__)
#define CHECK_OK(call) CHECK_ZE(ZE_RESULT_SUCCESS, call)

/* Level Zero 1.7 flags the 1.4 headers lack. */
#define TEST_COMMAND_LIST_FLAG_IN_ORDER ((ze_command_list_flags_t)(1u << 3))
#define TEST_COMMAND_QUEUE_FLAG_IN_ORDER ((ze_command_queue_flags_t)(1u << 1))

void check_true(bool ok, const char *what, const char *file, int line);
void check_result(ze_result_t got, ze_result_t expected, const char *what, const char *file,
                  int line);
/* Prints "PASS <name>" and returns 0, for main()'s return. */
int check_pass(const char *name);

struct l0 {
    ze_driver_handle_t driver;
    uint32_t device_count;
    ze_device_handle_t devices[16];
    ze_device_handle_t device; /* devices[0] */
    ze_context_handle_t context;
    ze_module_handle_t module; /* on devices[0] */
};

void l0_open(struct l0 *l0);
void l0_close(struct l0 *l0);
ze_kernel_handle_t l0_kernel(struct l0 *l0, const char *name);
ze_command_queue_handle_t l0_queue(struct l0 *l0, ze_device_handle_t device, uint32_t ordinal,
                                   uint32_t index);
ze_command_list_handle_t l0_list(struct l0 *l0, ze_device_handle_t device, uint32_t ordinal,
                                 ze_command_list_flags_t flags);
ze_command_list_handle_t l0_immediate(struct l0 *l0, ze_device_handle_t device, uint32_t ordinal,
                                      ze_command_queue_flags_t flags);
ze_event_pool_handle_t l0_pool(struct l0 *l0, ze_event_pool_flags_t flags, uint32_t count);
ze_event_handle_t l0_event(ze_event_pool_handle_t pool, uint32_t index);
void *l0_shared(struct l0 *l0, size_t size);
void l0_set_spin(ze_kernel_handle_t spin, uint64_t ns);

uint64_t now_mono_ns(void);
uint64_t now_raw_ns(void);

/* Truth file: a temporary file set as ZESIM_TRUTH; call before l0_open. */
struct truth_line {
    uint32_t device;
    char kind[32];
    char name[256];
    uint64_t start_ns, end_ns, start_ticks, end_ticks;
};
void truth_setup(char *path, size_t size);
/* Reads every line; returns the count and a malloc'ed array in *lines. */
size_t truth_read(const char *path, struct truth_line **lines);

#endif
