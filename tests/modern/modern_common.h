/*
 * modern_common.h: what the programs of tests/modern share (on top of tests/l0/check.h).
 *
 * Opening the device the way today's runtimes do: zeInitDrivers (spec 1.10) for GPU drivers,
 * then the usual device, context and module, filled into check.h's struct l0 so that its helpers
 * (kernels, lists, pools, shared memory) serve these programs too. Counter-based event pools
 * (spec 1.8 experimental). Built only against headers of spec 1.10 or later.
 */
#ifndef ZEPROF_MODERN_COMMON_H
#define ZEPROF_MODERN_COMMON_H

#include <level_zero/ze_api.h>

#include "check.h"

/* zeInitDrivers, called through a pointer: a program that must also run on a loader without it
 * looks it up by name. */
typedef ze_result_t (*modern_init_drivers_fn)(uint32_t *count, ze_driver_handle_t *drivers,
                                              ze_init_driver_type_desc_t *desc);

/* zeInitDrivers for GPU drivers, as SYCL does (count, then handles): the one driver. */
ze_driver_handle_t modern_init_drivers(modern_init_drivers_fn init_drivers);
/* The driver's devices, a context and a module (l0_open's, after zeInit). */
void modern_open(struct l0 *l0, ze_driver_handle_t driver);
/* An in-order immediate list on the first device's compute group, as SYCL's in-order queues. */
ze_command_list_handle_t modern_in_order_list(struct l0 *l0);
/* A host-visible counter-based event pool (ze_event_pool_counter_based_exp_desc_t in pNext, for
 * immediate lists), with `flags` added (ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP or 0). */
ze_event_pool_handle_t modern_counter_based_pool(struct l0 *l0, ze_event_pool_flags_t flags,
                                                 uint32_t count);
/* A function by name through zeDriverGetExtensionFunctionAddress (NULL when the driver has none),
 * and the path of the object that holds the code a pointer points to (as it was loaded). */
void *modern_extension(ze_driver_handle_t driver, const char *name);
const char *modern_object_of(void *function);

#endif
