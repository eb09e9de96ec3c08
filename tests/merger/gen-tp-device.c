/* Instantiates the real zeprof_device provider (tracepoints/zeprof_device.h) in gen-trace. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "zeprof_device.h"
