/* Instantiates the test provider zeprof_device (probes live in this object only). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "gen-tp-device.h"
