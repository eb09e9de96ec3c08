/* Instantiates the probes of provider zeprof_device (in libzeprof_providers.so). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "zeprof_device.h"
