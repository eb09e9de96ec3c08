/*
 * api_ready.h: whether the application has initialized the real loader's exported API.
 *
 * A loader's exported functions dispatch through tables it fills at zeInit or zeInitDrivers.
 * Called before that, the 1.8 loader answers ZE_RESULT_ERROR_UNINITIALIZED but the 1.20 loader
 * dereferences its still empty table and crashes. A program that drives Level Zero only through
 * the ze*Get*ProcAddrTable tables (static loaders, layers) never initializes the exported API,
 * so the shim's own calls through it (the device-timing engine's) must wait until the
 * application's exported zeInit or zeInitDrivers has succeeded. The generated exported wrappers
 * of those two report here; calls through a table do not count.
 */
#ifndef ZEPROF_API_READY_H
#define ZEPROF_API_READY_H

#include <stdbool.h>

/* The exported zeInit or zeInitDrivers returned `result` (a ze_result_t). Thread-safe. */
void zeprof_api_init_returned(int result);

/* True once an exported zeInit or zeInitDrivers has succeeded in this process. */
bool zeprof_api_ready(void);

#endif /* ZEPROF_API_READY_H */
